/*
 * test_sim_agent.c - the simulator's `agent` behaviour: the section's parser and its
 * file:line errors, the Markov chain's draws against the planted probabilities, the
 * conversation state read from a chat request, and OpenAI's tool-call format in
 * stream chunks and whole responses.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/sim_behavior.h"
#include "sim/api.h"
#include "sim/behavior.h"

#define VOCAB 128256u

static const char *const PLANTED =
    "agent:\n"
    "  start: {search: 0.6, lookup: 0.3, final: 0.1}\n"
    "  after:\n"
    "    search: {fetch: 0.5, final: 0.5}\n"
    "    lookup: {final: 1}\n"
    "  give_up_after_error: 0.75\n"
    "  max_tool_calls: 3\n"
    "  answer: \"ANSWER: 42\"\n"
    "  arguments: {fetch: '{\"url\": \"http://example.invalid/a\"}'}\n";

/* A behaviour file's text loaded by the simulator's loader; NULL with *err set. */
static cb_sim_behavior *load(const char *text, cb_error *err) {
  const char *path = "/tmp/cb_agent_b.yaml";
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  cb_sim_behavior *b = NULL;
  cb_sim_behavior_load(path, &b, err);
  remove(path);
  return b;
}

static void expect_error(const char *text, const char *want) {
  cb_error err;
  cb_sim_behavior *b = load(text, &err);
  assert_null(b);
  if (!strstr(err.msg, want)) fail_msg("error '%s' does not say '%s'", err.msg, want);
}

static void test_parse_errors(void **state) {
  (void)state;
  expect_error("agent:\n  start: {a: 0.5, b: 0.4}\n", "b.yaml:2: key 'agent.start': the probabilities must sum to 1, got 0.9");
  expect_error("agent:\n  start: {a: 1}\n  colour: red\n", "b.yaml:3: unknown key 'agent.colour'");
  expect_error("agent:\n  start: {a: 1.5, b: -0.5}\n", "b.yaml:2: key 'agent.start.a': must be in [0, 1]");
  expect_error("agent:\n  after: {a: {final: 1}}\n", "key 'agent': 'start' (the first step's choices) is required");
  expect_error("agent:\n  start: {a: 1}\n  after:\n    final: {a: 1}\n", "b.yaml:4: key 'agent.after': 'final' is the answer");
  expect_error("agent:\n  start: {a: 1}\n  after:\n    a: {b: 0.2}\n", "b.yaml:4: key 'agent.after.a': the probabilities must sum to 1");
  expect_error("agent:\n  start: {a: 1}\n  max_tool_calls: 2.5\n", "b.yaml:3: key 'agent.max_tool_calls': expected a whole number");
  expect_error("agent:\n  start: [a, b]\n", "b.yaml:2: key 'agent.start': expected a mapping");
  expect_error("agent:\n  start: {a: x}\n", "b.yaml:2: key 'agent.start.a': expected a number");
  expect_error("agent:\n  start: {a: 1}\n  answer: ''\n", "b.yaml:3: key 'agent.answer': expected a non-empty text");
}

/* A chat request with tools at a point of its conversation. */
static cb__sim_api_request at(int64_t calls, const char *last, int error) {
  cb__sim_api_request r;
  memset(&r, 0, sizeof r);
  r.kind = CB__SIM_API_CHAT;
  r.has_tools = 1;
  r.tool_calls_made = calls;
  r.last_tool = (char *)last;
  r.last_tool_error = error;
  return r;
}

/* The reply to request r with output seed `seed`: 1 when a section answered. */
static int reply_of(const cb_sim_behavior *b, const cb__sim_api_request *r, uint64_t seed,
                    cb__sim_behavior_reply *rep) {
  cb__sim_behavior_request rq;
  cb__sim_behavior_request_init(b, &rq, r, "task", 4, 10, 1);
  rq.request_seed = seed;
  memset(rep, 0, sizeof *rep);
  cb_buf_init(&rep->text, 0);
  return cb__sim_behavior_reply_to(b, &rq, rep);
}

/* Share of n request seeds whose reply calls `tool` (NULL: answers `answer`). */
static double share(const cb_sim_behavior *b, const cb__sim_api_request *r, const char *tool,
                    const char *answer, int n) {
  int hits = 0;
  for (int i = 0; i < n; i++) {
    cb__sim_behavior_reply rep;
    assert_true(reply_of(b, r, (uint64_t)i, &rep));
    cb_buf_append_char(&rep.text, '\0');
    if (tool ? !strcmp(rep.tool_name, tool) : !rep.tool_name[0] && !strcmp(rep.text.data, answer)) hits++;
    cb_buf_free(&rep.text);
  }
  return (double)hits / n;
}

static void test_decide_planted(void **state) {
  (void)state;
  cb_error err;
  cb_sim_behavior *b = load(PLANTED, &err);
  if (!b) fail_msg("%s", err.msg);
  const int n = 20000; /* a share's sd is at most 0.0036: 0.015 is > 4 sd */
  cb__sim_api_request r = at(0, NULL, 0);
  assert_true(fabs(share(b, &r, "search", NULL, n) - 0.6) < 0.015);
  assert_true(fabs(share(b, &r, "lookup", NULL, n) - 0.3) < 0.015);
  assert_true(fabs(share(b, &r, NULL, "ANSWER: 42", n) - 0.1) < 0.015);
  r = at(1, "search", 0);
  assert_true(fabs(share(b, &r, "fetch", NULL, n) - 0.5) < 0.015);
  r = at(1, "lookup", 0);
  assert_true(share(b, &r, NULL, "ANSWER: 42", n) == 1.0);
  r = at(2, "fetch", 0); /* no `after` row: the answer */
  assert_true(share(b, &r, NULL, "ANSWER: 42", n) == 1.0);
  r = at(1, "search", 1); /* a failed tool: give up at the planted rate */
  assert_true(fabs(share(b, &r, NULL, "I could not complete the task.", n) - 0.75) < 0.015);
  r = at(3, "search", 0); /* max_tool_calls reached */
  assert_true(share(b, &r, NULL, "ANSWER: 42", n) == 1.0);
  /* Same request, same seed: same reply; the arguments are the planted ones. */
  r = at(1, "search", 0);
  cb__sim_behavior_reply x, y;
  uint64_t seed = 0;
  for (;; seed++) {
    reply_of(b, &r, seed, &x);
    if (x.tool_name[0]) break;
    cb_buf_free(&x.text);
  }
  reply_of(b, &r, seed, &y);
  assert_string_equal(x.call_id, y.call_id);
  assert_string_equal(x.tool_name, "fetch");
  cb_buf_append_char(&x.text, '\0');
  assert_string_equal(x.text.data, "{\"url\": \"http://example.invalid/a\"}");
  assert_true(!strncmp(x.call_id, "call_", 5));
  cb_buf_free(&x.text);
  cb_buf_free(&y.text);
  /* A request without tools is not the agent's to answer. */
  r.has_tools = 0;
  assert_false(reply_of(b, &r, 1, &x));
  cb_buf_free(&x.text);
  cb_sim_behavior_free(b);
}

static void test_request_state(void **state) {
  (void)state;
  const char *body =
      "{\"messages\":[{\"role\":\"user\",\"content\":\"go\"},"
      "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
      "\"function\":{\"name\":\"search\",\"arguments\":\"{}\"}}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"{\\\"hits\\\": 3}\"},"
      "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c2\",\"type\":\"function\","
      "\"function\":{\"name\":\"fetch\",\"arguments\":\"{}\"}}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"{\\\"error\\\": \\\"timeout\\\"}\"}],"
      "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"search\"}}]}";
  static const cb__sim_tokens approx = {.tok = NULL, .vocab = VOCAB};
  cb__sim_api_request r;
  cb__sim_api_error e;
  assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, body, strlen(body), &approx, &r, &e), CB_OK);
  assert_true(r.has_tools);
  assert_int_equal(r.tool_calls_made, 2);
  assert_string_equal(r.last_tool, "fetch");
  assert_true(r.last_tool_error);
  cb__sim_api_request_free(&r);
  const char *plain = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[]}";
  assert_int_equal(cb__sim_api_parse(CB__SIM_API_CHAT, plain, strlen(plain), &approx, &r, &e), CB_OK);
  assert_false(r.has_tools);
  assert_int_equal(r.tool_calls_made, 0);
  assert_null(r.last_tool);
  cb__sim_api_request_free(&r);
}

static json_t *sse_json(const char *chunk) {
  size_t len = strlen(chunk);
  assert_true(!strncmp(chunk, "data: ", 6) && len > 8 && !strcmp(chunk + len - 2, "\n\n"));
  json_t *v = json_loadb(chunk + 6, len - 8, 0, NULL);
  assert_non_null(v);
  return v;
}

static void tok_fn(void *ctx, int64_t k, cb__sim_api_token *t) {
  const char *const *pieces = ctx;
  memset(t, 0, sizeof *t);
  t->text = pieces[k];
  t->len = strlen(pieces[k]);
}

/* OpenAI's ChoiceDeltaToolCall: the first piece has index, id, type and name. */
static void test_render_tool_call(void **state) {
  (void)state;
  cb__sim_api_tool_call call = {.id = "call_1", .name = "search"};
  cb__sim_api_response r = {.kind = CB__SIM_API_CHAT, .id = "chatcmpl-1", .model = "m",
                            .created = 1, .tool_call = &call};
  const char *pieces[] = {"{\"q\":", " \"x\"}"};
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_token t;
  tok_fn(pieces, 0, &t);
  cb__sim_api_render_token_chunk(&b, &r, &t);
  json_t *v = sse_json(b.data);
  json_t *tc = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(v, "choices"), 0), "delta"), "tool_calls"), 0);
  assert_int_equal(json_integer_value(json_object_get(tc, "index")), 0);
  assert_string_equal(json_string_value(json_object_get(tc, "id")), "call_1");
  assert_string_equal(json_string_value(json_object_get(tc, "type")), "function");
  assert_string_equal(json_string_value(json_object_get(json_object_get(tc, "function"), "name")), "search");
  assert_string_equal(json_string_value(json_object_get(json_object_get(tc, "function"), "arguments")), "{\"q\":");
  json_decref(v);
  cb_buf_reset(&b);
  tok_fn(pieces, 1, &t);
  t.text_offset = 5;
  cb__sim_api_render_token_chunk(&b, &r, &t);
  v = sse_json(b.data);
  tc = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(v, "choices"), 0), "delta"), "tool_calls"), 0);
  assert_null(json_object_get(tc, "id"));
  assert_null(json_object_get(json_object_get(tc, "function"), "name"));
  assert_string_equal(json_string_value(json_object_get(json_object_get(tc, "function"), "arguments")), " \"x\"}");
  json_decref(v);
  cb_buf_reset(&b);
  cb__sim_api_render_completion(&b, &r, 2, tok_fn, pieces, "tool_calls");
  v = json_loadb(b.data, b.len, 0, NULL);
  assert_non_null(v);
  json_t *choice = json_array_get(json_object_get(v, "choices"), 0);
  json_t *msg = json_object_get(choice, "message");
  assert_true(json_is_null(json_object_get(msg, "content")));
  tc = json_array_get(json_object_get(msg, "tool_calls"), 0);
  assert_string_equal(json_string_value(json_object_get(tc, "id")), "call_1");
  assert_string_equal(json_string_value(json_object_get(json_object_get(tc, "function"), "arguments")), "{\"q\": \"x\"}");
  assert_string_equal(json_string_value(json_object_get(choice, "finish_reason")), "tool_calls");
  json_decref(v);
  cb_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_decide_planted),
      cmocka_unit_test(test_request_state),
      cmocka_unit_test(test_render_tool_call),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
