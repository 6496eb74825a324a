// Compile-time probe (issue 37): a TU that includes <studentsvc/asio.hpp> and
// awaits the three calls with use_awaitable. Against compile_probe_asio_baseline.cpp.
#include <boost/asio.hpp>

#include <studentsvc/asio.hpp>
#include <studentsvc/studentsvc.hpp>

boost::asio::awaitable<int> probe(studentsvc::asio::client& client, const studentsvc::ConversationRequest& request) {
  auto a = co_await client.async_get_student("1234567", boost::asio::use_awaitable);
  auto b = co_await client.async_current_student("jwt", boost::asio::use_awaitable);
  auto c = co_await client.async_conversation(request, boost::asio::use_awaitable);
  co_return (a ? 1 : 0) + (b ? 1 : 0) + (c ? 1 : 0);
}
