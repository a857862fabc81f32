/*
 * test_sim_behavior_file.h - behaviour files for the simulator's tests: load_text
 * writes YAML to b.yaml in the group's scratch directory (test_tmpdir.h, which the
 * including file sets up) and loads it; load_ok does where the file must load, and
 * expect_error checks that a file is refused with a message holding `want`.
 * Header-only; include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_SIM_BEHAVIOR_FILE_H
#define CALIBENCH_TEST_SIM_BEHAVIOR_FILE_H

#include <stdio.h>
#include <string.h>

#include "calibench/sim_behavior.h"
#include "test_file.h"
#include "test_tmpdir.h"

/* The behaviour in `text`, or NULL with err set. */
static inline cb_sim_behavior *load_text(const char *text, cb_error *err) {
  char path[300];
  snprintf(path, sizeof path, "%s/b.yaml", tmp);
  write_file(path, text);
  cb_sim_behavior *b = NULL;
  cb_error_clear(err);
  cb_sim_behavior_load(path, &b, err);
  return b;
}

/* The behaviour in `text`; it must load. Free with cb_sim_behavior_free. */
static inline cb_sim_behavior *load_ok(const char *text) {
  cb_error err;
  cb_sim_behavior *b = load_text(text, &err);
  if (!b) fail_msg("behaviour refused: %s", err.msg);
  return b;
}

static inline void expect_error(const char *text, const char *want) {
  cb_error err;
  cb_sim_behavior *b = load_text(text, &err);
  assert_null(b);
  if (!strstr(err.msg, want)) fail_msg("error '%s' lacks '%s'", err.msg, want);
}

#endif
