#pragma once
// An Instrumentation that counts the attempts that ended as `cancelled`
// (ClientOptions::instrumentation): how a test sees that a stop reached the call.

#include <atomic>

#include <studentsvc/errors.hpp>
#include <studentsvc/instrumentation.hpp>

namespace studentsvc::test {

class CancelledAttempts final : public studentsvc::Instrumentation {
 public:
  void on_attempt(const studentsvc::AttemptEvent& event) override {
    if (event.phase == studentsvc::AttemptPhase::end && event.error == studentsvc::ErrorKind::cancelled) {
      cancelled_.fetch_add(1);
    }
  }
  [[nodiscard]] int cancelled() const { return cancelled_.load(); }

 private:
  std::atomic<int> cancelled_{0};
};

}  // namespace studentsvc::test
