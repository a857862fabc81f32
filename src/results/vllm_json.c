/*
 * vllm_json.c - write vLLM `bench serve`'s result keys (vllm/benchmarks/serve.py,
 * listed in docs/results.md) from calibench records, so dashboards that read vLLM's
 * JSON read calibench runs too. vLLM's own definitions are used here, not
 * calibench's: TTFT from the first chunk with non-empty choices (the role-only
 * chunk counts), ITL between consecutive chunks (the first one measured from that
 * chunk), E2EL to the last content chunk, failures left out of every statistic,
 * throughputs over the whole duration including the drain tail, population std and
 * numpy percentiles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/results.h"
#include "calibench/stats.h"

typedef struct vec {
  double *v;
  size_t n, alloc;
} vec;

static void vpush(vec *a, double x) {
  if (a->n == a->alloc) {
    a->alloc = a->alloc ? 2 * a->alloc : 256;
    a->v = cb_reallocarray(a->v, a->alloc, sizeof *a->v);
  }
  a->v[a->n++] = x;
}

static void num(cb_buf *out, const char *key, double v) {
  if (isfinite(v)) cb_buf_appendf(out, ",\"%s\":%.17g", key, v);
  else cb_buf_appendf(out, ",\"%s\":null", key);
}

/* "p99" for integral percentiles, "p99.9" otherwise, as vLLM prints them. */
static void pct_key(double p, const char *metric, char *out, size_t n) {
  if (p == floor(p)) snprintf(out, n, "p%d_%s_ms", (int)p, metric);
  else snprintf(out, n, "p%g_%s_ms", p, metric);
}

/* mean/median/std/percentile keys of one metric, values in seconds -> ms. */
static void stats_keys(cb_buf *out, const char *metric, vec *a, const double *pcts, size_t np) {
  char key[64];
  cb_stats_summary s;
  cb_stats_summarize(a->v, a->n, NULL, &s);
  double *sorted = cb_reallocarray(NULL, a->n ? a->n : 1, sizeof *sorted);
  if (a->n) memcpy(sorted, a->v, a->n * sizeof *sorted);
  cb_stats_sort(sorted, a->n);
  /* vLLM reports 0 for an empty list (np.mean of [] or 0). */
  double scale = 1000.0;
  snprintf(key, sizeof key, "mean_%s_ms", metric);
  num(out, key, a->n ? s.mean * scale : 0);
  snprintf(key, sizeof key, "median_%s_ms", metric);
  num(out, key, a->n ? s.p50 * scale : 0);
  snprintf(key, sizeof key, "std_%s_ms", metric);
  num(out, key, a->n ? s.std * scale : 0);
  for (size_t i = 0; i < np; i++) {
    pct_key(pcts[i], metric, key, sizeof key);
    num(out, key, a->n ? cb_stats_quantile_sorted(sorted, a->n, pcts[i] / 100) * scale : 0);
  }
  cb_free(sorted);
}

static void list(cb_buf *out, const char *key, const vec *a, int integers) {
  cb_buf_appendf(out, ",\"%s\":[", key);
  for (size_t i = 0; i < a->n; i++)
    cb_buf_appendf(out, integers ? (i ? ",%.0f" : "%.0f") : (i ? ",%.9g" : "%.9g"), a->v[i]);
  cb_buf_append_char(out, ']');
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Exact peak of requests in flight: sweep over sorted starts and ends. */
static size_t max_concurrent(const cb_record_set *set) {
  size_t n = 0;
  uint64_t *starts = cb_calloc(set->count + 1, sizeof *starts);
  uint64_t *ends = cb_calloc(set->count + 1, sizeof *ends);
  for (size_t i = 0; i < set->count; i++) {
    if (set->items[i].warmup) continue;
    starts[n] = set->items[i].sent_ns;
    ends[n] = set->items[i].end_ns;
    n++;
  }
  qsort(starts, n, sizeof *starts, cmp_u64);
  qsort(ends, n, sizeof *ends, cmp_u64);
  size_t in = 0, peak = 0, j = 0;
  for (size_t i = 0; i < n; i++) {
    while (j < n && ends[j] <= starts[i]) {
      j++;
      in--;
    }
    in++;
    if (in > peak) peak = in;
  }
  cb_free(starts);
  cb_free(ends);
  return peak;
}

void cb_results_write_vllm_json(const cb_record_set *set, const cb_summary *s,
                                const cb_vllm_export_params *p, cb_buf *out) {
  static const double default_pcts[] = {99};
  const double *pcts = p->percentiles ? p->percentiles : default_pcts;
  size_t np = p->percentiles ? p->n_percentiles : 1;
  /* ttfts lists every request (0 for failures) as vLLM does; statistics use ttft_ok. */
  vec ttft = {0}, ttft_ok = {0}, tpot = {0}, itl = {0}, e2el = {0}, in_lens = {0},
      out_lens = {0};
  size_t completed = 0, failed = 0, num_prompts = 0;
  double in_tokens = 0, out_tokens = 0;
  uint64_t first = UINT64_MAX, last_token = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || cb_record_times_invalid(r)) continue;
    num_prompts++;
    if (!cb_record_ok(r) || !r->first_choices_ns) {
      failed++;
      vpush(&ttft, 0);
      vpush(&out_lens, 0);
      vpush(&in_lens, r->prompt_tokens > 0 ? (double)r->prompt_tokens : 0);
      continue;
    }
    completed++;
    double t = cb_clock_span_ns(r->sent_ns, r->first_choices_ns) / 1e9;
    uint64_t last = r->last_content_ns ? r->last_content_ns : r->end_ns;
    double lat = cb_clock_span_ns(r->sent_ns, last) / 1e9;
    double n_out = r->output_tokens > 0 ? (double)r->output_tokens : (double)r->n_chunks;
    vpush(&ttft, t);
    vpush(&ttft_ok, t);
    vpush(&e2el, lat);
    vpush(&in_lens, r->prompt_tokens > 0 ? (double)r->prompt_tokens : 0);
    vpush(&out_lens, n_out);
    if (n_out > 1) vpush(&tpot, (lat - t) / (n_out - 1));
    uint64_t prev = r->first_choices_ns;
    for (size_t c = 0; c < r->n_chunks; c++) {
      if (r->chunk_ns[c] > prev) vpush(&itl, cb_clock_span_ns(prev, r->chunk_ns[c]) / 1e9);
      prev = r->chunk_ns[c];
      if (prev > last_token) last_token = prev;
    }
    in_tokens += r->prompt_tokens > 0 ? (double)r->prompt_tokens : 0;
    out_tokens += n_out;
    if (r->sent_ns < first) first = r->sent_ns;
  }
  /* Peak output tokens in any 1-second bucket from the first send. */
  double peak = 0;
  if (first != UINT64_MAX && last_token >= first) {
    size_t buckets = (size_t)((last_token - first) / 1000000000ull) + 1;
    double *b = cb_calloc(buckets, sizeof *b);
    for (size_t i = 0; i < set->count; i++) {
      const cb_record *r = &set->items[i];
      if (r->warmup || !cb_record_ok(r) || cb_record_times_invalid(r)) continue;
      for (size_t c = 0; c < r->n_chunks; c++)
        if (r->chunk_ns[c] >= first) b[(r->chunk_ns[c] - first) / 1000000000ull] += cb_record_chunk_tokens(r, c);
    }
    for (size_t k = 0; k < buckets; k++) peak = b[k] > peak ? b[k] : peak;
    cb_free(b);
  }
  char date[32];
  time_t secs = (time_t)(p->start_wall_ns / 1000000000ull);
  struct tm tm;
  gmtime_r(&secs, &tm);
  strftime(date, sizeof date, "%Y%m%d-%H%M%S", &tm);
  double dur = p->duration_s > 0 ? p->duration_s : NAN;
  cb_buf_appendf(out, "{\"date\":\"%s\",\"endpoint_type\":\"%s\",\"backend\":\"%s\",\"label\":", date,
                 p->backend, p->backend);
  if (p->label) {
    cb_buf_append_char(out, '"');
    cb_buf_append_json_string(out, p->label, strlen(p->label));
    cb_buf_append_char(out, '"');
  } else {
    cb_buf_append_str(out, "null");
  }
  cb_buf_append_str(out, ",\"model_id\":\"");
  cb_buf_append_json_string(out, p->model_id, strlen(p->model_id));
  cb_buf_append_str(out, "\",\"tokenizer_id\":\"");
  cb_buf_append_json_string(out, p->model_id, strlen(p->model_id));
  cb_buf_appendf(out, "\",\"num_prompts\":%zu", num_prompts);
  if (p->request_rate > 0 && !p->ramp_up_strategy) num(out, "request_rate", p->request_rate);
  else cb_buf_append_str(out, ",\"request_rate\":\"inf\"");
  num(out, "burstiness", p->burstiness > 0 ? p->burstiness : 1.0);
  if (p->ramp_up_strategy) { /* vllm/benchmarks/serve.py: these keys, request_rate "inf" */
    cb_buf_append_str(out, ",\"ramp_up_strategy\":\"");
    cb_buf_append_json_string(out, p->ramp_up_strategy, strlen(p->ramp_up_strategy));
    cb_buf_append_char(out, '"');
    num(out, "ramp_up_start_rps", p->ramp_up_start_rps);
    num(out, "ramp_up_end_rps", p->ramp_up_end_rps);
  }
  if (p->max_concurrency > 0) cb_buf_appendf(out, ",\"max_concurrency\":%d", p->max_concurrency);
  else cb_buf_append_str(out, ",\"max_concurrency\":null");
  num(out, "duration", dur);
  cb_buf_appendf(out, ",\"completed\":%zu,\"failed\":%zu,\"total_input_tokens\":%.0f,"
                      "\"total_output_tokens\":%.0f",
                 completed, failed, in_tokens, out_tokens);
  num(out, "request_throughput", (double)completed / dur);
  if (s->n_slos) num(out, "request_goodput", s->goodput);
  else cb_buf_append_str(out, ",\"request_goodput\":null");
  num(out, "output_throughput", out_tokens / dur);
  num(out, "total_token_throughput", (in_tokens + out_tokens) / dur);
  num(out, "max_output_tokens_per_s", peak);
  cb_buf_appendf(out, ",\"max_concurrent_requests\":%zu,\"rtfx\":0", max_concurrent(set));
  list(out, "input_lens", &in_lens, 1);
  list(out, "output_lens", &out_lens, 1);
  list(out, "ttfts", &ttft, 0);
  list(out, "latencies", &e2el, 0);
  stats_keys(out, "ttft", &ttft_ok, pcts, np);
  stats_keys(out, "tpot", &tpot, pcts, np);
  stats_keys(out, "itl", &itl, pcts, np);
  stats_keys(out, "e2el", &e2el, pcts, np);
  cb_buf_append_str(out, "}\n");
  vec *all[] = {&ttft, &ttft_ok, &tpot, &itl, &e2el, &in_lens, &out_lens};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cb_free(all[i]->v);
}
