/*
 * sec_sessions.c - live multi-turn sessions (records with session and turn, `run
 * --sessions`): how long sessions took, and per turn index as the conversation grows
 * TTFT, prompt and cached tokens (the server's prefix cache hits, from usage, and from
 * its /metrics counters where the scrapes isolate a turn) and each SLO's attainment
 * (the summary's sessions and server.turns, docs/results.md); a chart of TTFT by turn.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MAX_RUNS 8

static int has_sessions(const cb__rep_run *run) { return run->all.sessions.sessions > 0; }

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  cb__rep_ref refs[MAX_RUNS];
  size_t n = cb__rep_all_runs(r, refs, MAX_RUNS);
  for (size_t i = 0; i < n && i < MAX_RUNS; i++)
    if (has_sessions(refs[i].run)) return 1;
  return 0;
}

static void duration_line(const cb_session_stats *ss, cb__rep_doc *d) {
  char n[32], c[32], p50[32], p90[32], p99[32];
  cb__rep_fmt_count(ss->sessions, n, sizeof n);
  cb__rep_fmt_count(ss->complete, c, sizeof c);
  if (!ss->complete) {
    cb__rep_doc_para(d, CB__REP_TONE_BAD, "%s sessions, none complete (a failed turn ends its "
                     "session): no session duration.", n);
    return;
  }
  cb__rep_doc_para(d, ss->complete == ss->sessions ? 0 : CB__REP_TONE_BAD,
                   "%s sessions, %s complete. Session duration (first send to last reply, think "
                   "times included): p50 %s, p90 %s, p99 %s.",
                   n, c, cb__rep_fmt_ms(ss->duration.p50 / 1e6, p50, sizeof p50),
                   cb__rep_fmt_ms(ss->duration.p90 / 1e6, p90, sizeof p90),
                   cb__rep_fmt_ms(ss->duration.p99 / 1e6, p99, sizeof p99));
}

/* The server's prefix cache hits of turn index i from its /metrics (summary.json's
 * server.turns): "-" where no two scrapes isolate the turn. */
static void metrics_hits(const json_t *turns, size_t i, char *c, size_t n) {
  const json_t *h = json_object_get(json_array_get(turns, i), "prefix_hits");
  if (json_is_number(h)) cb__rep_fmt_si(json_number_value(h), c, n);
  else snprintf(c, n, "-");
}

static void turns_table(const cb__rep_run *run, cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  const cb_session_stats *ss = &s->sessions;
  const json_t *server_turns = run->server ? json_object_get(run->server, "turns") : NULL;
  if (!json_is_array(server_turns)) server_turns = NULL;
  const char *head[8 + CB_MAX_SLOS] = {"turn", "turns", "TTFT mean", "TTFT p50", "TTFT p99",
                                       "prompt tokens", "cached tokens"};
  size_t fixed = 7;
  char names[CB_MAX_SLOS][96];
  char align[9 + CB_MAX_SLOS] = "rrrrrrr";
  if (server_turns) {
    head[fixed++] = "prefix hits (/metrics)";
    strcat(align, "r");
  }
  for (size_t k = 0; k < s->n_slos; k++) {
    cb__rep_slo_text(&s->slos[k].slo, names[k], sizeof names[k]);
    head[fixed + k] = names[k];
    strcat(align, "r");
  }
  cb__rep_table t;
  cb__rep_table_init_head(&t, align, head, fixed + s->n_slos);
  for (size_t i = 0; i < ss->n_turns; i++) {
    const cb_session_turn_stats *ts = &ss->turn[i];
    char c[48];
    cb__rep_table_add(&t, 0, "%zu%s", i, i + 1 == CB_SESSION_TURNS ? "+" : "");
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_count(ts->count, c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(ts->ttft.mean / 1e6, c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(ts->ttft.p50 / 1e6, c, sizeof c));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(ts->ttft.p99 / 1e6, c, sizeof c));
    double tokens[2] = {ts->prompt_tokens_mean, ts->cached_tokens_mean};
    for (int k = 0; k < 2; k++) /* "-": the server reported none */
      cb__rep_table_add(&t, 0, "%s",
                        isnan(tokens[k]) ? "-" : cb__rep_fmt_si(tokens[k], c, sizeof c));
    if (server_turns) {
      metrics_hits(server_turns, i, c, sizeof c);
      cb__rep_table_add(&t, 0, "%s", c);
    }
    for (size_t k = 0; k < s->n_slos; k++) {
      double a = ts->count ? (double)ts->met[k] / (double)ts->count : NAN;
      cb__rep_tone tone = a < s->slos[k].slo.percentile / 100 ? CB__REP_TONE_BAD : 0;
      cb__rep_table_add(&t, tone, "%s", cb__rep_fmt_pct(a, c, sizeof c));
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  if (server_turns)
    cb__rep_doc_para(d, 0, "Cached tokens are per request (usage, a mean per turn); prefix hits "
                     "(/metrics) are the server's counters summed over a turn's requests, where "
                     "two scrapes enclose that turn and no other request ran between them; \"-\" "
                     "where they do not (docs/results.md).");
}

/* TTFT (mean, p50, p99) against the turn index: the cost of a growing context, and
 * what a prefix cache saves of it. */
static void ttft_chart(const cb_summary *s, cb__rep_doc *d) {
  const cb_session_stats *ss = &s->sessions;
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "sessions-ttft", "TTFT by turn (as the conversation grows)");
  snprintf(c.x.label, sizeof c.x.label, "turn");
  c.x.from_zero = 1;
  cb__rep_axis_latency(&c.y, "TTFT");
  static const char *const names[] = {"p99", "p50", "mean"};
  for (int k = 0; k < 3; k++) {
    cb__rep_series *ser = cb__rep_chart_series(&c, CB__REP_LINE, k, "%s", names[k]);
    ser->markers = 1;
    ser->dashed = k == 1;
    for (size_t i = 0; i < ss->n_turns; i++) {
      const cb_dist *t = &ss->turn[i].ttft;
      double v = k == 0 ? t->p99 : k == 1 ? t->p50 : t->mean;
      if (t->count) cb__rep_series_add(ser, (double)i, v / 1e6);
    }
  }
  const cb_slo_result *slo = cb__rep_find_slo(s, CB_METRIC_TTFT);
  if (slo) {
    char text[96];
    cb__rep_slo_text(&slo->slo, text, sizeof text);
    cb__rep_chart_mark(&c, 0, slo->slo.bound_ns / 1e6, CB__REP_TONE_BAD, "SLO %s", text);
  }
  cb__rep_doc_chart_end(d, &c, "no successful turns");
}

static void render(const cb_report *r, cb__rep_doc *d) {
  cb__rep_ref refs[MAX_RUNS];
  size_t n = cb__rep_all_runs(r, refs, MAX_RUNS);
  for (size_t i = 0; i < n && i < MAX_RUNS; i++) {
    const cb__rep_run *run = refs[i].run;
    if (!has_sessions(run)) continue;
    char name[256];
    cb__rep_run_name(r, refs[i].in, run, name, sizeof name);
    cb__rep_doc_heading(d, 3, NULL, "%s", name);
    duration_line(&run->all.sessions, d);
    turns_table(run, d);
    ttft_chart(&run->all, d);
  }
}

const cb__rep_section cb__rep_sec_sessions = {.id = "sessions",
                                              .title = "Sessions: turns as the conversation grows",
                                              .applies = applies, .render = render};
