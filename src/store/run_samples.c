/*
 * run_samples.c - the per-request samples the gate's statistical tests use, taken from
 * a run's records with the definitions of src/results/summary.c (docs/results.md), so
 * a quantile of a sample is the summary's percentile of the same metric:
 *   ttft, ttft_sched, tpot, e2e, e2e_sched  one value per measured success (ns);
 *   lag                                     one per measured request (ns);
 *   error                                   one per measured request: 1 failed, 0 not;
 *   throughput.*                            CB_THROUGHPUT_BINS equal slices of the
 *                                           measured window, each slice's rate; their
 *                                           mean is the summary's throughput.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/results.h"
#include "calibench/store.h"
#include "store_internal.h"

typedef struct vec {
  double *v;
  size_t n, alloc;
} vec;

static void push(vec *s, double x) {
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? 2 * s->alloc : 256;
    s->v = cb_reallocarray(s->v, s->alloc, sizeof *s->v);
  }
  s->v[s->n++] = x;
}

enum { S_TTFT, S_TTFT_SCHED, S_TPOT, S_E2E, S_E2E_SCHED, S_LAG, S_ERROR, S_N };
static const char *const names[S_N] = {"ttft", "ttft_sched", "tpot", "e2e", "e2e_sched",
                                       "lag", "error"};

static size_t bin_of(uint64_t t, uint64_t a, uint64_t b) {
  size_t k = (size_t)((double)(t - a) / (double)(b - a) * CB_THROUGHPUT_BINS);
  return k >= CB_THROUGHPUT_BINS ? CB_THROUGHPUT_BINS - 1 : k;
}

void cb__run_samples_from_records(cb_run_data *r, const cb_record_set *set,
                                  const char *class_name, uint64_t win_start,
                                  uint64_t win_end) {
  vec s[S_N];
  memset(s, 0, sizeof s);
  double req[CB_THROUGHPUT_BINS] = {0}, out[CB_THROUGHPUT_BINS] = {0},
         total[CB_THROUGHPUT_BINS] = {0};
  int window = win_end > win_start;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *x = &set->items[i];
    if (x->warmup || (class_name && strcmp(x->class_name, class_name)) ||
        cb_record_times_invalid(x))
      continue;
    double lag = cb_clock_span_ns(x->scheduled_ns, x->sent_ns);
    if (!isnan(lag)) push(&s[S_LAG], lag);
    int ok = cb_record_ok(x);
    push(&s[S_ERROR], ok ? 0 : 1);
    if (!ok) continue;
    double e2e = cb_clock_span_ns(x->sent_ns, x->end_ns);
    if (x->first_content_ns) {
      double ttft = cb_clock_span_ns(x->sent_ns, x->first_content_ns);
      double ttft_sched = cb_clock_span_ns(x->scheduled_ns, x->first_content_ns);
      push(&s[S_TTFT], ttft);
      if (!isnan(ttft_sched)) push(&s[S_TTFT_SCHED], ttft_sched);
      if (x->output_tokens > 1) push(&s[S_TPOT], (e2e - ttft) / (double)(x->output_tokens - 1));
    }
    push(&s[S_E2E], e2e);
    double e2e_sched = cb_clock_span_ns(x->scheduled_ns, x->end_ns);
    if (!isnan(e2e_sched)) push(&s[S_E2E_SCHED], e2e_sched);
    if (!window) continue;
    if (x->n_chunks) {
      for (size_t c = 0; c < x->n_chunks; c++)
        if (x->chunk_ns[c] >= win_start && x->chunk_ns[c] <= win_end)
          out[bin_of(x->chunk_ns[c], win_start, win_end)] += cb_record_chunk_tokens(x, c);
    } else if (x->end_ns >= win_start && x->end_ns <= win_end && x->output_tokens > 0) {
      out[bin_of(x->end_ns, win_start, win_end)] += (double)x->output_tokens;
    }
    if (x->end_ns < win_start || x->end_ns > win_end) continue;
    size_t k = bin_of(x->end_ns, win_start, win_end);
    req[k] += 1;
    if (x->prompt_tokens > 0) total[k] += (double)x->prompt_tokens;
  }
  const char *cls = class_name ? class_name : "";
  for (int k = 0; k < S_N; k++) {
    if (s[k].n) cb_run_data_add_samples(r, cls, names[k], s[k].v, s[k].n);
    else cb_free(s[k].v);
  }
  if (!window) return;
  double width_s = (double)(win_end - win_start) / 1e9 / CB_THROUGHPUT_BINS;
  double *vr = cb_malloc(CB_THROUGHPUT_BINS * sizeof *vr);
  double *vo = cb_malloc(CB_THROUGHPUT_BINS * sizeof *vo);
  double *vt = cb_malloc(CB_THROUGHPUT_BINS * sizeof *vt);
  for (size_t k = 0; k < CB_THROUGHPUT_BINS; k++) {
    vr[k] = req[k] / width_s;
    vo[k] = out[k] / width_s;
    vt[k] = (out[k] + total[k]) / width_s;
  }
  cb_run_data_add_samples(r, cls, "throughput.requests_per_s", vr, CB_THROUGHPUT_BINS);
  cb_run_data_add_samples(r, cls, "throughput.output_tokens_per_s", vo, CB_THROUGHPUT_BINS);
  cb_run_data_add_samples(r, cls, "throughput.total_tokens_per_s", vt, CB_THROUGHPUT_BINS);
}
