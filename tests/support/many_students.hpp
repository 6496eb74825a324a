#pragma once
// More students for a MockServer: a batch looks each distinct perm up once,
// so a test that needs many requests needs many distinct perms.

#include <string>
#include <utility>
#include <vector>

#include <studentsvc/testing/mock_server.hpp>

namespace studentsvc::test {

/// Adds `n` students (perms 9000000, 9000001, ...; copies of a seed student)
/// to `options` and returns their perms.
inline std::vector<std::string> add_students(testing::MockServerOptions& options, int n) {
  std::vector<std::string> perms;
  const auto model = options.students.begin()->second;
  for (int i = 0; i < n; ++i) {
    std::string perm = std::to_string(9'000'000 + i);
    auto student = model;
    student["perm"] = perm;
    options.students[perm] = student;
    perms.push_back(std::move(perm));
  }
  return perms;
}

}  // namespace studentsvc::test
