// docs/async.md's "Coroutines and Asio" example, second form: the calls as Asio
// operations (Boost.Asio here; standalone Asio with STUDENTSVC_ASIO_STANDALONE),
// awaited with use_awaitable on an io_context, against MockServer. The test
// suite runs it and looks for "asio example: ok".

#include <chrono>
#include <iostream>

#include <boost/asio.hpp>

#include <studentsvc/asio.hpp>
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>

namespace asio = boost::asio;

asio::awaitable<bool> show_student(studentsvc::asio::client& client) {
  // The completion signature is void(Result<T>): co_await yields the Result.
  auto student = co_await client.async_get_student("1234567", asio::use_awaitable);
  if (!student) {
    std::cout << "lookup failed: " << student.error().message << '\n';
    co_return false;
  }
  std::cout << student->first_name << ' ' << student->last_name << '\n';  // on the io_context's thread
  // Per-operation cancellation: a timeout with the awaitable operators works the same way.
  asio::cancellation_signal cancel;
  auto me = co_await client.async_current_student("mock-jwt-ana",
                                                  asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
  co_return me.has_value();
}

int main() {
  studentsvc::testing::MockServer mock;
  asio::io_context io;
  studentsvc::asio::client client(io.get_executor(), studentsvc::Client(mock.client_options()));
  bool ok = false;
  asio::co_spawn(io, show_student(client), [&](std::exception_ptr, bool result) { ok = result; });
  io.run();
  if (!ok) return 1;
  std::cout << "asio example: ok\n";
  return 0;
}
