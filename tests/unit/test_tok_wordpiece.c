/*
 * test_tok_wordpiece.c - tokenizer.json WordPiece models (BERT) on a small vocabulary
 * written in the test: greedy longest-match-first with the continuing prefix, a word
 * with no split or over max_input_chars_per_word as the unknown token, the
 * BertNormalizer's steps one by one (control characters dropped before whitespace
 * becomes ' ', CJK padding, accents stripped after NFD, lowercase incl. U+0130), the
 * BertPreTokenizer's splits, BertProcessing, the WordPiece decoder with and without
 * cleanup, and the load errors. Id-for-id agreement with Hugging Face tokenizers on
 * bert-base-uncased's vocabulary: tests/integration/test_tokenize_variants.sh.
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

#define VOCAB                                                                           \
  "\"vocab\": {\"[UNK]\": 0, \"[CLS]\": 1, \"[SEP]\": 2, \"un\": 3, \"##aff\": 4, "      \
  "\"##able\": 5, \"una\": 6, \"##ff\": 7, \"a\": 8, \"b\": 9, \"##a\": 10, \",\": 11, " \
  "\"i\": 12, \"\\u0307\": 13, \"\\u4e2d\": 14, \"e\": 15, \"cafe\": 16, \"caf\": 17, "  \
  "\"##\\u00e9\": 18, \"!\": 19, \"$\": 20, \"##b\": 21, \"\\u00e9\": 22, "        \
  "\"##\\u0307\": 23}"

static cb_tok *load(const char *normalizer, const char *extra) {
  char json[2048];
  snprintf(json, sizeof json,
           "{\"added_tokens\": [{\"id\": 1, \"content\": \"[CLS]\", \"special\": true},"
           " {\"id\": 2, \"content\": \"[SEP]\", \"special\": true}],"
           " \"normalizer\": %s, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}%s,"
           " \"model\": {\"type\": \"WordPiece\", \"unk_token\": \"[UNK]\","
           " \"continuing_subword_prefix\": \"##\", \"max_input_chars_per_word\": 6, " VOCAB "}}",
           normalizer, extra);
  cb_tok *tok;
  cb_error err;
  cb_error_clear(&err);
  if (cb_tok_load_hf_json_mem("wp.json", json, strlen(json), &tok, &err) != CB_OK)
    fail_msg("load: %s", err.msg);
  assert_int_equal(cb_tok_kind_of(tok), CB_TOK_KIND_HF_WORDPIECE);
  return tok;
}

static void expect(const cb_tok *tok, const char *text, int add_special, const char *want) {
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.add_special_tokens = add_special;
  cb_tok_ids ids = {0};
  cb_error err;
  assert_int_equal(cb_tok_encode(tok, text, strlen(text), &p, &ids, &err), CB_OK);
  char got[256] = "";
  for (size_t i = 0; i < ids.len; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u", i ? " " : "", ids.ids[i]);
  if (strcmp(got, want)) fail_msg("'%s': ids '%s', want '%s'", text, got, want);
  cb_tok_ids_free(&ids);
}

#define ALL "{\"type\": \"BertNormalizer\", \"clean_text\": true, \"handle_chinese_chars\": true, \"strip_accents\": null, \"lowercase\": true}"

static void test_model(void **state) {
  (void)state;
  cb_tok *tok = load(ALL, "");
  expect(tok, "unaffable", 0, "0");        /* 9 characters > max_input_chars_per_word 6 */
  expect(tok, "unaff", 0, "6 7");          /* longest first: "una" + "##ff", not "un" + "##aff" */
  expect(tok, "unaffa", 0, "6 7 10");
  expect(tok, "aab", 0, "8 10 21");
  expect(tok, "ba ab", 0, "9 10 8 21");
  expect(tok, "abc a", 0, "0 8");          /* no piece for "c": the whole word is unknown */
  expect(tok, "a,b!$", 0, "8 11 9 19 20"); /* punctuation, ASCII symbols too, split off */
  expect(tok, "a [CLS]b", 0, "8 1 9");     /* added tokens before normalization */
  cb_tok_free(tok);
}

static void test_normalizer(void **state) {
  (void)state;
  cb_tok *tok = load(ALL, "");
  expect(tok, "A\tB\nb\rA", 0, "8 9 9 8");
  expect(tok, "a\x0b" "a", 0, "8 10");      /* VT is a control: dropped, not a space */
  expect(tok, "a\xC2\x85" "a", 0, "8 10");  /* NEL too */
  expect(tok, "a\xE2\x80\x8B" "b", 0, "8 21"); /* ZERO WIDTH SPACE (Cf) dropped */
  expect(tok, "a\xEF\xBF\xBD" "b", 0, "8 21"); /* U+FFFD dropped */
  expect(tok, "a\xE3\x80\x80" "b", 0, "8 9");  /* IDEOGRAPHIC SPACE is whitespace */
  expect(tok, "a\xE4\xB8\xAD" "b", 0, "8 14 9"); /* CJK padded with spaces */
  expect(tok, "CAF\xC3\x89", 0, "16");     /* lowercase, NFD, accent stripped */
  expect(tok, "Cafe\xCC\x81", 0, "16");
  expect(tok, "\xC4\xB0", 0, "12");        /* U+0130: NFD I U+0307, mark stripped, then i */
  cb_tok_free(tok);
  /* lowercase without strip_accents: U+0130 -> i U+0307 (SpecialCasing) */
  tok = load("{\"type\": \"BertNormalizer\", \"lowercase\": true, \"strip_accents\": false}", "");
  expect(tok, "\xC4\xB0", 0, "12 23");
  cb_tok_free(tok);
  /* no lowercase and strip_accents null: neither */
  tok = load("{\"type\": \"BertNormalizer\", \"lowercase\": false, \"strip_accents\": null}", "");
  expect(tok, "caf\xC3\xA9", 0, "17 18");
  expect(tok, "A", 0, "0");
  cb_tok_free(tok);
  /* strip_accents alone; clean_text and CJK padding off */
  tok = load("{\"type\": \"BertNormalizer\", \"clean_text\": false, \"handle_chinese_chars\": false,"
             " \"strip_accents\": true, \"lowercase\": false}", "");
  expect(tok, "\xC3\xA9", 0, "15");
  expect(tok, "a\x0b" "a", 0, "8 8");       /* VT is whitespace to the pre-tokenizer */
  expect(tok, "a\xE4\xB8\xAD" "b", 0, "0");
  cb_tok_free(tok);
}

static void test_post_and_decode(void **state) {
  (void)state;
  cb_tok *tok = load(ALL, ", \"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\", 2],"
                          " \"cls\": [\"[CLS]\", 1]}, \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\","
                          " \"cleanup\": true}");
  expect(tok, "a b", 1, "1 8 9 2");
  expect(tok, "a b", 0, "8 9");
  const cb_tok_id ids[] = {1, 3, 4, 11, 8, 10, 19, 2}; /* [CLS] un ##aff , a ##a ! [SEP] */
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err;
  assert_int_equal(cb_tok_decode(tok, ids, 8, &out, &err), CB_OK);
  assert_string_equal(out.data, "[CLS] unaff, aa! [SEP]"); /* " ," and " !" cleaned up */
  cb_buf_free(&out);
  cb_tok_free(tok);
  tok = load(ALL, ", \"decoder\": {\"type\": \"WordPiece\", \"prefix\": \"##\", \"cleanup\": false}");
  cb_buf_init(&out, 0);
  assert_int_equal(cb_tok_decode(tok, ids + 1, 6, &out, &err), CB_OK);
  assert_string_equal(out.data, "unaff , aa !");
  cb_buf_free(&out);
  cb_tok_free(tok);
}

static void test_errors(void **state) {
  (void)state;
  static const struct {
    const char *json, *want;
  } cases[] = {
      {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}", "unk_token '[UNK]' is not in the vocab"},
      {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": [\"a\"]}}", "model WordPiece needs a 'vocab' object"},
      {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": -1}}}", "'a' needs an integer id"},
      {"{\"post_processor\": {\"type\": \"BertProcessing\", \"sep\": [\"[SEP]\"]},"
       " \"model\": {\"type\": \"WordPiece\", \"vocab\": {\"[UNK]\": 0}}}",
       "BertProcessing needs 'cls' and 'sep'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_tok *tok = (cb_tok *)1;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(cb_tok_load_hf_json_mem("wp.json", cases[i].json, strlen(cases[i].json), &tok, &err),
                     CB_ERR_PARSE);
    if (!strstr(err.msg, cases[i].want)) fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
    assert_null(tok);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_model),
      cmocka_unit_test(test_normalizer),
      cmocka_unit_test(test_post_and_decode),
      cmocka_unit_test(test_errors),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
