/*
 * test_tok.c - the tok module's API on small tokenizers built in the test: tiktoken
 * rank data in both formats, encoding and decoding, special tokens allowed, rejected
 * and as text, load errors, tokenizer.json components and the errors naming the
 * unsupported ones, exact-length synthesis, and (when `make npm-deps` has run) known
 * ids of cl100k_base. Id-for-id agreement with the reference tokenizers on real
 * vocabularies is tests/integration/test_tokenize.sh.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/tok.h"
#include "tok/tok_internal.h"
#include "test_skip.h"

/* ---- helpers ----------------------------------------------------------------------- */

static void b64(const unsigned char *s, size_t n, cb_buf *out) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
                 (i + 2 < n ? s[i + 2] : 0);
    cb_buf_append_char(out, t[v >> 18 & 63]);
    cb_buf_append_char(out, t[v >> 12 & 63]);
    cb_buf_append_char(out, i + 1 < n ? t[v >> 6 & 63] : '=');
    cb_buf_append_char(out, i + 2 < n ? t[v & 63] : '=');
  }
}

/* A tiktoken rank file: the 256 bytes, then `extra` tokens in rank order. */
static void make_ranks(const char *const *extra, cb_buf *out) {
  unsigned rank = 0;
  for (int b = 0; b < 256; b++) {
    unsigned char c = (unsigned char)b;
    b64(&c, 1, out);
    cb_buf_appendf(out, " %u\n", rank++);
  }
  for (size_t i = 0; extra[i]; i++) {
    b64((const unsigned char *)extra[i], strlen(extra[i]), out);
    cb_buf_appendf(out, " %u\n", rank++);
  }
}

#define GPT2_PAT "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

static cb_tok *tiny_tiktoken(void) {
  static const char *const extra[] = {"ab", "cd", "abcd", " a", " ab", "  ", "    ", "e\xCC\x81", NULL};
  cb_buf r;
  cb_buf_init(&r, 0);
  make_ranks(extra, &r);
  cb_tok_special_def sp[] = {{"<|end|>", 300}, {"<|endoftext|>", 301}};
  cb_tok *tok = NULL;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_tok_load_tiktoken_mem("tiny", r.data, r.len, GPT2_PAT, sp, 2, &tok, &err);
  if (st != CB_OK) fprintf(stderr, "load: %s\n", err.msg);
  assert_int_equal(st, CB_OK);
  cb_buf_free(&r);
  return tok;
}

/* Encode and compare with the expected ids, printing both on a mismatch. */
static void expect_ids(const cb_tok *tok, const char *text, size_t len,
                       const cb_tok_encode_params *p, const cb_tok_id *want, size_t nwant) {
  cb_tok_ids ids = {0};
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_tok_encode(tok, text, len, p, &ids, &err);
  if (st != CB_OK) fprintf(stderr, "encode: %s\n", err.msg);
  assert_int_equal(st, CB_OK);
  int same = ids.len == nwant && (!nwant || !memcmp(ids.ids, want, nwant * sizeof *want));
  if (!same) {
    fprintf(stderr, "text '%.*s'\n  want:", (int)len, text);
    for (size_t i = 0; i < nwant; i++) fprintf(stderr, " %u", (unsigned)want[i]);
    fprintf(stderr, "\n  got: ");
    for (size_t i = 0; i < ids.len; i++) fprintf(stderr, " %u", (unsigned)ids.ids[i]);
    fprintf(stderr, "\n");
  }
  assert_true(same);
  cb_tok_ids_free(&ids);
}

#define EXPECT(tok, text, params, ...)                                                   \
  do {                                                                                   \
    const cb_tok_id want_[] = {__VA_ARGS__};                                             \
    expect_ids(tok, text, sizeof text - 1, params, want_, sizeof want_ / sizeof want_[0]); \
  } while (0)

/* ---- tiktoken --------------------------------------------------------------------- */

static void test_tiktoken_merges(void **state) {
  (void)state;
  cb_tok *tok = tiny_tiktoken();
  /* 256=ab, 257=cd, 258=abcd, 259=" a", 260=" ab", 261="  ", 262="    ".
   * "abcd" is a token. " abcd" is one piece and not a token: the lowest rank merges
   * first, ab (256), then cd (257), then abcd (258), leaving " " + "abcd" even
   * though " ab" (260) exists: merge order, not longest match. */
  EXPECT(tok, "abcd", NULL, 258);
  EXPECT(tok, " abcd", NULL, ' ', 258);
  EXPECT(tok, "abd", NULL, 256, 'd');
  /* "    x": \s+(?!\S) takes 3 spaces, then " x"; "   " merges to "  " + " " */
  EXPECT(tok, "    x", NULL, 261, ' ', ' ', 'x');
  EXPECT(tok, "x", NULL, 'x');
  const char empty[] = "";
  expect_ids(tok, empty, 0, NULL, NULL, 0);
  assert_int_equal(cb_tok_vocab_size(tok), 302);
  assert_string_equal(cb_tok_name(tok), "tiny");
  assert_int_equal(cb_tok_kind_of(tok), CB_TOK_KIND_TIKTOKEN);
  assert_true(cb_tok_memory_bytes(tok) > 256);
  cb_tok_free(tok);
}

static void test_tiktoken_special(void **state) {
  (void)state;
  cb_tok *tok = tiny_tiktoken();
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  cb_tok_ids ids = {0};
  cb_error err;
  cb_error_clear(&err);
  /* default: rejected, naming the token and where, and nothing appended */
  cb_tok_ids_free(&ids);
  cb__ids_push(&ids, 7);
  assert_int_equal(cb_tok_encode(tok, "ab<|end|>", 9, &p, &ids, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "'<|end|>' at byte 2"));
  assert_int_equal(ids.len, 1);
  cb_tok_ids_free(&ids);
  /* allowed */
  p.special = CB_TOK_SPECIAL_ALLOW;
  EXPECT(tok, "ab<|end|>cd<|endoftext|>", &p, 256, 300, 257, 301);
  /* as text: '<|' etc. are ordinary bytes */
  p.special = CB_TOK_SPECIAL_TEXT;
  EXPECT(tok, "<|end|>", &p, '<', '|', 'e', 'n', 'd', '|', '>');
  /* an allow-list: <|end|> allowed, <|endoftext|> as text in TEXT mode ... */
  const char *const allow[] = {"<|end|>", NULL};
  p.allowed_special = allow;
  EXPECT(tok, "<|end|>x", &p, 300, 'x');
  /* ... and still rejected in REJECT mode */
  p.special = CB_TOK_SPECIAL_REJECT;
  assert_int_equal(cb_tok_encode(tok, "<|end|><|endoftext|>", 20, &p, &ids, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "'<|endoftext|>' at byte 7"));
  cb_tok_ids_free(&ids);
  cb_tok_id id;
  assert_int_equal(cb_tok_special_id(tok, "<|endoftext|>", &id), CB_OK);
  assert_int_equal(id, 301);
  assert_int_equal(cb_tok_special_id(tok, "<|nope|>", &id), CB_ERR_NOT_FOUND);
  /* the count callback never fails: special text counts as text */
  cb_tok_count_fn count = cb_tok_count;
  assert_int_equal(count(tok, "<|end|>", 7), 7);
  assert_int_equal(count(tok, "abcd", 4), 1);
  cb_tok_free(tok);
}

static void test_tiktoken_decode(void **state) {
  (void)state;
  cb_tok *tok = tiny_tiktoken();
  const cb_tok_id ids[] = {258, 259, 300, 'z'};
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_tok_decode(tok, ids, 4, &out, &err), CB_OK);
  assert_string_equal(out.data, "abcd a<|end|>z");
  const cb_tok_id bad[] = {1, 299};
  assert_int_equal(cb_tok_decode(tok, bad, 2, &out, &err), CB_ERR_RANGE);
  assert_non_null(strstr(err.msg, "token id 299 (at position 1)"));
  assert_string_equal(out.data, "abcd a<|end|>z"); /* unchanged */
  /* round trip through invalid UTF-8: the bytes come back as U+FFFD */
  cb_tok_ids enc = {0};
  assert_int_equal(cb_tok_encode(tok, "a\xFF" "b", 3, NULL, &enc, &err), CB_OK);
  cb_buf_reset(&out);
  assert_int_equal(cb_tok_decode(tok, enc.ids, enc.len, &out, &err), CB_OK);
  assert_string_equal(out.data, "a\xEF\xBF\xBD" "b");
  cb_tok_ids_free(&enc);
  cb_buf_free(&out);
  cb_tok_free(tok);
}

static void test_tiktoken_formats_and_errors(void **state) {
  (void)state;
  /* the npm package's packed form gives the same tokenizer */
  cb_buf r;
  cb_buf_init(&r, 0);
  cb_buf_append_str(&r, "! 0");
  for (int b = 0; b < 256; b++) {
    unsigned char c = (unsigned char)b;
    cb_buf_append_char(&r, ' ');
    b64(&c, 1, &r);
  }
  cb_buf_append_str(&r, "\n! 300 ");
  b64((const unsigned char *)"xy", 2, &r);
  cb_tok *tok;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_tok_load_tiktoken_mem("packed", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_OK);
  EXPECT(tok, "xyz", NULL, 300, 'z');
  cb_tok_free(tok);
  cb_buf_free(&r);

  /* a byte missing: not byte-level BPE */
  cb_buf_init(&r, 0);
  cb_buf_append_str(&r, "YQ== 0\n");
  assert_int_equal(cb_tok_load_tiktoken_mem("short", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "0x00 is not a token"));
  assert_null(tok);
  cb_buf_reset(&r);
  cb_buf_append_str(&r, "YQ== 0\n!!!! 1\n");
  assert_int_equal(cb_tok_load_tiktoken_mem("b64", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "b64:2: bad base64 token '!!!!'");
  /* five characters (4k+1) are no encoding of any bytes: refused as tiktoken's
   * base64.b64decode refuses them, not read as the four-character prefix */
  cb_buf_reset(&r);
  cb_buf_append_str(&r, "YQ== 0\nYWJjZ 1\n");
  assert_int_equal(cb_tok_load_tiktoken_mem("b64", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "b64:2: bad base64 token 'YWJjZ'");
  cb_buf_reset(&r);
  cb_buf_append_str(&r, "YQ== 0\nYQ== 1\n");
  assert_int_equal(cb_tok_load_tiktoken_mem("dup", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "dup:2: token 'YQ==' appears twice"));
  cb_buf_reset(&r);
  cb_buf_append_str(&r, "YQ== 99999999\n");
  assert_int_equal(cb_tok_load_tiktoken_mem("big", r.data, r.len, GPT2_PAT, NULL, 0, &tok, &err), CB_ERR_PARSE);
  assert_string_equal(err.msg, "big:1: rank 99999999 is larger than 16777215");
  cb_buf_free(&r);

  /* a pattern PCRE2 cannot compile names the pattern */
  static const char *const none[] = {NULL};
  cb_buf_init(&r, 0);
  make_ranks(none, &r);
  assert_int_equal(cb_tok_load_tiktoken_mem("pat", r.data, r.len, "(unclosed", NULL, 0, &tok, &err),
                   CB_ERR_UNSUPPORTED);
  assert_non_null(strstr(err.msg, "(unclosed"));
  cb_buf_free(&r);

  /* names that are not found say where they were looked for */
  setenv("CALIBENCH_TOKENIZER_PATH", "/nonexistent-a:/nonexistent-b", 1);
  assert_int_equal(cb_tok_load("cl100k_nope", &tok, &err), CB_ERR_NOT_FOUND);
  assert_non_null(strstr(err.msg, "/nonexistent-a, /nonexistent-b"));
  assert_non_null(strstr(err.msg, "cl100k_nope.tiktoken"));
  assert_int_equal(cb_tok_load("/nonexistent/file.json", &tok, &err), CB_ERR_NOT_FOUND);
  unsetenv("CALIBENCH_TOKENIZER_PATH");
}

/* ---- tokenizer.json ----------------------------------------------------------------- */

static cb_status load_hf(const char *json, cb_tok **tok, cb_error *err) {
  cb_error_clear(err);
  cb_status st = cb_tok_load_hf_json_mem("t.json", json, strlen(json), tok, err);
  if (st != CB_OK) fprintf(stderr, "(load: %s)\n", err->msg);
  return st;
}

/* A SentencePiece-style BPE: chars, merges, byte fallback, unk, Prepend/Replace. */
static const char *SP_JSON =
    "{\"added_tokens\": [{\"id\": 0, \"content\": \"<unk>\", \"special\": true},"
    "  {\"id\": 1, \"content\": \"<s>\", \"special\": true},"
    "  {\"id\": 9, \"content\": \"[X]\", \"special\": false, \"normalized\": false, \"rstrip\": true}],"
    " \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": ["
    "   {\"type\": \"Prepend\", \"prepend\": \"\\u2581\"},"
    "   {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\\u2581\"}]},"
    " \"pre_tokenizer\": null,"
    " \"post_processor\": {\"type\": \"TemplateProcessing\","
    "   \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}],"
    "   \"special_tokens\": {\"<s>\": {\"id\": \"<s>\", \"ids\": [1], \"tokens\": [\"<s>\"]}}},"
    " \"decoder\": {\"type\": \"Sequence\", \"decoders\": ["
    "   {\"type\": \"Replace\", \"pattern\": {\"String\": \"\\u2581\"}, \"content\": \" \"},"
    "   {\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"},"
    "   {\"type\": \"Strip\", \"content\": \" \", \"start\": 1, \"stop\": 0}]},"
    " \"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"byte_fallback\": true, \"fuse_unk\": true,"
    "   \"vocab\": {\"<unk>\": 0, \"<s>\": 1, \"\\u2581\": 2, \"h\": 3, \"i\": 4, \"\\u2581h\": 5,"
    "     \"\\u2581hi\": 6, \"<0xC3>\": 7, \"<0xA9>\": 8, \"x\": 10},"
    "   \"merges\": [\"\\u2581 h\", [\"\\u2581h\", \"i\"]]}}";

static void test_hf_sentencepiece(void **state) {
  (void)state;
  cb_tok *tok;
  cb_error err;
  assert_int_equal(load_hf(SP_JSON, &tok, &err), CB_OK);
  assert_int_equal(cb_tok_kind_of(tok), CB_TOK_KIND_HF_BPE);
  /* "hi hi": "▁hi▁hi" -> ▁hi ▁hi */
  EXPECT(tok, "hi hi", NULL, 6, 6);
  /* é has no token: byte fallback; q is unknown and has no byte tokens: unk, fused */
  EXPECT(tok, "h\xC3\xA9qq", NULL, 5, 7, 8, 0);
  /* added tokens split the text; each segment gets its own ▁; rstrip eats the space */
  EXPECT(tok, "hi<s>hi", NULL, 6, 1, 6);
  EXPECT(tok, "hi[X]  x", NULL, 6, 9, 2, 10);
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.add_special_tokens = 1;
  EXPECT(tok, "hi", &p, 1, 6);
  p.add_special_tokens = 0;
  p.special = CB_TOK_SPECIAL_TEXT; /* <s> as text: '<' 's' '>' are unknown -> one fused unk */
  EXPECT(tok, "hi<s>", &p, 6, 0);
  /* decode: ▁ -> ' ', bytes fused, the first space stripped */
  const cb_tok_id ids[] = {6, 7, 8, 2, 5};
  cb_buf out;
  cb_buf_init(&out, 0);
  assert_int_equal(cb_tok_decode(tok, ids, 5, &out, &err), CB_OK);
  assert_string_equal(out.data, "hi\xC3\xA9  h");
  cb_buf_free(&out);
  cb_tok_free(tok);
}

/* A byte-level BPE with a Split regex, ignore_merges and a Metaspace-free pipeline. */
static const char *BL_JSON =
    "{\"added_tokens\": [{\"id\": 20, \"content\": \"<|eot|>\", \"special\": true}],"
    " \"normalizer\": {\"type\": \"NFC\"},"
    " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": ["
    "   {\"type\": \"Split\", \"pattern\": {\"Regex\": \" ?\\\\p{L}+|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false},"
    "   {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": false}]},"
    " \"post_processor\": {\"type\": \"ByteLevel\"},"
    " \"decoder\": {\"type\": \"ByteLevel\"},"
    " \"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {"
    "   \"a\": 0, \"b\": 1, \"\\u0120\": 2, \"\\u0120a\": 3, \"ab\": 4, \"1\": 5, \"\\u00c3\": 6,"
    "   \"\\u00a9\": 7, \"\\u00c3\\u00a9\": 8, \"\\u0120ab\": 9, \"e\": 10, \"\\u00cc\": 11, \"\\u0123\": 12, \"\\u0109\": 13},"
    "   \"merges\": [\"\\u0120 a\", \"a b\", \"\\u00c3 \\u00a9\"]}}";

static void test_hf_bytelevel(void **state) {
  (void)state;
  cb_tok *tok;
  cb_error err;
  assert_int_equal(load_hf(BL_JSON, &tok, &err), CB_OK);
  /* " ab" is a vocab token (ignore_merges) even though no merge makes it */
  EXPECT(tok, " ab", NULL, 9);
  /* "ab ab1": pieces "ab", " ab", "1" (a gap kept by Split Isolated) */
  EXPECT(tok, "ab ab1", NULL, 4, 9, 5);
  /* NFC: e + U+0301 becomes é = C3 A9 -> merged */
  EXPECT(tok, "e\xCC\x81", NULL, 8);
  EXPECT(tok, "\xC3\xA9", NULL, 8);
  EXPECT(tok, "a<|eot|>", NULL, 0, 20);
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.special = CB_TOK_SPECIAL_REJECT;
  cb_tok_ids ids = {0};
  assert_int_equal(cb_tok_encode(tok, "a<|eot|>", 8, &p, &ids, &err), CB_ERR_INVALID);
  cb_tok_ids_free(&ids);
  /* decode is byte concatenation; added tokens give their text */
  const cb_tok_id dec[] = {9, 8, 20, 13};
  cb_buf out;
  cb_buf_init(&out, 0);
  assert_int_equal(cb_tok_decode(tok, dec, 4, &out, &err), CB_OK);
  assert_string_equal(out.data, " ab\xC3\xA9<|eot|>\t");
  cb_buf_free(&out);
  cb_tok_free(tok);
}

/* Each unsupported component fails to load, naming itself. */
static void test_hf_unsupported(void **state) {
  (void)state;
  static const struct {
    const char *json, *want;
  } cases[] = {
      {"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}}", "model type 'WordLevel' is not supported (supported: BPE, WordPiece, Unigram)"},
      {"{\"pre_tokenizer\": {\"type\": \"Digits\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "pre_tokenizer type 'Digits' is not supported"},
      {"{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \"x\"}, \"behavior\": \"Contiguous\"},"
       " \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "Split behavior 'Contiguous' is not supported"},
      {"{\"normalizer\": {\"type\": \"ByteLevel\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "normalizer type 'ByteLevel' is not supported"},
      {"{\"decoder\": {\"type\": \"CTC\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "decoder type 'CTC' is not supported"},
      {"{\"post_processor\": {\"type\": \"RobertaProcessing\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "post_processor type 'RobertaProcessing' is not supported"},
      {"{\"model\": {\"type\": \"BPE\", \"dropout\": 0.1, \"vocab\": {}, \"merges\": []}}", "dropout"},
      {"{\"model\": {\"type\": \"BPE\", \"continuing_subword_prefix\": \"##\", \"vocab\": {}, \"merges\": []}}",
       "continuing_subword_prefix '##'"},
      {"{\"added_tokens\": [{\"id\": 0, \"content\": \"x\", \"single_word\": true}],"
       " \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
       "added token 'x' has single_word: true"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_tok *tok = (cb_tok *)1;
    cb_error err;
    cb_error_clear(&err);
    cb_status st = cb_tok_load_hf_json_mem("t.json", cases[i].json, strlen(cases[i].json), &tok, &err);
    if (st != CB_ERR_UNSUPPORTED || !strstr(err.msg, cases[i].want))
      fprintf(stderr, "case %zu: status %s, message '%s', want '%s'\n", i, cb_status_name(st),
              err.msg, cases[i].want);
    assert_int_equal(st, CB_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.msg, cases[i].want));
    assert_null(tok);
  }
  /* malformed input: position of the JSON error, or the missing token of a merge */
  cb_tok *tok;
  cb_error err;
  assert_int_equal(cb_tok_load_hf_json_mem("t.json", "{\"model\": ", 10, &tok, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "t.json:1:"));
  const char *bad_merge = "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}";
  assert_int_equal(cb_tok_load_hf_json_mem("t.json", bad_merge, strlen(bad_merge), &tok, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "merges: 'a b' uses or makes a token missing"));
}

/* ---- exact-length synthesis ------------------------------------------------------------ */

static size_t count_words(void *ctx, const char *s, size_t n) {
  (void)ctx;
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && (i == 0 || s[i - 1] == ' ')) c++;
  return c;
}

static void test_synth(void **state) {
  (void)state;
  cb_tok *tok = tiny_tiktoken();
  const char corpus[] = "the cat sat on the mat\nand the dog ate abcd the food   \n"
                        "caf\xC3\xA9 na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD world";
  cb_buf a, b;
  cb_buf_init(&a, 0);
  cb_buf_init(&b, 0);
  cb_error err;
  for (size_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
    for (uint64_t seed = 0; seed < 3; seed++) {
      cb_buf_reset(&a);
      assert_int_equal(cb_tok_synth(cb_tok_count, tok, corpus, sizeof corpus - 1, n, seed, &a, &err), CB_OK);
      size_t got = cb_tok_count(tok, a.data, a.len);
      if (got != n) fprintf(stderr, "n=%zu seed=%llu: %zu tokens in '%s'\n", n, (unsigned long long)seed, got, a.data);
      assert_int_equal(got, n);
      assert_int_equal(cb__utf8_valid_prefix(a.data, a.len), a.len);
    }
  }
  /* same seed, same text; another seed, another start */
  cb_buf_reset(&a);
  cb_tok_synth(cb_tok_count, tok, corpus, sizeof corpus - 1, 50, 7, &a, &err);
  cb_tok_synth(cb_tok_count, tok, corpus, sizeof corpus - 1, 50, 7, &b, &err);
  assert_string_equal(a.data, b.data);
  int differs = 0;
  for (uint64_t seed = 8; seed < 16 && !differs; seed++) {
    cb_buf_reset(&b);
    cb_tok_synth(cb_tok_count, tok, corpus, sizeof corpus - 1, 50, seed, &b, &err);
    differs = strcmp(a.data, b.data) != 0;
  }
  assert_true(differs);
  /* any counter with the callback's shape works */
  cb_buf_reset(&a);
  assert_int_equal(cb_tok_synth(count_words, NULL, corpus, sizeof corpus - 1, 12, 1, &a, &err), CB_OK);
  assert_int_equal(count_words(NULL, a.data, a.len), 12);
  /* nothing to draw from */
  assert_int_equal(cb_tok_synth(cb_tok_count, tok, " \n\t ", 4, 5, 1, &a, &err), CB_ERR_INVALID);
  cb_buf_reset(&a);
  assert_int_equal(cb_tok_synth(cb_tok_count, tok, corpus, sizeof corpus - 1, 0, 1, &a, &err), CB_OK);
  assert_int_equal(a.len, 0);
  cb_buf_free(&a);
  cb_buf_free(&b);
  cb_tok_free(tok);
}

/* ---- one tokenizer, many threads ------------------------------------------------------ */

typedef struct thread_job {
  const cb_tok *tok;
  const char *text;
  size_t len;
  cb_tok_ids ids;
} thread_job;

static void *encode_many(void *arg) {
  thread_job *j = arg;
  for (int i = 0; i < 200; i++) {
    j->ids.len = 0;
    cb_tok_encode(j->tok, j->text, j->len, NULL, &j->ids, NULL);
  }
  return NULL;
}

static void test_threads_share_a_tokenizer(void **state) {
  (void)state;
  cb_tok *tok = tiny_tiktoken();
  static const char text[] = "abcd ab cd    x  abcd\n\n  e\xCC\x81 \xFF caf\xC3\xA9";
  cb_tok_ids want = {0};
  assert_int_equal(cb_tok_encode(tok, text, sizeof text - 1, NULL, &want, NULL), CB_OK);
  pthread_t th[4];
  thread_job jobs[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){tok, text, sizeof text - 1, {0}};
    assert_int_equal(pthread_create(&th[i], NULL, encode_many, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(jobs[i].ids.len, want.len);
    assert_memory_equal(jobs[i].ids.ids, want.ids, want.len * sizeof *want.ids);
    cb_tok_ids_free(&jobs[i].ids);
  }
  cb_tok_ids_free(&want);
  cb_tok_free(tok);
}

/* ---- real data, when the npm packages are installed --------------------------------------- */

static void test_cl100k_known_ids(void **state) {
  (void)state;
  const char *dir = getenv("CB_DATA_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/../../node_modules/tiktoken/encoders/cl100k_base.json", dir ? dir : "tests/data");
  FILE *f = fopen(path, "r");
  if (!f) {
    CB_MISSING_PEER("%s missing (make npm-deps)", path);
  }
  fclose(f);
  cb_tok *tok;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_tok_load(path, &tok, &err), CB_OK);
  assert_string_equal(cb_tok_name(tok), "cl100k_base");
  assert_int_equal(cb_tok_vocab_size(tok), 100277);
  /* tiktoken's README: "hello world" -> [15339, 1917] */
  EXPECT(tok, "hello world", NULL, 15339, 1917);
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.special = CB_TOK_SPECIAL_ALLOW;
  EXPECT(tok, "<|endoftext|>", &p, 100257);
  cb_tok_free(tok);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiktoken_merges),     cmocka_unit_test(test_tiktoken_special),
      cmocka_unit_test(test_tiktoken_decode),     cmocka_unit_test(test_tiktoken_formats_and_errors),
      cmocka_unit_test(test_hf_sentencepiece),    cmocka_unit_test(test_hf_bytelevel),
      cmocka_unit_test(test_hf_unsupported),      cmocka_unit_test(test_synth),
      cmocka_unit_test(test_threads_share_a_tokenizer), cmocka_unit_test(test_cl100k_known_ids),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
