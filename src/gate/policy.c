/*
 * policy.c - the gate's built-in default policy (docs/gate.md, "Default policy"),
 * names of the enums, and freeing.
 *
 * The default asks, of throughput, error rate, and the p50 and p99 of TTFT and TPOT,
 * for a change that is both larger than a margin and statistically significant at
 * alpha = 0.05 (Holm across the six tests), so that a run on the same deployment never
 * blocks on noise and a real slowdown of that size does.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/gate.h"

const char *cb_gate_action_name(cb_gate_action a) {
  return a == CB_GATE_BLOCK ? "block" : a == CB_GATE_WARN ? "warn" : "info";
}

const char *cb_gate_test_name(cb_gate_test t) {
  switch (t) {
    case CB_GATE_TEST_AUTO: return "auto";
    case CB_GATE_TEST_MANNWHITNEY: return "mann-whitney";
    case CB_GATE_TEST_BOOTSTRAP: return "bootstrap";
    case CB_GATE_TEST_PAIRED: return "paired-bootstrap";
    default: return "";
  }
}

const char *cb_gate_status_name(cb_gate_status s) {
  switch (s) {
    case CB_GATE_PASS: return "pass";
    case CB_GATE_FAIL: return "fail";
    case CB_GATE_SKIP: return "skip";
    default: return "n/a";
  }
}

static void rule(cb_gate_policy *p, const char *name, const char *metric, cb_store_better dir,
                 int has_rel, double rel, int has_abs, double abs_change, cb_gate_test test) {
  cb_gate_rule *r = &p->rules[p->n_rules++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->metric = cb_store_metric_find(metric);
  r->direction = dir;
  r->action = CB_GATE_BLOCK;
  r->has_relative = has_rel;
  r->relative = rel;
  r->has_absolute = has_abs;
  r->absolute = abs_change;
  r->test = test;
}

void cb_gate_policy_default(cb_gate_policy *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->source, sizeof p->source, "built-in default");
  p->alpha = 0.05;
  p->correction = CB_GATE_CORRECT_HOLM;
  p->resamples = 2000;
  p->seed = 0;
  p->rules = cb_calloc(6, sizeof *p->rules);
  rule(p, "throughput", "throughput.output_tokens_per_s", CB_BETTER_HIGHER, 1, 0.10, 0, 0,
       CB_GATE_TEST_MANNWHITNEY);
  rule(p, "error-rate", "error_rate", CB_BETTER_LOWER, 0, 0, 1, 0.01, CB_GATE_TEST_MANNWHITNEY);
  rule(p, "ttft-p50", "ttft.p50", CB_BETTER_LOWER, 1, 0.10, 0, 0, CB_GATE_TEST_MANNWHITNEY);
  rule(p, "ttft-p99", "ttft.p99", CB_BETTER_LOWER, 1, 0.25, 0, 0, CB_GATE_TEST_BOOTSTRAP);
  rule(p, "tpot-p50", "tpot.p50", CB_BETTER_LOWER, 1, 0.10, 0, 0, CB_GATE_TEST_MANNWHITNEY);
  rule(p, "tpot-p99", "tpot.p99", CB_BETTER_LOWER, 1, 0.25, 0, 0, CB_GATE_TEST_BOOTSTRAP);
}

void cb_gate_policy_add_quality(cb_gate_policy *p, const cb_run_data *current) {
  for (size_t i = 0; i < current->n_values; i++) {
    const cb_run_value *v = &current->values[i];
    if (v->class_name[0] || strncmp(v->metric->name, "quality.", 8) ||
        strcmp(v->metric->sample, CB_SAMPLE_EVAL_ITEMS))
      continue;
    p->rules = cb_reallocarray(p->rules, p->n_rules + 1, sizeof *p->rules);
    char name[64];
    snprintf(name, sizeof name, "quality-%s", v->metric->name + 8);
    rule(p, name, v->metric->name, v->metric->better, 0, 0, 1, cb_store_quality_point(v->metric->name + 8),
         CB_GATE_TEST_PAIRED);
  }
}

void cb_gate_policy_add_probe(cb_gate_policy *p, const cb_run_data *current) {
  for (size_t i = 0; i < current->n_values; i++) {
    const cb_run_value *v = &current->values[i];
    if (v->class_name[0] || strncmp(v->metric->name, "probe.", 6) ||
        v->metric->better == CB_BETTER_NONE)
      continue;
    p->rules = cb_reallocarray(p->rules, p->n_rules + 1, sizeof *p->rules);
    char name[64];
    snprintf(name, sizeof name, "probe-%s", v->metric->name + 6);
    for (char *c = name; *c; c++)
      if (*c == '.') *c = '-';
    rule(p, name, v->metric->name, v->metric->better, 1, 0.10, 0, 0, CB_GATE_TEST_NONE);
  }
}

void cb_gate_policy_free(cb_gate_policy *p) {
  for (size_t i = 0; i < p->n_stages; i++) cb_free(p->stages[i].requires);
  cb_free(p->stages);
  cb_free(p->rules);
  memset(p, 0, sizeof *p);
}

int cb_gate_policy_needs_baseline(const cb_gate_policy *p) {
  for (size_t i = 0; i < p->n_rules; i++) {
    const cb_gate_rule *r = &p->rules[i];
    if (r->has_relative || r->has_absolute || r->test != CB_GATE_TEST_NONE) return 1;
  }
  return 0;
}

int cb_gate_policy_needs_history(const cb_gate_policy *p) {
  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].has_tukey) return 1;
  return 0;
}

size_t cb_gate_history_metrics(const cb_gate_policy *p, const char **names,
                               const char **classes, size_t *windows, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < p->n_rules && n < max; i++)
    if (p->rules[i].has_tukey) {
      names[n] = p->rules[i].metric->name;
      classes[n] = p->rules[i].class_name;
      windows[n] = p->rules[i].tukey_window;
      n++;
    }
  return n;
}
