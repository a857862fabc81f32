/*
 * out_text.c - a gate's verdicts for a terminal: a status line, one row per verdict
 * (baseline, current, change, adjusted p-value, threshold) and the reason under each
 * rule that did not pass.
 */
#include <stdio.h>
#include <string.h>

#include "gate_internal.h"

void cb_gate_write_text(const cb_gate_result *r, cb_buf *b) {
  const cb_gate_policy *p = r->policy;
  size_t blocking = 0, warnings = 0;
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    if (v->status != CB_GATE_FAIL) continue;
    blocking += v->action == CB_GATE_BLOCK;
    warnings += v->action == CB_GATE_WARN;
  }
  cb_buf_appendf(b, "calibench gate: %s (%zu blocking failure%s, %zu warning%s)\n",
                 r->blocked ? "BLOCKED" : r->warned ? "PASS with warnings" : "PASS", blocking,
                 blocking == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  cb_buf_appendf(b, "  current %s, baseline %s (%s), policy %s, alpha %g\n", r->current_id,
                 r->baseline_id[0] ? r->baseline_id : "-", r->baseline_kind, p->source, p->alpha);
  if (r->stage >= 0)
    cb_buf_appendf(b, "  stage %s (owner %s, on failure %s)\n", p->stages[r->stage].name,
                   p->stages[r->stage].owner[0] ? p->stages[r->stage].owner : "-",
                   cb_gate_action_name(p->stages[r->stage].action));
  cb_buf_appendf(b, "  %-5s %-6s %-24s %12s %12s %18s %9s  %s\n", "", "action", "rule",
                 "baseline", "current", "change", "p-value", "threshold");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    const cb_store_metric *m = v->rule->metric;
    char name[160], base[48], cur[48], ch[48], pct[24], change[80], pv[24];
    snprintf(name, sizeof name, "%s%s%s", v->rule->name, v->point[0] ? " @ " : "", v->point);
    cb__gate_fmt_value(m, v->baseline, base, sizeof base);
    cb__gate_fmt_value(m, v->current, cur, sizeof cur);
    cb__gate_fmt_change(m, v->change, ch, sizeof ch);
    cb__gate_fmt_pct(v->change_rel, pct, sizeof pct);
    snprintf(change, sizeof change, "%.48s %.24s", ch, pct);
    cb__gate_fmt_p(v->p_adjusted, pv, sizeof pv);
    const char *st = v->status == CB_GATE_PASS ? "ok" : v->status == CB_GATE_FAIL ? "FAIL"
                     : v->status == CB_GATE_SKIP ? "skip" : "n/a";
    cb_buf_appendf(b, "  %-5s %-6s %-24s %12s %12s %18s %9s  %s\n", st,
                   cb_gate_action_name(v->action), name, base, cur, change, pv, v->threshold);
    if (v->status != CB_GATE_PASS) cb_buf_appendf(b, "        %s\n", v->note);
  }
}
