/*
 * sec_probe_dialog.c - `probe dialog`'s part of the Probes section (sec_probe.c):
 * satisfaction by recall depth (a curve with its Wilson interval, and a table), TTFT
 * and prompt tokens per turn as the conversation grows, and the failing checks with
 * the answers that failed them. Answers are the model's text: the document escapes
 * every cell, and they are cut to one line here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "report_internal.h"

static double num(json_t *o, const char *key) { return cb__rep_json_key_num(o, key); }

static void depth_part(cb__rep_doc *d, json_t *doc) {
  json_t *rows = json_object_get(doc, "by_depth");
  if (!json_array_size(rows)) return;
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "dialog-depth", "Satisfaction by recall depth (turns since the slot was set)");
  cb__rep_axis_count(&c.x, "recall depth (turns)");
  c.x.from_zero = 1;
  cb__rep_axis_share(&c.y, "satisfied");
  cb__rep_probe_line(&c, 0, "satisfied", rows, "depth", "rate")->markers = 1;
  cb__rep_probe_line(&c, 0, "interval low", rows, "depth", "lo")->dashed = 1;
  cb__rep_probe_line(&c, 0, "interval high", rows, "depth", "hi")->dashed = 1;
  cb__rep_doc_chart_end(d, &c, NULL);

  cb__rep_table t;
  size_t i;
  json_t *row;
  const char *head[] = {"depth", "checks", "satisfied", "interval"};
  cb__rep_table_init_head(&t, "rrrr", head, 4);
  json_array_foreach(rows, i, row) {
    cb__rep_table_add(&t, 0, "%.0f", num(row, "depth"));
    cb__rep_table_add(&t, 0, "%.0f", num(row, "n"));
    cb__rep_table_add(&t, 0, "%.1f%%", 100 * num(row, "rate"));
    cb__rep_table_add(&t, CB__REP_TONE_MUTED, "%.1f \xE2\x80\x93 %.1f%%", 100 * num(row, "lo"),
                      100 * num(row, "hi"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void turn_part(cb__rep_doc *d, json_t *doc) {
  json_t *rows = json_object_get(doc, "by_turn");
  if (!json_array_size(rows)) return;
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "dialog-ttft", "TTFT per turn as the conversation grows");
  cb__rep_axis_count(&c.x, "turn");
  cb__rep_axis_latency(&c.y, "TTFT");
  cb__rep_probe_line(&c, 0, "p50", rows, "turn", "ttft_ms.p50")->markers = 1;
  cb__rep_series *p90 = cb__rep_probe_line(&c, 0, "p90", rows, "turn", "ttft_ms.p90");
  p90->markers = 1;
  p90->dashed = 1;
  cb__rep_doc_chart_end(d, &c, "no turn was answered");

  cb__rep_table t;
  size_t i;
  json_t *row;
  const char *head[] = {"turn", "answers", "prompt tokens", "TTFT p50", "checks", "satisfied", "asked back"};
  cb__rep_table_init_head(&t, "rrrrrrr", head, 7);
  json_array_foreach(rows, i, row) {
    json_t *ttft = json_object_get(row, "ttft_ms"), *checks = json_object_get(row, "checks");
    char p[32];
    cb__rep_probe_fmt(round(num(row, "prompt_tokens_mean")), p, sizeof p);
    cb__rep_table_add(&t, 0, "%.0f", num(row, "turn"));
    cb__rep_table_add(&t, 0, "%.0f", num(row, "answers"));
    cb__rep_table_add(&t, 0, "%s", p);
    if (isfinite(num(ttft, "p50"))) cb__rep_table_add(&t, 0, "%.1f ms", num(ttft, "p50"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    cb__rep_table_add(&t, 0, "%.0f", num(checks, "n"));
    if (num(checks, "n") > 0) cb__rep_table_add(&t, 0, "%.1f%%", 100 * num(checks, "rate"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    cb__rep_table_add(&t, 0, "%.0f", num(row, "clarifications"));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

/* At most this many bytes of an answer in a cell (the file keeps more). */
#define ANSWER_CELL 160

static void failures_part(cb__rep_doc *d, json_t *doc) {
  json_t *rows = json_object_get(doc, "failures");
  if (!json_array_size(rows)) return;
  cb__rep_doc_para(d, 0, "Failing checks (%.0f in all; the first %zu with their answers):",
                   num(doc, "failed_checks"), json_array_size(rows));
  cb__rep_table t;
  const char *head[] = {"scenario", "rep", "turn", "check", "depth", "answer"};
  cb__rep_table_init_head(&t, "lrrlrl", head, 6);
  size_t i;
  json_t *row;
  json_array_foreach(rows, i, row) {
    const char *scenario = json_string_value(json_object_get(row, "scenario"));
    const char *kind = json_string_value(json_object_get(row, "kind"));
    const char *slot = json_string_value(json_object_get(row, "slot"));
    cb__rep_table_add(&t, 0, "%s", scenario ? scenario : "?");
    cb__rep_table_add(&t, 0, "%.0f", num(row, "repetition"));
    cb__rep_table_add(&t, 0, "%.0f", num(row, "turn"));
    cb__rep_table_add(&t, 0, "%s%s%s", kind ? kind : "?", slot ? " " : "", slot ? slot : "");
    if (isfinite(num(row, "depth"))) cb__rep_table_add(&t, 0, "%.0f", num(row, "depth"));
    else cb__rep_table_add(&t, CB__REP_TONE_MUTED, "-");
    cb__rep_table_add_text(&t, json_string_value(json_object_get(row, "answer")), ANSWER_CELL,
                           json_is_true(json_object_get(row, "answer_cut")));
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

void cb__rep_probe_dialog(const cb_report *r, cb__rep_doc *d, const cb__rep_run *run, json_t *doc) {
  (void)r;
  (void)run;
  json_t *conv = json_object_get(doc, "conversations");
  cb__rep_doc_para(d, 0, "%.0f conversations (%.0f scenarios x %.0f repetitions): %.0f completed, %.0f failed.",
                   num(conv, "planned"), num(conv, "scenarios"), num(conv, "repetitions"),
                   num(conv, "completed"), num(conv, "failed"));
  depth_part(d, doc);
  turn_part(d, doc);
  failures_part(d, doc);
}
