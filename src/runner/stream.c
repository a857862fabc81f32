/*
 * stream.c - one response read into its record. The status line and headers come
 * first (status, x-request-id, content type); a 2xx event stream goes through the
 * client module's accumulator, a 2xx JSON body through its response parser, and any
 * other status keeps a capped copy of the body for the error message. At the end the
 * transport's result and what the stream saw decide the error class.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "calibench/clock.h"
#include "calibench/secret.h"
#include "calibench/utf8.h"
#include "runner/runner_internal.h"

#define ERROR_BODY_MAX 65536

/* The runner's counter takes size_t; the client's returns uint64_t. */
typedef struct count_ctx {
  cb_runner_count_fn fn;
  void *ctx;
} count_ctx;

struct cb__runner_stream {
  cb_client_stream acc;    /* the event stream */
  cb_buf body;             /* non-stream or error bodies (capped) */
  cb_client_api api;
  int is_stream;           /* content type text/event-stream (or none given) */
  size_t max_text;
  size_t max_events;       /* raw events kept for the record (choice_events); 0: none */
  size_t body_max;         /* bytes of a body that is not a stream kept */
  count_ctx counter;
  const cb_secrets *secrets; /* the run's, to redact */
  char location[512];        /* a redirect's Location */
  char content_type[64];     /* of the last response */
};

static uint64_t count_adapter(void *ctx, const char *text, size_t len) {
  const count_ctx *c = ctx;
  return c->fn(c->ctx, text, len);
}

void cb__runner_stream_begin(cb__runner_req *q, const cb_runner_params *p,
                             const cb_secrets *secrets) {
  struct cb__runner_stream *s = q->stream;
  if (!s) {
    s = cb_calloc(1, sizeof *s);
    q->stream = s;
  }
  s->api = p->chat ? CB_CLIENT_API_CHAT : CB_CLIENT_API_COMPLETIONS;
  cb_client_stream_params sp;
  cb_client_stream_default_params(&sp);
  sp.api = s->api;
  sp.max_text_bytes = p->max_output_text;
  sp.max_choice_event_bytes = p->max_choice_events;
  if (p->count_tokens) {
    s->counter = (count_ctx){.fn = p->count_tokens, .ctx = p->count_ctx};
    sp.count_tokens = count_adapter;
    sp.count_ctx = &s->counter;
  }
  cb_client_stream_init(&s->acc, &sp);
  /* a whole (not streamed) answer is kept as its events when they are asked for:
   * a prompt_logprobs answer outgrows an error body's cap */
  s->body_max = p->max_choice_events > ERROR_BODY_MAX ? p->max_choice_events : ERROR_BODY_MAX;
  cb_buf_init(&s->body, s->body_max);
  s->is_stream = 1;
  s->location[0] = s->content_type[0] = '\0';
  s->max_text = p->max_output_text;
  s->max_events = p->max_choice_events;
  s->secrets = secrets;
  q->http_status = 0;
  q->has_retry_after = 0;
  q->retry_after_ns = 0;
}

void cb__runner_stream_free(cb__runner_req *q) {
  struct cb__runner_stream *s = q->stream;
  if (!s) return;
  cb_client_stream_free(&s->acc);
  cb_buf_free(&s->body);
  cb_free(s);
  q->stream = NULL;
}

/* Trimmed header value if the line is "name: value" for `name`, else NULL. */
static const char *header_value(const char *line, size_t len, const char *name, size_t *vlen) {
  size_t n = strlen(name);
  if (len <= n || line[n] != ':' || strncasecmp(line, name, n)) return NULL;
  const char *v = line + n + 1;
  const char *end = line + len;
  while (v < end && (*v == ' ' || *v == '\t')) v++;
  while (end > v && isspace((unsigned char)end[-1])) end--;
  *vlen = (size_t)(end - v);
  return v;
}

void cb__runner_stream_header(cb__runner_req *q, const char *line, size_t len, uint64_t now_ns) {
  struct cb__runner_stream *s = q->stream;
  if (!q->rec.first_byte_ns) q->rec.first_byte_ns = now_ns;
  if (len > 5 && !strncmp(line, "HTTP/", 5)) {
    /* A new status line (after a 1xx, or a redirect): the last one counts. */
    const char *sp = memchr(line, ' ', len);
    q->http_status = sp ? atoi(sp + 1) : 0;
    s->is_stream = 1;
    s->location[0] = s->content_type[0] = '\0';
    return;
  }
  size_t vlen;
  const char *v = header_value(line, len, "x-request-id", &vlen);
  if (v) {
    snprintf(q->rec.server_request_id, sizeof q->rec.server_request_id, "%.*s", (int)vlen, v);
    return;
  }
  v = header_value(line, len, "location", &vlen);
  if (v) {
    snprintf(s->location, sizeof s->location, "%.*s", (int)vlen, v);
    return;
  }
  v = header_value(line, len, "content-type", &vlen);
  if (v) {
    s->is_stream = vlen >= 17 && !strncasecmp(v, "text/event-stream", 17);
    snprintf(s->content_type, sizeof s->content_type, "%.*s", (int)vlen, v);
    return;
  }
  v = header_value(line, len, "retry-after", &vlen);
  if (v) q->has_retry_after = cb__runner_retry_after_ns(v, vlen, cb_clock_wall_ns(), &q->retry_after_ns);
}

void cb__runner_stream_body(cb__runner_req *q, const char *data, size_t len, uint64_t now_ns) {
  struct cb__runner_stream *s = q->stream;
  if (q->http_status >= 200 && q->http_status < 300 && s->is_stream) {
    cb_client_stream_feed(&s->acc, data, len, now_ns);
  } else {
    if (!s->acc.first_byte_ns) s->acc.first_byte_ns = now_ns;
    s->acc.last_byte_ns = now_ns;
    size_t room = s->body_max - s->body.len;
    cb_buf_append(&s->body, data, len < room ? len : room);
  }
}

int cb__runner_stream_retryable(const cb__runner_req *q) {
  const char *c = q->rec.error_class;
  return !strcmp(c, "connect") || (!strcmp(c, "http_status") &&
                                   (q->http_status == 429 || q->http_status >= 500));
}

static void set_error(cb_record *r, const char *cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_error(cb_record *r, const char *cls, const char *fmt, ...) {
  if (r->error_class[0]) return; /* the first failure wins */
  snprintf(r->error_class, sizeof r->error_class, "%s", cls);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error_message, sizeof r->error_message, fmt, ap);
  va_end(ap);
}

static cb_token_source source_of(cb_client_token_source s) {
  switch (s) {
    case CB_CLIENT_TOKENS_USAGE: return CB_TOKENS_USAGE;
    case CB_CLIENT_TOKENS_TOKENIZER: return CB_TOKENS_TOKENIZER;
    case CB_CLIENT_TOKENS_CHUNKS: return CB_TOKENS_CHUNKS;
    default: return CB_TOKENS_UNKNOWN;
  }
}

static uint64_t rel(uint64_t t, uint64_t origin) { return t > origin ? t - origin : 0; }

static void copy_usage(cb_record *r, const cb_client_usage *u, int has) {
  if (!has) return;
  if (u->prompt_tokens >= 0) {
    r->prompt_tokens = u->prompt_tokens;
    r->prompt_source = CB_TOKENS_USAGE;
  }
  if (u->cached_tokens >= 0) r->cached_tokens = u->cached_tokens;
  if (u->image_tokens >= 0) r->image_tokens = u->image_tokens;
}

static void set_tool_calls(cb_record *r, const cb_client_tool_calls *t) {
  if (!t->n) return;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_client_tool_calls_json(t, &b);
  r->tool_calls = cb_strndup(b.data, b.len);
  cb_buf_free(&b);
}

/* A 2xx event stream: times, chunks, tokens, text, and the stream's own verdict. */
static void from_stream(cb_record *r, struct cb__runner_stream *s, uint64_t now_ns) {
  cb_client_stream *a = &s->acc;
  cb_client_stream_finish(a, now_ns);
  r->first_chunk_ns = a->first_event_ns;
  r->first_choices_ns = a->first_choices_ns;
  r->first_content_ns = a->first_content_ns;
  r->last_content_ns = a->last_content_ns;
  if (a->last_byte_ns) r->end_ns = a->last_byte_ns;
  r->n_chunks = a->content_kept;
  r->chunks_dropped = a->content_dropped;
  if (r->n_chunks) {
    r->chunk_ns = cb_reallocarray(NULL, r->n_chunks, sizeof *r->chunk_ns);
    r->chunk_tokens = cb_reallocarray(NULL, r->n_chunks, sizeof *r->chunk_tokens);
    memcpy(r->chunk_ns, a->content_ns, r->n_chunks * sizeof *r->chunk_ns);
    for (size_t i = 0; i < r->n_chunks; i++) r->chunk_tokens[i] = cb_client_stream_chunk_tokens(a, i);
  }
  r->output_tokens = (int64_t)a->output_tokens;
  r->output_source = source_of(a->output_tokens_source);
  copy_usage(r, &a->usage, a->has_usage);
  snprintf(r->finish_reason, sizeof r->finish_reason, "%s", a->finish_reason);
  if (a->text.len) r->output_text = cb_strndup(a->text.data, a->text.len);
  r->output_text_cut = a->text_truncated;
  if (a->choice_events.len)
    r->choice_events = cb_strndup(a->choice_events.data, a->choice_events.len);
  set_tool_calls(r, &a->tool_calls);
  if (a->error != CB_CLIENT_ERR_NONE)
    set_error(r, cb_client_error_class_name(a->error), "%s",
              a->error_msg ? a->error_msg : cb_client_error_class_desc(a->error));
}

/* A 2xx JSON body (a server that did not stream). */
static void from_body(cb_record *r, struct cb__runner_stream *s) {
  cb_client_response resp;
  cb_buf text;
  cb_buf_init(&text, s->max_text);
  cb_client_response_parse(s->api, s->body.data ? s->body.data : "", s->body.len, &resp, &text);
  if (resp.error != CB_CLIENT_ERR_NONE) {
    set_error(r, cb_client_error_class_name(resp.error), "%s", resp.error_message);
  } else {
    /* No chunks: the whole answer arrived at once. */
    r->first_chunk_ns = r->first_choices_ns = r->first_content_ns = r->last_content_ns = r->end_ns;
    if (resp.has_usage && resp.usage.completion_tokens >= 0) {
      r->output_tokens = resp.usage.completion_tokens;
      r->output_source = CB_TOKENS_USAGE;
    }
    copy_usage(r, &resp.usage, resp.has_usage);
    snprintf(r->finish_reason, sizeof r->finish_reason, "%s", resp.finish_reason);
    if (text.len) r->output_text = cb_strndup(text.data, text.len);
    r->output_text_cut = resp.text_truncated;
    if (s->max_events && s->body.len && s->body.len < s->max_events)
      r->choice_events = cb_strndup(s->body.data, s->body.len);
    if (resp.has_tool_calls) {
      cb_client_tool_calls calls;
      cb_client_tool_calls_init(&calls, s->max_text);
      cb_client_tool_calls_add_body(&calls, s->body.data ? s->body.data : "", s->body.len);
      set_tool_calls(r, &calls);
      cb_client_tool_calls_free(&calls);
    }
  }
  cb_buf_free(&text);
}

/* A kept text (owned, may be NULL) with the secrets redacted. */
static void redact_owned(const cb_secrets *sec, char **text) {
  if (!*text) return;
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_secrets_redact(sec, *text, strlen(*text), &b);
  cb_free(*text);
  *text = cb_strndup(b.data ? b.data : "", b.len);
  cb_buf_free(&b);
}

/* What the server said may repeat what it was sent: the API key, a --header value,
 * the URL's password. They are redacted from every server text the record keeps
 * (tool_calls is JSON text: "[REDACTED]" keeps it valid; a secret with a quote or a
 * backslash in it would stand there escaped, as secrets of keys and headers do not). */
static void redact_secrets(cb_record *r, const cb_secrets *sec) {
  if (!sec->n) return;
  cb_secrets_redact_str(sec, r->error_message, sizeof r->error_message);
  cb_secrets_redact_str(sec, r->server_request_id, sizeof r->server_request_id);
  redact_owned(sec, &r->output_text);
  redact_owned(sec, &r->choice_events);
  redact_owned(sec, &r->tool_calls);
}

/* A status other than 2xx, said with what the server said: the message of an OpenAI
 * error body; a redirect's target (redirects are not followed: a POST would not be
 * re-sent as is, and a benchmark should measure the final address); else the start
 * of whatever body came (an HTML page from a proxy), never a JSON parser's complaint
 * about it. */
static void status_error(cb_record *r, struct cb__runner_stream *s, int status) {
  if (status >= 300 && status < 400) {
    if (s->location[0])
      set_error(r, "http_status", "HTTP %d: a redirect to %s; redirects are not followed, give "
                "--url the address it leads to", status, s->location);
    else
      set_error(r, "http_status", "HTTP %d: a redirect without a Location; redirects are not "
                "followed", status);
    return;
  }
  const char *body = s->body.data ? s->body.data : "";
  cb_client_response resp;
  cb_client_response_parse(s->api, body, s->body.len, &resp, NULL);
  if (resp.error == CB_CLIENT_ERR_SERVER_ERROR_EVENT && resp.error_message[0]) {
    set_error(r, "http_status", "HTTP %d: %s", status, resp.error_message);
    return;
  }
  /* Not an error object: its first bytes, blank runs squeezed to one space. */
  char shown[240];
  size_t n = 0;
  for (size_t i = 0; i < s->body.len && n + 1 < sizeof shown; i++) {
    char c = isspace((unsigned char)body[i]) ? ' ' : body[i];
    if (c == ' ' && (n == 0 || shown[n - 1] == ' ')) continue;
    shown[n++] = c;
  }
  n = cb_utf8_cut(shown, n, n);
  shown[n] = '\0';
  if (!n)
    set_error(r, "http_status", "HTTP %d with an empty body", status);
  else
    set_error(r, "http_status", "HTTP %d (%s, not an OpenAI error body): %s%s", status,
              s->content_type[0] ? s->content_type : "no content type", shown,
              s->body.len > n ? " ..." : "");
}

void cb__runner_stream_end(cb__runner_req *q, cb__runner_result res, const char *msg,
                           uint64_t now_ns, uint64_t origin_ns) {
  struct cb__runner_stream *s = q->stream;
  cb_record *r = &q->rec;
  r->http_status = q->http_status;
  r->end_ns = now_ns;
  if (!msg) msg = "the transfer failed";
  int ok_status = q->http_status >= 200 && q->http_status < 300;
  if (res == CB__RUNNER_ABORTED) {
    set_error(r, "interrupted", "%s", msg);
  } else if (res == CB__RUNNER_TIMEOUT) {
    set_error(r, "timeout", "%s", msg);
  } else if (res != CB__RUNNER_OK && !r->first_byte_ns) {
    set_error(r, "connect", "%s", msg);
  }
  if (ok_status && s->is_stream) {
    /* The transport broke mid-response: unless the stream had ended properly
     * ([DONE] or a finish reason) or had already failed, it was cut - and the
     * half event it was cut in is the cut, not invalid JSON. */
    if (res != CB__RUNNER_OK && s->acc.error == CB_CLIENT_ERR_NONE && !s->acc.saw_done &&
        !s->acc.finish_reason[0])
      set_error(r, "stream_cut", "%s", msg);
    from_stream(r, s, now_ns);
  } else if (ok_status && res == CB__RUNNER_OK) {
    from_body(r, s);
  } else if (q->http_status >= 200 && !ok_status) { /* a 1xx is no answer yet */
    status_error(r, s, q->http_status);
  } else if (res != CB__RUNNER_OK) {
    set_error(r, "stream_cut", "%s", msg);
  }
  redact_secrets(r, s->secrets);
  /* Record times relative to the run's origin. */
  uint64_t *times[] = {&r->scheduled_ns, &r->sent_ns, &r->first_byte_ns, &r->first_chunk_ns,
                       &r->first_choices_ns, &r->first_content_ns, &r->last_content_ns, &r->end_ns};
  for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
    if (*times[i]) *times[i] = rel(*times[i], origin_ns);
  for (size_t i = 0; i < r->n_chunks; i++) r->chunk_ns[i] = rel(r->chunk_ns[i], origin_ns);
}
