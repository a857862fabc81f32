/*
 * out_json.c - a gate's verdicts as one JSON object (docs/gate.md, "JSON"): the status,
 * what was compared, the policy, one object per verdict with every number that decided
 * it, and the contract's traceability matrix. NaN is written as null.
 */
#include <math.h>
#include <string.h>

#include "gate_internal.h"

static void str(cb_buf *b, const char *key, const char *v, int comma) {
  cb_buf_appendf(b, "%s\"%s\":\"", comma ? "," : "", key);
  cb_buf_append_json_string(b, v, strlen(v));
  cb_buf_append_char(b, '"');
}

static void num(cb_buf *b, const char *key, double v, int comma) {
  if (isfinite(v)) cb_buf_appendf(b, "%s\"%s\":%.10g", comma ? "," : "", key, v);
  else cb_buf_appendf(b, "%s\"%s\":null", comma ? "," : "", key);
}

static const char *correction_name(cb_gate_correction c) {
  return c == CB_GATE_CORRECT_HOLM ? "holm" : c == CB_GATE_CORRECT_BONFERRONI ? "bonferroni" : "none";
}

/* The item's status across sweep points: fail > skip > pass > n/a. */
static cb_gate_status item_status(const cb_gate_result *r, size_t rule) {
  size_t nr = r->policy->n_rules;
  cb_gate_status best = CB_GATE_NA;
  static const int rank[] = {[CB_GATE_PASS] = 1, [CB_GATE_FAIL] = 3, [CB_GATE_SKIP] = 2, [CB_GATE_NA] = 0};
  for (size_t i = rule; nr && i < r->n_verdicts; i += nr)
    if (rank[r->verdicts[i].status] > rank[best]) best = r->verdicts[i].status;
  return best;
}

void cb_gate_write_json(const cb_gate_result *r, cb_buf *b) {
  const cb_gate_policy *p = r->policy;
  cb_buf_append_str(b, "{\"schema_version\":1");
  str(b, "status", cb_gate_result_status(r), 1);
  cb_buf_appendf(b, ",\"exit_code\":%d", r->blocked ? 1 : 0);
  cb_buf_append_str(b, ",\"current\":{");
  str(b, "run_id", r->current_id, 0);
  cb_buf_append_str(b, "},\"baseline\":{");
  str(b, "kind", r->baseline_kind[0] ? r->baseline_kind : "none", 0);
  str(b, "run_id", r->baseline_id, 1);
  cb_buf_append_char(b, '}');
  str(b, "series", r->series, 1);
  cb_buf_append_str(b, ",\"policy\":{");
  str(b, "source", p->source, 0);
  num(b, "alpha", p->alpha, 1);
  str(b, "correction", correction_name(p->correction), 1);
  cb_buf_appendf(b, ",\"resamples\":%zu}", p->resamples);
  if (r->stage >= 0) {
    const cb_gate_stage *s = &p->stages[r->stage];
    cb_buf_append_str(b, ",\"stage\":{");
    str(b, "name", s->name, 0);
    str(b, "owner", s->owner, 1);
    str(b, "action", cb_gate_action_name(s->action), 1);
    cb_buf_append_char(b, '}');
  } else {
    cb_buf_append_str(b, ",\"stage\":null");
  }
  cb_buf_append_str(b, ",\"verdicts\":[");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    const cb_gate_rule *ru = v->rule;
    cb_buf_append_str(b, i ? ",{" : "{");
    str(b, "rule", ru->name, 0);
    str(b, "metric", ru->metric->name, 1);
    str(b, "class", ru->class_name, 1);
    str(b, "point", v->point, 1);
    str(b, "unit", cb_store_unit_name(ru->metric->unit), 1);
    str(b, "direction", ru->direction == CB_BETTER_LOWER ? "lower" : "higher", 1);
    str(b, "action", cb_gate_action_name(v->action), 1);
    str(b, "status", cb_gate_status_name(v->status), 1);
    num(b, "baseline", v->baseline, 1);
    num(b, "current", v->current, 1);
    num(b, "change", v->change, 1);
    num(b, "change_rel", v->change_rel, 1);
    str(b, "threshold", v->threshold, 1);
    cb_buf_append_str(b, ",\"conditions\":{");
    int c = 0;
    if (ru->has_static) num(b, ru->direction == CB_BETTER_LOWER ? "max" : "min", ru->static_limit, c++);
    if (ru->has_relative) num(b, "relative", ru->relative, c++);
    if (ru->has_absolute) num(b, "absolute", ru->absolute, c++);
    if (ru->test != CB_GATE_TEST_NONE) str(b, "test", cb_gate_test_name(ru->test), c++);
    if (ru->has_tukey)
      cb_buf_appendf(b, "%s\"tukey\":{\"window\":%zu,\"k\":%g,\"min_runs\":%zu}", c++ ? "," : "",
                     ru->tukey_window, ru->tukey_k, ru->tukey_min_runs);
    cb_buf_append_char(b, '}');
    if (v->test != CB_GATE_TEST_NONE) {
      cb_buf_append_str(b, ",\"test\":{");
      str(b, "name", cb_gate_test_name(v->test), 0);
      num(b, "p_value", v->p_value, 1);
      num(b, "p_adjusted", v->p_adjusted, 1);
      num(b, "ci_low", v->ci_low, 1);
      num(b, "ci_high", v->ci_high, 1);
      cb_buf_appendf(b, ",\"n_current\":%zu,\"n_baseline\":%zu}", v->n_current, v->n_baseline);
    } else {
      cb_buf_append_str(b, ",\"test\":null");
    }
    if (ru->has_tukey) {
      cb_buf_append_str(b, ",\"tukey\":{");
      num(b, "fence", v->fence, 0);
      num(b, "q1", v->hist_q1, 1);
      num(b, "q3", v->hist_q3, 1);
      cb_buf_appendf(b, ",\"runs\":%zu}", v->hist_n);
    } else {
      cb_buf_append_str(b, ",\"tukey\":null");
    }
    str(b, "note", v->note, 1);
    cb_buf_append_char(b, '}');
  }
  cb_buf_append_str(b, "],\"traceability\":{\"stages\":[");
  for (size_t s = 0; s < p->n_stages; s++) {
    const cb_gate_stage *st = &p->stages[s];
    cb_buf_append_str(b, s ? ",{" : "{");
    str(b, "name", st->name, 0);
    str(b, "owner", st->owner, 1);
    str(b, "action", cb_gate_action_name(st->action), 1);
    cb_buf_append_str(b, ",\"requires\":[");
    for (size_t j = 0; j < st->n_requires; j++) {
      cb_buf_append_str(b, j ? ",\"" : "\"");
      const char *n = p->rules[st->requires[j]].name;
      cb_buf_append_json_string(b, n, strlen(n));
      cb_buf_append_char(b, '"');
    }
    cb_buf_append_str(b, "]}");
  }
  cb_buf_append_str(b, "],\"items\":[");
  for (size_t i = 0; i < p->n_rules; i++) {
    cb_buf_append_str(b, i ? ",{" : "{");
    str(b, "rule", p->rules[i].name, 0);
    cb_buf_append_str(b, ",\"required_by\":[");
    int k = 0;
    for (size_t s = 0; s < p->n_stages; s++)
      for (size_t j = 0; j < p->stages[s].n_requires; j++)
        if (p->stages[s].requires[j] == i) {
          cb_buf_append_str(b, k++ ? ",\"" : "\"");
          cb_buf_append_json_string(b, p->stages[s].name, strlen(p->stages[s].name));
          cb_buf_append_char(b, '"');
        }
    cb_buf_append_char(b, ']');
    str(b, "status", cb_gate_status_name(item_status(r, i)), 1);
    cb_buf_append_char(b, '}');
  }
  cb_buf_append_str(b, "]}}");
}
