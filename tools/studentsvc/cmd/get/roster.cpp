// Roster lookups for `studentsvc get` (roster.hpp).

#include "cmd/get/roster.hpp"

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "cmd/get/perm_input.hpp"

namespace studentsvc_cli {

bool is_wrong_address(const studentsvc::ApiError& e) {
  return e.kind == studentsvc::ErrorKind::http_status && e.status == 404 && e.message.starts_with("endpoint not found");
}

template <class Perms>
std::size_t look_up_in_order(const studentsvc::Client& client, Perms&& perms, studentsvc::StreamOptions options,
                             BatchStop& stop, const ResultSink& sink, const ArrivalCheck& on_arrival,
                             const UnwrittenSink& unwritten) {
  struct Arrived {
    std::string perm;
    studentsvc::Result<studentsvc::StudentExtended> result;
  };
  std::map<std::size_t, Arrived> ahead;  // in, but not yet in order
  std::size_t next = 0;
  std::size_t delivered = 0;
  options.stop = stop.token();
  const auto to_unwritten = [&](std::size_t index, const std::string& perm,
                                const studentsvc::Result<studentsvc::StudentExtended>& r) {
    if (unwritten) unwritten(index, perm, r);
  };
  const auto stop_sending = [&] {
    stop.request();
    for (const auto& [i, a] : ahead) to_unwritten(i, a.perm, a.result);
    ahead.clear();
  };
  client.for_each_student(
      std::forward<Perms>(perms),
      [&](std::size_t index, std::string_view perm, studentsvc::Result<studentsvc::StudentExtended> result) {
        if (stop.requested()) {
          to_unwritten(index, std::string(perm), result);
          return;
        }
        const bool go_on = !on_arrival || on_arrival(result);
        ahead.emplace(index, Arrived{std::string(perm), std::move(result)});
        if (!go_on) {
          for (auto& [i, a] : ahead) {  // every answer in is handed on, in input order
            ++delivered;
            (void)sink(i, a.perm, a.result);
          }
          ahead.clear();
          stop_sending();
          return;
        }
        while (!ahead.empty() && ahead.begin()->first == next) {
          const auto node = ahead.extract(ahead.begin());
          ++next;
          ++delivered;
          if (!sink(node.key(), node.mapped().perm, node.mapped().result)) {
            stop_sending();
            return;
          }
        }
        if (stop.requested()) stop_sending();  // stopped from outside meanwhile: what waits is not written
      },
      options);
  for (const auto& [i, a] : ahead) to_unwritten(i, a.perm, a.result);  // (a stop request with no answer since)
  return delivered;
}

template std::size_t look_up_in_order<std::span<const std::string>>(const studentsvc::Client&,
                                                                    std::span<const std::string>&&,
                                                                    studentsvc::StreamOptions, BatchStop&,
                                                                    const ResultSink&, const ArrivalCheck&,
                                                                    const UnwrittenSink&);
template std::size_t look_up_in_order<PermInput&>(const studentsvc::Client&, PermInput&, studentsvc::StreamOptions,
                                                  BatchStop&, const ResultSink&, const ArrivalCheck&,
                                                  const UnwrittenSink&);

}  // namespace studentsvc_cli
