/*
 * test_tok_text.c - the text layer under the tokenizers: invalid UTF-8 replaced by
 * maximal subparts (what node's and Rust's decoders give the references), Unicode
 * NFC (decomposition, reordering, composition, Hangul, exclusions), the quick check
 * that lets NFC text skip it, and the GPT-2 byte map.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tok/tok_internal.h"

static void expect_bytes(const char *label, const char *in, const cb_buf *got, const char *want) {
  if (got->len != strlen(want) || memcmp(got->data, want, got->len)) {
    fprintf(stderr, "%s of", label);
    for (const char *p = in; *p; p++) fprintf(stderr, " %02X", (unsigned char)*p);
    fprintf(stderr, "\n  want:");
    for (const char *p = want; *p; p++) fprintf(stderr, " %02X", (unsigned char)*p);
    fprintf(stderr, "\n  got: ");
    for (size_t i = 0; i < got->len; i++) fprintf(stderr, " %02X", (unsigned char)got->data[i]);
    fprintf(stderr, "\n");
    fail();
  }
}

#define R "\xEF\xBF\xBD"

static void test_sanitize(void **state) {
  (void)state;
  /* Expected values follow Unicode's "maximal subpart" practice (Table 3-8), which
   * node's TextDecoder and Rust's from_utf8_lossy implement. */
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain", "plain"},
      {"caf\xC3\xA9", "caf\xC3\xA9"},
      {"\x80", R},
      {"a\xC3", "a" R},
      {"\xC3x", R "x"},
      {"\xE2\x82x", R "x"},
      {"\xF0\x9F\x98", R},
      {"\xF0\x9F\x98x", R "x"},
      {"\xC0\x80", R R},
      {"\xC1\xBF", R R},
      {"\xE0\x80\x80", R R R},
      {"\xED\xA0\x80", R R R},
      {"\xF4\x90\x80\x80", R R R R},
      {"\xF5\x80", R R},
      {"\xFF\xFE", R R},
      {"\xE0\xA0\x80", "\xE0\xA0\x80"},
      {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
      {"\xF0\x90\x80\x80", "\xF0\x90\x80\x80"},
      {"\xE4\xBD\xA0\xE5\xA5", "\xE4\xBD\xA0" R},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_buf out;
    cb_buf_init(&out, 0);
    cb__utf8_sanitize(cases[i].in, strlen(cases[i].in), &out);
    expect_bytes("sanitize", cases[i].in, &out, cases[i].out);
    int valid = !strcmp(cases[i].in, cases[i].out);
    assert_int_equal(cb__utf8_valid_prefix(cases[i].in, strlen(cases[i].in)) == strlen(cases[i].in), valid);
    cb_buf_free(&out);
  }
}

static void test_nfc(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"e\xCC\x81", "\xC3\xA9"},                             /* e + acute -> é */
      {"A\xCC\x8A", "\xC3\x85"},                             /* A + ring -> Å */
      {"\xE2\x84\xAB", "\xC3\x85"},                          /* ANGSTROM SIGN (singleton) -> Å */
      {"\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81"}, /* Hangul L V T -> 각 */
      {"\xEA\xB0\x80\xE1\x86\xA8", "\xEA\xB0\x81"},          /* LV + T -> LVT */
      {"q\xCC\x87\xCC\xA3", "q\xCC\xA3\xCC\x87"},            /* reordered by class, no composite */
      {"\xE1\xB8\x8B\xCC\xA3", "\xE1\xB8\x8D\xCC\x87"},      /* ḋ + dot below -> ḍ + dot above */
      {"\xE0\xA5\x98", "\xE0\xA4\x95\xE0\xA4\xBC"},          /* U+0958 is excluded from composition */
      {"a\xCC\x80\xCC\x81", "\xC3\xA0\xCC\x81"},             /* à then a blocked-free acute stays */
      {"\xCC\x81" "e", "\xCC\x81" "e"},                      /* a leading mark stays */
      {"plain ascii", "plain ascii"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_buf out;
    cb_buf_init(&out, 0);
    cb__nfc(cases[i].in, strlen(cases[i].in), &out);
    expect_bytes("nfc", cases[i].in, &out, cases[i].out);
    cb_buf_free(&out);
  }
  assert_true(cb__nfc_quick_yes("plain \xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80", 17));
  assert_false(cb__nfc_quick_yes("e\xCC\x81", 3));
  assert_false(cb__nfc_quick_yes("\xE1\x85\xA1", 3)); /* a Hangul vowel can compose */
}

static void test_byte_map(void **state) {
  (void)state;
  assert_int_equal(cb__byte_to_unicode('a'), 'a');
  assert_int_equal(cb__byte_to_unicode(' '), 0x120); /* Ġ */
  assert_int_equal(cb__byte_to_unicode('\n'), 0x10A); /* Ċ */
  assert_int_equal(cb__byte_to_unicode(0xAD), 0x143);
  for (int b = 0; b < 256; b++) assert_int_equal(cb__unicode_to_byte(cb__byte_to_unicode((uint8_t)b)), b);
  assert_int_equal(cb__unicode_to_byte(' '), -1);
  assert_int_equal(cb__unicode_to_byte(0x2581), -1);
  assert_true(cb__is_white_space(0x3000));
  assert_false(cb__is_white_space(0x180E)); /* not White_Space since Unicode 6.3 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sanitize),
      cmocka_unit_test(test_nfc),
      cmocka_unit_test(test_byte_map),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
