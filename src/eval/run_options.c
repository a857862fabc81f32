/*
 * run_options.c - the metric options of `eval run` (eval_run.h): the table's options
 * listed once each, checked before a run starts, recorded in eval.json and read back
 * by the paired test, so both sides score with the settings the runs had.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "run_internal.h"

size_t cb_eval_option_defs(const cb_eval_option_def **out, size_t max) {
  size_t nm, n = 0;
  const cb_eval_metric *const *ms = cb_eval_metrics(&nm);
  for (size_t i = 0; i < nm; i++)
    for (const cb_eval_option_def *d = ms[i]->options; d && d->name; d++) {
      size_t j = 0;
      while (j < n && strcmp(out[j]->name, d->name)) j++;
      if (j == n && n < max) out[n++] = d;
    }
  return n;
}

void cb__eval_run_options(const cb_eval_run_params *p, int sentence, cb_eval_options *out) {
  out->n = p->n_opts;
  out->v = cb_calloc(p->n_opts ? p->n_opts : 1, sizeof *out->v);
  if (p->n_opts) memcpy(out->v, p->opts, p->n_opts * sizeof *out->v);
  for (size_t i = 0; i < out->n; i++) out->v[i].used = 0;
  out->sentence = sentence;
  out->threads = p->threads;
}

cb_status cb_eval_run_check_options(const cb_eval_run_params *p, cb_error *err) {
  cb_eval_options o;
  cb__eval_run_options(p, 0, &o);
  cb_status st = CB_OK;
  for (size_t i = 0; !st && i < p->n_metrics; i++) {
    const cb_eval_metric *m = cb_eval_metric_find(p->metrics[i]);
    void *state = NULL;
    if (!m) st = cb_error_set(err, CB_ERR_INVALID, "--metrics: unknown metric '%s'", p->metrics[i]);
    else if ((st = m->create(&o, &state, err)) != CB_OK) st = CB_ERR_INVALID;
    if (state) m->destroy(state);
  }
  for (size_t i = 0; !st && i < o.n; i++)
    if (!o.v[i].used)
      st = cb_error_set(err, CB_ERR_INVALID, "--%s: none of the metrics given takes it",
                        o.v[i].name);
  cb_free(o.v);
  if (!st && p->judge_rubric) {
    cb_judge_rubric r;
    st = cb_judge_rubric_load(p->judge_rubric, &r, err);
    if (!st) cb_judge_rubric_free(&r);
    else cb_error_wrap(err, "--metrics %s", p->judge_name);
    if (!st && !p->judge.url)
      st = cb_error_set(err, CB_ERR_INVALID, "--metrics %s: --judge-url is required (the judge's "
                        "base URL, ending in /v1)", p->judge_name);
    int in = isfinite(p->judge.price_input_per_1k), out = isfinite(p->judge.price_output_per_1k);
    if (!st && in != out)
      st = cb_error_set(err, CB_ERR_INVALID, "--judge-price-%s needs --judge-price-%s (calibrate "
                        "cost's per-token prices come in pairs)", in ? "input" : "output",
                        in ? "output" : "input");
  }
  return st;
}

json_t *cb__eval_options_json(const cb_eval_run_params *p) {
  json_t *o = json_object();
  for (size_t i = 0; i < p->n_opts; i++)
    json_object_set_new(o, p->opts[i].name,
                        p->opts[i].value ? json_string(p->opts[i].value) : json_true());
  return o;
}

cb_status cb__eval_options_from_json(json_t *o, cb_eval_options *out, cb_error *err) {
  out->n = 0;
  out->sentence = 0;
  out->v = cb_calloc(json_object_size(o) + 1, sizeof *out->v);
  const char *name;
  json_t *v;
  json_object_foreach(o, name, v) {
    if (!json_is_string(v) && !json_is_true(v)) {
      cb_free(out->v);
      out->v = NULL;
      return cb_error_set(err, CB_ERR_PARSE, "field 'options.%s': expected a string or true", name);
    }
    out->v[out->n++] = (cb_eval_option){name, json_is_string(v) ? json_string_value(v) : NULL, 0};
  }
  return CB_OK;
}
