#pragma once
/// @file testing/mock_data.hpp
/// @brief The seed data MockServer starts with: five fake students, two
/// service accounts and two end-user tokens. No real people; e-mail addresses
/// are in the reserved domain example.edu.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <studentsvc/testing/detail/separate.hpp>

namespace studentsvc::testing {

/// @brief A service account the mock accepts on the student endpoints (HTTP Basic).
struct MockAccount {
  std::string network_id;  ///< The Basic user name.
  std::string password;    ///< The Basic password.
  /// Approved for the extended-only fields (firstNameLegal, middleName, gender);
  /// for other accounts those keys are left out of the answer.
  bool extended_approved = false;
};

/// @brief The default accounts: an approved one (used by MockServer::client_options())
/// and one that is not approved for the extended-only fields.
[[nodiscard]] inline std::vector<MockAccount> default_accounts() {
  return {{"svc-registrar-app", "mock-password", true}, {"svc-roster-app", "mock-password-2", false}};
}

/// @brief The default end-user tokens (opaque strings) and the perm each names.
[[nodiscard]] inline std::map<std::string, std::string> default_jwts() {
  return {{"mock-jwt-ana", "1234567"}, {"mock-jwt-li", "2345678"}};
}

/// @brief Five realistic fake students keyed by perm, as raw JSON: accents and
/// 4-byte UTF-8, stored nulls and absent fields, unknown codes and the NFR flag.
[[nodiscard]] STUDENTSVC_TESTING_INLINE std::map<std::string, nlohmann::json> default_students();

/// @brief Two fake students with alphanumeric perms (`A1B2C3D`, `Z9y8X7w`),
/// for a MockServer whose perm_syntax is alphanumeric: add them to its
/// students (with_alphanumeric_perms() in mock_server.hpp does that).
[[nodiscard]] STUDENTSVC_TESTING_INLINE std::map<std::string, nlohmann::json> alphanumeric_students();

// Its body: ~2 s of CPU at -O3 in each TU that builds a MockServerOptions.
#if !STUDENTSVC_TESTING_SEPARATE || defined(STUDENTSVC_TESTING_SOURCE)
STUDENTSVC_TESTING_INLINE std::map<std::string, nlohmann::json> default_students() {
  using nlohmann::json;
  std::map<std::string, json> s;
  s["1234567"] = json{{"perm", "1234567"},
                      {"firstName", "Ana"},
                      {"lastName", "Núñez"},
                      {"suffix", ""},
                      {"email", "ana.nunez@example.edu"},
                      {"firstNameLegal", "Ana María"},
                      {"middleName", "Lucía"},
                      {"gender", "F"},
                      {"birthDate", "20040315"},
                      {"nfr", false},
                      {"internationalStudentCode", nullptr},
                      {"firstCensusQuarter", "20224"},
                      {"lastCensusQuarter", "20252"},
                      {"lastRegisteredQuarter", "20252"},
                      {"admitLevel", "FR"},
                      {"admitQuarter", "20224"},
                      {"pronounCode", "SH"}};
  s["2345678"] = json{{"perm", "2345678"},
                      {"firstName", "Li"},
                      {"lastName", "Wei"},
                      {"suffix", nullptr},
                      {"email", "li.wei@example.edu"},
                      {"firstNameLegal", "Wei"},
                      {"middleName", nullptr},
                      {"gender", "M"},
                      {"birthDate", "20011130"},
                      {"nfr", true},
                      {"internationalStudentCode", "F"},
                      {"firstCensusQuarter", "20203"},
                      {"lastCensusQuarter", "20244"},
                      {"lastRegisteredQuarter", "20244"},
                      {"admitLevel", "TR"},
                      {"admitQuarter", "20203"},
                      {"pronounCode", "HE"}};
  // Basic fields only; every extended field absent.
  s["3456789"] = json{{"perm", "3456789"},
                      {"firstName", "Jordan"},
                      {"lastName", "Okafor"},
                      {"suffix", "JR"},
                      {"email", "jordan.okafor@example.edu"}};
  // Unknown codes and an invalid birth date: kept raw, never a decode failure.
  s["4567890"] = json{{"perm", "4567890"},
                      {"firstName", "Sam"},
                      {"lastName", "Rivera"},
                      {"suffix", ""},
                      {"email", "sam.rivera@example.edu"},
                      {"gender", "X"},
                      {"birthDate", "20230230"},
                      {"internationalStudentCode", "Q"},
                      {"admitLevel", "GR"},
                      {"nfr", nullptr},
                      {"campusBuilding", "extra field the SDK ignores"}};
  // 4-byte UTF-8 and a resident alien.
  s["5678901"] = json{{"perm", "5678901"},
                      {"firstName", "Zoë 🌟"},
                      {"lastName", "Ørsted-Çelik"},
                      {"suffix", "III"},
                      {"email", "zoe.orsted@example.edu"},
                      {"internationalStudentCode", "R"},
                      {"admitLevel", ""},
                      {"birthDate", "19991231"},
                      {"nfr", false}};
  return s;
}

STUDENTSVC_TESTING_INLINE std::map<std::string, nlohmann::json> alphanumeric_students() {
  using nlohmann::json;
  std::map<std::string, json> s;
  s["A1B2C3D"] = json{{"perm", "A1B2C3D"},
                      {"firstName", "Avery"},
                      {"lastName", "Quispe"},
                      {"suffix", ""},
                      {"email", "avery.quispe@example.edu"},
                      {"gender", nullptr},
                      {"birthDate", "20060704"},
                      {"nfr", false},
                      {"admitLevel", "FR"},
                      {"admitQuarter", "20234"}};
  // Lower-case letters: the perm is sent and matched as given.
  s["Z9y8X7w"] = json{{"perm", "Z9y8X7w"},
                      {"firstName", "Bo"},
                      {"lastName", "Lindqvist"},
                      {"suffix", nullptr},
                      {"email", "bo.lindqvist@example.edu"},
                      {"nfr", true}};
  return s;
}
#endif

}  // namespace studentsvc::testing
