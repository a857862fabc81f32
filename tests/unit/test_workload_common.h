/*
 * test_workload_common.h - what test_workload_*.c share: the path of a test's data file
 * (tests/data/workload), a small one-class workload and a schedule built from
 * parameters. Header-only (each test is its own executable); include after <cmocka.h>
 * and calibench/workload.h.
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

/* One small seeded class: synthetic, 8 tokens in and 4 out on average, `kind` arrivals
 * at `rate`. The parameters point at *cls, which must outlive them. */
static inline cb_workload_params one_class_params(cb_workload_class_params *cls, uint64_t seed,
                                                  cb_arrival_kind kind, double rate) {
  cb_workload_default_class(cls);
  cls->data.input_len.mean = 8;
  cls->data.output_len.mean = 4;
  cb_workload_params p;
  cb_workload_default_params(&p);
  p.seed = seed;
  p.arrival.kind = kind;
  p.arrival.rate = rate;
  p.classes = cls;
  p.num_classes = 1;
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
