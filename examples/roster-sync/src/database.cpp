#include "database.hpp"

namespace roster_sync {

DbUrlKind db_url_kind(std::string_view url) {
  if (url.starts_with("sqlite:") && url.size() > 7) return DbUrlKind::sqlite;
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) return DbUrlKind::postgresql;
  return DbUrlKind::unknown;
}

DbResult<std::unique_ptr<Database>> open_database(std::string_view url) {
  switch (db_url_kind(url)) {
    case DbUrlKind::sqlite: return open_sqlite(url.substr(7));
    case DbUrlKind::postgresql: return open_postgres(url);
    case DbUrlKind::unknown: break;
  }
  return std::unexpected(DbError{"--db must be sqlite:PATH or postgresql://..."});
}

}  // namespace roster_sync
