/*
 * fdlimit.c - raise RLIMIT_NOFILE's soft limit to the hard limit.
 */
#include "calibench/fdlimit.h"

#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

/* A soft limit of RLIM_INFINITY is refused (EPERM): the kernel's own ceiling on a
 * descriptor number, fs.nr_open, is the most a process can have. */
static rlim_t nr_open(void) {
  FILE *f = fopen("/proc/sys/fs/nr_open", "r");
  unsigned long long v = 0;
  if (f) {
    if (fscanf(f, "%llu", &v) != 1) v = 0;
    fclose(f);
  }
  return v ? (rlim_t)v : (rlim_t)1048576; /* the kernel's default nr_open */
}

static uint64_t as_u64(rlim_t v) { return v == RLIM_INFINITY ? UINT64_MAX : (uint64_t)v; }

void cb_fdlimit_raise(cb_fdlimit *out) {
  struct rlimit rl;
  *out = (cb_fdlimit){0};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    out->err = errno;
    return;
  }
  out->before = out->soft = as_u64(rl.rlim_cur);
  out->hard = as_u64(rl.rlim_max);
  rlim_t want = rl.rlim_max == RLIM_INFINITY ? nr_open() : rl.rlim_max;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= want) return;
  rl.rlim_cur = want;
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    out->err = errno;
    return;
  }
  out->soft = as_u64(want);
}
