/*
 * test_client_request.c - request bodies (src/client/request.c) and non-streamed
 * responses (src/client/response.c). Every encoded body is compared byte for byte
 * with the expected text and re-parsed by jansson.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/client.h"

/* Encode r and compare with want (NULL: only require valid JSON). */
static void expect_body(const cb_client_request *r, const char *want) {
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_client_request_encode(r, &out, &err);
  if (st != CB_OK) fail_msg("encode failed: %s", err.msg);
  if (want && strcmp(out.data, want) != 0) fail_msg("body\n  got:  %s\n  want: %s", out.data, want);
  json_error_t je;
  json_t *j = json_loadb(out.data, out.len, JSON_ALLOW_NUL, &je);
  if (!j || !json_is_object(j)) fail_msg("not a JSON object (%s): %s", je.text, out.data);
  json_decref(j);
  cb_buf_free(&out);
}

static void expect_invalid(const cb_client_request *r, cb_status want, const char *msg_part) {
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_buf_append_str(&out, "kept");
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_client_request_encode(r, &out, &err), want);
  if (!strstr(err.msg, msg_part)) fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
  assert_string_equal(out.data, "kept");
  cb_buf_free(&out);
}

static void test_chat_prompt(void **state) {
  (void)state;
  cb_client_request r;
  cb_client_request_init(&r);
  r.model = "meta-llama/Llama-3.1-8B-Instruct";
  r.prompt = "Say \"hi\"\n\tplease \xFF";
  r.prompt_len = strlen(r.prompt);
  r.max_tokens = 128;
  expect_body(&r, "{\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"messages\":[{\"role\":\"user\","
                  "\"content\":\"Say \\\"hi\\\"\\n\\tplease \xEF\xBF\xBD\"}],\"max_tokens\":128,"
                  "\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
  r.use_max_completion_tokens = 1;
  r.min_tokens = 128;
  r.ignore_eos = 1;
  r.continuous_usage = 1;
  r.prompt = "x";
  r.prompt_len = 1;
  expect_body(&r, "{\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"messages\":[{\"role\":\"user\","
                  "\"content\":\"x\"}],\"max_completion_tokens\":128,\"min_tokens\":128,"
                  "\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true,"
                  "\"continuous_usage_stats\":true}}");
  /* A prompt with a NUL byte in it is escaped, not cut. */
  r.prompt = "a\0b";
  r.prompt_len = 3;
  r.stream = 0;
  r.max_tokens = -1;
  r.min_tokens = -1;
  r.ignore_eos = 0;
  expect_body(&r, "{\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"messages\":[{\"role\":\"user\","
                  "\"content\":\"a\\u0000b\"}]}");
}

static void test_chat_messages(void **state) {
  (void)state;
  cb_client_request r;
  cb_client_request_init(&r);
  r.model = "m";
  r.messages_json = "  [{\"role\":\"system\",\"content\":\"be brief\"},\n {\"role\":\"user\","
                    "\"content\":\"hi\"}]\n";
  r.messages_json_len = strlen(r.messages_json);
  r.include_usage = 0;
  expect_body(&r, "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},\n"
                  " {\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true}");
  r.messages_json = "{\"role\":\"user\"}";
  r.messages_json_len = strlen(r.messages_json);
  expect_invalid(&r, CB_ERR_INVALID, "non-empty JSON array");
  r.messages_json = "[]";
  r.messages_json_len = 2;
  expect_invalid(&r, CB_ERR_INVALID, "non-empty JSON array");
  r.messages_json = "[{\"role\":\"user\"}, 3]";
  r.messages_json_len = strlen(r.messages_json);
  expect_invalid(&r, CB_ERR_INVALID, "messages[1]");
  r.messages_json = "[{\"role\":";
  r.messages_json_len = strlen(r.messages_json);
  expect_invalid(&r, CB_ERR_INVALID, "messages: invalid JSON");
}

static void test_completions(void **state) {
  (void)state;
  cb_client_request r;
  cb_client_request_init(&r);
  r.api = CB_CLIENT_API_COMPLETIONS;
  r.model = "m";
  r.prompt = "Once upon";
  r.prompt_len = strlen(r.prompt);
  r.max_tokens = 16;
  r.use_max_completion_tokens = 1; /* chat only: completions keep max_tokens */
  expect_body(&r, "{\"model\":\"m\",\"prompt\":\"Once upon\",\"max_tokens\":16,\"stream\":true,"
                  "\"stream_options\":{\"include_usage\":true}}");
  const int64_t ids[] = {128000, 9906, -1};
  r.prompt = NULL;
  r.prompt_token_ids = ids;
  r.n_prompt_token_ids = 3;
  r.stream = 0;
  expect_body(&r, "{\"model\":\"m\",\"prompt\":[128000,9906,-1],\"max_tokens\":16}");
  r.n_prompt_token_ids = 0;
  expect_body(&r, "{\"model\":\"m\",\"prompt\":[],\"max_tokens\":16}");
}

static void test_extra_body(void **state) {
  (void)state;
  cb_client_request r;
  cb_client_request_init(&r);
  r.model = "m";
  r.prompt = "p";
  r.prompt_len = 1;
  r.max_tokens = 10;
  r.include_usage = 0;
  r.stream = 0;
  /* Members are copied as written (0.70 stays 0.70); a member named like ours
   * replaces ours. */
  r.extra_json = " {\"temperature\": 0.70, \"max_tokens\":99, \"stop\":[\"\\n\"],"
                 " \"nested\":{\"a\":[1,{\"b\":null}]}, \"k\\u0065y\":1} ";
  r.extra_json_len = strlen(r.extra_json);
  expect_body(&r, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"p\"}],"
                  "\"temperature\":0.70,\"max_tokens\":99,\"stop\":[\"\\n\"],"
                  "\"nested\":{\"a\":[1,{\"b\":null}]},\"k\\u0065y\":1}");
  /* Deeper than the scanner goes: jansson writes the members instead. */
  char deep[300];
  size_t n = (size_t)sprintf(deep, "{\"d\":");
  for (int i = 0; i < 70; i++) deep[n++] = '[';
  for (int i = 0; i < 70; i++) deep[n++] = ']';
  n += (size_t)sprintf(deep + n, ",\"t\":0.5}");
  r.extra_json = deep;
  r.extra_json_len = n;
  cb_buf out;
  cb_buf_init(&out, 0);
  assert_int_equal(cb_client_request_encode(&r, &out, NULL), CB_OK);
  assert_non_null(strstr(out.data, ",\"d\":[[[["));
  assert_non_null(strstr(out.data, "]]]],\"t\":0.5}"));
  json_t *j = json_loads(out.data, 0, NULL);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "max_tokens")), 10);
  json_decref(j);
  cb_buf_free(&out);
  r.extra_json = "[1]";
  r.extra_json_len = 3;
  expect_invalid(&r, CB_ERR_INVALID, "expected a JSON object");
  r.extra_json = "{\"a\":}";
  r.extra_json_len = strlen(r.extra_json);
  expect_invalid(&r, CB_ERR_INVALID, "extra body: invalid JSON");
  r.extra_json = "{\"a\":1\0}"; /* jansson alone would accept this one */
  r.extra_json_len = 8;
  expect_invalid(&r, CB_ERR_INVALID, "NUL byte");
  /* Stream settings can be overridden too (the user asked for it). */
  r.extra_json = "{\"stream\":false}";
  r.extra_json_len = strlen(r.extra_json);
  r.stream = 1;
  expect_body(&r, "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"p\"}],"
                  "\"max_tokens\":10,\"stream\":false}");
}

static void test_request_errors(void **state) {
  (void)state;
  cb_client_request r;
  cb_client_request_init(&r);
  r.prompt = "p";
  r.prompt_len = 1;
  expect_invalid(&r, CB_ERR_INVALID, "no model");
  r.model = "m";
  r.messages_json = "[{}]";
  r.messages_json_len = 4;
  expect_invalid(&r, CB_ERR_INVALID, "not 2");
  r.prompt = NULL;
  r.messages_json = NULL;
  expect_invalid(&r, CB_ERR_INVALID, "no prompt");
  const int64_t ids[] = {1};
  r.prompt_token_ids = ids;
  r.n_prompt_token_ids = 1;
  expect_invalid(&r, CB_ERR_INVALID, "not prompt token ids");
  r.api = CB_CLIENT_API_OLLAMA_GENERATE;
  expect_invalid(&r, CB_ERR_UNSUPPORTED, "ollama");
  /* The output cap. */
  cb_client_request_init(&r);
  r.model = "m";
  r.prompt = "a long enough prompt";
  r.prompt_len = strlen(r.prompt);
  cb_buf out;
  cb_buf_init(&out, 40);
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_client_request_encode(&r, &out, &err), CB_ERR_CAPACITY);
  assert_int_equal(out.len, 0);
  assert_non_null(strstr(err.msg, "40 bytes"));
  cb_buf_free(&out);
}

/* ---- non-streamed responses --------------------------------------------------------- */

static cb_client_response parse(cb_client_api api, const char *body, cb_buf *text) {
  cb_client_response r;
  assert_int_equal(cb_client_response_parse(api, body, strlen(body), &r, text), CB_OK);
  return r;
}

static void test_response_chat(void **state) {
  (void)state;
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_client_response r = parse(
      CB_CLIENT_API_CHAT,
      "{\"id\":\"c\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":"
      "{\"role\":\"assistant\",\"content\":\"Hello \\u00e9\",\"reasoning_content\":\"hmm\"},"
      "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12,"
      "\"total_tokens\":21,\"prompt_tokens_details\":{\"cached_tokens\":8}}}",
      &text);
  assert_int_equal(r.error, CB_CLIENT_ERR_NONE);
  assert_string_equal(text.data, "Hello \xC3\xA9");
  assert_int_equal(r.content_bytes, 8);
  assert_int_equal(r.reasoning_bytes, 3);
  assert_string_equal(r.finish_reason, "stop");
  assert_true(r.has_usage);
  assert_int_equal(r.usage.completion_tokens, 12);
  assert_int_equal(r.usage.cached_tokens, 8);
  assert_int_equal(r.n_choices, 1);
  cb_buf_free(&text);
  /* Tool calls, content null; the text buffer's cap cuts the text. */
  cb_buf_init(&text, 3);
  r = parse(CB_CLIENT_API_CHAT,
            "{\"choices\":[{\"message\":{\"content\":null,\"tool_calls\":[{\"id\":\"x\"}]},"
            "\"finish_reason\":\"tool_calls\"},{\"message\":{\"content\":\"other\"}}]}",
            &text);
  assert_true(r.has_tool_calls);
  assert_int_equal(r.n_choices, 2);
  assert_int_equal(text.len, 0);
  r = parse(CB_CLIENT_API_CHAT, "{\"choices\":[{\"message\":{\"content\":\"abcdef\"}}]}", &text);
  assert_string_equal(text.data, "abc");
  assert_true(r.text_truncated);
  assert_int_equal(r.content_bytes, 6);
  assert_false(r.has_usage);
  assert_int_equal(r.usage.prompt_tokens, -1);
  cb_buf_free(&text);
}

static void test_response_completions_and_ollama(void **state) {
  (void)state;
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_client_response r = parse(CB_CLIENT_API_COMPLETIONS,
                               "{\"choices\":[{\"text\":\" there\",\"finish_reason\":\"length\"}],"
                               "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}",
                               &text);
  assert_string_equal(text.data, " there");
  assert_string_equal(r.finish_reason, "length");
  cb_buf_reset(&text);
  r = parse(CB_CLIENT_API_OLLAMA_GENERATE,
            "{\"model\":\"m\",\"response\":\"A rabbit\",\"done\":true,\"done_reason\":\"stop\","
            "\"prompt_eval_count\":31,\"eval_count\":32}",
            &text);
  assert_string_equal(text.data, "A rabbit");
  assert_string_equal(r.finish_reason, "stop");
  assert_int_equal(r.usage.prompt_tokens, 31);
  assert_int_equal(r.usage.completion_tokens, 32);
  cb_buf_reset(&text);
  r = parse(CB_CLIENT_API_OLLAMA_GENERATE,
            "{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":true}", &text);
  assert_string_equal(text.data, "hi");
  assert_int_equal(r.n_choices, 1);
  cb_buf_free(&text);
}

static void test_response_errors(void **state) {
  (void)state;
  cb_client_response r = parse(CB_CLIENT_API_CHAT,
                               "{\"error\":{\"message\":\"Rate limit reached\",\"type\":"
                               "\"requests\",\"code\":429}}",
                               NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_SERVER_ERROR_EVENT);
  assert_string_equal(r.error_message, "Rate limit reached");
  assert_int_equal(r.error_code, 429);
  r = parse(CB_CLIENT_API_CHAT,
            "{\"object\":\"error\",\"message\":\"This model's maximum context length is 8192\","
            "\"type\":\"BadRequestError\",\"param\":null,\"code\":400}",
            NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_SERVER_ERROR_EVENT);
  assert_string_equal(r.error_message, "This model's maximum context length is 8192");
  assert_int_equal(r.error_code, 400);
  r = parse(CB_CLIENT_API_CHAT, "{\"detail\":\"Not Found\"}", NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_SERVER_ERROR_EVENT);
  assert_string_equal(r.error_message, "Not Found");
  r = parse(CB_CLIENT_API_CHAT, "{\"detail\":[{\"loc\":[\"body\",\"model\"],\"msg\":\"field required\"}]}",
            NULL);
  assert_string_equal(r.error_message, "[{\"loc\":[\"body\",\"model\"],\"msg\":\"field required\"}]");
  r = parse(CB_CLIENT_API_OLLAMA_GENERATE, "{\"error\":\"model 'x' not found\"}", NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_SERVER_ERROR_EVENT);
  assert_string_equal(r.error_message, "model 'x' not found");
  r = parse(CB_CLIENT_API_CHAT, "<html>502 Bad Gateway</html>", NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_INVALID_JSON);
  assert_true(strlen(r.error_message) > 0);
  cb_client_response_parse(CB_CLIENT_API_CHAT, "{\"choices\":[]\0}", 15, &r, NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_INVALID_JSON);
  assert_string_equal(r.error_message, "NUL byte in JSON text");
  r = parse(CB_CLIENT_API_CHAT, "[]", NULL);
  assert_int_equal(r.error, CB_CLIENT_ERR_INVALID_JSON);
  assert_string_equal(r.error_message, "response is not a JSON object");
  /* A long message is cut to the field. */
  char body[1200];
  int n = sprintf(body, "{\"error\":\"");
  memset(body + n, 'x', 1000);
  strcpy(body + n + 1000, "\"}");
  r = parse(CB_CLIENT_API_CHAT, body, NULL);
  assert_int_equal(strlen(r.error_message), sizeof r.error_message - 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_chat_prompt),
      cmocka_unit_test(test_chat_messages),
      cmocka_unit_test(test_completions),
      cmocka_unit_test(test_extra_body),
      cmocka_unit_test(test_request_errors),
      cmocka_unit_test(test_response_chat),
      cmocka_unit_test(test_response_completions_and_ollama),
      cmocka_unit_test(test_response_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
