/*
 * drift_out.c - a drift result as JSON ("kind": "calibrate.drift", documented in
 * docs/calibrate.md) and as the terminal report.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/calib.h"
#include "cstat_internal.h"

static const char *kind_name(cb_calib_dist_kind k) {
  switch (k) {
    case CB_CALIB_DIST_SAMPLE: return "sample";
    case CB_CALIB_DIST_BINNED: return "binned";
    default: return "distribution";
  }
}

static const char *sensitivity_from(const cb_calib_drift_result *r) {
  if (r->sensitivity_given) return "input";
  if (r->task == CB_CALIB_TASK_CLASSIFICATION) return "classification: 2-3";
  if (r->task == CB_CALIB_TASK_GENERATION) return "generation: 1-2";
  return "default";
}

static void side_json(cb__jw *w, const char *key, const char *path, cb_calib_dist_kind kind,
                      const char *field, uint64_t n) {
  cb__jw_obj(w, key);
  cb__jw_str(w, "path", path[0] ? path : NULL);
  cb__jw_str(w, "kind", kind_name(kind));
  cb__jw_str(w, "field", field[0] ? field : NULL);
  if (n)
    cb__jw_int(w, "sample_size", (long long)n);
  else
    cb__jw_null(w, "sample_size");
  cb__jw_end(w, '}');
}

void cb_calib_drift_write_json(const cb_calib_drift_result *r, cb_buf *out) {
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.drift");
  cb__jw_obj(&w, "inputs");
  side_json(&w, "benchmark", r->bench_path, r->bench_kind, r->bench_field, r->bench_n);
  side_json(&w, "production", r->prod_path, r->prod_kind, r->prod_field, r->prod_n);
  cb__jw_end(&w, '}');
  cb__jw_int(&w, "log_base", 2);
  cb__jw_str(&w, "unit", "bits");
  cb__jw_num(&w, "js_divergence", r->js_bits);
  cb__jw_num(&w, "js_distance", r->js_distance);
  if (r->has_interval) {
    cb__jw_obj(&w, "js_interval");
    cb__jw_str(&w, "method", "percentile bootstrap, multinomial resampling");
    cb__jw_num(&w, "level", r->interval.level);
    cb__jw_num(&w, "lo", r->interval.lo);
    cb__jw_num(&w, "hi", r->interval.hi);
    cb__jw_int(&w, "replicates", (long long)r->interval.replicates);
    cb__jw_num(&w, "replicate_mean", r->interval.replicate_mean);
    cb__jw_end(&w, '}');
  } else {
    cb__jw_null(&w, "js_interval");
  }
  cb__jw_str(&w, "js_interval_note", r->interval_note);

  cb__jw_obj(&w, "kl");
  cb__jw_num(&w, "production_benchmark", r->kl_prod_bench_bits);
  cb__jw_num(&w, "benchmark_production", r->kl_bench_prod_bits);
  cb__jw_obj(&w, "unsmoothed");
  cb__jw_num(&w, "production_benchmark", r->kl_prod_bench_raw_bits);
  cb__jw_num(&w, "benchmark_production", r->kl_bench_prod_raw_bits);
  cb__jw_end(&w, '}');
  cb__jw_obj(&w, "smoothing");
  cb__jw_str(&w, "method", "additive");
  cb__jw_num(&w, "epsilon", r->kl_epsilon);
  cb__jw_int(&w, "labels", (long long)r->n_rows);
  cb__jw_str(&w, "formula", "(share + epsilon) / (1 + labels * epsilon)");
  cb__jw_end(&w, '}');
  cb__jw_end(&w, '}');

  cb__jw_obj(&w, "entropy");
  cb__jw_num(&w, "benchmark", r->entropy_bench_bits);
  cb__jw_num(&w, "production", r->entropy_prod_bits);
  cb__jw_end(&w, '}');

  cb__jw_arr(&w, "labels");
  for (size_t i = 0; i < r->n_rows; i++) {
    const cb_calib_drift_row *row = &r->rows[i];
    cb__jw_obj(&w, NULL);
    cb__jw_str(&w, "label", row->label);
    cb__jw_num(&w, "benchmark_weight", row->bench_weight);
    cb__jw_num(&w, "production_weight", row->prod_weight);
    cb__jw_num(&w, "benchmark_share", row->bench_share);
    cb__jw_num(&w, "production_share", row->prod_share);
    cb__jw_num(&w, "difference", row->difference);
    cb__jw_num(&w, "js_contribution", row->js_bits);
    if (r->has_reweighted) cb__jw_num(&w, "accuracy", row->accuracy);
    cb__jw_end(&w, '}');
  }
  cb__jw_end(&w, ']');

  const cb_calib_drift_row *d = &r->rows[r->dominant];
  cb__jw_obj(&w, "dominant_shift");
  cb__jw_str(&w, "label", d->label);
  cb__jw_num(&w, "benchmark_share", d->bench_share);
  cb__jw_num(&w, "production_share", d->prod_share);
  cb__jw_num(&w, "difference", d->difference);
  cb__jw_str(&w, "direction",
             d->difference > 0   ? "over-represented in production"
             : d->difference < 0 ? "under-represented in production"
                                 : "unchanged");
  cb__jw_end(&w, '}');

  cb__jw_obj(&w, "severity");
  cb__jw_str(&w, "class", cb_calib_severity_name(r->severity));
  cb__jw_obj(&w, "upper_bounds");
  cb__jw_num(&w, "mild", 0.05);
  cb__jw_num(&w, "moderate", 0.15);
  cb__jw_num(&w, "significant", 0.30);
  cb__jw_end(&w, '}');
  cb__jw_bool(&w, "retrain", r->severity == CB_CALIB_DRIFT_SEVERE);
  cb__jw_str(&w, "advice", cb_calib_severity_advice(r->severity));
  cb__jw_end(&w, '}');

  cb__jw_obj(&w, "accuracy_factor");
  cb__jw_num(&w, "value", r->accuracy_factor);
  cb__jw_str(&w, "formula", "max(0.5, exp(-s * JS))");
  cb__jw_num(&w, "sensitivity", r->sensitivity);
  cb__jw_str(&w, "sensitivity_from", sensitivity_from(r));
  cb__jw_str(&w, "task", cb_calib_task_name(r->task));
  cb__jw_end(&w, '}');

  if (r->has_reweighted) {
    cb__jw_obj(&w, "reweighted");
    cb__jw_str(&w, "accuracy_file", r->accuracy_path);
    cb__jw_num(&w, "benchmark_accuracy", r->bench_accuracy);
    cb__jw_num(&w, "production_accuracy", r->prod_accuracy);
    cb__jw_num(&w, "factor", r->reweighted_factor);
    cb__jw_num(&w, "benchmark_coverage", r->bench_coverage);
    cb__jw_num(&w, "production_coverage", r->prod_coverage);
    cb__jw_end(&w, '}');
  } else {
    cb__jw_null(&w, "reweighted");
  }
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

/* ---- terminal ---------------------------------------------------------------------------- */

static void side_text(cb_buf *out, const char *path, cb_calib_dist_kind kind, const char *field,
                      uint64_t n) {
  cb_buf_appendf(out, "%s (", path[0] ? path : "-");
  if (kind == CB_CALIB_DIST_WEIGHTS)
    cb_buf_appendf(out, "distribution");
  else if (kind == CB_CALIB_DIST_SAMPLE)
    cb_buf_appendf(out, "sample of %llu, field '%s'", (unsigned long long)n, field);
  else
    cb_buf_appendf(out, "%llu values, binned", (unsigned long long)n);
  cb_buf_append_char(out, ')');
}

static void kl_text(char *out, size_t n, double v) {
  if (isinf(v))
    snprintf(out, n, "inf");
  else
    snprintf(out, n, "%.4g", v);
}

void cb_calib_drift_format(const cb_calib_drift_result *r, size_t max_rows, cb_buf *out) {
  cb_buf_appendf(out, "calibrate drift: benchmark ");
  side_text(out, r->bench_path, r->bench_kind, r->bench_field, r->bench_n);
  cb_buf_appendf(out, "\n                 vs production ");
  side_text(out, r->prod_path, r->prod_kind, r->prod_field, r->prod_n);
  cb_buf_appendf(out, "\n\n");

  cb__table t;
  bool acc = r->has_reweighted;
  cb__table_init(&t, acc ? 6 : 5);
  const char *head[] = {r->bench_kind == CB_CALIB_DIST_BINNED ? "bin" : "label",
                        "benchmark",
                        "production",
                        "difference",
                        "JS (bits)",
                        "accuracy"};
  cb__table_row(&t, head);
  size_t shown = max_rows && r->n_rows > max_rows ? max_rows : r->n_rows;
  for (size_t i = 0; i < shown; i++) {
    const cb_calib_drift_row *row = &r->rows[i];
    char c1[32], c2[32], c3[32], c4[32], c5[32];
    snprintf(c1, sizeof c1, "%.2f%%", 100.0 * row->bench_share);
    snprintf(c2, sizeof c2, "%.2f%%", 100.0 * row->prod_share);
    snprintf(c3, sizeof c3, "%+.2f pp", 100.0 * row->difference);
    snprintf(c4, sizeof c4, "%.4f", row->js_bits);
    if (isnan(row->accuracy))
      snprintf(c5, sizeof c5, "-");
    else
      snprintf(c5, sizeof c5, "%.2f%%", 100.0 * row->accuracy);
    const char *cells[] = {row->label, c1, c2, c3, c4, c5};
    cb__table_row(&t, cells);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  if (shown < r->n_rows)
    cb_buf_appendf(out, "  ... %zu more labels (all of them are in the JSON)\n", r->n_rows - shown);
  cb_buf_append_char(out, '\n');

  cb_buf_appendf(
      out,
      "  JS divergence      %.4f bits (log base 2: 0 = identical, 1 = disjoint); distance %.4f\n",
      r->js_bits, r->js_distance);
  if (r->has_interval)
    cb_buf_appendf(out,
                   "  %2.0f%% interval       [%.4f, %.4f] (percentile bootstrap, %zu replicates)\n"
                   "                     %s\n",
                   100.0 * r->interval.level, r->interval.lo, r->interval.hi,
                   r->interval.replicates, r->interval_note);
  else
    cb_buf_appendf(out, "  interval           %s\n", r->interval_note);
  char a[32], b[32], ra[32], rb[32];
  kl_text(a, sizeof a, r->kl_prod_bench_bits);
  kl_text(b, sizeof b, r->kl_bench_prod_bits);
  kl_text(ra, sizeof ra, r->kl_prod_bench_raw_bits);
  kl_text(rb, sizeof rb, r->kl_bench_prod_raw_bits);
  cb_buf_appendf(out, "  KL(prod || bench)  %s bits (unsmoothed %s)\n", a, ra);
  cb_buf_appendf(out, "  KL(bench || prod)  %s bits (unsmoothed %s)\n", b, rb);
  cb_buf_appendf(out,
                 "                     smoothing: additive, epsilon %g on each of %zu shares, "
                 "(share + epsilon) / (1 + %zu epsilon)\n",
                 r->kl_epsilon, r->n_rows, r->n_rows);
  cb_buf_appendf(out, "  entropy            benchmark %.4f bits, production %.4f bits\n",
                 r->entropy_bench_bits, r->entropy_prod_bits);
  const cb_calib_drift_row *d = &r->rows[r->dominant];
  cb_buf_appendf(out, "  dominant shift     '%s': %.2f%% -> %.2f%% (%+.2f pp, %s)\n", d->label,
                 100.0 * d->bench_share, 100.0 * d->prod_share, 100.0 * d->difference,
                 d->difference > 0   ? "over-represented in production"
                 : d->difference < 0 ? "under-represented in production"
                                     : "unchanged");
  static const char *const bounds[] = {"JS < 0.05", "0.05 <= JS < 0.15", "0.15 <= JS < 0.30",
                                       "JS >= 0.30"};
  cb_buf_appendf(out, "  severity           %s (%s): %s\n", cb_calib_severity_name(r->severity),
                 bounds[r->severity], cb_calib_severity_advice(r->severity));
  cb_buf_appendf(out, "  accuracy factor    max(0.5, exp(-%g x %.4f)) = %.4f (s = %g, %s)\n",
                 r->sensitivity, r->js_bits, r->accuracy_factor, r->sensitivity,
                 sensitivity_from(r));
  if (r->has_reweighted)
    cb_buf_appendf(out,
                   "  reweighted         benchmark accuracy %.2f%% -> %.2f%% on production's "
                   "label mix (factor %.4f; accuracy known for %.1f%% of production)\n",
                   100.0 * r->bench_accuracy, 100.0 * r->prod_accuracy, r->reweighted_factor,
                   100.0 * r->prod_coverage);
}
