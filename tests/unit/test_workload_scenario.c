/*
 * test_workload_scenario.c - scenario files (tests/data/workload/scenario_*.yaml) parsed
 * into workload parameters and run into a schedule; bad files give FILE:LINE errors
 * that name the key; and the small value syntaxes (durations, warm-up, SLOs, shards)
 * the CLI shares with the scenario loader.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/workload.h"
#include "test_workload_common.h"

static cb_scenario *load_ok(const char *name) {
  cb_scenario *sc;
  cb_error err;
  cb_error_clear(&err);
  if (cb_scenario_load(fixture(name), &sc, &err) != CB_OK) fail_msg("%s", err.msg);
  return sc;
}

static void test_good_scenario(void **state) {
  (void)state;
  cb_scenario *sc = load_ok("scenario_good.yaml");
  const cb_workload_params *p = cb_scenario_params(sc);
  assert_int_equal(p->seed, 42);
  assert_int_equal(p->arrival.kind, CB_ARRIVAL_GAMMA);
  assert_true(p->arrival.rate == 20.0 && p->arrival.burstiness == 0.5);
  assert_int_equal(p->duration_ns, UINT64_C(60000000000));
  assert_int_equal(p->warmup_ns, UINT64_C(5000000000));
  assert_int_equal(p->warmup_requests, 0);
  assert_int_equal(cb_scenario_keys_set(sc),
                   CB_SCENARIO_SET_SEED | CB_SCENARIO_SET_RATE | CB_SCENARIO_SET_ARRIVAL |
                       CB_SCENARIO_SET_BURSTINESS | CB_SCENARIO_SET_DURATION |
                       CB_SCENARIO_SET_WARMUP);
  assert_int_equal(p->num_classes, 3);

  const cb_workload_class_params *chat = &p->classes[0];
  assert_string_equal(chat->name, "chat");
  assert_true(chat->share == 3.0);
  char want[1200];
  snprintf(want, sizeof want, "sharegpt:%s", fixture("sharegpt_fastchat_first40.json"));
  assert_string_equal(chat->dataset, want); /* resolved against the file's directory */
  assert_int_equal(chat->data.sharegpt_mode, CB_SHAREGPT_TURNS);
  assert_int_equal(chat->data.min_prompt_len, 4);
  assert_int_equal(chat->data.min_output_len, 4);
  assert_int_equal(chat->data.max_prompt_len, 1024);
  assert_int_equal(chat->data.max_total_len, 4096); /* the explicit key wins */
  assert_int_equal(chat->slo.ttft_ns, 500000000);
  assert_int_equal(chat->slo.tpot_ns, 50000000);
  assert_int_equal(chat->slo.itl_ns, 0);
  assert_int_equal(chat->slo.e2e_ns, UINT64_C(30000000000));
  assert_int_equal(chat->num_headers, 2);
  assert_string_equal(chat->headers[0], "X-Tenant: chat");
  assert_string_equal(chat->headers[1], "X-Priority: high");

  const cb_workload_class_params *rag = &p->classes[1];
  assert_string_equal(rag->dataset, "synthetic");
  assert_int_equal(rag->data.input_len.kind, CB_LEN_LOGNORMAL);
  assert_true(rag->data.input_len.mean == 2000 && rag->data.input_len.spread == 0.5);
  assert_int_equal(rag->data.input_len.max, 8000);
  assert_int_equal(rag->data.output_len.kind, CB_LEN_UNIFORM);
  assert_true(rag->data.output_len.spread == 0.25);
  assert_int_equal(rag->data.prefix_count, 8);
  assert_int_equal(rag->data.prefix_len, 1024);
  assert_int_equal(rag->slo.ttft_ns, UINT64_C(2000000000));
  assert_int_equal(rag->slo.itl_ns, 100000000);

  const cb_workload_class_params *batch = &p->classes[2];
  assert_true(batch->share == 0.0);
  assert_int_equal(batch->arrival.kind, CB_ARRIVAL_CONSTANT);
  assert_true(batch->arrival.rate == 0.5);
  assert_int_equal(batch->data.output_len_override, 64);

  /* The scenario runs: one schedule, the batch tenant every 2 s on its own. */
  cb_workload *w;
  cb_schedule s;
  cb_error err;
  cb_error_clear(&err);
  if (cb_workload_open(p, &w, &err) != CB_OK) fail_msg("%s", err.msg);
  assert_int_equal(cb_workload_schedule(w, &s, &err), CB_OK);
  size_t n[3] = {0, 0, 0};
  for (size_t i = 0; i < s.count; i++) {
    const cb_schedule_entry *e = &s.entries[i];
    assert_true(e->offset_ns < UINT64_C(60000000000));
    assert_int_equal(e->warmup, e->offset_ns < UINT64_C(5000000000));
    if (e->class_id == 2) {
      assert_int_equal(e->offset_ns, n[2] * UINT64_C(2000000000));
      assert_int_equal(e->item, n[2]); /* trace rows in order */
      assert_int_equal(e->output_len, 64);
    }
    if (e->class_id == 1) assert_true(e->input_len > 1024 && e->input_len <= 1024 + 8000);
    n[e->class_id]++;
  }
  assert_int_equal(n[2], 30);
  /* 20/s x 60 s shared 3:1 (gamma, CV 1.4: loose bounds). */
  assert_true(n[0] > 600 && n[0] < 1200 && n[1] > 150 && n[1] < 450);
  assert_string_equal(cb_workload_get_class(w, 0)->name, "chat");
  assert_true(fabs(cb_workload_get_class(w, 0)->share - 0.75) < 1e-15);
  cb_schedule_free(&s);
  cb_workload_free(w);
  cb_scenario_free(sc);
}

static void test_closed_scenario(void **state) {
  (void)state;
  cb_scenario *sc = load_ok("scenario_closed.yaml");
  const cb_workload_params *p = cb_scenario_params(sc);
  assert_int_equal(p->arrival.kind, CB_ARRIVAL_CLOSED);
  assert_int_equal(p->concurrency, 16);
  assert_int_equal(p->num_requests, 500);
  assert_int_equal(p->warmup_requests, 50);
  assert_true(p->classes[0].share == 1.0); /* the default share */
  assert_int_equal(p->classes[0].data.order, CB_ORDER_SEQUENTIAL);
  assert_int_equal(p->classes[1].data.input_len.kind, CB_LEN_FIXED);
  assert_true(p->classes[1].data.input_len.mean == 64);
  /* Flags given on the command line win: copy, change, run. */
  cb_workload_params mine = *p;
  mine.num_requests = 100;
  cb_workload *w;
  cb_schedule s;
  assert_int_equal(cb_workload_open(&mine, &w, NULL), CB_OK);
  assert_int_equal(cb_workload_schedule(w, &s, NULL), CB_OK);
  assert_int_equal(s.count, 100);
  assert_int_equal(s.warmup_count, 50);
  for (size_t i = 0; i < s.count; i++) {
    assert_int_equal(s.entries[i].offset_ns, 0);
    if (s.entries[i].class_id == 1) assert_int_equal(s.entries[i].input_len, 64);
  }
  cb_schedule_free(&s);
  cb_workload_free(w);
  cb_scenario_free(sc);
}

static void load_fails(const char *name, long line, const char *about) {
  cb_scenario *sc = (cb_scenario *)1;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_scenario_load(fixture(name), &sc, &err);
  if (st == CB_OK) fail_msg("%s: loaded", name);
  assert_null(sc);
  char where[1200];
  snprintf(where, sizeof where, "%s:%ld:", fixture(name), line);
  if (strncmp(err.msg, where, strlen(where)) != 0 || err.line != line)
    fail_msg("%s: message '%s', want it to start with '%s'", name, err.msg, where);
  if (!strstr(err.msg, about)) fail_msg("%s: message '%s' lacks '%s'", name, err.msg, about);
}

static void test_bad_scenarios(void **state) {
  (void)state;
  load_fails("scenario_bad_slo.yaml", 5,
             "key 'classes[0].slo.ttft': expected a duration such as 500ms, 2s or 1m, got "
             "'500xs' (unknown unit 'xs'");
  load_fails("scenario_bad_unknown_key.yaml", 5,
             "key 'classes[1].sharee': unknown key (known: name, dataset, share, rate");
  load_fails("scenario_bad_share_and_rate.yaml", 4,
             "key 'classes[0]': 'share' and an own process (rate, arrival, burstiness, "
             "trace_speed) are exclusive");
  load_fails("scenario_bad_yaml.yaml", 4, "YAML: ");
  load_fails("scenario_bad_no_classes.yaml", 1, "key 'classes': required: a list of classes");
  load_fails("scenario_bad_concurrency_open.yaml", 3,
             "key 'concurrency': sets a closed loop, but arrival is 'poisson'");
  load_fails("scenario_bad_len.yaml", 5,
             "key 'classes[0].input_len': uniform needs its spread (range_ratio)");
  load_fails("scenario_bad_duplicate.yaml", 4,
             "key 'classes[1].name': 'a' is already the name of classes[0]");
  cb_scenario *sc;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_scenario_load("/nonexistent/s.yaml", &sc, &err), CB_ERR_IO);
  /* From text, with a name for messages. */
  const char *text = "rate: fast\nclasses: [{name: a}]\n";
  assert_int_equal(cb_scenario_parse(text, strlen(text), "inline", NULL, &sc, &err),
                   CB_ERR_PARSE);
  assert_string_equal(err.msg, "inline:1: key 'rate': expected a number, got 'fast'");
}

/* A scenario's ramp (ramp_up, ramp_start, ramp_duration) ramps its common process; bad
 * ramps are refused at the ramp_up line. */
static void test_ramp_scenario(void **state) {
  (void)state;
  const char *text = "rate: 20\nramp_up: exponential\nramp_start: 2\nramp_duration: 1m\n"
                     "num_requests: 50\nclasses: [{name: a, share: 1}, {name: b, share: 3}]\n";
  cb_scenario *sc;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_scenario_parse(text, strlen(text), "inline", NULL, &sc, &err), CB_OK);
  const cb_workload_params *p = cb_scenario_params(sc);
  assert_int_equal(p->arrival.ramp, CB_RAMP_EXPONENTIAL);
  assert_float_equal(p->arrival.ramp_start, 2, 0);
  assert_float_equal(p->arrival.ramp_duration_s, 60, 0);
  assert_true(cb_scenario_keys_set(sc) & CB_SCENARIO_SET_RAMP);
  cb_workload *w;
  assert_int_equal(cb_workload_open(p, &w, NULL), CB_OK);
  assert_true(cb_workload_ramps(w));
  assert_float_equal(cb_workload_offered_rate(w, UINT64_C(30000000000)), sqrt(2.0 * 20), 1e-9);
  cb_workload_free(w);
  cb_scenario_free(sc);
  const char *bad[][2] = {
      {"rate: 5\nramp_up: exponential\nramp_duration: 10s\nclasses: [{name: a}]\n",
       "inline:2: key 'ramp_up': an exponential ramp must start above 0"},
      {"rate: 5\nramp_up: linear\nramp_start: 9\nramp_duration: 10s\nclasses: [{name: a}]\n",
       "inline:2: key 'ramp_up': ramp start (9 req/s) must be below the rate"},
      {"concurrency: 4\nramp_up: linear\nramp_duration: 10s\nclasses: [{name: a}]\n",
       "inline:2: key 'ramp_up': a ramp needs an open-loop rate"},
      {"rate: 5\nramp_start: 1\nclasses: [{name: a}]\n",
       "inline:1: key 'ramp_up': ramp_start and ramp_duration shape a ramp"},
      {"rate: 5\nramp_up: steep\nclasses: [{name: a}]\n",
       "inline:2: key 'ramp_up': unknown ramp 'steep' (known: linear, exponential)"},
      {"rate: 5\nramp_up: linear\nramp_duration: 0\nclasses: [{name: a}]\n",
       "inline:3: key 'ramp_duration':"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error_clear(&err);
    assert_int_not_equal(cb_scenario_parse(bad[i][0], strlen(bad[i][0]), "inline", NULL, &sc, &err),
                         CB_OK);
    assert_null(sc);
    if (strncmp(err.msg, bad[i][1], strlen(bad[i][1])))
      fail_msg("ramp case %zu: '%s', want '%s...'", i, err.msg, bad[i][1]);
  }
}

/* ---- value syntaxes ------------------------------------------------------------------------- */

static void test_parse_helpers(void **state) {
  (void)state;
  uint64_t ns = 0, req = 0;
  cb_error err;
  cb_error_clear(&err);
  /* A run's length: bare seconds, and 0 is refused, never read as "no limit". */
  assert_int_equal(cb_workload_parse_run_duration("2", &ns, NULL), CB_OK);
  assert_int_equal(ns, UINT64_C(2000000000));
  assert_int_equal(cb_workload_parse_run_duration("0", &ns, &err), CB_ERR_RANGE);
  assert_non_null(strstr(err.msg, "must be > 0, got '0'"));
  assert_int_equal(cb_workload_parse_run_duration("0ms", &ns, &err), CB_ERR_RANGE);
  assert_int_equal(cb_workload_parse_run_duration("soon", &ns, &err), CB_ERR_PARSE);

  assert_int_equal(cb_workload_parse_warmup("100", &req, &ns, NULL), CB_OK);
  assert_true(req == 100 && ns == 0);
  assert_int_equal(cb_workload_parse_warmup("30s", &req, &ns, NULL), CB_OK);
  assert_true(req == 0 && ns == UINT64_C(30000000000));
  assert_int_equal(cb_workload_parse_warmup("lots", &req, &ns, &err), CB_ERR_PARSE);

  /* An SLO bound: bare numbers are ms (as in --slo and gate policies), 0 is refused. */
  assert_int_equal(cb_workload_parse_slo_bound("500", &ns, NULL), CB_OK);
  assert_int_equal(ns, 500000000);
  assert_int_equal(cb_workload_parse_slo_bound("1m", &ns, NULL), CB_OK);
  assert_int_equal(ns, UINT64_C(60000000000));
  assert_int_equal(cb_workload_parse_slo_bound("0", &ns, &err), CB_ERR_RANGE);
  assert_non_null(strstr(err.msg, "an SLO bound must be > 0, got '0'"));
  assert_int_equal(cb_workload_parse_slo_bound("0.0001ns", &ns, &err), CB_ERR_RANGE);
  assert_int_equal(cb_workload_parse_slo_bound("fast", &ns, &err), CB_ERR_PARSE);

  uint32_t i, n;
  assert_int_equal(cb_workload_parse_shard("2/8", &i, &n, NULL), CB_OK);
  assert_true(i == 2 && n == 8);
  assert_int_equal(cb_workload_parse_shard("8/8", &i, &n, &err), CB_ERR_RANGE);
  assert_int_equal(cb_workload_parse_shard("1of4", &i, &n, &err), CB_ERR_PARSE);

  cb_len_kind k;
  assert_int_equal(cb_dataset_len_kind_parse("LogNormal", &k, NULL), CB_OK);
  assert_int_equal(k, CB_LEN_LOGNORMAL);
  assert_int_equal(cb_dataset_len_kind_parse("zipf", &k, &err), CB_ERR_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_scenario),
      cmocka_unit_test(test_closed_scenario),
      cmocka_unit_test(test_bad_scenarios),
      cmocka_unit_test(test_ramp_scenario),
      cmocka_unit_test(test_parse_helpers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
