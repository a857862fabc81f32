/*
 * clock.c - monotonic, wall and CPU clocks in nanoseconds.
 */
#include "calibench/clock.h"

#include <stdio.h>
#include <time.h>

static uint64_t read_clock(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * CB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t cb_clock_now_ns(void) { return read_clock(CLOCK_MONOTONIC); }
uint64_t cb_clock_wall_ns(void) { return read_clock(CLOCK_REALTIME); }
uint64_t cb_clock_cpu_ns(void) { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

cb_clock_anchor cb_clock_anchor_take(void) {
  uint64_t a = cb_clock_now_ns(), wall = cb_clock_wall_ns(), b = cb_clock_now_ns();
  return (cb_clock_anchor){.wall_ns = wall, .mono_ns = a + (b - a) / 2, .read_gap_ns = b - a};
}

struct timeval cb_clock_timeval(uint64_t ns) {
  return (struct timeval){.tv_sec = (time_t)(ns / CB_NS_PER_S),
                          .tv_usec = (suseconds_t)((ns % CB_NS_PER_S) / CB_NS_PER_US)};
}

char *cb_clock_format_utc(uint64_t wall_ns, char *out, size_t out_size) {
  time_t secs = (time_t)(wall_ns / CB_NS_PER_S);
  unsigned ms = (unsigned)((wall_ns % CB_NS_PER_S) / CB_NS_PER_MS);
  struct tm tm;
  gmtime_r(&secs, &tm);
  snprintf(out, out_size, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return out;
}
