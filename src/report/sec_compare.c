/*
 * sec_compare.c - several runs side by side: the first is the baseline, each other
 * run gets its value and the change from the baseline, coloured by what is better
 * for that metric (latency and errors: lower; throughput, goodput and attainment:
 * higher). Changes within 1% (0.1 percentage point for shares) are not coloured.
 * Runs whose workload hashes differ did not send the same requests; the section says
 * so before anyone reads a delta as a regression.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

#define MAX_COLS 8

static size_t runs_of(const cb_report *r, const cb__rep_input **ins, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_inputs; i++)
    if (r->inputs[i].kind == CB__REP_INPUT_RUN && n < max) ins[n++] = &r->inputs[i];
  return n;
}

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  const cb__rep_input *ins[MAX_COLS] = {0};
  return runs_of(r, ins, MAX_COLS) >= 2;
}

typedef enum { K_COUNT, K_RATE_REQ, K_RATE_TOK, K_SHARE, K_MS } kind;

typedef struct row {
  const char *label;
  kind k;
  int dir; /* +1 higher is better, -1 lower is better, 0 neither */
  double (*get)(const cb_summary *s);
} row;

static double measured(const cb_summary *s) { return (double)s->measured; }
static double failed_share(const cb_summary *s) {
  return s->measured ? (double)s->failed / (double)s->measured : NAN;
}
static double req_s(const cb_summary *s) { return s->request_throughput; }
static double tok_s(const cb_summary *s) { return s->output_throughput; }
static double goodput(const cb_summary *s) { return s->n_slos ? s->goodput : NAN; }
static double joint(const cb_summary *s) { return s->n_slos ? s->joint_attainment : NAN; }
#define PCT(name, metric, field) \
  static double name(const cb_summary *s) { return s->metrics[metric].field / 1e6; }
PCT(ttft50, CB_METRIC_TTFT, p50)
PCT(ttft99, CB_METRIC_TTFT, p99)
PCT(tpot50, CB_METRIC_TPOT, p50)
PCT(tpot99, CB_METRIC_TPOT, p99)
PCT(itl50, CB_METRIC_ITL, p50)
PCT(itl99, CB_METRIC_ITL, p99)
PCT(e2e50, CB_METRIC_E2E, p50)
PCT(e2e99, CB_METRIC_E2E, p99)
#undef PCT

static const row rows[] = {
    {"requests measured", K_COUNT, 0, measured},
    {"failed", K_SHARE, -1, failed_share},
    {"throughput", K_RATE_REQ, +1, req_s},
    {"output tokens", K_RATE_TOK, +1, tok_s},
    {"goodput", K_RATE_REQ, +1, goodput},
    {"met every SLO", K_SHARE, +1, joint},
    {"TTFT p50", K_MS, -1, ttft50},
    {"TTFT p99", K_MS, -1, ttft99},
    {"TPOT p50", K_MS, -1, tpot50},
    {"TPOT p99", K_MS, -1, tpot99},
    {"ITL p50", K_MS, -1, itl50},
    {"ITL p99", K_MS, -1, itl99},
    {"E2E p50", K_MS, -1, e2e50},
    {"E2E p99", K_MS, -1, e2e99},
};

static void value(kind k, double v, char *out, size_t n) {
  switch (k) {
    case K_COUNT:
      if (isfinite(v)) cb__rep_fmt_count((size_t)v, out, n);
      else snprintf(out, n, "-");
      break;
    case K_RATE_REQ: cb__rep_fmt_rate(v, "req/s", out, n); break;
    case K_RATE_TOK: cb__rep_fmt_rate(v, "tokens/s", out, n); break;
    case K_SHARE: cb__rep_fmt_pct(v, out, n); break;
    case K_MS: cb__rep_fmt_ms(v, out, n); break;
  }
}

/* A share changes in percentage points, anything else relatively. */
static void delta(const row *rw, double base, double v, cb__rep_tone *tone, char *out, size_t n) {
  if (rw->k == K_SHARE) {
    *tone = CB__REP_TONE_NONE;
    if (!isfinite(base) || !isfinite(v)) {
      snprintf(out, n, "-");
      return;
    }
    double pp = 100 * (v - base);
    if (fabs(pp) < 0.1) {
      snprintf(out, n, "%+.1f pp", pp);
      return;
    }
    int better = rw->dir > 0 ? pp > 0 : pp < 0;
    *tone = better ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD;
    snprintf(out, n, "%+.1f pp %s", pp, better ? "better" : "worse");
    return;
  }
  cb__rep_fmt_delta(base, v, rw->dir > 0, tone, out, n);
  if (!rw->dir) {
    *tone = CB__REP_TONE_NONE;
    char *w = strchr(out, ' ');
    if (w) *w = '\0'; /* neither better nor worse */
  }
}

static void render(const cb_report *r, cb__rep_doc *d) {
  const cb__rep_input *ins[MAX_COLS] = {0};
  size_t n = runs_of(r, ins, MAX_COLS);
  const char *h0 = cb__rep_json_str(ins[0]->runs[0].manifest, "workload_hash");
  for (size_t i = 1; i < n; i++) {
    const char *h = cb__rep_json_str(ins[i]->runs[0].manifest, "workload_hash");
    if (h0 && h && strcmp(h0, h))
      cb__rep_doc_para(d, CB__REP_TONE_WARN,
                       "%s and %s ran different workloads (workload hash %s vs %s): they did not send "
                       "the same requests, so differences are not only the server's.",
                       ins[0]->path, ins[i]->path, h0, h);
  }
  char align[2 * MAX_COLS + 2] = "lr";
  for (size_t i = 1; i < n; i++) strcat(align, "rr");
  cb__rep_table t;
  cb__rep_table_init(&t, align);
  cb__rep_table_add(&t, 0, "metric");
  cb__rep_table_add(&t, 0, "%s (baseline)", ins[0]->path);
  for (size_t i = 1; i < n; i++) {
    cb__rep_table_add(&t, 0, "%s", ins[i]->path);
    cb__rep_table_add(&t, 0, "change");
  }
  int any_slo = 0;
  for (size_t i = 0; i < n; i++) any_slo |= ins[i]->runs[0].all.n_slos > 0;
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    const row *rw = &rows[k];
    if (!any_slo && (rw->get == goodput || rw->get == joint)) continue;
    double base = rw->get(&ins[0]->runs[0].all);
    char buf[64];
    cb__rep_table_add(&t, 0, "%s", rw->label);
    value(rw->k, base, buf, sizeof buf);
    cb__rep_table_add(&t, 0, "%s", buf);
    for (size_t i = 1; i < n; i++) {
      double v = rw->get(&ins[i]->runs[0].all);
      value(rw->k, v, buf, sizeof buf);
      cb__rep_table_add(&t, 0, "%s", buf);
      cb__rep_tone tone;
      delta(rw, base, v, &tone, buf, sizeof buf);
      cb__rep_table_add(&t, tone, "%s", buf);
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
  size_t all = 0;
  for (size_t i = 0; i < r->n_inputs; i++) all += r->inputs[i].kind == CB__REP_INPUT_RUN;
  if (all > n) cb__rep_doc_para(d, CB__REP_TONE_MUTED, "The table compares the first %zu of %zu runs.", n, all);
}

const cb__rep_section cb__rep_sec_compare = {.id = "compare", .title = "Comparison",
                                             .applies = applies,
                                             .render = render};
