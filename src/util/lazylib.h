/*
 * lazylib.h - shared libraries opened when a command first needs them rather than by
 * the dynamic loader at every start. libcurl and libpq bring ~30 libraries with them
 * (GnuTLS, Kerberos, LDAP, SSH, RTMP, ...) whose relocation cost every command 4-6 ms
 * before main; most commands (eval score, report, gate without --notify, sim run) never
 * call them. curl_api.h and pq_api.h hold the two function tables; this is the loader
 * they share.
 */
#ifndef CB_UTIL_LAZYLIB_H
#define CB_UTIL_LAZYLIB_H

#include <pthread.h>
#include <stddef.h>

#include "calibench/error.h"

/* Open `soname` and resolve names[0..n) into fns[0..n), a table of n function
 * pointers (a struct of them, filled in order). `needed_for` says in the error what
 * the library serves ("libcurl.so.4: cannot open shared object file ...: calibench
 * needs it for ..."). On failure nothing is kept open and fns is cleared. */
cb_status cb__lazylib_open(const char *soname, const char *needed_for, const char *const *names,
                           void *fns, size_t n, cb_error *err);

/* One library's table, opened at most once per process by the first cb__lazylib_load
 * (any thread); later calls give the first one's outcome. Initialise `lock` with
 * PTHREAD_MUTEX_INITIALIZER and the rest with what cb__lazylib_open takes. */
typedef struct cb__lazylib {
  const char *soname, *needed_for;
  const char *const *names;
  void *fns;
  size_t n;
  pthread_mutex_t lock;
  int tried;
  cb_status status;
  cb_error err;
} cb__lazylib;

cb_status cb__lazylib_load(cb__lazylib *lib, cb_error *err);

#endif
