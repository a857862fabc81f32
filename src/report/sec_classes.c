/*
 * sec_classes.c - scenarios: one row per class (tenant, request kind) with its own
 * counts, throughput, latency and SLO verdicts; each class's SLOs; the interference
 * factor from --solo-baseline (interference.json: the class's p99 in the mix divided
 * by its p99 alone, i.e. how much sharing the server made its tail worse; 1.25x and
 * up is marked as a warning, 2x and up as bad); and, in HTML, the TTFT CDF per class.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

static int has_classes(const cb__rep_input *in) {
  return in->kind == CB__REP_INPUT_RUN && (in->runs[0].n_classes >= 2 || in->interference);
}

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  for (size_t i = 0; i < r->n_inputs; i++)
    if (has_classes(&r->inputs[i])) return 1;
  return 0;
}

static void verdicts(const cb_summary *s, char *out, size_t n, cb__rep_tone *tone) {
  size_t held = 0, violated = 0, undecided = 0;
  for (size_t k = 0; k < s->n_slos; k++) {
    held += s->slos[k].verdict == CB_VERDICT_HOLDS;
    violated += s->slos[k].verdict == CB_VERDICT_VIOLATED;
    undecided += s->slos[k].verdict == CB_VERDICT_UNDECIDED;
  }
  cb__rep_overall_verdict(s, tone);
  out[0] = '\0';
  if (!s->n_slos) {
    snprintf(out, n, "no SLOs");
    return;
  }
  const size_t count[] = {held, violated, undecided};
  static const char *const word[] = {"held", "violated", "undecided"};
  size_t len = 0;
  for (size_t k = 0; k < 3; k++)
    if (count[k] && len < n) len += (size_t)snprintf(out + len, n - len, "%s%zu %s", len ? ", " : "", count[k], word[k]);
}

static void class_table(const cb__rep_run *run, cb__rep_doc *d) {
  const char *head[] = {"class",    "requests", "failed",   "throughput", "goodput", "TTFT p50",
                        "TTFT p99", "TPOT p99", "E2E p99", "met every SLO", "SLOs"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrrrrrrrrl", head, sizeof head / sizeof head[0]);
  for (size_t i = 0; i < run->n_classes; i++) {
    const cb_summary *s = &run->classes[i];
    char b[8][48];
    cb__rep_table_add(&t, 0, "%s", s->class_name);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_count(s->measured, b[0], 48));
    cb__rep_table_add(&t, s->failed ? CB__REP_TONE_BAD : 0, "%s", cb__rep_fmt_count(s->failed, b[1], 48));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_rate(s->request_throughput, "req/s", b[2], 48));
    if (s->n_slos) cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_rate(s->goodput, "req/s", b[3], 48));
    else cb__rep_table_add(&t, 0, "-");
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(s->metrics[CB_METRIC_TTFT].p50 / 1e6, b[4], 48));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(s->metrics[CB_METRIC_TTFT].p99 / 1e6, b[5], 48));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(s->metrics[CB_METRIC_TPOT].p99 / 1e6, b[6], 48));
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(s->metrics[CB_METRIC_E2E].p99 / 1e6, b[7], 48));
    if (s->n_slos) cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(s->joint_attainment, b[0], 48));
    else cb__rep_table_add(&t, 0, "-");
    cb__rep_tone tone;
    verdicts(s, b[1], 48, &tone);
    cb__rep_table_add(&t, tone, "%s", b[1]);
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void slo_table(const cb__rep_run *run, cb__rep_doc *d) {
  size_t any = 0;
  for (size_t i = 0; i < run->n_classes; i++) any += run->classes[i].n_slos;
  if (!any) return;
  cb__rep_table t;
  cb__rep_table_init(&t, "lllrr");
  cb__rep_table_add(&t, 0, "class");
  cb__rep_table_add(&t, 0, "SLO");
  cb__rep_table_add(&t, 0, "verdict");
  cb__rep_table_add(&t, 0, "attainment");
  cb__rep_table_add(&t, 0, "over the bound");
  for (size_t i = 0; i < run->n_classes; i++) {
    const cb_summary *s = &run->classes[i];
    for (size_t k = 0; k < s->n_slos; k++) {
      char text[128], a[32], b[32], pct[24];
      cb__rep_tone tone;
      cb__rep_slo_text(&s->slos[k].slo, text, sizeof text);
      const char *word = cb__rep_verdict_word(s->slos[k].verdict, &tone);
      cb__rep_table_add(&t, 0, "%s", s->class_name);
      cb__rep_table_add(&t, 0, "%s", text);
      if (s->slos[k].verdict == CB_VERDICT_UNDECIDED)
        cb__rep_table_add(&t, tone, "%s (%s more needed)", word,
                          cb__rep_fmt_count(s->slos[k].more_needed, a, sizeof a));
      else
        cb__rep_table_add(&t, tone, "%s", word);
      cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(s->slos[k].attainment, pct, sizeof pct));
      cb__rep_table_add(&t, 0, "%s of %s", cb__rep_fmt_count(s->slos[k].over, a, sizeof a),
                        cb__rep_fmt_count(s->slos[k].units, b, sizeof b));
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static cb__rep_tone factor_tone(double f) {
  if (!isfinite(f)) return CB__REP_TONE_NONE;
  return f >= 2 ? CB__REP_TONE_BAD : f >= 1.25 ? CB__REP_TONE_WARN : CB__REP_TONE_GOOD;
}

static void interference_table(const json_t *inter, cb__rep_doc *d) {
  const json_t *classes = json_object_get(inter, "classes");
  if (!json_is_array(classes) || !json_array_size(classes)) return;
  double pct = cb__rep_json_num(inter, "percentile");
  cb__rep_doc_heading(d, 4, NULL, "Interference: p%g in the mix against alone", isfinite(pct) ? pct : 99);
  const char *head[] = {"class",     "TTFT mix", "TTFT alone", "TTFT factor", "TPOT mix",
                        "TPOT alone", "TPOT factor", "E2E mix", "E2E alone",  "E2E factor"};
  cb__rep_table t;
  cb__rep_table_init_head(&t, "lrrrrrrrrr", head, sizeof head / sizeof head[0]);
  size_t i;
  const json_t *c;
  json_array_foreach(classes, i, c) {
    const char *name = cb__rep_json_str(c, "class");
    cb__rep_table_add(&t, 0, "%s", name ? name : "?");
    static const char *const m[] = {"ttft", "tpot", "e2e"};
    for (size_t k = 0; k < 3; k++) {
      char key[48], a[32];
      snprintf(key, sizeof key, "%s_p99_mix_ms", m[k]);
      cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(cb__rep_json_num(c, key), a, sizeof a));
      snprintf(key, sizeof key, "%s_p99_solo_ms", m[k]);
      cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_ms(cb__rep_json_num(c, key), a, sizeof a));
      snprintf(key, sizeof key, "%s_factor", m[k]);
      double f = cb__rep_json_num(c, key);
      cb__rep_table_add(&t, factor_tone(f), "%s", cb__rep_fmt_factor(f, a, sizeof a));
    }
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void class_cdf(const cb__rep_run *run, cb__rep_doc *d) {
  cb__rep_chart c;
  cb__rep_doc_chart_begin(d, &c, "class-ttft", "TTFT by class: cumulative distribution");
  snprintf(c.x.label, sizeof c.x.label, "TTFT");
  c.x.unit = CB__REP_UNIT_MS;
  cb__rep_axis_share(&c.y, "requests at or below");
  for (size_t i = 0; i < run->n_classes && i < CB__REP_PALETTE; i++) {
    cb__rep_values v;
    cb__rep_values_of(&run->records, run->classes[i].class_name, CB__REP_TTFT, &v);
    cb__rep_series *s = cb__rep_chart_series(&c, CB__REP_STEP, (int)i, "%s", run->classes[i].class_name);
    cb__rep_cdf_series(s, &v);
    cb__rep_values_free(&v);
  }
  cb__rep_doc_chart_end(d, &c, "no successful requests: nothing to plot");
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (!has_classes(in)) continue;
    const cb__rep_run *run = &in->runs[0];
    cb__rep_doc_heading(d, 3, NULL, "%s", in->path);
    if (run->n_classes >= 2) {
      class_table(run, d);
      slo_table(run, d);
    }
    if (in->interference) interference_table(in->interference, d);
    if (run->n_classes >= 2 && d->fmt == CB__REP_FMT_HTML) {
      cb__rep_doc_grid_begin(d);
      class_cdf(run, d);
      cb__rep_doc_grid_end(d);
    }
  }
}

const cb__rep_section cb__rep_sec_classes = {.id = "classes", .title = "Scenario classes",
                                             .applies = applies, .render = render};
