/*
 * pq_api.c - pq_api.h's table, filled from libpq.so.5 (libpq's soname since
 * PostgreSQL 8.2: Debian's libpq5 package).
 */
#include "util/pq_api.h"

#include "util/lazylib.h"

cb__pq_api cb__pq;

static const char *const names[] = {
#define CB__PQ_NAME(f) #f,
    CB__PQ_FUNCTIONS(CB__PQ_NAME)
#undef CB__PQ_NAME
};
_Static_assert(sizeof cb__pq == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__pq_api holds one function pointer per name");

static cb__lazylib lib = {
    .soname = "libpq.so.5",
    .needed_for = "a PostgreSQL registry (postgresql:// URLs)",
    .names = names, .fns = &cb__pq, .n = sizeof names / sizeof names[0],
    .lock = PTHREAD_MUTEX_INITIALIZER};

cb_status cb__pq_load(cb_error *err) { return cb__lazylib_load(&lib, err); }
