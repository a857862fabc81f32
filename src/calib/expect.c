/*
 * expect.c - `calibrate expect`: the production expectation
 *     production = paper x data factor x environment factor x task factor x safety margin
 * with each factor taken from the best input given (a measurement over a stated number
 * over the default) and carrying its inputs, formula and source.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/calib.h"
#include "expect_internal.h"

#define DEFAULT_STEP_SUCCESS 0.95
#define DEFAULT_MARGIN 0.85
#define ENV_WITHIN_CAPACITY 0.95
#define ENV_FLOOR 0.3

void cb_calib_expect_default_params(cb_calib_expect_params *p) {
  /* NAN: not given; the rest zero. */
  *p = (cb_calib_expect_params){
      .paper = NAN, .metric = "accuracy", .data_factor = NAN, .js_bits = NAN,
      .task = CB_CALIB_TASK_UNSPECIFIED, .sensitivity = NAN, .env_factor = NAN,
      .env_metric = "output_tokens_per_s", .env_paper = NAN, .concurrency = NAN,
      .capacity = NAN, .task_factor = NAN, .tool_calls = -1, .step_success = NAN, .margin = NAN};
}

static bool given(double v) { return !isnan(v); }

static cb_status check_factor(const char *opt, double v, cb_error *err) {
  if (!(v > 0.0 && v <= 10.0))
    return cb_error_set(err, CB_ERR_INVALID, "%s must be in (0, 10], got %g", opt, v);
  return CB_OK;
}

static void stated(cb_calib_factor *f, const char *input, double v) {
  f->value = v;
  f->source = CB_CALIB_FROM_INPUT;
  snprintf(f->rule, sizeof f->rule, "given");
  snprintf(f->formula, sizeof f->formula, "%.4f (given)", v);
  cb__factor_num(f, input, v);
}

/* Nothing given to compute the factor from: the default value, its rule and a
   note on what to give instead. */
static cb_status assumed(cb_calib_factor *f, double v, const char *rule, const char *note) {
  f->value = v;
  f->source = CB_CALIB_FROM_DEFAULT;
  snprintf(f->rule, sizeof f->rule, "%s", rule);
  snprintf(f->formula, sizeof f->formula, "%g", v);
  snprintf(f->note, sizeof f->note, "%s", note);
  return CB_OK;
}

static cb_status data_factor(const cb_calib_expect_params *p, cb_calib_factor *f, cb_error *err) {
  int n = given(p->data_factor) + (p->drift_path != NULL) + given(p->js_bits);
  if (n > 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "data factor: give one of --data-factor, --drift and --js");
  bool s_given = given(p->sensitivity) || p->task != CB_CALIB_TASK_UNSPECIFIED;
  if (given(p->sensitivity) && !(p->sensitivity > 0.0 && isfinite(p->sensitivity)))
    return cb_error_set(err, CB_ERR_INVALID, "--sensitivity must be > 0, got %g", p->sensitivity);
  double s = given(p->sensitivity) ? p->sensitivity : cb_calib_task_sensitivity(p->task);
  char s_from[64];
  if (given(p->sensitivity))
    snprintf(s_from, sizeof s_from, "given");
  else if (p->task != CB_CALIB_TASK_UNSPECIFIED)
    snprintf(s_from, sizeof s_from, "from task %s", cb_calib_task_name(p->task));
  else
    snprintf(s_from, sizeof s_from, "the default 2.5");
  if (given(p->data_factor)) {
    cb_status st = check_factor("--data-factor", p->data_factor, err);
    if (st != CB_OK) return st;
    stated(f, "data_factor", p->data_factor);
    return CB_OK;
  }
  if (p->drift_path) return cb__expect_data_from_drift(p->drift_path, s_given, s, s_from, f, err);
  if (given(p->js_bits)) {
    if (!(p->js_bits >= 0.0 && p->js_bits <= 1.0))
      return cb_error_set(err, CB_ERR_INVALID, "--js must be in [0, 1] (bits), got %g", p->js_bits);
    f->value = cb_calib_accuracy_factor(p->js_bits, s);
    f->source = CB_CALIB_FROM_INPUT;
    snprintf(f->rule, sizeof f->rule, "max(0.5, exp(-s * JS))");
    snprintf(f->formula, sizeof f->formula, "max(0.5, exp(-%g * %.6g)) = %.4f", s, p->js_bits,
             f->value);
    snprintf(f->note, sizeof f->note, "JS given in bits; s %s", s_from);
    cb__factor_num(f, "js_bits", p->js_bits);
    cb__factor_num(f, "sensitivity", s);
    return CB_OK;
  }
  return assumed(f, 1.0, "1 (no drift information)",
                 "assumes production data look like the benchmark's; give --drift or --js");
}

static cb_status env_factor(const cb_calib_expect_params *p, cb_calib_factor *f, cb_error *err) {
  bool load = given(p->concurrency) || given(p->capacity);
  int n = given(p->env_factor) + (p->results_dir != NULL) + load;
  if (n > 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "environment factor: give one of --env-factor, --results and "
                        "--concurrency/--capacity");
  if (given(p->env_factor)) {
    cb_status st = check_factor("--env-factor", p->env_factor, err);
    if (st != CB_OK) return st;
    stated(f, "env_factor", p->env_factor);
    return CB_OK;
  }
  if (p->results_dir) {
    const char *m = p->env_metric ? p->env_metric : "output_tokens_per_s";
    double paper = p->env_paper;
    if (!given(paper)) {
      if (p->metric && !strcmp(p->metric, m))
        paper = p->paper;
      else
        return cb_error_set(err, CB_ERR_INVALID,
                            "--results needs the paper's %s to compare with: give --env-paper "
                            "(or --metric %s when --paper is that figure)",
                            m, m);
    }
    return cb_calib_env_from_results(p->results_dir, m, paper, f, err);
  }
  if (load) {
    if (!given(p->concurrency) || !given(p->capacity))
      return cb_error_set(err, CB_ERR_INVALID,
                          "environment factor: --concurrency and --capacity go together");
    if (!(p->concurrency > 0.0 && isfinite(p->concurrency)) ||
        !(p->capacity > 0.0 && isfinite(p->capacity)))
      return cb_error_set(err, CB_ERR_INVALID,
                          "--concurrency and --capacity must be > 0, got %g and %g", p->concurrency,
                          p->capacity);
    f->source = CB_CALIB_FROM_INPUT;
    cb__factor_num(f, "concurrency", p->concurrency);
    cb__factor_num(f, "capacity", p->capacity);
    if (p->concurrency <= p->capacity) {
      f->value = ENV_WITHIN_CAPACITY;
      snprintf(f->rule, sizeof f->rule, "0.95 when load <= capacity");
      snprintf(f->formula, sizeof f->formula, "load %g <= capacity %g: 0.95", p->concurrency,
               p->capacity);
      snprintf(f->note, sizeof f->note, "within capacity: a shared, loaded environment costs ~5%%");
    } else {
      double r = p->capacity / p->concurrency;
      f->value = r > ENV_FLOOR ? r : ENV_FLOOR;
      snprintf(f->rule, sizeof f->rule, "max(0.3, capacity / load) when load > capacity");
      snprintf(f->formula, sizeof f->formula, "max(0.3, %g / %g) = %.4f", p->capacity,
               p->concurrency, f->value);
      snprintf(f->note, sizeof f->note,
               "over capacity: requests queue; a run at this load (--results) measures it better");
    }
    return CB_OK;
  }
  return assumed(f, ENV_WITHIN_CAPACITY, "0.95 (assumed within capacity)",
                 "no load information; give --results DIR (best), or --concurrency and --capacity");
}

/* per_call ^ calls with the per-call success `probe agent` measured. */
static cb_status task_from_probe(const cb_calib_expect_params *p, cb_calib_factor *f, cb_error *err) {
  double s, lo, hi, mean_calls;
  cb_status st = cb__expect_task_from_probe(p->task_factor_from, &s, &lo, &hi, &mean_calls, err);
  if (st != CB_OK) return st;
  double calls = p->tool_calls >= 0 ? (double)p->tool_calls : mean_calls;
  f->value = pow(s, calls);
  f->source = CB_CALIB_FROM_MEASURED;
  snprintf(f->rule, sizeof f->rule, "step_success ^ tool_calls (step_success measured)");
  snprintf(f->formula, sizeof f->formula, "%.4f ^ %g = %.4f", s, calls, f->value);
  snprintf(f->note, sizeof f->note,
           "per-call success %.4f [%.4f, %.4f] measured by probe agent; %s", s, lo, hi,
           p->tool_calls >= 0 ? "tool calls as given" : "its runs' mean tool calls");
  cb__factor_text(f, "task_factor_from", p->task_factor_from);
  cb__factor_num(f, "tool_calls", calls);
  cb__factor_num(f, "step_success", s);
  return CB_OK;
}

static cb_status task_factor(const cb_calib_expect_params *p, cb_calib_factor *f, cb_error *err) {
  int n = given(p->task_factor) + (p->n_steps > 0) + (p->tool_calls >= 0 || p->task_factor_from);
  if (n > 1)
    return cb_error_set(err, CB_ERR_INVALID,
                        "task factor: give one of --task-factor, --steps and --tool-calls "
                        "(or --task-factor-from)");
  if (given(p->step_success) && p->task_factor_from)
    return cb_error_set(err, CB_ERR_INVALID,
                        "task factor: give one of --step-success and --task-factor-from");
  if (given(p->step_success) && p->tool_calls < 0)
    return cb_error_set(err, CB_ERR_INVALID, "--step-success applies to --tool-calls");
  if (p->task_factor_from) return task_from_probe(p, f, err);
  if (given(p->task_factor)) {
    cb_status st = check_factor("--task-factor", p->task_factor, err);
    if (st != CB_OK) return st;
    stated(f, "task_factor", p->task_factor);
    return CB_OK;
  }
  if (p->n_steps > 0) {
    double v = 1.0;
    char *w = f->formula;
    size_t left = sizeof f->formula;
    for (size_t i = 0; i < p->n_steps; i++) {
      if (!(p->steps[i] > 0.0 && p->steps[i] <= 1.0))
        return cb_error_set(err, CB_ERR_INVALID,
                            "--steps: step %zu's success rate must be in (0, 1], got %g", i + 1,
                            p->steps[i]);
      v *= p->steps[i];
      int k = snprintf(w, left, "%s%g", i ? " * " : "", p->steps[i]);
      if (k > 0 && (size_t)k < left) w += k, left -= (size_t)k;
    }
    snprintf(w, left, " = %.4f", v);
    f->value = v;
    f->source = CB_CALIB_FROM_INPUT;
    snprintf(f->rule, sizeof f->rule, "product of per-step success rates");
    cb__factor_num(f, "steps", (double)p->n_steps);
    return CB_OK;
  }
  if (p->tool_calls >= 0) {
    double s = given(p->step_success) ? p->step_success : DEFAULT_STEP_SUCCESS;
    if (!(s > 0.0 && s <= 1.0))
      return cb_error_set(err, CB_ERR_INVALID, "--step-success must be in (0, 1], got %g", s);
    f->value = pow(s, (double)p->tool_calls);
    f->source = CB_CALIB_FROM_INPUT;
    snprintf(f->rule, sizeof f->rule, "step_success ^ tool_calls");
    snprintf(f->formula, sizeof f->formula, "%g ^ %ld = %.4f", s, p->tool_calls, f->value);
    snprintf(f->note, sizeof f->note, "%s",
             p->tool_calls == 0       ? "a single step: no compounding"
             : given(p->step_success) ? "each tool call succeeds with the given rate"
                                      : "each tool call succeeds with the default rate 0.95");
    cb__factor_num(f, "tool_calls", (double)p->tool_calls);
    cb__factor_num(f, "step_success", s);
    return CB_OK;
  }
  return assumed(f, 1.0, "1 (single step)",
                 "multi-step agents: give --tool-calls N (0.95 ^ N) or --steps");
}

static cb_status margin_factor(const cb_calib_expect_params *p, cb_calib_factor *f, cb_error *err) {
  if (given(p->margin)) {
    if (!(p->margin > 0.0 && p->margin <= 1.0))
      return cb_error_set(err, CB_ERR_INVALID, "--margin must be in (0, 1], got %g", p->margin);
    stated(f, "margin", p->margin);
    snprintf(f->rule, sizeof f->rule, "safety margin");
    return CB_OK;
  }
  return assumed(f, DEFAULT_MARGIN, "safety margin",
                 "what is not modelled (day-to-day variance, new traffic)");
}

cb_status cb_calib_expect_compute(const cb_calib_expect_params *p, cb_calib_expect_result *out,
                                  cb_error *err) {
  memset(out, 0, sizeof *out);
  if (!(p->paper > 0.0) || !isfinite(p->paper))
    return cb_error_set(err, CB_ERR_INVALID, "--paper must be a number > 0, got %g", p->paper);
  out->paper = p->paper;
  snprintf(out->metric, sizeof out->metric, "%s", p->metric ? p->metric : "accuracy");
  out->data.name = "data";
  out->environment.name = "environment";
  out->task.name = "task";
  out->margin.name = "safety_margin";
  cb_status st = data_factor(p, &out->data, err);
  if (st == CB_OK) st = env_factor(p, &out->environment, err);
  if (st == CB_OK) st = task_factor(p, &out->task, err);
  if (st == CB_OK) st = margin_factor(p, &out->margin, err);
  if (st != CB_OK) return st;
  out->combined = out->data.value * out->environment.value * out->task.value * out->margin.value;
  out->expected = out->paper * out->combined;
  return CB_OK;
}
