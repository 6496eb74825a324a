// The tests' view into a SQLite database: `roster_sync_sqlite_query PATH SQL`
// runs SQL and prints each row as `a|b|c` (NULL as an empty field).
#include <cstdio>

#include <sqlite3.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: roster_sync_sqlite_query PATH SQL\n");
    return 2;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", argv[1], sqlite3_errmsg(db));
    return 1;
  }
  sqlite3_busy_timeout(db, 10'000);
  auto print_row = [](void*, int n, char** values, char**) {
    for (int i = 0; i < n; ++i) std::printf("%s%s", i ? "|" : "", values[i] ? values[i] : "");
    std::printf("\n");
    return 0;
  };
  char* error = nullptr;
  const int rc = sqlite3_exec(db, argv[2], print_row, nullptr, &error);
  if (rc != SQLITE_OK) std::fprintf(stderr, "%s\n", error ? error : "error");
  sqlite3_free(error);
  sqlite3_close(db);
  return rc == SQLITE_OK ? 0 : 1;
}
