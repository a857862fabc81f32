/*
 * test_report_render.c - whole reports from result directories: runs with nothing in
 * them, every request failed, one request, only warm-up, a success with no content
 * render in every format with no NaN, infinity or empty axis; text from a server
 * (outputs, error messages, class names, ids) never becomes markup, formatting, an
 * escape sequence or a formula; the sample requests are the first sent, the median
 * and the slowest, their output cut; colour only when asked; loading errors name the file;
 * statistics agree with the run's own summary.json; the committed fixtures load; probe
 * parts drawn from a probe.json made here (probe perturb's family charts; a hand-edited
 * probe.json with members missing or of the wrong type renders, never crashes).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/report.h"
#include "report/report_internal.h"
#include "test_file.h"
#include "test_text.h"

#define MS 1000000ull
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const char *data_dir(void) {
  const char *d = getenv("CB_DATA_DIR");
  return d ? d : "tests/data";
}

/* ---- result directories made here ------------------------------------------------------ */

/* Writes `text` to DIR/NAME. */
static void write_in(const char *dir, const char *name, const char *text) {
  char path[1024];
  assert_true((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path);
  write_file(path, text);
}

static char *make_dir(void) {
  char tmpl[] = "/tmp/cb_report_XXXXXX";
  char *d = mkdtemp(tmpl);
  assert_non_null(d);
  return cb_strdup(d);
}

static void remove_dir(char *dir) {
  static const char *const names[] = {"records.jsonl", "summary.json", "manifest.json", "sweep.json",
                                      "report.html",   "records.csv",  "summary.csv"};
  char path[1024];
  for (size_t i = 0; i < ARRAY_LEN(names); i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
  cb_free(dir);
}

static cb_record success(uint64_t index, uint64_t sent, size_t chunks, const char *text) {
  cb_record r;
  cb_record_init(&r);
  r.index = index;
  snprintf(r.request_id, sizeof r.request_id, "run-%llu", (unsigned long long)index);
  r.scheduled_ns = r.sent_ns = sent;
  r.n_chunks = chunks;
  r.chunk_ns = cb_calloc(chunks ? chunks : 1, sizeof *r.chunk_ns);
  r.chunk_tokens = cb_calloc(chunks ? chunks : 1, sizeof *r.chunk_tokens);
  for (size_t i = 0; i < chunks; i++) {
    r.chunk_ns[i] = sent + 20 * MS + i * 5 * MS;
    r.chunk_tokens[i] = 1;
  }
  r.first_byte_ns = r.first_chunk_ns = r.first_choices_ns = sent + 10 * MS;
  r.first_content_ns = chunks ? r.chunk_ns[0] : 0;
  r.last_content_ns = chunks ? r.chunk_ns[chunks - 1] : 0;
  r.end_ns = sent + 30 * MS + chunks * 5 * MS;
  r.prompt_tokens = 100;
  r.prompt_source = CB_TOKENS_USAGE;
  r.output_tokens = (int64_t)chunks;
  r.output_source = CB_TOKENS_USAGE;
  r.http_status = 200;
  snprintf(r.finish_reason, sizeof r.finish_reason, "stop");
  r.output_text = text ? cb_strdup(text) : NULL;
  return r;
}

static cb_record failure(uint64_t index, uint64_t sent, const char *message) {
  cb_record r;
  cb_record_init(&r);
  r.index = index;
  snprintf(r.request_id, sizeof r.request_id, "run-%llu", (unsigned long long)index);
  r.scheduled_ns = r.sent_ns = sent;
  r.end_ns = sent + 3 * MS;
  r.http_status = 500;
  snprintf(r.error_class, sizeof r.error_class, "http_status");
  snprintf(r.error_message, sizeof r.error_message, "%s", message);
  return r;
}

/* A record whose end comes before its send, and one whose chunks go backwards: left
 * out of every distribution the report draws, as the summary leaves them out. */
static void test_values_skip_impossible_times(void **state) {
  (void)state;
  cb_record_set set;
  cb_record_set_init(&set);
  cb_record r = success(0, 1000 * MS, 4, NULL);
  cb_record_set_push(&set, &r);
  r = success(1, 2000 * MS, 4, NULL);
  r.end_ns = r.sent_ns - 5;
  cb_record_set_push(&set, &r);
  r = success(2, 3000 * MS, 4, NULL);
  r.chunk_ns[3] = r.chunk_ns[2] - 31;
  cb_record_set_push(&set, &r);
  int which[] = {CB__REP_TTFT, CB__REP_E2E, CB__REP_ITL};
  size_t want[] = {1, 1, 3};
  for (size_t k = 0; k < 3; k++) {
    cb__rep_values v;
    cb__rep_values_of(&set, NULL, which[k], &v);
    uint64_t n = cb__rep_values_total(&v); /* ITL: counts of histogram entries */
    if (n != want[k]) fail_msg("values %d: %llu, want %zu", which[k], (unsigned long long)n, want[k]);
    for (size_t i = 0; i < v.n; i++)
      if (!(v.v[i] >= 0 && v.v[i] < 1000)) fail_msg("values %d: %g ms", which[k], v.v[i]);
    cb__rep_values_free(&v);
  }
  cb_record_set_free(&set);
}

/* Write records (consumed) to DIR/records.jsonl. */
static void write_records(const char *dir, cb_record *recs, size_t n) {
  cb_buf b;
  cb_buf_init(&b, 0);
  for (size_t i = 0; i < n; i++) {
    cb_record_write_json(&recs[i], &b);
    cb_buf_append_char(&b, '\n');
    cb_record_free(&recs[i]);
  }
  write_in(dir, "records.jsonl", b.data ? b.data : "");
  cb_buf_free(&b);
}

static const char SUMMARY_TTFT_SLO[] =
    "{\"schema_version\":1,\"summary\":{\"interrupted\":false,\"requested_rate\":null,"
    "\"slos\":[{\"metric\":\"ttft\",\"bound_ms\":100,\"percentile\":99,\"confidence\":0.95}],"
    "\"client\":{\"lag_warning_ms\":1,\"cpu_s\":0.1}}}\n";

/* ---- rendering checks ------------------------------------------------------------------------ */

static void no_non_numbers(const char *what, const char *text) {
  static const char *const bad[] = {"nan", "NaN", "inf", "Infinity", "-nan"};
  for (size_t i = 0; i < ARRAY_LEN(bad); i++)
    if (contains_word(text, bad[i])) {
      const char *at = strstr(text, bad[i]);
      fail_msg("%s: the output says '%s' near \"%.80s\"", what, bad[i], at > text + 40 ? at - 40 : text);
    }
}

/* Every format of the report over `dir`; returns the HTML (caller frees). */
static char *render_all(const char *what, const char *dir, int color, cb_report **keep) {
  cb_report_params p;
  cb_report_default_params(&p);
  p.color = color;
  cb_report *r = NULL;
  cb_error err;
  cb_error_clear(&err);
  const char *dirs[] = {dir};
  if (cb_report_open(dirs, 1, &p, &r, &err) != CB_OK) fail_msg("%s: open: %s", what, err.msg);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_text(r, &b);
  no_non_numbers(what, b.data);
  cb_buf_reset(&b);
  cb_report_write_markdown(r, &b);
  no_non_numbers(what, b.data);
  cb_buf_reset(&b);
  cb_report_write_records_csv(r, &b);
  cb_report_write_summary_csv(r, &b);
  no_non_numbers(what, b.data);
  cb_buf_reset(&b);
  cb_report_write_html(r, &b);
  no_non_numbers(what, b.data);
  if (b.len < 7 || strcmp(b.data + b.len - 8, "</html>\n"))
    fail_msg("%s: the HTML does not end with </html>", what);
  if (keep) *keep = r;
  else cb_report_free(r);
  return b.data;
}

/* Each chart has points, or says why not; none has a series without a path. */
static void charts_drawn_or_explained(const char *what, const char *html) {
  for (const char *p = strstr(html, "<figure class=\"chart\""); p; p = strstr(p + 1, "<figure class=\"chart\"")) {
    const char *end = strstr(p, "</figure>");
    assert_non_null(end);
    const char *pts = strstr(p, "data-points=\"");
    assert_non_null(pts);
    long n = strtol(pts + 13, NULL, 10);
    int has_series = strstr(p, "class=\"series") && strstr(p, "class=\"series") < end;
    int has_empty = strstr(p, "class=\"empty\"") && strstr(p, "class=\"empty\"") < end;
    if (n > 0 && !has_series) fail_msg("%s: a chart with %ld points draws no series", what, n);
    if (n == 0 && !has_empty) fail_msg("%s: an empty chart does not say so", what);
    if (strstr(p, "d=\"\"") && strstr(p, "d=\"\"") < end) fail_msg("%s: a chart has an empty path", what);
  }
}

static void test_degenerate_runs(void **state) {
  (void)state;
  struct {
    const char *name;
    int summary;
    size_t n;
  } cases[] = {{"no records", 0, 0}, {"all failed", 1, 5}, {"one request", 1, 1},
               {"warm-up only", 1, 3}, {"success without content", 1, 2}};
  for (size_t k = 0; k < ARRAY_LEN(cases); k++) {
    char *dir = make_dir();
    cb_record recs[8];
    size_t n = cases[k].n;
    for (size_t i = 0; i < n; i++) {
      uint64_t sent = 1000 + i * 7 * MS;
      if (k == 1) recs[i] = failure(i, sent, "HTTP 500: boom");
      else if (k == 4) recs[i] = success(i, sent, 0, "");
      else recs[i] = success(i, sent, 4, "hello");
      if (k == 3) recs[i].warmup = 1;
    }
    write_records(dir, recs, n);
    if (cases[k].summary) write_in(dir, "summary.json", SUMMARY_TTFT_SLO);
    cb_report *r = NULL;
    char *html = render_all(cases[k].name, dir, 0, &r);
    charts_drawn_or_explained(cases[k].name, html);
    if (k == 0 && !cb_report_note(r, 0)) fail_msg("no records: no note that the summary is missing");
    if (k == 1 && !strstr(html, "every measured request failed"))
      fail_msg("all failed: the report does not say so");
    if (k == 3 && !strstr(html, "measured nothing")) fail_msg("warm-up only: the report does not say so");
    cb_free(html);
    cb_report_free(r);
    remove_dir(dir);
  }
}

static void test_untrusted_text_stays_text(void **state) {
  (void)state;
  static const char payload[] =
      "<script>alert(1)</script>\n\"><img src=x onerror=alert(1)>\n</pre><svg onload=alert(6)>"
      "[link](javascript:alert(4)) | a | *b* \x1b[31mred\x1b]0;t\x07";
  char *dir = make_dir();
  cb_record recs[3];
  recs[0] = success(0, 1000, 3, payload);
  snprintf(recs[0].class_name, sizeof recs[0].class_name, "<script>alert('c')</script>");
  snprintf(recs[0].server_request_id, sizeof recs[0].server_request_id, "\"><img src=x onerror=alert(2)>");
  recs[1] = failure(1, 2000, "=HYPERLINK(\"http://198.51.100.1\") <img src=x onerror=alert(3)> \x1b[2J");
  snprintf(recs[1].class_name, sizeof recs[1].class_name, "\"><b>c2</b>");
  recs[2] = success(2, 3000, 5, payload);
  snprintf(recs[2].class_name, sizeof recs[2].class_name, "<script>alert('c')</script>");
  write_records(dir, recs, 3);
  write_in(dir, "manifest.json",
             "{\"schema_version\":1,\"model\":\"<script>alert('model')</script>\",\"origin_mono_ns\":1,"
             "\"config\":{\"label\":\"<img src=x onerror=alert(9)>\"},"
             "\"server\":{\"url\":\"http://x/<script>\",\"models\":{\"data\":[{\"id\":\"</pre><script>alert(5)</script>\"}]}},"
             "\"workload\":[\"seed=1\",\"<script>alert('wl')</script>\"]}\n");
  cb_report_params p;
  cb_report_default_params(&p);
  cb_report *r = NULL;
  cb_error err;
  const char *dirs[] = {dir};
  if (cb_report_open(dirs, 1, &p, &r, &err) != CB_OK) fail_msg("open: %s", err.msg);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_html(r, &b);
  static const char *const html_never[] = {"<script", "<img", "<svg onload", "<b>", "onerror=alert(1)>", "\x1b"};
  for (size_t i = 0; i < ARRAY_LEN(html_never); i++)
    if (strstr(b.data, html_never[i])) fail_msg("HTML holds '%s' unescaped:\n%s", html_never[i], strstr(b.data, html_never[i]));
  if (!strstr(b.data, "&lt;script&gt;alert(1)&lt;/script&gt;")) fail_msg("HTML lost the output text");
  if (!strstr(b.data, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;")) fail_msg("HTML lost the img payload");
  cb_buf_reset(&b);
  cb_report_write_markdown(r, &b);
  static const char *const md_never[] = {"<script", "<img", "<b>", "\x1b", "| a |"};
  for (size_t i = 0; i < ARRAY_LEN(md_never); i++)
    if (strstr(b.data, md_never[i])) fail_msg("Markdown holds '%s' unescaped:\n%s", md_never[i], b.data);
  cb_buf_reset(&b);
  cb_report_write_text(r, &b);
  if (strchr(b.data, 0x1b) || strchr(b.data, 0x07)) fail_msg("terminal text holds a control character:\n%s", b.data);
  cb_buf_reset(&b);
  cb_report_write_records_csv(r, &b);
  if (!strstr(b.data, "\"'=HYPERLINK(\"\"http://198.51.100.1\"\")")) fail_msg("CSV formula not neutralised:\n%s", b.data);
  if (strchr(b.data, 0x1b)) fail_msg("CSV holds an escape character");
  cb_buf_free(&b);
  cb_report_free(r);
  remove_dir(dir);
}

/* The first request sent, the success with the median E2E and the slowest, whatever
 * their order in the file; the output cut on a code point, the prompt described. */
static void test_sample_requests(void **state) {
  (void)state;
  char long_text[1000];
  memset(long_text, 'a', sizeof long_text);
  memcpy(long_text + 598, "\xc3\xa9", 2); /* 'é' across the cut at 599 bytes */
  memcpy(long_text + sizeof long_text - 5, "TAIL", 5);
  char *dir = make_dir();
  /* E2E grows with chunks: index 4 (1 chunk) is fastest, 1 (3) the median of five
   * successes, 3 (9) the slowest; index 2 is sent first; the failure is no candidate */
  cb_record recs[6] = {success(0, 50 * MS, 2, "zero"), success(1, 40 * MS, 3, "one"),
                       success(2, 10 * MS, 4, long_text), success(3, 30 * MS, 9, "three"),
                       success(4, 20 * MS, 1, "four"), failure(5, 60 * MS, "slow failure")};
  recs[5].end_ns = 900 * MS;
  write_records(dir, recs, 6);
  cb_report_params p;
  cb_report_default_params(&p);
  p.max_output_text = 599;
  cb_report *r = NULL;
  const char *dirs[] = {dir};
  assert_int_equal(cb_report_open(dirs, 1, &p, &r, NULL), CB_OK);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_report_write_html(r, &b);
  const char *samples = strstr(b.data, "<section id=\"samples\">");
  if (!samples) fail_msg("no Sample requests section");
  static const char *const want[] = {"First sent: request 2", "Median E2E: request 1", "Slowest E2E: request 3",
                                     "output text (first 598 of 999 bytes)", "100 tokens (from usage)"};
  for (size_t i = 0; i < ARRAY_LEN(want); i++)
    if (!strstr(samples, want[i])) fail_msg("the samples lack '%s':\n%.3000s", want[i], samples);
  if (strstr(samples, "TAIL") || strstr(samples, "\xc3<") || strstr(samples, "\xef\xbf\xbd"))
    fail_msg("the output is not cut before the code point at the limit");
  cb_buf_reset(&b);
  cb_report_write_markdown(r, &b);
  if (strstr(b.data, "First sent")) fail_msg("Markdown shows sample requests (HTML only)");
  cb_buf_free(&b);
  cb_report_free(r);
  remove_dir(dir);
}

static void test_color_only_when_asked(void **state) {
  (void)state;
  char *dir = make_dir();
  cb_record recs[2] = {success(0, 1000, 4, "a"), failure(1, 2000, "x")};
  write_records(dir, recs, 2);
  write_in(dir, "summary.json", SUMMARY_TTFT_SLO);
  for (int color = 0; color <= 1; color++) {
    cb_report_params p;
    cb_report_default_params(&p);
    p.color = color;
    cb_report *r = NULL;
    const char *dirs[] = {dir};
    assert_int_equal(cb_report_open(dirs, 1, &p, &r, NULL), CB_OK);
    cb_buf b;
    cb_buf_init(&b, 0);
    cb_report_write_text(r, &b);
    int has = strstr(b.data, "\x1b[") != NULL;
    if (has != color) fail_msg("color %d: escape sequences %s", color, has ? "present" : "absent");
    cb_buf_reset(&b);
    cb_report_write_markdown(r, &b);
    if (strchr(b.data, 0x1b)) fail_msg("color %d: Markdown has escape sequences", color);
    cb_buf_free(&b);
    cb_report_free(r);
  }
  remove_dir(dir);
}

static void test_load_errors(void **state) {
  (void)state;
  cb_report *r = (cb_report *)1;
  cb_error err;
  const char *missing[] = {"/nonexistent/cb-report-dir"};
  assert_int_equal(cb_report_open(missing, 1, NULL, &r, &err), CB_ERR_NOT_FOUND);
  assert_null(r);
  if (!strstr(err.msg, "/nonexistent/cb-report-dir")) fail_msg("error does not name the directory: %s", err.msg);

  char *dir = make_dir();
  cb_record recs[1] = {success(0, 1000, 2, "a")};
  write_records(dir, recs, 1);
  write_in(dir, "summary.json", "{\"schema_version\": 1,\n \"summary\": {\"slos\": [}\n");
  const char *dirs[] = {dir};
  assert_int_equal(cb_report_open(dirs, 1, NULL, &r, &err), CB_ERR_PARSE);
  if (!strstr(err.msg, "summary.json:2")) fail_msg("error does not name file and line: %s", err.msg);
  write_in(dir, "summary.json", "{\"summary\": {\"slos\": [{\"metric\": \"speed\", \"bound_ms\": 5}]}}\n");
  assert_int_equal(cb_report_open(dirs, 1, NULL, &r, &err), CB_ERR_PARSE);
  if (!strstr(err.msg, "summary.slos[0]")) fail_msg("error does not name the field: %s", err.msg);
  write_in(dir, "summary.json", SUMMARY_TTFT_SLO);
  write_in(dir, "records.jsonl", "{\"index\": 0, \"sent_ns\": 1}\n{\"index\": \"x\", \"sent_ns\": 2}\n");
  assert_int_equal(cb_report_open(dirs, 1, NULL, &r, &err), CB_ERR_PARSE);
  if (!strstr(err.msg, "records.jsonl:2")) fail_msg("error does not name the record's line: %s", err.msg);
  remove_dir(dir);

  /* a sweep whose second point is gone: a note, not an error; none left: an error */
  char *sw = make_dir();
  char pts[1100], p0[1200];
  snprintf(pts, sizeof pts, "%s/points", sw);
  mkdir(pts, 0777);
  snprintf(p0, sizeof p0, "%s/00-concurrency=1", pts);
  mkdir(p0, 0777);
  cb_record one[1] = {success(0, 1000, 2, "a")};
  write_records(p0, one, 1);
  write_in(sw, "sweep.json",
             "{\"sweep\":\"concurrency\",\"slo_attainment\":0.99,\"points\":["
             "{\"label\":\"concurrency=1\",\"dir\":\"/elsewhere/points/00-concurrency=1\",\"load\":{\"kind\":\"concurrency\",\"value\":1}},"
             "{\"label\":\"concurrency=2\",\"dir\":\"/elsewhere/points/01-concurrency=2\",\"load\":{\"kind\":\"concurrency\",\"value\":2}}],"
             "\"capacity_at_slo\":null}\n");
  const char *sdirs[] = {sw};
  assert_int_equal(cb_report_open(sdirs, 1, NULL, &r, &err), CB_OK);
  int noted = 0;
  for (size_t i = 0; cb_report_note(r, i); i++) noted |= strstr(cb_report_note(r, i), "concurrency=2") != NULL;
  if (r->inputs[0].n_runs != 1 || !noted)
    fail_msg("sweep with a missing point: %zu points, %s note about it", r->inputs[0].n_runs, noted ? "a" : "no");
  char *html = render_all("sweep with one point", sw, 0, NULL);
  cb_free(html);
  cb_report_free(r);
  write_in(sw, "sweep.json", "{\"points\":[{\"label\":\"x\",\"dir\":\"/nowhere/x\"}]}\n");
  assert_int_equal(cb_report_open(sdirs, 1, NULL, &r, &err), CB_ERR_NOT_FOUND);
  char path[1300];
  snprintf(path, sizeof path, "%s/records.jsonl", p0);
  unlink(path);
  rmdir(p0);
  rmdir(pts);
  remove_dir(sw);
}

/* The report's statistics are the run's own: same records, same SLOs, same code. */
static void test_agrees_with_summary_json(void **state) {
  (void)state;
  char dir[1024], path[1100];
  snprintf(dir, sizeof dir, "%s/report/run", data_dir());
  snprintf(path, sizeof path, "%s/summary.json", dir);
  json_error_t je;
  json_t *sj = json_load_file(path, 0, &je);
  if (!sj) fail_msg("%s: %s", path, je.text);
  const json_t *s = json_object_get(sj, "summary");
  cb_report *r = NULL;
  cb_error err;
  const char *dirs[] = {dir};
  if (cb_report_open(dirs, 1, NULL, &r, &err) != CB_OK) fail_msg("%s", err.msg);
  const cb_summary *a = &r->inputs[0].runs[0].all;
  struct {
    const char *key;
    double got;
  } nums[] = {
      {"measured", (double)a->measured},
      {"warmup", (double)a->warmup},
      {"window.seconds", a->window_s},
      {"throughput.requests_per_s", a->request_throughput},
      {"throughput.goodput_requests_per_s", a->goodput},
      {"throughput.output_tokens_per_s", a->output_throughput},
      {"joint_attainment", a->joint_attainment},
      {"metrics.ttft.p99_ms", a->metrics[CB_METRIC_TTFT].p99 / 1e6},
      {"metrics.tpot.p50_ms", a->metrics[CB_METRIC_TPOT].p50 / 1e6},
      {"metrics.itl.p99_ms", a->metrics[CB_METRIC_ITL].p99 / 1e6},
      {"metrics.e2e.max_ms", a->metrics[CB_METRIC_E2E].max / 1e6},
  };
  for (size_t i = 0; i < ARRAY_LEN(nums); i++) {
    double want = cb__rep_json_num(s, nums[i].key);
    if (!(fabs(nums[i].got - want) <= 1e-8 * fabs(want) + 1e-9))
      fail_msg("%s: report %.12g, summary.json %.12g", nums[i].key, nums[i].got, want);
  }
  const json_t *slos = json_object_get(s, "slos");
  if (json_array_size(slos) != a->n_slos) fail_msg("%zu SLOs, summary.json has %zu", a->n_slos, json_array_size(slos));
  for (size_t k = 0; k < a->n_slos; k++) {
    cb__rep_tone tone;
    const char *want = json_string_value(json_object_get(json_array_get(slos, k), "verdict"));
    const char *got = cb__rep_verdict_word(a->slos[k].verdict, &tone);
    if (!want || strcmp(got, want)) fail_msg("SLO %zu: verdict %s, summary.json %s", k, got, want ? want : "?");
  }
  json_decref(sj);
  cb_report_free(r);
}

static void test_fixtures_load(void **state) {
  (void)state;
  static const char *const names[] = {"run", "sweep", "scenario", "interrupted", "failed", "single", "xss"};
  for (size_t i = 0; i < ARRAY_LEN(names); i++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/report/%s", data_dir(), names[i]);
    cb_report *r = NULL;
    char *html = render_all(names[i], dir, 1, &r);
    charts_drawn_or_explained(names[i], html);
    const cb__rep_input *in = &r->inputs[0];
    if (!strcmp(names[i], "sweep") && (in->kind != CB__REP_INPUT_SWEEP || in->n_runs != 5 || in->capacity < 0))
      fail_msg("sweep: kind %d, %zu points, capacity %ld", in->kind, in->n_runs, in->capacity);
    if (!strcmp(names[i], "interrupted") && !in->runs[0].all.interrupted) fail_msg("interrupted: not marked");
    if (!strcmp(names[i], "scenario") && (in->runs[0].n_classes != 2 || !in->interference))
      fail_msg("scenario: %zu classes, interference %p", in->runs[0].n_classes, (void *)in->interference);
    cb_free(html);
    cb_report_free(r);
  }
}

/* ---- probe parts from a probe.json made here ---------------------------------------------- */

typedef void (*probe_part)(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc);

/* PART of the probe section for the JSON text DOC, in FMT (owned text). */
static char *render_probe(probe_part part, const char *doc_text, cb__rep_fmt fmt) {
  json_error_t e;
  json_t *doc = json_loads(doc_text, 0, &e);
  if (!doc) fail_msg("probe.json made here: %s (line %d)", e.text, e.line);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb__rep_doc d = {.fmt = fmt, .out = &out};
  part(NULL, &d, NULL, doc);
  json_decref(doc);
  return out.data ? out.data : cb_strdup("");
}

/* The figure whose data-chart starts with PREFIX, as a string of its own (owned). */
static char *figure(const char *html, const char *prefix) {
  char at[96];
  snprintf(at, sizeof at, "data-chart=\"%s-", prefix);
  const char *b = strstr(html, at), *e = b ? strstr(b, "</figure>") : NULL;
  if (!e) fail_msg("no figure %s in:\n%s", prefix, html);
  char *f = cb_calloc((size_t)(e - b) + 1, 1);
  memcpy(f, b, (size_t)(e - b));
  return f;
}

static size_t count_of(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* probe perturb: each chart has the families as x categories in the file's order (names
 * escaped), a point per family value with its interval as a segment, one legend key per
 * kind of point; a value without interval is a point alone, a missing value no point. */
static void test_probe_perturb_charts(void **state) {
  (void)state;
  char *html = render_probe(cb__rep_probe_perturb,
      "{\"families\": {"
      " \"typo\": {\"pairs\": 4, \"drift\": {\"mean\": 0.2, \"lo\": 0.1, \"hi\": 0.3},"
      "  \"refusal\": {\"rate\": 0.5, \"lo\": 0.2, \"hi\": 0.8}, \"conflict\": {\"rate\": null, \"n\": 0}},"
      " \"<b>noise</b>\": {\"pairs\": 4, \"drift\": {\"mean\": 0.4},"
      "  \"refusal\": {\"rate\": 0.25, \"lo\": 0.05, \"hi\": 0.6},"
      "  \"conflict\": {\"rate\": 1, \"lo\": 0.3, \"hi\": 1, \"k\": 1, \"n\": 1}}},"
      " \"settings\": {\"confidence\": 0.9}}",
      CB__REP_FMT_HTML);
  char *drift = figure(html, "probe-perturb-drift"), *rates = figure(html, "probe-perturb-rates");
  const char *typo = strstr(drift, ">typo</text>"), *noise = strstr(drift, ">&lt;b&gt;noise&lt;/b&gt;</text>");
  if (!typo || !noise || noise < typo || strstr(drift, "<b>"))
    fail_msg("the drift chart's x categories are not the families, in order, escaped:\n%s", drift);
  if (!strstr(rates, ">typo</text>") || !strstr(rates, ">&lt;b&gt;noise&lt;/b&gt;</text>"))
    fail_msg("the rates chart's x categories are not the families:\n%s", rates);
  /* drift: typo's point and segment (3 points), noise's point alone (1) */
  if (!strstr(drift, "data-points=\"4\"")) fail_msg("drift chart points:\n%s", drift);
  /* rates: typo's refusal (3), noise's refusal and conflict (3 + 3); typo has no conflict */
  if (!strstr(rates, "data-points=\"9\"")) fail_msg("rates chart points:\n%s", rates);
  if (count_of(drift, "</svg>mean drift</span>") != 1 || count_of(rates, "</svg>refusal rate</span>") != 1 ||
      count_of(rates, "</svg>conflict rate</span>") != 1 || count_of(rates, "class=\"key\"") != 2)
    fail_msg("one legend key per kind of point:\n%s\n%s", drift, rates);
  cb_free(drift);
  cb_free(rates);
  cb_free(html);
}

/* probe context: a length without "phase" (a hand-edited probe.json) is a row with "?"
 * and no bisection mark, in every format (it crashed the report before); the decay and
 * latency curves are drawn against the lengths on a log scale. */
static void test_probe_context_part(void **state) {
  (void)state;
  static const char doc[] =
      "{\"lengths\": [{\"length\": 1000, \"phase\": \"grid\", \"accuracy\": 1, \"lo\": 0.8, \"hi\": 1,"
      "   \"ttft_ms_p50\": 120, \"e2e_ms_p50\": 300},"
      " {\"length\": 1500, \"accuracy\": 0.5, \"lo\": 0.3, \"hi\": 0.7, \"ttft_ms_p50\": 150, \"e2e_ms_p50\": 330},"
      " {\"length\": 1250, \"phase\": \"bisect\", \"accuracy\": 0.75, \"lo\": 0.5, \"hi\": 0.9,"
      "   \"ttft_ms_p50\": 135, \"e2e_ms_p50\": 315}],"
      " \"tolerance\": 0.1, \"confidence\": 0.95, \"breakpoint_tokens\": 1250}";
  char *text = render_probe(cb__rep_probe_context, doc, CB__REP_FMT_TEXT);
  const char *row = strstr(text, "\n  1500 ");
  if (row) row += strspn(row + 7, " ") + 7; /* the phase column */
  if (!row || strncmp(row, "? ", 2) || strstr(text, "(null)"))
    fail_msg("a length without a phase is not shown with \"?\":\n%s", text);
  char *html = render_probe(cb__rep_probe_context, doc, CB__REP_FMT_HTML);
  char *decay = figure(html, "probe-decay");
  /* 3 accuracy points, 3 + 3 interval bounds, 1 bisection midpoint (1250, not 1500) */
  if (!strstr(decay, "data-points=\"10\"")) fail_msg("decay chart points:\n%s", decay);
  /* both curves against the tested lengths: prompt tokens on a log scale (1k, 2k) */
  char *latency = figure(html, "probe-latency");
  const char *const curves[] = {decay, latency};
  for (size_t i = 0; i < 2; i++)
    if (!strstr(curves[i], ">prompt tokens</text>") || !strstr(curves[i], ">1k</text>") ||
        !strstr(curves[i], ">2k</text>") || strstr(curves[i], ">1.2k</text>"))
      fail_msg("not against prompt tokens on a log scale:\n%s", curves[i]);
  if (!strstr(latency, "data-points=\"6\"") || !strstr(latency, ">latency (ms)</text>"))
    fail_msg("latency chart: TTFT and E2E per length in ms:\n%s", latency);
  cb_free(latency);
  cb_free(decay);
  cb_free(html);
  cb_free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_degenerate_runs),       cmocka_unit_test(test_untrusted_text_stays_text),
      cmocka_unit_test(test_sample_requests),       cmocka_unit_test(test_values_skip_impossible_times),
      cmocka_unit_test(test_color_only_when_asked), cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_agrees_with_summary_json), cmocka_unit_test(test_fixtures_load),
      cmocka_unit_test(test_probe_perturb_charts), cmocka_unit_test(test_probe_context_part),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
