/*
 * summary_sessions.c - live sessions' statistics (run --sessions): per turn index,
 * TTFT (mean and percentiles), prompt tokens and the server's cached tokens (its
 * prefix cache hits, from usage) as the conversation grows, and each SLO's
 * attainment; per session, its duration from the first turn's send to the last
 * reply's end (sessions whose measured turns all succeeded).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/stats.h"
#include "summary_internal.h"

static void dist_of(double *v, size_t n, cb_dist *d) {
  cb_stats_summary sum;
  cb_stats_summarize_inplace(v, n, &sum);
  *d = (cb_dist){.count = sum.count, .mean = sum.mean, .std = sum.std, .cv = sum.cv,
                 .min = sum.min, .p50 = sum.p50, .p90 = sum.p90, .p95 = sum.p95,
                 .p99 = sum.p99, .p999 = sum.p999, .max = sum.max};
}

/* One measured turn, for grouping by session. */
typedef struct turn_ref {
  uint64_t session, sent, end;
  int ok;
} turn_ref;

static int by_session(const void *a, const void *b) {
  const turn_ref *x = a, *y = b;
  return x->session < y->session ? -1 : x->session > y->session;
}

void cb__summary_sessions(const cb_record_set *set, const unsigned char *valid,
                          const cb_summary_params *p, cb_session_stats *out) {
  memset(out, 0, sizeof *out);
  size_t n = 0;
  for (size_t i = 0; i < set->count; i++)
    n += valid[i] && !set->items[i].warmup && set->items[i].has_session;
  if (!n) return;
  turn_ref *refs = cb_calloc(n, sizeof *refs);
  double *ttft = cb_calloc(n, sizeof *ttft);
  size_t k = 0;
  for (size_t t = 0; t < CB_SESSION_TURNS; t++) {
    cb_session_turn_stats *ts = &out->turn[t];
    size_t m = 0, n_prompt = 0, n_cached = 0;
    double prompt = 0, cached = 0;
    for (size_t i = 0; i < set->count; i++) {
      const cb_record *r = &set->items[i];
      if (!valid[i] || r->warmup || !r->has_session) continue;
      size_t row = r->turn < CB_SESSION_TURNS ? r->turn : CB_SESSION_TURNS - 1;
      if (row != t) continue;
      ts->count++;
      for (size_t s = 0; s < p->n_slos; s++)
        ts->met[s] += (size_t)cb_slo_meets(r, &p->slos[s]);
      refs[k++] = (turn_ref){.session = r->session, .sent = r->sent_ns, .end = r->end_ns,
                             .ok = cb_record_ok(r)};
      if (!cb_record_ok(r)) continue;
      if (r->first_content_ns) ttft[m++] = cb_clock_span_ns(r->sent_ns, r->first_content_ns);
      if (r->prompt_tokens >= 0) prompt += (double)r->prompt_tokens, n_prompt++;
      if (r->cached_tokens >= 0) cached += (double)r->cached_tokens, n_cached++;
    }
    if (ts->count) out->n_turns = t + 1;
    dist_of(ttft, m, &ts->ttft);
    ts->prompt_tokens_mean = n_prompt ? prompt / (double)n_prompt : NAN;
    ts->cached_tokens_mean = n_cached ? cached / (double)n_cached : NAN;
  }
  qsort(refs, n, sizeof *refs, by_session);
  size_t n_dur = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint64_t first = refs[i].sent, last = refs[i].end;
    int ok = 1;
    for (; j < n && refs[j].session == refs[i].session; j++) {
      if (refs[j].sent < first) first = refs[j].sent;
      if (refs[j].end > last) last = refs[j].end;
      ok &= refs[j].ok;
    }
    out->sessions++;
    if (ok) ttft[n_dur++] = cb_clock_span_ns(first, last); /* ttft's room, reused */
    i = j;
  }
  out->complete = n_dur;
  dist_of(ttft, n_dur, &out->duration);
  cb_free(ttft);
  cb_free(refs);
}
