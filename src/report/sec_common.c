/*
 * sec_common.c - what several sections need: every run in order, verdict words and
 * tones, a one-line description of a run's load, the SLO on a metric.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "report_internal.h"

int cb__rep_any_run_has(const cb_report *r, const char *file) {
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++) {
      char path[4096];
      struct stat sb;
      snprintf(path, sizeof path, "%s/%s", r->inputs[i].runs[k].dir, file);
      if (!stat(path, &sb)) return 1;
    }
  return 0;
}

json_t *cb__rep_run_metrics_doc(const cb__rep_run *run, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", run->dir, file);
  struct stat sb;
  if (stat(path, &sb)) return NULL;
  json_t *doc = NULL;
  cb_error err;
  if (cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, &doc, &err) != CB_OK) return NULL;
  if (!json_is_object(json_object_get(doc, "metrics"))) {
    json_decref(doc);
    return NULL;
  }
  return doc;
}

size_t cb__rep_all_runs(const cb_report *r, cb__rep_ref *refs, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_inputs; i++)
    for (size_t k = 0; k < r->inputs[i].n_runs; k++, n++)
      if (n < max) refs[n] = (cb__rep_ref){.in = &r->inputs[i], .run = &r->inputs[i].runs[k]};
  return n;
}

size_t cb__rep_count_kind(const cb_report *r, cb__rep_input_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_inputs; i++) n += r->inputs[i].kind == kind;
  return n;
}

int cb__rep_has_kind(const cb_report *r, cb__rep_input_kind kind) {
  return cb__rep_count_kind(r, kind) > 0;
}

const char *cb__rep_verdict_word(cb_verdict_kind v, cb__rep_tone *tone) {
  switch (v) {
    case CB_VERDICT_HOLDS: *tone = CB__REP_TONE_GOOD; return "holds";
    case CB_VERDICT_VIOLATED: *tone = CB__REP_TONE_BAD; return "violated";
    default: *tone = CB__REP_TONE_WARN; return "undecided";
  }
}

const char *cb__rep_overall_verdict(const cb_summary *s, cb__rep_tone *tone) {
  *tone = CB__REP_TONE_MUTED;
  if (!s->n_slos) return "no SLOs";
  int violated = 0, undecided = 0;
  for (size_t k = 0; k < s->n_slos; k++) {
    violated += s->slos[k].verdict == CB_VERDICT_VIOLATED;
    undecided += s->slos[k].verdict == CB_VERDICT_UNDECIDED;
  }
  if (violated) {
    *tone = CB__REP_TONE_BAD;
    return "SLO violated";
  }
  if (undecided) {
    *tone = CB__REP_TONE_WARN;
    return "undecided";
  }
  *tone = CB__REP_TONE_GOOD;
  return "SLOs met";
}

const char *cb__rep_workload_value(const json_t *m, const char *key) {
  const json_t *w = m ? json_object_get(m, "workload") : NULL;
  size_t len = strlen(key), i;
  const json_t *e;
  json_array_foreach(w, i, e) {
    const char *s = json_string_value(e);
    if (s && !strncmp(s, key, len) && s[len] == '=') return s + len + 1;
  }
  return NULL;
}

void cb__rep_describe_load(const cb__rep_run *run, char *out, size_t n) {
  const char *arrival = cb__rep_workload_value(run->manifest, "arrival");
  const char *conc = cb__rep_workload_value(run->manifest, "concurrency");
  char rate[48];
  cb__rep_fmt_si(run->all.requested_rate, rate, sizeof rate);
  if (arrival && !strncmp(arrival, "closed", 6)) {
    snprintf(out, n, "closed loop, concurrency %s", conc ? conc : "?");
  } else if (arrival && !strncmp(arrival, "trace", 5)) {
    snprintf(out, n, "trace replay");
  } else if (run->all.requested_rate > 0) {
    size_t k = 0;
    while (arrival && arrival[k] && arrival[k] != ' ' && k < 20) k++;
    /* a ramp (workload.md): "poisson rate=24 ramp=linear ramp_start=2 ramp_duration_s=120" */
    const char *ramp = arrival ? strstr(arrival, " ramp=") : NULL;
    char kind[16], from[48];
    double r0, d;
    if (ramp && sscanf(ramp, " ramp=%15s ramp_start=%lf ramp_duration_s=%lf", kind, &r0, &d) == 3)
      snprintf(out, n, "open loop, %s ramp from %s to %s req/s over %g s (%.*s)", kind,
               cb__rep_fmt_si(r0, from, sizeof from), rate, d, (int)k, arrival);
    else
      snprintf(out, n, "open loop, %s req/s%s%.*s%s", rate, k ? " (" : "", (int)k,
               arrival ? arrival : "", k ? ")" : "");
  } else {
    snprintf(out, n, "load not recorded");
  }
}

const cb_slo_result *cb__rep_find_slo(const cb_summary *s, cb_metric metric) {
  for (size_t k = 0; k < s->n_slos; k++)
    if (s->slos[k].slo.metric == metric) return &s->slos[k];
  return NULL;
}

const char *cb__rep_metric_title(cb_metric m) {
  switch (m) {
    case CB_METRIC_TTFT: return "TTFT";
    case CB_METRIC_TPOT: return "TPOT";
    case CB_METRIC_ITL: return "ITL";
    case CB_METRIC_ITL_TOKEN: return "ITL per token";
    case CB_METRIC_E2E: return "E2E";
    case CB_METRIC_E2E_SCHED: return "E2E from schedule";
    case CB_METRIC_TTFT_SCHED: return "TTFT from schedule";
    case CB_METRIC_LAG: return "send lag";
    default: return "?";
  }
}

void cb__rep_slo_text(const cb_slo *slo, char *out, size_t n) {
  char bound[32];
  cb__rep_fmt_ms(slo->bound_ns / 1e6, bound, sizeof bound);
  snprintf(out, n, "p%g %s \xE2\x89\xA4 %s", slo->percentile, cb__rep_metric_title(slo->metric), bound);
}
