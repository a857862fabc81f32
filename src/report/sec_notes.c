/*
 * sec_notes.c - what a reader must know before trusting the numbers: an interrupted
 * run, a run where every request failed or nothing was measured, a client that fell
 * behind its schedule, requests whose chunk times stopped at the cap, and the problems
 * met while loading (torn records, a missing
 * summary, a sweep point left out).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "report_internal.h"

static int run_has_notes(const cb__rep_run *run) {
  const cb_summary *s = &run->all;
  return s->interrupted || (s->measured && !s->succeeded) || !s->measured ||
         s->client_fell_behind || s->chunk_times_truncated;
}

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  if (r->n_notes) return 1;
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++)
      if (run_has_notes(&r->inputs[i].runs[k])) return 1;
  return 0;
}

static void run_notes(const cb_report *r, const cb__rep_input *in, const cb__rep_run *run,
                      cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  char name[512];
  cb__rep_run_name(r, in, run, name, sizeof name);
  if (s->interrupted) {
    double scheduled = cb__rep_json_num(run->manifest, "scheduled");
    char of[64] = "", n[32];
    if (isfinite(scheduled) && scheduled >= 0) {
      char c[32];
      snprintf(of, sizeof of, " of %s scheduled", cb__rep_fmt_count((size_t)scheduled, c, sizeof c));
    }
    cb__rep_doc_para(d, CB__REP_TONE_WARN,
                     "%s was interrupted: the statistics cover the %s requests recorded%s (%zu "
                     "succeeded, %zu failed).",
                     name, cb__rep_fmt_count(s->requests, n, sizeof n), of, s->succeeded, s->failed);
  }
  if (!s->measured) {
    cb__rep_doc_para(d, CB__REP_TONE_WARN,
                     "%s measured nothing: %zu requests, all warm-up. There are no statistics to show.",
                     name, s->requests);
  } else if (!s->succeeded) {
    cb__rep_doc_para(d, CB__REP_TONE_BAD,
                     "%s: every measured request failed (%zu of %zu), so there is no latency to show; "
                     "the errors are listed below.",
                     name, s->failed, s->measured);
  }
  if (s->client_fell_behind) {
    char lag[32], warn[32];
    cb__rep_fmt_ms(s->metrics[CB_METRIC_LAG].p99 / 1e6, lag, sizeof lag);
    cb__rep_fmt_ms(s->lag_warning_ns / 1e6, warn, sizeof warn);
    cb__rep_doc_para(d, CB__REP_TONE_WARN,
                     "%s: the client fell behind its schedule (p99 send lag %s, above %s): latency "
                     "from the scheduled time (E2E from schedule) is the honest figure.",
                     name, lag, warn);
  }
  if (s->chunk_times_truncated)
    cb__rep_doc_para(d, CB__REP_TONE_WARN,
                     "%s: %zu requests streamed more chunks than the 65,536 times kept per "
                     "request (chunk_ns_dropped in records.jsonl): their ITL and TPOT cover only "
                     "the kept times.",
                     name, s->chunk_times_truncated);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++) run_notes(r, &r->inputs[i], &r->inputs[i].runs[k], d);
  for (size_t i = 0; i < r->n_notes; i++) cb__rep_doc_para(d, CB__REP_TONE_WARN, "%s", r->notes[i]);
}

const cb__rep_section cb__rep_sec_notes = {
    .id = "notes", .title = "Notes", .applies = applies, .render = render};
