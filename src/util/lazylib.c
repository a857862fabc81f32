/*
 * lazylib.c - lazylib.h's loader: dlopen and one dlsym per name.
 */
#include "util/lazylib.h"

#include <dlfcn.h>
#include <string.h>

typedef void (*any_fn)(void);
/* POSIX dlsym hands a function back as a void *: the two have one size here. */
_Static_assert(sizeof(void *) == sizeof(any_fn), "function and object pointers differ in size");

cb_status cb__lazylib_open(const char *soname, const char *needed_for, const char *const *names,
                           void *fns, size_t n, cb_error *err) {
  memset(fns, 0, n * sizeof(any_fn));
  /* RTLD_LOCAL: its symbols serve only the table, never another library's lookups */
  void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return cb_error_set(err, CB_ERR_UNSUPPORTED, "%s: calibench needs it for %s",
                        why ? why : soname, needed_for);
  }
  for (size_t i = 0; i < n; i++) {
    dlerror();
    void *p = dlsym(lib, names[i]);
    if (!p) {
      memset(fns, 0, n * sizeof(any_fn));
      dlclose(lib);
      return cb_error_set(err, CB_ERR_UNSUPPORTED,
                          "%s has no function %s (too old?): calibench needs it for %s", soname,
                          names[i], needed_for);
    }
    memcpy((char *)fns + i * sizeof(any_fn), &p, sizeof p);
  }
  return CB_OK; /* never closed: the table points into it until exit */
}

cb_status cb__lazylib_load(cb__lazylib *lib, cb_error *err) {
  pthread_mutex_lock(&lib->lock);
  if (!lib->tried) {
    lib->status = cb__lazylib_open(lib->soname, lib->needed_for, lib->names, lib->fns, lib->n, &lib->err);
    lib->tried = 1;
  }
  cb_status st = lib->status;
  if (st != CB_OK && err) *err = lib->err;
  pthread_mutex_unlock(&lib->lock);
  return st;
}
