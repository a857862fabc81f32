/*
 * test_sim_behavior_dialog.c - the simulator's `dialog` behaviour (behavior_dialog.c):
 * its keys and their FILE:LINE errors, and, over many conversations sent as parsed
 * chat requests, slot recall recovered at each depth within a binomial bound of the
 * planted recall * decay^depth, the share of forgotten slots asked back, JSON answers,
 * the thread tag, determinism, and conversations without slots left alone.
 */
#define _XOPEN_SOURCE 700
#include <jansson.h>
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
#include "calibench/sim_behavior.h"
#include "sim/api.h"
#include "sim/behavior.h"
#define TEST_TMPDIR_PREFIX "cb-bdialog"
#include "test_sim_behavior_file.h"

static void test_keys(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"dialog:\n  recal: 0.9\n",
       "b.yaml:2: unknown key 'dialog.recal' (known: recall, decay, clarify, thread_tag)"},
      {"dialog:\n  recall: 0.9\n  decay: 1.5\n", "b.yaml:3: key 'dialog.decay': must be in"},
      {"dialog:\n  clarify: -0.1\n", "b.yaml:2: key 'dialog.clarify'"},
      {"dialog:\n  thread_tag: maybe\n", "b.yaml:2: key 'dialog.thread_tag'"},
      {"dialog: [1]\n", "b.yaml:1: key 'dialog': expected a mapping"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_error(bad[i].text, bad[i].want);
  cb_sim_behavior *b = load_ok("dialog:\n  recall: 0.9\n  decay: 0.8\n  clarify: 0.5\n  thread_tag: true\n");
  cb_sim_behavior_free(b);
}

/* A conversation: "My budget is 300 EUR." then `depth` other user turns (each
 * answered "ok"), the last asking for the budget; its own request seed. */
static void conversation(cb_buf *body, int depth, uint64_t seed, const char *ask) {
  json_t *msgs = json_array();
  for (int t = 0; t <= depth; t++) {
    char text[160];
    if (t == 0 && depth == 0) snprintf(text, sizeof text, "My budget is 300 EUR. %s", ask);
    else if (t == 0) snprintf(text, sizeof text, "My budget is 300 EUR.");
    else if (t == depth) snprintf(text, sizeof text, "%s", ask);
    else snprintf(text, sizeof text, "Tell me a fact about cats, number %d.", t);
    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", text));
    if (t < depth) json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "assistant", "content", "ok"));
  }
  json_t *root = json_pack("{s:s, s:o, s:I}", "model", "m", "messages", msgs, "seed", (json_int_t)seed);
  char *text = json_dumps(root, JSON_COMPACT);
  cb_buf_reset(body);
  cb_buf_append_str(body, text);
  free(text);
  json_decref(root);
}

/* The behaviour's answer to a chat body (1 when it answered). */
static int answer(const cb_sim_behavior *b, const cb_buf *body, cb_buf *out) {
  static const cb__sim_tokens approx = {.tok = NULL, .vocab = 128256u};
  cb__sim_api_request req;
  cb__sim_api_error e;
  assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, body->data, body->len, &approx, &req, &e), CB_OK);
  cb__sim_behavior_request rq;
  cb__sim_behavior_request_init(b, &rq, &req, req.match_key, strlen(req.match_key), (int64_t)req.prompt_len, 7);
  cb__sim_behavior_reply reply;
  cb_buf_init(&reply.text, 0);
  int got = cb__sim_behavior_reply_to(b, &rq, &reply);
  cb_buf_reset(out);
  if (got) cb_buf_append(out, reply.text.data, reply.text.len);
  cb_buf_free(&reply.text);
  cb__sim_api_request_free(&req);
  return got;
}

/* Recall at depth 0..5 is recall * decay^d within 4 standard errors over N
 * conversations; among the forgotten, the share asked back is `clarify`. */
static void test_recall_by_depth(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("dialog:\n  recall: 0.95\n  decay: 0.7\n  clarify: 0.4\n");
  enum { N = 600 };
  cb_buf body, out;
  cb_buf_init(&body, 0);
  cb_buf_init(&out, 0);
  size_t asked = 0, forgotten = 0;
  for (int d = 0; d <= 5; d++) {
    int recalled = 0;
    for (uint64_t s = 0; s < N; s++) {
      conversation(&body, d, s + 1000 * (uint64_t)d, "What is my budget?");
      assert_true(answer(b, &body, &out));
      if (strstr(out.data, "Your budget is 300 EUR.")) {
        recalled++;
      } else {
        forgotten++;
        if (strstr(out.data, "Could you remind me of your budget?")) asked++;
        else assert_non_null(strstr(out.data, "Your budget is 30")); /* a wrong number: 301..309 */
      }
    }
    double p = 0.95 * pow(0.7, d), se = sqrt(p * (1 - p) / N);
    double got = (double)recalled / N;
    if (fabs(got - p) > 4 * se) fail_msg("depth %d: recall %.3f, planted %.3f (se %.3f)", d, got, p, se);
  }
  double share = (double)asked / (double)forgotten, se = sqrt(0.4 * 0.6 / (double)forgotten);
  if (fabs(share - 0.4) > 4 * se) fail_msg("asked back %.3f of the forgotten, planted 0.4", share);
  /* the same request, the same answer; another conversation seed, its own draws */
  cb_buf again;
  cb_buf_init(&again, 0);
  int differ = 0;
  for (uint64_t s = 0; s < 40; s++) {
    conversation(&body, 4, s, "What is my budget?");
    answer(b, &body, &out);
    answer(b, &body, &again);
    assert_string_equal(out.data, again.data);
    conversation(&body, 4, s + 1, "What is my budget?");
    answer(b, &body, &again);
    differ += strcmp(out.data, again.data) != 0;
  }
  assert_true(differ > 0);
  cb_buf_free(&again);
  cb_buf_free(&body);
  cb_buf_free(&out);
  cb_sim_behavior_free(b);
}

static uint32_t fnv1a32(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 16777619u;
  }
  return h;
}

static void test_json_tag_and_no_slots(void **state) {
  (void)state;
  cb_sim_behavior *b = load_ok("dialog:\n  thread_tag: true\n");
  cb_buf body, out;
  cb_buf_init(&body, 0);
  cb_buf_init(&out, 0);
  /* JSON asked: one object, the slot (recall 1 by default) and the tag */
  conversation(&body, 2, 1, "Give my budget as JSON.");
  assert_true(answer(b, &body, &out));
  json_t *j = json_loads(out.data, 0, NULL);
  if (!j) fail_msg("not JSON: %s", out.data);
  assert_string_equal(json_string_value(json_object_get(j, "budget")), "300 EUR");
  assert_int_equal(json_integer_value(json_object_get(j, "turn")), 3);
  char ref[16];
  snprintf(ref, sizeof ref, "%08x", fnv1a32("ok"));
  assert_string_equal(json_string_value(json_object_get(j, "ref")), ref);
  json_decref(j);
  /* text: the tag names the turn and the previous reply's hash */
  conversation(&body, 1, 1, "What is my budget?");
  assert_true(answer(b, &body, &out));
  char want[64];
  snprintf(want, sizeof want, "Your budget is 300 EUR. [turn 2 ref %08x]", fnv1a32("ok"));
  assert_string_equal(out.data, want);
  /* a turn that needs no slot */
  conversation(&body, 1, 1, "Tell me more.");
  assert_true(answer(b, &body, &out));
  assert_non_null(strstr(out.data, "Noted. [turn 2 ref"));
  /* a conversation without any slot statement is not the dialog's */
  const char *plain = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}";
  cb_buf_reset(&body);
  cb_buf_append_str(&body, plain);
  assert_false(answer(b, &body, &out));
  /* names of two words; a later statement replaces an earlier one */
  const char *two = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"My home town is Porto. "
                    "My home town is Braga, by the way! What is my home town?\"}]}";
  cb_buf_reset(&body);
  cb_buf_append_str(&body, two);
  assert_true(answer(b, &body, &out));
  assert_non_null(strstr(out.data, "Your home town is Braga."));
  cb_buf_free(&body);
  cb_buf_free(&out);
  cb_sim_behavior_free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keys),
      cmocka_unit_test(test_recall_by_depth),
      cmocka_unit_test(test_json_tag_and_no_slots),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
