/*
 * test_eval_squad.c - SQuAD v1.1 exact match and F1 against the official script's
 * functions: every item of tests/data/eval/squad/squad.jsonl (normalize_answer of
 * the hypothesis and each reference, then metric_max_over_ground_truths of
 * exact_match_score and f1_score) and corpus.json (compute_score over them all);
 * answers with articles, punctuation, case, Greek sigmas, Turkish dotted I, German
 * sharp s, CJK, fullwidth letters, Unicode spaces and NULs. Then bad input.
 */
#include <math.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/buf.h"
#include "calibench/eval_rouge.h"
#include "test_eval_rouge_vectors.h"

typedef struct {
  cb_eval_squad *seg;
  size_t n, cap;
} squad_ctx;

static void check_norm(json_t *text, json_t *want, size_t line) {
  cb_buf out = {0};
  cb_error err = {0};
  if (cb_eval_squad_normalize(json_string_value(text), json_string_length(text), &out, &err) != CB_OK)
    fail_msg("squad.jsonl:%zu: %s", line, err.msg);
  if (out.len != json_string_length(want) || memcmp(out.data ? out.data : "", json_string_value(want), out.len))
    fail_msg("squad.jsonl:%zu: normalize_answer gives '%s', ours '%s'", line, json_string_value(want),
             out.data ? out.data : "");
  cb_buf_free(&out);
}

static void check_item(json_t *v, size_t line, void *vctx) {
  squad_ctx *ctx = vctx;
  json_t *hyp = json_object_get(v, "hyp"), *refs = json_object_get(v, "refs");
  size_t n = json_array_size(refs);
  const char *rs[8];
  size_t rn[8];
  assert_true(n >= 1 && n <= 8);
  check_norm(hyp, json_object_get(v, "norm_hyp"), line);
  for (size_t i = 0; i < n; i++) {
    rs[i] = json_string_value(json_array_get(refs, i));
    rn[i] = json_string_length(json_array_get(refs, i));
    check_norm(json_array_get(refs, i), json_array_get(json_object_get(v, "norm_refs"), i), line);
  }
  cb_eval_squad got;
  cb_error err = {0};
  if (cb_eval_squad_score(json_string_value(hyp), json_string_length(hyp), rs, rn, n, &got, &err) != CB_OK)
    fail_msg("squad.jsonl:%zu: %s", line, err.msg);
  double em = json_number_value(json_object_get(v, "exact")), f1 = json_number_value(json_object_get(v, "f1"));
  if (got.exact != em || !(fabs(got.f1 - f1) <= VEC_TOL))
    fail_msg("squad.jsonl:%zu: exact %g f1 %.17g, official %g %.17g", line, got.exact, got.f1, em, f1);
  if (ctx->n == ctx->cap) ctx->seg = realloc(ctx->seg, (ctx->cap = ctx->cap * 2 + 64) * sizeof *ctx->seg);
  ctx->seg[ctx->n++] = got;
}

static void check_corpus(json_t *v, size_t line, void *vctx) {
  squad_ctx *ctx = vctx;
  (void)line;
  cb_eval_squad c = cb_eval_squad_corpus(ctx->seg, ctx->n);
  double em = json_number_value(json_object_get(v, "exact_match")), f1 = json_number_value(json_object_get(v, "f1"));
  if (!(fabs(c.exact - em) <= VEC_TOL) || !(fabs(c.f1 - f1) <= VEC_TOL))
    fail_msg("corpus: exact %.17g f1 %.17g, official %.17g %.17g", c.exact, c.f1, em, f1);
}

static void test_equals_official_script(void **state) {
  (void)state;
  squad_ctx ctx = {0};
  size_t n = read_vectors("squad/squad.jsonl", check_item, &ctx);
  assert_true(n > 400);
  assert_int_equal(ctx.n, n);
  assert_int_equal(read_vectors("squad/corpus.json", check_corpus, &ctx), 1);
  free(ctx.seg);
}

static void test_bad_input(void **state) {
  (void)state;
  cb_eval_squad s;
  cb_error err = {0};
  const char *refs[] = {"the answer", "caf\xC3"};
  size_t lens[] = {10, 4};
  assert_int_equal(cb_eval_squad_score("answer", 6, refs, lens, 2, &s, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "reference 2"));
  assert_non_null(strstr(err.msg, "byte 3"));
  assert_int_equal(cb_eval_squad_score("\xED\xA0\x80", 3, refs, lens, 1, &s, &err), CB_ERR_PARSE);
  assert_int_equal(cb_eval_squad_score("\xED\xA0\x80", 3, refs, lens, 1, &s, NULL), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "hypothesis"));
  assert_int_equal(cb_eval_squad_score("answer", 6, refs, lens, 0, &s, &err), CB_ERR_INVALID);
  assert_int_equal(cb_eval_squad_score("An answer!", 10, refs, lens, 1, &s, &err), CB_OK);
  assert_true(s.exact == 1 && s.f1 == 1);
  cb_eval_squad none = cb_eval_squad_corpus(&s, 0);
  assert_true(none.exact == 0 && none.f1 == 0);
}

/* Seeded random answers (articles, punctuation, capitals, sigmas, dotted I, spaces,
 * NULs, now and then ill-formed UTF-8): an answer against itself is an exact match,
 * with F1 1 unless it normalises to nothing (then 0, as the script's f1_score);
 * ill-formed input is CB_ERR_PARSE. Never a crash (run under ASan). */
static void test_random_answers(void **state) {
  (void)state;
  static const char *const pieces[] = {"the", "A", "an", " ", "\t", "\xC2\xA0", ".", "!",
                                       "\xCE\xA3", "\xCE\xA9", "\xC4\xB0", "x", "\0", "_",
                                       "\xE4\xB8\x96", "\xCC\x81", "'", "1"};
  static const char *const bad[] = {"\xC3", "\xED\xA0\x80", "\xFF"};
  size_t n_pieces = sizeof pieces / sizeof pieces[0], ok = 0, refused = 0, empty = 0;
  uint64_t x = 2463534242ull;
  for (int iter = 0; iter < 3000; iter++) {
    char text[256];
    size_t len = 0;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    for (size_t k = 0, parts = x % 20; k < parts; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const char *p = x % 100 == 0 ? bad[(x >> 8) % 3] : pieces[(x >> 8) % n_pieces];
      size_t pl = p[0] ? strlen(p) : 1;
      memcpy(text + len, p, pl);
      len += pl;
    }
    const char *refs[] = {text};
    size_t lens[] = {len};
    cb_eval_squad s;
    cb_error err = {0};
    cb_status st = cb_eval_squad_score(text, len, refs, lens, 1, &s, &err);
    if (st == CB_ERR_PARSE) {
      assert_non_null(strstr(err.msg, "invalid UTF-8"));
      refused++;
      continue;
    }
    assert_int_equal(st, CB_OK);
    cb_buf norm = {0};
    assert_int_equal(cb_eval_squad_normalize(text, len, &norm, NULL), CB_OK);
    assert_true(s.exact == 1);
    assert_true(s.f1 == (norm.len ? 1.0 : 0.0));
    empty += norm.len == 0;
    cb_buf_free(&norm);
    ok++;
  }
  assert_true(ok > 2500 && refused > 200 && empty > 250); /* 2,729, 271 and 320 */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_equals_official_script),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_random_answers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
