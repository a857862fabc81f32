/*
 * out_junit.c - a gate's verdicts as JUnit XML, which every CI system shows as test
 * results: one <testcase> per verdict; a failed rule whose action is block is a
 * <failure>, skipped and not-applicable rules are <skipped>, and a failed warn or info
 * rule passes with its note in <system-out> (JUnit has no "warning").
 */
#include <math.h>
#include <string.h>

#include "gate_internal.h"

static void xml(cb_buf *b, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '&': cb_buf_append_str(b, "&amp;"); break;
      case '<': cb_buf_append_str(b, "&lt;"); break;
      case '>': cb_buf_append_str(b, "&gt;"); break;
      case '"': cb_buf_append_str(b, "&quot;"); break;
      case '\'': cb_buf_append_str(b, "&apos;"); break;
      default:
        if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t') cb_buf_append_char(b, ' ');
        else cb_buf_append_char(b, *s);
    }
  }
}

static void details(cb_buf *b, const cb_gate_verdict *v) {
  char base[48], cur[48], ch[48], pct[24], pv[24];
  const cb_store_metric *m = v->rule->metric;
  cb__gate_fmt_value(m, v->baseline, base, sizeof base);
  cb__gate_fmt_value(m, v->current, cur, sizeof cur);
  cb__gate_fmt_change(m, v->change, ch, sizeof ch);
  cb__gate_fmt_pct(v->change_rel, pct, sizeof pct);
  cb__gate_fmt_p(v->p_value, pv, sizeof pv);
  cb_buf_appendf(b, "%s%s%s: baseline %s, current %s, change %s (%s), threshold %s, p-value %s\n",
                 m->name, v->rule->class_name[0] ? "@" : "", v->rule->class_name, base, cur, ch,
                 pct, v->threshold, pv);
}

void cb_gate_write_junit(const cb_gate_result *r, cb_buf *b) {
  size_t failures = 0, skipped = 0;
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    failures += v->status == CB_GATE_FAIL && v->action == CB_GATE_BLOCK;
    skipped += v->status == CB_GATE_SKIP || v->status == CB_GATE_NA;
  }
  const char *stage = r->stage >= 0 ? r->policy->stages[r->stage].name : "";
  cb_buf_append_str(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  cb_buf_appendf(b, "<testsuites name=\"calibench gate\" tests=\"%zu\" failures=\"%zu\" "
                 "errors=\"0\" skipped=\"%zu\">\n", r->n_verdicts, failures, skipped);
  cb_buf_append_str(b, "  <testsuite name=\"calibench gate");
  if (stage[0]) {
    cb_buf_append_str(b, ": stage ");
    xml(b, stage);
  }
  cb_buf_appendf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
                 r->n_verdicts, failures, skipped);
  cb_buf_append_str(b, "    <properties>\n      <property name=\"current\" value=\"");
  xml(b, r->current_id);
  cb_buf_append_str(b, "\"/>\n      <property name=\"baseline\" value=\"");
  xml(b, r->baseline_id);
  cb_buf_append_str(b, "\"/>\n      <property name=\"policy\" value=\"");
  xml(b, r->policy->source);
  cb_buf_appendf(b, "\"/>\n      <property name=\"alpha\" value=\"%g\"/>\n    </properties>\n",
                 r->policy->alpha);
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    cb_buf_append_str(b, "    <testcase classname=\"calibench.gate");
    if (stage[0]) {
      cb_buf_append_char(b, '.');
      xml(b, stage);
    }
    cb_buf_append_str(b, "\" name=\"");
    xml(b, v->rule->name);
    if (v->point[0]) {
      cb_buf_append_str(b, " [");
      xml(b, v->point);
      cb_buf_append_char(b, ']');
    }
    cb_buf_append_str(b, "\">\n");
    cb_buf d = {0};
    details(&d, v);
    if (v->status == CB_GATE_FAIL && v->action == CB_GATE_BLOCK) {
      cb_buf_append_str(b, "      <failure type=\"block\" message=\"");
      xml(b, v->note);
      cb_buf_append_str(b, "\">");
      xml(b, d.data);
      cb_buf_append_str(b, "</failure>\n");
    } else if (v->status == CB_GATE_SKIP || v->status == CB_GATE_NA) {
      cb_buf_append_str(b, "      <skipped message=\"");
      xml(b, v->note);
      cb_buf_append_str(b, "\"/>\n");
    } else {
      cb_buf_append_str(b, "      <system-out>");
      if (v->status == CB_GATE_FAIL)
        cb_buf_appendf(b, "%s: ", v->action == CB_GATE_WARN ? "WARNING" : "INFO");
      xml(b, d.data);
      xml(b, v->note);
      cb_buf_append_str(b, "</system-out>\n");
    }
    cb_buf_free(&d);
    cb_buf_append_str(b, "    </testcase>\n");
  }
  cb_buf_append_str(b, "  </testsuite>\n</testsuites>\n");
}
