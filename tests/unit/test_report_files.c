/*
 * test_report_files.c - reports over the JSON results of calibrate, gate and history:
 * every committed result (tests/data/report/json/) loads as its kind and renders in
 * every format with no NaN and every chart drawn; files mix with result directories;
 * a JSON that is none of them, malformed, of a newer schema or with a main member of
 * the wrong type is an error naming the file and the field; text from the files stays
 * text; history's Tukey fences flag the run outside them.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/report.h"
#include "report/report_internal.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *data_dir(void) {
  const char *d = getenv("CB_DATA_DIR");
  return d ? d : "tests/data";
}

/* A temporary file holding `text`; the caller unlinks and frees the path. */
static char *temp_json(const char *text) {
  char tmpl[] = "/tmp/cb_report_file_XXXXXX";
  int fd = mkstemp(tmpl);
  assert_true(fd >= 0);
  size_t n = strlen(text);
  assert_int_equal(write(fd, text, n), (ssize_t)n);
  close(fd);
  return cb_strdup(tmpl);
}

static void drop(char *path) {
  unlink(path);
  cb_free(path);
}

static void no_non_numbers(const char *what, const char *text) {
  static const char *const bad[] = {"nan", "NaN", "inf", "Infinity"};
  for (size_t i = 0; i < ARRAY_LEN(bad); i++)
    for (const char *p = strstr(text, bad[i]); p; p = strstr(p + 1, bad[i])) {
      size_t n = strlen(bad[i]);
      int before = p == text || !((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z');
      int after = !((p[n] | 32) >= 'a' && (p[n] | 32) <= 'z');
      if (before && after) fail_msg("%s: the output says '%s' near \"%.60s\"", what, bad[i], p);
    }
}

/* Open `paths` and render every format; returns text, Markdown and HTML (caller frees). */
typedef struct rendered {
  char *text, *md, *html;
} rendered;

static rendered render(const char *what, const char *const *paths, size_t n) {
  cb_report *r = NULL;
  cb_error err;
  cb_error_clear(&err);
  if (cb_report_open(paths, n, NULL, &r, &err) != CB_OK) fail_msg("%s: open: %s", what, err.msg);
  rendered out;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_text(r, &b);
  out.text = b.data;
  cb_buf_init(&b, 0);
  cb_report_write_markdown(r, &b);
  out.md = b.data;
  cb_buf_init(&b, 0);
  cb_report_write_html(r, &b);
  out.html = b.data;
  cb_buf_init(&b, 0);
  cb_report_write_summary_csv(r, &b);
  cb_buf_free(&b);
  cb_report_free(r);
  no_non_numbers(what, out.text);
  no_non_numbers(what, out.md);
  no_non_numbers(what, out.html);
  return out;
}

static void rendered_free(rendered *o) {
  cb_free(o->text);
  cb_free(o->md);
  cb_free(o->html);
}

/* The number of charts with points whose data-chart starts with `prefix`. */
static int drawn(const char *html, const char *prefix) {
  char want[64];
  snprintf(want, sizeof want, "data-chart=\"%s-", prefix);
  int n = 0;
  for (const char *p = strstr(html, want); p; p = strstr(p + 1, want)) {
    const char *pts = strstr(p, "data-points=\"");
    if (pts && strtol(pts + 13, NULL, 10) > 0) n++;
  }
  return n;
}

static void test_fixtures(void **state) {
  (void)state;
  static const struct {
    const char *name;
    cb__rep_file_kind kind;
    const char *section, *chart;
  } files[] = {
      {"drift", CB__REP_FILE_DRIFT, "## Calibration", "drift"},
      {"expect", CB__REP_FILE_EXPECT, "## Calibration", NULL},
      {"cost", CB__REP_FILE_COST, "## Calibration", "cost"},
      {"roofline", CB__REP_FILE_ROOFLINE, "## Calibration", NULL},
      {"fit", CB__REP_FILE_FIT, "## Calibration", NULL},
      {"perf", CB__REP_FILE_PERF, "## Calibration", NULL},
      {"sla", CB__REP_FILE_SLA, "## Calibration", "sla"},
      {"gate", CB__REP_FILE_GATE, "## Gate verdict", NULL},
      {"history", CB__REP_FILE_HISTORY, "## History", "history"},
  };
  for (size_t i = 0; i < ARRAY_LEN(files); i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/report/json/%s.json", data_dir(), files[i].name);
    cb__rep_file f;
    cb_error err;
    if (cb__rep_file_load(path, &f, &err) != CB_OK) fail_msg("%s: %s", path, err.msg);
    if (f.kind != files[i].kind) fail_msg("%s: kind %d, want %d", path, f.kind, files[i].kind);
    cb__rep_file_free(&f);
    const char *paths[] = {path};
    rendered o = render(files[i].name, paths, 1);
    if (!strstr(o.md, files[i].section)) fail_msg("%s: no section %s:\n%s", path, files[i].section, o.md);
    /* a report of files alone has no run sections (no empty distributions) */
    if (strstr(o.html, "id=\"latency\"") || strstr(o.md, "## Headline"))
      fail_msg("%s: run sections in a report of a JSON file", path);
    if (files[i].chart && !drawn(o.html, files[i].chart))
      fail_msg("%s: no %s chart with points", path, files[i].chart);
    rendered_free(&o);
  }
}

static void test_mixed_with_a_run(void **state) {
  (void)state;
  char run[1024], gate[1024], hist[1024];
  snprintf(run, sizeof run, "%s/report/run", data_dir());
  snprintf(gate, sizeof gate, "%s/report/json/gate.json", data_dir());
  snprintf(hist, sizeof hist, "%s/report/json/history.json", data_dir());
  const char *paths[] = {gate, run, hist};
  rendered o = render("run + gate + history", paths, 3);
  const char *order[] = {"## Gate verdict", "## Headline", "## Latency distributions", "## History"};
  const char *at = o.md;
  for (size_t i = 0; i < ARRAY_LEN(order); i++) {
    const char *p = strstr(at, order[i]);
    if (!p) fail_msg("no '%s' after the previous sections:\n%s", order[i], o.md);
    at = p;
  }
  if (!strstr(o.md, "(gate verdict)") || !strstr(o.md, "(history)")) fail_msg("the files are not listed:\n%.400s", o.md);
  if (!strstr(o.md, "🔴 blocked") && !strstr(o.md, "Blocked")) fail_msg("the blocked gate does not say so");
  rendered_free(&o);
}

static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"{\"schema_version\": 1, \"kind\": \"calibrate.nonsense\"}", "\"kind\": \"calibrate.nonsense\" is not a result"},
      {"{\"kind\": 7}", "\"kind\": expected a string"},
      {"{\"hello\": 1}", "\"kind\": missing"},
      {"{\"schema_version\": 1, \"kind\": \"calibrate.drift\",\n \"labels\": [\n", ":3:"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"schema_version\": 1, \"kind\": \"calibrate.drift\", \"labels\": {}}", "\"labels\": expected an array"},
      {"{\"schema_version\": 2, \"kind\": \"calibrate.drift\", \"labels\": []}", "\"schema_version\": this calibench reads version 1"},
      {"{\"verdicts\": 3, \"traceability\": {}}", "\"verdicts\": expected an array"},
      {"{\"metrics\": {}, \"runs\": []}", "\"metrics\": expected an array"},
  };
  for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
    char *path = temp_json(bad[i].text);
    const char *paths[] = {path};
    cb_report *r = (cb_report *)1;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(cb_report_open(paths, 1, NULL, &r, &err), CB_ERR_PARSE);
    assert_null(r);
    if (!strstr(err.msg, path) || !strstr(err.msg, bad[i].want))
      fail_msg("%s: the error lacks the file or '%s': %s", bad[i].text, bad[i].want, err.msg);
    drop(path);
  }
}

static void test_payloads_stay_text(void **state) {
  (void)state;
  char *gate = temp_json(
      "{\"schema_version\":1,\"status\":\"blocked\",\"verdicts\":[{\"rule\":\"<script>alert(1)</script>\","
      "\"metric\":\"ttft.p99\",\"unit\":\"ms\",\"action\":\"block\",\"status\":\"fail\",\"baseline\":1,"
      "\"current\":2,\"change\":1,\"change_rel\":1,\"note\":\"\\\"><img src=x onerror=alert(2)>\"}],"
      "\"traceability\":{\"stages\":[{\"name\":\"prod\",\"owner\":\"<b>owner</b>\",\"action\":\"block\","
      "\"requires\":[\"<script>alert(1)</script>\"]}],\"items\":[{\"rule\":\"<script>alert(1)</script>\","
      "\"required_by\":[\"prod\"],\"status\":\"fail\"}]}}");
  char *hist = temp_json(
      "{\"class\":\"\",\"metrics\":[{\"name\":\"ttft.p99\",\"unit\":\"ms\"}],\"runs\":["
      "{\"run_id\":\"a\",\"tags\":{\"commit\":\"\\\"><img src=x onerror=alert(3)>\"},\"values\":{\"ttft.p99\":5}},"
      "{\"run_id\":\"b\",\"tags\":{\"commit\":\"\\u001b[31mred\"},\"values\":{\"ttft.p99\":6}}]}");
  const char *paths[] = {gate, hist};
  rendered o = render("payloads", paths, 2);
  if (strstr(o.html, "<script>alert") || strstr(o.html, "<img src") || strstr(o.html, "<b>owner"))
    fail_msg("a payload is markup in HTML");
  if (!strstr(o.html, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strstr(o.html, "&quot;&gt;&lt;img src=x onerror=alert(3)&gt;"))
    fail_msg("a payload is not shown escaped in HTML");
  if (strstr(o.md, "<script>") || strstr(o.md, "<img") || !strstr(o.md, "&lt;script&gt;alert(1)&lt;/script&gt;"))
    fail_msg("a payload is markup in Markdown");
  if (strchr(o.text, '\x1b') || !strstr(o.text, "<script>alert(1)</script>"))
    fail_msg("terminal: an escape sequence passed, or the text is not shown");
  rendered_free(&o);
  drop(gate);
  drop(hist);
}

/* ttft.p99 of 10, 11, 12, 13, 100 ms: Q1 11, Q3 13, high fence 16; the fifth is out,
 * and worse (lower is better). */
static void test_history_fences(void **state) {
  (void)state;
  char *hist = temp_json(
      "{\"class\":\"\",\"metrics\":[{\"name\":\"ttft.p99\",\"unit\":\"ms\"}],\"runs\":["
      "{\"run_id\":\"r1\",\"tags\":{\"commit\":\"c1\"},\"values\":{\"ttft.p99\":10}},"
      "{\"run_id\":\"r2\",\"tags\":{\"commit\":\"c2\"},\"values\":{\"ttft.p99\":11}},"
      "{\"run_id\":\"r3\",\"tags\":{\"version\":\"v3\"},\"values\":{\"ttft.p99\":12}},"
      "{\"run_id\":\"r4\",\"tags\":{},\"values\":{\"ttft.p99\":null}},"
      "{\"run_id\":\"r5\",\"tags\":{},\"values\":{\"ttft.p99\":13}},"
      "{\"run_id\":\"r6\",\"tags\":{\"commit\":\"c6\"},\"values\":{\"ttft.p99\":100}}]}");
  const char *paths[] = {hist};
  rendered o = render("history", paths, 1);
  if (!strstr(o.md, "fences \\[8 ms, 16 ms\\]") || !strstr(o.md, "Outside: #6 c6 (above)"))
    fail_msg("fences:\n%s", o.md);
  if (!strstr(o.md, "🔴 100 ms (above)")) fail_msg("the run above the fences is not marked worse:\n%s", o.md);
  /* categories: commit, else version, else run id; the run outside drawn apart */
  if (!strstr(o.html, ">c1</text>") || !strstr(o.html, ">v3</text>") || !strstr(o.html, ">r5</text>") ||
      !strstr(o.html, "outside the fences") || !strstr(o.html, "Q3 + 1.5 IQR = 16 ms"))
    fail_msg("history chart: labels, outliers or fences missing");
  rendered_free(&o);
  drop(hist);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures),          cmocka_unit_test(test_mixed_with_a_run),
      cmocka_unit_test(test_errors),            cmocka_unit_test(test_payloads_stay_text),
      cmocka_unit_test(test_history_fences),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
