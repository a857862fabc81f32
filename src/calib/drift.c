/*
 * drift.c - `calibrate drift`: compare the benchmark's label distribution with
 * production's. JS divergence in bits with per-label terms, KL both ways (unsmoothed
 * and with additive smoothing), entropies, the dominant shift, a bootstrap interval,
 * the severity class and the accuracy factor max(0.5, exp(-s JS)); with per-label
 * accuracies, the benchmark accuracy reweighted to production's label mix.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"

/* ---- names and rules ------------------------------------------------------------------ */

const char *cb_calib_source_name(cb_calib_source s) {
  switch (s) {
    case CB_CALIB_FROM_INPUT: return "input";
    case CB_CALIB_FROM_MEASURED: return "measured";
    case CB_CALIB_FROM_SIMULATED: return "simulated";
    default: return "default";
  }
}

const char *cb_calib_task_name(cb_calib_task t) {
  switch (t) {
    case CB_CALIB_TASK_CLASSIFICATION: return "classification";
    case CB_CALIB_TASK_GENERATION: return "generation";
    default: return "unspecified";
  }
}

cb_status cb_calib_task_parse(const char *s, cb_calib_task *out, cb_error *err) {
  if (!strcmp(s, "classification"))
    *out = CB_CALIB_TASK_CLASSIFICATION;
  else if (!strcmp(s, "generation"))
    *out = CB_CALIB_TASK_GENERATION;
  else
    return cb_error_set(err, CB_ERR_INVALID,
                        "unknown task type '%s' (known: classification, generation)", s);
  return CB_OK;
}

double cb_calib_task_sensitivity(cb_calib_task t) {
  return t == CB_CALIB_TASK_GENERATION ? 1.5 : 2.5;
}

cb_calib_severity cb_calib_severity_of(double js_bits) {
  if (js_bits < 0.05) return CB_CALIB_DRIFT_MILD;
  if (js_bits < 0.15) return CB_CALIB_DRIFT_MODERATE;
  if (js_bits < 0.30) return CB_CALIB_DRIFT_SIGNIFICANT;
  return CB_CALIB_DRIFT_SEVERE;
}

const char *cb_calib_severity_name(cb_calib_severity s) {
  static const char *const names[] = {"mild", "moderate", "significant", "severe"};
  return s <= CB_CALIB_DRIFT_SEVERE ? names[s] : "severe";
}

const char *cb_calib_severity_advice(cb_calib_severity s) {
  switch (s) {
    case CB_CALIB_DRIFT_MILD: return "benchmark results should transfer; keep monitoring";
    case CB_CALIB_DRIFT_MODERATE:
      return "expect a measurable drop; evaluate on a sample of production data";
    case CB_CALIB_DRIFT_SIGNIFICANT:
      return "benchmark results do not transfer; evaluate on production data and consider "
             "fine-tuning";
    default: return "retrain (or fine-tune) on production data before trusting the benchmark";
  }
}

double cb_calib_accuracy_factor(double js_bits, double sensitivity) {
  if (!(js_bits >= 0.0) || !(sensitivity >= 0.0)) return NAN;
  double f = exp(-sensitivity * js_bits);
  return f > 0.5 ? f : 0.5;
}

void cb_calib_drift_default_params(cb_calib_drift_params *p) {
  memset(p, 0, sizeof *p);
  p->task = CB_CALIB_TASK_UNSPECIFIED;
  p->sensitivity = NAN;
  p->kl_epsilon = 1e-6;
  cb_stats_js_boot_default_params(&p->boot);
  p->bench_n = 0;
  p->prod_n = 0;
}

void cb_calib_drift_result_free(cb_calib_drift_result *r) {
  for (size_t i = 0; i < r->n_rows; i++) cb_free(r->rows[i].label);
  cb_free(r->rows);
  memset(r, 0, sizeof *r);
}

/* ---- computation ---------------------------------------------------------------------- */

static int by_difference(const void *a, const void *b) {
  const cb_calib_drift_row *x = a, *y = b;
  double dx = fabs(x->difference), dy = fabs(y->difference);
  if (dx != dy) return dx > dy ? -1 : 1;
  return strcmp(x->label, y->label);
}

static const char *side_desc(const cb_calib_dist *d) {
  return d->kind == CB_CALIB_DIST_WEIGHTS ? "a distribution" : "a sample";
}

static void interval_note(cb_calib_drift_result *r, const cb_calib_dist *bench,
                          const cb_calib_dist *prod) {
  char b[100], p[100];
  if (r->bench_n)
    snprintf(b, sizeof b, "benchmark resampled (n = %llu)", (unsigned long long)r->bench_n);
  else
    snprintf(b, sizeof b, "benchmark held fixed (%s of unknown size)", side_desc(bench));
  if (r->prod_n)
    snprintf(p, sizeof p, "production resampled (n = %llu)", (unsigned long long)r->prod_n);
  else
    snprintf(p, sizeof p, "production held fixed (%s of unknown size)", side_desc(prod));
  snprintf(r->interval_note, sizeof r->interval_note, "%s; %s", b, p);
}

static cb_status reweight(cb_calib_drift_result *r, const cb_calib_dist *acc, cb_error *err) {
  double sb = 0, sp = 0, cb = 0, cp = 0;
  for (size_t i = 0; i < r->n_rows; i++) {
    cb_calib_drift_row *row = &r->rows[i];
    long at = cb_calib_dist_find(acc, row->label);
    row->accuracy = at >= 0 ? acc->weights[at] : NAN;
    if (at < 0) continue;
    sb += row->bench_share * row->accuracy;
    sp += row->prod_share * row->accuracy;
    cb += row->bench_share;
    cp += row->prod_share;
  }
  if (!(cp > 0.0) || !(cb > 0.0))
    return cb_error_set(err, CB_ERR_INVALID, "%s: no label with a known accuracy has %s weight",
                        acc->path, cp > 0.0 ? "benchmark" : "production");
  r->has_reweighted = true;
  r->bench_coverage = cb;
  r->prod_coverage = cp;
  r->bench_accuracy = sb / cb;
  r->prod_accuracy = sp / cp;
  r->reweighted_factor = r->prod_accuracy / r->bench_accuracy;
  snprintf(r->accuracy_path, sizeof r->accuracy_path, "%s", acc->path);
  return CB_OK;
}

static void scale_by_max(double *w, size_t n) {
  double max = 0.0;
  for (size_t i = 0; i < n; i++)
    if (w[i] > max) max = w[i];
  if (max > 0.0)
    for (size_t i = 0; i < n; i++) w[i] /= max;
}

static cb_status check_side(const cb_calib_dist *d, const char *name, cb_error *err) {
  const char *path = d->path[0] ? d->path : name;
  if (d->len == 0)
    return cb_error_set(err, CB_ERR_INVALID, "%s: the %s distribution is empty", path, name);
  for (size_t i = 0; i < d->len; i++)
    if (!(d->weights[i] >= 0.0) || !isfinite(d->weights[i]))
      return cb_error_set(err, CB_ERR_INVALID,
                          "%s: label '%s': weight %g is not a non-negative number", path,
                          d->labels[i], d->weights[i]);
  if (!(cb_calib_dist_total(d) > 0.0))
    return cb_error_set(err, CB_ERR_INVALID, "%s: every %s weight is 0", path, name);
  return CB_OK;
}

cb_status cb_calib_drift_compute(const cb_calib_dist *bench, const cb_calib_dist *prod,
                                 const cb_calib_dist *label_accuracy,
                                 const cb_calib_drift_params *p, cb_calib_drift_result *out,
                                 cb_error *err) {
  memset(out, 0, sizeof *out);
  cb_status st = check_side(bench, "benchmark", err);
  if (st == CB_OK) st = check_side(prod, "production", err);
  if (st != CB_OK) return st;
  if (!isnan(p->sensitivity) && !(p->sensitivity > 0.0 && isfinite(p->sensitivity)))
    return cb_error_set(err, CB_ERR_INVALID, "sensitivity must be > 0, got %g", p->sensitivity);
  if (!(p->kl_epsilon >= 0.0 && p->kl_epsilon < 1.0))
    return cb_error_set(err, CB_ERR_INVALID, "KL smoothing epsilon must be in [0, 1), got %g",
                        p->kl_epsilon);

  /* the union of labels: the benchmark's in order, then production's new ones */
  size_t k = bench->len;
  for (size_t i = 0; i < prod->len; i++)
    if (cb_calib_dist_find(bench, prod->labels[i]) < 0) k++;
  double *pw = cb_calloc(k, sizeof *pw), *qw = cb_calloc(k, sizeof *qw);
  double *terms = cb_calloc(k, sizeof *terms), *ps = cb_calloc(k, sizeof *ps),
         *qs = cb_calloc(k, sizeof *qs);
  out->rows = cb_calloc(k, sizeof *out->rows);
  out->n_rows = k;
  for (size_t i = 0; i < bench->len; i++) {
    out->rows[i].label = cb_strdup(bench->labels[i]);
    pw[i] = bench->weights[i];
    long at = cb_calib_dist_find(prod, bench->labels[i]);
    if (at >= 0) qw[i] = prod->weights[at];
  }
  for (size_t i = 0, j = bench->len; i < prod->len; i++)
    if (cb_calib_dist_find(bench, prod->labels[i]) < 0) {
      out->rows[j].label = cb_strdup(prod->labels[i]);
      qw[j++] = prod->weights[i];
    }

  /* Shares do not change when a side is scaled; scaled by its largest weight, a side
   * sums to at most k, where weights near DBL_MAX would have summed to infinity. */
  scale_by_max(pw, k);
  scale_by_max(qw, k);
  double sp = 0.0, sq = 0.0;
  for (size_t i = 0; i < k; i++) sp += pw[i], sq += qw[i];
  out->js_bits = cb_stats_js_terms(pw, qw, k, 2.0, terms);
  if (!isfinite(out->js_bits)) {
    st = cb_error_set(err, CB_ERR_INVALID,
                      "%s, %s: the Jensen-Shannon divergence is not a number; no verdict",
                      bench->path[0] ? bench->path : "benchmark",
                      prod->path[0] ? prod->path : "production");
    goto out;
  }
  out->js_distance = sqrt(out->js_bits);
  out->kl_bench_prod_raw_bits = cb_stats_kl(pw, qw, k, 2.0);
  out->kl_prod_bench_raw_bits = cb_stats_kl(qw, pw, k, 2.0);
  cb_stats_smooth_additive(pw, k, p->kl_epsilon, ps, NULL);
  cb_stats_smooth_additive(qw, k, p->kl_epsilon, qs, NULL);
  out->kl_bench_prod_bits = cb_stats_kl(ps, qs, k, 2.0);
  out->kl_prod_bench_bits = cb_stats_kl(qs, ps, k, 2.0);
  out->kl_epsilon = p->kl_epsilon;
  out->entropy_bench_bits = cb_stats_entropy(pw, k, 2.0);
  out->entropy_prod_bits = cb_stats_entropy(qw, k, 2.0);
  for (size_t i = 0; i < k; i++) {
    cb_calib_drift_row *row = &out->rows[i];
    row->bench_weight = i < bench->len ? bench->weights[i] : 0.0;
    long at = cb_calib_dist_find(prod, row->label);
    row->prod_weight = at >= 0 ? prod->weights[at] : 0.0;
    row->bench_share = pw[i] / sp;
    row->prod_share = qw[i] / sq;
    row->difference = row->prod_share - row->bench_share;
    row->js_bits = terms[i];
    row->accuracy = NAN;
  }

  /* the interval, on the union in its original order */
  out->bench_n = bench->sample_size ? bench->sample_size : p->bench_n;
  out->prod_n = prod->sample_size ? prod->sample_size : p->prod_n;
  if (p->boot.replicates == 0) {
    snprintf(out->interval_note, sizeof out->interval_note, "no interval: bootstrap disabled");
  } else if (!out->bench_n && !out->prod_n) {
    snprintf(out->interval_note, sizeof out->interval_note,
             "no interval: both inputs are distributions of unknown sample size (give "
             "--bench-n/--prod-n)");
  } else {
    st = cb_stats_js_bootstrap(pw, qw, k, out->bench_n, out->prod_n, &p->boot, &out->interval, err);
    if (st != CB_OK) goto out;
    out->has_interval = true;
    interval_note(out, bench, prod);
  }

  out->bench_kind = bench->kind;
  out->prod_kind = prod->kind;
  snprintf(out->bench_path, sizeof out->bench_path, "%s", bench->path);
  snprintf(out->prod_path, sizeof out->prod_path, "%s", prod->path);
  snprintf(out->bench_field, sizeof out->bench_field, "%s", bench->field);
  snprintf(out->prod_field, sizeof out->prod_field, "%s", prod->field);
  if (bench->kind != CB_CALIB_DIST_BINNED || prod->kind != CB_CALIB_DIST_BINNED)
    qsort(out->rows, k, sizeof *out->rows, by_difference);
  out->dominant = 0;
  for (size_t i = 1; i < k; i++)
    if (fabs(out->rows[i].difference) > fabs(out->rows[out->dominant].difference))
      out->dominant = i;

  out->severity = cb_calib_severity_of(out->js_bits);
  out->task = p->task;
  out->sensitivity_given = !isnan(p->sensitivity);
  out->sensitivity = out->sensitivity_given ? p->sensitivity : cb_calib_task_sensitivity(p->task);
  out->accuracy_factor = cb_calib_accuracy_factor(out->js_bits, out->sensitivity);
  if (label_accuracy) st = reweight(out, label_accuracy, err);
out:
  cb_free(pw);
  cb_free(qw);
  cb_free(terms);
  cb_free(ps);
  cb_free(qs);
  if (st != CB_OK) cb_calib_drift_result_free(out);
  return st;
}
