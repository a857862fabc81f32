/*
 * quant_stats.c - probe quant's aggregates over scored positions (probe_quant.h,
 * cb_quant_summarize), with the definitions of llama.cpp's
 * tools/perplexity/perplexity.cpp (kl_divergence(), its mean_and_uncertainty and
 * covariance lambdas, log_softmax()'s sums and its percentile lambda), so that the
 * numbers compare with what `llama-perplexity --kl-divergence` prints.
 */
#include <math.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/probe_quant.h"

typedef struct sums {
  double s, s2; /* sum, sum of squares */
} sums;

/* perplexity.cpp's mean_and_uncertainty: the mean and sqrt(var / (n - 1)), var the
 * biased variance; no uncertainty for 10 values or fewer. */
static cb_quant_est mean_unc(sums x, size_t n) {
  if (!n) return (cb_quant_est){NAN, NAN};
  double f = x.s / (double)n, df = x.s2 / (double)n - f * f;
  return (cb_quant_est){f, df > 0 && n > 10 ? sqrt(df / (double)(n - 1)) : 0};
}

/* perplexity.cpp's covariance of the two means. */
static double covariance(double sa, double sb, double sab, size_t n) {
  if (n < 10) return 0;
  double nn = (double)n;
  return (sab / nn - (sa / nn) * (sb / nn)) / (nn - 1);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* perplexity.cpp's percentile: linear between the order statistics around f * (n - 1). */
static double percentile(const double *v, size_t n, double f) {
  if (f <= 0) return v[0];
  if (f >= 1) return v[n - 1];
  double p = f * (double)(n - 1);
  size_t ip = (size_t)p;
  p -= (double)ip;
  return (1 - p) * v[ip] + p * v[ip + 1 < n ? ip + 1 : n - 1];
}

cb_status cb_quant_summarize(const cb_quant_scored *pos, size_t n, cb_quant_summary *out,
                             cb_error *err) {
  if (!pos || !n) return cb_error_set(err, CB_ERR_INVALID, "probe quant: no positions to summarise");
  cb_quant_summary o = {.positions = n};
  double *k = cb_reallocarray(NULL, n, sizeof *k);
  sums kld = {0}, dp = {0}, dp2 = {0}, nll = {0}, nll_base = {0};
  double nll_nll_base = 0;
  size_t same = 0;
  for (size_t i = 0; i < n; i++) {
    const cb_quant_scored *x = &pos[i];
    k[i] = x->kld;
    kld.s += x->kld;
    kld.s2 += x->kld * x->kld;
    same += x->top1_same != 0;
    if (!isfinite(x->lp_cand) || !isfinite(x->lp_ref)) continue;
    o.with_token++;
    /* nll of the evaluated token under each; p_diff = p - p_base (log_softmax()) */
    double a = -x->lp_cand, b = -x->lp_ref, d = exp(x->lp_cand) - exp(x->lp_ref);
    nll.s += a;
    nll.s2 += a * a;
    nll_base.s += b;
    nll_base.s2 += b * b;
    nll_nll_base += a * b;
    dp.s += d;
    dp.s2 += d * d;
    dp2.s += d * d;
    dp2.s2 += d * d * d * d;
  }
  qsort(k, n, sizeof *k, cmp_double);
  o.kld = mean_unc(kld, n);
  o.kld_min = k[0];
  o.kld_max = k[n - 1];
  o.kld_median = n % 2 ? k[n / 2] : 0.5 * (k[n / 2] + k[n / 2 - 1]);
  o.kld_p01 = percentile(k, n, 0.01);
  o.kld_p05 = percentile(k, n, 0.05);
  o.kld_p10 = percentile(k, n, 0.10);
  o.kld_p90 = percentile(k, n, 0.90);
  o.kld_p95 = percentile(k, n, 0.95);
  o.kld_p99 = percentile(k, n, 0.99);
  o.kld_p999 = percentile(k, n, 0.999);
  cb_free(k);
  double p = (double)same / (double)n;
  o.same_top = (cb_quant_est){p, n > 1 ? sqrt(p * (1 - p) / (double)(n - 1)) : NAN};
  size_t m = o.with_token;
  o.delta_p = mean_unc(dp, m);
  cb_quant_est mse = mean_unc(dp2, m);
  o.rms_dp = (cb_quant_est){sqrt(mse.value), mse.value > 0 ? 0.5 / sqrt(mse.value) * mse.se : 0};
  cb_quant_est lq = mean_unc(nll, m), lb = mean_unc(nll_base, m);
  double cov = covariance(nll.s, nll_base.s, nll_nll_base, m);
  o.ppl_cand = (cb_quant_est){exp(lq.value), exp(lq.value) * lq.se};
  o.ppl_ref = (cb_quant_est){exp(lb.value), exp(lb.value) * lb.se};
  double ratio_var = lq.se * lq.se + lb.se * lb.se - 2 * cov;
  o.ln_ppl_ratio = (cb_quant_est){lq.value - lb.value, sqrt(ratio_var > 0 ? ratio_var : 0)};
  o.ppl_ratio = (cb_quant_est){exp(o.ln_ppl_ratio.value), exp(o.ln_ppl_ratio.value) * o.ln_ppl_ratio.se};
  double pcov = o.ppl_cand.value * o.ppl_ref.value * cov;
  double diff_var = o.ppl_cand.se * o.ppl_cand.se + o.ppl_ref.se * o.ppl_ref.se - 2 * pcov;
  o.delta_ppl = (cb_quant_est){o.ppl_cand.value - o.ppl_ref.value, sqrt(diff_var > 0 ? diff_var : 0)};
  *out = o;
  return CB_OK;
}
