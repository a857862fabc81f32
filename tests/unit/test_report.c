/*
 * test_report.c - the report's building blocks: axis ticks on every degenerate range
 * (one point, all equal, zero, NaN, infinities, huge, too narrow for a double), log
 * ticks, numbers for people, escaping for HTML / Markdown / terminal / CSV, UTF-8
 * cutting, histogram bins, CDF points and charts with nothing to draw, share, latency
 * and count axes, probe lines drawn from JSON rows. Failures print what was got and what was wanted.
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

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/utf8.h"
#include "report/report_internal.h"
#include "test_text.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void want_str(const char *what, const char *got, const char *want) {
  if (strcmp(got, want)) fail_msg("%s: got \"%s\", want \"%s\"", what, got, want);
}

/* ---- axis ticks ------------------------------------------------------------------------- */

/* 1, 2 or 5 times a power of ten. */
static int is_nice(double step) {
  double e = floor(log10(step));
  double f = step / pow(10, e);
  return fabs(f - 1) < 1e-9 || fabs(f - 2) < 1e-9 || fabs(f - 5) < 1e-9 || fabs(f - 10) < 1e-9;
}

/* The contract of cb__rep_axis_ticks / cb__rep_axis_log_ticks, for any input. */
static void check_ticks(const char *what, double lo, double hi, const cb__rep_ticks *t) {
  char ctx[256];
  snprintf(ctx, sizeof ctx, "%s [%g, %g] -> [%g, %g] step %g n %zu", what, lo, hi, t->lo, t->hi,
           t->step, t->n);
  if (!isfinite(t->lo) || !isfinite(t->hi) || !(t->lo < t->hi)) fail_msg("%s: range not usable", ctx);
  if (t->n < 2 || t->n > CB__REP_MAX_TICKS) fail_msg("%s: %zu ticks", ctx, t->n);
  for (size_t i = 0; i < t->n; i++) {
    if (!isfinite(t->v[i])) fail_msg("%s: tick %zu is %g", ctx, i, t->v[i]);
    if (t->v[i] < t->lo - fabs(t->lo) * 1e-12 || t->v[i] > t->hi + fabs(t->hi) * 1e-12)
      fail_msg("%s: tick %zu = %.17g outside the range", ctx, i, t->v[i]);
    if (i && !(t->v[i] > t->v[i - 1])) fail_msg("%s: ticks %zu and %zu not increasing: %.17g, %.17g", ctx, i - 1, i, t->v[i - 1], t->v[i]);
  }
  if (!t->log && !is_nice(t->step)) fail_msg("%s: step %.17g is not 1, 2 or 5 x 10^k", ctx, t->step);
  /* finite data inside the range stays inside it */
  if (isfinite(lo) && fabs(lo) < 1e299 && (!t->log || lo > 0) && (lo < t->lo || lo > t->hi))
    fail_msg("%s: data end %g outside the axis", ctx, lo);
  if (isfinite(hi) && fabs(hi) < 1e299 && (!t->log || hi > 0) && (hi < t->lo || hi > t->hi))
    fail_msg("%s: data end %g outside the axis", ctx, hi);
}

static void test_axis_ticks_normal(void **state) {
  (void)state;
  cb__rep_ticks t;
  cb__rep_axis_ticks(0, 100, 5, &t);
  check_ticks("0..100", 0, 100, &t);
  if (t.lo != 0 || t.hi != 100 || t.step != 20 || t.n != 6)
    fail_msg("0..100: got [%g, %g] step %g n %zu, want [0, 100] step 20 n 6", t.lo, t.hi, t.step, t.n);
  cb__rep_axis_ticks(34.9, 356.7, 5, &t);
  check_ticks("35..357", 34.9, 356.7, &t);
  if (t.step != 100 || t.lo != 0 || t.hi != 400)
    fail_msg("35..357: got [%g, %g] step %g, want [0, 400] step 100", t.lo, t.hi, t.step);
  cb__rep_axis_ticks(0.001, 0.0042, 5, &t);
  check_ticks("small", 0.001, 0.0042, &t);
  if (t.decimals != 3) fail_msg("small: %d decimals, want 3 (step %g)", t.decimals, t.step);
  cb__rep_axis_ticks(-3, 7, 8, &t);
  check_ticks("negative", -3, 7, &t);
  int zero = 0;
  for (size_t i = 0; i < t.n; i++) zero |= t.v[i] == 0 && !signbit(t.v[i]);
  if (!zero) fail_msg("negative: no tick at +0 (step %g from %g)", t.step, t.lo);
}

static void test_axis_ticks_degenerate(void **state) {
  (void)state;
  static const struct {
    const char *name;
    double lo, hi;
  } cases[] = {
      {"one point", 34.87, 34.87},
      {"all zero", 0, 0},
      {"negative point", -5, -5},
      {"NaN both", NAN, NAN},
      {"NaN low", NAN, 3},
      {"NaN high", 3, NAN},
      {"infinities", -INFINITY, INFINITY},
      {"inf high", 1, INFINITY},
      {"swapped", 10, 1},
      {"huge", -1e308, 1e308},
      {"huge point", 1e308, 1e308},
      {"narrow for a double", 1e15, 1e15 + 1},
      {"tiny", 0, 1e-300},
      {"denormal point", 5e-324, 5e-324},
      {"nanoseconds as ms", 0.000001, 0.000002},
      {"hours in ms", 0, 3.6e6},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    for (int target = 1; target <= 25; target += 6) {
      cb__rep_ticks t;
      cb__rep_axis_ticks(cases[i].lo, cases[i].hi, target, &t);
      char what[96];
      snprintf(what, sizeof what, "%s (target %d)", cases[i].name, target);
      check_ticks(what, cases[i].lo, cases[i].hi, &t);
    }
  }
  cb__rep_ticks t;
  cb__rep_axis_ticks(0, 0, 5, &t);
  if (t.lo != 0 || t.hi != 1) fail_msg("all zero: got [%g, %g], want [0, 1]", t.lo, t.hi);
}

static void test_axis_log_ticks(void **state) {
  (void)state;
  static const struct {
    const char *name;
    double lo, hi;
  } cases[] = {
      {"decades", 0.001, 231},     {"one decade", 2, 8},      {"one point", 5, 5},
      {"zero and negative", 0, -1}, {"zero low", 0, 50},      {"NaN", NAN, NAN},
      {"huge span", 1e-300, 1e300}, {"inf", 1, INFINITY},     {"swapped", 100, 1},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    cb__rep_ticks t;
    cb__rep_axis_log_ticks(cases[i].lo, cases[i].hi, &t);
    check_ticks(cases[i].name, cases[i].lo, cases[i].hi, &t);
    for (size_t k = 0; k < t.n; k++)
      if (!(t.v[k] > 0)) fail_msg("%s: log tick %zu is %g", cases[i].name, k, t.v[k]);
  }
  cb__rep_ticks t;
  cb__rep_axis_log_ticks(0.001, 231, &t);
  if (t.lo != 0.001 || t.hi != 1000) fail_msg("decades: got [%g, %g], want [0.001, 1000]", t.lo, t.hi);
}

static void test_nice(void **state) {
  (void)state;
  static const struct {
    double x;
    int round;
    double want;
  } cases[] = {{0.7, 1, 0.5},  {1.4, 1, 1},  {2.9, 1, 2},   {6.9, 1, 5},   {7.1, 1, 10}, {3, 0, 5},
               {2, 0, 2},      {2.01, 0, 5}, {320, 0, 500}, {0, 1, 1},     {-3, 1, 1},   {NAN, 0, 1},
               {INFINITY, 0, 1}};
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    double got = cb__rep_nice(cases[i].x, cases[i].round);
    if (fabs(got - cases[i].want) > 1e-12 * fabs(cases[i].want))
      fail_msg("nice(%g, %d): got %.17g, want %g", cases[i].x, cases[i].round, got, cases[i].want);
  }
}

/* ---- numbers for people -------------------------------------------------------------------- */

static void test_fmt(void **state) {
  (void)state;
  char b[64];
  static const struct {
    double ms;
    const char *want;
  } ms[] = {{0, "0 ms"},           {0.0005, "0.5 \xC2\xB5s"}, {0.8123, "812 \xC2\xB5s"},
            {0.9996, "1 ms"},      {12.34, "12.3 ms"},        {16.98, "17 ms"},
            {999.7, "1 s"},        {1234, "1.23 s"},          {98765, "98.8 s"},
            {123456, "123 s"},     {-2.5, "-2.5 ms"},         {NAN, "-"},
            {INFINITY, "\xE2\x88\x9E"}};
  for (size_t i = 0; i < ARRAY_LEN(ms); i++) {
    char what[64];
    snprintf(what, sizeof what, "fmt_ms(%g)", ms[i].ms);
    want_str(what, cb__rep_fmt_ms(ms[i].ms, b, sizeof b), ms[i].want);
  }
  static const struct {
    double v;
    const char *want;
  } si[] = {{0, "0"},         {200, "200"},     {15.28, "15.3"},  {0.05, "0.05"}, {999.6, "1k"},
            {1200, "1.2k"},   {1234, "1.23k"},  {17517, "17.5k"}, {1e6, "1M"},    {3.456e9, "3.46G"},
            {-1500, "-1.5k"}, {NAN, "-"}};
  for (size_t i = 0; i < ARRAY_LEN(si); i++) {
    char what[64];
    snprintf(what, sizeof what, "fmt_si(%g)", si[i].v);
    want_str(what, cb__rep_fmt_si(si[i].v, b, sizeof b), si[i].want);
  }
  static const struct {
    double f;
    const char *want;
  } pct[] = {{1, "100%"},         {0.825, "82.5%"},      {0.7, "70%"},  {0, "0%"},
             {0.99999, "99.99%"}, {0.999999, "99.99%"}, {0.0001, "<0.1%"}, {NAN, "-"}};
  for (size_t i = 0; i < ARRAY_LEN(pct); i++) {
    char what[64];
    snprintf(what, sizeof what, "fmt_pct(%g)", pct[i].f);
    want_str(what, cb__rep_fmt_pct(pct[i].f, b, sizeof b), pct[i].want);
  }
  want_str("fmt_count", cb__rep_fmt_count(1234567, b, sizeof b), "1,234,567");
  want_str("fmt_count 0", cb__rep_fmt_count(0, b, sizeof b), "0");
  want_str("fmt_rate", cb__rep_fmt_rate(1674.6, "tokens/s", b, sizeof b), "1.67k tokens/s");
  want_str("fmt_factor", cb__rep_fmt_factor(2.479, b, sizeof b), "2.48x");
}

static void test_fmt_delta(void **state) {
  (void)state;
  static const struct {
    double base, v;
    int higher_better;
    const char *want;
    cb__rep_tone tone;
  } cases[] = {
      {100, 110, 0, "+10.0% worse", CB__REP_TONE_BAD},   {100, 90, 0, "-10.0% better", CB__REP_TONE_GOOD},
      {100, 110, 1, "+10.0% better", CB__REP_TONE_GOOD}, {100, 100.5, 0, "+0.5%", CB__REP_TONE_NONE},
      {0, 5, 0, "-", CB__REP_TONE_NONE},                 {0, 0, 1, "+0%", CB__REP_TONE_NONE},
      {NAN, 5, 0, "-", CB__REP_TONE_NONE},               {5, INFINITY, 0, "-", CB__REP_TONE_NONE},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    char b[64], what[96];
    cb__rep_tone tone;
    cb__rep_fmt_delta(cases[i].base, cases[i].v, cases[i].higher_better, &tone, b, sizeof b);
    snprintf(what, sizeof what, "delta(%g -> %g, higher better %d)", cases[i].base, cases[i].v,
             cases[i].higher_better);
    want_str(what, b, cases[i].want);
    if (tone != cases[i].tone) fail_msg("%s: tone %d, want %d", what, tone, cases[i].tone);
  }
}

/* ---- escaping -------------------------------------------------------------------------------- */

static char *escaped(void (*fn)(cb_buf *, const char *, size_t), const char *s, size_t n) {
  cb_buf b;
  cb_buf_init(&b, 0);
  fn(&b, s, n);
  return b.data ? b.data : cb_strdup("");
}

static void test_html_escape(void **state) {
  (void)state;
  static const struct {
    const char *in;
    const char *want;
  } cases[] = {
      {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
      {"\"><img src=x onerror=alert(1)>", "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"},
      {"a & b 'c'", "a &amp; b &#39;c&#39;"},
      {"&lt;", "&amp;lt;"},
      {"line\nnext\ttab", "line\nnext\ttab"},
      {"esc\x1b[31m bell\x07", "esc\xEF\xBF\xBD[31m bell\xEF\xBF\xBD"},
      {"bad \xC3 utf8 \xFF", "bad \xEF\xBF\xBD utf8 \xEF\xBF\xBD"},
      {"overlong \xC0\xAF", "overlong \xEF\xBF\xBD\xEF\xBF\xBD"},
      {"surrogate \xED\xA0\x80", "surrogate \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"C1 \xC2\x9B", "C1 \xEF\xBF\xBD"},
      {"caf\xC3\xA9 \xE2\x89\xA4 \xF0\x9F\x99\x82", "caf\xC3\xA9 \xE2\x89\xA4 \xF0\x9F\x99\x82"},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    char *got = escaped(cb__rep_html_escape, cases[i].in, strlen(cases[i].in));
    want_str(cases[i].in, got, cases[i].want);
    cb_free(got);
  }
  /* a NUL inside the text is data too */
  char *got = escaped(cb__rep_html_escape, "a\0b", 3);
  want_str("embedded NUL", got, "a\xEF\xBF\xBD" "b");
  cb_free(got);
}

static void test_md_escape(void **state) {
  (void)state;
  static const struct {
    const char *in;
    const char *want;
  } cases[] = {
      {"a | b", "a \\| b"},
      {"*bold* _it_ `code` [link](x) ~s~", "\\*bold\\* \\_it\\_ \\`code\\` \\[link\\](x) \\~s\\~"},
      {"<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"},
      {"two\nlines\r\n", "two lines  "},
      {"back\\slash", "back\\\\slash"},
      {"12.5 ms, 1.2k", "12.5 ms, 1.2k"},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    char *got = escaped(cb__rep_md_escape, cases[i].in, strlen(cases[i].in));
    want_str(cases[i].in, got, cases[i].want);
    cb_free(got);
  }
}

/* The terminal's escaping is util's, shared with every message that shows server text. */
static void text_clean(cb_buf *out, const char *s, size_t n) { cb_utf8_clean(out, s, n, 0); }

static void test_text_clean(void **state) {
  (void)state;
  const char *in = "\x1b]0;title\x07\x1b[2J ok\n\xC2\x9B" "31m \xE2\x88\x9E";
  char *got = escaped(text_clean, in, strlen(in));
  if (strchr(got, 0x1b) || strchr(got, 0x07)) fail_msg("control characters kept: \"%s\"", got);
  want_str("text_clean", got,
           "\xEF\xBF\xBD]0;title\xEF\xBF\xBD\xEF\xBF\xBD[2J ok\n\xEF\xBF\xBD" "31m \xE2\x88\x9E");
  cb_free(got);
}

static void test_csv_field(void **state) {
  (void)state;
  static const struct {
    const char *in;
    int text;
    const char *want;
  } cases[] = {
      {"plain", 1, "plain"},
      {"a,b", 1, "\"a,b\""},
      {"say \"hi\"", 1, "\"say \"\"hi\"\"\""},
      {"two\nlines", 1, "\"two\nlines\""},
      {"=cmd|' /C calc'!A0", 1, "'=cmd|' /C calc'!A0"},
      {"+1", 1, "'+1"},
      {"-x,y", 1, "\"'-x,y\""},
      {"@SUM(A1)", 1, "'@SUM(A1)"},
      {"-1.5", 0, "-1.5"},
      {"", 1, ""},
  };
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    cb_buf b;
    cb_buf_init(&b, 0);
    cb__rep_csv_field(&b, cases[i].in, cases[i].text);
    want_str(cases[i].in, b.data ? b.data : "", cases[i].want);
    cb_buf_free(&b);
  }
}

static void test_utf8_cut(void **state) {
  (void)state;
  const char *s = "ab\xC3\xA9" "cd\xF0\x9F\x99\x82";/* a b é c d 🙂: 2 + 2 + 2 + 4 bytes */
  size_t n = strlen(s);
  static const struct {
    size_t max, want;
  } cases[] = {{0, 0}, {2, 2}, {3, 2}, {4, 4}, {7, 6}, {9, 6}, {10, 10}, {100, 10}};
  for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
    size_t got = cb_utf8_cut(s, n, cases[i].max);
    if (got != cases[i].want) fail_msg("utf8_cut(max %zu): got %zu, want %zu", cases[i].max, got, cases[i].want);
  }
  if (cb__rep_utf8_width(s, n) != 6) fail_msg("utf8_width: got %zu, want 6", cb__rep_utf8_width(s, n));
  if (cb_utf8_cut("\xFF\xFF\xFF", 3, 2) != 2) fail_msg("utf8_cut on ill-formed bytes must cut per byte");
}

/* ---- bins, CDFs, charts ------------------------------------------------------------------------ */

static void test_bins(void **state) {
  (void)state;
  double one[] = {34.87};
  cb__rep_values v = {.v = one, .n = 1};
  cb__rep_bins b;
  cb__rep_bins_compute(&v, 32, &b);
  if (b.n_bins < 1 || b.counts[0] + (b.n_bins > 1 ? b.counts[b.n_bins - 1] : 0) != 1)
    fail_msg("one value: %zu bins", b.n_bins);
  double total = 0;
  for (size_t k = 0; k < b.n_bins; k++) total += b.counts[k];
  if (total != 1) fail_msg("one value: counted %g times", total);
  if (!(one[0] >= b.start && one[0] <= b.start + (double)b.n_bins * b.step))
    fail_msg("one value %g outside the bins [%g, %g]", one[0], b.start, b.start + (double)b.n_bins * b.step);
  cb__rep_bins_free(&b);

  double equal[50];
  for (size_t i = 0; i < 50; i++) equal[i] = 7;
  v = (cb__rep_values){.v = equal, .n = 50};
  cb__rep_bins_compute(&v, 32, &b);
  total = 0;
  for (size_t k = 0; k < b.n_bins; k++) total += b.counts[k];
  if (total != 50 || !(b.step > 0)) fail_msg("all equal: counted %g, step %g", total, b.step);
  cb__rep_bins_free(&b);

  /* a long tail: 300 values 1..300 ms and one at 100 s go to the last bin, counted */
  double tail[301];
  for (size_t i = 0; i < 300; i++) tail[i] = (double)(i + 1);
  tail[300] = 100000;
  v = (cb__rep_values){.v = tail, .n = 301};
  cb__rep_bins_compute(&v, 32, &b);
  total = 0;
  for (size_t k = 0; k < b.n_bins; k++) total += b.counts[k];
  if (total != 301 || b.overflow != 1 || b.n_bins > 64)
    fail_msg("tail: counted %g, overflow %zu, %zu bins", total, b.overflow, b.n_bins);
  cb__rep_bins_free(&b);

  v = (cb__rep_values){.v = NULL, .n = 0};
  cb__rep_bins_compute(&v, 32, &b);
  if (b.n_bins) fail_msg("empty: %zu bins", b.n_bins);
  cb__rep_bins_free(&b);
}

static void test_cdf_series(void **state) {
  (void)state;
  cb__rep_chart c;
  cb__rep_chart_init(&c, "t", "t");
  double one[] = {5};
  cb__rep_values v = {.v = one, .n = 1};
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, 0, "one");
  cb__rep_cdf_series(s, &v);
  if (s->n != 2 || s->y[0] != 0 || s->y[1] != 1 || s->x[1] != 5)
    fail_msg("one value: %zu points, want (5, 0) (5, 1)", s->n);
  size_t n = 100000;
  double *big = cb_calloc(n, sizeof *big);
  for (size_t i = 0; i < n; i++) big[i] = (double)i;
  v = (cb__rep_values){.v = big, .n = n};
  s = cb__rep_chart_series(&c, CB__REP_STEP, 1, "big");
  cb__rep_cdf_series(s, &v);
  if (s->n > 600 || s->x[s->n - 1] != (double)(n - 1) || s->y[s->n - 1] != 1)
    fail_msg("100000 values: %zu points ending at (%g, %g), want <= 600 ending at (%zu, 1)", s->n,
             s->x[s->n - 1], s->y[s->n - 1], n - 1);
  for (size_t i = 1; i < s->n; i++)
    if (s->x[i] < s->x[i - 1] || s->y[i] < s->y[i - 1]) fail_msg("CDF not monotone at point %zu", i);
  cb_free(big);
  cb__rep_chart_free(&c);
}

static void test_chart_svg(void **state) {
  (void)state;
  cb_buf out;
  cb_buf_init(&out, 0);
  /* nothing to draw: a frame and the empty text, no series path, no ticks */
  cb__rep_chart c;
  cb__rep_chart_init(&c, "cdf-1-ttft", "TTFT <b>");
  snprintf(c.empty, sizeof c.empty, "no successful requests");
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_LINE, 0, "nothing");
  cb__rep_series_add(s, NAN, 1);
  cb__rep_series_add(s, 1, INFINITY);
  cb__rep_chart_mark(&c, 1, NAN, CB__REP_TONE_BAD, "never");
  cb__rep_chart_svg(&c, &out);
  cb__rep_chart_free(&c);
  if (!strstr(out.data, "no successful requests") || strstr(out.data, "class=\"series") ||
      strstr(out.data, "class=\"tick\"") || !strstr(out.data, "TTFT &lt;b&gt;"))
    fail_msg("empty chart:\n%s", out.data);
  cb_buf_reset(&out);
  /* one point, on every kind of series and unit: finite coordinates, ticks, a legend */
  static const cb__rep_unit units[] = {CB__REP_UNIT_NONE, CB__REP_UNIT_MS, CB__REP_UNIT_S, CB__REP_UNIT_FRACTION};
  for (size_t u = 0; u < ARRAY_LEN(units); u++) {
    for (int kind = CB__REP_LINE; kind <= CB__REP_BARS; kind++) {
      cb__rep_chart_init(&c, "one", "one point");
      c.x.unit = units[u];
      c.y.unit = units[(u + 1) % ARRAY_LEN(units)];
      c.x.log = kind == CB__REP_STEP;
      s = cb__rep_chart_series(&c, (cb__rep_series_kind)kind, 0, "a series");
      s->bar_w = 0;
      s->markers = 1;
      cb__rep_series_add(s, 0, 0);
      cb__rep_chart_mark(&c, 0, 0, CB__REP_TONE_BAD, "bound");
      cb__rep_chart_band(&c, 0, 0, CB__REP_TONE_GOOD, "empty band");
      cb__rep_chart_svg(&c, &out);
      cb__rep_chart_free(&c);
      if (contains_word(out.data, "nan") || contains_word(out.data, "inf") || contains_word(out.data, "NaN"))
        fail_msg("one point (unit %d, kind %d) has a non-number:\n%s", units[u], kind, out.data);
      if (!strstr(out.data, "class=\"tick\"") || !strstr(out.data, "class=\"series") ||
          !strstr(out.data, "class=\"legend\""))
        fail_msg("one point (unit %d, kind %d): no ticks, series or legend:\n%s", units[u], kind, out.data);
      cb_buf_reset(&out);
    }
  }
  /* huge values stay finite */
  cb__rep_chart_init(&c, "huge", "huge");
  s = cb__rep_chart_series(&c, CB__REP_LINE, 0, "huge");
  cb__rep_series_add(s, -1e308, -1e308);
  cb__rep_series_add(s, 1e308, 1e308);
  cb__rep_chart_svg(&c, &out);
  cb__rep_chart_free(&c);
  if (contains_word(out.data, "nan") || contains_word(out.data, "inf"))
    fail_msg("huge values give a non-number:\n%s", out.data);
  cb_buf_free(&out);
}

/* A categorical x axis: a tick per name (escaped, cut to 24 bytes on a code point),
 * bars centred on them, the names thinned when they would collide. */
static void test_chart_categories(void **state) {
  (void)state;
  cb_buf out;
  cb_buf_init(&out, 0);
  cb__rep_chart c;
  cb__rep_chart_init(&c, "cats", "categories");
  cb__rep_chart_category(&c, "<b>bold</b>");
  cb__rep_chart_category(&c, "a-name-much-longer-than-24-bytes\xC3\xA9");
  cb__rep_chart_category(&c, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9");
  cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_BARS, 0, "share");
  s->bar_w = 0.4;
  for (int k = 0; k < 3; k++) cb__rep_series_add(s, k - 0.2, 0.5);
  cb__rep_chart_svg(&c, &out);
  cb__rep_chart_free(&c);
  if (!strstr(out.data, ">&lt;b&gt;bold&lt;/b&gt;</text>") || strstr(out.data, "<b>"))
    fail_msg("a category name is not an escaped tick label:\n%s", out.data);
  if (!strstr(out.data, ">a-name-much-longer-than-\xE2\x80\xA6</text>"))
    fail_msg("a long name is not cut to 24 bytes:\n%s", out.data);
  /* 13 two-byte characters: 12 fit in 24 bytes, never half of one */
  if (!strstr(out.data, ">\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xE2\x80\xA6</text>"))
    fail_msg("a name is cut inside a code point:\n%s", out.data);
  if (contains_word(out.data, "nan") || contains_word(out.data, "inf")) fail_msg("non-number:\n%s", out.data);
  cb_buf_reset(&out);
  /* many categories: never more ticks than an axis holds, the first one labelled */
  cb__rep_chart_init(&c, "many", "many");
  s = cb__rep_chart_series(&c, CB__REP_LINE, 0, "v");
  char name[32];
  for (int k = 0; k < 100; k++) {
    snprintf(name, sizeof name, "run-%03d", k);
    cb__rep_chart_category(&c, name);
    cb__rep_series_add(s, k, k);
  }
  cb__rep_chart_svg(&c, &out);
  cb__rep_chart_free(&c);
  size_t ticks = 0;
  for (const char *p = strstr(out.data, "class=\"tick\">run-"); p; p = strstr(p + 1, "class=\"tick\">run-")) ticks++;
  if (!strstr(out.data, ">run-000</text>") || ticks < 2 || ticks > CB__REP_MAX_TICKS)
    fail_msg("100 categories: %zu labelled ticks", ticks);
  cb_buf_free(&out);
}

static void test_fmt_unit(void **state) {
  (void)state;
  char b[48];
  assert_string_equal(cb__rep_fmt_unit(12.34, "ms", b, sizeof b), "12.3 ms");
  assert_string_equal(cb__rep_fmt_unit(0.125, "fraction", b, sizeof b), "12.5%");
  assert_string_equal(cb__rep_fmt_unit(1520, "/s", b, sizeof b), "1.52k /s");
  assert_string_equal(cb__rep_fmt_unit(12345, "count", b, sizeof b), "12.3k");
  assert_string_equal(cb__rep_fmt_unit(NAN, "ms", b, sizeof b), "-");
  assert_string_equal(cb__rep_fmt_fixed(0.11085, 4, b, sizeof b), "0.1109");
  assert_string_equal(cb__rep_fmt_fixed(NAN, 4, b, sizeof b), "-");
}

static void test_tick_labels(void **state) {
  (void)state;
  cb__rep_axis_spec a = {.unit = CB__REP_UNIT_MS, .min = NAN, .max = NAN};
  cb__rep_ticks t;
  char b[64];
  cb__rep_axis_ticks(0, 30000, 5, &t); /* 30 s in ms: labels in s */
  double scale;
  const char *suffix;
  cb__rep_axis_unit(&a, &t, &scale, &suffix);
  want_str("30 s axis unit", suffix, "s");
  want_str("30 s axis label", cb__rep_tick_label(&a, &t, 10000, b, sizeof b), "10");
  cb__rep_axis_ticks(0, 0.5, 5, &t); /* 500 µs */
  cb__rep_axis_unit(&a, &t, &scale, &suffix);
  want_str("0.5 ms axis unit", suffix, "\xC2\xB5s");
  want_str("0.5 ms axis label", cb__rep_tick_label(&a, &t, 0.2, b, sizeof b), "200");
  a.unit = CB__REP_UNIT_NONE;
  cb__rep_axis_ticks(0, 12000, 5, &t);
  want_str("12k axis label", cb__rep_tick_label(&a, &t, 4000, b, sizeof b), "4k");
  want_str("12k axis zero", cb__rep_tick_label(&a, &t, 0, b, sizeof b), "0");
  a.unit = CB__REP_UNIT_FRACTION;
  cb__rep_axis_ticks(0, 1, 5, &t);
  want_str("fraction label", cb__rep_tick_label(&a, &t, 0.4, b, sizeof b), "40%");
}

/* cb__rep_table_add_text: untrusted text cut on a character boundary with "…" after,
 * control characters replaced, one line; "…" also when the text was cut before. */
static void test_table_add_text(void **state) {
  (void)state;
  cb__rep_table t;
  cb__rep_table_init(&t, "l");
  cb__rep_table_add_text(&t, "ab\xC3\xA9" "cd", 3, 0);     /* é would straddle the cut */
  cb__rep_table_add_text(&t, "a\x1b[2Jb\nc", 64, 0);       /* ESC and the newline replaced */
  cb__rep_table_add_text(&t, "whole", 64, 1);              /* cut by its writer */
  cb__rep_table_add_text(&t, NULL, 8, 0);
  cb__rep_table_add_text(&t, "exact", 5, 0);               /* fits: no mark */
  assert_int_equal(t.n, 5);
  assert_string_equal(t.cells[0].text, "ab\xE2\x80\xA6");
  assert_string_equal(t.cells[1].text, "a\xEF\xBF\xBD[2Jb c");
  assert_string_equal(t.cells[2].text, "whole\xE2\x80\xA6");
  assert_string_equal(t.cells[3].text, "");
  assert_string_equal(t.cells[4].text, "exact");
  cb__rep_table_free(&t);
}

/* The SVG of chart C with one line through (1, y0) and (2, y1), C freed (owned text). */
static char *draw_line(cb__rep_chart *c, double y0, double y1) {
  cb__rep_series *s = cb__rep_chart_series(c, CB__REP_LINE, 0, "v");
  cb__rep_series_add(s, 1, y0);
  cb__rep_series_add(s, 2, y1);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb__rep_chart_svg(c, &out);
  cb__rep_chart_free(c);
  return out.data;
}

/* cb__rep_axis_share: the label, shown as %, fixed at 0 and 1, the other settings kept;
 * drawn, its ticks run from 0% to 100% whatever the data. */
static void test_axis_share(void **state) {
  (void)state;
  cb__rep_chart c;
  cb__rep_chart_init(&c, "share", "share");
  c.y.integer = 1;
  cb__rep_axis_share(&c.y, "met the SLO");
  want_str("share axis label", c.y.label, "met the SLO");
  assert_int_equal(c.y.unit, CB__REP_UNIT_FRACTION);
  if (c.y.min != 0 || c.y.max != 1) fail_msg("share axis: [%g, %g], want [0, 1]", c.y.min, c.y.max);
  assert_int_equal(c.y.integer, 1);
  assert_int_equal(c.y.log, 0);
  assert_int_equal(c.y.from_zero, 0);
  assert_true(isnan(c.x.min) && isnan(c.x.max)); /* the other axis untouched */
  char *svg = draw_line(&c, 0.42, 0.44);
  if (!strstr(svg, ">0%</text>") || !strstr(svg, ">100%</text>"))
    fail_msg("a share axis over 0.42..0.44 does not run from 0%% to 100%%:\n%s", svg);
  cb_free(svg);
}

/* cb__rep_axis_latency: the label, ms, from 0 with free ends; drawn, 120..130 ms sits
 * on an axis from 0 labelled "(ms)". */
static void test_axis_latency(void **state) {
  (void)state;
  cb__rep_chart c;
  cb__rep_chart_init(&c, "lat", "latency");
  cb__rep_axis_latency(&c.y, "TTFT");
  want_str("latency axis label", c.y.label, "TTFT");
  assert_int_equal(c.y.unit, CB__REP_UNIT_MS);
  assert_int_equal(c.y.from_zero, 1);
  assert_true(isnan(c.y.min) && isnan(c.y.max));
  assert_int_equal(c.y.log, 0);
  char *svg = draw_line(&c, 120, 130);
  if (!strstr(svg, "class=\"tick\">0</text>") || !strstr(svg, ">TTFT (ms)</text>"))
    fail_msg("a latency axis over 120..130 ms does not start at 0 in ms:\n%s", svg);
  cb_free(svg);
}

/* cb__rep_axis_count: the label, whole-number ticks, nothing else set; drawn over
 * 1..3 turns, the ticks are 1, 2, 3 and never 1.5. */
static void test_axis_count(void **state) {
  (void)state;
  cb__rep_chart c;
  cb__rep_chart_init(&c, "count", "count");
  cb__rep_axis_count(&c.y, "turn");
  want_str("count axis label", c.y.label, "turn");
  assert_int_equal(c.y.integer, 1);
  assert_int_equal(c.y.unit, CB__REP_UNIT_NONE);
  assert_int_equal(c.y.from_zero, 0);
  assert_true(isnan(c.y.min) && isnan(c.y.max));
  char *svg = draw_line(&c, 1, 3);
  /* y ticks are drawn right-aligned (text-anchor end), x ticks centred */
  if (!strstr(svg, "\"end\" class=\"tick\">2</text>") || !strstr(svg, "\"end\" class=\"tick\">3</text>") ||
      strstr(svg, "\"end\" class=\"tick\">1.5</text>"))
    fail_msg("a count axis over 1..3 is not on whole numbers:\n%s", svg);
  cb_free(svg);
}

/* cb__rep_json_key_num takes the key whole (eval metric names have dots), where
 * cb__rep_json_num walks a path; both give NAN for what is not a number. */
static void test_json_key_num(void **state) {
  (void)state;
  json_error_t e;
  json_t *o = json_loads("{\"judge:rubrics/x.yaml\": 0.5, \"a\": {\"b\": 2}, \"s\": \"1\", \"t\": true}", 0, &e);
  assert_non_null(o);
  if (cb__rep_json_key_num(o, "judge:rubrics/x.yaml") != 0.5) fail_msg("a key with dots is not read whole");
  assert_true(isnan(cb__rep_json_num(o, "judge:rubrics/x.yaml"))); /* a path: "judge:rubrics/x", "yaml" */
  assert_true(isnan(cb__rep_json_key_num(o, "a.b")));
  if (cb__rep_json_num(o, "a.b") != 2) fail_msg("the path a.b is not 2");
  assert_true(isnan(cb__rep_json_key_num(o, "s")));
  assert_true(isnan(cb__rep_json_key_num(o, "t")));
  assert_true(isnan(cb__rep_json_key_num(o, "absent")));
  assert_true(isnan(cb__rep_json_key_num(NULL, "a")));
  json_decref(o);
}

/* cb__rep_probe_line: a LINE series named as asked, one point per row with both
 * numbers (a dotted path reaches a nested object), in row order; rows without them,
 * rows that are not objects and a missing array give no point. */
static void test_probe_line(void **state) {
  (void)state;
  json_error_t e;
  json_t *rows = json_loads("[{\"x\": 1, \"y\": 0.5, \"t\": {\"p50\": 12}},"
                            " {\"x\": 2, \"t\": {\"p50\": 14}},"
                            " {\"x\": 3, \"y\": \"0.7\"},"
                            " 7,"
                            " {\"x\": 4, \"y\": 0.25, \"t\": 3}]",
                            0, &e);
  assert_non_null(rows);
  cb__rep_chart c;
  cb__rep_chart_init(&c, "rows", "rows");
  cb__rep_chart_series(&c, CB__REP_POINTS, 1, "before");
  cb__rep_series *y = cb__rep_probe_line(&c, 2, "a <y> line", rows, "x", "y");
  assert_ptr_equal(y, &c.series[1]);
  assert_int_equal(y->kind, CB__REP_LINE);
  assert_int_equal(y->color, 2);
  want_str("series name", y->name, "a <y> line");
  assert_int_equal(y->markers, 0);
  assert_int_equal(y->dashed, 0);
  assert_int_equal(y->n, 2);
  if (y->x[0] != 1 || y->y[0] != 0.5 || y->x[1] != 4 || y->y[1] != 0.25)
    fail_msg("y against x: (%g, %g) (%g, %g), want (1, 0.5) (4, 0.25)", y->x[0], y->y[0], y->x[1], y->y[1]);
  cb__rep_series *t = cb__rep_probe_line(&c, 0, "", rows, "x", "t.p50");
  assert_int_equal(t->n, 2);
  if (t->x[0] != 1 || t->y[0] != 12 || t->x[1] != 2 || t->y[1] != 14)
    fail_msg("t.p50 against x: (%g, %g) (%g, %g), want (1, 12) (2, 14)", t->x[0], t->y[0], t->x[1], t->y[1]);
  cb__rep_series *none = cb__rep_probe_line(&c, 0, "none", json_object_get(rows, "absent"), "x", "y");
  assert_int_equal(none->n, 0);
  assert_int_equal(c.n_series, 4);
  cb__rep_chart_free(&c);
  json_decref(rows);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_axis_ticks_normal), cmocka_unit_test(test_axis_ticks_degenerate),
      cmocka_unit_test(test_axis_log_ticks),    cmocka_unit_test(test_nice),
      cmocka_unit_test(test_fmt),               cmocka_unit_test(test_fmt_delta),
      cmocka_unit_test(test_html_escape),       cmocka_unit_test(test_md_escape),
      cmocka_unit_test(test_text_clean),        cmocka_unit_test(test_csv_field),
      cmocka_unit_test(test_utf8_cut),          cmocka_unit_test(test_bins),
      cmocka_unit_test(test_cdf_series),        cmocka_unit_test(test_chart_svg),
      cmocka_unit_test(test_tick_labels),       cmocka_unit_test(test_chart_categories),
      cmocka_unit_test(test_fmt_unit),          cmocka_unit_test(test_table_add_text),
      cmocka_unit_test(test_axis_share),        cmocka_unit_test(test_probe_line),
      cmocka_unit_test(test_axis_latency),      cmocka_unit_test(test_axis_count),
      cmocka_unit_test(test_json_key_num),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
