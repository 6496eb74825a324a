// Fuzzes the decoding of a student response body: any bytes must give a
// StudentExtended or a decode error, never a crash, and what decodes must
// survive the JSON round trip (to_json, then decode again) unchanged.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include <studentsvc/json.hpp>

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto extended = studentsvc::decode_student(body);
  const auto minimal = studentsvc::decode_student_minimal(body);

  // The basic fields are read the same way by both decoders.
  check(extended.has_value() <= minimal.has_value());
  if (!extended) check(extended.error().kind == studentsvc::ErrorKind::decode && !extended.error().message.empty());
  if (!minimal) {
    check(minimal.error().kind == studentsvc::ErrorKind::decode);
    return 0;
  }

  // Round trip of the minimal model.
  const nlohmann::json jm = *minimal;
  const auto minimal_again = studentsvc::decode_student_minimal_json(jm);
  check(minimal_again.has_value() && *minimal_again == *minimal);

  if (!extended) return 0;
  check(static_cast<const studentsvc::StudentMinimal&>(*extended) == *minimal);
  const nlohmann::json je = *extended;
  const auto extended_again = studentsvc::decode_student_json(je);
  check(extended_again.has_value() && *extended_again == *extended);

  // The typed views never fail, whatever the codes.
  (void)to_string(extended->gender_kind());
  (void)to_string(extended->international_status());
  (void)to_string(extended->admit_level_kind());
  (void)to_string(extended->release_status());
  if (const auto ymd = extended->birth_date_ymd()) check(ymd->ok() && extended->birth_date->size() == 8);
  (void)studentsvc::is_valid_perm(extended->perm);
  return 0;
}
