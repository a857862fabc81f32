/*
 * test_eval_input.c - eval score's JSONL reader (src/eval/input.c): the scanner path
 * (src/eval/jsonl_line.c) against jansson, which the reader used for every line before
 * and still uses for the lines the scanner leaves. On seeded random and adversarial
 * lines (escapes, surrogates, \u0000, ill-formed UTF-8, control bytes, numbers at the
 * overflow edges, deep nesting, repeated and escaped keys, truncation, mutated bytes)
 * a line the scanner reads must be one jansson reads to the same strings, and a line
 * it calls not JSON one jansson rejects. Then the reader itself: decoded texts, lines
 * left to jansson, and every error with its file:line.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "calibench/buf.h"
#include "calibench/eval.h"
#include "eval/jsonl_line.h"

/* --- jansson's reading of a line, as input.c's jansson path does it ------------- */

typedef struct {
  int ok; /* 1: a segment; 0: an error (not JSON, or not the shape) */
  int parsed; /* jansson parsed the line */
  const char *hyp;
  size_t hyp_n;
  const char *refs[64];
  size_t ref_n[64], nrefs;
  json_t *rec;
} ref_read;

static int ref_string(json_t *v, const char **s, size_t *n) {
  if (!json_is_string(v)) return 0;
  *s = json_string_value(v);
  *n = json_string_length(v);
  return !memchr(*s, '\0', *n);
}

static ref_read jansson_read(const char *line, size_t len, const char *field, const char *ref_field) {
  ref_read r;
  memset(&r, 0, sizeof r);
  json_error_t je;
  r.rec = json_loadb(line, len, JSON_DECODE_ANY, &je);
  if (!r.rec) return r;
  r.parsed = 1;
  if (!json_is_object(r.rec)) return r;
  json_t *h = json_object_get(r.rec, field), *f = ref_field ? json_object_get(r.rec, ref_field) : NULL;
  if (!h || (ref_field && !f) || !ref_string(h, &r.hyp, &r.hyp_n)) return r;
  if (json_is_array(f)) {
    if (!json_array_size(f) || json_array_size(f) > 64) return r;
    for (size_t k = 0; k < json_array_size(f); k++)
      if (!ref_string(json_array_get(f, k), &r.refs[k], &r.ref_n[k])) return r;
    r.nrefs = json_array_size(f);
  } else if (f) {
    if (!ref_string(f, &r.refs[0], &r.ref_n[0])) return r;
    r.nrefs = 1;
  }
  r.ok = 1;
  return r;
}

static int text_is(cb_eval_text t, const char *s, size_t n) {
  return t.n == n && (!n || !memcmp(t.s, s, n));
}

static void hexdump_fail(const char *what, const char *line, size_t len) {
  char shown[4096];
  size_t k = 0;
  for (size_t i = 0; i < len && k + 5 < sizeof shown; i++) {
    unsigned char c = (unsigned char)line[i];
    k += (size_t)snprintf(shown + k, sizeof shown - k, c >= 0x20 && c < 0x7F ? "%c" : "\\x%02X", c);
  }
  fail_msg("%s: line '%s'", what, shown);
}

/* One line through the scanner and jansson: returns the scanner's answer. */
static int agree(const char *line, size_t len, const char *field, const char *ref_field) {
  static char out[1 << 16];
  cb__eval_jsonl j = {.field = field, .ref_field = ref_field, .out = out};
  assert_true(len <= sizeof out);
  int r = cb__eval_jsonl_line(&j, line, len);
  ref_read want = jansson_read(line, len, field, ref_field);
  if (r == CB__EVAL_JSONL_OK) {
    if (!want.ok) hexdump_fail("the scanner read a line jansson does not", line, len);
    if (!text_is(j.hyp, want.hyp, want.hyp_n)) hexdump_fail("hypotheses differ", line, len);
    if (j.nrefs != want.nrefs) hexdump_fail("reference counts differ", line, len);
    for (size_t k = 0; k < want.nrefs; k++)
      if (!text_is(j.refs[k], want.refs[k], want.ref_n[k])) hexdump_fail("references differ", line, len);
    assert_true(j.out_len <= len);
  } else {
    assert_int_equal(j.out_len, 0); /* nothing kept of a line left to jansson */
    if (r == CB__EVAL_JSONL_NOT_JSON && want.parsed)
      hexdump_fail("the scanner calls not JSON a line jansson reads", line, len);
  }
  json_decref(want.rec);
  cb__eval_jsonl_free(&j);
  return r;
}

/* --- the generator ------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static size_t pick(size_t n) { return (size_t)(rnd() % n); }

typedef struct {
  char s[1 << 14];
  size_t n;
} gen;

static void put(gen *g, const char *s) {
  size_t n = strlen(s);
  if (g->n + n < sizeof g->s) {
    memcpy(g->s + g->n, s, n);
    g->n += n;
  }
}

/* Each choice takes one of its good pieces, or one of its bad ones 1 time in 40. */
#define PICK(good, bad)                                                                  \
  (pick(40) ? good[pick(sizeof good / sizeof *good)] : bad[pick(sizeof bad / sizeof *bad)])

static const char *const STRING_GOOD[] = {
    "a", "word ", "Hello, world.", " ", "\\n", "\\t", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r",
    "\\u00e9", "\\u00E9", "\\u4e2d", "\\ud83d\\ude00", "\\uD83D\\uDE00", "\\u001f", "caf\xC3\xA9",
    "\xE4\xB8\xAD\xE6\x96\x87", "\xF0\x9F\x98\x80", "\x7F", "h", "r", "\xC2\xA0", "\xEF\xBF\xBF",
    "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF",
};
static const char *const STRING_BAD[] = {
    "\\ud83d", "\\ude00", "\\ud83dx", "\\ud83d\\u0041", "\\u0000", "\\u12", "\\uZZZZ", "\\x", "\\",
    "\\'", "\xC0\x80", "\xC3", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF", "\x01",
    "\x1F", "\t", "\"",
};

static void gen_string(gen *g) {
  put(g, "\"");
  for (size_t k = pick(6); k; k--) put(g, PICK(STRING_GOOD, STRING_BAD));
  put(g, "\"");
}

static const char *const NUMBER_GOOD[] = {
    "0", "-0", "1", "-1", "12", "3.5", "-0.25", "1e5", "1E+2", "2e-400", "1e308", "0.0e0",
    "123456789012345678", "-123456789012345678",
};
static const char *const NUMBER_BAD[] = {
    "1e309", "1e400", "-1e400", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "1234567890123456789", "01", "1.", ".5", "-", "1e", "+1", "0x10", "1.5e",
    "NaN", "Infinity", "00",
};
static const char *const WS_GOOD[] = {"", "", "", " ", "\t", "\r", "  \r", "\n"};
static const char *const WS_BAD[] = {"\v", "\xC2\xA0", "\f"};
#define WS() PICK(WS_GOOD, WS_BAD)

static void gen_value(gen *g, int depth);

static void gen_key(gen *g) {
  static const char *const GOOD[] = {"\"h\"", "\"r\"", "\"x\"", "\"\"", "\"r \"", "\"\xC3\xA9\"", "\"H\""};
  static const char *const BAD[] = {"\"\\u0068\"", "\"h\\u0000\"", "h", "\"h", "\"\\ud800\"", "\"\\u0072\""};
  put(g, PICK(GOOD, BAD));
}

static void gen_container(gen *g, int depth, int object) {
  put(g, object ? "{" : "[");
  for (size_t k = pick(5), first = 1; k; k--, first = 0) {
    if (!first) put(g, pick(40) ? "," : "");
    put(g, WS());
    if (object) {
      gen_key(g);
      put(g, WS());
      put(g, pick(40) ? ":" : "");
    }
    gen_value(g, depth + 1);
    put(g, WS());
  }
  if (!pick(40)) put(g, ",");
  put(g, object ? "}" : "]");
}

static void gen_value(gen *g, int depth) {
  put(g, WS());
  switch (depth > 4 ? pick(3) : pick(7)) {
    case 0:
    case 1: gen_string(g); break;
    case 2: put(g, PICK(NUMBER_GOOD, NUMBER_BAD)); break;
    case 3: {
      static const char *const GOOD[] = {"true", "false", "null"};
      static const char *const BAD[] = {"tru", "nul", "True", "nullx", "falsee"};
      put(g, PICK(GOOD, BAD));
      break;
    }
    case 4:
    case 5: gen_container(g, depth, 0); break;
    default: gen_container(g, depth, 1); break;
  }
}

/* A record with the wanted keys most of the time, then maybe damaged. */
static void gen_line(gen *g) {
  g->n = 0;
  if (!pick(25)) { /* a deep nest: the scanner's depth limit is 64, jansson's 2048 */
    size_t d = 50 + pick(40);
    put(g, "{\"h\":\"a\",\"r\":\"b\",\"x\":");
    for (size_t i = 0; i < d; i++) put(g, "[");
    for (size_t i = 0; i < d; i++) put(g, "]");
    put(g, "}");
    return;
  }
  if (!pick(20)) {
    gen_value(g, 0);
  } else {
    put(g, "{");
    /* h and r once each, mostly; other members around them; now and then one twice. */
    size_t others = pick(4), members = others + 2 + (pick(20) ? 0 : 1);
    size_t at_h = pick(members), at_r = pick(members);
    for (size_t k = 0; k < members; k++) {
      if (k) put(g, ",");
      put(g, WS());
      int want_h = k == at_h || (k == members - 1 && members > others + 2 && pick(2));
      int want_r = !want_h && (k == at_r || (k == members - 1 && members > others + 2));
      if (want_h && !pick(30)) want_h = 0; /* missing */
      if (want_h) {
        put(g, "\"h\":");
        if (pick(30)) gen_string(g);
        else gen_value(g, 1);
      } else if (want_r) {
        put(g, "\"r\":");
        if (pick(2)) {
          gen_string(g);
        } else if (pick(20)) {
          put(g, "[");
          for (size_t m = pick(4), first = 1; m; m--, first = 0) {
            if (!first) put(g, ",");
            if (pick(30)) gen_string(g);
            else gen_value(g, 2);
          }
          put(g, "]");
        } else {
          gen_value(g, 1);
        }
      } else {
        gen_key(g);
        put(g, ":");
        gen_value(g, 1);
      }
      put(g, WS());
    }
    put(g, "}");
  }
  put(g, WS());
  if (!pick(30)) put(g, pick(2) ? "x" : "{}");
  size_t damage = pick(4) ? 0 : 1 + pick(3);
  static const char BYTES[] = "\"\\{}[],:0 \x80\xC3\xFF\x01u";
  for (size_t k = 0; k < damage && g->n; k++) {
    size_t at = pick(g->n);
    switch (pick(3)) {
      case 0: g->s[at] = BYTES[pick(sizeof BYTES - 1)]; break;
      case 1: memmove(g->s + at, g->s + at + 1, g->n - at - 1); g->n--; break;
      default: g->n = at; break; /* truncated */
    }
  }
}

static void test_random_lines_agree_with_jansson(void **state) {
  (void)state;
  rng_state = 20261203;
  gen *g = malloc(sizeof *g);
  size_t counts[3] = {0};
  static const char *const FIELDS[][2] = {{"h", "r"}, {"h", NULL}, {"h", "h"}, {"r", "h"}};
  for (int i = 0; i < 60000; i++) {
    gen_line(g);
    if (!g->n) continue;
    size_t f = i % 8 < 5 ? 0 : 1 + (size_t)(i % 3);
    counts[agree(g->s, g->n, FIELDS[f][0], FIELDS[f][1])]++;
  }
  free(g);
  print_message("scanner: %zu read, %zu not JSON, %zu left to jansson\n", counts[0], counts[1], counts[2]);
  /* Each answer is given often enough for the comparison to mean something. */
  assert_true(counts[CB__EVAL_JSONL_OK] > 5000);
  assert_true(counts[CB__EVAL_JSONL_NOT_JSON] > 5000);
  assert_true(counts[CB__EVAL_JSONL_JANSSON] > 5000);
}

/* Lines written to stand at each edge the scanner decides on. */
static void test_edge_lines(void **state) {
  (void)state;
  static const struct {
    const char *line;
    int want; /* the scanner's answer */
  } cases[] = {
      {"{\"h\":\"a b\",\"r\":\"a\"}", CB__EVAL_JSONL_OK},
      {" {\"r\" : [\"x\", \"y\\u00e9\"] , \"h\":\"\\ud83d\\ude00\\n\"} \r", CB__EVAL_JSONL_OK},
      {"{\"h\":\"\",\"r\":\"\",\"n\":[1,-2.5e3,true,false,null,{\"k\\u0041\":{}}]}", CB__EVAL_JSONL_OK},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":123456789012345678}", CB__EVAL_JSONL_OK},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":1234567890123456789}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":1e400}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":\"\\u0000\"}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\\u0000\",\"r\":\"b\"}", CB__EVAL_JSONL_JANSSON},
      {"{\"\\u0068\":\"a\",\"r\":\"b\"}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"h\":\"c\",\"r\":\"b\"}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"r\":[]}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"r\":[\"b\",1]}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":2,\"r\":\"b\"}", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\"}", CB__EVAL_JSONL_JANSSON},
      {"[\"h\"]", CB__EVAL_JSONL_JANSSON},
      {"\"h\"", CB__EVAL_JSONL_JANSSON},
      {"{\"h\":\"a\",\"r\":\"b\"", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\",\"r\":\"b\"} x", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\\ud800\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\\udc00\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"\xED\xA0\x80\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"\xC0\xAF\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\tb\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":01}", CB__EVAL_JSONL_NOT_JSON},
      {"{\"h\":\"a\",\"r\":\"b\",}", CB__EVAL_JSONL_NOT_JSON},
      {"\xEF\xBB\xBF{\"h\":\"a\",\"r\":\"b\"}", CB__EVAL_JSONL_NOT_JSON},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int got = agree(cases[i].line, strlen(cases[i].line), "h", "r");
    if (got != cases[i].want) fail_msg("case %zu (%s): the scanner says %d, expected %d", i, cases[i].line, got, cases[i].want);
  }
  /* A raw NUL byte (jansson reads "0\0" as the number 0): the line is jansson's. Found
   * by fuzz_eval_jsonl. */
  static const char nul_number[] = "0", nul_object[] = "{\"h\":\"a\",\"r\":\"b\"}";
  assert_int_equal(agree(nul_number, sizeof nul_number, "h", "r"), CB__EVAL_JSONL_JANSSON);
  assert_int_equal(agree(nul_object, sizeof nul_object, "h", "r"), CB__EVAL_JSONL_JANSSON);
}

/* --- the reader ------------------------------------------------------------------ */

static char path[64];

static void write_file(const char *text) {
  snprintf(path, sizeof path, "/tmp/cb-test-eval-input-%d.jsonl", (int)getpid());
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_reader_texts(void **state) {
  (void)state;
  cb_eval_corpus c;
  cb_error err = {0};
  write_file("{\"h\":\"caf\\u00e9 \\\"q\\\"\\n\",\"r\":[\"a\\/b\",\"\\uD83D\\uDE00\"]}\n"
             "\n  \t\n"
             "{\"r\":\"x\",\"h\":\"plain\"}\n"
             "{\"h\":\"a\",\"h\":\"wins\",\"r\":\"z\"}"); /* a repeated key: jansson keeps the last */
  cb_status st = cb_eval_read_jsonl(&c, path, "h", "r", &err);
  if (st) fail_msg("%s", err.msg);
  assert_int_equal(c.n, 3);
  assert_true(text_is(c.segs[0].hyp, "caf\xC3\xA9 \"q\"\n", 10));
  assert_int_equal(c.segs[0].nrefs, 2);
  assert_true(text_is(c.segs[0].refs[0], "a/b", 3));
  assert_true(text_is(c.segs[0].refs[1], "\xF0\x9F\x98\x80", 4));
  assert_true(text_is(c.segs[1].hyp, "plain", 5));
  assert_true(text_is(c.segs[1].refs[0], "x", 1));
  assert_true(text_is(c.segs[2].hyp, "wins", 4));
  assert_true(text_is(c.segs[2].refs[0], "z", 1));
  assert_int_equal(c.nrefs_min, 1);
  assert_int_equal(c.nrefs_max, 2);
  /* Only the line with the repeated key went to jansson. */
  assert_non_null(c.json);
  assert_int_equal(json_array_size(c.json), 1);
  cb_eval_corpus_free(&c);

  write_file("{\"h\":\"a\",\"r\":\"b\"}\n{\"h\":\"c\"}\n");
  st = cb_eval_read_jsonl(&c, path, "h", NULL, &err); /* no references read */
  if (st) fail_msg("%s", err.msg);
  assert_int_equal(c.n, 2);
  assert_int_equal(c.segs[1].nrefs, 0);
  assert_null(c.json); /* the scanner read every line */
  cb_eval_corpus_free(&c);
  remove(path);
}

/* Every error: the message, and the file and line it names. */
static void test_reader_errors(void **state) {
  (void)state;
  static const struct {
    const char *second_line, *want;
  } cases[] = {
      {"{\"h\":", ":2:5: not JSON: unexpected token near end of file"},
      {"[1]", ":2: expected a JSON object"},
      {"{\"x\":\"a\"}", ":2: no field 'h' (--field)"},
      {"{\"h\":\"a\"}", ":2: no field 'r' (--ref-field)"},
      {"{\"h\":1,\"r\":\"a\"}", ":2: h: expected a string"},
      {"{\"h\":\"a\",\"r\":[]}", ":2: r: an empty list: a segment needs a reference"},
      {"{\"h\":\"a\",\"r\":[\"a\",null]}", ":2: r: expected a string"},
      {"{\"h\":\"a\",\"r\":{}}", ":2: r: expected a string"},
      {"{\"h\":\"a\\u0000\",\"r\":\"a\"}", ":2:14: not JSON: \\u0000 is not allowed without JSON_ALLOW_NUL"},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":1e400}", ":2:26: not JSON: real number overflow"},
      {"{\"h\":\"a\",\"r\":\"b\",\"n\":99999999999999999999}", ":2:41: not JSON: too big integer"},
      {"{\"h\":\"\xFF\",\"r\":\"a\"}", ":2:6: not JSON: unable to decode byte 0xff"},
      {"{\"h\":\"a\",\"r\":\"b\"} {}", ":2:19: not JSON: end of file expected"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char text[256];
    snprintf(text, sizeof text, "{\"h\":\"x\",\"r\":\"y\"}\n%s\n{\"h\":\"z\",\"r\":\"w\"}\n", cases[i].second_line);
    write_file(text);
    cb_eval_corpus c;
    cb_error err = {0};
    assert_int_not_equal(cb_eval_read_jsonl(&c, path, "h", "r", &err), CB_OK);
    char want[512];
    snprintf(want, sizeof want, "%s%s", path, cases[i].want);
    if (strncmp(err.msg, want, strlen(want)))
      fail_msg("case %zu: '%s', expected it to start with '%s'", i, err.msg, want);
    assert_null(c.segs); /* nothing kept of a corpus that failed */
  }
  write_file("\n \n");
  cb_eval_corpus c;
  cb_error err = {0};
  assert_int_not_equal(cb_eval_read_jsonl(&c, path, "h", "r", &err), CB_OK);
  assert_non_null(strstr(err.msg, "no segments: no JSON records"));
  remove(path);
}

/* The reader takes the file 64 KiB at a time and keeps only the decoded strings: lines
 * cut by a chunk's end (lines of up to 200 KB, escapes on both sides of every 64 KiB
 * boundary), read from the file and from a pipe, whose strings outgrow the first 1 MiB
 * buffer (earlier texts must stay where they are); and a record's error followed by a
 * NUL byte further on: the file's error is the one said, as when the whole file was
 * read before any record. */
static char *stream_text(size_t *len, size_t *n_lines) {
  cb_buf b;
  cb_buf_init(&b, 0);
  size_t i = 0;
  for (; b.len < (size_t)3 << 20; i++) {
    size_t pad = i % 7 == 3 ? 50000 + i * 997 % 150000 : i * 131 % 300;
    cb_buf_appendf(&b, "{\"h\":\"h%zu\\n", i);
    for (size_t k = 0; k < pad; k++) cb_buf_append_char(&b, (char)('a' + (i + k) % 26));
    cb_buf_appendf(&b, "\",\"r\":[\"r%zu\",\"\\u00e9%zu\"]}\n", i, i);
  }
  *len = b.len;
  *n_lines = i;
  return b.data;
}

static void check_stream(const cb_eval_corpus *c, size_t n_lines) {
  assert_int_equal(c->n, n_lines);
  for (size_t i = 0; i < n_lines; i++) {
    size_t pad = i % 7 == 3 ? 50000 + i * 997 % 150000 : i * 131 % 300;
    char head[32], r0[32], r1[32];
    int hn = snprintf(head, sizeof head, "h%zu\n", i);
    const cb_eval_segment *s = &c->segs[i];
    if (s->hyp.n != (size_t)hn + pad || memcmp(s->hyp.s, head, (size_t)hn))
      fail_msg("line %zu: hypothesis of %zu bytes, expected %zu", i + 1, s->hyp.n, (size_t)hn + pad);
    for (size_t k = 0; k < pad; k++)
      if (s->hyp.s[hn + k] != (char)('a' + (i + k) % 26)) fail_msg("line %zu: byte %zu differs", i + 1, k);
    int n0 = snprintf(r0, sizeof r0, "r%zu", i), n1 = snprintf(r1, sizeof r1, "\xC3\xA9%zu", i);
    assert_int_equal(s->nrefs, 2);
    assert_true(text_is(s->refs[0], r0, (size_t)n0));
    assert_true(text_is(s->refs[1], r1, (size_t)n1));
  }
}

typedef struct {
  int fd;
  const char *text;
  size_t len;
} pipe_writer;

static void *write_pipe(void *arg) {
  pipe_writer *w = arg;
  for (size_t at = 0; at < w->len;) {
    ssize_t n = write(w->fd, w->text + at, w->len - at < 4096 ? w->len - at : 4096);
    if (n <= 0) break;
    at += (size_t)n;
  }
  close(w->fd);
  return NULL;
}

static void test_reader_streams(void **state) {
  (void)state;
  size_t len, n_lines;
  char *text = stream_text(&len, &n_lines);
  write_file(text);
  cb_eval_corpus c;
  cb_error err = {0};
  if (cb_eval_read_jsonl(&c, path, "h", "r", &err)) fail_msg("%s", err.msg);
  check_stream(&c, n_lines);
  assert_int_equal(c.nbufs, 1); /* a regular file: room for all of it from the start */
  cb_eval_corpus_free(&c);

  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pipe_writer w = {fds[1], text, len};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, write_pipe, &w), 0);
  char dev[32];
  snprintf(dev, sizeof dev, "/dev/fd/%d", fds[0]);
  cb_status st = cb_eval_read_jsonl(&c, dev, "h", "r", &err);
  pthread_join(th, NULL);
  close(fds[0]);
  if (st) fail_msg("%s", err.msg);
  check_stream(&c, n_lines);
  assert_true(c.nbufs > 1); /* the strings outgrew the first buffer */
  cb_eval_corpus_free(&c);
  free(text);

  write_file("{\"h\":\"x\",\"r\":\"y\"}\n{\"h\":\n{\"h\":\"z\",\"r\":\"w\"}\n");
  FILE *f = fopen(path, "ab");
  assert_non_null(f);
  for (int i = 0; i < 2000; i++) /* 220 KB more: the NUL byte comes chunks later */
    fprintf(f, "{\"h\":\"%090d\",\"r\":\"w\"}\n", i);
  fputs("{\"h\":\"a", f);
  fputc('\0', f);
  fputs("\",\"r\":\"b\"}\n", f);
  fclose(f);
  assert_int_equal(cb_eval_read_jsonl(&c, path, "h", "r", &err), CB_ERR_PARSE);
  char want[128];
  snprintf(want, sizeof want, "%s:2004: a NUL byte: not a text file", path);
  assert_string_equal(err.msg, want);
  assert_null(c.segs);
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_lines_agree_with_jansson),
      cmocka_unit_test(test_edge_lines),
      cmocka_unit_test(test_reader_texts),
      cmocka_unit_test(test_reader_errors),
      cmocka_unit_test(test_reader_streams),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
