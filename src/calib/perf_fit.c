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
#include "calib/perf_fit_internal.h"
#include "calibench/alloc.h"
#include "calibench/stats.h"

void cb_calib_fit_default_params(cb_calib_fit_params *p) {
  p->max_itl_obs = 20000;
  p->max_ttft_obs = 20000;
  p->iterations = 600;
}

/* ---- the loss and its minimum ------------------------------------------------------------- */

typedef struct problem {
  const cb__fit_obs *ttft, *itl;
  double fixed[3];  /* values used for parameters not free */
  int free_[3];     /* 1: fitted */
} problem;

static double predict(const cb__fit_obs *o, size_t i, double mfu, double mbu, double ov) {
  double t = 0;
  for (size_t k = 0; k < o->count[i]; k++) t += cb__step_time(&o->u[o->first[i] + k], mfu, mbu, ov);
  return t;
}

/* Mean squared log ratio: relative errors that treat a step 10% slow and 10% fast alike,
 * and the least-squares estimate of a multiplicative noise's centre (step jitter, and
 * real steps' variation, are multiplicative). */
static double group_loss(const cb__fit_obs *o, double mfu, double mbu, double ov) {
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
static double compute_share(const cb__fit_obs *o, double mfu, double mbu, double ov, size_t *bound_obs) {
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
static double rms_rel(const cb__fit_obs *o, const cb_sim_params *p) {
  double s = 0;
  for (size_t i = 0; i < o->n; i++) {
    double e = (predict(o, i, p->mfu, p->mbu, (double)p->step_overhead_ns) - o->y[i]) / o->y[i];
    s += e * e;
  }
  return sqrt(s / (double)o->n);
}

static void errors(const cb__fit_obs *o, const cb_sim_params *b, const cb_sim_params *f,
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
  cb__fit_obs tt = {0}, it = {0};
  for (size_t k = 0; k < n_runs; k++) {
    out->records += runs[k]->count;
    cb__fit_obs_collect(base, runs[k], p->max_itl_obs / (n_runs ? n_runs : 1) + 1,
                        p->max_ttft_obs / (n_runs ? n_runs : 1) + 1, &it, &tt);
  }
  if (!tt.n && !it.n) {
    cb__fit_obs_free(&tt);
    cb__fit_obs_free(&it);
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
  cb__fit_obs_free(&tt);
  cb__fit_obs_free(&it);
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
  cb__jw_begin_result(&w, out, "calibrate.fit");
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
