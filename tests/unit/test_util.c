/*
 * test_util.c - error table, allocation-free helpers, buffers, clocks and the RNG.
 */
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

#include "calibench/buf.h"
#include "calibench/clock.h"
#include "calibench/duration.h"
#include "calibench/error.h"
#include "calibench/rng.h"
#include "calibench/secret.h"
#include "calibench/utf8.h"
#include "util/cps.h"
#include "util/unicode_lower.h"
#include "util/yaml_doc.h"

static void test_status_table(void **state) {
  (void)state;
  assert_string_equal(cb_strerror(CB_OK), "success");
  assert_string_equal(cb_status_name(CB_ERR_PARSE), "CB_ERR_PARSE");
  assert_string_equal(cb_strerror(CB_ERR_PARSE), "malformed input");
  assert_string_equal(cb_strerror((cb_status)999), "unknown status");
}

static void test_error_location(void **state) {
  (void)state;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_error_at(&err, CB_ERR_PARSE, "profile.yaml", 12, 3,
                             "field '%s': expected a number", "mfu");
  assert_int_equal(st, CB_ERR_PARSE);
  assert_string_equal(err.msg, "profile.yaml:12:3: field 'mfu': expected a number");
  assert_string_equal(err.file, "profile.yaml");
  assert_int_equal(err.line, 12);
  cb_error_wrap(&err, "loading profile");
  assert_string_equal(err.msg,
                      "loading profile: profile.yaml:12:3: field 'mfu': expected a number");
  assert_int_equal(err.code, CB_ERR_PARSE);
  assert_int_equal(cb_error_set(NULL, CB_ERR_IO, "dropped"), CB_ERR_IO);
}

static void test_buf_cap(void **state) {
  (void)state;
  cb_buf b;
  cb_buf_init(&b, 8);
  assert_int_equal(cb_buf_append_str(&b, "12345678"), CB_OK);
  assert_int_equal(cb_buf_append_char(&b, 'x'), CB_ERR_CAPACITY);
  assert_int_equal(b.len, 8);
  assert_string_equal(b.data, "12345678");
  cb_buf_consume(&b, 3);
  assert_string_equal(b.data, "45678");
  assert_int_equal(cb_buf_appendf(&b, "%d", 123), CB_OK);
  assert_string_equal(b.data, "45678123");
  cb_buf_free(&b);

  cb_buf big;
  cb_buf_init(&big, 0);
  for (int i = 0; i < 1000; i++) cb_buf_appendf(&big, "%04d", i);
  assert_int_equal(big.len, 4000);
  assert_memory_equal(big.data + 3996, "0999", 4);
  cb_buf_free(&big);
}

static void write_file(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, n, f), n);
  fclose(f);
}

/* cb_file_read_lines: the line cap and a NUL byte name their line; the file cap holds;
 * on any failure the buffer is as it was (an empty one freed: ASan sees no leak). */
static void test_file_read_caps(void **state) {
  (void)state;
  char path[] = "/tmp/cb_util_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_error err;
  cb_error_clear(&err);
  write_file(path, "ab\ncdef\ngh", 10);
  assert_int_equal(cb_file_read_lines(path, 0, 4, &b, &err), CB_OK);
  assert_int_equal(b.len, 10);
  cb_buf_free(&b);
  write_file(path, "ab\ncdefg\ngh\n", 12);
  assert_int_equal(cb_file_read_lines(path, 0, 4, &b, &err), CB_ERR_CAPACITY);
  assert_int_equal(err.line, 2);
  assert_non_null(strstr(err.msg, "the line is over the limit of 4 bytes"));
  assert_null(b.data);
  /* Past the first 64 KiB read: the part already read is released too. */
  static char big[100300];
  for (size_t i = 0; i < 100000; i += 5) memcpy(big + i, "abcd\n", 5);
  memset(big + 100000, 'x', 200);
  big[100200] = '\n';
  write_file(path, big, 100201);
  assert_int_equal(cb_file_read_lines(path, 0, 100, &b, &err), CB_ERR_CAPACITY);
  assert_int_equal(err.line, 20001);
  assert_null(b.data);
  write_file(path, "ab\ncd\nx\0y\n", 10);
  assert_int_equal(cb_file_read_lines(path, 0, 100, &b, &err), CB_ERR_PARSE);
  assert_int_equal(err.line, 3);
  assert_non_null(strstr(err.msg, "a NUL byte"));
  assert_null(b.data);
  assert_int_equal(cb_file_read(path, 0, &b, &err), CB_OK); /* not line-based: NUL is data */
  assert_int_equal(b.len, 10);
  assert_int_equal(cb_file_read(path, 5, &b, &err), CB_ERR_CAPACITY); /* kept as it was */
  assert_int_equal(b.len, 10);
  assert_non_null(strstr(err.msg, "the file is over the limit of 5 bytes"));
  cb_buf_free(&b);
  unlink(path);
}

static void test_json_escape(void **state) {
  (void)state;
  cb_buf b;
  cb_buf_init(&b, 0);
  const char in[] = "a\"b\\c\n\t\x01<\xC3\xA9\xFF>";
  cb_buf_append_json_string(&b, in, sizeof in - 1);
  /* é stays as UTF-8; the lone 0xFF byte becomes U+FFFD. */
  assert_string_equal(b.data, "a\\\"b\\\\c\\n\\t\\u0001<\xC3\xA9\xEF\xBF\xBD>");
  cb_buf_free(&b);
}

static void test_clock(void **state) {
  (void)state;
  uint64_t a = cb_clock_now_ns();
  uint64_t b = cb_clock_now_ns();
  assert_true(b >= a);
  char s[32];
  cb_clock_format_utc(UINT64_C(1764680854123000000), s, sizeof s);
  assert_string_equal(s, "2025-12-02T13:07:34.123Z");
}

/* Reference outputs: SplitMix64 and xoshiro256** as published at
 * prng.di.unimi.it (splitmix64.c, xoshiro256starstar.c). splitmix64 seeded with 0
 * gives 0xe220a8397b1dcdaf first; xoshiro256** from state {1,2,3,4} gives
 * 11520, 0, 1509978240, 1215971899390074240. */
static void test_rng_reference_vectors(void **state) {
  (void)state;
  uint64_t st = 0;
  assert_int_equal(cb_splitmix64(&st), UINT64_C(0xe220a8397b1dcdaf));
  cb_rng r = {.s = {1, 2, 3, 4}};
  assert_int_equal(cb_rng_next(&r), UINT64_C(11520));
  assert_int_equal(cb_rng_next(&r), UINT64_C(0));
  assert_int_equal(cb_rng_next(&r), UINT64_C(1509978240));
  assert_int_equal(cb_rng_next(&r), UINT64_C(1215971899390074240));
}

/* FNV-1a 64 reference values from the FNV test suite (www.isthe.com/chongo/tech/comp/fnv:
 * "", "a", "foobar"); the last input has a byte above 0x7f and a NUL, which a signed
 * char or a strlen would get wrong (value from the same definition, worked in Python). */
static void test_fnv1a64(void **state) {
  (void)state;
  assert_int_equal(cb_fnv1a64("", 0), UINT64_C(0xcbf29ce484222325));
  assert_int_equal(cb_fnv1a64("a", 1), UINT64_C(0xaf63dc4c8601ec8c));
  assert_int_equal(cb_fnv1a64("foobar", 6), UINT64_C(0x85944171f73967e8));
  assert_int_equal(cb_fnv1a64("\xff\0z", 3), UINT64_C(0xf920af1be415a5b0));
}

/* Past several doublings every code point is kept, in order; freeing leaves it empty and
 * reusable. */
static void test_cps(void **state) {
  (void)state;
  cb__cps c = {0};
  for (uint32_t i = 0; i < 1000; i++) cb__cps_push(&c, 0x10FFFF - i);
  assert_int_equal(c.n, 1000);
  assert_true(c.cap >= 1000);
  for (uint32_t i = 0; i < 1000; i++) assert_int_equal(c.v[i], 0x10FFFF - i);
  cb__cps_free(&c);
  assert_null(c.v);
  assert_int_equal(c.n, 0);
  assert_int_equal(c.cap, 0);
  cb__cps_push(&c, 'a');
  assert_int_equal(c.n, 1);
  assert_int_equal(c.v[0], 'a');
  cb__cps_free(&c);
  cb__cps_free(&c); /* an empty one too */
}

static void test_rng_streams(void **state) {
  (void)state;
  cb_rng a, b, c;
  cb_rng_init_stream(&a, 42, 1, 7);
  cb_rng_init_stream(&b, 42, 1, 7);
  cb_rng_init_stream(&c, 42, 1, 8);
  int differ = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t x = cb_rng_next(&a);
    assert_int_equal(x, cb_rng_next(&b));
    differ += x != cb_rng_next(&c);
  }
  assert_true(differ > 95);
}

/* Sample moments against the distributions' known means and variances.
 * n = 200000: the standard error of the mean is sd/447, so a 5-sigma tolerance
 * keeps these tests deterministic (the seed is fixed) and still meaningful. */
#define N_DRAWS 200000
static void moments(double *v, int n, double *mean, double *var) {
  double s = 0, s2 = 0;
  for (int i = 0; i < n; i++) s += v[i];
  *mean = s / n;
  for (int i = 0; i < n; i++) s2 += (v[i] - *mean) * (v[i] - *mean);
  *var = s2 / (n - 1);
}

static double draws[N_DRAWS];

static void check(const char *what, double got, double want, double tol) {
  if (fabs(got - want) > tol) fail_msg("%s: got %.6f, want %.6f +- %.6f", what, got, want, tol);
}

/* A difference of times is never 2^64 - a few: backwards is NAN. */
/* The one duration parser: every spelling it takes, every way it refuses. */
static void test_duration_parse(void **state) {
  (void)state;
  static const struct {
    const char *s;
    uint64_t bare_unit_ns, ns;
  } ok[] = {
      {"100ns", 0, 100},
      {"250us", 0, 250000},
      {"500ms", 0, 500000000},
      {"1.5s", 0, 1500000000},
      {"2m", 0, UINT64_C(120000000000)},
      {"3min", 0, UINT64_C(180000000000)},
      {"1h", 0, UINT64_C(3600000000000)},
      {"0.5h", 0, UINT64_C(1800000000000)},
      {".5s", 0, 500000000},
      {"5.s", 0, UINT64_C(5000000000)},
      {"2e3ms", 0, UINT64_C(2000000000)},
      {"1E-3s", 0, 1000000},
      {"800 ms", 0, 800000000},   /* a space before the unit */
      {"1.5ns", 0, 2},            /* rounded to the nearest ns */
      {"0s", 0, 0},               /* 0 is the caller's to refuse */
      {"0", CB_NS_PER_S, 0},
      {"30", CB_NS_PER_S, UINT64_C(30000000000)}, /* bare: the caller's unit */
      {"500", CB_NS_PER_MS, 500000000},
      {"2.5", CB_NS_PER_MS, 2500000},
      {"250", CB_NS_PER_US, 250000},
      {"1m", CB_NS_PER_MS, UINT64_C(60000000000)}, /* a unit wins over the bare one */
      {"500000h", 0, UINT64_C(1800000000000000000)},
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    uint64_t ns = 7;
    cb_error err;
    cb_error_clear(&err);
    if (cb_duration_parse(ok[i].s, ok[i].bare_unit_ns, &ns, &err) != CB_OK)
      fail_msg("'%s': refused: %s", ok[i].s, err.msg);
    if (ns != ok[i].ns)
      fail_msg("'%s': %llu ns, want %llu", ok[i].s, (unsigned long long)ns,
               (unsigned long long)ok[i].ns);
  }
  static const struct {
    const char *s;
    uint64_t bare_unit_ns;
    cb_status code;
    const char *msg;
  } bad[] = {
      {"", CB_NS_PER_S, CB_ERR_PARSE, "expected a duration such as 500ms, 2s or 1m, got ''"},
      {"abc", CB_NS_PER_S, CB_ERR_PARSE, "expected a duration such as 500ms, 2s or 1m, got 'abc'"},
      {"500", 0, CB_ERR_PARSE, "expected a duration with a unit (ns, us, ms, s, m, h), got '500'"},
      {"5 parsecs", 0, CB_ERR_PARSE, "got '5 parsecs' (unknown unit 'parsecs'; known: ns, us, "
                                     "ms, s, m, min, h)"},
      {"5S", 0, CB_ERR_PARSE, "unknown unit 'S'"},
      {"5sec", 0, CB_ERR_PARSE, "unknown unit 'sec'"},
      {"5ms ", 0, CB_ERR_PARSE, "unknown unit 'ms '"},
      {"5 ", CB_NS_PER_S, CB_ERR_PARSE, "got '5 '"},
      {" 5s", 0, CB_ERR_PARSE, "got ' 5s'"},
      {"-1s", 0, CB_ERR_RANGE, "a duration must be >= 0, got '-1s'"},
      {"-0.5", CB_NS_PER_S, CB_ERR_RANGE, "must be >= 0"},
      {"+1s", 0, CB_ERR_PARSE, "got '+1s'"},
      {"0x10s", 0, CB_ERR_PARSE, "unknown unit 'x10s'"},
      {"inf", CB_NS_PER_S, CB_ERR_PARSE, "got 'inf'"},
      {"nan", CB_NS_PER_S, CB_ERR_PARSE, "got 'nan'"},
      {".s", 0, CB_ERR_PARSE, "got '.s'"},
      {"1e", 0, CB_ERR_PARSE, "unknown unit 'e'"},
      {"1..5s", 0, CB_ERR_PARSE, "unknown unit '.5s'"},
      {"1,5s", 0, CB_ERR_PARSE, "unknown unit ',5s'"},
      {"6000000h", 0, CB_ERR_RANGE, "duration '6000000h' is out of range (0 .. ~584 years)"},
      {"1e400s", 0, CB_ERR_RANGE, "out of range"},
      {"1e30", CB_NS_PER_S, CB_ERR_RANGE, "out of range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint64_t ns = 7;
    cb_error err;
    cb_error_clear(&err);
    cb_status st = cb_duration_parse(bad[i].s, bad[i].bare_unit_ns, &ns, &err);
    if (st != bad[i].code) fail_msg("'%s': status %d, want %d", bad[i].s, st, bad[i].code);
    if (!strstr(err.msg, bad[i].msg))
      fail_msg("'%s': message '%s' lacks '%s'", bad[i].s, err.msg, bad[i].msg);
    if (ns != 7) fail_msg("'%s': output written on error", bad[i].s);
  }
  uint64_t ns;
  assert_int_equal(cb_duration_parse(NULL, CB_NS_PER_S, &ns, NULL), CB_ERR_PARSE);
}

/* The node readers every YAML file goes through: "name:line: key 'K': ..." errors. */
static void test_yaml_nodes(void **state) {
  (void)state;
  const char *text = "m: {a: 1}\nn: 2.5\nfast: fast\nd: 1m\nbare: 500\nbad: 5parsecs\n";
  yaml_document_t doc;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb__yaml_load(text, strlen(text), "t.yaml", &doc, &err), CB_OK);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  assert_int_equal(root->type, YAML_MAPPING_NODE);
  yaml_node_t *v[6];
  for (int i = 0; i < 6; i++)
    v[i] = yaml_document_get_node(&doc, root->data.mapping.pairs.start[i].value);
  assert_int_equal(cb__yaml_line(v[3]), 4);
  const char *s;
  assert_int_equal(cb__yaml_scalar("t.yaml", v[0], "m", &s, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "t.yaml:1: key 'm': expected a single value, got a mapping");
  double x;
  assert_int_equal(cb__yaml_number("t.yaml", v[1], "n", 0, 1, 10, &x, &err), CB_OK);
  assert_true(x == 2.5);
  assert_int_equal(cb__yaml_number("t.yaml", v[1], "n", 2.5, 1, 10, &x, &err), CB_ERR_RANGE);
  assert_string_equal(err.msg, "t.yaml:2: key 'n': must be in (2.5, 10], got 2.5");
  assert_int_equal(cb__yaml_number("t.yaml", v[2], "fast", 0, 0, 1, &x, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "t.yaml:3: key 'fast': expected a number, got 'fast'");
  uint64_t ns;
  assert_int_equal(cb__yaml_duration("t.yaml", v[3], "d", CB_NS_PER_MS, &ns, &err), CB_OK);
  assert_int_equal(ns, UINT64_C(60000000000));
  assert_int_equal(cb__yaml_duration("t.yaml", v[4], "bare", CB_NS_PER_MS, &ns, &err), CB_OK);
  assert_int_equal(ns, 500000000);
  assert_int_equal(cb__yaml_duration("t.yaml", v[4], "bare", CB_DURATION_UNIT_REQUIRED, &ns, &err),
                   CB_ERR_PARSE);
  assert_string_equal(err.msg, "t.yaml:5: key 'bare': expected a duration with a unit (ns, us, "
                               "ms, s, m, h), got '500'");
  assert_int_equal(cb__yaml_duration("t.yaml", v[5], "bad", CB_NS_PER_S, &ns, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "t.yaml:6: key 'bad': expected a duration such as 500ms, 2s "
                                  "or 1m, got '5parsecs'"));
  assert_int_equal(cb__yaml_fail(&err, CB_ERR_RANGE, "t.yaml", v[1], NULL, "whole: %d", 3),
                   CB_ERR_RANGE);
  assert_string_equal(err.msg, "t.yaml:2: whole: 3");
  cb__yaml_ctx y = {"t.yaml", &doc, &err};
  assert_int_equal(cb__yaml_at(&y, v[2], CB_ERR_PARSE, "at: %s", "x"), CB_ERR_PARSE);
  assert_string_equal(err.msg, "t.yaml:3: at: x");
  assert_int_equal(cb__yaml_key_at(&y, v[3], CB_ERR_RANGE, "d", "too %s", "long"), CB_ERR_RANGE);
  assert_string_equal(err.msg, "t.yaml:4: key 'd': too long");
  yaml_document_delete(&doc);
}

/* cb__yaml_section's reader: lists the names it was given (each with its "s.NAME"
 * key); fails on the value "no". */
static cb_status section_read(const cb__yaml_ctx *y, const yaml_node_t *v, const char *name,
                              const char *key, void *ctx) {
  char *names = ctx;
  assert_true(!strncmp(key, "s.", 2) && !strcmp(key + 2, name));
  snprintf(names + strlen(names), 64 - strlen(names), "%s ", name);
  if (!strcmp((const char *)v->data.scalar.value, "no"))
    return cb__yaml_key_at(y, v, CB_ERR_RANGE, key, "refused");
  return CB_OK;
}

/* A section's keys go to the reader in file order; an unknown one (a non-scalar key
 * reads as "") is named at its line with the known keys; the first error stops. */
static void test_yaml_section(void **state) {
  (void)state;
  static const char *const known[] = {"alpha", "beta", NULL};
  static const struct {
    const char *text;
    cb_status st;
    const char *read, *msg;
  } cases[] = {
      {"beta: 1\nalpha: 2\n", CB_OK, "beta alpha ", ""},
      {"alpha: 1\ngamma: 2\nbeta: 3\n", CB_ERR_PARSE, "alpha ",
       "t.yaml:2: unknown key 's.gamma' (known: alpha, beta)"},
      {"alpha: 1\n[x]: 2\n", CB_ERR_PARSE, "alpha ",
       "t.yaml:2: unknown key 's.' (known: alpha, beta)"},
      {"alpha: no\nbeta: 1\n", CB_ERR_RANGE, "alpha ", "t.yaml:1: key 's.alpha': refused"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    yaml_document_t doc;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(cb__yaml_load(cases[i].text, strlen(cases[i].text), "t.yaml", &doc, &err),
                     CB_OK);
    cb__yaml_ctx y = {"t.yaml", &doc, &err};
    char read[64] = "";
    assert_int_equal(
        cb__yaml_section(&y, yaml_document_get_root_node(&doc), "s", known, section_read, read),
        cases[i].st);
    assert_string_equal(read, cases[i].read);
    assert_string_equal(err.msg, cases[i].msg);
    yaml_document_delete(&doc);
  }
}

/* One spelling of true and false for every YAML reader (profiles took 1/0, scenarios
 * and policies did not). */
static void test_yaml_bool(void **state) {
  (void)state;
  static const char *const yes[] = {"true", "True", "YES", "on", "1"};
  static const char *const no[] = {"false", "FALSE", "no", "Off", "0"};
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(cb__yaml_bool_text(yes[i]), 1);
    assert_int_equal(cb__yaml_bool_text(no[i]), 0);
  }
  assert_int_equal(cb__yaml_bool_text("2"), -1);
  assert_int_equal(cb__yaml_bool_text("y"), -1);
  assert_int_equal(cb__yaml_bool_text(""), -1);
  const char *text = "a: maybe\nb: [true]\nc: On\n";
  yaml_document_t doc;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb__yaml_load(text, strlen(text), "b.yaml", &doc, &err), CB_OK);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  yaml_node_t *v[3];
  for (int i = 0; i < 3; i++)
    v[i] = yaml_document_get_node(&doc, root->data.mapping.pairs.start[i].value);
  int b = 7;
  assert_int_equal(cb__yaml_bool("b.yaml", v[0], "a", &b, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "b.yaml:1: key 'a': expected true or false, got 'maybe'");
  assert_int_equal(cb__yaml_bool("b.yaml", v[1], "b", &b, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "b.yaml:2: key 'b': expected a single value, got a list");
  assert_int_equal(b, 7);
  assert_int_equal(cb__yaml_bool("b.yaml", v[2], "c", &b, &err), CB_OK);
  assert_int_equal(b, 1);
  yaml_document_delete(&doc);
}

/* Every YAML reader loads through cb__yaml_load: one document, no aliases. libyaml's
 * loader took the first document and dropped the rest; an alias lets a few lines stand
 * for billions of nodes. */
static void test_yaml_load_refusals(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"rate: 5\n---\nrate: 9\n", "t.yaml:2: more than one YAML document"},
      {"a: &x [1, 2]\nb: *x\n", "t.yaml:2: YAML aliases are not supported"},
      {"a: 1\nb: 2\na: 3\n", "t.yaml:3: key 'a' repeated (first on line 1)"},
      {"a: [1\n", "t.yaml:2:1: YAML: "},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    yaml_document_t doc;
    cb_error err;
    cb_error_clear(&err);
    if (cb__yaml_load(bad[i].text, strlen(bad[i].text), "t.yaml", &doc, &err) == CB_OK) {
      yaml_document_delete(&doc);
      fail_msg("'%s' loaded", bad[i].text);
    }
    if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)))
      fail_msg("'%s': message '%s', want '%s'", bad[i].text, err.msg, bad[i].msg);
  }
  /* one document marked with --- and ... is one document */
  yaml_document_t doc;
  const char *one = "---\nrate: 5\n...\n";
  assert_int_equal(cb__yaml_load(one, strlen(one), "t.yaml", &doc, NULL), CB_OK);
  yaml_document_delete(&doc);
}

static void test_clock_span(void **state) {
  (void)state;
  assert_true(cb_clock_span_ns(10, 35) == 25);
  assert_true(cb_clock_span_ns(7, 7) == 0);
  assert_true(isnan(cb_clock_span_ns(35, 10)));
  assert_true(isnan(cb_clock_span_ns(UINT64_MAX, 0)));
}

static void test_mask_url(void **state) {
  (void)state;
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"http://user:sk-SECRET@127.0.0.1:8000/v1", "http://user:***@127.0.0.1:8000/v1"},
      {"postgresql://bench:pw@db/x?sslmode=require&password=two&a=b",
       "postgresql://bench:***@db/x?sslmode=require&password=***&a=b"},
      {"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"},
      {"http://user@host/v1", "http://user@host/v1"},
      {"http://host/v1?next=a:b@c", "http://host/v1?next=a:b@c"}, /* '@' after the path */
      {"http://u:p@ss@host/", "http://u:***@host/"},               /* the last '@' ends it */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[128];
    cb_secret_mask_url(cases[i].in, out, sizeof out);
    if (strcmp(out, cases[i].want)) fail_msg("%s: got %s, want %s", cases[i].in, out, cases[i].want);
  }
  char small[12];
  cb_secret_mask_url("http://user:sk-SECRET@h/", small, sizeof small);
  assert_null(strstr(small, "SECRET"));
}

static void test_secrets_redact(void **state) {
  (void)state;
  cb_secrets s;
  cb_secrets_init(&s);
  cb_secrets_add(&s, "sk-KEY", 6);
  cb_secrets_add(&s, "sk-KEY-LONGER", 13); /* the longest match is hidden whole */
  cb_secrets_add(&s, "ab", 2);             /* too short: not a secret worth wrecking text */
  cb_secrets_add(&s, "sk-KEY", 6);         /* duplicate */
  assert_int_equal(s.n, 2);
  cb_buf b;
  cb_buf_init(&b, 0);
  const char *in = "ab Bearer sk-KEY-LONGER, sk-KEYsk-KEY end";
  cb_secrets_redact(&s, in, strlen(in), &b);
  assert_string_equal(b.data, "ab Bearer [REDACTED], [REDACTED][REDACTED] end");
  char text[24] = "key=sk-KEY and more";
  cb_secrets_redact_str(&s, text, sizeof text);
  assert_string_equal(text, "key=[REDACTED] and more");
  /* Server text quoted in a message: redacted, a newline and an escape made harmless,
   * cut before a character that would not fit whole (é, 2 bytes). */
  char quoted[22];
  const char *said = "sk-KEY\n\x1b[2Jcaf\xC3\xA9";
  cb_secrets_quote(&s, said, strlen(said), quoted, sizeof quoted);
  assert_string_equal(quoted, "[REDACTED] \xEF\xBF\xBD[2Jcaf");
  cb_buf_free(&b);
  cb_secrets_free(&s);
  assert_int_equal(s.n, 0);
  /* A URL's password, and the Basic credentials made of it, percent-decoded. */
  cb_secrets_add_url(&s, "http://bench:p%40ss-word@127.0.0.1:8000/v1");
  assert_int_equal(s.n, 2);
  assert_string_equal(s.items[0], "p%40ss-word");
  assert_string_equal(s.items[1], "YmVuY2g6cEBzcy13b3Jk"); /* base64("bench:p@ss-word") */
  cb_secrets_free(&s);
  cb_secrets_add_url(&s, "http://127.0.0.1:8000/v1");
  assert_int_equal(s.n, 0);
}

/* Server text on a terminal: no ESC, BEL, CR, BS or C1 CSI survives. */
/* The shared lowercase table: both ends of the sorted table, a mapping to a lower code
 * point (Kelvin sign), U+0130's simple mapping, and characters with none. */
static void test_unicode_lower(void **state) {
  (void)state;
  assert_int_equal(cb__unicode_lower('A'), 'a');
  assert_int_equal(cb__unicode_lower('a'), 'a');
  assert_int_equal(cb__unicode_lower('@'), '@');
  assert_int_equal(cb__unicode_lower(0xC9), 0xE9);       /* É */
  assert_int_equal(cb__unicode_lower(0x130), 'i');       /* İ: simple mapping */
  assert_int_equal(cb__unicode_lower(0x212A), 'k');      /* KELVIN SIGN */
  assert_int_equal(cb__unicode_lower(0x3A3), 0x3C3);     /* Σ */
  assert_int_equal(cb__unicode_lower(0x1E921), 0x1E943); /* the last: ADLAM */
  assert_int_equal(cb__unicode_lower(0x1E943), 0x1E943);
  assert_int_equal(cb__unicode_lower(0x10FFFF), 0x10FFFF);
}

static void test_utf8_clean(void **state) {
  (void)state;
  const char *in = "a\x1b]0;t\x07\r\b\xC2\x9B" "1m\n\tz\xff \xE2\x88\x9E";
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_utf8_clean(&b, in, strlen(in), 1);
  assert_string_equal(b.data, "a\xEF\xBF\xBD]0;t\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                              "1m  z\xEF\xBF\xBD \xE2\x88\x9E");
  cb_buf_free(&b);
}

static void test_rng_distributions(void **state) {
  (void)state;
  cb_rng r;
  double m, v;
  cb_rng_init(&r, 12345);
  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_uniform(&r);
  moments(draws, N_DRAWS, &m, &v);
  check("uniform mean", m, 0.5, 5 * sqrt(1.0 / 12 / N_DRAWS));
  check("uniform var", v, 1.0 / 12, 0.002);

  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_exponential(&r, 4.0);
  moments(draws, N_DRAWS, &m, &v);
  check("exponential mean", m, 0.25, 5 * 0.25 / sqrt(N_DRAWS));
  check("exponential var", v, 0.0625, 0.003);

  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_normal(&r, 3.0, 2.0);
  moments(draws, N_DRAWS, &m, &v);
  check("normal mean", m, 3.0, 5 * 2.0 / sqrt(N_DRAWS));
  check("normal var", v, 4.0, 0.07);

  /* lognormal(mu, sigma): mean exp(mu + sigma^2/2). */
  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_lognormal(&r, 0.0, 0.5);
  moments(draws, N_DRAWS, &m, &v);
  check("lognormal mean", m, exp(0.125), 0.01);

  /* gamma(k, theta): mean k*theta, var k*theta^2, for k above and below 1. */
  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_gamma(&r, 2.5, 2.0);
  moments(draws, N_DRAWS, &m, &v);
  check("gamma(2.5) mean", m, 5.0, 5 * sqrt(10.0 / N_DRAWS));
  check("gamma(2.5) var", v, 10.0, 0.3);
  for (int i = 0; i < N_DRAWS; i++) draws[i] = cb_rng_gamma(&r, 0.25, 4.0);
  moments(draws, N_DRAWS, &m, &v);
  check("gamma(0.25) mean", m, 1.0, 5 * sqrt(4.0 / N_DRAWS));
  check("gamma(0.25) var", v, 4.0, 0.3);

  /* below(n) is uniform over residues. */
  int counts[7] = {0};
  for (int i = 0; i < 70000; i++) counts[cb_rng_below(&r, 7)]++;
  for (int i = 0; i < 7; i++) check("below(7) bucket", counts[i], 10000, 500);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_table),       cmocka_unit_test(test_error_location),
      cmocka_unit_test(test_buf_cap),            cmocka_unit_test(test_file_read_caps),
      cmocka_unit_test(test_json_escape),        cmocka_unit_test(test_unicode_lower),
      cmocka_unit_test(test_clock),              cmocka_unit_test(test_rng_reference_vectors),
      cmocka_unit_test(test_rng_streams),        cmocka_unit_test(test_rng_distributions),
      cmocka_unit_test(test_fnv1a64),            cmocka_unit_test(test_cps),
      cmocka_unit_test(test_duration_parse),
      cmocka_unit_test(test_yaml_nodes),
      cmocka_unit_test(test_yaml_section),
      cmocka_unit_test(test_yaml_load_refusals),
      cmocka_unit_test(test_yaml_bool),
      cmocka_unit_test(test_clock_span),         cmocka_unit_test(test_mask_url),
      cmocka_unit_test(test_secrets_redact),     cmocka_unit_test(test_utf8_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
