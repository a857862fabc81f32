/*
 * summary.c - the statistics of a run, computed from its records.
 *
 * Definitions (docs/results.md; compatible with vLLM's benchmark except where said):
 *   TTFT       first content chunk - sent (a role-only chunk is not a token)
 *   TPOT       (E2E - TTFT) / (output tokens - 1), requests with > 1 output token
 *   ITL        gaps between consecutive content chunks, per chunk
 *   ITL/token  each gap divided by the tokens of its chunk, counted once per token
 *   E2E        end (last byte) - sent;  E2E_sched, TTFT_sched: from the scheduled time
 *   lag        sent - scheduled
 * ITL and ITL/token percentiles come from a log-linear histogram built as records are
 * gathered (itl.c): never below the exact percentile, less than 2^-10 above it; their
 * count, mean, std, min and max, and every other statistic here, are exact.
 * Statistics use the measured requests (not warm-up); a record whose times are out of
 * order (cb_record_times_invalid) is counted as invalid and used nowhere else. "Adjusted" percentiles count
 * each failed request as worse than any success (+inf), so they cannot improve as
 * things break.
 * Window: from the first measured send to the last measured send (the drain tail
 * after the last send is left out); when all sends are simultaneous, to the last
 * completion. Throughputs count what completed (tokens: content chunks) inside it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/results.h"
#include "calibench/stats.h"
#include "record_drop.h"
#include "summary_internal.h"

void cb_summary_default_params(cb_summary_params *p) {
  memset(p, 0, sizeof *p);
  p->confidence = 0.95;
  p->lag_warning_ns = 1e6;
}

/* A growable array of samples. */
typedef struct samples {
  double *v;
  size_t n, alloc;
} samples;

static void push(samples *s, double x) {
  if (s->n == s->alloc) {
    s->alloc = s->alloc ? 2 * s->alloc : 256;
    s->v = cb_reallocarray(s->v, s->alloc, sizeof *s->v);
  }
  s->v[s->n++] = x;
}

static void dist_of(samples *s, cb_dist *d) {
  cb_stats_summary sum;
  cb_stats_summarize_inplace(s->v, s->n, &sum); /* reorders, no sorted copy */
  *d = (cb_dist){.count = sum.count, .mean = sum.mean, .std = sum.std, .cv = sum.cv,
                 .min = sum.min, .p50 = sum.p50, .p90 = sum.p90, .p95 = sum.p95,
                 .p99 = sum.p99, .p999 = sum.p999, .max = sum.max};
}

/* numpy "linear" percentile over sorted values that may end in +inf: a rank that
 * touches an infinite neighbour is infinite. */
static double quantile_inf(const double *v, size_t n, double q) {
  if (n == 0) return NAN;
  double pos = q * (double)(n - 1);
  size_t lo = (size_t)floor(pos);
  double frac = pos - (double)lo;
  if (lo + 1 >= n || frac == 0) return v[lo];
  if (isinf(v[lo + 1])) return INFINITY;
  return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

/* Percentiles with failures as +inf; mean/std stay those of the successes. */
static void dist_adjusted(samples *s, size_t failures, const cb_dist *plain, cb_dist *d) {
  for (size_t i = 0; i < failures; i++) push(s, INFINITY);
  cb_stats_sort(s->v, s->n);
  *d = *plain;
  d->count = s->n;
  d->p50 = quantile_inf(s->v, s->n, 0.50);
  d->p90 = quantile_inf(s->v, s->n, 0.90);
  d->p95 = quantile_inf(s->v, s->n, 0.95);
  d->p99 = quantile_inf(s->v, s->n, 0.99);
  d->p999 = quantile_inf(s->v, s->n, 0.999);
  d->max = s->n ? s->v[s->n - 1] : NAN;
}

static int in_class(const cb_record *r, const char *cls) {
  return !cls || !strcmp(r->class_name, cls);
}

/* valid[i]: record i is in the class asked for and its times can be used. Worked out
 * once (cb_record_times_invalid walks every chunk time) for all the passes below. */

static double ttft_of(const cb_record *r) {
  return r->first_content_ns ? cb_clock_span_ns(r->sent_ns, r->first_content_ns) : NAN;
}
static double e2e_of(const cb_record *r) { return cb_clock_span_ns(r->sent_ns, r->end_ns); }
static double tpot_of(const cb_record *r) {
  if (r->output_tokens <= 1 || !r->first_content_ns) return NAN;
  return (e2e_of(r) - ttft_of(r)) / (double)(r->output_tokens - 1);
}
static double max_gap(const cb_record *r) {
  if (!r->chunk_ns) return (double)r->max_gap_ns; /* the set dropped the times */
  double m = 0;
  for (size_t i = 1; i < r->n_chunks; i++) {
    double g = cb_clock_span_ns(r->chunk_ns[i - 1], r->chunk_ns[i]);
    if (g > m) m = g;
  }
  return m;
}

double cb_record_value(const cb_record *r, cb_metric m) {
  switch (m) {
    case CB_METRIC_TTFT: return ttft_of(r);
    case CB_METRIC_TPOT: return tpot_of(r);
    case CB_METRIC_E2E: return e2e_of(r);
    case CB_METRIC_E2E_SCHED: return cb_clock_span_ns(r->scheduled_ns, r->end_ns);
    case CB_METRIC_TTFT_SCHED:
      return r->first_content_ns ? cb_clock_span_ns(r->scheduled_ns, r->first_content_ns) : NAN;
    case CB_METRIC_LAG: return cb_clock_span_ns(r->scheduled_ns, r->sent_ns);
    default: return NAN; /* ITL: one value per gap, not per request */
  }
}

/* The value a request's SLO is judged on; NAN = not applicable (counts as met). */
static double slo_value(const cb_record *r, cb_metric m) {
  switch (m) {
    case CB_METRIC_TPOT: return r->output_tokens <= 1 ? 0 : tpot_of(r);
    case CB_METRIC_ITL:
    case CB_METRIC_ITL_TOKEN: return max_gap(r);
    default: return cb_record_value(r, m);
  }
}

int cb_slo_meets(const cb_record *r, const cb_slo *slo) {
  if (!cb_record_ok(r)) return 0;
  double v = slo_value(r, slo->metric);
  return isnan(v) || v <= slo->bound_ns;
}

static void count_error(cb_summary *s, const cb_record *r) {
  size_t i = 0;
  while (i < s->n_error_classes && strcmp(s->errors[i].error_class, r->error_class)) i++;
  if (i == s->n_error_classes) {
    if (i == sizeof s->errors / sizeof s->errors[0]) return;
    s->n_error_classes++;
    snprintf(s->errors[i].error_class, sizeof s->errors[i].error_class, "%s", r->error_class);
    snprintf(s->errors[i].sample_message, sizeof s->errors[i].sample_message, "%s",
             r->error_message);
  }
  s->errors[i].count++;
}

static void compute_window(const cb_record_set *set, const unsigned char *valid, cb_summary *s) {
  uint64_t first = UINT64_MAX, last_send = 0, last_end = 0;
  uint64_t first_sched = UINT64_MAX, last_sched = 0;
  size_t sends = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !valid[i]) continue;
    sends++;
    if (r->sent_ns < first) first = r->sent_ns;
    if (r->sent_ns > last_send) last_send = r->sent_ns;
    if (r->end_ns > last_end) last_end = r->end_ns;
    if (r->scheduled_ns < first_sched) first_sched = r->scheduled_ns;
    if (r->scheduled_ns > last_sched) last_sched = r->scheduled_ns;
  }
  if (!sends) return;
  if (last_sched > first_sched)
    s->scheduled_rate = (double)(sends - 1) / ((double)(last_sched - first_sched) / 1e9);
  s->window_start_ns = first;
  s->window_end_ns = last_send > first ? last_send : last_end;
  s->window_s = cb_clock_span_ns(s->window_start_ns, s->window_end_ns) / 1e9;
  /* n sends span n - 1 gaps. */
  if (last_send > first) s->achieved_rate = (double)(sends - 1) / s->window_s;
}

static void compute_slos(const cb_record_set *set, const unsigned char *valid,
                         const cb_summary_params *p, cb_summary *s) {
  s->n_slos = p->n_slos;
  size_t joint = 0;
  for (size_t k = 0; k < p->n_slos; k++) {
    cb_slo_result *res = &s->slos[k];
    memset(res, 0, sizeof *res);
    res->slo = p->slos[k];
    res->confidence = p->confidence;
  }
  size_t itl_gaps[CB_MAX_SLOS] = {0}, itl_over[CB_MAX_SLOS] = {0};
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !valid[i]) continue;
    int all = 1;
    for (size_t k = 0; k < p->n_slos; k++) {
      int ok = cb_slo_meets(r, &p->slos[k]);
      s->slos[k].n++;
      s->slos[k].met += ok;
      all &= ok;
      cb_metric m = p->slos[k].metric;
      if (m == CB_METRIC_ITL || m == CB_METRIC_ITL_TOKEN) {
        /* the percentile verdict for ITL is over gaps; a failure is one bad gap */
        if (!cb_record_ok(r)) {
          itl_gaps[k]++;
          itl_over[k]++;
        }
        for (size_t c = 1; r->chunk_ns && c < r->n_chunks; c++) {
          double g = cb_clock_span_ns(r->chunk_ns[c - 1], r->chunk_ns[c]);
          uint32_t tokens = cb_record_chunk_tokens(r, c);
          double per = m == CB_METRIC_ITL_TOKEN && tokens ? g / tokens : g;
          size_t w = m == CB_METRIC_ITL_TOKEN ? tokens : 1;
          itl_gaps[k] += w;
          itl_over[k] += per > p->slos[k].bound_ns ? w : 0;
        }
      }
    }
    joint += all;
  }
  for (size_t k = 0; k < p->n_slos; k++) /* the gaps of records whose times were dropped */
    cb__record_drop_slo_counts(set, p->class_name, &p->slos[k], &itl_gaps[k], &itl_over[k]);
  for (size_t k = 0; k < p->n_slos; k++) {
    cb_slo_result *res = &s->slos[k];
    res->attainment = res->n ? (double)res->met / (double)res->n : NAN;
    cb_metric m = res->slo.metric;
    int itl = m == CB_METRIC_ITL || m == CB_METRIC_ITL_TOKEN;
    res->units = itl ? itl_gaps[k] : res->n;
    res->over = itl ? itl_over[k] : res->n - res->met;
    res->verdict = cb_verdict_binomial(res->units, res->over, 1 - res->slo.percentile / 100,
                                       p->confidence, &res->p_value, &res->more_needed);
  }
  s->joint_attainment = s->measured ? (double)joint / (double)s->measured : NAN;
}

int cb_ramp_bin_of(const cb_ramp_bins *b, double rate) {
  if (!b->n_bins || !(rate == rate)) return -1;
  if (b->n_bins == 1 || !(b->width > 0)) return 0;
  double k = floor((rate - b->lo) / b->width);
  return k < 0 ? 0 : k >= (double)b->n_bins ? (int)b->n_bins - 1 : (int)k;
}

/*
 * A ramped run: measured requests binned by the rate offered at their send, and for
 * each SLO the lowest bin where the same binomial verdict as the run's, on the bin's
 * requests, says violated. Per request, as attainment is: an ITL SLO is met by a
 * request when every gap of it is (docs/results.md, "Break rate").
 */
static void compute_ramp(const cb_record_set *set, const unsigned char *valid,
                         const cb_summary_params *p, cb_summary *s) {
  cb_ramp_bins *b = &s->ramp;
  memset(b, 0, sizeof *b);
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !valid[i] || !r->has_target_rate) continue;
    if (r->target_rate < lo) lo = r->target_rate;
    if (r->target_rate > hi) hi = r->target_rate;
  }
  for (size_t k = 0; k < CB_MAX_SLOS; k++) {
    s->slos[k].break_rate = NAN;
    s->slos[k].break_bin = -1;
  }
  if (!(hi >= lo)) return;
  b->lo = lo;
  b->n_bins = hi > lo ? CB_RAMP_BINS : 1;
  b->width = (hi - lo) / (double)b->n_bins;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !valid[i] || !r->has_target_rate) continue;
    int bin = cb_ramp_bin_of(b, r->target_rate);
    b->count[bin]++;
    for (size_t k = 0; k < p->n_slos; k++) b->met[k][bin] += cb_slo_meets(r, &p->slos[k]);
  }
  for (size_t k = 0; k < p->n_slos; k++) {
    cb_slo_result *res = &s->slos[k];
    for (size_t bin = 0; bin < b->n_bins; bin++) {
      double pv;
      size_t more;
      size_t n = b->count[bin], over = n - b->met[k][bin];
      if (n && cb_verdict_binomial(n, over, 1 - res->slo.percentile / 100, p->confidence, &pv,
                                   &more) == CB_VERDICT_VIOLATED) {
        res->break_bin = (int)bin;
        res->break_rate = b->lo + (double)bin * b->width;
        break;
      }
    }
  }
}

/* Throughputs: what completed inside the window. */
static void compute_throughput(const cb_record_set *set, const unsigned char *valid,
                               const cb_summary_params *p, cb_summary *s) {
  if (!(s->window_s > 0)) return;
  uint64_t a = s->window_start_ns, b = s->window_end_ns;
  double done = 0, good = 0, out_tokens = 0, in_tokens = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !valid[i] || !cb_record_ok(r)) continue;
    if (r->n_chunks && !r->chunk_ns) { /* the set dropped the times */
      out_tokens += cb__record_drop_tokens_by(set, i, b);
    } else if (r->n_chunks) {
      for (size_t c = 0; c < r->n_chunks; c++)
        if (r->chunk_ns[c] >= a && r->chunk_ns[c] <= b) out_tokens += cb_record_chunk_tokens(r, c);
    } else if (r->end_ns >= a && r->end_ns <= b && r->output_tokens > 0) {
      out_tokens += (double)r->output_tokens;
    }
    if (r->end_ns < a || r->end_ns > b) continue;
    done++;
    if (r->prompt_tokens > 0) in_tokens += (double)r->prompt_tokens;
    int all = 1;
    for (size_t k = 0; k < p->n_slos; k++) all &= cb_slo_meets(r, &p->slos[k]);
    good += all;
  }
  s->request_throughput = done / s->window_s;
  s->goodput = good / s->window_s;
  s->output_throughput = out_tokens / s->window_s;
  s->total_token_throughput = (out_tokens + in_tokens) / s->window_s;
}

void cb_summary_compute(const cb_record_set *set, const cb_summary_params *p, cb_summary *out) {
  memset(out, 0, sizeof *out);
  cb_summary *s = out;
  s->schema_version = CB_RESULTS_SCHEMA_VERSION;
  snprintf(s->class_name, sizeof s->class_name, "%s", p->class_name ? p->class_name : "");
  s->requested_rate = p->requested_rate;
  s->lag_warning_ns = p->lag_warning_ns;
  samples sm[CB_METRIC_COUNT_] = {{0}};
  size_t sources[CB_TOKENS_DATASET + 1] = {0};
  unsigned char *valid = cb_calloc(set->count ? set->count : 1, 1);
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!in_class(r, p->class_name)) continue;
    s->requests++;
    const char *why = cb_record_times_invalid(r);
    valid[i] = !why;
    if (why) {
      if (!s->invalid++)
        snprintf(s->invalid_example, sizeof s->invalid_example, "request %s (index %llu): %s",
                 r->request_id[0] ? r->request_id : "?", (unsigned long long)r->index, why);
      continue;
    }
    if (r->warmup) {
      s->warmup++;
      continue;
    }
    s->measured++;
    double lag = cb_clock_span_ns(r->scheduled_ns, r->sent_ns);
    if (!isnan(lag)) push(&sm[CB_METRIC_LAG], lag);
    if (!cb_record_ok(r)) {
      s->failed++;
      count_error(s, r);
      continue;
    }
    s->succeeded++;
    if (r->chunks_dropped) s->chunk_times_truncated++;
    if (r->prompt_tokens > 0) s->total_prompt_tokens += r->prompt_tokens;
    if (r->output_tokens > 0) s->total_output_tokens += r->output_tokens;
    sources[r->output_source]++;
    double ttft = ttft_of(r), tpot = tpot_of(r);
    if (!isnan(ttft)) {
      push(&sm[CB_METRIC_TTFT], ttft);
      double ttft_sched = cb_clock_span_ns(r->scheduled_ns, r->first_content_ns);
      if (!isnan(ttft_sched)) push(&sm[CB_METRIC_TTFT_SCHED], ttft_sched);
    }
    if (!isnan(tpot)) push(&sm[CB_METRIC_TPOT], tpot);
    push(&sm[CB_METRIC_E2E], e2e_of(r));
    double e2e_sched = cb_clock_span_ns(r->scheduled_ns, r->end_ns);
    if (!isnan(e2e_sched)) push(&sm[CB_METRIC_E2E_SCHED], e2e_sched);
  }
  for (int src = 0; src <= CB_TOKENS_DATASET; src++)
    if (sources[src] > sources[s->output_source]) s->output_source = (cb_token_source)src;

  /* Per-token distributions: exact moments, percentiles from a histogram (itl.c). */
  cb_itl_stats itl;
  cb_record_set_itl(set, p->class_name, &itl);
  for (int m = 0; m < CB_METRIC_COUNT_; m++) {
    if (m == CB_METRIC_ITL || m == CB_METRIC_ITL_TOKEN) {
      cb_itl_stats_dist(&itl, (cb_metric)m, &s->metrics[m]);
      s->metrics_adjusted[m] = s->metrics[m];
      continue;
    }
    dist_of(&sm[m], &s->metrics[m]);
    int adjust = m == CB_METRIC_TTFT || m == CB_METRIC_TPOT || m == CB_METRIC_E2E ||
                 m == CB_METRIC_E2E_SCHED || m == CB_METRIC_TTFT_SCHED;
    if (adjust) dist_adjusted(&sm[m], s->failed, &s->metrics[m], &s->metrics_adjusted[m]);
    else s->metrics_adjusted[m] = s->metrics[m];
    cb_free(sm[m].v);
  }
  cb_itl_stats_free(&itl);
  s->client_fell_behind = s->metrics[CB_METRIC_LAG].count > 0 &&
                          s->metrics[CB_METRIC_LAG].p99 > p->lag_warning_ns;
  compute_window(set, valid, s);
  compute_slos(set, valid, p, s);
  compute_ramp(set, valid, p, s);
  cb__summary_sessions(set, valid, p, &s->sessions);
  compute_throughput(set, valid, p, s);
  cb_free(valid);
}
