/*
 * record.c - one request's record: life cycle, and its JSON line in records.jsonl.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/results.h"
#include "record_drop.h"

static const char *const source_names[] = {"unknown", "usage", "tokenizer", "chunks", "dataset"};

const char *cb_token_source_name(cb_token_source s) {
  return (unsigned)s < sizeof source_names / sizeof source_names[0] ? source_names[s] : "unknown";
}

void cb_record_init(cb_record *r) {
  memset(r, 0, sizeof *r);
  r->prompt_tokens = -1;
  r->output_tokens = -1;
  r->cached_tokens = -1;
  r->image_tokens = -1;
}

void cb_record_free(cb_record *r) {
  cb_free(r->chunk_ns);
  cb_free(r->chunk_tokens);
  cb_free(r->output_text);
  cb_free(r->choice_events);
  cb_free(r->tool_calls);
  cb_free(r->attempts);
  cb_record_init(r);
}

int cb_record_ok(const cb_record *r) { return r->error_class[0] == '\0'; }

const char *cb_record_times_invalid(const cb_record *r) {
  if (r->end_ns < r->sent_ns) return "end_ns is before sent_ns";
  if (r->first_content_ns && (r->first_content_ns < r->sent_ns || r->first_content_ns > r->end_ns))
    return "first_content_ns is outside [sent_ns, end_ns]";
  /* Every summary and report pass asks this of every record, and it reads every chunk
   * time: in order and within the first and last means all are within, and a loop
   * without an early exit compiles to vector compares. Only a bad record takes the
   * walk below, which names its first fault. */
  size_t n = r->chunk_ns ? r->n_chunks : 0, back = 0; /* dropped: checked before */
  for (size_t i = 1; i < n; i++) back |= r->chunk_ns[i] < r->chunk_ns[i - 1];
  if (!back && (!n || (r->chunk_ns[0] >= r->sent_ns && r->chunk_ns[n - 1] <= r->end_ns))) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (r->chunk_ns[i] < r->sent_ns || r->chunk_ns[i] > r->end_ns)
      return "a chunk time is outside [sent_ns, end_ns]";
    if (i && r->chunk_ns[i] < r->chunk_ns[i - 1]) return "chunk_ns goes backwards";
  }
  return NULL;
}

static void key_str(cb_buf *out, const char *key, const char *value) {
  cb_buf_appendf(out, ",\"%s\":\"", key);
  cb_buf_append_json_string(out, value, strlen(value));
  cb_buf_append_char(out, '"');
}

/* Decimal digits of v. Records hold one number per output token (chunk_ns): through
 * printf these were a tenth of `sim run`'s time on 256-token outputs. */
static void append_u64(cb_buf *out, uint64_t v) {
  char d[20];
  size_t n = sizeof d;
  do {
    d[--n] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  cb_buf_append(out, d + n, sizeof d - n);
}

static void key_u64(cb_buf *out, const char *key, uint64_t v) {
  cb_buf_append_str(out, ",\"");
  cb_buf_append_str(out, key);
  cb_buf_append_str(out, "\":");
  append_u64(out, v);
}

static void key_i64(cb_buf *out, const char *key, int64_t v) {
  if (v < 0) cb_buf_appendf(out, ",\"%s\":null", key);
  else cb_buf_appendf(out, ",\"%s\":%lld", key, (long long)v);
}

void cb_record_write_json(const cb_record *r, cb_buf *out) {
  cb_buf_appendf(out, "{\"index\":%llu", (unsigned long long)r->index);
  key_str(out, "request_id", r->request_id);
  key_str(out, "server_request_id", r->server_request_id);
  key_str(out, "class", r->class_name);
  cb_buf_appendf(out, ",\"warmup\":%s", r->warmup ? "true" : "false");
  key_u64(out, "scheduled_ns", r->scheduled_ns);
  if (r->has_target_rate) /* ramped runs only */
    cb_buf_appendf(out, ",\"target_rate\":%.9g", r->target_rate);
  if (r->has_session) /* live sessions only */
    cb_buf_appendf(out, ",\"session\":%llu,\"turn\":%u", (unsigned long long)r->session, r->turn);
  key_u64(out, "sent_ns", r->sent_ns);
  key_u64(out, "first_byte_ns", r->first_byte_ns);
  key_u64(out, "first_chunk_ns", r->first_chunk_ns);
  key_u64(out, "first_choices_ns", r->first_choices_ns);
  key_u64(out, "first_content_ns", r->first_content_ns);
  key_u64(out, "last_content_ns", r->last_content_ns);
  key_u64(out, "end_ns", r->end_ns);
  key_i64(out, "prompt_tokens", r->prompt_tokens);
  key_str(out, "prompt_source", cb_token_source_name(r->prompt_source));
  key_i64(out, "output_tokens", r->output_tokens);
  key_str(out, "output_source", cb_token_source_name(r->output_source));
  key_i64(out, "cached_tokens", r->cached_tokens);
  cb_buf_appendf(out, ",\"http_status\":%d", r->http_status);
  if (cb_record_ok(r)) {
    cb_buf_append_str(out, ",\"error\":null");
  } else {
    cb_buf_append_str(out, ",\"error\":{\"class\":\"");
    cb_buf_append_json_string(out, r->error_class, strlen(r->error_class));
    cb_buf_append_str(out, "\",\"message\":\"");
    cb_buf_append_json_string(out, r->error_message, strlen(r->error_message));
    cb_buf_append_str(out, "\"}");
  }
  key_str(out, "finish_reason", r->finish_reason);
  cb_buf_appendf(out, ",\"retries\":%d", r->retries);
  if (r->n_attempts) { /* each retried attempt's outcome, the last attempt's is above */
    cb_buf_append_str(out, ",\"attempts\":[");
    for (size_t i = 0; i < r->n_attempts; i++) {
      const cb_record_attempt *a = &r->attempts[i];
      cb_buf_appendf(out, "%s{\"http_status\":%d,\"error\":\"", i ? "," : "", a->http_status);
      cb_buf_append_json_string(out, a->error_class, strlen(a->error_class));
      cb_buf_appendf(out, "\",\"wait_ms\":%.3f}", (double)a->wait_ns / 1e6);
    }
    cb_buf_append_char(out, ']');
  }
  /* Chunk times relative to the send keep the numbers short. */
  cb_buf_append_str(out, ",\"chunk_ns\":["); /* none once a set dropped them: write first */
  for (size_t i = 0; r->chunk_ns && i < r->n_chunks; i++) {
    if (i) cb_buf_append_char(out, ',');
    append_u64(out, r->chunk_ns[i] > r->sent_ns ? r->chunk_ns[i] - r->sent_ns : 0);
  }
  cb_buf_append_char(out, ']');
  if (r->image_bytes)
    cb_buf_appendf(out, ",\"image_bytes\":%llu", (unsigned long long)r->image_bytes);
  if (r->image_tokens >= 0)
    cb_buf_appendf(out, ",\"image_tokens\":%lld", (long long)r->image_tokens);
  if (r->chunks_dropped)
    cb_buf_appendf(out, ",\"chunk_ns_dropped\":%llu", (unsigned long long)r->chunks_dropped);
  int all_one = 1;
  for (size_t i = 0; i < r->n_chunks && all_one; i++) all_one = cb_record_chunk_tokens(r, i) == 1;
  if (!all_one) {
    cb_buf_append_str(out, ",\"chunk_tokens\":[");
    for (size_t i = 0; i < r->n_chunks; i++)
      cb_buf_appendf(out, i ? ",%u" : "%u", cb_record_chunk_tokens(r, i));
    cb_buf_append_char(out, ']');
  }
  if (r->output_text) key_str(out, "output_text", r->output_text);
  if (r->output_text_cut) cb_buf_append_str(out, ",\"output_text_cut\":true");
  if (r->tool_calls) { /* the client's own compact JSON, written as it is */
    cb_buf_append_str(out, ",\"tool_calls\":");
    cb_buf_append_str(out, r->tool_calls);
  }
  cb_buf_append_str(out, "}\n");
}

/* ---- sets ---------------------------------------------------------------------------- */

void cb_record_set_init(cb_record_set *s) { memset(s, 0, sizeof *s); }

void cb_record_set_free(cb_record_set *s) {
  for (size_t i = 0; i < s->count; i++) cb_record_free(&s->items[i]);
  cb_free(s->items);
  cb__record_drop_free(s->drop);
  memset(s, 0, sizeof *s);
}

void cb_record_set_push(cb_record_set *s, cb_record *r) {
  if (s->count == s->alloc) {
    s->alloc = s->alloc ? 2 * s->alloc : 64;
    s->items = cb_reallocarray(s->items, s->alloc, sizeof *s->items);
  }
  s->items[s->count++] = *r;
  cb_record_init(r);
  if (s->drop) cb__record_drop_pushed(s, s->count - 1);
}

size_t cb_record_set_classes(const cb_record_set *set, const char **names, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < set->count; i++) {
    const char *c = set->items[i].class_name;
    size_t j = 0;
    while (j < n && strcmp(names[j], c)) j++;
    if (j == n && n < max) names[n++] = c;
  }
  return n;
}
