/*
 * sqlite_api.h - SQLite's functions, as the registry's SQLite driver calls them:
 * cb__sqlite.sqlite3_step() for sqlite3_step(), and so on, after cb__sqlite_load()
 * (lazylib.h: libsqlite3.so.0 is opened by the first command that opens a registry,
 * not at every start, where loading it cost ~0.4 ms). Each pointer has the type of
 * sqlite3.h's own prototype, so a call is checked as a direct call would be.
 */
#ifndef CB_UTIL_SQLITE_API_H
#define CB_UTIL_SQLITE_API_H

#include <sqlite3.h>

#include "calibench/error.h"

/* Every SQLite function calibench calls. */
#define CB__SQLITE_FUNCTIONS(X)                                                            \
  X(sqlite3_open_v2) X(sqlite3_close) X(sqlite3_busy_timeout) X(sqlite3_errmsg)            \
  X(sqlite3_prepare_v2) X(sqlite3_bind_null) X(sqlite3_bind_text) X(sqlite3_step)          \
  X(sqlite3_finalize) X(sqlite3_column_count) X(sqlite3_column_type)                       \
  X(sqlite3_column_double) X(sqlite3_column_text) X(sqlite3_column_bytes)

typedef struct cb__sqlite_api {
#define CB__SQLITE_FIELD(f) __typeof__(f) *f;
  CB__SQLITE_FUNCTIONS(CB__SQLITE_FIELD)
#undef CB__SQLITE_FIELD
} cb__sqlite_api;

/* Filled by cb__sqlite_load; all NULL before. */
extern cb__sqlite_api cb__sqlite;

/* Opens libsqlite3 once per process (thread-safe); every later call answers as the
 * first did. The error names the library and what it serves. */
cb_status cb__sqlite_load(cb_error *err);

#endif
