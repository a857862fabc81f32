/*
 * fdlimit.h - the process's open-file limit (RLIMIT_NOFILE).
 *
 * Every stream a load generator holds is one socket, and so is every connection a
 * server holds: the soft limit (often 1024) stops a run long before memory or CPU
 * do. `run` and `sim serve` raise the soft limit to the hard one at start (any
 * process may; raising the hard limit needs privilege) and say so.
 */
#ifndef CALIBENCH_FDLIMIT_H
#define CALIBENCH_FDLIMIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_fdlimit {
  uint64_t before; /* the soft limit found at start */
  uint64_t soft;   /* the soft limit now */
  uint64_t hard;   /* the hard limit (UINT64_MAX: unlimited) */
  int err;         /* 0, or the errno of the failed getrlimit/setrlimit */
} cb_fdlimit;

/* Raise RLIMIT_NOFILE's soft limit to its hard limit (to fs.nr_open when the hard
 * limit is unlimited) and describe it. Never fails the caller: *out says what held. */
void cb_fdlimit_raise(cb_fdlimit *out);

#ifdef __cplusplus
}
#endif
#endif
