/*
 * test_client_stream.c - the per-request accumulator (src/client/stream.c) on every
 * recorded stream and on hand-written edge cases: the instants (first byte, first
 * event, vLLM's first choices chunk, calibench's first content chunk), per-chunk
 * times and token counts, usage, finish reason, error classes, caps.
 *
 * Each stream is fed whole, a byte at a time and in random pieces; everything but
 * the times must agree. In the byte-at-a-time run "now" is the 1-based offset of the
 * byte, so an instant names the byte that completed the event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "test_client_common.h"

/* Everything but times, as text (to compare split modes and print on failure). */
static char *summary(const cb_client_stream *s) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_buf_appendf(&b,
                 "events=%llu comments=%llu malformed=%llu invalid=%llu errev=%llu "
                 "choices=%llu content=%llu kept=%zu other=%zu done=%d finish=%s err=%s "
                 "msg=%s usage=%lld/%lld/%lld/%lld/%lld out=%llu/%s chunksrc=%s counted=%llu "
                 "text=%zu:%s trunc=%d bytes=%llu/%llu/%llu lp=%d after_done=%llu fb=%llu",
                 (unsigned long long)s->events, (unsigned long long)s->comments,
                 (unsigned long long)s->malformed_lines, (unsigned long long)s->invalid_json_events,
                 (unsigned long long)s->error_events, (unsigned long long)s->choices_chunks,
                 (unsigned long long)s->content_chunks, s->content_kept, s->other_kept,
                 s->saw_done, s->finish_reason, cb_client_error_class_name(s->error),
                 s->error_msg ? s->error_msg : "", (long long)s->usage.prompt_tokens,
                 (long long)s->usage.completion_tokens, (long long)s->usage.total_tokens,
                 (long long)s->usage.cached_tokens, (long long)s->usage.reasoning_tokens,
                 (unsigned long long)s->output_tokens,
                 cb_client_token_source_name(s->output_tokens_source),
                 cb_client_token_source_name(s->chunk_tokens_source),
                 (unsigned long long)s->counted_tokens, s->text.len,
                 s->text.data ? s->text.data : "", s->text_truncated,
                 (unsigned long long)s->content_bytes, (unsigned long long)s->reasoning_bytes,
                 (unsigned long long)s->tool_bytes, s->has_logprobs,
                 (unsigned long long)s->events_after_done, (unsigned long long)s->fallback_chunks);
  cb_buf_appendf(&b, " events_kept=%d:%s", s->choice_events_full,
                 s->choice_events.data ? s->choice_events.data : "");
  cb_buf_append_str(&b, " tokens=");
  for (size_t i = 0; i < s->content_kept; i++)
    cb_buf_appendf(&b, "%u,", cb_client_stream_chunk_tokens(s, i));
  return b.data;
}

/* Time invariants every run must keep. */
static void check_times(const cb_client_stream *s) {
  if (s->first_event_ns) assert_true(s->first_byte_ns <= s->first_event_ns);
  if (s->first_choices_ns) assert_true(s->first_event_ns <= s->first_choices_ns);
  if (s->first_content_ns) {
    assert_true(s->first_choices_ns <= s->first_content_ns);
    assert_true(s->first_content_ns <= s->last_content_ns);
    assert_true(s->last_content_ns <= s->last_choices_ns);
    assert_int_equal(s->content_ns[0], s->first_content_ns);
    if (!s->content_dropped)
      assert_int_equal(s->content_ns[s->content_kept - 1], s->last_content_ns);
  }
  assert_true(s->last_byte_ns <= s->end_ns);
  for (size_t i = 1; i < s->content_kept; i++) assert_true(s->content_ns[i - 1] <= s->content_ns[i]);
  uint64_t merged[4096];
  size_t n = cb_client_stream_choices_times(s, merged, 4096);
  assert_int_equal(n, s->content_kept + s->other_kept);
  for (size_t i = 1; i < n && i < 4096; i++) assert_true(merged[i - 1] <= merged[i]);
  if (n && !s->content_dropped && !s->other_dropped) {
    assert_int_equal(merged[0], s->first_choices_ns);
    assert_int_equal(merged[n - 1], s->last_choices_ns);
  }
}

/* Feed `in` in pieces (split mode), finish, return the summary; *out keeps the
 * stream when not NULL (caller frees). now = 1-based offset of the last byte fed. */
static char *run(const cb_client_stream_params *params, const char *in, size_t len, int mode,
                 cb_client_stream *out) {
  cb_client_stream s;
  cb_client_stream_init(&s, params);
  tc_splitter sp;
  tc_split_init(&sp, mode);
  size_t off = 0;
  while (off < len) {
    size_t n = tc_split_next(&sp, len - off);
    cb_client_stream_feed(&s, in + off, n, off + n);
    off += n;
  }
  cb_client_stream_finish(&s, len + 1);
  cb_client_stream_finish(&s, len + 99); /* idempotent */
  assert_int_equal(s.end_ns, len + 1);
  check_times(&s);
  char *sum = summary(&s);
  if (out) *out = s;
  else cb_client_stream_free(&s);
  return sum;
}

/* All split modes agree; returns the byte-at-a-time stream in *out. */
static char *run_all(const cb_client_stream_params *params, const char *in, size_t len,
                     cb_client_stream *out) {
  char *first = run(params, in, len, 0, NULL);
  for (int mode = 2; mode < TC_SPLIT_MODES; mode++) {
    char *other = run(params, in, len, mode, NULL);
    if (strcmp(first, other) != 0)
      fail_msg("split mode %d differs\n--- whole:\n%s\n--- split:\n%s", mode, first, other);
    cb_free(other);
  }
  char *bytes = run(params, in, len, 1, out);
  if (strcmp(first, bytes) != 0)
    fail_msg("1-byte feed differs\n--- whole:\n%s\n--- bytes:\n%s", first, bytes);
  cb_free(bytes);
  return first;
}

static void params_for(cb_client_stream_params *p, const char *file) {
  cb_client_stream_default_params(p);
  if (strstr(file, ".ndjson")) p->api = CB_CLIENT_API_OLLAMA_GENERATE;
  else if (strstr(file, "_v1_completions__")) p->api = CB_CLIENT_API_COMPLETIONS;
}

/*
 * Facts per recording, read off the files by hand and cross-checked with a separate
 * Python reading of the same bytes: events, comments, chunks with non-empty choices,
 * content chunks (non-empty content / reasoning / text, or tool calls), [DONE] or
 * Ollama's done, the first finish reason, the error class, usage, the output token
 * count and its source, choice 0's text length and prefix, reasoning bytes.
 */
static const struct fact {
  const char *file;
  unsigned events, comments, choices, content;
  int done;
  const char *finish, *error;
  long long prompt, completion, cached;
  unsigned output;
  const char *source;
  size_t text_len;
  const char *text_prefix;
  unsigned reasoning_bytes;
} facts[] = {
    /* reasoning first (209 content chunks, 198 of them reasoning by usage); usage on
     * the last, content-less chunk; an emoji as raw UTF-8 */
    {"deepseek_api_chat_completions__reasoning_content_with_usage.sse", 212, 0, 211, 209, 1,
     "stop", "none", 6, 212, 0, 212, "usage", 43, "Hello there! \xF0\x9F\x98\x8A How can I", 882},
    /* llama.cpp's native /completion: no "choices" at all, cut before its stop event */
    {"llamacpp_completion__pr10720_4events_final_stop_event_missing.sse", 4, 0, 0, 0, 0, "",
     "stream_cut", -1, -1, -1, 0, "none", 0, "", 0},
    {"llamacpp_v1_completions__b6351_first5events_partial.sse", 5, 0, 5, 5, 0, "", "stream_cut",
     -1, -1, -1, 5, "chunks", 16, "Hello! How can I", 0},
    /* 32 lines, the last one done:true with response "" */
    {"ollama_api_generate__dolphin3_8b_local.ndjson", 32, 0, 32, 31, 1, "stop", "none", 31, 32,
     -1, 32, "usage", 139, "A rabbit is a small mammal known for its long ears", 0},
    {"openai_v1_chat_completions__2026_text_obfuscation_usage_null.sse", 12, 0, 10, 8, 1, "stop",
     "none", 78, 9, 0, 9, "usage", 32, "The capital of the UK is London.", 0},
    {"openai_v1_chat_completions__finish_length.sse", 5, 0, 3, 1, 1, "length", "none", 79, 1, -1,
     1, "usage", 2, "{\"", 0},
    {"openai_v1_chat_completions__json_structured_output.sse", 18, 0, 16, 14, 1, "stop", "none",
     79, 14, -1, 14, "usage", 53, "{\"city\":\"San Francisco\",\"temperature\":61", 0},
    {"openai_v1_chat_completions__logprobs_content.sse", 6, 0, 4, 2, 1, "stop", "none", 9, 2, -1,
     2, "usage", 4, "Foo!", 0},
    /* n=3: 42 content chunks over the three choices; text is choice 0's */
    {"openai_v1_chat_completions__n3_multiple_choices.sse", 50, 0, 48, 42, 1, "stop", "none", 79,
     42, -1, 42, "usage", 53, "{\"city\":\"San Francisco\",\"temperature\":65", 0},
    {"openai_v1_chat_completions__plain_text_with_usage.sse", 34, 0, 32, 30, 1, "stop", "none",
     14, 30, -1, 30, "usage", 159, "I'm unable to provide real-time weather ", 0},
    {"openai_v1_chat_completions__tool_call_single.sse", 11, 0, 9, 8, 1, "tool_calls", "none",
     44, 16, -1, 16, "usage", 0, "", 0},
    /* 17 keep-alive comments; the error chunk carries choices and usage */
    {"openrouter_v1_chat_completions__comment_keepalives_and_error_chunk.sse", 5, 17, 4, 2, 1,
     "length", "server_error_event", 43, 10, 0, 10, "usage", 0, "", 42},
    {"sglang_gateway_grpc_v1_chat_completions__pr19895_3events_partial.sse", 3, 0, 3, 3, 0, "",
     "stream_cut", -1, -1, -1, 3, "chunks", 17, " Here's the count", 0},
    /* TGI's native generate_stream: no choices, no [DONE] on that endpoint */
    {"tgi_generate_stream__opea_genaiinfra_docs_partial_4events.sse", 4, 0, 0, 0, 0, "",
     "stream_cut", -1, -1, -1, 0, "none", 0, "", 0},
    /* "data:" without a space; the first chunk already has content (no role-only one) */
    {"tgi_v1_chat_completions__RECONSTRUCTED_from_snapshot_stream_usage.sse", 12, 0, 10, 10, 1,
     "length", "none", 40, 10, -1, 10, "usage", 70, "**Deep Learning: An Overview**\n", 0},
    {"vllm_v1_chat_completions__crusoe_cloud_llama33_usage.sse", 17, 0, 15, 13, 1, "stop",
     "none", 46, 14, 0, 14, "usage", 13, "1, 2, 3, 4, 5", 0},
};

static void test_recordings(void **state) {
  (void)state;
  assert_int_equal(sizeof facts / sizeof facts[0], TC_N_RECORDINGS);
  for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
    const struct fact *f = &facts[i];
    cb_buf b;
    tc_load(f->file, &b);
    cb_client_stream_params p;
    params_for(&p, f->file);
    cb_client_stream s;
    char *sum = run_all(&p, b.data, b.len, &s);
#define FACT(cond)                                                                          \
  do {                                                                                      \
    if (!(cond)) fail_msg("%s: %s does not hold\n  %s", f->file, #cond, sum);               \
  } while (0)
    FACT(s.events == f->events);
    FACT(s.comments == f->comments);
    FACT(s.choices_chunks == f->choices);
    FACT(s.content_chunks == f->content);
    FACT(s.content_kept == f->content && s.content_dropped == 0);
    FACT(s.other_kept == f->choices - f->content);
    FACT(s.saw_done == f->done);
    FACT(strcmp(s.finish_reason, f->finish) == 0);
    FACT(strcmp(cb_client_error_class_name(s.error), f->error) == 0);
    FACT(s.usage.prompt_tokens == f->prompt);
    FACT(s.usage.completion_tokens == f->completion);
    FACT(s.usage.cached_tokens == f->cached);
    FACT(s.output_tokens == f->output);
    FACT(strcmp(cb_client_token_source_name(s.output_tokens_source), f->source) == 0);
    FACT(s.text.len == f->text_len);
    FACT(f->text_len == 0 || strncmp(s.text.data, f->text_prefix, strlen(f->text_prefix)) == 0);
    FACT(s.reasoning_bytes == f->reasoning_bytes);
    FACT(s.malformed_lines == 0 && s.invalid_json_events == 0 && s.fallback_chunks == 0);
    FACT(s.first_byte_ns == 1 && s.last_byte_ns == b.len);
#undef FACT
    cb_free(sum);
    cb_client_stream_free(&s);
    cb_buf_free(&b);
  }
}

/* vLLM vs calibench instants on the vLLM recording: the role-only first chunk starts
 * vLLM's TTFT, the first content chunk starts ours; vLLM's E2E ends at the last
 * choices chunk (the finish chunk), before the usage chunk and [DONE]. */
static void test_vllm_instants(void **state) {
  (void)state;
  cb_buf b;
  tc_load("vllm_v1_chat_completions__crusoe_cloud_llama33_usage.sse", &b);
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  cb_client_stream s;
  cb_free(run(&p, b.data, b.len, 1, &s));
  /* Ends of the events: offsets just after each "\n\n". */
  size_t ends[20], n = 0;
  for (size_t i = 0; i + 1 < b.len && n < 20; i++)
    if (b.data[i] == '\n' && b.data[i + 1] == '\n') ends[n++] = i + 2;
  assert_int_equal(n, 17);
  assert_int_equal(s.first_event_ns, ends[0]);
  assert_int_equal(s.first_choices_ns, ends[0]);  /* role-only chunk */
  assert_int_equal(s.first_content_ns, ends[1]);  /* "1" */
  assert_int_equal(s.last_content_ns, ends[13]);  /* "5" */
  assert_int_equal(s.last_choices_ns, ends[14]);  /* finish_reason "stop", empty delta */
  assert_int_equal(s.done_ns, ends[16]);
  assert_int_equal(s.other_kept, 2);
  assert_int_equal(s.other_choices_ns[0], ends[0]);
  assert_int_equal(s.other_choices_ns[1], ends[14]);
  /* vLLM's ITL list has 14 gaps (15 choices chunks), ours 12 (13 content chunks). */
  uint64_t t[32];
  assert_int_equal(cb_client_stream_choices_times(&s, t, 32), 15);
  assert_int_equal(t[0], ends[0]);
  assert_int_equal(t[1], ends[1]);
  assert_int_equal(cb_client_stream_choices_times(&s, t, 3), 15); /* count even when cut */
  cb_client_stream_free(&s);
  cb_buf_free(&b);
}

/* ---- hand-written streams ----------------------------------------------------------- */

#define CHUNK(content) \
  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" content "\"},\"finish_reason\":null}]}\n\n"
#define ROLE "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
#define FINISH(r) "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"" r "\"}]}\n\n"
#define USAGE(p, c) \
  "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" #p ",\"completion_tokens\":" #c "}}\n\n"
#define DONE "data: [DONE]\n\n"

static cb_client_stream stream_of(const char *in, const cb_client_stream_params *p) {
  cb_client_stream s;
  cb_free(run_all(p, in, strlen(in), &s));
  return s;
}

static cb_client_stream chat(const char *in) {
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  return stream_of(in, &p);
}

static void assert_error(const cb_client_stream *s, cb_client_error_class c, const char *msg_part) {
  if (s->error != c)
    fail_msg("error %s, want %s (%s)", cb_client_error_class_name(s->error),
             cb_client_error_class_name(c), s->error_msg ? s->error_msg : "");
  if (msg_part && (!s->error_msg || !strstr(s->error_msg, msg_part)))
    fail_msg("error message '%s' lacks '%s'", s->error_msg ? s->error_msg : "", msg_part);
}

static void test_complete_stream(void **state) {
  (void)state;
  cb_client_stream s = chat(ROLE CHUNK("Hel") CHUNK("lo") FINISH("stop") USAGE(5, 2) DONE);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  assert_int_equal(s.content_chunks, 2);
  assert_int_equal(s.choices_chunks, 4);
  assert_string_equal(s.text.data, "Hello");
  assert_int_equal(s.output_tokens, 2);
  assert_int_equal(s.output_tokens_source, CB_CLIENT_TOKENS_USAGE);
  assert_int_equal(s.chunk_tokens_source, CB_CLIENT_TOKENS_CHUNKS);
  assert_int_equal(s.counted_tokens, 2);
  assert_false(s.continuous_usage);
  assert_true(s.first_choices_ns < s.first_content_ns);
  cb_client_stream_free(&s);
}

static void test_cut_without_done(void **state) {
  (void)state;
  cb_client_stream s = chat(ROLE CHUNK("a") CHUNK("b"));
  assert_error(&s, CB_CLIENT_ERR_STREAM_CUT, "without [DONE]");
  assert_int_equal(s.content_chunks, 2);
  assert_int_equal(s.output_tokens, 2);
  assert_int_equal(s.output_tokens_source, CB_CLIENT_TOKENS_CHUNKS);
  cb_client_stream_free(&s);
  /* Cut in the middle of an event: the partial JSON is an invalid event first. */
  s = chat(CHUNK("a") "data: {\"choices\":[{\"delta\":{\"cont");
  assert_error(&s, CB_CLIENT_ERR_INVALID_JSON, "event 2");
  assert_int_equal(s.invalid_json_events, 1);
  cb_client_stream_free(&s);
  /* A finish reason without [DONE] is a finished stream (llama.cpp may do this). */
  s = chat(CHUNK("a") FINISH("length"));
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  assert_string_equal(s.finish_reason, "length");
  cb_client_stream_free(&s);
  /* [DONE] without a finish reason too. */
  s = chat(CHUNK("a") DONE);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  cb_client_stream_free(&s);
  /* An empty body. */
  s = chat("");
  assert_error(&s, CB_CLIENT_ERR_STREAM_CUT, "after 0 bytes");
  assert_int_equal(s.first_byte_ns, 0);
  cb_client_stream_free(&s);
}

static void test_unterminated_last_event(void **state) {
  (void)state;
  /* vLLM's client accepts a final `data:` without its blank line; so do we. */
  cb_client_stream s = chat(CHUNK("a") "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},"
                                       "\"finish_reason\":\"stop\"}]}");
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  assert_int_equal(s.content_chunks, 2);
  assert_string_equal(s.text.data, "ab");
  cb_client_stream_free(&s);
  s = chat(CHUNK("a") "data: [DONE]");
  assert_true(s.saw_done);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  cb_client_stream_free(&s);
}

static void test_invalid_json_mid_stream(void **state) {
  (void)state;
  cb_client_stream s = chat(CHUNK("a") "data: {oops}\n\n" CHUNK("b") FINISH("stop") DONE);
  assert_error(&s, CB_CLIENT_ERR_INVALID_JSON, "event 2");
  assert_non_null(strstr(s.error_msg, "{oops}"));
  assert_int_equal(s.invalid_json_events, 1);
  assert_int_equal(s.content_chunks, 2); /* measuring goes on */
  cb_client_stream_free(&s);
}

static void test_server_errors(void **state) {
  (void)state;
  cb_client_stream s = chat(CHUNK("a") "event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n");
  assert_error(&s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, "event: error: overloaded");
  assert_int_equal(s.error_events, 1);
  cb_client_stream_free(&s);
  s = chat(CHUNK("a") "event: error\ndata: upstream died\n\n");
  assert_error(&s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, "upstream died");
  assert_int_equal(s.invalid_json_events, 0); /* the error is the class, not the JSON */
  cb_client_stream_free(&s);
  s = chat(CHUNK("a") "event: error\n\n");
  assert_error(&s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, "no data");
  cb_client_stream_free(&s);
  s = chat(CHUNK("a") "data: {\"object\":\"error\",\"message\":\"KV cache full\",\"code\":503}\n\n" DONE);
  assert_error(&s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, "KV cache full");
  cb_client_stream_free(&s);
  /* Other event types are read as chunks. */
  s = chat("event: message\n" CHUNK("a") "event: ping\n\n" DONE);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  assert_int_equal(s.content_chunks, 1);
  cb_client_stream_free(&s);
}

static void test_malformed_and_caps(void **state) {
  (void)state;
  cb_client_stream s = chat(CHUNK("a") "{\"error\": \"raw JSON line\"}\n" CHUNK("b") DONE);
  assert_error(&s, CB_CLIENT_ERR_MALFORMED_SSE, "not an SSE field");
  assert_int_equal(s.malformed_lines, 1);
  assert_int_equal(s.content_chunks, 2);
  cb_client_stream_free(&s);
  /* An over-long line: an error, and nothing after it is read. */
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  p.max_line_bytes = 100;
  s = stream_of(CHUNK("a") "data: " "0123456789012345678901234567890123456789012345678901234567890"
                           "12345678901234567890123456789012345678901234567890\n\n" CHUNK("b") DONE,
                &p);
  assert_error(&s, CB_CLIENT_ERR_MALFORMED_SSE, "line longer than the limit of 100 bytes");
  assert_int_equal(s.content_chunks, 1);
  assert_false(s.saw_done);
  cb_client_stream_free(&s);
}

static void test_keepalive_comments(void **state) {
  (void)state;
  cb_client_stream s = chat(": ping\n\n: ping\n\n" CHUNK("a") ": ping\n\n" DONE);
  assert_int_equal(s.comments, 3);
  assert_int_equal(s.events, 2);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  /* Keep-alives are bytes but not events. */
  assert_true(s.first_byte_ns < s.first_event_ns);
  cb_client_stream_free(&s);
}

static void test_empty_content_chunks(void **state) {
  (void)state;
  /* Empty deltas mid-stream are vLLM chunks (they end up in its ITLs), not ours. */
  cb_client_stream s = chat(ROLE CHUNK("a") CHUNK("") CHUNK("b") FINISH("stop") DONE);
  assert_int_equal(s.content_chunks, 2);
  assert_int_equal(s.choices_chunks, 5);
  assert_int_equal(s.other_kept, 3);
  uint64_t t[8];
  assert_int_equal(cb_client_stream_choices_times(&s, t, 8), 5);
  cb_client_stream_free(&s);
}

static void test_continuous_usage(void **state) {
  (void)state;
  /* vLLM with continuous_usage_stats: every chunk carries cumulative usage; a chunk
   * that delivered two tokens counts 2. */
#define CU(content, c)                                                                      \
  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" content "\"}}],\"usage\":"   \
  "{\"prompt_tokens\":5,\"completion_tokens\":" #c ",\"total_tokens\":0}}\n\n"
  cb_client_stream s = chat(CU("", 0) CU("a", 1) CU("bc", 3) CU("d", 4) FINISH("length")
                                USAGE(5, 4) DONE);
  assert_true(s.continuous_usage);
  assert_int_equal(s.content_chunks, 3);
  assert_int_equal(s.chunk_tokens_source, CB_CLIENT_TOKENS_USAGE);
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 0), 1);
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 1), 2);
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 2), 1);
  assert_int_equal(s.counted_tokens, 4);
  assert_int_equal(s.output_tokens, 4);
  assert_int_equal(s.output_tokens_source, CB_CLIENT_TOKENS_USAGE);
  cb_client_stream_free(&s);
#undef CU
}

/* A toy tokenizer: one token per started group of 2 bytes. */
static uint64_t two_bytes(void *ctx, const char *text, size_t len) {
  (*(int *)ctx)++;
  (void)text;
  return (len + 1) / 2;
}

static void test_tokenizer_counts(void **state) {
  (void)state;
  int calls = 0;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  p.count_tokens = two_bytes;
  p.count_ctx = &calls;
  cb_client_stream s;
  cb_free(run(&p, ROLE CHUNK("abc") CHUNK("d") FINISH("stop") DONE,
              strlen(ROLE CHUNK("abc") CHUNK("d") FINISH("stop") DONE), 0, &s));
  assert_int_equal(calls, 2); /* content chunks only */
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 0), 2);
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 1), 1);
  assert_int_equal(s.output_tokens, 3);
  assert_int_equal(s.output_tokens_source, CB_CLIENT_TOKENS_TOKENIZER);
  assert_int_equal(s.chunk_tokens_source, CB_CLIENT_TOKENS_TOKENIZER);
  cb_client_stream_free(&s);
  /* With usage in the stream, the total is the server's; per chunk still counted. */
  calls = 0;
  cb_free(run(&p, CHUNK("abc") USAGE(1, 7) DONE, strlen(CHUNK("abc") USAGE(1, 7) DONE), 0, &s));
  assert_int_equal(s.output_tokens, 7);
  assert_int_equal(s.output_tokens_source, CB_CLIENT_TOKENS_USAGE);
  assert_int_equal(cb_client_stream_chunk_tokens(&s, 0), 2);
  cb_client_stream_free(&s);
}

static void test_reasoning_and_tools(void **state) {
  (void)state;
  cb_client_stream s = chat(
      "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"think\"}}]}\n\n" CHUNK("ok")
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"f\","
      "\"arguments\":\"{}\"}}]}}]}\n\n" FINISH("tool_calls") DONE);
  assert_int_equal(s.content_chunks, 3); /* reasoning, content and a tool call all count */
  assert_int_equal(s.reasoning_bytes, 5);
  assert_int_equal(s.tool_bytes, 3);
  assert_string_equal(s.text.data, "ok"); /* the text is content only */
  assert_string_equal(s.finish_reason, "tool_calls");
  cb_client_stream_free(&s);
}

/* OpenAI's streamed tool calls: a call's first piece names it, later pieces with the
 * same index add to its arguments; two calls may interleave; choice 1 is not ours. */
#define TOOL(piece) "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[" piece "]}}]}\n\n"
static void test_tool_call_assembly(void **state) {
  (void)state;
  cb_client_stream s = chat(
      ROLE
      TOOL("{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"search\",\"arguments\":\"\"}}")
      TOOL("{\"index\":0,\"function\":{\"arguments\":\"{\\\"q\\\": \"}}")
      TOOL("{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"fetch\",\"arguments\":\"{}\"}}")
      TOOL("{\"index\":0,\"function\":{\"arguments\":\"\\\"x\\\"}\"}}")
      "data: {\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"other\","
      "\"function\":{\"name\":\"not_ours\",\"arguments\":\"\"}}]}}]}\n\n"
      FINISH("tool_calls") DONE);
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_client_tool_calls_json(&s.tool_calls, &b);
  assert_string_equal(b.data,
                      "[{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"search\","
                      "\"arguments\":\"{\\\"q\\\": \\\"x\\\"}\"}},{\"id\":\"call_b\",\"type\":"
                      "\"function\",\"function\":{\"name\":\"fetch\",\"arguments\":\"{}\"}}]");
  assert_string_equal(s.finish_reason, "tool_calls");
  cb_buf_free(&b);
  /* The next request on the same accumulator starts with none. */
  cb_client_stream_reset(&s);
  cb_client_stream_feed(&s, CHUNK("hi") FINISH("stop") DONE, strlen(CHUNK("hi") FINISH("stop") DONE), 1);
  cb_client_stream_finish(&s, 2);
  assert_int_equal(s.tool_calls.n, 0);
  cb_client_stream_free(&s);
}

/* A whole (non-streamed) message's tool_calls, and the byte cap. */
static void test_tool_calls_body_and_cap(void **state) {
  (void)state;
  const char *body = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,"
                     "\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                     "\"arguments\":\"{\\\"a\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}";
  cb_client_tool_calls t;
  cb_client_tool_calls_init(&t, 0);
  cb_client_tool_calls_add_body(&t, body, strlen(body));
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_client_tool_calls_json(&t, &b);
  assert_string_equal(b.data, "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\","
                              "\"arguments\":\"{\\\"a\\\":1}\"}}]");
  cb_client_tool_calls_free(&t);
  cb_client_tool_calls_init(&t, 4); /* "c1" + "f" fit, the arguments do not */
  cb_client_tool_calls_add_body(&t, body, strlen(body));
  assert_true(t.truncated);
  assert_int_equal(t.bytes, 3);
  cb_client_tool_calls_add_chunk(&t, "not json", 8); /* adds nothing, no crash */
  assert_int_equal(t.n, 1);
  cb_client_tool_calls_free(&t);
  cb_buf_free(&b);
}

static void test_n_choices_text(void **state) {
  (void)state;
  cb_client_stream s = chat(
      "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"X\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}},"
      "{\"index\":2,\"delta\":{\"content\":\"Y\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"logprobs\":{}}]}\n\n" DONE);
  assert_string_equal(s.text.data, "ab");
  assert_int_equal(s.content_chunks, 3);
  assert_int_equal(s.counted_tokens, 4); /* without a tokenizer: one per content choice */
  assert_int_equal(s.content_bytes, 4);
  assert_true(s.has_logprobs);
  cb_client_stream_free(&s);
}

static void test_caps(void **state) {
  (void)state;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  p.max_text_bytes = 5;
  p.max_chunk_times = 3;
  cb_client_stream s = stream_of(CHUNK("Hel") CHUNK("lo, w") CHUNK("orld") CHUNK("!") ROLE ROLE
                                     ROLE ROLE DONE,
                                 &p);
  assert_string_equal(s.text.data, "Hello");
  assert_true(s.text_truncated);
  assert_int_equal(s.content_chunks, 4);
  assert_int_equal(s.content_kept, 3);
  assert_int_equal(s.content_dropped, 1);
  assert_int_equal(s.other_kept, 3);
  assert_int_equal(s.other_dropped, 1);
  assert_true(s.content_alloc <= 3);
  cb_client_stream_free(&s);
  /* No text at all. */
  p.max_text_bytes = 0;
  s = stream_of(CHUNK("abc") DONE, &p);
  assert_int_equal(s.text.len, 0);
  assert_false(s.text_truncated);
  cb_client_stream_free(&s);
}

/* Raw events with choices kept for callers that read more of them (a probe reading
 * top_logprobs or a refusal): whole events, in order, the first that does not fit
 * ends the keeping; events without choices (usage) are not kept; off by default. */
static void test_choice_events(void **state) {
  (void)state;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  const char *in = ROLE "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"no\"}}]}\n\n"
      USAGE(3, 1) CHUNK("abc") CHUNK("defghijklmnop") DONE;
  cb_client_stream s = stream_of(in, &p);
  assert_int_equal(s.choice_events.len, 0);
  cb_client_stream_free(&s);
  const char *e1 = "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}";
  const char *e2 = "{\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"no\"}}]}";
  const char *e3 = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abc\"},\"finish_reason\":null}]}";
  /* Room for the first three events and their newlines, not the fourth. */
  p.max_choice_event_bytes = strlen(e1) + strlen(e2) + strlen(e3) + 3 + 10;
  s = stream_of(in, &p);
  char want[512];
  snprintf(want, sizeof want, "%s\n%s\n%s\n", e1, e2, e3);
  assert_string_equal(s.choice_events.data, want);
  assert_true(s.choice_events_full);
  assert_string_equal(s.text.data, "abcdefghijklmnop"); /* the rest is read as ever */
  cb_client_stream_reset(&s);
  assert_int_equal(s.choice_events.len, 0);
  assert_false(s.choice_events_full);
  cb_client_stream_free(&s);
}

static void test_after_done_and_set_error(void **state) {
  (void)state;
  cb_client_stream s = chat(CHUNK("a") DONE CHUNK("b"));
  assert_int_equal(s.events_after_done, 1);
  assert_int_equal(s.content_chunks, 2);
  cb_client_stream_free(&s);
  /* The runner's timeout comes first: finish() does not turn it into stream_cut. */
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  cb_client_stream_init(&s, &p);
  cb_client_stream_feed(&s, CHUNK("a"), strlen(CHUNK("a")), 10);
  assert_int_equal(cb_client_stream_set_error(&s, CB_CLIENT_ERR_TIMEOUT, "request timeout", 20), 1);
  assert_int_equal(cb_client_stream_set_error(&s, CB_CLIENT_ERR_CONNECT, "late", 21), 0);
  assert_int_equal(cb_client_stream_set_error(&s, CB_CLIENT_ERR_NONE, NULL, 21), 0);
  cb_client_stream_finish(&s, 30);
  assert_error(&s, CB_CLIENT_ERR_TIMEOUT, "request timeout");
  assert_int_equal(s.error_ns, 20);
  cb_client_stream_feed(&s, CHUNK("b"), strlen(CHUNK("b")), 40); /* after finish: ignored */
  assert_int_equal(s.content_chunks, 1);
  assert_int_equal(s.last_byte_ns, 10);
  /* Reset for the next request keeps the storage and forgets the rest. */
  uint64_t *times = s.content_ns;
  cb_client_stream_reset(&s);
  assert_int_equal(s.error, CB_CLIENT_ERR_NONE);
  assert_null(s.error_msg);
  assert_int_equal(s.content_chunks, 0);
  assert_int_equal(s.usage.completion_tokens, -1);
  cb_client_stream_feed(&s, CHUNK("c") DONE, strlen(CHUNK("c") DONE), 50);
  cb_client_stream_finish(&s, 60);
  assert_ptr_equal(s.content_ns, times);
  assert_string_equal(s.text.data, "c");
  assert_int_equal(s.first_content_ns, 50);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  cb_client_stream_free(&s);
}

/* Reads stamped out of order (kernel stamps of coalesced segments, 1-31 ns apart):
 * the chunk times of one response still never go backwards. */
static void test_times_never_go_backwards(void **state) {
  (void)state;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  cb_client_stream s;
  cb_client_stream_init(&s, &p);
  static const uint64_t at[] = {1000, 990, 1200, 1169, 1169, 1500};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
    cb_client_stream_feed(&s, CHUNK("a"), strlen(CHUNK("a")), at[i]);
  cb_client_stream_finish(&s, 1400); /* even the end comes before the last read */
  assert_int_equal(s.content_kept, 6);
  for (size_t i = 1; i < s.content_kept; i++)
    if (s.content_ns[i] < s.content_ns[i - 1])
      fail_msg("chunk %zu at %llu, before %llu", i, (unsigned long long)s.content_ns[i],
               (unsigned long long)s.content_ns[i - 1]);
  assert_int_equal(s.content_ns[1], 1000);
  assert_int_equal(s.content_ns[3], 1200);
  assert_int_equal(s.last_byte_ns, 1500);
  cb_client_stream_free(&s);
}

static void test_preallocation(void **state) {
  (void)state;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  p.initial_chunk_times = 256;
  cb_client_stream s;
  cb_client_stream_init(&s, &p);
  assert_int_equal(s.content_alloc, 256);
  assert_int_equal(s.other_alloc, 16);
  uint64_t *before = s.content_ns;
  for (int i = 0; i < 200; i++) cb_client_stream_feed(&s, CHUNK("x"), strlen(CHUNK("x")), 1 + (uint64_t)i);
  cb_client_stream_finish(&s, 1000);
  assert_ptr_equal(s.content_ns, before);
  assert_int_equal(s.content_kept, 200);
  assert_int_equal(s.content_ns[199], 200);
  cb_client_stream_free(&s);
}

static void test_ollama_stream(void **state) {
  (void)state;
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  p.api = CB_CLIENT_API_OLLAMA_GENERATE; /* implies NDJSON */
  cb_client_stream s = stream_of("{\"response\":\"a\",\"done\":false}\n{\"response\":\"b\",\"done\":false}\n",
                                 &p);
  assert_error(&s, CB_CLIENT_ERR_STREAM_CUT, NULL);
  assert_int_equal(s.content_chunks, 2);
  cb_client_stream_free(&s);
  s = stream_of("{\"response\":\"a\",\"done\":false}\n{\"response\":\"\",\"done\":true,"
                "\"done_reason\":\"length\",\"prompt_eval_count\":3,\"eval_count\":1}",
                &p);
  assert_error(&s, CB_CLIENT_ERR_NONE, NULL);
  assert_true(s.saw_done);
  assert_string_equal(s.finish_reason, "length");
  assert_int_equal(s.output_tokens, 1);
  cb_client_stream_free(&s);
  s = stream_of("{\"error\":\"model not found\"}\n", &p);
  assert_error(&s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, "model not found");
  cb_client_stream_free(&s);
}

static void test_struct_size(void **state) {
  (void)state;
  /* The per-request state stays small (the heap parts grow with the stream). */
  assert_true(sizeof(cb_client_stream) <= 1024);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recordings),
      cmocka_unit_test(test_vllm_instants),
      cmocka_unit_test(test_complete_stream),
      cmocka_unit_test(test_cut_without_done),
      cmocka_unit_test(test_unterminated_last_event),
      cmocka_unit_test(test_invalid_json_mid_stream),
      cmocka_unit_test(test_server_errors),
      cmocka_unit_test(test_malformed_and_caps),
      cmocka_unit_test(test_keepalive_comments),
      cmocka_unit_test(test_empty_content_chunks),
      cmocka_unit_test(test_continuous_usage),
      cmocka_unit_test(test_tokenizer_counts),
      cmocka_unit_test(test_reasoning_and_tools),
      cmocka_unit_test(test_tool_call_assembly),
      cmocka_unit_test(test_tool_calls_body_and_cap),
      cmocka_unit_test(test_n_choices_text),
      cmocka_unit_test(test_caps),
      cmocka_unit_test(test_choice_events),
      cmocka_unit_test(test_after_done_and_set_error),
      cmocka_unit_test(test_times_never_go_backwards), cmocka_unit_test(test_preallocation),
      cmocka_unit_test(test_ollama_stream),
      cmocka_unit_test(test_struct_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
