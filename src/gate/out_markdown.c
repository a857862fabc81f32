/*
 * out_markdown.c - a gate's verdicts as Markdown for a CI job summary
 * ($GITHUB_STEP_SUMMARY): the status line, one table row per verdict (baseline,
 * current, change, threshold, p-value), the reasons, the contract's traceability
 * matrix (rules x stages), and the series' last gates side by side from the registry's
 * snapshots.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "gate_internal.h"

static const char *mark(const cb_gate_verdict *v) {
  if (v->status == CB_GATE_PASS) return "✅";
  if (v->status == CB_GATE_SKIP || v->status == CB_GATE_NA) return "⏭️";
  return v->action == CB_GATE_BLOCK ? "❌" : v->action == CB_GATE_WARN ? "⚠️" : "ℹ️";
}

/* Markdown table cells: no pipes or newlines. */
static void cell(cb_buf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '|') cb_buf_append_str(b, "\\|");
    else if (*s == '\n') cb_buf_append_char(b, ' ');
    else cb_buf_append_char(b, *s);
  }
}

/* A snapshot's verdict: its status, and for a failure its action (as mark() does). */
static const char *status_mark(const char *s, const char *action) {
  if (!strcmp(s, "pass")) return "✅";
  if (strcmp(s, "fail")) return "⏭️";
  return !strcmp(action, "warn") ? "⚠️" : !strcmp(action, "info") ? "ℹ️" : "❌";
}

static void snapshots(const cb_gate_result *r, const cb_store_snapshot *snaps, size_t n, cb_buf *b) {
  json_t *docs[CB_STORE_SNAPSHOTS_KEPT * 4];
  size_t nd = 0;
  for (size_t i = 0; i < n && nd < sizeof docs / sizeof docs[0]; i++) {
    json_t *j = json_loads(snaps[i].result_json ? snaps[i].result_json : "", 0, NULL);
    if (j) docs[nd++] = j;
  }
  if (!nd) return;
  cb_buf_append_str(b, "\n### Last gates of this series\n\n| rule |");
  for (size_t i = 0; i < nd; i++) {
    json_t *cur = json_object_get(json_object_get(docs[i], "current"), "run_id");
    const char *st = json_string_value(json_object_get(docs[i], "status"));
    cb_buf_append_str(b, " `");
    cell(b, json_is_string(cur) ? json_string_value(cur) : "?");
    cb_buf_appendf(b, "` (%s) |", st ? st : "?");
  }
  cb_buf_append_str(b, "\n|---|");
  for (size_t i = 0; i < nd; i++) cb_buf_append_str(b, "---|");
  cb_buf_append_char(b, '\n');
  for (size_t k = 0; k < r->n_verdicts; k++) {
    const cb_gate_verdict *v = &r->verdicts[k];
    cb_buf_append_str(b, "| ");
    cell(b, v->rule->name);
    if (v->point[0]) {
      cb_buf_append_str(b, " @ ");
      cell(b, v->point);
    }
    cb_buf_append_str(b, " |");
    for (size_t i = 0; i < nd; i++) {
      json_t *vs = json_object_get(docs[i], "verdicts"), *x;
      size_t j;
      const char *text = " - |";
      char tmp[96];
      json_array_foreach(vs, j, x) {
        const char *rule = json_string_value(json_object_get(x, "rule"));
        const char *point = json_string_value(json_object_get(x, "point"));
        if (!rule || strcmp(rule, v->rule->name) || strcmp(point ? point : "", v->point)) continue;
        char val[48];
        json_t *c = json_object_get(x, "current");
        cb__gate_fmt_value(v->rule->metric, json_is_number(c) ? json_number_value(c) : NAN, val,
                           sizeof val);
        const char *st = json_string_value(json_object_get(x, "status"));
        const char *act = json_string_value(json_object_get(x, "action"));
        snprintf(tmp, sizeof tmp, " %s %s |", val, status_mark(st ? st : "", act ? act : ""));
        text = tmp;
        break;
      }
      cb_buf_append_str(b, text);
    }
    cb_buf_append_char(b, '\n');
  }
  for (size_t i = 0; i < nd; i++) json_decref(docs[i]);
}

static void matrix(const cb_gate_result *r, cb_buf *b) {
  const cb_gate_policy *p = r->policy;
  if (!p->n_stages) return;
  cb_buf_append_str(b, "\n### Traceability matrix\n\n| rule |");
  for (size_t s = 0; s < p->n_stages; s++) {
    cb_buf_append_str(b, " ");
    cell(b, p->stages[s].name);
    if ((int)s == r->stage) cb_buf_append_str(b, " (checked)");
    cb_buf_append_str(b, " |");
  }
  cb_buf_append_str(b, " result |\n|---|");
  for (size_t s = 0; s <= p->n_stages; s++) cb_buf_append_str(b, "---|");
  cb_buf_append_char(b, '\n');
  size_t nr = p->n_rules;
  for (size_t i = 0; i < nr; i++) {
    cb_buf_append_str(b, "| ");
    cell(b, p->rules[i].name);
    cb_buf_append_str(b, " |");
    for (size_t s = 0; s < p->n_stages; s++) {
      int req = 0;
      for (size_t j = 0; j < p->stages[s].n_requires; j++) req |= p->stages[s].requires[j] == i;
      cb_buf_append_str(b, req ? " required |" : " |");
    }
    /* worst over points */
    const cb_gate_verdict *worst = NULL;
    for (size_t k = i; k < r->n_verdicts; k += nr) {
      const cb_gate_verdict *v = &r->verdicts[k];
      if (!worst || v->status == CB_GATE_FAIL ||
          (worst->status != CB_GATE_FAIL && v->status == CB_GATE_SKIP))
        worst = v;
    }
    if (worst) cb_buf_appendf(b, " %s %s |\n", mark(worst), cb_gate_status_name(worst->status));
    else cb_buf_append_str(b, " |\n");
  }
  cb_buf_append_str(b, "| *owner* |");
  for (size_t s = 0; s < p->n_stages; s++) {
    cb_buf_append_str(b, " ");
    cell(b, p->stages[s].owner[0] ? p->stages[s].owner : "-");
    cb_buf_appendf(b, " (%s) |", cb_gate_action_name(p->stages[s].action));
  }
  cb_buf_append_str(b, " |\n");
}

void cb_gate_write_markdown(const cb_gate_result *r, const cb_store_snapshot *snaps,
                            size_t n_snaps, cb_buf *b) {
  const cb_gate_policy *p = r->policy;
  const char *st = cb_gate_result_status(r);
  cb_buf_appendf(b, "## calibench gate: %s %s\n\n",
                 r->blocked ? "❌" : r->warned ? "⚠️" : "✅", st);
  cb_buf_append_str(b, "Current `");
  cell(b, r->current_id);
  if (r->baseline_id[0]) {
    cb_buf_append_str(b, "` vs baseline `");
    cell(b, r->baseline_id);
    cb_buf_appendf(b, "` (%s)", r->baseline_kind);
  } else {
    cb_buf_append_str(b, "` (no baseline)");
  }
  cb_buf_append_str(b, " · policy `");
  cell(b, p->source);
  cb_buf_appendf(b, "` · α = %g (%s)", p->alpha,
                 p->correction == CB_GATE_CORRECT_HOLM ? "Holm"
                 : p->correction == CB_GATE_CORRECT_BONFERRONI ? "Bonferroni" : "no correction");
  if (r->series[0]) {
    cb_buf_append_str(b, " · series `");
    cell(b, r->series);
    cb_buf_append_char(b, '`');
  }
  cb_buf_append_str(b, "\n");
  if (r->stage >= 0) {
    const cb_gate_stage *s = &p->stages[r->stage];
    cb_buf_append_str(b, "\nStage **");
    cell(b, s->name);
    cb_buf_appendf(b, "** (owner: %s, on failure: %s)\n", s->owner[0] ? s->owner : "-",
                   cb_gate_action_name(s->action));
  }
  cb_buf_append_str(b, "\n| | rule | metric | baseline | current | change | threshold | p-value | verdict |\n"
                       "|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    const cb_store_metric *m = v->rule->metric;
    char base[48], cur[48], ch[48], pct[24], pv[24];
    cb__gate_fmt_value(m, v->baseline, base, sizeof base);
    cb__gate_fmt_value(m, v->current, cur, sizeof cur);
    cb__gate_fmt_change(m, v->change, ch, sizeof ch);
    cb__gate_fmt_pct(v->change_rel, pct, sizeof pct);
    cb__gate_fmt_p(v->p_adjusted, pv, sizeof pv);
    cb_buf_appendf(b, "| %s | ", mark(v));
    cell(b, v->rule->name);
    if (v->point[0]) {
      cb_buf_append_str(b, " @ ");
      cell(b, v->point);
    }
    cb_buf_append_str(b, " | ");
    cell(b, m->name);
    if (v->rule->class_name[0]) {
      cb_buf_append_str(b, " (");
      cell(b, v->rule->class_name);
      cb_buf_append_char(b, ')');
    }
    cb_buf_appendf(b, " | %s | %s | %s (%s) | ", base, cur, ch, pct);
    cell(b, v->threshold);
    cb_buf_appendf(b, " | %s | %s%s (%s)%s |\n", pv, v->status == CB_GATE_FAIL ? "**" : "",
                   cb_gate_status_name(v->status), cb_gate_action_name(v->action),
                   v->status == CB_GATE_FAIL ? "**" : "");
  }
  cb_buf_append_str(b, "\n<details><summary>Why</summary>\n\n");
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    cb_buf_append_str(b, "- **");
    cell(b, v->rule->name);
    if (v->point[0]) {
      cb_buf_append_str(b, " @ ");
      cell(b, v->point);
    }
    cb_buf_appendf(b, "** (%s): ", cb_gate_status_name(v->status));
    cell(b, v->note);
    cb_buf_append_char(b, '\n');
  }
  cb_buf_append_str(b, "\n</details>\n");
  matrix(r, b);
  snapshots(r, snaps, n_snaps, b);
}
