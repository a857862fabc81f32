/*
 * prom.c - Prometheus text exposition parsing and the server-quantity name table.
 */
#include "calibench/prom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the text format ---------------------------------------------------------------- */

static int name_char(char c, int first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

/* Parse "value [timestamp]" at p..end. */
static int parse_value(const char *p, const char *end, double *out) {
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  char buf[64];
  size_t n = 0;
  while (p < end && *p != ' ' && *p != '\t' && n < sizeof buf - 1) buf[n++] = *p++;
  buf[n] = '\0';
  if (!n) return -1;
  if (!strcasecmp(buf, "nan")) *out = NAN;
  else if (!strcasecmp(buf, "+inf") || !strcasecmp(buf, "inf")) *out = INFINITY;
  else if (!strcasecmp(buf, "-inf")) *out = -INFINITY;
  else {
    char *e;
    *out = strtod(buf, &e);
    if (*e) return -1;
  }
  return 0;
}

cb_status cb_prom_parse(const char *text, size_t len, cb_prom_sample_fn fn, void *ctx,
                        cb_error *err) {
  long line = 0;
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    line++;
    const char *q = p;
    while (q < le && (*q == ' ' || *q == '\t')) q++;
    if (q < le && *q != '#' && *q != '\r') {
      cb_prom_sample s = {.name = q, .labels = ""};
      if (!name_char(*q, 1))
        return cb_error_at(err, CB_ERR_PARSE, "/metrics", line, (long)(q - p) + 1,
                           "expected a metric name");
      while (q < le && name_char(*q, 0)) q++;
      s.name_len = (size_t)(q - s.name);
      if (q < le && *q == '{') {
        /* Labels end at the first '}' outside a quoted value. */
        const char *l = ++q;
        int quoted = 0;
        while (q < le && (quoted || *q != '}')) {
          if (*q == '\\' && quoted && q + 1 < le) q++;
          else if (*q == '"') quoted = !quoted;
          q++;
        }
        if (q >= le)
          return cb_error_at(err, CB_ERR_PARSE, "/metrics", line, 0, "unterminated label set");
        s.labels = l;
        s.labels_len = (size_t)(q - l);
        q++;
      }
      const char *ve = le;
      if (ve > q && ve[-1] == '\r') ve--;
      if (parse_value(q, ve, &s.value))
        return cb_error_at(err, CB_ERR_PARSE, "/metrics", line, (long)(q - p) + 1,
                           "expected a sample value after '%.*s'", (int)s.name_len, s.name);
      if (fn(ctx, &s)) return CB_OK;
    }
    p = nl ? nl + 1 : end;
  }
  return CB_OK;
}

/* ---- server quantities --------------------------------------------------------------- */

enum { Q_RUNNING, Q_WAITING, Q_KV, Q_PQ, Q_PH, Q_PHR, Q_PREEMPT, Q_PROMPT, Q_GEN, Q_COUNT };

/* For each quantity, names in order of preference. */
static const struct {
  int q;
  const char *name;
  const char *dialect;
  int rank; /* lower wins within the quantity */
} names[] = {
    {Q_RUNNING, "vllm:num_requests_running", "vllm", 0},
    {Q_RUNNING, "sglang:num_running_reqs", "sglang", 0},
    {Q_RUNNING, "tgi_batch_current_size", "tgi", 0},
    {Q_WAITING, "vllm:num_requests_waiting", "vllm", 0},
    {Q_WAITING, "sglang:num_queue_reqs", "sglang", 0},
    {Q_WAITING, "tgi_queue_size", "tgi", 0},
    {Q_KV, "vllm:kv_cache_usage_perc", "vllm", 0},
    {Q_KV, "vllm:gpu_cache_usage_perc", "vllm", 1},
    {Q_KV, "sglang:token_usage", "sglang", 0},
    {Q_PQ, "vllm:prefix_cache_queries_total", "vllm", 0},
    {Q_PQ, "vllm:gpu_prefix_cache_queries_total", "vllm", 1},
    {Q_PH, "vllm:prefix_cache_hits_total", "vllm", 0},
    {Q_PH, "vllm:gpu_prefix_cache_hits_total", "vllm", 1},
    {Q_PHR, "sglang:cache_hit_rate", "sglang", 0},
    {Q_PHR, "vllm:gpu_prefix_cache_hit_rate", "vllm", 1},
    {Q_PREEMPT, "vllm:num_preemptions_total", "vllm", 0},
    {Q_PROMPT, "vllm:prompt_tokens_total", "vllm", 0},
    {Q_PROMPT, "sglang:prompt_tokens_total", "sglang", 0},
    {Q_PROMPT, "tgi_request_input_length_sum", "tgi", 1},
    {Q_GEN, "vllm:generation_tokens_total", "vllm", 0},
    {Q_GEN, "sglang:generation_tokens_total", "sglang", 0},
    {Q_GEN, "tgi_request_generated_tokens_sum", "tgi", 1},
};
#define N_NAMES (sizeof names / sizeof names[0])

typedef struct extract_ctx {
  double sum[N_NAMES];
  int seen[N_NAMES];
} extract_ctx;

static int on_sample(void *ctx, const cb_prom_sample *s) {
  extract_ctx *x = ctx;
  for (size_t i = 0; i < N_NAMES; i++) {
    if (strlen(names[i].name) != s->name_len || memcmp(names[i].name, s->name, s->name_len)) continue;
    /* vLLM V0 reports -1 for a hit rate it has no data for. */
    if (names[i].q == Q_PHR && s->value < 0) continue;
    x->sum[i] += s->value;
    x->seen[i] = 1;
  }
  return 0;
}

cb_status cb_prom_server_extract(const char *text, size_t len, cb_prom_server *out, cb_error *err) {
  extract_ctx x;
  memset(&x, 0, sizeof x);
  cb_status st = cb_prom_parse(text, len, on_sample, &x, err);
  double v[Q_COUNT];
  int best[Q_COUNT];
  for (int q = 0; q < Q_COUNT; q++) {
    v[q] = NAN;
    best[q] = 1 << 30;
  }
  memset(out->dialect, 0, sizeof out->dialect);
  for (size_t i = 0; i < N_NAMES; i++) {
    int q = names[i].q;
    if (!x.seen[i] || names[i].rank >= best[q]) continue;
    v[q] = x.sum[i];
    best[q] = names[i].rank;
    if (!out->dialect[0]) snprintf(out->dialect, sizeof out->dialect, "%s", names[i].dialect);
  }
  out->running = v[Q_RUNNING];
  out->waiting = v[Q_WAITING];
  out->kv_usage = v[Q_KV];
  out->prefix_queries = v[Q_PQ];
  out->prefix_hits = v[Q_PH];
  out->prefix_hit_rate = v[Q_PHR];
  out->preemptions = v[Q_PREEMPT];
  out->prompt_tokens = v[Q_PROMPT];
  out->generation_tokens = v[Q_GEN];
  return st;
}
