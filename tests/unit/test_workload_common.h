/*
 * test_workload_common.h - what test_workload_*.c share: the path of a test's data file
 * (tests/data/workload) and a schedule built from parameters. Header-only (each test is
 * its own executable); include after <cmocka.h> and calibench/workload.h.
 */
#ifndef CALIBENCH_TEST_WORKLOAD_COMMON_H
#define CALIBENCH_TEST_WORKLOAD_COMMON_H

#include <stdio.h>
#include <stdlib.h>

/* tests/data/workload/NAME ($CB_DATA_DIR, else ../tests/data); the last eight paths stay
 * valid, so one call may take several. */
static inline const char *fixture(const char *name) {
  static char path[8][1024];
  static int next;
  char *p = path[next++ % 8];
  const char *dir = getenv("CB_DATA_DIR");
  snprintf(p, 1024, "%s/workload/%s", dir ? dir : "../tests/data", name);
  return p;
}

/* The workload of p (in *w) and its schedule, which must build. */
static inline cb_schedule build(const cb_workload_params *p, cb_workload **w) {
  cb_error err;
  cb_error_clear(&err);
  cb_schedule s;
  if (cb_workload_open(p, w, &err) != CB_OK) fail_msg("open: %s", err.msg);
  if (cb_workload_schedule(*w, &s, &err) != CB_OK) fail_msg("schedule: %s", err.msg);
  return s;
}

#endif
