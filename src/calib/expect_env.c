/*
 * expect_env.c - the measured inputs of `calibrate expect`: the environment factor from
 * a result directory (measured throughput at the production load against the paper's
 * figure) and the data factor from a `calibrate drift` result file.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "calibench/calib.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "cstat_internal.h"
#include "expect_internal.h"

static const char *const env_metrics[] = {"output_tokens_per_s", "requests_per_s",
                                          "total_tokens_per_s", "goodput_requests_per_s", NULL};

bool cb__expect_env_metric_known(const char *m) {
  for (int i = 0; env_metrics[i]; i++)
    if (!strcmp(env_metrics[i], m)) return true;
  return false;
}

void cb__factor_num(cb_calib_factor *f, const char *name, double v) {
  if (f->n_inputs >= CB_CALIB_FACTOR_MAX_INPUTS) return;
  cb_calib_factor_input *in = &f->inputs[f->n_inputs++];
  snprintf(in->name, sizeof in->name, "%s", name);
  in->value = v;
  in->text[0] = 0;
}

void cb__factor_text(cb_calib_factor *f, const char *name, const char *text) {
  if (f->n_inputs >= CB_CALIB_FACTOR_MAX_INPUTS) return;
  cb_calib_factor_input *in = &f->inputs[f->n_inputs++];
  snprintf(in->name, sizeof in->name, "%s", name);
  in->value = NAN;
  snprintf(in->text, sizeof in->text, "%s", text);
}

/* Load a JSON file whole into *root; errors name the file and line. */
static cb_status load_json(const char *path, json_t **root, cb_error *err) {
  return cb_json_load_file(path, JSON_REJECT_DUPLICATES, CB_LIMIT_JSON_BYTES, root, err);
}

cb_status cb_calib_env_from_results(const char *dir, const char *metric, double paper_value,
                                    cb_calib_factor *out, cb_error *err) {
  if (!cb__expect_env_metric_known(metric))
    return cb_error_set(err, CB_ERR_INVALID,
                        "unknown environment metric '%s' (known: output_tokens_per_s, "
                        "requests_per_s, total_tokens_per_s, goodput_requests_per_s)",
                        metric);
  if (!(paper_value > 0.0) || !isfinite(paper_value))
    return cb_error_set(err, CB_ERR_INVALID,
                        "the paper's %s must be > 0 to compare a measured run with, got %g", metric,
                        paper_value);
  double measured;
  bool predicted;
  long measured_n, failed;
  cb_status st =
      cb__cstat_results_throughput(dir, metric, &measured, &predicted, &measured_n, &failed, err);
  if (st != CB_OK) return st;
  out->value = measured / paper_value;
  out->source = predicted ? CB_CALIB_FROM_SIMULATED : CB_CALIB_FROM_MEASURED;
  snprintf(out->rule, sizeof out->rule, "%s run %s / paper %s",
           predicted ? "simulated" : "measured", metric, metric);
  snprintf(out->formula, sizeof out->formula, "%.6g / %.6g = %.4f", measured, paper_value,
           out->value);
  snprintf(out->note, sizeof out->note, "%s at the production load replaces the capacity model%s",
           predicted ? "a simulated run (sim run)" : "a measured run",
           out->value > 1.0 ? "; the run beat the paper, and the factor is kept above 1" : "");
  cb__factor_text(out, "results_dir", dir);
  cb__factor_text(out, "metric", metric);
  cb__factor_num(out, "measured", measured);
  cb__factor_num(out, "paper", paper_value);
  if (measured_n >= 0) cb__factor_num(out, "requests_measured", (double)measured_n);
  if (failed >= 0) cb__factor_num(out, "requests_failed", (double)failed);
  return CB_OK;
}

cb_status cb__expect_data_from_drift(const char *path, bool recompute, double sensitivity,
                                     const char *sensitivity_from, cb_calib_factor *out,
                                     cb_error *err) {
  json_t *root;
  cb_status st = load_json(path, &root, err);
  if (st != CB_OK) return st;
  json_t *kind = json_object_get(root, "kind");
  json_t *ver = json_object_get(root, "schema_version");
  json_t *js = json_object_get(root, "js_divergence");
  json_t *af = json_object_get(root, "accuracy_factor");
  json_t *rw = json_object_get(root, "reweighted");
  if (!json_is_string(kind) || strcmp(json_string_value(kind), "calibrate.drift"))
    st = cb_error_at(
        err, CB_ERR_PARSE, path, 0, 0,
        "key 'kind': expected \"calibrate.drift\" (the JSON of `calibrate drift --out`)");
  else if (!json_is_integer(ver) || json_integer_value(ver) != CB_CALIB_SCHEMA_VERSION)
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "key 'schema_version': expected %d",
                     CB_CALIB_SCHEMA_VERSION);
  else if (!json_is_number(js) || !(json_number_value(js) >= 0.0))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "key 'js_divergence': expected a number >= 0");
  else if (!json_is_object(af) || !json_is_number(json_object_get(af, "value")) ||
           !json_is_number(json_object_get(af, "sensitivity")))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "key 'accuracy_factor': expected an object with 'value' and 'sensitivity'");
  else if (rw && !json_is_null(rw) &&
           (!json_is_object(rw) || !json_is_number(json_object_get(rw, "factor")) ||
            !json_is_number(json_object_get(rw, "benchmark_accuracy")) ||
            !json_is_number(json_object_get(rw, "production_accuracy"))))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "key 'reweighted': expected null or an object with 'factor', "
                     "'benchmark_accuracy' and 'production_accuracy'");
  if (st != CB_OK) {
    json_decref(root);
    return st;
  }
  double jsv = json_number_value(js);
  out->source = CB_CALIB_FROM_MEASURED;
  cb__factor_text(out, "drift_file", path);
  cb__factor_num(out, "js_bits", jsv);
  if (json_is_object(rw)) {
    double b = json_number_value(json_object_get(rw, "benchmark_accuracy"));
    double p = json_number_value(json_object_get(rw, "production_accuracy"));
    out->value = json_number_value(json_object_get(rw, "factor"));
    snprintf(out->rule, sizeof out->rule, "production-mix accuracy / benchmark accuracy");
    snprintf(out->formula, sizeof out->formula, "%.6g / %.6g = %.4f", p, b, out->value);
    snprintf(out->note, sizeof out->note,
             "per-label accuracies reweighted to production's label mix (measured); the JS "
             "model would give %.4f",
             json_number_value(json_object_get(af, "value")));
    cb__factor_num(out, "benchmark_accuracy", b);
    cb__factor_num(out, "production_accuracy", p);
    json_t *cov = json_object_get(rw, "production_coverage");
    if (json_is_number(cov)) cb__factor_num(out, "production_coverage", json_number_value(cov));
  } else {
    double s = recompute ? sensitivity : json_number_value(json_object_get(af, "sensitivity"));
    out->value = cb_calib_accuracy_factor(jsv, s);
    snprintf(out->rule, sizeof out->rule, "max(0.5, exp(-s * JS))");
    snprintf(out->formula, sizeof out->formula, "max(0.5, exp(-%g * %.6g)) = %.4f", s, jsv,
             out->value);
    snprintf(out->note, sizeof out->note, "JS measured by calibrate drift; s %s",
             recompute ? sensitivity_from : "as in the drift result");
    cb__factor_num(out, "sensitivity", s);
  }
  json_decref(root);
  return CB_OK;
}
