/*
 * pq_api.c - pq_api.h's table, filled from libpq.so.5 (libpq's soname since
 * PostgreSQL 8.2: Debian's libpq5 package).
 */
#include "util/pq_api.h"

#include <pthread.h>

#include "util/lazylib.h"

cb__pq_api cb__pq;

static const char *const names[] = {
#define CB__PQ_NAME(f) #f,
    CB__PQ_FUNCTIONS(CB__PQ_NAME)
#undef CB__PQ_NAME
};
_Static_assert(sizeof cb__pq == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__pq_api holds one function pointer per name");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cb_status loaded;
static cb_error load_err;

static void load(void) {
  loaded = cb__lazylib_open("libpq.so.5", "a PostgreSQL registry (postgresql:// URLs)",
                            names, &cb__pq, sizeof names / sizeof names[0], &load_err);
}

cb_status cb__pq_load(cb_error *err) {
  pthread_once(&once, load);
  if (loaded != CB_OK && err) *err = load_err;
  return loaded;
}
