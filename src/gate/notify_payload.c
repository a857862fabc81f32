/*
 * notify_payload.c - the body a gate notification posts (docs/gate.md,
 * "Notifications"): the generic schema, every verdict with its numbers, or a
 * Slack-compatible message (`text` + Block Kit `blocks`) naming the failing rules.
 * Every text (rule, metric, class and point names, run ids, notes) comes from files a
 * run or a policy wrote, so it is cleaned of control characters and ill-formed UTF-8
 * and escaped by jansson; in Slack's mrkdwn it is also entity-escaped, so that a name
 * cannot become a link or an @channel mention.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/utf8.h"
#include "gate_internal.h"

/* Slack's limits (Block Kit reference): 50 blocks a message, 3000 characters a
 * section's text, 150 a header's. The rules listed leave room for the other blocks. */
#define SLACK_RULES_MAX 40
#define SLACK_SECTION_MAX 3000
#define SLACK_HEADER_MAX 150

/* Untrusted text as a JSON string: control characters and ill-formed bytes replaced. */
static json_t *jtext(const char *s) {
  cb_buf b = {0};
  cb_utf8_clean(&b, s, strlen(s), 1);
  json_t *j = json_string(b.data ? b.data : "");
  cb_buf_free(&b);
  return j;
}

/* A number, or null for NaN and infinities (JSON has neither). */
static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *jtext_or_null(const char *s) { return s && s[0] ? jtext(s) : json_null(); }

static size_t count_status(const cb_gate_result *r, cb_gate_status s, int blocking_only) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_verdicts; i++)
    n += r->verdicts[i].status == s && (!blocking_only || r->verdicts[i].action == CB_GATE_BLOCK);
  return n;
}

static void put_identity(json_t *o, const cb_gate_result *r) {
  json_object_set_new(o, "current", json_pack("{s:o}", "run_id", jtext(r->current_id)));
  json_object_set_new(o, "baseline",
                      json_pack("{s:s,s:o}", "kind", r->baseline_kind[0] ? r->baseline_kind : "none",
                                "run_id", jtext_or_null(r->baseline_id)));
  json_object_set_new(o, "series", jtext(r->series));
}

static json_t *generic(const cb_gate_result *r, const char *link) {
  json_t *o = json_object();
  json_object_set_new(o, "schema", json_string("calibench.gate.notification"));
  json_object_set_new(o, "schema_version", json_integer(1));
  json_object_set_new(o, "status", json_string(cb_gate_result_status(r)));
  json_object_set_new(o, "exit_code", json_integer(r->blocked ? 1 : 0));
  put_identity(o, r);
  json_object_set_new(o, "stage", r->stage >= 0 ? jtext(r->policy->stages[r->stage].name) : json_null());
  json_object_set_new(o, "link", jtext_or_null(link));
  json_object_set_new(o, "counts",
                      json_pack("{s:I,s:I,s:I,s:I}", "rules", (json_int_t)r->n_verdicts, "failed",
                                (json_int_t)count_status(r, CB_GATE_FAIL, 0), "blocking",
                                (json_int_t)count_status(r, CB_GATE_FAIL, 1), "skipped",
                                (json_int_t)(count_status(r, CB_GATE_SKIP, 0) +
                                             count_status(r, CB_GATE_NA, 0))));
  json_t *rules = json_array();
  for (size_t i = 0; i < r->n_verdicts; i++) {
    const cb_gate_verdict *v = &r->verdicts[i];
    const cb_gate_rule *ru = v->rule;
    json_t *x = json_object();
    json_object_set_new(x, "name", jtext(ru->name));
    json_object_set_new(x, "metric", jtext(ru->metric->name));
    json_object_set_new(x, "class", jtext_or_null(ru->class_name));
    json_object_set_new(x, "point", jtext_or_null(v->point));
    json_object_set_new(x, "unit", json_string(cb_store_unit_name(ru->metric->unit)));
    json_object_set_new(x, "action", json_string(cb_gate_action_name(v->action)));
    json_object_set_new(x, "status", json_string(cb_gate_status_name(v->status)));
    /* skip and n/a were not judged: neither passed nor failed */
    json_object_set_new(x, "passed", v->status == CB_GATE_PASS   ? json_true()
                                     : v->status == CB_GATE_FAIL ? json_false()
                                                                 : json_null());
    json_object_set_new(x, "baseline", jnum(v->baseline));
    json_object_set_new(x, "current", jnum(v->current));
    json_object_set_new(x, "change", jnum(v->change));
    json_object_set_new(x, "change_rel", jnum(v->change_rel));
    json_object_set_new(x, "threshold", jtext(v->threshold));
    json_object_set_new(x, "note", jtext(v->note));
    json_array_append_new(rules, x);
  }
  json_object_set_new(o, "rules", rules);
  return o;
}

/* Slack's mrkdwn escaping ("Formatting text for app surfaces": &, < and > as HTML
 * entities), on text cleaned first. In a link's target (url) a '|', which would end
 * the target, is percent-encoded too. */
static void escape(cb_buf *b, const char *s, int url) {
  cb_buf clean = {0};
  cb_utf8_clean(&clean, s, strlen(s), 1);
  for (const char *p = clean.data ? clean.data : ""; *p; p++) {
    if (*p == '&') cb_buf_append_str(b, "&amp;");
    else if (*p == '<') cb_buf_append_str(b, "&lt;");
    else if (*p == '>') cb_buf_append_str(b, "&gt;");
    else if (url && *p == '|') cb_buf_append_str(b, "%7C");
    else cb_buf_append_char(b, *p);
  }
  cb_buf_free(&clean);
}

static void mrkdwn(cb_buf *b, const char *s) { escape(b, s, 0); }

static json_t *section(const char *text) {
  size_t n = cb_utf8_cut(text, strlen(text), SLACK_SECTION_MAX);
  return json_pack("{s:s,s:{s:s,s:s%}}", "type", "section", "text", "type", "mrkdwn", "text", text, n);
}

static void rule_line(cb_buf *b, const cb_gate_verdict *v) {
  const cb_gate_rule *ru = v->rule;
  char base[64], cur[64], chg[64], pct[32];
  cb__gate_fmt_value(ru->metric, v->baseline, base, sizeof base);
  cb__gate_fmt_value(ru->metric, v->current, cur, sizeof cur);
  cb__gate_fmt_change(ru->metric, v->change, chg, sizeof chg);
  cb__gate_fmt_pct(v->change_rel, pct, sizeof pct);
  cb_buf_append_str(b, v->action == CB_GATE_BLOCK ? ":x: *" : ":warning: *");
  mrkdwn(b, ru->name);
  if (v->point[0]) {
    cb_buf_append_str(b, " @ ");
    mrkdwn(b, v->point);
  }
  cb_buf_appendf(b, "* (%s) `", cb_gate_action_name(v->action));
  mrkdwn(b, ru->metric->name);
  if (ru->class_name[0]) {
    cb_buf_append_char(b, '@');
    mrkdwn(b, ru->class_name);
  }
  cb_buf_appendf(b, "`\nbaseline %s → current %s (%s, %s); threshold ", base, cur, chg, pct);
  mrkdwn(b, v->threshold);
  if (v->note[0]) {
    cb_buf_append_str(b, "\n_");
    mrkdwn(b, v->note);
    cb_buf_append_char(b, '_');
  }
}

static json_t *slack(const cb_gate_result *r, const char *link) {
  const char *status = cb_gate_result_status(r);
  size_t failed = count_status(r, CB_GATE_FAIL, 0);
  cb_buf head = {0}, b = {0};
  cb_buf_appendf(&head, "calibench gate: %s", r->blocked ? "BLOCKED" : r->warned ? "WARN" : "PASS");
  cb_buf_appendf(&b, "%s: %zu of %zu rules failed, run ", head.data, failed, r->n_verdicts);
  mrkdwn(&b, r->current_id);
  cb_buf_append_str(&b, " against ");
  mrkdwn(&b, r->baseline_id[0] ? r->baseline_id : "no baseline");
  json_t *o = json_object();
  json_object_set_new(o, "text", json_string(b.data)); /* the notification's fallback */
  json_t *blocks = json_array();
  json_array_append_new(blocks, json_pack("{s:s,s:{s:s,s:s%}}", "type", "header", "text", "type",
                                          "plain_text", "text", head.data,
                                          cb_utf8_cut(head.data, head.len, SLACK_HEADER_MAX)));
  cb_buf_reset(&b);
  cb_buf_appendf(&b, "*Status:* %s\n*Run:* `", status);
  mrkdwn(&b, r->current_id);
  cb_buf_appendf(&b, "`\n*Baseline:* %s `", r->baseline_kind[0] ? r->baseline_kind : "none");
  mrkdwn(&b, r->baseline_id[0] ? r->baseline_id : "-");
  cb_buf_append_str(&b, "`");
  if (r->series[0]) {
    cb_buf_append_str(&b, "\n*Series:* ");
    mrkdwn(&b, r->series);
  }
  if (r->stage >= 0) {
    cb_buf_append_str(&b, "\n*Stage:* ");
    mrkdwn(&b, r->policy->stages[r->stage].name);
  }
  cb_buf_appendf(&b, "\n*Rules:* %zu failed of %zu", failed, r->n_verdicts);
  json_array_append_new(blocks, section(b.data));
  size_t listed = 0;
  for (size_t i = 0; i < r->n_verdicts; i++) {
    if (r->verdicts[i].status != CB_GATE_FAIL) continue;
    if (listed++ == SLACK_RULES_MAX) break;
    cb_buf_reset(&b);
    rule_line(&b, &r->verdicts[i]);
    json_array_append_new(blocks, section(b.data));
  }
  if (listed > SLACK_RULES_MAX) {
    cb_buf_reset(&b);
    cb_buf_appendf(&b, "… and %zu more failed rules", failed - SLACK_RULES_MAX);
    json_array_append_new(blocks, section(b.data));
  }
  if (link && link[0]) {
    cb_buf_reset(&b);
    cb_buf_append_char(&b, '<');
    escape(&b, link, 1);
    cb_buf_append_str(&b, "|Open the results>");
    json_array_append_new(blocks, section(b.data));
  }
  json_object_set_new(o, "blocks", blocks);
  cb_buf_free(&head);
  cb_buf_free(&b);
  return o;
}

void cb_gate_notify_payload(const cb_gate_result *r, cb_gate_notify_format f, const char *link,
                            cb_buf *out) {
  json_t *o = f == CB_GATE_NOTIFY_SLACK ? slack(r, link) : generic(r, link);
  char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
  cb_buf_append_str(out, s);
  free(s);
  json_decref(o);
}
