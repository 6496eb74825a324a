#pragma once
// How a student record becomes a row of `students`: the column names (the
// SDK's field table in snake_case) and the hash that tells a changed record.

#include <string>
#include <string_view>
#include <vector>

#include <studentsvc/models.hpp>

namespace roster_sync {

/// `firstNameLegal` -> `first_name_legal`.
[[nodiscard]] std::string snake_case(std::string_view camel);

/// The record's columns in the interface's order, `perm` first.
[[nodiscard]] const std::vector<std::string>& record_columns();

/// A stable digest of every field (FNV-1a 64, hex): equal records, equal hashes.
[[nodiscard]] std::string record_hash(const studentsvc::StudentExtended& student);

/// Now, as `YYYY-MM-DDTHH:MM:SSZ` (UTC), the form both databases store.
[[nodiscard]] std::string utc_now();

}  // namespace roster_sync
