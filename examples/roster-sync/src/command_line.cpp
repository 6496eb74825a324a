#include "command_line.hpp"

#include <charconv>
#include <cstdlib>
#include <type_traits>

#include "database.hpp"
#include "text.hpp"

namespace roster_sync {
namespace {

template <class Number>
std::expected<Number, std::string> number_from(const Environment& env, std::string_view name, Number fallback,
                                               Number min, Number max) {
  const auto text = env(name);
  if (!text || text->empty()) return fallback;
  Number value{};
  bool whole = false;
  if constexpr (std::is_floating_point_v<Number>) {  // libc++ 16 has no floating-point from_chars
    char* end = nullptr;
    value = static_cast<Number>(std::strtod(text->c_str(), &end));
    whole = end == text->c_str() + text->size();
  } else {
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    whole = ec == std::errc() && end == text->data() + text->size();
  }
  if (!whole || value < min || value > max) {
    return std::unexpected(cat(name, "=", *text, ": not a number from ", min, " to ", max));
  }
  return value;
}

}  // namespace

std::expected<CommandLine, std::string> parse_command_line(std::span<const std::string_view> args,
                                                           const Environment& env) {
  CommandLine out;
  auto& s = out.settings;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    auto value = [&]() -> std::expected<std::string, std::string> {
      if (inline_value) return std::string(*inline_value);
      if (i + 1 >= args.size()) return std::unexpected(cat(arg, " needs a value"));
      return std::string(args[++i]);
    };
    auto flag = [&](bool& target) -> std::expected<void, std::string> {
      if (inline_value) return std::unexpected(cat(arg, " takes no value"));
      target = true;
      return {};
    };
    std::expected<void, std::string> ok;
    if (arg == "--perms") {
      auto v = value();
      if (!v) return std::unexpected(v.error());
      s.perms_path = *v;
    } else if (arg == "--db") {
      auto v = value();
      if (!v) return std::unexpected(v.error());
      s.db_url = *v;
    } else if (arg == "--perm-column") {
      auto v = value();
      if (!v) return std::unexpected(v.error());
      if (v->empty()) return std::unexpected("--perm-column needs a column name");
      s.perm_column = *v;
    } else if (arg == "--resume") {
      ok = flag(s.resume);
    } else if (arg == "--dry-run") {
      ok = flag(s.dry_run);
    } else if (arg == "--help" || arg == "-h") {
      out.help = true;
      return out;
    } else {
      return std::unexpected(cat("unknown argument ", arg));
    }
    if (!ok) return std::unexpected(ok.error());
  }
  if (s.perms_path.empty()) return std::unexpected("--perms FILE is required");
  if (s.db_url.empty()) return std::unexpected("--db URL is required");
  if (db_url_kind(s.db_url) == DbUrlKind::unknown) {
    return std::unexpected(cat("--db ", s.db_url, ": not sqlite:PATH or postgresql://..."));
  }

  auto concurrency = number_from<std::size_t>(env, "ROSTER_SYNC_CONCURRENCY", 16, 1, 1024);
  if (!concurrency) return std::unexpected(concurrency.error());
  s.concurrency = *concurrency;
  auto batch = number_from<std::size_t>(env, "ROSTER_SYNC_BATCH_SIZE", 500, 1, 100'000);
  if (!batch) return std::unexpected(batch.error());
  s.batch_size = *batch;
  auto percent = number_from<double>(env, "ROSTER_SYNC_MAX_FAILED_PERCENT", 1.0, 0.0, 100.0);
  if (!percent) return std::unexpected(percent.error());
  s.max_failed_percent = *percent;
  auto breaker = number_from<int>(env, "ROSTER_SYNC_BREAKER_THRESHOLD", 5, 1, 1000);
  if (!breaker) return std::unexpected(breaker.error());
  out.breaker_threshold = *breaker;
  return out;
}

}  // namespace roster_sync
