/*
 * test_tok_unigram.c - tokenizer.json Unigram models on a small vocabulary with chosen
 * scores: the Viterbi path of highest total score (not the longest first piece), a tie
 * kept by the path that reached the node first, characters no piece covers scored as the unknown
 * token at min_score - 10 and fused into one, byte fallback for them, and the load
 * errors. Id-for-id agreement with Hugging Face tokenizers on a 32,000-piece vocabulary:
 * tests/integration/test_tokenize_variants.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/tok.h"
#include "test_skip.h"

static cb_tok *load(const char *model_extra) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, %s \"vocab\": ["
           "[\"<unk>\", 0.0], [\"a\", -1.0], [\"b\", -1.0], [\"ab\", -1.5], [\"abc\", -4.0],"
           " [\"c\", -1.0], [\"bc\", -0.5], [\"x\", -3.0], [\"xy\", -6.0], [\"y\", -3.0],"
           " [\"<0xC3>\", 0.0], [\"<0xA9>\", 0.0], [\"d\", -2]]}}",
           model_extra);
  cb_tok *tok;
  cb_error err;
  cb_error_clear(&err);
  if (cb_tok_load_hf_json_mem("uni.json", json, strlen(json), &tok, &err) != CB_OK)
    fail_msg("load: %s", err.msg);
  assert_int_equal(cb_tok_kind_of(tok), CB_TOK_KIND_HF_UNIGRAM);
  return tok;
}

static void expect(const cb_tok *tok, const char *text, const char *want) {
  cb_tok_ids ids = {0};
  cb_error err;
  assert_int_equal(cb_tok_encode(tok, text, strlen(text), NULL, &ids, &err), CB_OK);
  char got[256] = "";
  for (size_t i = 0; i < ids.len; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u", i ? " " : "", ids.ids[i]);
  if (strcmp(got, want)) fail_msg("'%s': ids '%s', want '%s'", text, got, want);
  cb_tok_ids_free(&ids);
}

static void test_viterbi(void **state) {
  (void)state;
  cb_tok *tok = load("");
  expect(tok, "ab", "3");      /* ab -1.5 beats a + b = -2 */
  expect(tok, "abc", "1 6");   /* a + bc = -1.5 beats ab + c = -2.5 and abc = -4 */
  expect(tok, "xy", "8");      /* tie at -6 with x + y: xy reached the end first and stays */
  expect(tok, "d", "12");      /* integer scores are scores too */
  expect(tok, "zz", "0");      /* uncovered characters: one fused <unk> */
  expect(tok, "azzb", "1 0 2");
  expect(tok, "z\xC3\xA9", "0"); /* no byte fallback: still <unk> */
  cb_tok_free(tok);
}

static void test_unknown_penalty(void **state) {
  (void)state;
  cb_tok *tok = load("");
  /* min score -6, so an unknown character costs -16: "x" (-3) is always taken over it,
   * and "ab" + <unk> is the path for "abq" */
  expect(tok, "abq", "3 0");
  cb_tok_free(tok);
}

static void test_byte_fallback(void **state) {
  (void)state;
  cb_tok *tok = load("\"byte_fallback\": true,");
  expect(tok, "a\xC3\xA9", "1 10 11"); /* é = C3 A9: both byte pieces exist */
  expect(tok, "az", "1 0");            /* no <0x7A>: the unknown id */
  cb_tok_free(tok);
}

/* T5's normalizer step: runs of spaces become one (Replace with a Regex pattern) */
static void test_replace_regex(void **state) {
  (void)state;
  const char *json =
      "{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \" {2,}\"}, \"content\": \"-\"},"
      " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"<unk>\", 0], [\"a\", -1], [\"-\", -1], [\" \", -1]]}}";
  cb_tok *tok;
  cb_error err;
  assert_int_equal(cb_tok_load_hf_json_mem("t5.json", json, strlen(json), &tok, &err), CB_OK);
  expect(tok, "a   a a", "1 2 1 3 1");
  expect(tok, "  a  ", "2 1 2");
  cb_tok_free(tok);
}

static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *json, *want;
    cb_status st;
  } cases[] = {
      {"{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 0.0]]}}", "needs an unk_id in [0, 1)", CB_ERR_UNSUPPORTED},
      {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 1, \"vocab\": [[\"a\", 0.0]]}}", "unk_id in [0, 1)", CB_ERR_UNSUPPORTED},
      {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": {}}}", "needs a 'vocab' array", CB_ERR_PARSE},
      {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": []}}", "vocab needs 1 to", CB_ERR_PARSE},
      {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", \"x\"]]}}", "entry 0 is not [piece, score]", CB_ERR_PARSE},
      {"{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", 0], [\"a\", 1]]}}", "piece 'a' is listed twice", CB_ERR_PARSE},
      {"{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \" *\"}, \"content\": \"\"},"
       " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", 0]]}}",
       "Regex ' *' can match empty text", CB_ERR_UNSUPPORTED},
      {"{\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"Regex\": \"(\"}, \"content\": \"\"},"
       " \"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", 0]]}}",
       "pattern not supported by PCRE2", CB_ERR_UNSUPPORTED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_tok *tok = (cb_tok *)1;
    cb_error err;
    cb_error_clear(&err);
    cb_status st = cb_tok_load_hf_json_mem("uni.json", cases[i].json, strlen(cases[i].json), &tok, &err);
    if (st != cases[i].st || !strstr(err.msg, cases[i].want))
      fail_msg("case %zu: %s '%s', want '%s'", i, cb_status_name(st), err.msg, cases[i].want);
    assert_null(tok);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_viterbi),
      cmocka_unit_test(test_unknown_penalty),
      cmocka_unit_test(test_byte_fallback),
      cmocka_unit_test(test_replace_regex),
      cmocka_unit_test(test_errors),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
