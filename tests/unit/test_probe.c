/*
 * test_probe.c - what the probes share: probe.json written and read back with its
 * frame checked (probe.h), and its metrics in the store's catalog with the direction
 * the file states.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "calibench/probe.h"
#include "calibench/store.h"
#include "test_file.h"

static char dir[] = "/tmp/cb-probe-XXXXXX";

static int setup(void **state) {
  (void)state;
  return mkdtemp(dir) ? 0 : -1;
}

static void test_json_round_trip(void **state) {
  (void)state;
  cb_error err;
  json_t *doc = cb_probe_json_new("context");
  assert_int_equal(cb_probe_json_metric(doc, "breakpoint_tokens", 24000, 23500, 24500, 1, &err), CB_OK);
  assert_int_equal(cb_probe_json_metric(doc, "ttft_slope", 0.5, NAN, NAN, 0, &err), CB_OK);
  json_object_set_new(doc, "breakpoint_tokens", json_integer(24000));
  assert_int_equal(cb_probe_json_write(dir, doc, &err), CB_OK);
  json_decref(doc);
  json_t *back;
  assert_int_equal(cb_probe_json_load(dir, &back, &err), CB_OK);
  assert_string_equal(json_string_value(json_object_get(back, "probe")), "context");
  json_t *m = json_object_get(json_object_get(back, "metrics"), "breakpoint_tokens");
  assert_true(json_number_value(json_object_get(m, "value")) == 24000);
  assert_true(json_number_value(json_object_get(m, "lo")) == 23500);
  assert_true(json_is_true(json_object_get(m, "higher_is_better")));
  m = json_object_get(json_object_get(back, "metrics"), "ttft_slope");
  assert_true(json_is_null(json_object_get(m, "lo")));
  assert_true(json_is_false(json_object_get(m, "higher_is_better")));
  json_decref(back);
  /* no temporary file left behind */
  char tmp[128];
  snprintf(tmp, sizeof tmp, "%s/probe.json.tmp", dir);
  assert_null(fopen(tmp, "r"));
}

static void test_json_refuses(void **state) {
  (void)state;
  cb_error err;
  json_t *doc = cb_probe_json_new("context");
  assert_int_equal(cb_probe_json_metric(doc, "Bad-Name", 1, 0, 2, 1, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "Bad-Name"));
  assert_int_equal(cb_probe_json_metric(doc, "x", NAN, 0, 2, 1, &err), CB_ERR_INVALID);
  assert_int_equal(cb_probe_json_metric(doc, "a_metric_name_that_is_far_too_long_for_the_store", 1,
                                        0, 2, 1, &err), CB_ERR_INVALID);
  json_decref(doc);

  char sub[128], path[160];
  snprintf(sub, sizeof sub, "%s/bad", dir);
  assert_int_equal(cb_probe_json_load(sub, &doc, &err), CB_ERR_NOT_FOUND);
  assert_int_equal(mkdir(sub, 0755), 0);
  snprintf(path, sizeof path, "%s/probe.json", sub);
  write_file(path, "{\"probe\":\"context\",\"version\":1,\"metrics\":{\"acc\":{\"value\":\"high\","
                   "\"higher_is_better\":true}}}");
  assert_int_equal(cb_probe_json_load(sub, &doc, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "probe.json"));
  assert_non_null(strstr(err.msg, "metrics.acc"));
  write_file(path, "{\"probe\":\"context\",\"version\":2,\"metrics\":{}}");
  assert_int_equal(cb_probe_json_load(sub, &doc, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "'version'"));
  write_file(path, "{\"probe\":\"context\",\"version\":1,\"metrics\":{\"acc\":{\"value\":1}}}");
  assert_int_equal(cb_probe_json_load(sub, &doc, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "higher_is_better"));
}

static void test_store_catalog(void **state) {
  (void)state;
  /* A name met first in a policy has no direction until a probe.json states it. */
  const cb_store_metric *m = cb_store_metric_find("probe.context.accuracy_short");
  assert_non_null(m);
  assert_int_equal(m->better, CB_BETTER_NONE);
  assert_ptr_equal(cb_store_probe_metric("probe.context.accuracy_short", CB_BETTER_HIGHER), m);
  assert_int_equal(m->better, CB_BETTER_HIGHER);
  assert_int_equal(cb_store_probe_metric("probe.context.ttft_slope", CB_BETTER_LOWER)->better,
                   CB_BETTER_LOWER);
  /* Not probe names. */
  assert_null(cb_store_metric_find("probe.context"));
  assert_null(cb_store_metric_find("probe..x"));
  assert_null(cb_store_metric_find("probe.Context.x"));
  assert_null(cb_store_probe_metric("quality.bleu", CB_BETTER_HIGHER));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_round_trip),
      cmocka_unit_test(test_json_refuses),
      cmocka_unit_test(test_store_catalog),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
