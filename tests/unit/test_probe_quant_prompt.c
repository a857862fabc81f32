/*
 * test_probe_quant_prompt.c - reading a prompt scored in one request
 * (cb_quant_parse_prompt): OpenAI's legacy echo arrays, whole or streamed, and vLLM's
 * prompt_logprobs; the continuation is the last n scored tokens; malformed answers
 * (missing arrays, lengths that differ, null where a number must be, too few tokens)
 * are errors naming the field.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/probe_quant.h"

/* An echoed prompt "A b c" (3 tokens), whole. */
static const char ECHO[] =
    "{\"choices\":[{\"text\":\"A b c\",\"logprobs\":{\"tokens\":[\"A\",\" b\",\" c\"],"
    "\"token_logprobs\":[null,-0.5,-9999.0],\"top_logprobs\":[null,{\" b\":-0.5,\" x\":-1.2},"
    "{\" c\":-9999.0,\" b\":-0.1,\" y\":-2.5}],\"text_offset\":[0,1,3]}}]}";

/* The last n scored tokens of ev (generated skipped), which must parse. */
static cb_quant_token *parsed(const char *ev, cb_quant_path path, size_t n, size_t generated,
                              int by_id) {
  cb_quant_token *t = NULL;
  cb_error err = {0};
  if (cb_quant_parse_prompt(ev, path, n, generated, by_id, &t, &err) != CB_OK) fail_msg("%s", err.msg);
  return t;
}

/* One scored token whose text must be want. */
static void first_is(const char *ev, size_t generated, const char *want) {
  cb_quant_token *t = parsed(ev, CB_QUANT_PATH_ECHO, 1, generated, 0);
  assert_string_equal(t[0].text, want);
  cb_quant_tokens_free(t, 1);
}

static void test_echo_whole(void **state) {
  (void)state;
  cb_quant_token *t = parsed(ECHO, CB_QUANT_PATH_ECHO, 2, 0, 0);
  assert_string_equal(t[0].text, " b");
  assert_true(t[0].logprob == -0.5 && t[0].n_top == 2);
  assert_true(t[0].top[1].id == cb_quant_text_id(" x", 2));
  assert_string_equal(t[1].text, " c");
  assert_int_equal(t[1].n_top, 3);
  assert_true(t[1].top[1].id == t[0].id && t[1].top[1].logprob == -0.1);
  cb_quant_tokens_free(t, 2);
  first_is(ECHO, 1, " b"); /* the last token is the answer's: skipped */
}

static void test_echo_streamed(void **state) {
  (void)state;
  /* the prompt in the first chunk, then one token a chunk */
  const char *ev =
      "{\"choices\":[{\"text\":\"A b\",\"logprobs\":{\"tokens\":[\"A\",\" b\"],\"token_logprobs\":"
      "[null,-0.5],\"top_logprobs\":[null,{\" b\":-0.5}],\"text_offset\":[0,1]}}]}\n"
      "{\"choices\":[{\"text\":\" z\",\"logprobs\":{\"tokens\":[\" z\"],\"token_logprobs\":[-0.2],"
      "\"top_logprobs\":[{\" z\":-0.2}],\"text_offset\":[3]}}]}\n";
  first_is(ev, 1, " b");
}

static void test_prompt_logprobs(void **state) {
  (void)state;
  const char *ev =
      "{\"choices\":[{\"text\":\"q\",\"prompt_logprobs\":[null,"
      "{\"7\":{\"logprob\":-3.0,\"rank\":4,\"decoded_token\":\" b\"},"
      "\"9\":{\"logprob\":-0.2,\"rank\":1,\"decoded_token\":\" x\"}},"
      "{\"8\":{\"logprob\":-0.4,\"rank\":1,\"decoded_token\":\" c\"}}]}]}";
  cb_quant_token *t = parsed(ev, CB_QUANT_PATH_PROMPT_LOGPROBS, 2, 0, 0);
  /* the first key is the prompt's own token */
  assert_string_equal(t[0].text, " b");
  assert_true(t[0].logprob == -3.0 && t[0].n_top == 2);
  assert_true(t[0].top[1].id == cb_quant_text_id(" x", 2) && t[0].top[1].logprob == -0.2);
  cb_quant_tokens_free(t, 2);
  /* by id: the keys */
  t = parsed(ev, CB_QUANT_PATH_PROMPT_LOGPROBS, 2, 0, 1);
  assert_true(t[0].id == 7 && t[0].top[1].id == 9 && t[1].id == 8);
  cb_quant_tokens_free(t, 2);
}

/* events refused with a message containing want */
static void refused(const char *ev, cb_quant_path path, size_t n, int by_id, const char *want) {
  cb_quant_token *t = NULL;
  cb_error err = {0};
  assert_int_equal(cb_quant_parse_prompt(ev, path, n, 0, by_id, &t, &err), CB_ERR_PARSE);
  assert_null(t);
  if (!strstr(err.msg, want)) fail_msg("'%s' lacks '%s'", err.msg, want);
}

static void test_malformed(void **state) {
  (void)state;
  const cb_quant_path E = CB_QUANT_PATH_ECHO, PL = CB_QUANT_PATH_PROMPT_LOGPROBS;
  /* no prompt_logprobs (a server that ignores it) */
  refused("{\"choices\":[{\"text\":\"x\"}]}", PL, 1, 0, "choices[0].prompt_logprobs: expected an array, got none");
  refused("{\"choices\":[{\"text\":\"x\",\"prompt_logprobs\":null}]}", PL, 1, 0, "expected an array, got null");
  /* null after the first position */
  refused("{\"choices\":[{\"prompt_logprobs\":[null,null]}]}", PL, 1, 0, "prompt_logprobs[1]: expected an object");
  refused("{\"choices\":[{\"prompt_logprobs\":[null,{\"7\":{\"logprob\":\"low\"}}]}]}", PL, 1, 0,
          "prompt_logprobs[1][\"7\"]: expected a token id key and a numeric logprob");
  refused("{\"choices\":[{\"prompt_logprobs\":[null,{\"x7\":{\"logprob\":-1}}]}]}", PL, 1, 1,
          "prompt_logprobs[1][\"x7\"]");
  /* fewer scored tokens than the continuation */
  refused("{\"choices\":[{\"prompt_logprobs\":[null,{\"7\":{\"logprob\":-1}}]}]}", PL, 2, 0,
          "prompt_logprobs: 1 scored prompt tokens, expected at least 2");
  /* echo: not echoed (the answer's tokens only), lengths that differ, null past the first */
  refused("{\"choices\":[{\"text\":\"z\"}]}", E, 1, 0, "echo: logprobs: 0 scored prompt tokens");
  refused("{\"choices\":[{\"logprobs\":{\"tokens\":[\"A\",\" b\"],\"token_logprobs\":[null],"
          "\"top_logprobs\":[null,{}]}}]}", E, 1, 0, "2 tokens, 1 token_logprobs and 2 top_logprobs");
  refused("{\"choices\":[{\"logprobs\":{\"tokens\":[\"A\",\" b\"],\"top_logprobs\":[null,{}]}}]}", E, 1, 0,
          "2 tokens, 0 token_logprobs");
  refused("{\"choices\":[{\"logprobs\":{\"tokens\":[\"A\",\" b\"],\"token_logprobs\":[null,null],"
          "\"top_logprobs\":[null,null]}}]}", E, 1, 0, "logprobs.token_logprobs[]: expected a number");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_echo_whole),
      cmocka_unit_test(test_echo_streamed),
      cmocka_unit_test(test_prompt_logprobs),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
