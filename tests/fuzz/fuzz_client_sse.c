/*
 * fuzz_client_sse.c - libFuzzer driver for the client's stream layer: the event-
 * stream parser (src/client/sse.c), the chunk interpreter's two readers
 * (src/client/chunk.c fast scanner vs src/client/chunk_jansson.c), the accumulator
 * (src/client/stream.c) and the request encoder's extra-body copy.
 *
 * Byte 0 picks the mode and options; the rest is the input.
 *   mode 0-1 (stream): the accumulator is fed the input whole, one byte at a time and
 *     in seeded random pieces; every non-time result must agree, times must keep
 *     their order, caps must hold. Each event's data also goes through both chunk
 *     readers, which must agree whenever the scanner does not decline.
 *   mode 2 (chunk): the input is one event's data: both readers must agree.
 *   mode 3 (request): the input is an --extra-body; when accepted, the body must be
 *     a JSON object that jansson reads, with the extra members in it.
 * Options: NDJSON + Ollama dialect, completions, small caps, a toy tokenizer.
 *
 * Build and run (docs/internals/client-stream.md; `make fuzz` does the same):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     tests/fuzz/fuzz_client_sse.c src/client/{sse,json_scan,chunk,chunk_jansson}.c \
 *     src/client/{stream,request,response,names}.c src/util/[a-z]*.c -ljansson -lyaml -o /tmp/fz
 *   mkdir -p /tmp/fz-corpus   # new inputs go to the first directory, not the seeds
 *   /tmp/fz -max_total_time=60 /tmp/fz-corpus tests/fuzz/corpus/client_sse
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "client/chunk_internal.h"
#include "fuzz_common.h"

static int str_eq(cb_client_str a, cb_client_str b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int chunks_equal(const cb_client_chunk *a, const cb_client_chunk *b) {
  if (a->kind != b->kind) return 0;
  if (a->kind == CB_CLIENT_CHUNK_INVALID_JSON || a->kind == CB_CLIENT_CHUNK_DONE) return 1;
  if (a->n_choices != b->n_choices || a->content_choices != b->content_choices ||
      a->n_detailed != b->n_detailed || a->has_usage != b->has_usage || a->final != b->final ||
      a->has_logprobs != b->has_logprobs || a->error_code != b->error_code ||
      memcmp(&a->usage, &b->usage, sizeof a->usage) != 0 || !str_eq(a->error_message, b->error_message))
    return 0;
  for (uint32_t i = 0; i < a->n_detailed; i++) {
    const cb_client_choice *x = &a->choice[i], *y = &b->choice[i];
    if (x->index != y->index || !str_eq(x->content, y->content) ||
        !str_eq(x->reasoning, y->reasoning) || !str_eq(x->tool, y->tool) ||
        !str_eq(x->finish_reason, y->finish_reason) || x->tool_calls != y->tool_calls ||
        x->has_content != y->has_content || x->has_role != y->has_role ||
        x->has_logprobs != y->has_logprobs)
      return 0;
  }
  return 1;
}

/* Both readers on one document; they must agree when the scanner reads it. */
static void differential(cb_client_api api, const char *data, size_t len) {
  char *a1 = cb_malloc(len + CB__CLIENT_CHUNK_SLACK), *a2 = cb_malloc(len + CB__CLIENT_CHUNK_SLACK);
  cb_client_chunk fast, ref;
  int scanned = cb__client_chunk_scan(api, data, len, a1, &fast);
  cb__client_chunk_jansson(api, data, len, a2, &ref);
  if (scanned) check(chunks_equal(&fast, &ref));
  /* Decoded strings fit the input (the scratch contract). */
  if (scanned && fast.kind != CB_CLIENT_CHUNK_INVALID_JSON) {
    size_t total = fast.error_message.len;
    for (uint32_t i = 0; i < fast.n_detailed; i++)
      total += fast.choice[i].content.len + fast.choice[i].reasoning.len +
               fast.choice[i].tool.len + fast.choice[i].finish_reason.len;
    check(total <= len);
    check(fast.content_choices <= fast.n_choices && fast.n_detailed <= fast.n_choices);
  }
  cb_free(a1);
  cb_free(a2);
}

static uint64_t toy_tokens(void *ctx, const char *text, size_t len) {
  (void)ctx;
  (void)text;
  return len / 3;
}

/* Everything but times. */
static uint64_t stream_hash(const cb_client_stream *s) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  uint64_t v[] = {s->events, s->comments, s->malformed_lines, s->invalid_json_events,
                  s->error_events, s->choices_chunks, s->content_chunks, s->content_kept,
                  s->content_dropped, s->other_kept, s->other_dropped, (uint64_t)s->saw_done,
                  (uint64_t)s->error, s->output_tokens, (uint64_t)s->output_tokens_source,
                  (uint64_t)s->chunk_tokens_source, s->counted_tokens, s->text.len,
                  (uint64_t)s->text_truncated, s->content_bytes, s->reasoning_bytes,
                  s->tool_bytes, (uint64_t)s->has_logprobs, s->events_after_done,
                  s->fallback_chunks, (uint64_t)s->has_usage, (uint64_t)s->continuous_usage};
  h = fnv(h, v, sizeof v);
  h = fnv(h, &s->usage, sizeof s->usage);
  h = fnv(h, s->finish_reason, strlen(s->finish_reason));
  if (s->error_msg) h = fnv(h, s->error_msg, strlen(s->error_msg));
  if (s->text.len) h = fnv(h, s->text.data, s->text.len);
  for (size_t i = 0; i < s->content_kept; i++) {
    uint32_t t = cb_client_stream_chunk_tokens(s, i);
    h = fnv(h, &t, sizeof t);
  }
  return h;
}

static void check_stream(const cb_client_stream *s, const cb_client_stream_params *p) {
  check(s->finished);
  check(s->content_kept <= p->max_chunk_times && s->other_kept <= p->max_chunk_times);
  check(s->content_kept + s->content_dropped == s->content_chunks);
  check(s->content_chunks <= s->choices_chunks);
  check(s->text.len <= p->max_text_bytes);
  check(s->sse.line.len <= p->max_line_bytes && s->sse.data.len <= p->max_event_bytes);
  check((s->error == CB_CLIENT_ERR_NONE) == (s->error_msg == NULL));
  check(s->error != CB_CLIENT_ERR_NONE || s->saw_done || s->finish_reason[0]);
  if (s->first_content_ns) {
    check(s->first_byte_ns <= s->first_event_ns && s->first_event_ns <= s->first_choices_ns);
    check(s->first_choices_ns <= s->first_content_ns && s->first_content_ns <= s->last_content_ns);
    check(s->last_content_ns <= s->last_choices_ns && s->last_choices_ns <= s->last_byte_ns);
    check(s->content_ns[0] == s->first_content_ns);
  }
  for (size_t i = 1; i < s->content_kept; i++) check(s->content_ns[i - 1] <= s->content_ns[i]);
  size_t n = cb_client_stream_choices_times(s, NULL, 0);
  check(n == s->content_kept + s->other_kept);
  if (s->output_tokens_source == CB_CLIENT_TOKENS_USAGE)
    check((int64_t)s->output_tokens == s->usage.completion_tokens);
}

/* step 0: whole; 1: bytes; else seeded random pieces of 1..step. */
static uint64_t run_stream(const cb_client_stream_params *p, const uint8_t *data, size_t size,
                           size_t step, uint64_t seed) {
  cb_client_stream s;
  cb_client_stream_init(&s, p);
  size_t off = 0;
  while (off < size) {
    size_t n = size - off;
    if (step) {
      seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
      size_t piece = step == 1 ? 1 : 1 + (size_t)((seed >> 33) % step);
      if (n > piece) n = piece;
    }
    cb_client_stream_feed(&s, (const char *)data + off, n, 1 + off + n);
    off += n;
  }
  cb_client_stream_finish(&s, size + 2);
  check_stream(&s, p);
  uint64_t h = stream_hash(&s);
  cb_client_stream_free(&s);
  return h;
}

/* Each event's data through both readers. */
static void events_differential(const cb_client_stream_params *p, const uint8_t *data, size_t size) {
  cb_client_sse sse;
  cb_client_sse_init(&sse, p->api == CB_CLIENT_API_OLLAMA_GENERATE ? CB_CLIENT_FORMAT_NDJSON : p->format,
                     p->max_line_bytes, p->max_event_bytes);
  size_t off = 0;
  int events = 0;
  for (;;) {
    size_t used;
    cb_client_sse_item it;
    cb_client_sse_result r = cb_client_sse_feed(&sse, (const char *)data + off, size - off, &used, &it);
    check(used <= size - off);
    off += used;
    if (r == CB_CLIENT_SSE_NEED_MORE) {
      check(off == size);
      break;
    }
    if (r == CB_CLIENT_SSE_ERROR) break;
    if (r == CB_CLIENT_SSE_EVENT && it.has_data && events++ < 64) differential(p->api, it.data, it.len);
  }
  cb_client_sse_free(&sse);
}

static void request_mode(const uint8_t *data, size_t size) {
  cb_client_request r;
  cb_client_request_init(&r);
  r.model = "m";
  r.prompt = "p";
  r.prompt_len = 1;
  r.max_tokens = 5;
  r.extra_json = (const char *)data;
  r.extra_json_len = size;
  cb_buf out;
  cb_buf_init(&out, 0);
  if (cb_client_request_encode(&r, &out, NULL) == CB_OK) {
    json_error_t je;
    json_t *body = json_loadb(out.data, out.len, JSON_ALLOW_NUL, &je);
    json_t *extra = json_loadb(r.extra_json, r.extra_json_len, JSON_ALLOW_NUL, &je);
    check(body && json_is_object(body) && extra && json_is_object(extra));
    const char *k;
    json_t *v;
    json_object_foreach(extra, k, v) check(json_equal(json_object_get(body, k), v));
    json_decref(body);
    json_decref(extra);
  }
  cb_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t sel = take_selector(&data, &size);
  int mode = sel & 3;
  if (mode == 3) {
    request_mode(data, size);
    return 0;
  }
  cb_client_stream_params p;
  cb_client_stream_default_params(&p);
  if (sel & 4) p.api = CB_CLIENT_API_OLLAMA_GENERATE;
  else if (sel & 8) p.api = CB_CLIENT_API_COMPLETIONS;
  if (mode == 2) {
    differential(p.api, (const char *)data, size);
    cb_buf scratch;
    cb_buf_init(&scratch, 0);
    cb_client_chunk c;
    check(cb_client_chunk_parse(p.api, (const char *)data, size, &scratch, &c) == CB_OK);
    cb_buf_free(&scratch);
    return 0;
  }
  if (sel & 16) {
    p.max_line_bytes = 64 + (sel >> 6) * 16;
    p.max_event_bytes = 64 + (sel >> 6) * 64;
    p.max_text_bytes = (size_t)(sel >> 6) * 7;
    p.max_chunk_times = 1 + (sel >> 6);
  }
  if (sel & 32) p.count_tokens = toy_tokens;
  uint64_t seed = fnv(UINT64_C(0xcbf29ce484222325), data, size);
  uint64_t whole = run_stream(&p, data, size, 0, seed);
  check(run_stream(&p, data, size, 1, seed) == whole);
  check(run_stream(&p, data, size, 2 + (sel >> 5), seed) == whole);
  check(run_stream(&p, data, size, 64, seed ^ 1) == whole);
  events_differential(&p, data, size);
  return 0;
}
