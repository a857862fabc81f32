/*
 * evaluate.c - judging runs by a policy (gate.h has the rules of the game).
 *
 * Three passes over (pair, rule):
 *   1. values, changes, the static / relative / absolute / Tukey conditions, and the raw
 *      p-value of the statistical condition (one-sided, in the direction of "worse");
 *   2. the p-values of the whole gate adjusted together (Holm, Bonferroni or none);
 *   3. each verdict: fail when every condition that could be evaluated says regressed.
 * The contract's selected stage sets the action of the rules it requires and marks the
 * rules only other stages require as not applicable.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/stats.h"
#include "gate_internal.h"

/* A stand-in for +inf (a failed request in an adjusted sample) that the bootstrap's
 * differences can subtract without producing NaN. */
#define FAILED_SENTINEL 1e300

enum { C_STATIC, C_RELATIVE, C_ABSOLUTE, C_TEST, C_TUKEY, C_N };

typedef struct cond {
  int given, avail, regressed;
  char text[120];
} cond;

typedef struct work {
  cond c[C_N];
  int missing; /* current value missing */
} work;

/* The sample behind a metric, with failures appended as the sentinel when adjusted.
 * NULL when the run has none; *owned says whether to free it. */
static double *sample_of(const cb_run_data *r, const cb_gate_rule *rule, size_t *n, int *owned) {
  *owned = 0;
  if (!r || !r->has_samples) return NULL;
  const cb_run_samples *s = cb_run_data_samples(r, rule->metric->sample, rule->class_name);
  if (!s || !s->n) return NULL;
  if (!rule->metric->adjusted) {
    *n = s->n;
    return s->values;
  }
  const cb_run_samples *e = cb_run_data_samples(r, "error", rule->class_name);
  size_t failed = 0;
  for (size_t i = 0; e && i < e->n; i++) failed += e->values[i] != 0;
  double *v = cb_malloc((s->n + failed) * sizeof *v);
  memcpy(v, s->values, s->n * sizeof *v);
  for (size_t i = 0; i < failed; i++) v[s->n + i] = FAILED_SENTINEL;
  *n = s->n + failed;
  *owned = 1;
  return v;
}

static cb_gate_test resolve_test(const cb_gate_rule *r) {
  if (r->test != CB_GATE_TEST_AUTO) return r->test;
  if (!strcmp(r->metric->sample, CB_SAMPLE_EVAL_ITEMS)) return CB_GATE_TEST_PAIRED;
  double q = r->metric->quantile;
  return (q >= 0.9 || q == 0) ? CB_GATE_TEST_BOOTSTRAP : CB_GATE_TEST_MANNWHITNEY;
}

/* The paired test of a quality metric, through the caller's pair->paired. */
static void run_paired(const cb_gate_policy *p, const cb_gate_pair *pair, const cb_gate_rule *r,
                       uint64_t seed, cb_gate_verdict *v, cond *c) {
  const char *name = cb_gate_test_name(v->test);
  cb_error err;
  cb_error_clear(&err);
  if (!pair->baseline) {
    snprintf(c->text, sizeof c->text, "%s: no baseline", name);
  } else if (!pair->paired) {
    snprintf(c->text, sizeof c->text, "%s: not available here", name);
  } else {
    double conf = 1 - 2 * p->alpha;
    size_t n = 0;
    if (pair->paired(pair->paired_ctx, pair->current, pair->baseline, r->metric->name + 8,
                     r->class_name, p->resamples, conf > 0 ? conf : 0.5, seed, &v->p_value,
                     &v->ci_low, &v->ci_high, &n, &err) == CB_OK) {
      v->n_current = v->n_baseline = n;
      c->avail = 1;
    } else {
      snprintf(c->text, sizeof c->text, "%s: %.100s", name, err.msg);
    }
  }
}

/* Pass 1 for the statistical condition: the raw p-value (and CI). */
static void run_test(const cb_gate_policy *p, const cb_gate_pair *pair, const cb_gate_rule *r,
                     size_t rule_idx, size_t pair_idx, cb_gate_verdict *v, cond *c) {
  c->given = 1;
  v->test = resolve_test(r);
  if (v->test == CB_GATE_TEST_PAIRED) {
    run_paired(p, pair, r, cb_hash3_u64(p->seed, rule_idx, pair_idx), v, c);
    return;
  }
  size_t nc = 0, nb = 0;
  int oc = 0, ob = 0;
  double *xc = sample_of(pair->current, r, &nc, &oc);
  double *xb = sample_of(pair->baseline, r, &nb, &ob);
  if (!pair->baseline) snprintf(c->text, sizeof c->text, "%s: no baseline", cb_gate_test_name(v->test));
  else if (!xb) snprintf(c->text, sizeof c->text, "%s: the baseline has no per-request samples",
                         cb_gate_test_name(v->test));
  else if (!xc) snprintf(c->text, sizeof c->text, "%s: the current run has no per-request samples",
                         cb_gate_test_name(v->test));
  else {
    int lower = r->direction == CB_BETTER_LOWER;
    v->n_current = nc;
    v->n_baseline = nb;
    if (v->test == CB_GATE_TEST_MANNWHITNEY) {
      cb_stats_mwu_result m;
      if (cb_stats_mannwhitney(xc, nc, xb, nb, lower ? CB_STATS_GREATER : CB_STATS_LESS,
                               CB_STATS_MWU_AUTO, &m, NULL) == CB_OK) {
        v->p_value = m.p_value;
        c->avail = 1;
      }
    } else {
      cb_stats_boot_result b;
      double q = r->metric->quantile < 0 ? 0.5 : r->metric->quantile;
      uint64_t seed = cb_hash3_u64(p->seed, rule_idx, pair_idx);
      double conf = 1 - 2 * p->alpha;
      if (conf <= 0) conf = 0.5;
      if (cb_stats_bootstrap_quantile_diff(xc, nc, xb, nb, q, p->resamples, conf, seed, &b,
                                           NULL) == CB_OK) {
        double scale = r->metric->unit == CB_UNIT_MS ? 1e-6 : 1;
        v->p_value = lower ? b.p_greater : b.p_less;
        v->ci_low = b.ci_low * scale;
        v->ci_high = b.ci_high * scale;
        c->avail = 1;
      }
    }
  }
  if (oc) cb_free(xc);
  if (ob) cb_free(xb);
}

/* Pass 1 for the Tukey condition. */
static void run_tukey(const cb_gate_pair *pair, const cb_gate_rule *r, size_t hist_idx,
                      cb_gate_verdict *v, cond *c) {
  c->given = 1;
  if (!pair->history || hist_idx >= pair->n_history) {
    snprintf(c->text, sizeof c->text, "tukey: no history (the registry has no runs of this series)");
    return;
  }
  const cb_history *h = &pair->history[hist_idx];
  double *vals = cb_malloc((h->count ? h->count : 1) * sizeof *vals);
  size_t n = 0;
  for (size_t i = 0; i < h->count; i++)
    if (isfinite(h->rows[i].values[0])) vals[n++] = h->rows[i].values[0];
  v->hist_n = n;
  if (n < r->tukey_min_runs) {
    snprintf(c->text, sizeof c->text, "tukey: history has %zu run%s of this series, needs %zu", n,
             n == 1 ? "" : "s", r->tukey_min_runs);
    cb_free(vals);
    return;
  }
  cb_stats_fences f;
  cb_stats_tukey_fences(vals, n, r->tukey_k, vals, &f, NULL);
  cb_free(vals);
  int lower = r->direction == CB_BETTER_LOWER;
  v->hist_q1 = f.q1;
  v->hist_q3 = f.q3;
  v->fence = lower ? f.high : f.low;
  c->avail = isfinite(v->current);
  c->regressed = c->avail && (lower ? v->current > v->fence : v->current < v->fence);
  char fence[48];
  cb__gate_fmt_value(r->metric, v->fence, fence, sizeof fence);
  snprintf(c->text, sizeof c->text, "%s the Tukey fence %s (%s %g IQR over %zu runs)",
           c->regressed ? (lower ? "above" : "below") : "within", fence, lower ? "Q3 +" : "Q1 -",
           r->tukey_k, n);
}

static void pass1(const cb_gate_policy *p, const cb_gate_pair *pair, size_t pair_idx,
                  size_t rule_idx, size_t hist_idx, cb_gate_verdict *v, work *w) {
  const cb_gate_rule *r = &p->rules[rule_idx];
  const cb_store_metric *m = r->metric;
  int lower = r->direction == CB_BETTER_LOWER;
  double sign = lower ? 1 : -1;
  v->current = cb_run_data_value(pair->current, m->name, r->class_name);
  v->baseline = pair->baseline ? cb_run_data_value(pair->baseline, m->name, r->class_name) : NAN;
  v->change = v->current - v->baseline;
  v->change_rel = v->baseline != 0 ? v->change / fabs(v->baseline) : NAN;
  w->missing = !isfinite(v->current);
  char a[48], b[48];
  size_t off = 0;
  if (r->has_static) {
    cond *c = &w->c[C_STATIC];
    c->given = c->avail = 1;
    c->regressed = sign * (v->current - r->static_limit) > 0;
    cb__gate_fmt_value(m, r->static_limit, b, sizeof b);
    cb__gate_fmt_value(m, v->current, a, sizeof a);
    snprintf(c->text, sizeof c->text, "%s %s %s %s", a,
             c->regressed ? (lower ? ">" : "<") : (lower ? "<=" : ">="), lower ? "max" : "min", b);
    off += (size_t)snprintf(v->threshold + off, sizeof v->threshold - off, "%s%s %s",
                            off ? "; " : "", lower ? "<=" : ">=", b);
  }
  if (r->has_relative) {
    cond *c = &w->c[C_RELATIVE];
    c->given = 1;
    c->avail = isfinite(v->change_rel);
    c->regressed = c->avail && sign * v->change_rel > r->relative;
    cb__gate_fmt_pct(v->change_rel, a, sizeof a);
    cb__gate_fmt_pct(sign * r->relative, b, sizeof b);
    if (!pair->baseline) snprintf(c->text, sizeof c->text, "relative: no baseline");
    else if (v->baseline == 0)
      snprintf(c->text, sizeof c->text, "relative: the baseline is 0 (an absolute change "
               "can be judged)");
    else if (!c->avail) snprintf(c->text, sizeof c->text, "relative: no baseline value");
    else snprintf(c->text, sizeof c->text, "%s %s %s", a, c->regressed ? (lower ? ">" : "<")
                  : (lower ? "<=" : ">="), b);
    off += (size_t)snprintf(v->threshold + off, sizeof v->threshold - off, "%s%s", off ? "; " : "", b);
  }
  if (r->has_absolute) {
    cond *c = &w->c[C_ABSOLUTE];
    c->given = 1;
    c->avail = isfinite(v->change);
    c->regressed = c->avail && sign * v->change > r->absolute;
    cb__gate_fmt_change(m, v->change, a, sizeof a);
    cb__gate_fmt_change(m, sign * r->absolute, b, sizeof b);
    if (!c->avail) snprintf(c->text, sizeof c->text, "absolute: no baseline value");
    else snprintf(c->text, sizeof c->text, "%s %s %s", a, c->regressed ? (lower ? ">" : "<")
                  : (lower ? "<=" : ">="), b);
    off += (size_t)snprintf(v->threshold + off, sizeof v->threshold - off, "%s%s", off ? "; " : "", b);
  }
  if (r->test != CB_GATE_TEST_NONE) {
    run_test(p, pair, r, rule_idx, pair_idx, v, &w->c[C_TEST]);
    off += (size_t)snprintf(v->threshold + off, sizeof v->threshold - off, "%s%s p <= %g",
                            off ? "; " : "", cb_gate_test_name(v->test), p->alpha);
  }
  if (r->has_tukey) {
    run_tukey(pair, r, hist_idx, v, &w->c[C_TUKEY]);
    off += (size_t)snprintf(v->threshold + off, sizeof v->threshold - off, "%stukey k=%g/%zu runs",
                            off ? "; " : "", r->tukey_k, r->tukey_window);
  }
  if (off >= sizeof v->threshold) v->threshold[sizeof v->threshold - 1] = '\0';
}

static void adjust(const cb_gate_policy *p, cb_gate_verdict *v, size_t n) {
  double *raw = cb_malloc((n ? n : 1) * sizeof *raw);
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    raw[i] = v[i].p_value;
    m += isfinite(raw[i]);
  }
  if (p->correction == CB_GATE_CORRECT_HOLM) {
    cb_stats_holm(raw, n, raw);
  } else if (p->correction == CB_GATE_CORRECT_BONFERRONI) {
    for (size_t i = 0; i < n; i++)
      if (isfinite(raw[i])) raw[i] = fmin(1, raw[i] * (double)m);
  }
  for (size_t i = 0; i < n; i++) v[i].p_adjusted = raw[i];
  cb_free(raw);
}

static void decide(const cb_gate_policy *p, cb_gate_verdict *v, work *w) {
  cond *t = &w->c[C_TEST];
  if (t->given && t->avail) {
    t->regressed = v->p_adjusted <= p->alpha;
    char pv[24], pa[24];
    cb__gate_fmt_p(v->p_value, pv, sizeof pv);
    cb__gate_fmt_p(v->p_adjusted, pa, sizeof pa);
    if (p->correction == CB_GATE_CORRECT_NONE)
      snprintf(t->text, sizeof t->text, "%s p=%s %s %g", cb_gate_test_name(v->test), pv,
               t->regressed ? "<=" : ">", p->alpha);
    else
      snprintf(t->text, sizeof t->text, "%s p=%s (adjusted %s) %s %g", cb_gate_test_name(v->test),
               pv, pa, t->regressed ? "<=" : ">", p->alpha);
  }
  size_t off = 0;
  int avail = 0, regressed = 0;
  for (int k = 0; k < C_N; k++) {
    if (!w->c[k].given) continue;
    avail += w->c[k].avail;
    regressed += w->c[k].avail && w->c[k].regressed;
    if (off < sizeof v->note)
      off += (size_t)snprintf(v->note + off, sizeof v->note - off, "%s%s", off ? "; " : "",
                              w->c[k].text);
  }
  if (w->missing) {
    v->status = CB_GATE_FAIL;
    snprintf(v->note, sizeof v->note, "%s%s%s is missing from the current run",
             v->rule->metric->name, v->rule->class_name[0] ? " of class " : "",
             v->rule->class_name);
  } else if (!avail) {
    v->status = CB_GATE_SKIP;
  } else {
    v->status = regressed == avail ? CB_GATE_FAIL : CB_GATE_PASS;
  }
}

cb_status cb_gate_evaluate(const cb_gate_policy *p, const cb_gate_pair *pairs, size_t n,
                           const char *stage, cb_gate_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  out->policy = p;
  out->stage = -1;
  if (stage) {
    for (size_t s = 0; s < p->n_stages; s++)
      if (!strcmp(p->stages[s].name, stage)) out->stage = (int)s;
    if (out->stage < 0) {
      char known[512] = "";
      size_t off = 0;
      for (size_t s = 0; s < p->n_stages && off < sizeof known; s++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", s ? ", " : "",
                                p->stages[s].name);
      return cb_error_set(err, CB_ERR_NOT_FOUND, "stage '%s' is not in the policy %s (%s%s)",
                          stage, p->source, p->n_stages ? "its stages: " : "it has no stages",
                          known);
    }
  }
  size_t nr = p->n_rules, total = nr * n;
  out->verdicts = cb_calloc(total ? total : 1, sizeof *out->verdicts);
  out->n_verdicts = total;
  work *w = cb_calloc(total ? total : 1, sizeof *w);
  for (size_t k = 0; k < n; k++) {
    size_t hist_idx = 0;
    for (size_t i = 0; i < nr; i++) {
      cb_gate_verdict *v = &out->verdicts[k * nr + i];
      const cb_gate_rule *r = &p->rules[i];
      v->rule = r;
      v->action = r->action;
      v->p_value = v->p_adjusted = v->ci_low = v->ci_high = NAN;
      v->fence = v->hist_q1 = v->hist_q3 = NAN;
      snprintf(v->point, sizeof v->point, "%s", pairs[k].current->point);
      int req_here = 0, req_any = 0;
      for (size_t s = 0; s < p->n_stages; s++)
        for (size_t j = 0; j < p->stages[s].n_requires; j++)
          if (p->stages[s].requires[j] == i) {
            req_any = 1;
            if ((int)s == out->stage) req_here = 1;
          }
      if (out->stage >= 0 && req_here) v->action = p->stages[out->stage].action;
      pass1(p, &pairs[k], k, i, hist_idx, v, &w[k * nr + i]);
      if (r->has_tukey) hist_idx++;
      if (out->stage >= 0 && req_any && !req_here) {
        v->status = CB_GATE_NA;
        v->p_value = NAN; /* leave it out of the family */
        w[k * nr + i].c[C_TEST].given = 0;
      }
    }
  }
  adjust(p, out->verdicts, total);
  for (size_t i = 0; i < total; i++) {
    cb_gate_verdict *v = &out->verdicts[i];
    if (v->status == CB_GATE_NA) {
      snprintf(v->note, sizeof v->note, "not required by stage %s", p->stages[out->stage].name);
      continue;
    }
    decide(p, v, &w[i]);
    if (v->status == CB_GATE_FAIL) {
      if (v->action == CB_GATE_BLOCK) out->blocked = 1;
      else if (v->action == CB_GATE_WARN) out->warned = 1;
    }
  }
  cb_free(w);
  return CB_OK;
}

void cb_gate_result_free(cb_gate_result *r) {
  cb_free(r->verdicts);
  r->verdicts = NULL;
  r->n_verdicts = 0;
}

const char *cb_gate_result_status(const cb_gate_result *r) {
  return r->blocked ? "blocked" : r->warned ? "warn" : "pass";
}
