/*
 * test_probe_dialog.c - `probe dialog`'s parts: scenario files (slots, checks, the
 * recall depth of an implicit constraint, and every bad file refused at its line),
 * the checks themselves on answers a model could give, and conversations sent live
 * through a session against the built-in simulator (each turn after the answer
 * before it, carrying that answer).
 */
#define _XOPEN_SOURCE 700
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe/dialog.h"
#include "probe/dialog_run.h"
#include "test_file.h"

#define TEST_TMPDIR_PREFIX "cb-pdialog"
#include "test_tmpdir.h"

static const char TRIP[] =
    "scenarios:\n"                                     /* 1 */
    "  - name: trip\n"                                 /* 2 */
    "    system: You are a travel agent.\n"            /* 3 */
    "    max_tokens: 32\n"                             /* 4 */
    "    slots: {budget: '(\\d+) ?EUR'}\n"             /* 5 */
    "    turns:\n"                                     /* 6 */
    "      - user: My budget is 300 EUR.\n"            /* 7 */
    "        set: {budget: '300'}\n"                   /* 8 */
    "      - user: My city is Lisbon.\n"               /* 9 */
    "        set: {city: Lisbon}\n"                    /* 10 */
    "      - user: Pick a hotel in my city within my budget.\n" /* 11 */
    "        checks:\n"                                /* 12 */
    "          - mentions: budget\n"                   /* 13 */
    "          - not_contradicts: budget\n"            /* 14 */
    "          - {json: $.city, slot: city}\n"         /* 15 */
    "          - regex: '(?i)hotel'\n"                 /* 16 */
    "  - name: short\n"                                /* 17 */
    "    turns:\n"                                     /* 18 */
    "      - user: My name is Ada. What is my name?\n" /* 19 */
    "        set: {name: Ada}\n"                       /* 20 */
    "        checks: [{mentions: name}]\n";            /* 21 */

static void load_text(const char *text, cb__probe_dialog_suite *s) {
  char path[300];
  snprintf(path, sizeof path, "%s/scenarios.yaml", tmp);
  write_file(path, text);
  cb_error err;
  if (cb__probe_dialog_suite_load(path, s, &err) != CB_OK) fail_msg("%s", err.msg);
}

static void test_scenario(void **state) {
  (void)state;
  cb__probe_dialog_suite s;
  load_text(TRIP, &s);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.max_turns, 3);
  assert_true(s.n_clarify > 0); /* the built-in list */
  const cb__probe_dialog_scenario *sc = &s.scenarios[0];
  assert_string_equal(sc->name, "trip");
  assert_string_equal(sc->system, "You are a travel agent.");
  assert_int_equal(sc->max_tokens, 32);
  assert_int_equal(sc->n_turns, 3);
  const cb__probe_dialog_turn *t = &sc->turns[2];
  assert_int_equal(t->n_checks, 4);
  /* budget set at turn 0, needed at turn 2: depth 2; city set at turn 1: depth 1 */
  assert_int_equal(t->checks[0].kind, CB__PROBE_DIALOG_MENTIONS);
  assert_int_equal(t->checks[0].depth, 2);
  assert_string_equal(t->checks[0].expected, "300");
  assert_int_equal(t->checks[0].line, 13);
  assert_int_equal(t->checks[1].kind, CB__PROBE_DIALOG_NOT_CONTRADICTS);
  assert_int_equal(t->checks[2].kind, CB__PROBE_DIALOG_JSON);
  assert_int_equal(t->checks[2].depth, 1);
  assert_string_equal(t->checks[2].expected, "Lisbon");
  assert_int_equal(t->checks[3].kind, CB__PROBE_DIALOG_REGEX);
  assert_int_equal(t->checks[3].depth, -1);
  /* a slot set and needed in one turn: depth 0 */
  assert_int_equal(s.scenarios[1].turns[0].checks[0].depth, 0);
  cb__probe_dialog_suite_free(&s);
}

/* Each bad file is refused with its file, its line and what is wrong. */
static void test_bad_scenarios(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"scenario: []\n", ":1: unknown key 'scenario'"},
      {"scenarios: []\n", ":1: key 'scenarios': expected a non-empty list"},
      {"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        checks: [{mentions: budget}]\n",
       ":5: key 'mentions': slot 'budget' is not set by this or an earlier turn"},
      {"scenarios:\n  - name: a\n    turns:\n      - user: hi\n      - user: later\n        set: {b: '1'}\n"
       "      - user: x\n        checks:\n          - not_contradicts: b\n",
       ":9: key 'not_contradicts': slot 'b' has no pattern"},
      {"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        checks:\n          - regex: '(unclosed'\n",
       ":6: key 'regex': not a valid regular expression"},
      {"scenarios:\n  - name: a\n    turns:\n      - set: {b: '1'}\n", ":4: key 'user': missing"},
      {"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        checks:\n          - {regex: a, mentions: b}\n",
       ":6: key 'checks': expected exactly one of regex, json, mentions, not_contradicts, got 2"},
      {"scenarios:\n  - name: a\n    turns:\n      - user: hi\n        chekcs: []\n",
       ":5: unknown key 'chekcs' in a turn"},
      {"scenarios:\n  - name: a\n    max_tokens: 0\n    turns: [{user: hi}]\n", ":3: key 'max_tokens': must be in"},
      {"scenarios:\n  - name: a\n    turns: [{user: hi}]\n  - name: a\n    turns: [{user: ho}]\n",
       ":4: key 'name': scenario 'a' is named twice"},
      {"scenarios:\n  - turns: [{user: hi}]\n", ":2: key 'name': missing"},
      {"scenarios:\n  - name: a\n    turns: [{user: hi, checks: [{regex: x, equals: '1'}]}]\n",
       ":3: key 'equals': applies to a json check only"},
      {"clarification: ['(']\nscenarios:\n  - name: a\n    turns: [{user: hi}]\n",
       ":1: key 'clarification': not a valid regular expression"},
  };
  char path[300];
  snprintf(path, sizeof path, "%s/bad.yaml", tmp);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_file(path, cases[i].text);
    cb__probe_dialog_suite s;
    cb_error err;
    assert_int_not_equal(cb__probe_dialog_suite_load(path, &s, &err), CB_OK);
    if (!strstr(err.msg, path) || !strstr(err.msg, cases[i].want))
      fail_msg("case %zu: expected '%s' in '%s'", i, cases[i].want, err.msg);
  }
}

static int eval(const cb__probe_dialog_check *c, const char *answer) {
  return cb__probe_dialog_check_eval(c, answer, strlen(answer));
}

static void test_checks(void **state) {
  (void)state;
  cb__probe_dialog_suite s;
  load_text(TRIP, &s);
  const cb__probe_dialog_check *c = s.scenarios[0].turns[2].checks;
  /* mentions: the value as a word of its own */
  assert_true(eval(&c[0], "Hotel Sol costs 300 EUR in total."));
  assert_false(eval(&c[0], "Hotel Sol costs 3000 EUR."));
  assert_false(eval(&c[0], "What is your budget?"));
  /* not_contradicts: every amount stated is the budget's (none stated: fine) */
  assert_true(eval(&c[1], "Within 300 EUR: Hotel Sol at 300EUR."));
  assert_true(eval(&c[1], "Hotel Sol is nice."));
  assert_false(eval(&c[1], "Your 300 EUR gets you Hotel Sol (280 EUR) or Ritz at 900 EUR."));
  /* json: the city in the answer's JSON, bare, fenced or inside prose */
  assert_true(eval(&c[2], "{\"city\": \"lisbon\", \"hotel\": \"Sol\"}"));
  assert_true(eval(&c[2], "Sure:\n```json\n{\"city\": \"Lisbon\"}\n```\nEnjoy!"));
  assert_true(eval(&c[2], "Here it is: {\"city\": \"Lisbon\"} - enjoy"));
  assert_false(eval(&c[2], "{\"city\": \"Porto\"}"));
  assert_false(eval(&c[2], "{\"town\": \"Lisbon\"}"));
  assert_false(eval(&c[2], "Lisbon, not JSON"));
  /* regex */
  assert_true(eval(&c[3], "HOTEL"));
  assert_false(eval(&c[3], "hostel"));
  /* the answer need not be valid UTF-8 */
  assert_false(eval(&c[0], "\xff\xfe 30"));
  /* a JSON path with an index, a number compared as a number */
  cb__probe_dialog_check j = {.kind = CB__PROBE_DIALOG_JSON, .path = "$.items[1].price", .expected = "300"};
  assert_true(eval(&j, "{\"items\": [{\"price\": 1}, {\"price\": 300.0}]}"));
  assert_false(eval(&j, "{\"items\": [{\"price\": 300}]}"));
  j.expected = NULL; /* the path exists */
  assert_true(eval(&j, "{\"items\": [{}, {\"price\": false}]}"));
  /* clarification questions */
  const char *asks[] = {"Could you remind me of your budget?", "What is your budget?",
                        "Sorry, I don't recall the budget. Can you tell me again?"};
  for (size_t i = 0; i < 3; i++) assert_true(cb__probe_dialog_is_clarification(&s, asks[i], strlen(asks[i])));
  const char *not_asks[] = {"Your budget is 300 EUR.", "What is your budget? It is 300 EUR"};
  assert_false(cb__probe_dialog_is_clarification(&s, not_asks[0], strlen(not_asks[0])));
  assert_true(cb__probe_dialog_is_clarification(&s, not_asks[1], strlen(not_asks[1]))); /* asks, too */
  cb__probe_dialog_suite_free(&s);
}

/* Conversations through a session and the built-in simulator: each turn is sent
 * after the answer before it, with that answer in its messages (the server counts
 * more prompt tokens than the turn before plus its answer); every turn is answered
 * and every check evaluated; the concurrency is the conversations in flight. */
static void test_live(void **state) {
  (void)state;
  cb__probe_dialog_suite s;
  load_text(TRIP, &s);
  cb__probe_dialog_params p = {.repetitions = 3, .seed = 1, .send_seed = 1, .level = 0.95};
  cb__probe_dialog_run *r = cb__probe_dialog_run_new(&s, &p);
  cb_session_config cfg;
  cb_session_config_init(&cfg);
  cfg.workload.concurrency = 2;
  cfg.sim.time_scale = 0.01;
  cfg.no_report = 1;
  snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s/live", tmp);
  cb__probe_dialog_run_attach(r, &cfg);
  cb_session *ses;
  cb_error err;
  assert_int_equal(cb_session_open(&cfg, &ses, &err), CB_SESSION_OK);
  cb_session_result res;
  if (cb_session_run(ses, &res, &err) != CB_SESSION_OK) fail_msg("%s", err.msg);
  assert_int_equal(res.all.requests, 3 * (3 + 1));
  assert_int_equal(r->completed, 6);
  for (size_t k = 0; k < r->n_convs; k++) {
    const cb__probe_dialog_conv *c = &r->convs[k];
    assert_int_equal(c->answered, s.scenarios[c->scenario].n_turns);
    for (size_t t = 1; t < s.scenarios[c->scenario].n_turns; t++) {
      assert_true(c->turns[t].answered);
      assert_true(c->turns[t].prompt_tokens > c->turns[t - 1].prompt_tokens);
    }
    for (size_t i = 0; i < (c->scenario ? 1u : 4u); i++) assert_true(c->outcome[i] == 0 || c->outcome[i] == 1);
  }
  json_t *doc = cb__probe_dialog_run_json(r);
  json_t *conv = json_object_get(doc, "conversations");
  assert_int_equal(json_integer_value(json_object_get(conv, "planned")), 6);
  assert_int_equal(json_integer_value(json_object_get(conv, "completed")), 6);
  assert_int_equal(json_integer_value(json_object_get(doc, "index_stride")), 3);
  assert_int_equal(json_array_size(json_object_get(doc, "by_turn")), 3);
  assert_int_equal(json_array_size(json_object_get(doc, "checks")), 5);
  json_t *sat = json_object_get(json_object_get(doc, "metrics"), "satisfaction");
  assert_int_equal(json_integer_value(json_object_get(sat, "n")), 3 * 5);
  json_decref(doc);
  cb_session_result_free(&res);
  cb_session_close(ses);
  cb_session_config_free(&cfg);
  cb__probe_dialog_run_free(r);
  cb__probe_dialog_suite_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scenario),
      cmocka_unit_test(test_bad_scenarios),
      cmocka_unit_test(test_checks),
      cmocka_unit_test(test_live),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
