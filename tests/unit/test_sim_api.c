/*
 * test_sim_api.c - the simulator's OpenAI protocol layer: request validation,
 * rendered bodies (checked by parsing them back with jansson), faults, scripted
 * responses and the Prometheus exposition.
 */
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

#include "calibench/sim.h"
#include "calibench/sim_server.h"
#include "calibench/tok.h"
#include "sim/api.h"
#include "sim/metrics.h"
#include "sim/responses.h"
#include "test_file.h"

#define VOCAB 128256u

static cb_status parse(cb__sim_api_kind kind, const char *body, cb__sim_api_request *r,
                       cb__sim_api_error *e) {
  memset(e, 0, sizeof *e);
  static const cb__sim_tokens approx = {.tok = NULL, .vocab = VOCAB};
  return cb__sim_api_parse(kind, body, strlen(body), &approx, r, e);
}

static void test_parse_chat(void **state) {
  (void)state;
  cb__sim_api_request r;
  cb__sim_api_error e;
  const char *body =
      "{\"model\":\"llama-3.1-8b\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
      "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Hello there\"}]}],"
      "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"max_completion_tokens\":7,"
      "\"ignore_eos\":true,\"min_tokens\":2,\"logprobs\":true,\"top_logprobs\":3,\"seed\":9,"
      "\"temperature\":0.7}";
  assert_int_equal(parse(CB__SIM_API_CHAT, body, &r, &e), CB_OK);
  assert_string_equal(r.model, "llama-3.1-8b");
  assert_string_equal(r.match_key, "Hello there");
  /* every message, in order, for a behaviour that reads the conversation */
  assert_int_equal(r.num_messages, 2);
  assert_string_equal(r.messages[0].role, "system");
  assert_string_equal(r.messages[0].content, "Be brief.");
  assert_string_equal(r.messages[1].role, "user");
  assert_string_equal(r.messages[1].content, "Hello there");
  assert_int_equal(r.messages[1].content_len, 11);
  assert_true(r.stream && r.include_usage && r.ignore_eos && r.logprobs && r.has_seed);
  assert_int_equal(r.max_tokens, 7);
  assert_int_equal(r.min_tokens, 2);
  assert_int_equal(r.top_logprobs, 3);
  assert_int_equal(r.seed, 9);
  /* The template adds per-message tokens: more than the bare text's 5. */
  const char *rendered = "<|system|>\nBe brief.<|end|>\n<|user|>\nHello there<|end|>\n<|assistant|>\n";
  assert_int_equal(r.prompt_len, cb_tok_approx_tokenize(rendered, strlen(rendered), VOCAB, NULL, 0));
  assert_true(r.prompt_len > 5);
  cb__sim_api_request_free(&r);
}

static void test_parse_completions(void **state) {
  (void)state;
  cb__sim_api_request r;
  cb__sim_api_error e;
  assert_int_equal(parse(CB__SIM_API_COMPLETIONS, "{\"prompt\":\"The cache hit rate\",\"max_tokens\":3,\"logprobs\":2}", &r, &e), CB_OK);
  assert_null(r.model);
  assert_int_equal(r.prompt_len, 4);
  assert_int_equal(r.max_tokens, 3);
  assert_true(r.logprobs);
  assert_int_equal(r.top_logprobs, 2);
  cb__sim_api_request_free(&r);
  assert_int_equal(parse(CB__SIM_API_COMPLETIONS, "{\"prompt\":[[1,2,3]]}", &r, &e), CB_OK);
  assert_int_equal(r.prompt_len, 3);
  assert_int_equal(r.prompt_ids[2], 3);
  assert_int_equal(r.max_tokens, -1);
  cb__sim_api_request_free(&r);
}

/* Each bad request: the status, the param and a fragment of the message. */
static void test_parse_errors(void **state) {
  (void)state;
  static const struct {
    cb__sim_api_kind kind;
    const char *body, *param, *fragment;
  } cases[] = {
      {CB__SIM_API_CHAT, "{\"messages\": [", "", "not valid JSON"},
      {CB__SIM_API_CHAT, "[1,2]", "", "must be a JSON object"},
      {CB__SIM_API_CHAT, "{\"model\":\"m\"}", "messages", "'messages' is required"},
      {CB__SIM_API_CHAT, "{\"messages\":[]}", "messages", "non-empty array"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"wizard\",\"content\":\"x\"}]}", "messages", "'wizard'"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}]}", "messages", "this model does not accept images"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_audio\"}]}]}", "messages", "only {\"type\": \"text\""},
      {CB__SIM_API_CHAT, "{\"model\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", "model", "must be a string"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":0}", "max_tokens", "at least 1"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":\"9\"}", "max_tokens", "must be an integer"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}", "stream", "must be a boolean"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream_options\":{\"include_usage\":true}}", "stream_options", "stream=True"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"top_logprobs\":2}", "top_logprobs", "`logprobs` must be set to true"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"logprobs\":true,\"top_logprobs\":21}", "top_logprobs", "between 0 and 20"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"n\":2}", "n", "only n=1"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":\"hot\"}", "temperature", "must be a number"},
      {CB__SIM_API_CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":2,\"min_tokens\":3}", "min_tokens", "less than or equal"},
      {CB__SIM_API_COMPLETIONS, "{}", "prompt", "'prompt' is required"},
      {CB__SIM_API_COMPLETIONS, "{\"prompt\":\"\"}", "prompt", "must not be empty"},
      {CB__SIM_API_COMPLETIONS, "{\"prompt\":[\"a\",\"b\"]}", "prompt", "batched prompts"},
      {CB__SIM_API_COMPLETIONS, "{\"prompt\":[1,-2]}", "prompt", "token id"},
      {CB__SIM_API_COMPLETIONS, "{\"prompt\":\"x\",\"logprobs\":21}", "logprobs", "between 0 and 20"},
      {CB__SIM_API_EMBEDDINGS, "{}", "input", "'input' is required"},
      {CB__SIM_API_EMBEDDINGS, "{\"input\":[\"a\",\"\"]}", "input", "input[1] must not be empty"},
      {CB__SIM_API_EMBEDDINGS, "{\"input\":\"a\",\"encoding_format\":\"hex\"}", "encoding_format", "\"float\" or \"base64\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb__sim_api_request r;
    cb__sim_api_error e;
    if (parse(cases[i].kind, cases[i].body, &r, &e) == CB_OK)
      fail_msg("case %zu (%s) was accepted", i, cases[i].body);
    if (e.status != 400 || strcmp(e.param, cases[i].param) || !strstr(e.message, cases[i].fragment))
      fail_msg("case %zu (%s): got %d param '%s' message '%s', want 400 param '%s' containing '%s'",
               i, cases[i].body, e.status, e.param, e.message, cases[i].param, cases[i].fragment);
    assert_string_equal(e.type, "invalid_request_error");
  }
}

static void test_render_error(void **state) {
  (void)state;
  cb__sim_api_error e;
  cb__sim_api_fail(&e, 404, "invalid_request_error", "model", "model_not_found",
                   "The model `%s` does not exist.", "x\"y");
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_render_error(&b, &e);
  json_error_t je;
  json_t *root = json_loads(b.data, 0, &je);
  assert_non_null(root);
  json_t *err = json_object_get(root, "error");
  assert_string_equal(json_string_value(json_object_get(err, "message")), "The model `x\"y` does not exist.");
  assert_string_equal(json_string_value(json_object_get(err, "code")), "model_not_found");
  assert_string_equal(json_string_value(json_object_get(err, "param")), "model");
  json_decref(root);
  cb_buf_free(&b);
}

/* Token source for rendering tests: the synthetic text of seed 5, with offsets. */
struct tok_ctx {
  char text[64][CB_SIM_TOKEN_TEXT_MAX];
  size_t offset[64];
};
static void tok_fn(void *ctx, int64_t k, cb__sim_api_token *t) {
  struct tok_ctx *c = ctx;
  t->text = c->text[k];
  t->len = strlen(c->text[k]);
  t->text_offset = c->offset[k];
  cb__sim_api_token_logprobs(5, k, 4, t);
}

static json_t *sse_json(const char *chunk) {
  assert_true(!strncmp(chunk, "data: ", 6));
  size_t len = strlen(chunk);
  assert_true(len > 8 && !strcmp(chunk + len - 2, "\n\n"));
  json_error_t je;
  json_t *v = json_loadb(chunk + 6, len - 8, 0, &je);
  if (!v) fail_msg("chunk is not JSON: %s (%s)", chunk, je.text);
  return v;
}

static void test_render_stream_and_whole(void **state) {
  (void)state;
  struct tok_ctx c;
  size_t off = 0;
  for (int k = 0; k < 64; k++) {
    cb_sim_text_token(5, k, VOCAB, c.text[k]);
    c.offset[k] = off;
    off += strlen(c.text[k]);
  }
  cb__sim_api_response r = {.kind = CB__SIM_API_CHAT, .id = "chatcmpl-1", .model = "m",
                            .created = 1700000000, .logprobs = 1, .top_logprobs = 3,
                            .prompt_tokens = 10, .cached_tokens = 4};
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_render_role_chunk(&b, &r);
  json_t *v = sse_json(b.data);
  json_t *delta = json_object_get(json_array_get(json_object_get(v, "choices"), 0), "delta");
  assert_string_equal(json_string_value(json_object_get(delta, "role")), "assistant");
  assert_string_equal(json_string_value(json_object_get(v, "object")), "chat.completion.chunk");
  json_decref(v);

  cb__sim_api_token t;
  tok_fn(&c, 3, &t);
  cb_buf_reset(&b);
  cb__sim_api_render_token_chunk(&b, &r, &t);
  v = sse_json(b.data);
  json_t *choice = json_array_get(json_object_get(v, "choices"), 0);
  assert_string_equal(json_string_value(json_object_get(json_object_get(choice, "delta"), "content")), c.text[3]);
  json_t *lp = json_array_get(json_object_get(json_object_get(choice, "logprobs"), "content"), 0);
  json_t *top = json_object_get(lp, "top_logprobs");
  assert_int_equal(json_array_size(top), 3);
  /* The token first, then strictly decreasing alternatives, all distinct. */
  double prev = 1;
  for (size_t i = 0; i < 3; i++) {
    double x = json_real_value(json_object_get(json_array_get(top, i), "logprob"));
    assert_true(x < prev && x <= 0);
    prev = x;
  }
  assert_string_equal(json_string_value(json_object_get(json_array_get(top, 0), "token")), c.text[3]);
  json_decref(v);

  cb_buf_reset(&b);
  cb__sim_api_render_usage_chunk(&b, &r, 12);
  v = sse_json(b.data);
  json_t *usage = json_object_get(v, "usage");
  assert_int_equal(json_integer_value(json_object_get(usage, "total_tokens")), 22);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(usage, "prompt_tokens_details"), "cached_tokens")), 4);
  assert_int_equal(json_array_size(json_object_get(v, "choices")), 0);
  json_decref(v);

  /* Whole completions response with logprobs arrays. */
  r.kind = CB__SIM_API_COMPLETIONS;
  r.id = "cmpl-1";
  cb_buf_reset(&b);
  cb__sim_api_render_completion(&b, &r, 20, tok_fn, &c, "length");
  json_error_t je;
  v = json_loads(b.data, 0, &je);
  assert_non_null(v);
  choice = json_array_get(json_object_get(v, "choices"), 0);
  char want[512] = "";
  for (int k = 0; k < 20; k++) strcat(want, c.text[k]);
  assert_string_equal(json_string_value(json_object_get(choice, "text")), want);
  assert_string_equal(json_string_value(json_object_get(choice, "finish_reason")), "length");
  json_t *lps = json_object_get(choice, "logprobs");
  assert_int_equal(json_array_size(json_object_get(lps, "tokens")), 20);
  assert_int_equal(json_integer_value(json_array_get(json_object_get(lps, "text_offset"), 19)), c.offset[19]);
  assert_int_equal(json_object_size(json_array_get(json_object_get(lps, "top_logprobs"), 0)), 3);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "usage"), "completion_tokens")), 20);
  json_decref(v);
  cb_buf_free(&b);
}

/* Model output with markup and control bytes stays inside its JSON string. */
static void test_render_escapes(void **state) {
  (void)state;
  cb__sim_api_response r = {.kind = CB__SIM_API_CHAT, .id = "x", .model = "m\"<script>"};
  const char *out = "\"><img onerror=alert(1)>\n\x01";
  cb__sim_api_token t = {.text = out, .len = strlen(out)};
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_render_token_chunk(&b, &r, &t);
  json_t *v = sse_json(b.data);
  assert_string_equal(json_string_value(json_object_get(v, "model")), "m\"<script>");
  json_t *choice = json_array_get(json_object_get(v, "choices"), 0);
  assert_memory_equal(json_string_value(json_object_get(json_object_get(choice, "delta"), "content")), t.text, t.len);
  json_decref(v);
  cb_buf_free(&b);
}

static void test_embeddings(void **state) {
  (void)state;
  cb__sim_api_request r;
  cb__sim_api_error e;
  assert_int_equal(parse(CB__SIM_API_EMBEDDINGS, "{\"input\":[\"same text\",\"other\",\"same text\"]}", &r, &e), CB_OK);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_api_render_embeddings(&b, &r, "m", 16, NULL);
  json_error_t je;
  json_t *v = json_loads(b.data, 0, &je);
  assert_non_null(v);
  json_t *data = json_object_get(v, "data");
  assert_int_equal(json_array_size(data), 3);
  double dot01 = 0, dot02 = 0, norm = 0;
  for (size_t i = 0; i < 16; i++) {
    double a = json_number_value(json_array_get(json_object_get(json_array_get(data, 0), "embedding"), i));
    double bb = json_number_value(json_array_get(json_object_get(json_array_get(data, 1), "embedding"), i));
    double c = json_number_value(json_array_get(json_object_get(json_array_get(data, 2), "embedding"), i));
    norm += a * a;
    dot01 += a * bb;
    dot02 += a * c;
  }
  assert_true(fabs(norm - 1) < 1e-6);
  assert_true(fabs(dot02 - 1) < 1e-6); /* equal inputs embed equally */
  assert_true(fabs(dot01) < 0.99);
  json_decref(v);
  cb__sim_api_request_free(&r);

  /* base64: 4 little-endian bytes per float. */
  assert_int_equal(parse(CB__SIM_API_EMBEDDINGS, "{\"input\":\"same text\",\"encoding_format\":\"base64\"}", &r, &e), CB_OK);
  cb_buf_reset(&b);
  cb__sim_api_render_embeddings(&b, &r, "m", 16, NULL);
  v = json_loads(b.data, 0, &je);
  const char *s = json_string_value(json_object_get(json_array_get(json_object_get(v, "data"), 0), "embedding"));
  assert_non_null(s);
  assert_int_equal(strlen(s), 88); /* 64 bytes -> 88 base64 chars with padding */
  json_decref(v);
  cb__sim_api_request_free(&r);
  cb_buf_free(&b);
}

static void test_faults(void **state) {
  (void)state;
  cb_sim_fault f[3];
  cb_error err;
  assert_int_equal(cb_sim_fault_parse("429:p=0.25,retry-after=3", &f[0], &err), CB_OK);
  assert_int_equal(f[0].kind, CB_SIM_FAULT_HTTP_429);
  assert_int_equal(f[0].retry_after_s, 3);
  assert_int_equal(cb_sim_fault_parse("cut:index=4,after=2", &f[1], &err), CB_OK);
  assert_int_equal(cb_sim_fault_parse("stall:every=10,ms=50", &f[2], &err), CB_OK);
  assert_int_equal(f[2].stall_ms, 50);
  /* ms= and retry-after= take the one duration syntax; a bare number is the key's unit. */
  cb_sim_fault g;
  assert_int_equal(cb_sim_fault_parse("stall:p=1,ms=1.5s", &g, &err), CB_OK);
  assert_int_equal(g.stall_ms, 1500);
  assert_int_equal(cb_sim_fault_parse("429:p=1,retry-after=2m", &g, &err), CB_OK);
  assert_int_equal(g.retry_after_s, 120);
  assert_int_equal(cb_sim_fault_parse("429:p=1,retry-after=1500ms", &g, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "retry-after=1500ms is not a whole number of s in [0, 86400]"));
  assert_int_equal(cb_sim_fault_parse("stall:p=1,ms=2parsecs", &g, &err), CB_ERR_PARSE);
  assert_non_null(strstr(err.msg, "--fault 'stall:p=1,ms=2parsecs': ms=2parsecs: expected a "
                                  "duration such as 500ms, 2s or 1m"));
  /* Without an error struct the failure is still a failure (the message's wrap used to
   * return its own CB_OK then). */
  assert_int_equal(cb_sim_fault_parse("stall:p=1,ms=2parsecs", &g, NULL), CB_ERR_PARSE);
  assert_ptr_equal(cb_sim_fault_pick(&f[1], 2, 1, 4), &f[1]);
  assert_ptr_equal(cb_sim_fault_pick(&f[1], 2, 1, 9), &f[2]);
  assert_null(cb_sim_fault_pick(&f[1], 2, 1, 5));
  /* p=0.25 hits about a quarter, deterministically per (seed, index). */
  int hits = 0;
  for (uint64_t i = 0; i < 4000; i++) {
    const cb_sim_fault *x = cb_sim_fault_pick(f, 1, 77, i);
    assert_ptr_equal(x, cb_sim_fault_pick(f, 1, 77, i));
    hits += x != NULL;
  }
  assert_in_range(hits, 900, 1100);
  static const char *const bad[] = {"teapot:p=1", "500", "500:p=2", "cut:index=x", "cut:p=0.1,foo=1", "stall:p"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error_clear(&err);
    if (cb_sim_fault_parse(bad[i], &f[0], &err) == CB_OK) fail_msg("'%s' was accepted", bad[i]);
    assert_non_null(strstr(err.msg, bad[i]));
  }
}

static void test_responses(void **state) {
  (void)state;
  char path[] = "/tmp/cb_responses_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  write_file(path, "{\"prompt\": \"What is 2+2?\", \"response\": \"4, of course.\"}\r\n\n"
                   "{\"prompt\": \"Hi\", \"response\": \"Hello!\"}\n");
  cb__sim_responses *r;
  cb_error err;
  assert_int_equal(cb__sim_responses_load(path, VOCAB, &r, &err), CB_OK);
  assert_int_equal(cb__sim_responses_count(r), 2);
  const cb__sim_response *x = cb__sim_responses_find(r, "What is 2+2?", 12);
  assert_non_null(x);
  assert_string_equal(x->text, "4, of course.");
  assert_int_equal(x->num_tokens, 5); /* 4 "," " of" " course" "." */
  assert_int_equal(x->ends[x->num_tokens - 1], x->text_len);
  assert_null(cb__sim_responses_find(r, "What", 4));
  cb__sim_responses_free(r);

  static const struct { const char *text, *fragment; } bad[] = {
      {"{\"prompt\":\"a\",\"response\":\"b\"}\nnot json\n", ":2:"},
      {"{\"prompt\":1,\"response\":\"b\"}\n", "field 'prompt'"},
      {"{\"prompt\":\"a\"}\n", "field 'response'"},
      {"{\"prompt\":\"a\",\"response\":\"b\"}\n{\"prompt\":\"a\",\"response\":\"c\"}\n", "duplicate prompt"},
      {"\n\n", "no responses"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    write_file(path, bad[i].text);
    cb_error_clear(&err);
    assert_int_not_equal(cb__sim_responses_load(path, VOCAB, &r, &err), CB_OK);
    assert_null(r);
    if (!strstr(err.msg, bad[i].fragment) || !strstr(err.msg, path))
      fail_msg("case %zu: message '%s' lacks '%s' or the path", i, err.msg, bad[i].fragment);
  }
  close(fd);
  unlink(path);
}

static void test_metrics_exposition(void **state) {
  (void)state;
  cb__sim_metrics m[2];
  cb__sim_metrics_init(&m[0]);
  cb__sim_metrics_init(&m[1]);
  cb_prom_hist_observe(&m[0].ttft, 0.003);
  cb_prom_hist_observe(&m[0].ttft, 0.05);
  cb_prom_hist_observe(&m[0].ttft, 5000);
  m[1].success[CB__SIM_FINISH_LENGTH] = 7;
  cb_sim_engine_stats st[2] = {{.running = 3, .waiting = 1, .kv_usage = 0.25, .prefix_hits = 48},
                               {.running = 0}};
  cb_buf b;
  cb_buf_init(&b, 0);
  cb__sim_metrics_render(&b, "llama-3.1-8b", 2, st, m);
  const char *want[] = {
      "# TYPE vllm:num_requests_running gauge\n",
      "vllm:num_requests_running{model_name=\"llama-3.1-8b\",engine=\"0\"} 3\n",
      "vllm:kv_cache_usage_perc{model_name=\"llama-3.1-8b\",engine=\"0\"} 0.25\n",
      "vllm:prefix_cache_hits_total{model_name=\"llama-3.1-8b\",engine=\"0\"} 48\n",
      "vllm:request_success_total{model_name=\"llama-3.1-8b\",engine=\"1\",finished_reason=\"length\"} 7\n",
      "vllm:time_to_first_token_seconds_bucket{model_name=\"llama-3.1-8b\",engine=\"0\",le=\"0.005\"} 1\n",
      "vllm:time_to_first_token_seconds_bucket{model_name=\"llama-3.1-8b\",engine=\"0\",le=\"0.06\"} 2\n",
      "vllm:time_to_first_token_seconds_bucket{model_name=\"llama-3.1-8b\",engine=\"0\",le=\"2560\"} 2\n",
      "vllm:time_to_first_token_seconds_bucket{model_name=\"llama-3.1-8b\",engine=\"0\",le=\"+Inf\"} 3\n",
      "vllm:time_to_first_token_seconds_count{model_name=\"llama-3.1-8b\",engine=\"0\"} 3\n",
      "# TYPE vllm:inter_token_latency_seconds histogram\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(b.data, want[i])) fail_msg("exposition lacks: %s", want[i]);
  cb_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_chat),        cmocka_unit_test(test_parse_completions),
      cmocka_unit_test(test_parse_errors),      cmocka_unit_test(test_render_error),
      cmocka_unit_test(test_render_stream_and_whole), cmocka_unit_test(test_render_escapes),
      cmocka_unit_test(test_embeddings),        cmocka_unit_test(test_faults),
      cmocka_unit_test(test_responses),         cmocka_unit_test(test_metrics_exposition),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
