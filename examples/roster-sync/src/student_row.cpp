#include "student_row.hpp"

#include <chrono>
#include <ctime>
#include <cstdint>
#include <optional>
#include <type_traits>

#include <studentsvc/student_fields.hpp>

#include "text.hpp"

namespace roster_sync {

std::string snake_case(std::string_view camel) {
  std::string out;
  for (const char c : camel) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

const std::vector<std::string>& record_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> out;
    for (const auto& field : studentsvc::student_fields) out.push_back(snake_case(field.key));
    return out;
  }();
  return columns;
}

namespace {
class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  [[nodiscard]] std::string hex() const { return hex64(hash_); }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};
}  // namespace

std::string record_hash(const studentsvc::StudentExtended& student) {
  Fnv1a h;
  // Each field as key, a type mark and its value: null, "" and false stay distinct.
  for (const auto& field : studentsvc::student_fields) {
    h.add(field.key);
    studentsvc::with_student_field(field, student, [&](const auto& value) {
      using Value = std::remove_cvref_t<decltype(value)>;
      if constexpr (std::is_same_v<Value, std::string>) {
        h.add("=s");
        h.add(value);
      } else if constexpr (std::is_same_v<Value, std::optional<std::string>>) {
        h.add(value ? "=s" : "=n");
        if (value) h.add(*value);
      } else {
        h.add(value ? (*value ? "=t" : "=f") : "=n");
      }
    });
    h.add(std::string_view("\0", 1));
  }
  return h.hex();
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[sizeof "2026-01-01T00:00:00Z"];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace roster_sync
