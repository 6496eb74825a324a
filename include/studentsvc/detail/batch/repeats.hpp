#pragma once
/// @file detail/batch/repeats.hpp
/// @brief RepeatedPerms: the perms a streamed batch lists more than once, and
/// the result kept for their later positions, so each is looked up once.

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <studentsvc/errors.hpp>
#include <studentsvc/models.hpp>

namespace studentsvc::detail {

/// Thread-safe: positions start on the calling thread, lookups end on the
/// transport's. Only perms that occur more than once are held, each until its
/// last position has its result.
class RepeatedPerms {
 public:
  /// Counts the perms of a multi-pass range (not called for a single-pass stream).
  /// Sorted in a vector, not counted in a map: a roster's every perm passes
  /// through here, and a view of one is 16 bytes where a map node is ~80.
  template <class Perms>
  void count(const Perms& perms) {
    // A range that hands out references: views of its own text. Else copies.
    using Text = std::conditional_t<std::is_lvalue_reference_v<std::ranges::range_reference_t<const Perms>>,
                                    std::string_view, std::string>;
    std::vector<Text> all;
    if constexpr (std::ranges::sized_range<const Perms>) all.reserve(std::ranges::size(perms));
    for (const auto& perm : perms) all.emplace_back(std::string_view(perm));
    std::ranges::sort(all);
    const std::lock_guard lock(mutex_);
    for (auto first = all.begin(); first != all.end();) {
      const auto last = std::ranges::find_if(first, all.end(), [&](const Text& p) { return p != *first; });
      if (last - first > 1) repeated_.emplace(std::string(*first), Entry{static_cast<int>(last - first), std::nullopt});
      first = last;
    }
  }

  /// A position of `perm` starts: the result kept from its lookup, if that ended already.
  [[nodiscard]] std::optional<Result<StudentExtended>> take(std::string_view perm) {
    const std::lock_guard lock(mutex_);
    const auto it = repeated_.find(perm);
    if (it == repeated_.end()) return std::nullopt;
    --it->second.left;
    if (!it->second.result) return std::nullopt;  // the first position, or its lookup still in flight
    std::optional<Result<StudentExtended>> out = *it->second.result;
    if (it->second.left <= 0) repeated_.erase(it);
    return out;
  }

  /// A lookup of `perm` ended with `result`: kept while positions of it are still to start.
  void keep(std::string_view perm, const Result<StudentExtended>& result) {
    const std::lock_guard lock(mutex_);
    const auto it = repeated_.find(perm);
    if (it == repeated_.end()) return;
    if (it->second.left > 0) {
      it->second.result = result;
    } else {
      repeated_.erase(it);
    }
  }

 private:
  struct Entry {
    int left = 0;  ///< Positions not started yet.
    std::optional<Result<StudentExtended>> result;
  };
  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> repeated_;
};

}  // namespace studentsvc::detail
