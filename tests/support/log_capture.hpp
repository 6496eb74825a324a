#pragma once
// Collects the SDK's log lines, from any thread, for tests that check what is
// (and is not) logged.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <studentsvc/logging.hpp>

namespace studentsvc::test {

/// A Logger sink that keeps every line. Copies of the logger (a ClientOptions
/// copied into a Client) share the one store, so the capture may go first.
class LogCapture {
 public:
  using Entry = std::pair<LogLevel, std::string>;

  /// A logger at `threshold` whose lines land here.
  [[nodiscard]] Logger logger(LogLevel threshold = LogLevel::trace) const {
    return Logger{threshold, [store = store_](LogLevel level, std::string_view line) {
                    const std::lock_guard lock(store->mutex);
                    store->entries.emplace_back(level, std::string(line));
                  }};
  }
  /// Every line so far, with its level.
  [[nodiscard]] std::vector<Entry> entries() const {
    const std::lock_guard lock(store_->mutex);
    return store_->entries;
  }
  /// Every line so far, as "level text" (the level's to_string name).
  [[nodiscard]] std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& [level, text] : entries()) out.push_back(std::string(to_string(level)) + " " + text);
    return out;
  }
  /// Every line's text, without the level.
  [[nodiscard]] std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (auto& entry : entries()) out.push_back(std::move(entry.second));
    return out;
  }
  /// Forgets the lines so far.
  void clear() const {
    const std::lock_guard lock(store_->mutex);
    store_->entries.clear();
  }

 private:
  struct Store {
    std::mutex mutex;
    std::vector<Entry> entries;
  };
  std::shared_ptr<Store> store_ = std::make_shared<Store>();
};

}  // namespace studentsvc::test
