/*
 * test_eval_judge.c - the judge's rubric, prompts, answer parsing and the combination
 * of one item's answers (src/eval/judge_rubric.c, judge_prompt.c, judge_parse.c,
 * judge_combine.c). The default prompts are checked against MT-Bench's, as FastChat's
 * fastchat/llm_judge/data/judge_prompts.jsonl gives them (commit 0e6e7fdc).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/eval_judge.h"

static const char *data(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/eval/judge/%s", getenv("CB_DATA_DIR"), name);
  return path;
}

static void assert_text(const cb_buf *got, const char *want) {
  if (got->len != strlen(want) || memcmp(got->data, want, got->len))
    fail_msg("got:\n%.*s\nwant:\n%s", (int)got->len, got->data, want);
}

/* FastChat "single-v1" with question "Q?" and answer "Ans {answer}" */
static void test_default_single_is_mt_bench(void **state) {
  (void)state;
  cb_judge_rubric r;
  cb_judge_rubric_default(&r);
  cb_buf b = {0};
  cb_judge_system(&r, 0, &b);
  assert_text(&b, "You are a helpful assistant.");
  cb_buf_reset(&b);
  cb_judge_prompt_single(&r, "Q?", "Ans {answer}", "ignored", &b);
  assert_text(&b,
              "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the "
              "response provided by an AI assistant to the user question displayed below. Your "
              "evaluation should consider factors such as the helpfulness, relevance, accuracy, "
              "depth, creativity, and level of detail of the response. Begin your evaluation by "
              "providing a short explanation. Be as objective as possible. After providing your "
              "explanation, you must rate the response on a scale of 1 to 10 by strictly "
              "following this format: \"[[rating]]\", for example: \"Rating: [[5]]\".\n\n"
              "[Question]\nQ?\n\n[The Start of Assistant's Answer]\nAns {answer}\n"
              "[The End of Assistant's Answer]");
  /* "single-math-v1" when the reference is shown */
  r.show_reference = 1;
  cb_buf_reset(&b);
  cb_judge_prompt_single(&r, "Q?", "4", "5", &b);
  assert_text(&b,
              "[Instruction]\nPlease act as an impartial judge and evaluate the quality of the "
              "response provided by an AI assistant to the user question displayed below. Your "
              "evaluation should consider correctness and helpfulness. You will be given a "
              "reference answer and the assistant's answer. Begin your evaluation by comparing "
              "the assistant's answer with the reference answer. Identify and correct any "
              "mistakes. Be as objective as possible. After providing your explanation, you "
              "must rate the response on a scale of 1 to 10 by strictly following this format: "
              "\"[[rating]]\", for example: \"Rating: [[5]]\".\n\n[Question]\nQ?\n\n"
              "[The Start of Reference Answer]\n5\n[The End of Reference Answer]\n\n"
              "[The Start of Assistant's Answer]\n4\n[The End of Assistant's Answer]");
  cb_buf_free(&b);
  cb_judge_rubric_free(&r);
}

/* FastChat "pair-v2": the instructions are the system message */
static void test_default_pair_is_mt_bench(void **state) {
  (void)state;
  cb_judge_rubric r;
  cb_judge_rubric_default(&r);
  cb_buf b = {0};
  cb_judge_system(&r, 1, &b);
  assert_text(&b,
              "Please act as an impartial judge and evaluate the quality of the responses "
              "provided by two AI assistants to the user question displayed below. You should "
              "choose the assistant that follows the user's instructions and answers the user's "
              "question better. Your evaluation should consider factors such as the helpfulness, "
              "relevance, accuracy, depth, creativity, and level of detail of their responses. "
              "Begin your evaluation by comparing the two responses and provide a short "
              "explanation. Avoid any positional biases and ensure that the order in which the "
              "responses were presented does not influence your decision. Do not allow the "
              "length of the responses to influence your evaluation. Do not favor certain names "
              "of the assistants. Be as objective as possible. After providing your "
              "explanation, output your final verdict by strictly following this format: "
              "\"[[A]]\" if assistant A is better, \"[[B]]\" if assistant B is better, and "
              "\"[[C]]\" for a tie.");
  cb_buf_reset(&b);
  cb_judge_prompt_pair(&r, "Q?", "first", "second", NULL, &b);
  assert_text(&b,
              "[User Question]\nQ?\n\n[The Start of Assistant A's Answer]\nfirst\n"
              "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n"
              "second\n[The End of Assistant B's Answer]");
  cb_buf_free(&b);
  cb_judge_rubric_free(&r);
}

static void test_rubric_file(void **state) {
  (void)state;
  cb_judge_rubric r;
  cb_error err;
  assert_int_equal(cb_judge_rubric_load(data("rubric_good.yaml"), &r, &err), CB_OK);
  assert_string_equal(r.name, "correctness");
  assert_true(r.scale_min == 1 && r.scale_max == 5 && r.show_reference && r.max_tokens == 256);
  cb_buf b = {0};
  cb_judge_prompt_single(&r, "Q", "A", "R", &b);
  cb_buf_append_char(&b, '\0');
  assert_non_null(strstr(b.data, "should consider correctness and concision. You will be given"));
  assert_non_null(strstr(b.data, "on a scale of 1 to 5 by"));
  assert_non_null(strstr(b.data, "[The Start of Reference Answer]\nR\n"));
  cb_buf_free(&b);
  cb_judge_rubric_free(&r);

  assert_int_equal(cb_judge_rubric_load(data("rubric_custom.yaml"), &r, &err), CB_OK);
  cb_buf c = {0};
  cb_judge_system(&r, 0, &c);
  assert_text(&c, "You grade answers. Reply with JSON only.");
  cb_buf_reset(&c);
  cb_judge_prompt_single(&r, "Why?", "Because {question}", NULL, &c);
  assert_text(&c, "Criteria: politeness (0-3).\nQ: Why?\nA: Because {question}\n"
                  "Reply {\"score\": n, \"reason\": \"...\"}.");
  cb_buf_free(&c);
  cb_judge_rubric_free(&r);

  struct {
    const char *file, *want;
  } bad[] = {
      {"rubric_bad_scale.yaml", "rubric_bad_scale.yaml:3: key 'scale': expected min < max, got [5, 1]"},
      {"rubric_bad_key.yaml", "rubric_bad_key.yaml:2: unknown key 'critera'"},
      {"rubric_bad_bool.yaml", "rubric_bad_bool.yaml:3: key 'reference': expected true or false"},
      {"rubric_fraction.yaml", "rubric_fraction.yaml:1: key 'scale': expected whole numbers, got 7.5"},
      {"no_such_rubric.yaml", "no_such_rubric.yaml"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_not_equal(cb_judge_rubric_load(data(bad[i].file), &r, &err), CB_OK);
    if (!strstr(err.msg, bad[i].want)) fail_msg("%s: got '%s'", bad[i].file, err.msg);
  }
}

static void test_parse_single(void **state) {
  (void)state;
  cb_judge_rubric r;
  cb_judge_rubric_default(&r);
  struct {
    const char *text;
    double score; /* NAN: a parse failure */
  } cases[] = {
      {"Fine answer. Rating: [[7]]", 7},
      {"  {\"score\": 9, \"reason\": \"good\"}\n", 9},
      {"{\"score\": 3.0}", 3},
      {"[[7]] and again [[7]]", 7},
      {"Rating: [[7]] or maybe [[8]]", NAN},    /* two different ratings */
      {"Rating: 7", NAN},                       /* no marker */
      {"Rating: [[11]]", NAN},                  /* off the 1-10 scale */
      {"Rating: [[0]]", NAN},
      {"Rating: [[6.5]]", NAN},                 /* not a whole number */
      {"{\"reason\": \"no score\"}", NAN},
      {"{\"score\": \"9\"}", NAN},              /* a string is not a score */
      {"{\"score\": 9, \"score\": 2}", NAN},    /* duplicate keys: not JSON we accept */
      {"", NAN},
      {"[[A]]", NAN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_judge_answer a = cb_judge_parse_single(&r, cases[i].text, strlen(cases[i].text));
    if (isnan(cases[i].score)) {
      if (a.ok) fail_msg("'%s': parsed as %g, want a failure", cases[i].text, a.score);
      assert_non_null(a.why);
    } else if (!a.ok || a.score != cases[i].score) {
      fail_msg("'%s': got ok=%d %g (%s), want %g", cases[i].text, a.ok, a.score,
               a.why ? a.why : "", cases[i].score);
    }
  }
  cb_judge_rubric_free(&r);
}

static void test_parse_pair(void **state) {
  (void)state;
  struct {
    const char *text;
    char verdict; /* 0: failure */
  } cases[] = {
      {"A is better. [[A]]", 'A'}, {"[[B]]", 'B'}, {"tie: [[C]]", 'C'},
      {"{\"verdict\": \"tie\", \"reason\": \"same\"}", 'C'}, {"{\"verdict\": \"B\"}", 'B'},
      {"[[A]] no wait [[B]]", 0}, {"[[A]] [[A]]", 'A'}, {"A", 0}, {"[[D]]", 0},
      {"{\"verdict\": \"D\"}", 0}, {"[[a]]", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_judge_answer a = cb_judge_parse_pair(cases[i].text, strlen(cases[i].text));
    if (!cases[i].verdict) {
      if (a.ok) fail_msg("'%s': parsed as %c, want a failure", cases[i].text, a.verdict);
    } else if (!a.ok || a.verdict != cases[i].verdict) {
      fail_msg("'%s': got ok=%d %c, want %c", cases[i].text, a.ok, a.verdict, cases[i].verdict);
    }
  }
}

static cb_judge_answer score(double s) { return (cb_judge_answer){.ok = 1, .score = s}; }
static cb_judge_answer verdict(char c) { return (cb_judge_answer){.ok = 1, .verdict = c}; }
static const cb_judge_answer FAIL = {.ok = 0, .why = "x"};

static void test_combine_single(void **state) {
  (void)state;
  cb_judge_answer a[] = {score(8), score(6), FAIL, score(8), score(6), score(9)};
  cb_judge_item_result r;
  cb_judge_combine_single(a, 6, CB_JUDGE_MEAN, &r);
  assert_true(r.ok && r.parsed == 5 && r.parse_failures == 1);
  assert_true(fabs(r.score - 37.0 / 5) < 1e-12);
  /* pairs of the 5 parsed: (8,8), (6,6) agree of 10 */
  assert_true(fabs(r.agreement - 0.2) < 1e-12);
  cb_judge_combine_single(a, 6, CB_JUDGE_MAJORITY, &r);
  assert_true(r.score == 6); /* 8 and 6 twice each: the lower */
  cb_judge_combine_single(a, 1, CB_JUDGE_MEAN, &r);
  assert_true(r.ok && r.score == 8 && isnan(r.agreement));
  cb_judge_combine_single(&FAIL, 1, CB_JUDGE_MEAN, &r);
  assert_true(!r.ok && isnan(r.score) && r.parse_failures == 1);
}

static void test_combine_pair(void **state) {
  (void)state;
  cb_judge_item_result r;
  /* consistent: A first, and B when swapped (the same answer) */
  cb_judge_answer ab1[] = {verdict('A')}, ba1[] = {verdict('B')};
  cb_judge_combine_pair(ab1, ba1, 1, &r);
  assert_true(r.ok && r.score == 1 && r.consistent == 1 && r.inconsistent == 0);
  /* position-biased: A both times is inconsistent, a tie */
  cb_judge_answer ba2[] = {verdict('A')};
  cb_judge_combine_pair(ab1, ba2, 1, &r);
  assert_true(r.ok && r.score == 0 && r.consistent == 0 && r.inconsistent == 1);
  /* 3 repeats: B wins twice (consistent), one inconsistent -> B */
  cb_judge_answer ab3[] = {verdict('B'), verdict('B'), verdict('A')};
  cb_judge_answer ba3[] = {verdict('A'), verdict('A'), verdict('A')};
  cb_judge_combine_pair(ab3, ba3, 3, &r);
  assert_true(r.score == -1 && r.consistent == 2 && r.inconsistent == 1);
  assert_true(fabs(r.agreement - 1.0 / 3) < 1e-12);
  /* a failed order spoils its repeat; the split between A and B is a tie */
  cb_judge_answer ab4[] = {verdict('A'), verdict('B'), verdict('C')};
  cb_judge_answer ba4[] = {verdict('B'), verdict('A'), FAIL};
  cb_judge_combine_pair(ab4, ba4, 3, &r);
  assert_true(r.ok && r.parsed == 2 && r.parse_failures == 1 && r.score == 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_single_is_mt_bench),
      cmocka_unit_test(test_default_pair_is_mt_bench),
      cmocka_unit_test(test_rubric_file),
      cmocka_unit_test(test_parse_single),
      cmocka_unit_test(test_parse_pair),
      cmocka_unit_test(test_combine_single),
      cmocka_unit_test(test_combine_pair),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
