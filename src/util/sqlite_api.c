/*
 * sqlite_api.c - sqlite_api.h's table, filled from libsqlite3.so.0 (SQLite 3's soname:
 * Debian's libsqlite3-0 package).
 */
#include "util/sqlite_api.h"

#include "util/lazylib.h"

cb__sqlite_api cb__sqlite;

static const char *const names[] = {
#define CB__SQLITE_NAME(f) #f,
    CB__SQLITE_FUNCTIONS(CB__SQLITE_NAME)
#undef CB__SQLITE_NAME
};
_Static_assert(sizeof cb__sqlite == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__sqlite_api holds one function pointer per name");

static cb__lazylib lib = {
    .soname = "libsqlite3.so.0",
    .needed_for = "a SQLite registry (store, history, gate --registry)",
    .names = names, .fns = &cb__sqlite, .n = sizeof names / sizeof names[0],
    .lock = PTHREAD_MUTEX_INITIALIZER};

cb_status cb__sqlite_load(cb_error *err) { return cb__lazylib_load(&lib, err); }
