/*
 * sec_gate.c - the verdicts of `calibench gate --json FILE` (docs/gate.md, "JSON"):
 * the gate's status, what was compared under which policy and stage, one row per
 * rule (and sweep point) with its baseline, current value, change, threshold,
 * p-value and action, then the traceability matrix: rules x stages with the stages'
 * owners and actions, and each rule's result.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MAX_STAGES 24

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_has_file(r, CB__REP_FILE_GATE, CB__REP_FILE_GATE);
}

static const char *str_or(const json_t *o, const char *key, const char *dflt) {
  const char *s = cb__rep_json_str(o, key);
  return s && s[0] ? s : dflt;
}

/* A rule's result, toned by the action it carried. */
static cb__rep_tone status_tone(const char *status, const char *action) {
  if (!strcmp(status, "pass")) return CB__REP_TONE_GOOD;
  if (!strcmp(status, "fail"))
    return !strcmp(action, "block") ? CB__REP_TONE_BAD
           : !strcmp(action, "warn") ? CB__REP_TONE_WARN
                                     : CB__REP_TONE_MUTED;
  return CB__REP_TONE_MUTED;
}

static void header(const json_t *g, cb__rep_doc *d) {
  const char *status = str_or(g, "status", "?");
  if (!strcmp(status, "blocked"))
    cb__rep_doc_para(d, CB__REP_TONE_BAD, "Blocked: a block rule failed (the gate exited 1).");
  else if (!strcmp(status, "warn"))
    cb__rep_doc_para(d, CB__REP_TONE_WARN, "Passed with warnings: only warn or info rules failed.");
  else if (!strcmp(status, "pass"))
    cb__rep_doc_para(d, CB__REP_TONE_GOOD, "Passed: no rule failed.");
  else
    cb__rep_doc_para(d, CB__REP_TONE_WARN, "Status: %s.", status);
  char alpha[32], resamples[32];
  cb__rep_doc_para(d, CB__REP_TONE_NONE,
                   "Run %s against baseline %s (%s); series %s; policy %s (alpha %s, %s "
                   "correction, %s bootstrap resamples).",
                   str_or(g, "current.run_id", "-"), str_or(g, "baseline.run_id", "none"),
                   str_or(g, "baseline.kind", "none"), str_or(g, "series", "-"),
                   str_or(g, "policy.source", "-"),
                   cb__rep_fmt_fixed(cb__rep_json_num(g, "policy.alpha"), 3, alpha, sizeof alpha),
                   str_or(g, "policy.correction", "-"),
                   cb__rep_fmt_si(cb__rep_json_num(g, "policy.resamples"), resamples, sizeof resamples));
  const json_t *stage = json_object_get(g, "stage");
  if (json_is_object(stage))
    cb__rep_doc_para(d, CB__REP_TONE_NONE,
                     "Stage %s, owned by %s: a rule it requires that fails is %s; rules only "
                     "other stages require are n/a.",
                     str_or(stage, "name", "-"), str_or(stage, "owner", "-"),
                     str_or(stage, "action", "-"));
}

/* "+19.1 ms (+69.9%)"; a fraction's change in percentage points. */
static void change_text(const json_t *v, const char *unit, char *out, size_t n) {
  double ch = cb__rep_json_num(v, "change"), rel = cb__rep_json_num(v, "change_rel");
  char abs_text[48], rel_text[48] = "";
  if (!isfinite(ch)) {
    snprintf(out, n, "-");
    return;
  }
  if (isfinite(rel)) snprintf(rel_text, sizeof rel_text, " (%+.1f%%)", 100 * rel);
  if (!strcmp(unit, "fraction"))
    snprintf(out, n, "%+.2f pp%s", 100 * ch, rel_text);
  else
    snprintf(out, n, "%s%s%s", ch < 0 ? "-" : "+",
             cb__rep_fmt_unit(fabs(ch), unit, abs_text, sizeof abs_text), rel_text);
}

static void verdicts(const json_t *g, cb__rep_doc *d) {
  const char *head[] = {"rule",     "metric", "action",    "result",  "baseline", "current",
                        "change",   "threshold", "test", "p (adjusted)", "note"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "llllrrrllrl", head, sizeof head / sizeof head[0]);
  size_t i;
  const json_t *v;
  json_array_foreach(json_object_get(g, "verdicts"), i, v) {
    const char *unit = str_or(v, "unit", ""), *point = str_or(v, "point", ""),
               *cls = str_or(v, "class", ""), *status = str_or(v, "status", "?"),
               *action = str_or(v, "action", "?");
    char base[48], cur[48], ch[96], p[64];
    cb__rep_table_add(&t, 0, "%s%s%s%s", str_or(v, "rule", "?"), point[0] ? " [" : "", point,
                      point[0] ? "]" : "");
    cb__rep_table_add(&t, 0, "%s%s%s%s", str_or(v, "metric", "?"), cls[0] ? " (" : "", cls,
                      cls[0] ? ")" : "");
    cb__rep_table_add(&t, 0, "%s", action);
    cb__rep_table_add(&t, status_tone(status, action), "%s", status);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_unit(cb__rep_json_num(v, "baseline"), unit, base, sizeof base));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_unit(cb__rep_json_num(v, "current"), unit, cur, sizeof cur));
    change_text(v, unit, ch, sizeof ch);
    cb__rep_table_add(&t, 0, "%s", ch);
    cb__rep_table_add(&t, 0, "%s", str_or(v, "threshold", "-"));
    cb__rep_table_add(&t, 0, "%s", str_or(v, "test.name", json_is_object(json_object_get(v, "tukey")) ? "tukey" : "-"));
    double pv = cb__rep_json_num(v, "test.p_value"), pa = cb__rep_json_num(v, "test.p_adjusted");
    if (isfinite(pv)) snprintf(p, sizeof p, "%.4f (%.4f)", pv, pa);
    else snprintf(p, sizeof p, "-");
    cb__rep_table_add(&t, 0, "%s", p);
    cb__rep_table_add(&t, 0, "%s", str_or(v, "note", ""));
  }
  if (cb__rep_table_rows(&t) > 1) cb__rep_doc_table(d, &t);
  else cb__rep_doc_para(d, CB__REP_TONE_MUTED, "The policy has no rule.");
  cb__rep_table_free(&t);
}

/* The action a rule's verdicts carried (the first of them). */
static const char *rule_action(const json_t *g, const char *rule) {
  size_t i;
  const json_t *v;
  json_array_foreach(json_object_get(g, "verdicts"), i, v)
    if (!strcmp(str_or(v, "rule", ""), rule)) return str_or(v, "action", "block");
  return "block";
}

/* Rules x stages: "required" where a stage requires the rule; each rule's result. */
static void matrix(const json_t *g, cb__rep_doc *d) {
  const json_t *stages = json_object_get(g, "traceability");
  const json_t *items = json_object_get(stages, "items");
  stages = json_object_get(stages, "stages");
  size_t ns = json_array_size(stages);
  if (!ns || !json_array_size(items)) {
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "The policy names no stages: every rule applies with its own action.");
    return;
  }
  if (ns > MAX_STAGES) ns = MAX_STAGES;
  char align[MAX_STAGES + 3] = "l";
  for (size_t s = 0; s < ns; s++) strcat(align, "l");
  strcat(align, "l");
  cb__rep_table t;
  cb__rep_table_init(&t, align);
  const char *chosen = str_or(g, "stage.name", NULL);
  cb__rep_table_add(&t, 0, "rule");
  for (size_t s = 0; s < ns; s++) {
    const json_t *st = json_array_get(stages, s);
    const char *name = str_or(st, "name", "?");
    cb__rep_table_add(&t, 0, "%s: %s, %s%s", name, str_or(st, "owner", "-"), str_or(st, "action", "-"),
                      chosen && !strcmp(chosen, name) ? " (this gate)" : "");
  }
  cb__rep_table_add(&t, 0, "result");
  size_t i;
  const json_t *it;
  json_array_foreach(items, i, it) {
    cb__rep_table_add(&t, 0, "%s", str_or(it, "rule", "?"));
    const json_t *req = json_object_get(it, "required_by");
    for (size_t s = 0; s < ns; s++) {
      const char *name = str_or(json_array_get(stages, s), "name", "");
      int required = 0;
      for (size_t k = 0; k < json_array_size(req); k++) {
        const char *rn = json_string_value(json_array_get(req, k));
        required |= rn && !strcmp(rn, name);
      }
      cb__rep_table_add(&t, 0, "%s", required ? "required" : "");
    }
    const char *status = str_or(it, "status", "?");
    cb__rep_table_add(&t, status_tone(status, rule_action(g, str_or(it, "rule", ""))), "%s", status);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  if (json_array_size(json_object_get(json_object_get(g, "traceability"), "stages")) > ns)
    cb__rep_doc_para(d, CB__REP_TONE_MUTED, "Only the first %d stages are shown.", MAX_STAGES);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_files; i++) {
    const cb__rep_file *f = &r->files[i];
    if (f->kind != CB__REP_FILE_GATE) continue;
    cb__rep_doc_heading(d, 3, NULL, "%s", f->path);
    header(f->root, d);
    verdicts(f->root, d);
    cb__rep_doc_heading(d, 3, NULL, "Traceability: rules x stages");
    matrix(f->root, d);
  }
}

const cb__rep_section cb__rep_sec_gate = {
    .id = "gate", .title = "Gate verdict", .applies = applies, .render = render};
