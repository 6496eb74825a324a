#pragma once
/// @file secret.hpp
/// @brief Secret: a credential (API key, password) that cannot reach a log
/// line, a stream or a format string by accident; reading it takes .reveal().

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>

#include <studentsvc/detail/text/wipe.hpp>

namespace studentsvc {

/// @brief A credential's bytes, kept out of text by construction.
///
/// - Made from a string (implicitly, so `auth.api_key = "..."` reads as before).
/// - No conversion back to a string, no `operator<<`, no `std::formatter`:
///   `std::cout << secret` and `std::format("{}", secret)` do not compile.
///   The one way to the bytes is `reveal()`, easy to find in a review.
/// - Its memory, spare capacity included, is overwritten before it is freed
///   (on destruction, assignment and move), so a freed heap block or a
///   moved-from object holds no copy. Copies the caller made through reveal()
///   are the caller's to keep.
///
/// A value type; a const Secret is safe to read from many threads.
///
/// @sa AuthPolicy, CredentialProvider
class Secret {
 public:
  /// @brief An empty secret (not set).
  Secret() noexcept = default;
  /// @brief Takes the bytes of `value`.
  Secret(std::string value) noexcept : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// @brief Copies the bytes of `value`.
  Secret(std::string_view value) : value_(value) {}  // NOLINT(google-explicit-constructor)
  /// @brief Copies the bytes of a C string (`nullptr` is not allowed).
  Secret(const char* value) : value_(value) {}  // NOLINT(google-explicit-constructor)

  /// @brief Copies the other's bytes.
  Secret(const Secret& other) = default;
  /// @brief Takes the other's bytes and wipes what its buffer still holds.
  Secret(Secret&& other) noexcept : value_(std::move(other.value_)) { other.wipe(); }
  /// @brief Wipes this secret's bytes, then copies the other's.
  Secret& operator=(const Secret& other) {
    if (this != &other) {
      wipe();
      value_ = other.value_;
    }
    return *this;
  }
  /// @brief Wipes this secret's bytes, then takes the other's and wipes what
  /// its buffer still holds.
  Secret& operator=(Secret&& other) noexcept {
    if (this != &other) {
      wipe();
      value_ = std::move(other.value_);
      other.wipe();
    }
    return *this;
  }
  /// @brief Wipes the bytes before the memory is freed.
  ~Secret() { wipe(); }

  /// @brief The bytes. Call it only where they are sent or compared.
  [[nodiscard]] std::string_view reveal() const noexcept { return value_; }
  /// @brief True when no secret is set.
  [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
  /// @brief The number of bytes.
  [[nodiscard]] std::size_t size() const noexcept { return value_.size(); }

  /// @brief Equal bytes. The time taken depends on the lengths only, not on
  /// where the first difference is.
  friend bool operator==(const Secret& a, const Secret& b) noexcept { return equal_bytes(a.value_, b.value_); }

  /// Not streamable: reveal() it where the bytes are really needed.
  template <class CharT, class Traits>
  friend std::basic_ostream<CharT, Traits>& operator<<(std::basic_ostream<CharT, Traits>&, const Secret&) = delete;

 private:
  [[nodiscard]] static bool equal_bytes(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff = static_cast<unsigned char>(diff | (a[i] ^ b[i]));
    return diff == 0;
  }

  /// Overwrites every byte of the buffer, spare capacity (and a short string's
  /// inline buffer) included, through volatile writes the compiler keeps.
  void wipe() noexcept { detail::wipe_string(value_); }

  std::string value_;
};

}  // namespace studentsvc
