/*
 * values.c - per-request values for the charts, with the definitions of summary.c
 * (docs/results.md): TTFT = first content chunk - sent, TPOT = (E2E - TTFT) /
 * (output tokens - 1) for more than one token, ITL = each gap between content chunks,
 * E2E = end - sent; over measured (not warm-up) successes. Also histogram bins.
 * ITL has one value per output token: it is read from the record set's histogram
 * (cb_record_set_itl), as the summary's ITL percentiles are, never from chunk times,
 * which a run's records no longer hold (cb_record_set_drop_chunk_times).
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/stats.h"
#include "report_internal.h"

/* Measured, succeeded, and with times in order (the summary leaves the rest out too). */
int cb__rep_record_measured_ok(const cb_record *r) {
  return !r->warmup && cb_record_ok(r) && !cb_record_times_invalid(r);
}

double cb__rep_ttft_ms(const cb_record *r) {
  if (!cb_record_ok(r) || !r->first_content_ns) return NAN;
  return cb_clock_span_ns(r->sent_ns, r->first_content_ns) / 1e6;
}

double cb__rep_e2e_ms(const cb_record *r) {
  return cb_clock_span_ns(r->sent_ns, r->end_ns) / 1e6;
}

double cb__rep_tpot_ms(const cb_record *r) {
  if (r->output_tokens <= 1) return NAN;
  double ttft = cb__rep_ttft_ms(r), e2e = cb__rep_e2e_ms(r);
  return (e2e - ttft) / (double)(r->output_tokens - 1);
}

typedef struct growable {
  double *v;
  size_t n, alloc;
} growable;

static void push(growable *g, double x) {
  if (!isfinite(x)) return;
  if (g->n == g->alloc) {
    g->alloc = g->alloc ? 2 * g->alloc : 256;
    g->v = cb_reallocarray(g->v, g->alloc, sizeof *g->v);
  }
  g->v[g->n++] = x;
}

static void push_value(growable *g, const cb_record *r, int which) {
  switch (which) {
    case CB__REP_TTFT: push(g, cb__rep_ttft_ms(r)); break;
    case CB__REP_TPOT: push(g, cb__rep_tpot_ms(r)); break;
    case CB__REP_E2E: push(g, cb__rep_e2e_ms(r)); break;
    default: break;
  }
}

static void sorted_values(growable *g, cb__rep_values *out) {
  cb_stats_sort(g->v, g->n);
  out->v = g->v;
  out->cum = NULL;
  out->n = g->n;
}

/* The gaps' histogram as entries: each bucket's value as cb_hist_quantile_linear reads
 * it (its highest equivalent, capped at the max), the exact min on its own first. */
static void itl_values(const cb_record_set *set, const char *class_name, cb__rep_values *out) {
  cb_itl_stats st;
  cb_record_set_itl(set, class_name, &st);
  const cb_hist *h = &st.gap;
  memset(out, 0, sizeof *out);
  size_t alloc = 0;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it)) {
    if (out->n + 2 > alloc) {
      alloc = alloc ? 2 * alloc : 256;
      out->v = cb_reallocarray(out->v, alloc, sizeof *out->v);
      out->cum = cb_reallocarray(out->cum, alloc, sizeof *out->cum);
    }
    double rep = (double)(it.highest < h->max_value ? it.highest : h->max_value);
    if (!out->n && (double)h->min_value < rep) { /* rank 0 is the exact min */
      out->v[0] = (double)h->min_value / 1e6;
      out->cum[0] = 1;
      out->n = 1;
      if (it.count == 1) continue;
    }
    out->v[out->n] = rep / 1e6;
    out->cum[out->n] = it.cumulative_count;
    out->n++;
  }
  cb_itl_stats_free(&st);
}

void cb__rep_values_of(const cb_record_set *set, const char *class_name, int which,
                       cb__rep_values *out) {
  if (which == CB__REP_ITL) {
    itl_values(set, class_name, out);
    return;
  }
  growable g = {0};
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!cb__rep_record_measured_ok(r)) continue;
    if (class_name && strcmp(r->class_name, class_name)) continue;
    push_value(&g, r, which);
  }
  sorted_values(&g, out);
}

/* Every distribution in one pass: each record's times are checked once, and the ITL
 * array (one value per output token) is sized once rather than grown by doubling. */
void cb__rep_values_compute(cb__rep_run *run) {
  const cb_record_set *set = &run->records;
  growable g[CB__REP_NDIST] = {{0}};
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!cb__rep_record_measured_ok(r)) continue;
    for (int k = 0; k < CB__REP_NDIST; k++) push_value(&g[k], r, k);
  }
  for (int k = 0; k < CB__REP_NDIST; k++) {
    if (k == CB__REP_ITL) itl_values(set, NULL, &run->dist[k]);
    else sorted_values(&g[k], &run->dist[k]);
  }
}

void cb__rep_values_free(cb__rep_values *v) {
  cb_free(v->v);
  cb_free(v->cum);
  memset(v, 0, sizeof *v);
}

uint64_t cb__rep_values_total(const cb__rep_values *v) {
  return v->cum ? (v->n ? v->cum[v->n - 1] : 0) : v->n;
}

static double values_at(const void *ctx, uint64_t k) { return cb__rep_values_at(ctx, k); }

double cb__rep_values_at(const cb__rep_values *v, uint64_t k) {
  if (!v->cum) return v->v[k];
  size_t lo = 0, hi = v->n - 1; /* the first entry whose cumulative count passes k */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v->cum[mid] > k) hi = mid;
    else lo = mid + 1;
  }
  return v->v[lo];
}

double cb__rep_values_quantile(const cb__rep_values *v, double q) {
  return cb_stats_quantile_by_rank(values_at, v, cb__rep_values_total(v), q);
}

void cb__rep_bins_compute(const cb__rep_values *v, int target, cb__rep_bins *out) {
  memset(out, 0, sizeof *out);
  if (!v->n) return;
  double lo = v->v[0], max = v->v[v->n - 1];
  double p995 = cb__rep_values_quantile(v, 0.995);
  double hi = cb__rep_values_total(v) >= 200 && max > 2 * p995 ? p995 : max;
  cb__rep_ticks t;
  cb__rep_axis_ticks(lo, hi, target, &t);
  double step = t.step;
  double start = floor(lo / step) * step;
  double span = (hi - start) / step;
  size_t nb = span >= 1 ? (size_t)ceil(span) : 1;
  if (start + (double)nb * step <= hi) nb++; /* hi itself falls in the last bin */
  if (nb > 400) nb = 400;
  out->start = start;
  out->step = step;
  out->n_bins = nb;
  out->counts = cb_calloc(nb, sizeof *out->counts);
  double edge = start + (double)nb * step;
  for (size_t i = 0; i < v->n; i++) {
    double k = floor((v->v[i] - start) / step);
    size_t b = k < 0 ? 0 : k >= (double)nb ? nb - 1 : (size_t)k;
    uint64_t w = v->cum ? v->cum[i] - (i ? v->cum[i - 1] : 0) : 1;
    if (v->v[i] > edge) out->overflow += w;
    out->counts[b] += (double)w;
  }
}

void cb__rep_bins_free(cb__rep_bins *b) {
  cb_free(b->counts);
  memset(b, 0, sizeof *b);
}
