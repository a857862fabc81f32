/*
 * clock.h - typed time.
 *
 * All measured times are uint64_t nanoseconds on CLOCK_MONOTONIC (names end in _ns).
 * Wall-clock time is used only to label a run (cb_clock_wall_ns, UTC).
 */
#ifndef CALIBENCH_CLOCK_H
#define CALIBENCH_CLOCK_H

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CB_NS_PER_US UINT64_C(1000)
#define CB_NS_PER_MS UINT64_C(1000000)
#define CB_NS_PER_S UINT64_C(1000000000)

/* The time from `from` to `to` in ns, NAN when `to` is earlier (a record whose times
 * are out of order): every difference of two times goes through here, so that an
 * unsigned subtraction never wraps to 2^64. */
static inline double cb_clock_span_ns(uint64_t from, uint64_t to) {
  return to >= from ? (double)(to - from) : NAN;
}

/* Monotonic nanoseconds since an arbitrary origin; never goes backwards. */
uint64_t cb_clock_now_ns(void);
/* Nanoseconds since the Unix epoch (UTC), for labels only. */
uint64_t cb_clock_wall_ns(void);
/* A wall time and the monotonic time read with it, so that times on this host's
 * monotonic clock can be placed on the wall clock (merging shards run on several
 * hosts): mono_ns is the midpoint of two monotonic reads around the wall read, and
 * read_gap_ns their distance, the pairing's uncertainty. */
typedef struct cb_clock_anchor {
  uint64_t wall_ns, mono_ns, read_gap_ns;
} cb_clock_anchor;
cb_clock_anchor cb_clock_anchor_take(void);
/* Thread CPU time in nanoseconds (for client CPU accounting). */
uint64_t cb_clock_cpu_ns(void);
/* A duration in nanoseconds as a struct timeval (for libevent timers), rounded down
 * to the microsecond. */
struct timeval cb_clock_timeval(uint64_t ns);
/* Format a wall time as ISO 8601 UTC with milliseconds: 2026-12-02T13:07:34.123Z.
 * `out` needs at least 25 bytes; returns out. */
char *cb_clock_format_utc(uint64_t wall_ns, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif
#endif
