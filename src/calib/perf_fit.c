/*
 * perf_fit.c - `calibrate fit`: the simulator profile's MFU, MBU and per-step overhead
 * fitted to measured runs (calib.h, "fit").
 *
 * Observations, rebuilt from the records alone:
 *  - ITL: a gap (a, b] between two tokens of a request is one engine step. When no
 *    request was between its send and its first token during the gap, the step was pure
 *    decode: every request that had started decoding by a and still had a token to give
 *    at b produced one token in it, each with context = prompt + tokens so far - 1. Its
 *    roofline is then known exactly up to the efficiencies. Steps shared by several
 *    requests (equal a and b) count once.
 *  - TTFT: a request whose prefill overlapped no other request's send-to-first-token
 *    span (no queue, no other prefill) starts at its send, or at the end of the step in
 *    flight then (the first token any decoding request produced after the send); its
 *    prefill is (prompt - cached) tokens in chunks of the token budget left after the
 *    requests still decoding in each step (those with a token left to make), one step
 *    each, with them in the batch.
 * Each observation's model is a sum of steps t = max(c / MFU, m / MBU) + a + o with c,
 * m, a from the roofline at unit efficiency (perf_common.c). Loss: mean squared log
 * ratio (model / observed) per group, the two groups averaged, minimised by Nelder-Mead over
 * (ln MFU, ln MBU, o) from three starts. A parameter no observation is bound by (no
 * compute-bound step: MFU; no memory-bound step: MBU) is kept from the base profile.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/cstat_internal.h"
#include "calib/perf_internal.h"
#include "calibench/alloc.h"
#include "calibench/stats.h"

void cb_calib_fit_default_params(cb_calib_fit_params *p) {
  p->max_itl_obs = 20000;
  p->max_ttft_obs = 20000;
  p->iterations = 600;
}

/* ---- observations ---------------------------------------------------------------------- */

typedef struct obs_set {
  cb__step_unit *u;   /* all steps, observation after observation */
  size_t nu, cu;
  size_t *first;      /* [n] first step of observation i */
  size_t *count;      /* [n] its steps */
  double *y;          /* [n] observed ns */
  size_t n, cap;
} obs_set;

static void obs_free(obs_set *o) {
  cb_free(o->u);
  cb_free(o->first);
  cb_free(o->count);
  cb_free(o->y);
  memset(o, 0, sizeof *o);
}

static void obs_begin(obs_set *o, double y) {
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 256;
    o->first = cb_reallocarray(o->first, o->cap, sizeof *o->first);
    o->count = cb_reallocarray(o->count, o->cap, sizeof *o->count);
    o->y = cb_reallocarray(o->y, o->cap, sizeof *o->y);
  }
  o->first[o->n] = o->nu;
  o->count[o->n] = 0;
  o->y[o->n] = y;
  o->n++;
}

static void obs_step(obs_set *o, const cb__step_unit *u) {
  if (o->nu == o->cu) {
    o->cu = o->cu ? 2 * o->cu : 1024;
    o->u = cb_reallocarray(o->u, o->cu, sizeof *o->u);
  }
  o->u[o->nu++] = *u;
  o->count[o->n - 1]++;
}

/* The requests of one run that can be used, with sorted views for counting. */
typedef struct run_view {
  const cb_record **r;  /* successes, not warm-up, with a first token */
  size_t n;
  uint64_t *sent;       /* sorted send times */
  uint64_t *first;      /* sorted first-token times */
} run_view;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Number of v[0..n) < x (v sorted). */
static size_t count_lt(const uint64_t *v, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static size_t count_le(const uint64_t *v, size_t n, uint64_t x) {
  return x == UINT64_MAX ? n : count_lt(v, n, x + 1);
}

/* Requests whose send-to-first-token span meets (a, b]: sent < b and first > a. */
static size_t prefills_over(const run_view *v, uint64_t a, uint64_t b) {
  return count_lt(v->sent, v->n, b) - count_le(v->first, v->n, a);
}

static void view_init(run_view *v, const cb_record_set *set) {
  memset(v, 0, sizeof *v);
  v->r = cb_calloc(set->count ? set->count : 1, sizeof *v->r);
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!cb_record_ok(r) || r->warmup || !r->first_content_ns || r->prompt_tokens < 1 ||
        r->n_chunks < 1 || r->first_content_ns < r->sent_ns)
      continue;
    v->r[v->n++] = r;
  }
  v->sent = cb_calloc(v->n ? v->n : 1, sizeof *v->sent);
  v->first = cb_calloc(v->n ? v->n : 1, sizeof *v->first);
  for (size_t i = 0; i < v->n; i++) {
    v->sent[i] = v->r[i]->sent_ns;
    v->first[i] = v->r[i]->first_content_ns;
  }
  if (v->n) {
    qsort(v->sent, v->n, sizeof *v->sent, cmp_u64);
    qsort(v->first, v->n, sizeof *v->first, cmp_u64);
  }
}

static void view_free(run_view *v) {
  cb_free(v->r);
  cb_free(v->sent);
  cb_free(v->first);
}

/* Tokens of r produced at or before t. */
static size_t tokens_by(const cb_record *r, uint64_t t) {
  return count_le(r->chunk_ns, r->n_chunks, t);
}

/* Requests decoding around a moving time: added in order of first token, dropped once
 * their last token is behind. Times only move forward. */
typedef struct active_set {
  const cb_record **byfirst; /* the run's requests by first-token time */
  size_t n, next;
  const cb_record **on;      /* added and not yet dropped */
  size_t len;
} active_set;

static int cmp_first(const void *x, const void *y) {
  const cb_record *p = *(const cb_record *const *)x, *q = *(const cb_record *const *)y;
  return p->first_content_ns < q->first_content_ns ? -1 : p->first_content_ns > q->first_content_ns;
}

static void active_init(active_set *a, const run_view *v) {
  memset(a, 0, sizeof *a);
  a->n = v->n;
  a->byfirst = cb_calloc(v->n ? v->n : 1, sizeof *a->byfirst);
  memcpy(a->byfirst, v->r, v->n * sizeof *a->byfirst);
  if (v->n) qsort(a->byfirst, v->n, sizeof *a->byfirst, cmp_first);
  a->on = cb_calloc(v->n ? v->n : 1, sizeof *a->on);
}

static void active_free(active_set *a) {
  cb_free(a->byfirst);
  cb_free(a->on);
}

/* Add the requests whose first token is at or before `upto`; drop those whose last
 * token is before `keep_from`. */
static void active_move(active_set *a, uint64_t upto, uint64_t keep_from) {
  while (a->next < a->n && a->byfirst[a->next]->first_content_ns <= upto)
    a->on[a->len++] = a->byfirst[a->next++];
  size_t w = 0;
  for (size_t i = 0; i < a->len; i++)
    if (a->on[i]->last_content_ns >= keep_from) a->on[w++] = a->on[i];
  a->len = w;
}

/* A gap candidate: request i's token k at b, previous at a. */
typedef struct gap {
  uint64_t a, b;
} gap;

static int cmp_gap(const void *x, const void *y) {
  const gap *p = x, *q = y;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return p->a < q->a ? -1 : p->a > q->a;
}

/* Decode-step observations of one run. */
static void itl_obs(const cb_sim_params *p, const run_view *v, size_t max_obs, obs_set *out) {
  size_t ng = 0, cg = 0;
  gap *g = NULL;
  for (size_t i = 0; i < v->n; i++) {
    const cb_record *r = v->r[i];
    for (size_t k = 1; k < r->n_chunks; k++) {
      if (r->chunk_tokens && (r->chunk_tokens[k] != 1 || r->chunk_tokens[k - 1] != 1)) continue;
      uint64_t a = r->chunk_ns[k - 1], b = r->chunk_ns[k];
      if (b <= a || prefills_over(v, a, b)) continue;
      if (ng == cg) {
        cg = cg ? 2 * cg : 4096;
        g = cb_reallocarray(g, cg, sizeof *g);
      }
      g[ng++] = (gap){a, b};
    }
  }
  if (ng) qsort(g, ng, sizeof *g, cmp_gap);
  size_t nu = 0; /* unique steps */
  for (size_t i = 0; i < ng; i++)
    if (!nu || g[i].a != g[nu - 1].a || g[i].b != g[nu - 1].b) g[nu++] = g[i];
  size_t stride = nu > max_obs ? (nu + max_obs - 1) / max_obs : 1;
  cb_sim_batch_item *items = cb_calloc(v->n ? v->n : 1, sizeof *items);
  active_set act;
  active_init(&act, v);
  for (size_t s = 0; s < nu; s += stride) {
    uint64_t a = g[s].a, b = g[s].b;
    active_move(&act, b, b);
    size_t n = 0;
    for (size_t i = 0; i < act.len; i++) {
      const cb_record *r = act.on[i];
      if (r->first_content_ns > a) continue; /* its first token came in this step */
      size_t before = tokens_by(r, a);       /* the token made at b has this index */
      items[n++] = (cb_sim_batch_item){.new_tokens = 1,
                                       .context_tokens = r->prompt_tokens + (int64_t)before - 1,
                                       .samples = 1};
    }
    if (!n) continue;
    cb__step_unit u;
    cb__step_unit_of(p, items, n, &u);
    obs_begin(out, (double)(b - a));
    obs_step(out, &u);
  }
  active_free(&act);
  cb_free(items);
  cb_free(g);
}

static int cmp_sent(const void *x, const void *y) {
  const cb_record *p = *(const cb_record *const *)x, *q = *(const cb_record *const *)y;
  return p->sent_ns < q->sent_ns ? -1 : p->sent_ns > q->sent_ns;
}

/* Prefills that ran with no other prefill. */
static void ttft_obs(const cb_sim_params *p, const run_view *v, size_t max_obs, obs_set *out) {
  const cb_record **bysent = cb_calloc(v->n ? v->n : 1, sizeof *bysent);
  size_t alone = 0;
  for (size_t j = 0; j < v->n; j++)
    if (prefills_over(v, v->r[j]->sent_ns, v->r[j]->first_content_ns) == 1) bysent[alone++] = v->r[j];
  if (alone) qsort(bysent, alone, sizeof *bysent, cmp_sent);
  size_t stride = alone > max_obs ? (alone + max_obs - 1) / max_obs : 1;
  cb_sim_batch_item *items = cb_calloc(v->n + 1, sizeof *items);
  const cb_record **dec = cb_calloc(v->n + 1, sizeof *dec);
  active_set act;
  active_init(&act, v);
  for (size_t j = 0; j < alone; j += stride) {
    const cb_record *r = bysent[j];
    /* Requests decoding at the send (first token by then, last one after), and the
     * end of the step in flight then: the first token any of them made after it. */
    uint64_t t = r->sent_ns, start = UINT64_MAX;
    active_move(&act, t, t + 1);
    size_t nd = 0;
    for (size_t i = 0; i < act.len; i++) {
      const cb_record *d = act.on[i];
      if (d == r || d->first_content_ns > t || d->last_content_ns <= t) continue;
      size_t before = tokens_by(d, t);
      if (before < d->n_chunks && d->chunk_ns[before] < start) start = d->chunk_ns[before];
      dec[nd++] = d;
    }
    if (nd >= (size_t)p->max_num_seqs) continue; /* it would have queued */
    if (start == UINT64_MAX) start = t;
    if (start >= r->first_content_ns) continue;
    int64_t cached = r->cached_tokens > 0 ? r->cached_tokens : 0;
    int64_t todo = r->prompt_tokens - cached, done = cached;
    if (todo < 1) continue;
    obs_begin(out, (double)(r->first_content_ns - start));
    for (int64_t step = 0; todo > 0; step++) {
      /* The decoding requests with a token still to make in this step go first. */
      size_t n = 0;
      for (size_t i = 0; i < nd; i++) {
        int64_t next = (int64_t)tokens_by(dec[i], start) + step; /* its token's index */
        if (next >= (int64_t)dec[i]->n_chunks) continue;           /* finished by then */
        items[n++] = (cb_sim_batch_item){.new_tokens = 1,
                                         .context_tokens = dec[i]->prompt_tokens + next - 1,
                                         .samples = 1};
      }
      int64_t budget = p->max_num_batched_tokens - (int64_t)n;
      if (budget < 1) budget = 1;
      int64_t c = todo < budget ? todo : budget;
      if (p->long_prefill_token_threshold > 0 && c > p->long_prefill_token_threshold)
        c = p->long_prefill_token_threshold;
      items[n++] = (cb_sim_batch_item){.new_tokens = c, .context_tokens = done,
                                       .samples = c == todo};
      cb__step_unit u;
      cb__step_unit_of(p, items, n, &u);
      obs_step(out, &u);
      done += c;
      todo -= c;
    }
  }
  active_free(&act);
  cb_free(items);
  cb_free(dec);
  cb_free(bysent);
}

/* ---- the loss and its minimum ------------------------------------------------------------- */

typedef struct problem {
  const obs_set *ttft, *itl;
  double fixed[3];  /* values used for parameters not free */
  int free_[3];     /* 1: fitted */
} problem;

static double predict(const obs_set *o, size_t i, double mfu, double mbu, double ov) {
  double t = 0;
  for (size_t k = 0; k < o->count[i]; k++) t += cb__step_time(&o->u[o->first[i] + k], mfu, mbu, ov);
  return t;
}

/* Mean squared log ratio: relative errors that treat a step 10% slow and 10% fast alike,
 * and the least-squares estimate of a multiplicative noise's centre (step jitter, and
 * real steps' variation, are multiplicative). */
static double group_loss(const obs_set *o, double mfu, double mbu, double ov) {
  if (!o->n) return 0;
  double s = 0;
  for (size_t i = 0; i < o->n; i++) {
    double e = log(predict(o, i, mfu, mbu, ov) / o->y[i]);
    s += e * e;
  }
  return s / (double)o->n;
}

static void unpack(const problem *pr, const double *x, double *mfu, double *mbu, double *ov) {
  double v[3];
  for (int i = 0; i < 3; i++) v[i] = pr->free_[i] ? x[i] : pr->fixed[i];
  *mfu = exp(v[0]);
  *mbu = exp(v[1]);
  *ov = v[2] * 1e3; /* x[2] in us */
}

static double loss_of(const problem *pr, double mfu, double mbu, double ov) {
  int groups = (pr->ttft->n > 0) + (pr->itl->n > 0);
  return (group_loss(pr->ttft, mfu, mbu, ov) + group_loss(pr->itl, mfu, mbu, ov)) / groups;
}

static double objective(const problem *pr, const double *x, int *evals) {
  double mfu, mbu, ov;
  unpack(pr, x, &mfu, &mbu, &ov);
  (*evals)++;
  if (!(mfu > 1e-4 && mfu <= 1.0 && mbu > 1e-4 && mbu <= 1.0 && ov >= 0 && ov <= 1e8))
    return 1e300;
  return loss_of(pr, mfu, mbu, ov);
}

/* Nelder-Mead (standard coefficients 1, 2, 0.5, 0.5) over 3 variables. */
static double nelder_mead(const problem *pr, double *x0, const double *step, int iters,
                          int *evals) {
  double s[4][3], f[4];
  for (int i = 0; i < 4; i++) {
    for (int k = 0; k < 3; k++) s[i][k] = x0[k] + (i == k + 1 ? step[k] : 0.0);
    f[i] = objective(pr, s[i], evals);
  }
  for (int it = 0; it < iters; it++) {
    /* Order: best first. */
    for (int i = 1; i < 4; i++)
      for (int j = i; j > 0 && f[j] < f[j - 1]; j--) {
        double tf = f[j];
        f[j] = f[j - 1];
        f[j - 1] = tf;
        for (int k = 0; k < 3; k++) {
          double t = s[j][k];
          s[j][k] = s[j - 1][k];
          s[j - 1][k] = t;
        }
      }
    if (fabs(f[3] - f[0]) <= 1e-14 * (fabs(f[0]) + 1e-300) + 1e-20) break;
    double c[3], r[3], e[3], k2[3];
    for (int k = 0; k < 3; k++) c[k] = (s[0][k] + s[1][k] + s[2][k]) / 3.0;
    for (int k = 0; k < 3; k++) r[k] = c[k] + (c[k] - s[3][k]);
    double fr = objective(pr, r, evals);
    if (fr < f[0]) {
      for (int k = 0; k < 3; k++) e[k] = c[k] + 2.0 * (c[k] - s[3][k]);
      double fe = objective(pr, e, evals);
      if (fe < fr) {
        memcpy(s[3], e, sizeof e);
        f[3] = fe;
      } else {
        memcpy(s[3], r, sizeof r);
        f[3] = fr;
      }
      continue;
    }
    if (fr < f[2]) {
      memcpy(s[3], r, sizeof r);
      f[3] = fr;
      continue;
    }
    int outside = fr < f[3];
    for (int k = 0; k < 3; k++)
      k2[k] = outside ? c[k] + 0.5 * (r[k] - c[k]) : c[k] + 0.5 * (s[3][k] - c[k]);
    double fk = objective(pr, k2, evals);
    if (fk < (outside ? fr : f[3])) {
      memcpy(s[3], k2, sizeof k2);
      f[3] = fk;
      continue;
    }
    for (int i = 1; i < 4; i++) {
      for (int k = 0; k < 3; k++) s[i][k] = s[0][k] + 0.5 * (s[i][k] - s[0][k]);
      f[i] = objective(pr, s[i], evals);
    }
  }
  int best = 0;
  for (int i = 1; i < 4; i++)
    if (f[i] < f[best]) best = i;
  memcpy(x0, s[best], sizeof s[best]);
  return f[best];
}

static double minimise(const problem *pr, const cb_sim_params *base, int iters, double *best_x,
                       int *evals) {
  const double starts[3][3] = {
      {log(base->mfu), log(base->mbu), (double)base->step_overhead_ns / 1e3},
      {log(0.3), log(0.5), 200.0},
      {log(0.7), log(0.9), 1000.0},
  };
  double best = INFINITY;
  for (int s = 0; s < 3; s++) {
    double x[3] = {starts[s][0], starts[s][1], starts[s][2]};
    double step[3] = {0.3, 0.3, x[2] > 200 ? 0.5 * x[2] : 100.0};
    double f = nelder_mead(pr, x, step, iters, evals);
    /* A restart from the result escapes a collapsed simplex. */
    step[0] = step[1] = 0.05;
    step[2] = x[2] > 20 ? 0.05 * x[2] : 10.0;
    f = nelder_mead(pr, x, step, iters, evals);
    if (f < best) {
      best = f;
      memcpy(best_x, x, sizeof x);
    }
  }
  return best;
}

/* Share of predicted time spent in compute-bound steps. */
static double compute_share(const obs_set *o, double mfu, double mbu, double ov, size_t *bound_obs) {
  double cb = 0, all = 0;
  for (size_t i = 0; i < o->n; i++) {
    int any = 0;
    for (size_t k = 0; k < o->count[i]; k++) {
      const cb__step_unit *u = &o->u[o->first[i] + k];
      double t = cb__step_time(u, mfu, mbu, ov);
      all += t;
      if (u->c_ns / mfu > u->m_ns / mbu) {
        cb += t;
        any = 1;
      }
    }
    *bound_obs += any;
  }
  return all > 0 ? cb / all : 0;
}

/* Root mean square of (model - observed) / observed. */
static double rms_rel(const obs_set *o, const cb_sim_params *p) {
  double s = 0;
  for (size_t i = 0; i < o->n; i++) {
    double e = (predict(o, i, p->mfu, p->mbu, (double)p->step_overhead_ns) - o->y[i]) / o->y[i];
    s += e * e;
  }
  return sqrt(s / (double)o->n);
}

static void errors(const obs_set *o, const cb_sim_params *b, const cb_sim_params *f,
                   cb_calib_fit_error *e) {
  memset(e, 0, sizeof *e);
  e->n = o->n;
  if (!o->n) {
    e->rms_before = e->rms_after = e->median_abs_after = e->p90_abs_after = NAN;
    return;
  }
  e->rms_before = rms_rel(o, b);
  e->rms_after = rms_rel(o, f);
  double *a = cb_calloc(o->n, sizeof *a);
  for (size_t i = 0; i < o->n; i++)
    a[i] = fabs(predict(o, i, f->mfu, f->mbu, (double)f->step_overhead_ns) - o->y[i]) / o->y[i];
  cb_stats_sort(a, o->n);
  e->median_abs_after = cb_stats_quantile_sorted(a, o->n, 0.5);
  e->p90_abs_after = cb_stats_quantile_sorted(a, o->n, 0.9);
  cb_free(a);
}

cb_status cb_calib_fit_compute(const cb_sim_params *base, const cb_record_set *const *runs,
                               size_t n_runs, const cb_calib_fit_params *p,
                               cb_calib_fit_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  cb_status st = cb_sim_params_validate(base, err);
  if (st != CB_OK) return st;
  out->base = *base;
  out->fitted = *base;
  out->runs = n_runs;
  obs_set tt = {0}, it = {0};
  for (size_t k = 0; k < n_runs; k++) {
    run_view v;
    view_init(&v, runs[k]);
    out->records += runs[k]->count;
    itl_obs(base, &v, p->max_itl_obs / (n_runs ? n_runs : 1) + 1, &it);
    ttft_obs(base, &v, p->max_ttft_obs / (n_runs ? n_runs : 1) + 1, &tt);
    view_free(&v);
  }
  if (!tt.n && !it.n) {
    obs_free(&tt);
    obs_free(&it);
    return cb_error_set(err, CB_ERR_INVALID,
                        "nothing to fit: no request's prefill ran alone and no step was pure "
                        "decode (%zu records in %zu runs; need successful streamed requests "
                        "with several tokens)",
                        out->records, n_runs);
  }
  problem pr = {.ttft = &tt, .itl = &it,
                .fixed = {log(base->mfu), log(base->mbu), (double)base->step_overhead_ns / 1e3},
                .free_ = {1, 1, 1}};
  double x[3];
  minimise(&pr, base, p->iterations, x, &out->evaluations);
  double mfu, mbu, ov;
  unpack(&pr, x, &mfu, &mbu, &ov);
  /* Unconstrained parameters go back to the base profile's value, the rest refitted. */
  size_t cobs = 0;
  double cs = (compute_share(&tt, mfu, mbu, ov, &cobs) * (double)tt.n +
               compute_share(&it, mfu, mbu, ov, &cobs) * (double)it.n) / (double)(tt.n + it.n);
  size_t total = tt.n + it.n;
  out->mfu_identified = cobs >= 3 && cs >= 0.01;
  out->mbu_identified = total - cobs >= 3 && cs <= 0.99;
  if (!out->mfu_identified || !out->mbu_identified) {
    pr.free_[0] = out->mfu_identified;
    pr.free_[1] = out->mbu_identified;
    minimise(&pr, base, p->iterations, x, &out->evaluations);
    unpack(&pr, x, &mfu, &mbu, &ov);
  }
  out->fitted.mfu = mfu;
  out->fitted.mbu = mbu;
  out->fitted.step_overhead_ns = (uint64_t)llround(ov);
  cobs = 0;
  out->compute_bound_share = (compute_share(&tt, mfu, mbu, ov, &cobs) * (double)tt.n +
                              compute_share(&it, mfu, mbu, ov, &cobs) * (double)it.n) /
                             (double)total;
  problem pb = pr;
  out->loss_before = loss_of(&pb, base->mfu, base->mbu, (double)base->step_overhead_ns);
  out->loss_after = loss_of(&pb, out->fitted.mfu, out->fitted.mbu,
                            (double)out->fitted.step_overhead_ns);
  errors(&tt, base, &out->fitted, &out->ttft);
  errors(&it, base, &out->fitted, &out->itl);
  obs_free(&tt);
  obs_free(&it);
  return CB_OK;
}

/* ---- output ------------------------------------------------------------------------------- */

static void err_json(cb__jw *w, const char *key, const cb_calib_fit_error *e) {
  cb__jw_obj(w, key);
  cb__jw_int(w, "observations", (long long)e->n);
  cb__jw_num(w, "rms_rel_before", e->rms_before);
  cb__jw_num(w, "rms_rel_after", e->rms_after);
  cb__jw_num(w, "median_abs_rel_after", e->median_abs_after);
  cb__jw_num(w, "p90_abs_rel_after", e->p90_abs_after);
  cb__jw_end(w, '}');
}

static void values_json(cb__jw *w, const char *key, const cb_sim_params *p) {
  cb__jw_obj(w, key);
  cb__jw_num(w, "mfu", p->mfu);
  cb__jw_num(w, "mbu", p->mbu);
  cb__jw_num(w, "step_overhead_us", (double)p->step_overhead_ns / 1e3);
  cb__jw_end(w, '}');
}

void cb_calib_fit_write_json(const cb_calib_fit_result *r, const char *profile_path, cb_buf *out) {
  cb__jw w;
  cb__jw_init(&w, out);
  cb__jw_obj(&w, NULL);
  cb__jw_int(&w, "schema_version", CB_CALIB_SCHEMA_VERSION);
  cb__jw_str(&w, "kind", "calibrate.fit");
  cb__jw_obj(&w, "deployment");
  cb__jw_str(&w, "model", r->base.model.name);
  cb__jw_str(&w, "gpu", r->base.gpu.name);
  cb__jw_int(&w, "tp", r->base.tp);
  cb__jw_end(&w, '}');
  cb__jw_int(&w, "runs", (long long)r->runs);
  cb__jw_int(&w, "records", (long long)r->records);
  values_json(&w, "base", &r->base);
  values_json(&w, "fitted", &r->fitted);
  cb__jw_obj(&w, "identified");
  cb__jw_bool(&w, "mfu", r->mfu_identified);
  cb__jw_bool(&w, "mbu", r->mbu_identified);
  cb__jw_bool(&w, "step_overhead", true);
  cb__jw_end(&w, '}');
  cb__jw_num(&w, "compute_bound_share", r->compute_bound_share);
  cb__jw_obj(&w, "error");
  err_json(&w, "ttft", &r->ttft);
  err_json(&w, "itl", &r->itl);
  cb__jw_num(&w, "loss_before", r->loss_before);
  cb__jw_num(&w, "loss_after", r->loss_after);
  cb__jw_end(&w, '}');
  cb__jw_int(&w, "evaluations", r->evaluations);
  cb__jw_str(&w, "profile", profile_path);
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

static void pct(char *o, size_t n, double v) {
  if (isfinite(v)) snprintf(o, n, "%.2f%%", 100 * v);
  else snprintf(o, n, "-");
}

void cb_calib_fit_format(const cb_calib_fit_result *r, cb_buf *out) {
  cb_buf_appendf(out, "calibrate fit: %s on %d x %s, %zu records in %zu run%s\n\n",
                 r->base.model.name, r->base.tp, r->base.gpu.name, r->records, r->runs,
                 r->runs == 1 ? "" : "s");
  cb__table t;
  cb__table_init(&t, 3);
  const char *h[] = {"parameter", "base", "fitted"};
  cb__table_row(&t, h);
  char a[48], b[48];
  snprintf(a, sizeof a, "%.4f", r->base.mfu);
  snprintf(b, sizeof b, "%.4f%s", r->fitted.mfu, r->mfu_identified ? "" : " (kept)");
  const char *r1[] = {"MFU", a, b};
  cb__table_row(&t, r1);
  snprintf(a, sizeof a, "%.4f", r->base.mbu);
  snprintf(b, sizeof b, "%.4f%s", r->fitted.mbu, r->mbu_identified ? "" : " (kept)");
  const char *r2[] = {"MBU", a, b};
  cb__table_row(&t, r2);
  snprintf(a, sizeof a, "%.1f us", (double)r->base.step_overhead_ns / 1e3);
  snprintf(b, sizeof b, "%.1f us", (double)r->fitted.step_overhead_ns / 1e3);
  const char *r3[] = {"step overhead", a, b};
  cb__table_row(&t, r3);
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  cb_buf_append_str(out, "\n");
  cb__table_init(&t, 6);
  const char *h2[] = {"fit error (relative)", "observations", "RMS before", "RMS after",
                      "median after", "p90 after"};
  cb__table_row(&t, h2);
  const cb_calib_fit_error *es[2] = {&r->ttft, &r->itl};
  const char *names[2] = {"TTFT (prefill alone)", "ITL (pure decode steps)"};
  for (int i = 0; i < 2; i++) {
    char n[32], c1[32], c2[32], c3[32], c4[32];
    snprintf(n, sizeof n, "%zu", es[i]->n);
    pct(c1, sizeof c1, es[i]->rms_before);
    pct(c2, sizeof c2, es[i]->rms_after);
    pct(c3, sizeof c3, es[i]->median_abs_after);
    pct(c4, sizeof c4, es[i]->p90_abs_after);
    const char *row[] = {names[i], n, c1, c2, c3, c4};
    cb__table_row(&t, row);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  if (!r->mfu_identified)
    cb_buf_append_str(out, "  MFU kept from the base profile: no observed step was compute-bound "
                           "(measure long prompts to fit it).\n");
  if (!r->mbu_identified)
    cb_buf_append_str(out, "  MBU kept from the base profile: no observed step was memory-bound "
                           "(measure decoding to fit it).\n");
}
