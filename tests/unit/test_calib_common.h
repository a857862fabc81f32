/*
 * test_calib_common.h - helpers shared by the calibration tests (test_calib_cost.c,
 * test_calib_drift.c, test_calib_expect.c): a relative comparison that names what it
 * compares, the path of a file in tests/data/calib, and the check of an error's status
 * and message, and the two sides of the classic intent example. Header-only (each test is its own executable); include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_CALIB_COMMON_H
#define CALIBENCH_TEST_CALIB_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/calib.h"
#include "calibench/error.h"

/* |got - want| within tol relative to 1 + |want|. */
static inline void check_close(const char *what, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol * (1.0 + fabs(want))))
    fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* tests/data/calib/NAME; the last four paths stay valid, so one call may take several. */
static inline const char *data(const char *name) {
  static char path[4][1024];
  static int k;
  k = (k + 1) % 4;
  snprintf(path[k], sizeof path[k], "%s/calib/%s", getenv("CB_DATA_DIR"), name);
  return path[k];
}

/* The error `st`/`err` must be `code` with a message containing `want`. */
static inline void expect_error(cb_status st, cb_status code, const cb_error *err,
                                const char *want) {
  if (st != code)
    fail_msg("status %s, want %s (%s)", cb_status_name(st), cb_status_name(code), err->msg);
  if (!strstr(err->msg, want)) fail_msg("message '%s' lacks '%s'", err->msg, want);
}

/* The classic example's JS divergence in bits (SciPy, test_calib_drift.c). */
static const double CLASSIC_JS = 0.11085192172164743;

/* The classic example's sides (test_calib_drift.c): the balanced benchmark of 8 intents
 * and production's sample of 1,000 requests. */
static inline void load_classic(cb_calib_dist *bench, cb_calib_dist *prod) {
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_calib_dist_load(bench, data("intents_benchmark.json"), &err), CB_OK);
  assert_int_equal(
      cb_calib_sample_labels_load(prod, data("intents_production.jsonl"), "intent", &err), CB_OK);
}

#endif
