/*
 * test_client_openai.c - one event's data in the OpenAI stream dialect (and
 * Ollama's): src/client/chunk.c (the fast scanner), src/client/chunk_jansson.c (the
 * jansson reference) and src/client/json_scan.c.
 *
 * Every document here is read both ways and the two results must be equal field by
 * field (`both`); where the scanner declines (escaped or duplicate keys, huge
 * numbers, deep nesting) the public parse must say it fell back. The recorded
 * streams' events must all be read by the fast path without falling back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "client/chunk_internal.h"
#include "test_client_common.h"

static cb_buf scratch; /* for the public parse */

static int str_eq(cb_client_str a, cb_client_str b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* NULL when equal, else the first field that differs. */
static const char *chunk_diff(const cb_client_chunk *a, const cb_client_chunk *b) {
  if (a->kind != b->kind) return "kind";
  if (a->kind == CB_CLIENT_CHUNK_INVALID_JSON || a->kind == CB_CLIENT_CHUNK_DONE) return NULL;
  if (a->n_choices != b->n_choices) return "n_choices";
  if (a->content_choices != b->content_choices) return "content_choices";
  if (a->n_detailed != b->n_detailed) return "n_detailed";
  for (uint32_t i = 0; i < a->n_detailed; i++) {
    const cb_client_choice *x = &a->choice[i], *y = &b->choice[i];
    if (x->index != y->index) return "choice.index";
    if (!str_eq(x->content, y->content)) return "choice.content";
    if (!str_eq(x->reasoning, y->reasoning)) return "choice.reasoning";
    if (!str_eq(x->tool, y->tool)) return "choice.tool";
    if (!str_eq(x->finish_reason, y->finish_reason)) return "choice.finish_reason";
    if (x->tool_calls != y->tool_calls) return "choice.tool_calls";
    if (x->has_content != y->has_content) return "choice.has_content";
    if (x->has_role != y->has_role) return "choice.has_role";
    if (x->has_logprobs != y->has_logprobs) return "choice.has_logprobs";
  }
  if (a->has_usage != b->has_usage) return "has_usage";
  if (memcmp(&a->usage, &b->usage, sizeof a->usage) != 0) return "usage";
  if (a->final != b->final) return "final";
  if (a->has_logprobs != b->has_logprobs) return "has_logprobs";
  if (!str_eq(a->error_message, b->error_message)) return "error_message";
  if (a->error_code != b->error_code) return "error_code";
  return NULL;
}

/* Read `json` with the public parse, the scanner and jansson; require agreement.
 * want_fallback: 1 = the scanner must decline, 0 = it must not, -1 = either. */
static cb_client_chunk both_api(cb_client_api api, const char *json, size_t len,
                                int want_fallback) {
  cb_client_chunk pub, fast, ref;
  assert_int_equal(cb_client_chunk_parse(api, json, len, &scratch, &pub), CB_OK);
  char *area1 = cb_malloc(len + CB__CLIENT_CHUNK_SLACK);
  char *area2 = cb_malloc(len + CB__CLIENT_CHUNK_SLACK);
  int scanned = cb__client_chunk_scan(api, json, len, area1, &fast);
  cb__client_chunk_jansson(api, json, len, area2, &ref);
  if (want_fallback == 1 && scanned) fail_msg("scanner did not fall back on: %.*s", (int)len, json);
  if (want_fallback == 0 && !scanned) fail_msg("scanner fell back on: %.*s", (int)len, json);
  if (pub.via_fallback != !scanned) fail_msg("via_fallback wrong on: %.*s", (int)len, json);
  if (scanned) {
    const char *d = chunk_diff(&fast, &ref);
    if (d) fail_msg("scanner and jansson differ in %s on: %.*s", d, (int)len, json);
  }
  if (!cb__client_chunk_is_done(json, len)) {
    const char *d = chunk_diff(&pub, &ref);
    if (d) fail_msg("public parse and jansson differ in %s on: %.*s", d, (int)len, json);
  }
  cb_free(area1);
  cb_free(area2);
  return pub; /* its strings point into `scratch` */
}

#define BOTH(json) both_api(CB_CLIENT_API_CHAT, json, strlen(json), 0)
#define BOTH_FB(json, fb) both_api(CB_CLIENT_API_CHAT, json, strlen(json), fb)

static void assert_str(cb_client_str s, const char *want) {
  size_t n = strlen(want);
  if (s.len != n || (n && memcmp(s.ptr, want, n) != 0))
    fail_msg("got '%.*s' (%zu bytes), want '%s'", (int)s.len, s.ptr ? s.ptr : "", s.len, want);
}

static void test_done(void **state) {
  (void)state;
  cb_client_chunk c;
  assert_int_equal(cb_client_chunk_parse(CB_CLIENT_API_CHAT, "[DONE]", 6, &scratch, &c), CB_OK);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_DONE);
  cb_client_chunk_parse(CB_CLIENT_API_CHAT, " [DONE] \r\n", 10, &scratch, &c);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_DONE);
  assert_int_equal(BOTH("[DONE]x").kind, CB_CLIENT_CHUNK_INVALID_JSON);
  assert_int_equal(BOTH("[DONE").kind, CB_CLIENT_CHUNK_INVALID_JSON);
  assert_int_equal(BOTH("\"[DONE]\"").kind, CB_CLIENT_CHUNK_INVALID_JSON); /* not an object */
}

static void test_role_only_then_content(void **state) {
  (void)state;
  /* vLLM's first chunk: choices non-empty (vLLM's TTFT starts here), no content. */
  cb_client_chunk c = BOTH(
      "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
      "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
      "\"finish_reason\":null}],\"prompt_token_ids\":null}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.content_choices, 0);
  assert_true(c.choice[0].has_role);
  assert_false(c.choice[0].has_content);
  assert_false(c.has_logprobs);
  assert_int_equal(c.choice[0].index, 0);
  c = BOTH("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"finish_reason\":null}]}");
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].content, " world");
  assert_int_equal(c.choice[0].finish_reason.len, 0);
  assert_false(c.has_usage);
  assert_int_equal(c.usage.completion_tokens, -1);
}

static void test_escapes_decoded(void **state) {
  (void)state;
  cb_client_chunk c = BOTH(
      "{\"choices\":[{\"delta\":{\"content\":\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f"
      "\\u00e9\\u4e2d\\ud83d\\ude00\\u0000z\"}}]}");
  const char want[] = "a\"b\\c/d\n\t\r\b\f\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\0z";
  assert_int_equal(c.choice[0].content.len, sizeof want - 1);
  assert_memory_equal(c.choice[0].content.ptr, want, sizeof want - 1);
  /* Raw UTF-8 passes through; Go's \u003c escapes decode. */
  c = BOTH("{\"choices\":[{\"delta\":{\"content\":\"\xF0\x9F\x98\x8A \\u003cb\\u003e\"}}]}");
  assert_str(c.choice[0].content, "\xF0\x9F\x98\x8A <b>");
}

static void test_empty_and_null_content(void **state) {
  (void)state;
  cb_client_chunk c = BOTH("{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"}}]}");
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.content_choices, 0);
  c = BOTH("{\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":null}}]}");
  assert_int_equal(c.content_choices, 0);
  c = BOTH("{\"choices\":[{\"index\":0,\"delta\":{}}]}");
  assert_int_equal(c.content_choices, 0);
  c = BOTH("{\"choices\":[]}");
  assert_int_equal(c.n_choices, 0);
  c = BOTH("{\"choices\":null}");
  assert_int_equal(c.n_choices, 0);
  /* An element that is not an object still counts as a choice (vLLM would say the
   * chunk is valid), with nothing in it. */
  c = BOTH("{\"choices\":[1]}");
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.choice[0].index, -1);
}

static void test_usage_only_chunk(void **state) {
  (void)state;
  cb_client_chunk c = BOTH(
      "{\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":46,\"total_tokens\":60,"
      "\"completion_tokens\":14,\"prompt_tokens_details\":{\"cached_tokens\":32},"
      "\"completion_tokens_details\":{\"reasoning_tokens\":3}}}");
  assert_int_equal(c.n_choices, 0);
  assert_true(c.has_usage);
  assert_int_equal(c.usage.prompt_tokens, 46);
  assert_int_equal(c.usage.completion_tokens, 14);
  assert_int_equal(c.usage.total_tokens, 60);
  assert_int_equal(c.usage.cached_tokens, 32);
  assert_int_equal(c.usage.reasoning_tokens, 3);
  assert_int_equal(c.usage.image_tokens, -1);
  /* vLLM's and SGLang's image tokens beside the cached ones (vllm-project/vllm#45458). */
  c = BOTH("{\"usage\":{\"prompt_tokens\":300,\"prompt_tokens_details\":{\"image_tokens\":256,"
           "\"cached_tokens\":16}}}");
  assert_int_equal(c.usage.image_tokens, 256);
  assert_int_equal(c.usage.cached_tokens, 16);
  /* DeepSeek's cache-hit count when prompt_tokens_details is absent. */
  c = BOTH("{\"usage\":{\"prompt_tokens\":6,\"prompt_cache_hit_tokens\":4}}");
  assert_int_equal(c.usage.cached_tokens, 4);
  /* usage: null is no usage; non-integer counts are not given. */
  c = BOTH("{\"choices\":[],\"usage\":null}");
  assert_false(c.has_usage);
  c = BOTH("{\"usage\":{\"prompt_tokens\":1.0,\"completion_tokens\":\"2\"}}");
  assert_true(c.has_usage);
  assert_int_equal(c.usage.prompt_tokens, -1);
  assert_int_equal(c.usage.completion_tokens, -1);
}

static void test_continuous_usage_chunk(void **state) {
  (void)state;
  cb_client_chunk c = BOTH(
      "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"}}],"
      "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7,\"total_tokens\":12}}");
  assert_int_equal(c.content_choices, 1);
  assert_true(c.has_usage);
  assert_int_equal(c.usage.completion_tokens, 7);
}

static void test_n_choices(void **state) {
  (void)state;
  cb_client_chunk c = BOTH(
      "{\"choices\":[{\"index\":2,\"delta\":{\"content\":\"x\"}},{\"index\":0,\"delta\":"
      "{\"role\":\"assistant\"}},{\"index\":1,\"delta\":{\"content\":\"yz\"},"
      "\"finish_reason\":\"stop\"}]}");
  assert_int_equal(c.n_choices, 3);
  assert_int_equal(c.n_detailed, 3);
  assert_int_equal(c.content_choices, 2);
  assert_int_equal(c.choice[0].index, 2);
  assert_int_equal(c.choice[1].index, 0);
  assert_str(c.choice[2].content, "yz");
  assert_str(c.choice[2].finish_reason, "stop");
  /* More than CB_CLIENT_CHUNK_MAX_CHOICES: all counted, the first four detailed. */
  c = BOTH("{\"choices\":[{\"text\":\"a\"},{\"text\":\"\"},{\"text\":\"c\"},{\"text\":\"d\"},"
           "{\"text\":\"e\",\"logprobs\":{}},{\"text\":\"f\"}]}");
  assert_int_equal(c.n_choices, 6);
  assert_int_equal(c.n_detailed, CB_CLIENT_CHUNK_MAX_CHOICES);
  assert_int_equal(c.content_choices, 5);
  assert_true(c.has_logprobs); /* from the fifth, undetailed choice */
}

static void test_tool_calls(void **state) {
  (void)state;
  /* OpenAI's first tool-call chunk: content null, the name, empty arguments. */
  cb_client_chunk c = BOTH(
      "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,"
      "\"tool_calls\":[{\"index\":0,\"id\":\"call_4X\",\"type\":\"function\",\"function\":"
      "{\"name\":\"get_weather\",\"arguments\":\"\"}}],\"refusal\":null},\"logprobs\":null,"
      "\"finish_reason\":null}]}");
  assert_int_equal(c.content_choices, 1);
  assert_int_equal(c.choice[0].tool_calls, 1);
  assert_str(c.choice[0].tool, "get_weather");
  c = BOTH("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
           "\"{\\\"city\"}},{\"index\":1,\"function\":{\"name\":\"f\",\"arguments\":\"x\"}}]}}]}");
  assert_int_equal(c.choice[0].tool_calls, 2);
  assert_str(c.choice[0].tool, "{\"cityfx");
  /* An empty tool_calls array is not content. */
  c = BOTH("{\"choices\":[{\"delta\":{\"tool_calls\":[]}}]}");
  assert_int_equal(c.content_choices, 0);
  /* The legacy function_call is content; only the first tool-bearing key is decoded. */
  c = BOTH("{\"choices\":[{\"delta\":{\"function_call\":{\"name\":\"g\",\"arguments\":\"1\"}}}]}");
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].tool, "g1");
  c = BOTH("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"a\"}}],"
           "\"content\":\"t\",\"function_call\":{\"name\":\"b\"}}}]}");
  assert_str(c.choice[0].tool, "a");
  assert_str(c.choice[0].content, "t");
  /* Ollama-style arguments objects are skipped: only the name is text. */
  c = BOTH("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"n\","
           "\"arguments\":{\"a\":1}}}]}}]}");
  assert_str(c.choice[0].tool, "n");
}

static void test_reasoning(void **state) {
  (void)state;
  cb_client_chunk c = BOTH(
      "{\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":\"H\"}}]}");
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].reasoning, "H");
  assert_int_equal(c.choice[0].content.len, 0);
  /* OpenRouter: content "" with reasoning. */
  c = BOTH("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":"
           "\"We need\",\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"We need\"}]}}]}");
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].reasoning, "We need");
  /* Servers that send both names with the same text: counted once. */
  c = BOTH("{\"choices\":[{\"delta\":{\"reasoning_content\":\"ab\",\"reasoning\":\"ab\"}}]}");
  assert_str(c.choice[0].reasoning, "ab");
  c = BOTH("{\"choices\":[{\"delta\":{\"reasoning\":\"\",\"reasoning_content\":\"cd\"}}]}");
  assert_str(c.choice[0].reasoning, "cd");
}

static void test_completions_and_logprobs(void **state) {
  (void)state;
  const char *j = "{\"choices\":[{\"text\":\"Hello\",\"index\":0,\"logprobs\":{\"tokens\":"
                  "[\"Hello\"],\"token_logprobs\":[-0.5]},\"finish_reason\":null}],"
                  "\"object\":\"text_completion\"}";
  cb_client_chunk c = both_api(CB_CLIENT_API_COMPLETIONS, j, strlen(j), 0);
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].content, "Hello");
  assert_true(c.has_logprobs);
  assert_true(c.choice[0].has_logprobs);
  c = BOTH("{\"choices\":[{\"delta\":{\"content\":\"Foo\"},\"logprobs\":{\"content\":[{\"token\":"
           "\"Foo\",\"logprob\":-0.0025094282,\"bytes\":[70,111,111],\"top_logprobs\":[]}]}}]}");
  assert_true(c.has_logprobs);
}

static void test_error_objects(void **state) {
  (void)state;
  cb_client_chunk c = BOTH("{\"error\":{\"message\":\"overloaded\",\"type\":\"x\",\"code\":503}}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_str(c.error_message, "overloaded");
  assert_int_equal(c.error_code, 503);
  c = BOTH("{\"error\":\"boom\"}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_str(c.error_message, "boom");
  /* vLLM's ErrorResponse. */
  c = BOTH("{\"object\":\"error\",\"message\":\"max_tokens is too large\",\"type\":"
           "\"BadRequestError\",\"param\":null,\"code\":400}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_str(c.error_message, "max_tokens is too large");
  assert_int_equal(c.error_code, 400);
  /* OpenRouter: an error beside choices and usage - all of it is read. */
  c = BOTH("{\"id\":\"gen-1\",\"error\":{\"code\":400,\"message\":\"Token limit reached\"},"
           "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
           "\"finish_reason\":null}],\"usage\":{\"prompt_tokens\":43,\"completion_tokens\":10}}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_str(c.error_message, "Token limit reached");
  assert_int_equal(c.error_code, 400);
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.usage.completion_tokens, 10);
  /* Not errors: error null / false, a top-level message alone. */
  assert_int_equal(BOTH("{\"error\":null,\"choices\":[]}").kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(BOTH("{\"error\":false}").kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(BOTH("{\"message\":\"hi\",\"code\":1}").kind, CB_CLIENT_CHUNK_DATA);
  /* An error without a message. */
  c = BOTH("{\"error\":{\"code\":\"rate_limit\"}}");
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_int_equal(c.error_message.len, 0);
  assert_int_equal(c.error_code, 0);
}

/* Not JSON, or not an object: each must be INVALID_JSON for both readers. */
static void test_invalid_json(void **state) {
  (void)state;
  static const char *const bad[] = {
      "", " ", "{", "}", "{\"choices\":[", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}",
      "{\"a\":1}x", "{\"a\":1} {}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":-}",
      "{\"a\":+1}", "{\"a\":1e}", "{\"a\":1e+}", "{\"a\":NaN}", "{\"a\":Infinity}",
      "{\"a\":tru}", "{\"a\":truex}", "{\"a\":nul}", "{\"a\":\"\t\"}", "{\"a\":\"\\x\"}",
      "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
      "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"\xC0\xAF\"}", "{\"a\":\"\xED\xA0\x80\"}",
      "{\"a\":\"\xF5\x80\x80\x80\"}", "{\"a\":\"\xE2\x82\"}", "{\"a\":\"\x80\"}",
      "{\"a\":\"unterminated}", "\xEF\xBB\xBF{}", "[1,]", "[1 2]", "{\"a\":[}",
      "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]", "data: {}",
      "[1]", "\"s\"", "42", "true", "null", "[]",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_client_chunk c = both_api(CB_CLIENT_API_CHAT, bad[i], strlen(bad[i]), -1);
    if (c.kind != CB_CLIENT_CHUNK_INVALID_JSON) fail_msg("accepted: %s", bad[i]);
    assert_true(c.detail.len > 0);
  }
  /* An embedded NUL byte outside strings. */
  cb_client_chunk c = both_api(CB_CLIENT_API_CHAT, "{\"a\":1}\0", 8, 0);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
  c = both_api(CB_CLIENT_API_CHAT, "{\"a\":\"\0\"}", 8, 0);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
  /* Found by fuzz_client_sse: jansson 2.14 drops one NUL right after a number or a
   * literal and accepts these; raw NUL is never JSON, so both readers reject them. */
  static const char nul_after_number[] = "{\"choices\":[{\"index\":0\0,\"delta\":{\"content\":\"t2\"}}]}";
  c = both_api(CB_CLIENT_API_CHAT, nul_after_number, sizeof nul_after_number - 1, 0);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
  static const char nul_after_literal[] = "{\"a\":true\0}";
  c = both_api(CB_CLIENT_API_CHAT, nul_after_literal, sizeof nul_after_literal - 1, 0);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
}

/* Valid documents with unusual corners: both readers agree and accept them. */
static void test_valid_corners(void **state) {
  (void)state;
  static const char *const good[] = {
      " \t\r\n{ \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } } ] } \n",
      "{\"n\":[0,-0,1.5,-2.5e10,3E-7,1e+2,0.0e0,123456789012345678]}",
      "{\"deep\":[[[[[[[[[[{\"a\":[{}]}]]]]]]]]]]}",
      "{\"s\":\"\\u00e9\\uD83D\\uDE00\\/\",\"t\":true,\"f\":false,\"z\":null}",
      "{\"k\\u0065y\":1,\"choices\":[{\"text\":\"ok\"}]}", /* escaped key, but skipped */
      "{}", "{\"choices\":[],\"usage\":{}}", "{\"\xE4\xB8\xAD\":\"\xF4\x8F\xBF\xBF\"}",
      "{\"a\":\"\x7F\"}",
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    int fb = strstr(good[i], "k\\u0065y") ? 1 : 0;
    cb_client_chunk c = BOTH_FB(good[i], fb);
    if (c.kind != CB_CLIENT_CHUNK_DATA) fail_msg("rejected: %s", good[i]);
  }
  cb_client_chunk c = BOTH(good[0]);
  assert_str(c.choice[0].content, "x");
}

/* What the scanner leaves to jansson, and what jansson then says. */
static void test_fallbacks(void **state) {
  (void)state;
  /* An escaped hot key: jansson reads "choices". */
  cb_client_chunk c = BOTH_FB("{\"choi\\u0063es\":[{\"delta\":{\"content\":\"hi\"}}]}", 1);
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].content, "hi");
  /* A duplicated hot key: jansson's last value wins. */
  c = BOTH_FB("{\"choices\":[{\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}", 1);
  assert_str(c.choice[0].content, "b");
  /* 19 digits: fine for jansson when it fits int64, "too big integer" when not. */
  c = BOTH_FB("{\"created\":1234567890123456789,\"choices\":[]}", 1);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_DATA);
  c = BOTH_FB("{\"created\":12345678901234567890}", 1);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
  c = BOTH_FB("{\"usage\":{\"prompt_tokens\":-9223372036854775808}}", 1);
  assert_int_equal(c.usage.prompt_tokens, INT64_MIN);
  /* Reals: 1e400 overflows a double (jansson rejects it); 1e299 and 1e-400 do not,
   * and the scanner decides those itself; from 1e300 on it asks jansson. */
  assert_int_equal(BOTH_FB("{\"x\":1e400}", 1).kind, CB_CLIENT_CHUNK_INVALID_JSON);
  assert_int_equal(BOTH_FB("{\"x\":1e299}", 0).kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(BOTH_FB("{\"x\":1e300}", 1).kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(BOTH_FB("{\"x\":-1e-400}", 0).kind, CB_CLIENT_CHUNK_DATA);
  assert_int_equal(BOTH_FB("{\"x\":0.0001e305}", 1).kind, CB_CLIENT_CHUNK_DATA);
  /* Deeper than the scanner's 64 levels: jansson takes it. */
  char deep[400];
  size_t n = 0;
  n += (size_t)sprintf(deep + n, "{\"a\":");
  for (int i = 0; i < 100; i++) deep[n++] = '[';
  for (int i = 0; i < 100; i++) deep[n++] = ']';
  deep[n++] = '}';
  deep[n] = '\0';
  assert_int_equal(BOTH_FB(deep, 1).kind, CB_CLIENT_CHUNK_DATA);
}

static void test_ollama(void **state) {
  (void)state;
  const char *j = "{\"model\":\"dolphin3:8b\",\"created_at\":\"2025-08-01T19:22:00Z\",\"response\":"
                  "\" rabbit\",\"done\":false}";
  cb_client_chunk c = both_api(CB_CLIENT_API_OLLAMA_GENERATE, j, strlen(j), 0);
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].content, " rabbit");
  assert_false(c.final);
  assert_false(c.has_usage);
  j = "{\"model\":\"m\",\"response\":\"\",\"done\":true,\"done_reason\":\"stop\",\"context\":[1,2],"
      "\"total_duration\":5397760600,\"prompt_eval_count\":31,\"eval_count\":32}";
  c = both_api(CB_CLIENT_API_OLLAMA_GENERATE, j, strlen(j), 0);
  assert_true(c.final);
  assert_int_equal(c.n_choices, 1);
  assert_int_equal(c.content_choices, 0);
  assert_str(c.choice[0].finish_reason, "stop");
  assert_true(c.has_usage);
  assert_int_equal(c.usage.prompt_tokens, 31);
  assert_int_equal(c.usage.completion_tokens, 32);
  /* /api/chat shape, with thinking. */
  j = "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"thinking\":\"hm\"},\"done\":false}";
  c = both_api(CB_CLIENT_API_OLLAMA_GENERATE, j, strlen(j), 0);
  assert_int_equal(c.content_choices, 1);
  assert_str(c.choice[0].reasoning, "hm");
  j = "{\"error\":\"model 'x' not found\"}";
  c = both_api(CB_CLIENT_API_OLLAMA_GENERATE, j, strlen(j), 0);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_ERROR);
  assert_int_equal(c.n_choices, 0);
  assert_str(c.error_message, "model 'x' not found");
}

/* Every event of every recording: the fast path reads it (no fallback) and agrees
 * with jansson; the chat dialect for SSE files, Ollama's for the NDJSON one. */
static void test_recorded_events(void **state) {
  (void)state;
  size_t events = 0;
  for (size_t f = 0; f < TC_N_RECORDINGS; f++) {
    cb_buf b;
    tc_load(tc_recordings[f], &b);
    int nd = strstr(tc_recordings[f], ".ndjson") != NULL;
    cb_client_api api = nd ? CB_CLIENT_API_OLLAMA_GENERATE
                           : strstr(tc_recordings[f], "completions_") &&
                                     !strstr(tc_recordings[f], "chat_completions")
                                 ? CB_CLIENT_API_COMPLETIONS
                                 : CB_CLIENT_API_CHAT;
    cb_client_sse p;
    cb_client_sse_init(&p, nd ? CB_CLIENT_FORMAT_NDJSON : CB_CLIENT_FORMAT_SSE, 0, 0);
    size_t off = 0;
    for (;;) {
      size_t used;
      cb_client_sse_item it;
      cb_client_sse_result r = cb_client_sse_feed(&p, b.data + off, b.len - off, &used, &it);
      off += used;
      if (r == CB_CLIENT_SSE_NEED_MORE) break;
      if (r == CB_CLIENT_SSE_COMMENT) continue; /* OpenRouter's keep-alives */
      assert_int_equal(r, CB_CLIENT_SSE_EVENT);
      both_api(api, it.data, it.len, 0);
      events++;
    }
    cb_client_sse_free(&p);
    cb_buf_free(&b);
  }
  assert_int_equal(events, 212 + 4 + 5 + 32 + 12 + 5 + 18 + 6 + 50 + 34 + 11 + 5 + 3 + 4 + 12 + 17);
}

static void test_scratch_cap(void **state) {
  (void)state;
  cb_buf small;
  cb_buf_init(&small, 16);
  cb_client_chunk c;
  const char *j = "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}";
  assert_int_equal(cb_client_chunk_parse(CB_CLIENT_API_CHAT, j, strlen(j), &small, &c),
                   CB_ERR_CAPACITY);
  assert_int_equal(c.kind, CB_CLIENT_CHUNK_INVALID_JSON);
  cb_buf_free(&small);
}

static void test_names(void **state) {
  (void)state;
  assert_string_equal(cb_client_error_class_name(CB_CLIENT_ERR_STREAM_CUT), "stream_cut");
  assert_string_equal(cb_client_error_class_name((cb_client_error_class)99), "unknown");
  for (int i = 0; i < CB_CLIENT_ERR_COUNT_; i++) {
    cb_client_error_class c;
    assert_int_equal(cb_client_error_class_parse(cb_client_error_class_name((cb_client_error_class)i),
                                                 &c, NULL),
                     CB_OK);
    assert_int_equal(c, i);
    assert_true(strlen(cb_client_error_class_desc((cb_client_error_class)i)) > 0);
  }
  cb_error err;
  cb_error_clear(&err);
  cb_client_error_class c;
  assert_int_equal(cb_client_error_class_parse("cut", &c, &err), CB_ERR_NOT_FOUND);
  assert_non_null(strstr(err.msg, "server_error_event"));
  assert_string_equal(cb_client_api_name(CB_CLIENT_API_COMPLETIONS), "completions");
  assert_string_equal(cb_client_token_source_name(CB_CLIENT_TOKENS_TOKENIZER), "tokenizer");
}

static int setup(void **state) {
  (void)state;
  cb_buf_init(&scratch, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  cb_buf_free(&scratch);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_done),
      cmocka_unit_test(test_role_only_then_content),
      cmocka_unit_test(test_escapes_decoded),
      cmocka_unit_test(test_empty_and_null_content),
      cmocka_unit_test(test_usage_only_chunk),
      cmocka_unit_test(test_continuous_usage_chunk),
      cmocka_unit_test(test_n_choices),
      cmocka_unit_test(test_tool_calls),
      cmocka_unit_test(test_reasoning),
      cmocka_unit_test(test_completions_and_logprobs),
      cmocka_unit_test(test_error_objects),
      cmocka_unit_test(test_invalid_json),
      cmocka_unit_test(test_valid_corners),
      cmocka_unit_test(test_fallbacks),
      cmocka_unit_test(test_ollama),
      cmocka_unit_test(test_recorded_events),
      cmocka_unit_test(test_scratch_cap),
      cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
