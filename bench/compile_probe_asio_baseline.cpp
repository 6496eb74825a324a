// Compile-time probe (issue 37): the same TU as compile_probe_asio.cpp with
// Boost.Asio's headers and no SDK: three awaited Asio operations (timers).
#include <boost/asio.hpp>

boost::asio::awaitable<int> probe(boost::asio::steady_timer& timer) {
  co_await timer.async_wait(boost::asio::use_awaitable);
  co_await timer.async_wait(boost::asio::use_awaitable);
  co_await timer.async_wait(boost::asio::use_awaitable);
  co_return 3;
}
