/*
 * test_eval_run.c - eval run's library pieces (eval_run.h): the --metrics list
 * (judge:RUBRIC taken apart: one judge, its name; unknown and repeated names), each metric's
 * direction, the evaluation dataset's spec and its errors (file:line: field), and the
 * paired bootstrap between two eval.json: identical runs are never significant, a
 * planted drop is, an improvement is not, items that do not pair are refused, a class
 * filter keeps to its class.
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
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "calibench/eval_run.h"

static char tmpdir[256];

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "%s/cb-evalrun-unit.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  return system(cmd);
}

static const char *write_tmp(const char *name, const char *text) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static void test_parse_metrics(void **state) {
  (void)state;
  cb_eval_run_params p;
  cb_error err;
  cb_eval_run_params_init(&p);
  assert_int_equal(p.seed, 12345);
  char ok[] = "bleu,chrf,ter";
  assert_int_equal(cb_eval_run_parse_metrics(&p, ok, &err), CB_OK);
  assert_int_equal(p.n_metrics, 3);
  assert_string_equal(p.metrics[2], "ter");
  /* the judge is no table metric: its rubric file and the name its scores go under */
  char judge[] = "bleu,judge:rubrics/strict.v2.yaml";
  assert_int_equal(cb_eval_run_parse_metrics(&p, judge, &err), CB_OK);
  assert_int_equal(p.n_metrics, 1);
  assert_string_equal(p.judge_rubric, "rubrics/strict.v2.yaml");
  assert_string_equal(p.judge_name, "judge:strict.v2");
  char judge_only[] = "judge:r.yml";
  assert_int_equal(cb_eval_run_parse_metrics(&p, judge_only, &err), CB_OK);
  assert_int_equal(p.n_metrics, 0);
  assert_string_equal(p.judge_name, "judge:r");
  char judges[] = "judge:a.yaml,judge:b.yaml";
  assert_int_equal(cb_eval_run_parse_metrics(&p, judges, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "one judge per run"));
  char no_rubric[] = "judge:";
  assert_int_equal(cb_eval_run_parse_metrics(&p, no_rubric, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "expected judge:RUBRIC"));
  char control[] = "judge:dir/r\x1b[31m.yaml";
  assert_int_equal(cb_eval_run_parse_metrics(&p, control, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "control character (byte 2)"));
  char bleu[] = "bleu";
  assert_int_equal(cb_eval_run_parse_metrics(&p, bleu, &err), CB_OK);
  assert_null(p.judge_rubric);
  char unknown[] = "blue";
  assert_int_equal(cb_eval_run_parse_metrics(&p, unknown, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "unknown metric 'blue' (known: bleu"));
  char twice[] = "chrf,chrf";
  assert_int_equal(cb_eval_run_parse_metrics(&p, twice, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "'chrf' given twice"));
  char none[] = ",";
  assert_int_equal(cb_eval_run_parse_metrics(&p, none, &err), CB_ERR_INVALID);
  assert_true(cb_eval_metric_higher_is_better("bleu"));
  assert_true(cb_eval_metric_higher_is_better("chrf"));
  assert_false(cb_eval_metric_higher_is_better("ter"));
}

static void expect_spec_error(const char *name, const char *text, const char *want) {
  char spec[1100], given[600];
  size_t items;
  cb_error err;
  snprintf(given, sizeof given, "%s", write_tmp(name, text));
  assert_int_not_equal(cb_eval_dataset_spec(given, spec, sizeof spec, &items, &err), CB_OK);
  if (!strstr(err.msg, want)) fail_msg("%s: '%s' lacks '%s'", name, err.msg, want);
}

static void test_dataset_spec(void **state) {
  (void)state;
  char spec[1100], path[600], want[700];
  size_t items = 0;
  cb_error err;
  snprintf(path, sizeof path, "%s", write_tmp("p.jsonl", "{\"id\": 1, \"prompt\": \"a\", \"reference\": \"b\"}\n\n"
                                                         "{\"prompt\": \"c\", \"reference\": [\"d\", \"e\"]}\n"));
  assert_int_equal(cb_eval_dataset_spec(path, spec, sizeof spec, &items, &err), CB_OK);
  snprintf(want, sizeof want, "jsonl:%s", path);
  assert_string_equal(spec, want);
  assert_int_equal(items, 2);
  snprintf(path, sizeof path, "%s",
           write_tmp("m.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}], \"reference\": \"b\"}\n"));
  assert_int_equal(cb_eval_dataset_spec(path, spec, sizeof spec, &items, &err), CB_OK);
  snprintf(want, sizeof want, "chat:%s", path);
  assert_string_equal(spec, want);
  snprintf(want, sizeof want, "jsonl:%s", path); /* a jsonl: spec of chat items */
  assert_int_not_equal(cb_eval_dataset_spec(want, spec, sizeof spec, &items, &err), CB_OK);
  assert_non_null(strstr(err.msg, "m.jsonl:1: field 'messages'"));

  expect_spec_error("noref.jsonl", "{\"prompt\": \"a\", \"reference\": \"b\"}\n{\"prompt\": \"c\"}\n",
                    "noref.jsonl:2: field 'reference': expected a string or a non-empty list");
  expect_spec_error("mixed.jsonl", "{\"prompt\": \"a\", \"reference\": \"b\"}\n"
                                   "{\"messages\": [], \"reference\": \"b\"}\n",
                    "mixed.jsonl:2: field 'messages': the items before it have 'prompt'");
  expect_spec_error("neither.jsonl", "{\"reference\": \"b\"}\n", "neither.jsonl:1: expected one of the fields 'prompt'");
  expect_spec_error("refnum.jsonl", "{\"prompt\": \"a\", \"reference\": 3}\n", "refnum.jsonl:1: field 'reference'");
  expect_spec_error("reflist.jsonl", "{\"prompt\": \"a\", \"reference\": [\"x\", 2]}\n", "reflist.jsonl:1: field 'reference'");
  expect_spec_error("id.jsonl", "{\"id\": [1], \"prompt\": \"a\", \"reference\": \"b\"}\n", "id.jsonl:1: field 'id'");
  expect_spec_error("prompt.jsonl", "{\"prompt\": 5, \"reference\": \"b\"}\n", "prompt.jsonl:1: field 'prompt': expected a string");
  expect_spec_error("array.jsonl", "[1, 2]\n", "array.jsonl:1: expected a JSON object");
  expect_spec_error("torn.jsonl", "{\"prompt\": \"a\", \"reference\": \"b\"}\n{\"prompt\": \n", "torn.jsonl:2:");
  expect_spec_error("empty.jsonl", "\n\n", "empty.jsonl: no items");
  assert_int_not_equal(cb_eval_dataset_spec("/nonexistent/x.jsonl", spec, sizeof spec, &items, &err), CB_OK);
}

/* eval.json in DIR with one item per pair of words (hypothesis, reference), BLEU's
 * statistics computed by the metric; ids "i<k>" unless id_shift moves them. */
static void write_eval(const char *dir, const char *const *hyps, const char *const *refs, size_t n,
                       const char *cls_odd, int id_shift) {
  const cb_eval_metric *m = cb_eval_metric_find("bleu");
  cb_eval_options opts = {0};
  void *st;
  cb_error err;
  assert_int_equal(m->create(&opts, &st, &err), CB_OK);
  size_t k = m->n_stats(st);
  double *row = cb_calloc(k, sizeof *row);
  json_t *items = json_array();
  for (size_t i = 0; i < n; i++) {
    cb_eval_text ref = {refs[i], strlen(refs[i])};
    cb_eval_segment seg = {{hyps[i], strlen(hyps[i])}, &ref, 1};
    memset(row, 0, k * sizeof *row);
    assert_int_equal(m->segment(st, &seg, row, &err), CB_OK);
    json_t *v = json_array();
    for (size_t j = 0; j < k; j++) json_array_append_new(v, json_real(row[j]));
    char id[16];
    snprintf(id, sizeof id, "i%zu", i + (size_t)id_shift);
    json_array_append_new(items, json_pack("{s:I, s:s, s:s, s:{s:o}}", "index", (json_int_t)i, "id", id,
                                           "class", cls_odd && i % 2 ? cls_odd : "default", "stats",
                                           "bleu", v));
  }
  m->destroy(st);
  cb_free(row);
  mkdir(dir, 0755);
  char path[600];
  snprintf(path, sizeof path, "%s/eval.json", dir);
  json_t *doc = json_pack("{s:o}", "items", items);
  assert_int_equal(json_dump_file(doc, path, 0), 0);
  json_decref(doc);
}

#define N_ITEMS 30

static void test_paired(void **state) {
  (void)state;
  static const char *const refs_words[] = {"the cat sat on the warm mat today",
                                           "a quick brown fox jumps over dogs",
                                           "rain falls softly on the old town"};
  const char *refs[N_ITEMS], *good[N_ITEMS], *bad[N_ITEMS];
  for (size_t i = 0; i < N_ITEMS; i++) {
    refs[i] = good[i] = refs_words[i % 3];
    bad[i] = i % 2 ? refs[i] : "seven blue under never orange tiny loud";
  }
  char base[512], same[512], worse[512], shifted[512];
  snprintf(base, sizeof base, "%s/base", tmpdir);
  snprintf(same, sizeof same, "%s/same", tmpdir);
  snprintf(worse, sizeof worse, "%s/worse", tmpdir);
  snprintf(shifted, sizeof shifted, "%s/shifted", tmpdir);
  write_eval(base, good, refs, N_ITEMS, NULL, 0);
  write_eval(same, good, refs, N_ITEMS, NULL, 0);
  write_eval(worse, bad, refs, N_ITEMS, "odd", 0);
  write_eval(shifted, good, refs, N_ITEMS, NULL, 1);
  cb_eval_run_pair r;
  cb_error err;
  /* The same answers: no change, never significant. */
  assert_int_equal(cb_eval_run_paired(base, same, "bleu", "", 1000, 0.9, 1, &r, &err), CB_OK);
  assert_int_equal(r.n, N_ITEMS);
  assert_true(r.baseline == r.current);
  assert_true(r.p_value == 1.0);
  assert_true(r.ci_low == 0 && r.ci_high == 0);
  /* Half the answers wrong: a significant drop, the interval below 0. */
  assert_int_equal(cb_eval_run_paired(base, worse, "bleu", "", 1000, 0.9, 1, &r, &err), CB_OK);
  assert_true(r.current < r.baseline - 10);
  assert_true(r.p_value < 0.01);
  assert_true(r.ci_high < 0);
  /* The other way round it is an improvement: not significant as a drop. */
  assert_int_equal(cb_eval_run_paired(worse, base, "bleu", "", 1000, 0.9, 1, &r, &err), CB_OK);
  assert_true(r.current > r.baseline + 10);
  assert_true(r.p_value > 0.5);
  /* A class: the odd items of `worse` are its own class and all right. */
  assert_int_equal(cb_eval_run_paired(base, worse, "bleu", "odd", 1000, 0.9, 1, &r, &err), CB_ERR_NOT_FOUND);
  assert_int_equal(cb_eval_run_paired(worse, worse, "bleu", "odd", 1000, 0.9, 1, &r, &err), CB_OK);
  assert_int_equal(r.n, N_ITEMS / 2);
  assert_true(r.current == 100.0 || r.current > 99.999);
  /* Items that do not pair. */
  assert_int_equal(cb_eval_run_paired(base, shifted, "bleu", "", 100, 0.9, 1, &r, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "request 0 is item 'i0'"));
  assert_non_null(strstr(err.msg, "not the same dataset"));
  /* Scored with other settings: no comparison. */
  char path[600];
  snprintf(path, sizeof path, "%s/eval.json", same);
  json_t *doc = json_load_file(path, 0, NULL);
  json_object_set_new(doc, "options", json_pack("{s:b}", "lowercase", 1));
  assert_int_equal(json_dump_file(doc, path, 0), 0);
  json_decref(doc);
  assert_int_equal(cb_eval_run_paired(base, same, "bleu", "", 100, 0.9, 1, &r, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "different metric options"));
  assert_int_equal(cb_eval_run_paired(same, same, "bleu", "", 100, 0.9, 1, &r, &err), CB_OK);
  /* A metric the runs were not scored with; a directory without eval.json. */
  assert_int_not_equal(cb_eval_run_paired(base, base, "chrf", "", 100, 0.9, 1, &r, &err), CB_OK);
  assert_non_null(strstr(err.msg, "stats.chrf"));
  assert_int_not_equal(cb_eval_run_paired(tmpdir, same, "bleu", "", 100, 0.9, 1, &r, &err), CB_OK);
  assert_non_null(strstr(err.msg, "eval.json"));
}

/* DIR/eval.json of a judge:strict run: item i graded grades[i] (NAN: no grade, null),
 * on the scale [1, top]. */
static void write_judged(const char *dir, const double *grades, size_t n, double top) {
  mkdir(dir, 0755);
  json_t *items = json_array();
  for (size_t i = 0; i < n; i++) {
    char id[24];
    snprintf(id, sizeof id, "i%zu", i);
    json_array_append_new(
        items, json_pack("{s:I, s:s, s:s, s:{s:o}}", "index", (json_int_t)i, "id", id, "class",
                         "default", "scores", "judge:strict",
                         isnan(grades[i]) ? json_null() : json_real(grades[i])));
  }
  char path[600];
  snprintf(path, sizeof path, "%s/eval.json", dir);
  json_t *doc = json_pack("{s:o, s:{s:{s:[f,f]}}}", "items", items, "metrics", "judge:strict",
                          "scale", 1.0, top);
  assert_int_equal(json_dump_file(doc, path, 0), 0);
  json_decref(doc);
}

/* A judge's mean grade is paired item by item: an item without a grade on either side
 * is left out; a drop on many items is significant, one item's (less another's rise)
 * is not. */
static void test_paired_judge(void **state) {
  (void)state;
  double base[12], low[12], dip[12], ten[12];
  for (size_t i = 0; i < 12; i++) {
    base[i] = 4 + (double)(i % 2); /* 4 5 4 5 ... */
    low[i] = base[i] - 2;
    dip[i] = base[i];
    ten[i] = base[i];
  }
  base[3] = NAN; /* no grade in the baseline: item 3 pairs with nothing */
  low[7] = NAN;  /* nor item 7, ungraded in the current run */
  dip[0] = 1;    /* one item 4 -> 1, another 4 -> 5 */
  dip[2] = 5;
  char b[512], l[512], d[512], t[512];
  snprintf(b, sizeof b, "%s/jbase", tmpdir);
  snprintf(l, sizeof l, "%s/jlow", tmpdir);
  snprintf(d, sizeof d, "%s/jdip", tmpdir);
  snprintf(t, sizeof t, "%s/jten", tmpdir);
  write_judged(b, base, 12, 5);
  write_judged(l, low, 12, 5);
  write_judged(d, dip, 12, 5);
  write_judged(t, ten, 12, 10);
  cb_eval_run_pair r;
  cb_error err;
  assert_int_equal(cb_eval_run_paired(b, l, "judge:strict", "", 1000, 0.95, 1, &r, &err), CB_OK);
  assert_int_equal(r.n, 10);
  /* items 0-11 but 3 and 7: 4 5 4 _ 4 5 4 _ 4 5 4 5 */
  assert_true(fabs(r.baseline - (44.0 / 10)) < 1e-12);
  assert_true(fabs(r.current - (24.0 / 10)) < 1e-12);
  assert_true(r.p_value < 0.01);
  assert_true(fabs(r.ci_low - (-2)) < 1e-12);
  assert_true(fabs(r.ci_high - (-2)) < 1e-12);
  assert_int_equal(cb_eval_run_paired(b, d, "judge:strict", "", 1000, 0.95, 1, &r, &err), CB_OK);
  assert_int_equal(r.n, 11);
  assert_true(fabs(r.baseline - r.current - (2.0 / 11)) < 1e-12);
  assert_true(r.p_value > 0.1);
  /* an improvement is no drop */
  assert_int_equal(cb_eval_run_paired(l, b, "judge:strict", "", 1000, 0.95, 1, &r, &err), CB_OK);
  assert_true(r.p_value > 0.5);
  /* grades on 1-5 and on 1-10 do not compare */
  assert_int_equal(cb_eval_run_paired(b, t, "judge:strict", "", 100, 0.95, 1, &r, &err),
                   CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "different scales"));
  /* a judge the runs did not have */
  assert_int_not_equal(cb_eval_run_paired(b, l, "judge:other", "", 100, 0.95, 1, &r, &err), CB_OK);
  assert_non_null(strstr(err.msg, "metrics.judge:other.scale"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_metrics),
      cmocka_unit_test(test_dataset_spec),
      cmocka_unit_test(test_paired),
      cmocka_unit_test(test_paired_judge),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
