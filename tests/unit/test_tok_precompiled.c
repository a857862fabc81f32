/*
 * test_tok_precompiled.c - the Precompiled normalizer's charsmap reader on charsmaps
 * built here unit by unit (precompiled.c documents the format): a key found, its
 * replacement, the shortest prefix of a grapheme cluster winning, characters of a long
 * cluster looked up one by one; and charsmaps whose indexes point past the trie or the
 * strings, or into the middle of a character, which must count as "not found" (run
 * under ASan, an out-of-bounds read fails here). Ids against Hugging Face tokenizers
 * on real charsmaps: tests/integration/test_tokenize_normalizers.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "tok/tok_internal.h"

/* base64 of n bytes (RFC 4648), NUL-terminated, freed by the caller. */
static char *b64(const unsigned char *p, size_t n) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = cb_malloc(4 * (n / 3 + 1) + 1), *o = out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    *o++ = abc[v >> 18];
    *o++ = abc[(v >> 12) & 63];
    *o++ = i + 1 < n ? abc[(v >> 6) & 63] : '=';
    *o++ = i + 2 < n ? abc[v & 63] : '=';
  }
  *o = 0;
  return out;
}

/* A charsmap blob: the units, then the strings (n_str bytes). */
static char *blob(const uint32_t *units, size_t n_units, const char *str, size_t n_str) {
  size_t n = 4 + 4 * n_units + n_str;
  unsigned char *b = cb_malloc(n);
  uint32_t size = (uint32_t)(4 * n_units);
  for (int k = 0; k < 4; k++) b[k] = (unsigned char)(size >> (8 * k));
  for (size_t i = 0; i < n_units; i++)
    for (int k = 0; k < 4; k++) b[4 + 4 * i + (size_t)k] = (unsigned char)(units[i] >> (8 * k));
  memcpy(b + 4 + 4 * n_units, str, n_str);
  char *s = b64(b, n);
  cb_free(b);
  return s;
}

#define LEAF (1u << 8)
#define OFF(o) ((uint32_t)(o) << 10)
#define VALUE(v) ((1u << 31) | (uint32_t)(v))

/* A trie of the keys "e" -> "E" and "e" U+0301 -> "X", "\r" -> " ": the root's children
 * sit at 1 ^ byte; each leaf's value at its own position ^ 1. */
static void build(uint32_t *u, size_t n) {
  memset(u, 0, n * sizeof *u);
  u[0] = OFF(1);
  size_t e = 1 ^ 'e', cr = 1 ^ '\r';
  u[e] = 'e' | LEAF | OFF(1);   /* "e": has a leaf, children at e ^ 1 */
  u[e ^ 1] = VALUE(0);          /* "E" at 0 */
  size_t c1 = (e ^ 1) ^ 0xCC;   /* U+0301 is CC 81 */
  u[c1] = 0xCC | OFF(2);
  size_t c2 = c1 ^ 2 ^ 0x81;
  u[c2] = 0x81 | LEAF | OFF(1);
  u[c2 ^ 1] = VALUE(2);         /* "X" at 2 */
  u[cr] = '\r' | LEAF | OFF(0x100 ^ cr);
  u[0x100] = VALUE(4);          /* " " at 4 */
}

static void expect_norm(const cb__charsmap *m, const char *in, const char *want) {
  cb_buf out;
  cb_buf_init(&out, 0);
  cb__precompiled(m, in, strlen(in), &out);
  if (out.len != strlen(want) || memcmp(out.data, want, out.len))
    fail_msg("Precompiled('%s') = '%.*s', want '%s'", in, (int)out.len, out.data, want);
  cb_buf_free(&out);
}

static void test_lookup(void **state) {
  (void)state;
  uint32_t u[0x200];
  build(u, 0x200);
  char *s = blob(u, 0x200, "E\0X\0 \0", 6);
  cb__charsmap m;
  cb_error err;
  assert_int_equal(cb__charsmap_load(&m, s, "t.json", &err), CB_OK);
  expect_norm(&m, "", "");
  expect_norm(&m, "abc", "abc");
  expect_norm(&m, "hello", "hEllo");
  /* "e" U+0301 is one cluster of 3 bytes: its shortest key "e" wins, the mark goes */
  expect_norm(&m, "e\xCC\x81", "E");
  /* CR LF is one cluster: "\r" is its shortest key, LF goes; a lone CR is a space */
  expect_norm(&m, "a\r\nb\rc", "a b c");
  /* a cluster of 6 bytes or more: each character on its own, the mark kept */
  expect_norm(&m, "e\xCC\x81\xCC\x81\xCC\x81", "E\xCC\x81\xCC\x81\xCC\x81");
  cb__charsmap_free(&m);
  cb_free(s);
}

/* Indexes past the trie or the strings, and a replacement starting inside a
 * character: not found, the text kept. */
static void test_malformed(void **state) {
  (void)state;
  uint32_t u[0x200];
  cb__charsmap m;
  cb_error err;
  const struct {
    size_t at;
    uint32_t unit;
    const char *want;
  } cases[] = {
      {0, OFF(0x3FFFFF), "hello \r"},          /* the root's children past the trie */
      {1 ^ 'e', 'e' | LEAF | OFF(0x7FFF), "hello  "}, /* the value past the trie */
      {1 ^ 'e' ^ 1, VALUE(1000), "hello  "},   /* a replacement past the strings */
      {1 ^ 'e' ^ 1, VALUE(7), "hello  "},      /* a replacement inside "é" */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    build(u, 0x200);
    u[cases[k].at] = cases[k].unit;
    char *s = blob(u, 0x200, "E\0X\0 \0\xC3\xA9", 8);
    assert_int_equal(cb__charsmap_load(&m, s, "t.json", &err), CB_OK);
    expect_norm(&m, "hello \r", cases[k].want);
    cb__charsmap_free(&m);
    cb_free(s);
  }
  /* random tries over random text: nothing read out of bounds (ASan) and the output
   * is valid UTF-8 */
  uint64_t rng = 7;
  cb_buf out;
  cb_buf_init(&out, 0);
  for (int round = 0; round < 2000; round++) {
    size_t n = 1 + cb_splitmix64(&rng) % 64;
    for (size_t i = 0; i < n; i++) {
      uint32_t r = (uint32_t)cb_splitmix64(&rng);
      u[i] = (r & 0x3FF) | OFF((r >> 10) % 128) | (r & (1u << 31));
    }
    char *s = blob(u, n, "ab\0\xC3\xA9\0c", 7);
    assert_int_equal(cb__charsmap_load(&m, s, "t.json", &err), CB_OK);
    const char *text = "e\xCC\x81 ab\r\n\xEF\xAC\x81 \xF0\x9F\x98\x80 z";
    cb_buf_reset(&out);
    cb__precompiled(&m, text, strlen(text), &out);
    assert_int_equal(cb__utf8_valid_prefix(out.data, out.len), out.len);
    cb__charsmap_free(&m);
    cb_free(s);
  }
  cb_buf_free(&out);
}

/* What cannot be a charsmap fails to load with the reason. */
static void test_load_errors(void **state) {
  (void)state;
  const struct {
    const char *b64, *why;
  } cases[] = {
      {"!!!", "is not base64"},
      {"AAE=", "shorter than its 4-byte trie size"},
      {"CAAAAAAAAAA=", "shorter than the trie size it gives"},
      {"AwAAAA==", "has an empty trie"},
      {"BAAAAAAAAAD/", "not UTF-8"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    cb__charsmap m;
    cb_error err;
    assert_int_equal(cb__charsmap_load(&m, cases[k].b64, "t.json", &err), CB_ERR_PARSE);
    if (!strstr(err.msg, cases[k].why) || !strstr(err.msg, "t.json"))
      fail_msg("'%s': message '%s' lacks '%s'", cases[k].b64, err.msg, cases[k].why);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lookup),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_load_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
