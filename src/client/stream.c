/*
 * stream.c - the per-request stream accumulator: bytes + the time they arrived in,
 * a timing record out. It drives the event-stream parser (sse.c), reads each event
 * with the chunk interpreter (chunk.c) and keeps, in bounded memory, what the runner
 * needs to compute TTFT, ITL, TPOT and E2E in both calibench's definition (first
 * content-bearing chunk) and vLLM's (first chunk with non-empty choices).
 *
 * Allocation: the parser's buffers and the scratch grow to the largest line/event
 * once; the chunk-time arrays double up to max_chunk_times (preallocate with
 * initial_chunk_times and reuse structs with cb_client_stream_reset to allocate
 * nothing while measuring); error messages are allocated when an error happens.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/client.h"

#define ERROR_MSG_MAX 511
#define EXCERPT_MAX 96

void cb_client_stream_default_params(cb_client_stream_params *p) {
  memset(p, 0, sizeof *p);
  p->api = CB_CLIENT_API_CHAT;
  p->format = CB_CLIENT_FORMAT_SSE;
  p->max_line_bytes = CB_CLIENT_DEFAULT_MAX_LINE_BYTES;
  p->max_event_bytes = CB_CLIENT_DEFAULT_MAX_EVENT_BYTES;
  p->max_text_bytes = (size_t)1 << 20;
  p->max_chunk_times = 65536;
}

/* Room for `want` content-chunk times (capped by max_chunk_times). */
static void grow_content(cb_client_stream *s, size_t want) {
  if (want > s->params.max_chunk_times) want = s->params.max_chunk_times;
  if (want <= s->content_alloc) return;
  s->content_ns = cb_reallocarray(s->content_ns, want, sizeof *s->content_ns);
  if (s->content_tokens)
    s->content_tokens = cb_reallocarray(s->content_tokens, want, sizeof *s->content_tokens);
  s->content_alloc = want;
}

/* Room for `want` other choices-chunk times (usually 2: role-only and finish). */
static void grow_other(cb_client_stream *s, size_t want) {
  if (want > s->params.max_chunk_times) want = s->params.max_chunk_times;
  if (want <= s->other_alloc) return;
  s->other_choices_ns = cb_reallocarray(s->other_choices_ns, want, sizeof *s->other_choices_ns);
  s->other_alloc = want;
}

/* Everything a new request starts from, storage aside. */
static void clear_results(cb_client_stream *s) {
  s->first_byte_ns = s->last_byte_ns = s->first_event_ns = 0;
  s->first_choices_ns = s->last_choices_ns = s->first_content_ns = s->last_content_ns = 0;
  s->done_ns = s->end_ns = 0;
  s->tokens_stored = 0;
  s->content_kept = 0;
  s->content_chunks = s->content_dropped = 0;
  s->other_kept = 0;
  s->choices_chunks = s->other_dropped = 0;
  cb_client_usage_clear(&s->usage);
  s->has_usage = s->continuous_usage = 0;
  s->usage_completion_seen = 0;
  s->output_tokens = 0;
  s->output_tokens_source = s->chunk_tokens_source = CB_CLIENT_TOKENS_NONE;
  s->counted_tokens = 0;
  s->finish_reason[0] = '\0';
  s->saw_done = s->has_logprobs = 0;
  s->error = CB_CLIENT_ERR_NONE;
  cb_free(s->error_msg);
  s->error_msg = NULL;
  s->error_ns = 0;
  cb_buf_reset(&s->text);
  s->text_truncated = 0;
  cb_buf_reset(&s->choice_events);
  s->choice_events_full = 0;
  cb_client_tool_calls_reset(&s->tool_calls);
  s->content_bytes = s->reasoning_bytes = s->tool_bytes = 0;
  s->events = s->comments = s->malformed_lines = s->invalid_json_events = 0;
  s->error_events = s->events_after_done = s->fallback_chunks = 0;
  s->finished = 0;
}

void cb_client_stream_init(cb_client_stream *s, const cb_client_stream_params *params) {
  memset(s, 0, sizeof *s);
  if (params) s->params = *params;
  else cb_client_stream_default_params(&s->params);
  if (s->params.api == CB_CLIENT_API_OLLAMA_GENERATE) s->params.format = CB_CLIENT_FORMAT_NDJSON;
  cb_client_sse_init(&s->sse, s->params.format, s->params.max_line_bytes,
                     s->params.max_event_bytes);
  cb_buf_init(&s->scratch, 0); /* bounded by max_event_bytes + slack */
  cb_buf_init(&s->text, s->params.max_text_bytes);
  cb_buf_init(&s->choice_events, 0);
  cb_client_tool_calls_init(&s->tool_calls, s->params.max_text_bytes);
  clear_results(s);
  if (s->params.initial_chunk_times) {
    grow_content(s, s->params.initial_chunk_times);
    grow_other(s, s->params.initial_chunk_times < 16 ? s->params.initial_chunk_times : 16);
  }
}

void cb_client_stream_free(cb_client_stream *s) {
  cb_client_sse_free(&s->sse);
  cb_buf_free(&s->scratch);
  cb_buf_free(&s->text);
  cb_buf_free(&s->choice_events);
  cb_client_tool_calls_free(&s->tool_calls);
  cb_free(s->content_ns);
  cb_free(s->content_tokens);
  cb_free(s->other_choices_ns);
  cb_free(s->error_msg);
  s->content_ns = s->other_choices_ns = NULL;
  s->content_tokens = NULL;
  s->error_msg = NULL;
  s->content_alloc = s->other_alloc = 0;
}

void cb_client_stream_reset(cb_client_stream *s) {
  cb_client_sse_reset(&s->sse);
  clear_results(s);
}

/* ---- errors -------------------------------------------------------------------- */

int cb_client_stream_set_error(cb_client_stream *s, cb_client_error_class c,
                               const char *msg, uint64_t now_ns) {
  if (c == CB_CLIENT_ERR_NONE || (unsigned)c >= CB_CLIENT_ERR_COUNT_ ||
      s->error != CB_CLIENT_ERR_NONE)
    return 0;
  s->error = c;
  s->error_ns = now_ns;
  s->error_msg = msg ? cb_strndup(msg, ERROR_MSG_MAX) : NULL;
  return 1;
}

static void set_errorf(cb_client_stream *s, cb_client_error_class c, uint64_t now_ns,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set_errorf(cb_client_stream *s, cb_client_error_class c, uint64_t now_ns,
                       const char *fmt, ...) {
  if (s->error != CB_CLIENT_ERR_NONE) return;
  char msg[ERROR_MSG_MAX + 1];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cb_client_stream_set_error(s, c, msg, now_ns);
}

/* A printable excerpt of untrusted bytes for a message: control bytes become '?',
 * cut at EXCERPT_MAX bytes with "..." */
static const char *excerpt(char *dst, const char *p, size_t n) {
  size_t k = n < EXCERPT_MAX ? n : EXCERPT_MAX;
  for (size_t i = 0; i < k; i++) {
    unsigned char c = (unsigned char)p[i];
    dst[i] = c < 0x20 || c == 0x7F ? '?' : (char)c;
  }
  if (k < n) memcpy(dst + k, "...", 4);
  else dst[k] = '\0';
  return dst;
}

/* ---- chunk bookkeeping ----------------------------------------------------------- */

static void push_content(cb_client_stream *s, uint64_t now_ns, uint64_t tokens) {
  uint32_t t = tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)tokens;
  if (s->content_kept >= s->params.max_chunk_times) {
    s->content_dropped++;
    return;
  }
  if (s->content_kept == s->content_alloc) grow_content(s, s->content_alloc ? s->content_alloc * 2 : 64);
  if (t != 1 && !s->tokens_stored) {
    /* First count other than 1: from now on every count is stored. */
    s->content_tokens = cb_reallocarray(s->content_tokens, s->content_alloc,
                                        sizeof *s->content_tokens);
    for (size_t i = 0; i < s->content_kept; i++) s->content_tokens[i] = 1;
    s->tokens_stored = 1;
  }
  if (s->tokens_stored) s->content_tokens[s->content_kept] = t;
  s->content_ns[s->content_kept++] = now_ns;
}

static void push_other(cb_client_stream *s, uint64_t now_ns) {
  if (s->other_kept >= s->params.max_chunk_times) {
    s->other_dropped++;
    return;
  }
  if (s->other_kept == s->other_alloc) grow_other(s, s->other_alloc ? s->other_alloc * 2 : 8);
  s->other_choices_ns[s->other_kept++] = now_ns;
}

static void merge_usage(cb_client_stream *s, const cb_client_usage *u) {
  s->has_usage = 1;
  if (u->prompt_tokens >= 0) s->usage.prompt_tokens = u->prompt_tokens;
  if (u->completion_tokens >= 0) s->usage.completion_tokens = u->completion_tokens;
  if (u->total_tokens >= 0) s->usage.total_tokens = u->total_tokens;
  if (u->cached_tokens >= 0) s->usage.cached_tokens = u->cached_tokens;
  if (u->reasoning_tokens >= 0) s->usage.reasoning_tokens = u->reasoning_tokens;
  if (u->image_tokens >= 0) s->usage.image_tokens = u->image_tokens;
}

/* Choice 0: index 0, or no index on the first element. */
static int is_choice0(const cb_client_chunk *c, uint32_t i) {
  return c->choice[i].index == 0 || (c->choice[i].index < 0 && i == 0);
}

static uint64_t count_span(const cb_client_stream *s, cb_client_str t) {
  return t.len ? s->params.count_tokens(s->params.count_ctx, t.ptr, t.len) : 0;
}

static void on_chunk(cb_client_stream *s, const cb_client_chunk *c, uint64_t now_ns) {
  int64_t usage_delta = -1;
  if (c->has_usage) {
    merge_usage(s, &c->usage);
    if (c->usage.completion_tokens >= 0) {
      usage_delta = c->usage.completion_tokens - s->usage_completion_seen;
      if (usage_delta < 0) usage_delta = 0;
      s->usage_completion_seen = c->usage.completion_tokens;
    }
  }
  if (c->n_choices > 0) {
    s->choices_chunks++;
    if (!s->first_choices_ns) s->first_choices_ns = now_ns;
    s->last_choices_ns = now_ns;
  }
  if (c->content_choices > 0) {
    if (s->content_chunks++ == 0) {
      s->first_content_ns = now_ns;
      s->continuous_usage = usage_delta >= 0;
    }
    s->last_content_ns = now_ns;
    uint64_t tokens;
    cb_client_token_source src;
    if (s->continuous_usage && usage_delta >= 0) {
      tokens = (uint64_t)usage_delta;
      src = CB_CLIENT_TOKENS_USAGE;
    } else if (s->params.count_tokens) {
      uint64_t detailed_content = 0, sum = 0;
      for (uint32_t i = 0; i < c->n_detailed; i++) {
        const cb_client_choice *ch = &c->choice[i];
        if (!ch->has_content) continue;
        detailed_content++;
        sum += count_span(s, ch->content) + count_span(s, ch->reasoning) +
               count_span(s, ch->tool);
      }
      tokens = sum + (c->content_choices - detailed_content); /* undetailed: 1 each */
      src = CB_CLIENT_TOKENS_TOKENIZER;
    } else {
      tokens = c->content_choices;
      src = CB_CLIENT_TOKENS_CHUNKS;
    }
    if (s->chunk_tokens_source == CB_CLIENT_TOKENS_NONE) s->chunk_tokens_source = src;
    s->counted_tokens += tokens;
    push_content(s, now_ns, tokens);
  } else if (c->n_choices > 0) {
    push_other(s, now_ns);
  }
  for (uint32_t i = 0; i < c->n_detailed; i++) {
    const cb_client_choice *ch = &c->choice[i];
    s->content_bytes += ch->content.len;
    s->reasoning_bytes += ch->reasoning.len;
    s->tool_bytes += ch->tool.len;
    if (ch->content.len && is_choice0(c, i) && s->params.max_text_bytes && !s->text_truncated) {
      size_t room = s->params.max_text_bytes - s->text.len;
      size_t n = ch->content.len < room ? ch->content.len : room;
      cb_buf_append(&s->text, ch->content.ptr, n);
      if (n < ch->content.len) s->text_truncated = 1;
    }
    if (ch->finish_reason.len && !s->finish_reason[0]) {
      size_t n = ch->finish_reason.len < sizeof s->finish_reason - 1
                     ? ch->finish_reason.len
                     : sizeof s->finish_reason - 1;
      memcpy(s->finish_reason, ch->finish_reason.ptr, n);
      s->finish_reason[n] = '\0';
      if (!s->finish_reason[0]) s->finish_reason[0] = '?'; /* "\u0000..." is still a reason */
    }
  }
  if (c->has_logprobs) s->has_logprobs = 1;
  if (c->final && !s->saw_done) {
    s->saw_done = 1;
    s->done_ns = now_ns;
  }
}

/* The raw event, for callers that read more of it than the accumulator does. Whole
 * events only: the first that does not fit ends the keeping, so what is kept is a
 * prefix of the stream. */
static void keep_choice_event(cb_client_stream *s, const char *data, size_t len) {
  size_t cap = s->params.max_choice_event_bytes;
  if (!cap || s->choice_events_full) return;
  if (len >= cap - s->choice_events.len) {
    s->choice_events_full = 1;
    return;
  }
  cb_buf_append(&s->choice_events, data, len);
  cb_buf_append_char(&s->choice_events, '\n');
}

static void on_event(cb_client_stream *s, const cb_client_sse_item *it, uint64_t now_ns) {
  char ex[EXCERPT_MAX + 4];
  int error_type = it->event_len == 5 && memcmp(it->event, "error", 5) == 0;
  if (!it->has_data) {
    /* A typed event without data: only `event: error` means something to us. */
    if (error_type) {
      s->events++;
      s->error_events++;
      if (!s->first_event_ns) s->first_event_ns = now_ns;
      set_errorf(s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, now_ns, "event: error (no data)");
    }
    return;
  }
  s->events++;
  if (!s->first_event_ns) s->first_event_ns = now_ns;
  if (s->saw_done) s->events_after_done++;
  cb_client_chunk c;
  cb_client_chunk_parse(s->params.api, it->data, it->len, &s->scratch, &c);
  if (c.via_fallback) s->fallback_chunks++;
  if (error_type) {
    s->error_events++;
    if (c.kind == CB_CLIENT_CHUNK_ERROR && c.error_message.len)
      set_errorf(s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, now_ns, "event: error: %s",
                 excerpt(ex, c.error_message.ptr, c.error_message.len));
    else
      set_errorf(s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, now_ns, "event: error: %s",
                 excerpt(ex, it->data, it->len));
    if (c.kind != CB_CLIENT_CHUNK_DATA && c.kind != CB_CLIENT_CHUNK_ERROR) return;
  }
  switch (c.kind) {
    case CB_CLIENT_CHUNK_DONE:
      if (!s->saw_done) {
        s->saw_done = 1;
        s->done_ns = now_ns;
      }
      return;
    case CB_CLIENT_CHUNK_INVALID_JSON:
      s->invalid_json_events++;
      set_errorf(s, CB_CLIENT_ERR_INVALID_JSON, now_ns, "event %llu: %.*s: %s",
                 (unsigned long long)s->events, (int)c.detail.len, c.detail.ptr,
                 excerpt(ex, it->data, it->len));
      return;
    case CB_CLIENT_CHUNK_ERROR:
      if (!error_type) {
        s->error_events++;
        set_errorf(s, CB_CLIENT_ERR_SERVER_ERROR_EVENT, now_ns, "%s",
                   c.error_message.len ? excerpt(ex, c.error_message.ptr, c.error_message.len)
                                       : "error object without a message");
      }
      break;
    case CB_CLIENT_CHUNK_DATA:
      break;
  }
  if (c.n_choices > 0) keep_choice_event(s, it->data, it->len);
  on_chunk(s, &c, now_ns);
  if (s->params.max_text_bytes)
    for (uint32_t i = 0; i < c.n_detailed; i++)
      if (c.choice[i].tool_calls && is_choice0(&c, i)) {
        cb_client_tool_calls_add_chunk(&s->tool_calls, it->data, it->len);
        break;
      }
}

static void on_result(cb_client_stream *s, cb_client_sse_result r, const cb_client_sse_item *it,
                      uint64_t now_ns) {
  char ex[EXCERPT_MAX + 4];
  switch (r) {
    case CB_CLIENT_SSE_EVENT:
      on_event(s, it, now_ns);
      break;
    case CB_CLIENT_SSE_COMMENT:
      s->comments++;
      break;
    case CB_CLIENT_SSE_MALFORMED:
      s->malformed_lines++;
      set_errorf(s, CB_CLIENT_ERR_MALFORMED_SSE, now_ns, "line is not an SSE field: %s",
                 excerpt(ex, it->data, it->len));
      break;
    case CB_CLIENT_SSE_ERROR:
      set_errorf(s, CB_CLIENT_ERR_MALFORMED_SSE, now_ns, "%s (line %llu)",
                 s->sse.error_msg ? s->sse.error_msg : "SSE error",
                 (unsigned long long)s->sse.lines + 1);
      break;
    case CB_CLIENT_SSE_NEED_MORE:
    case CB_CLIENT_SSE_END:
      break;
  }
}

/* ---- feed / finish ----------------------------------------------------------------- */

void cb_client_stream_feed(cb_client_stream *s, const char *data, size_t len,
                           uint64_t now_ns) {
  if (s->finished || len == 0) return;
  /* Times within a response never go backwards, whatever the transport's clock did
   * (kernel stamps of coalesced reads may be a few ns out of order). */
  if (now_ns < s->last_byte_ns) now_ns = s->last_byte_ns;
  if (!s->first_byte_ns) s->first_byte_ns = now_ns;
  s->last_byte_ns = now_ns;
  size_t off = 0;
  while (off < len) {
    size_t used;
    cb_client_sse_item it;
    cb_client_sse_result r = cb_client_sse_feed(&s->sse, data + off, len - off, &used, &it);
    off += used;
    if (r == CB_CLIENT_SSE_NEED_MORE) break;
    on_result(s, r, &it, now_ns);
    if (r == CB_CLIENT_SSE_ERROR || r == CB_CLIENT_SSE_END) break;
  }
}

void cb_client_stream_finish(cb_client_stream *s, uint64_t now_ns) {
  if (s->finished) return;
  cb_client_sse_item it;
  cb_client_sse_result r;
  /* What finish() delivers was complete when its last byte came, not at EOF. */
  uint64_t t = s->last_byte_ns ? s->last_byte_ns : now_ns;
  while ((r = cb_client_sse_finish(&s->sse, &it)) != CB_CLIENT_SSE_END) on_result(s, r, &it, t);
  s->finished = 1;
  s->end_ns = now_ns;
  if (s->has_usage && s->usage.completion_tokens >= 0) {
    s->output_tokens = (uint64_t)s->usage.completion_tokens;
    s->output_tokens_source = CB_CLIENT_TOKENS_USAGE;
  } else if (s->content_chunks) {
    s->output_tokens = s->counted_tokens;
    s->output_tokens_source = s->params.count_tokens ? CB_CLIENT_TOKENS_TOKENIZER
                                                     : CB_CLIENT_TOKENS_CHUNKS;
  }
  if (!s->saw_done && !s->finish_reason[0])
    set_errorf(s, CB_CLIENT_ERR_STREAM_CUT, now_ns,
               "the stream ended after %llu bytes and %llu events without [DONE] or a "
               "finish reason",
               (unsigned long long)s->sse.bytes, (unsigned long long)s->events);
}

/* ---- readers --------------------------------------------------------------------- */

uint32_t cb_client_stream_chunk_tokens(const cb_client_stream *s, size_t i) {
  if (i >= s->content_kept) return 0;
  return s->tokens_stored ? s->content_tokens[i] : 1;
}

size_t cb_client_stream_choices_times(const cb_client_stream *s, uint64_t *out, size_t max) {
  size_t a = 0, b = 0, n = 0;
  while (a < s->content_kept || b < s->other_kept) {
    uint64_t t;
    if (b >= s->other_kept || (a < s->content_kept && s->content_ns[a] <= s->other_choices_ns[b]))
      t = s->content_ns[a++];
    else
      t = s->other_choices_ns[b++];
    if (n < max) out[n] = t;
    n++;
  }
  return n;
}
