/*
 * test_workload_common.h - the path of a workload test's data file (tests/data/workload),
 * shared by test_workload_*.c. Header-only (each test is its own executable).
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

#endif
