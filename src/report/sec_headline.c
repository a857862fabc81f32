/*
 * sec_headline.c - the answer first: for each run, the SLO verdict, goodput,
 * throughput, p50/p99 TTFT and TPOT and the errors, then each SLO's verdict with its
 * confidence. Sweeps have their own headline (capacity at SLO, sec_sweep.c).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

static int applies(const cb_report *r, cb__rep_fmt fmt) {
  (void)fmt;
  return cb__rep_has_kind(r, CB__REP_INPUT_RUN);
}

static void tile(cb__rep_tile *t, const char *label, cb__rep_tone tone) {
  memset(t, 0, sizeof *t);
  t->label = label;
  t->tone = tone;
}

static void context_line(const cb__rep_run *run, cb__rep_doc *d) {
  const char *model = cb__rep_json_str(run->manifest, "model");
  const char *url = cb__rep_json_str(run->manifest, "server.url");
  const char *start = cb__rep_json_str(run->manifest, "start_utc");
  const char *sim = cb__rep_json_str(run->manifest, "server.embedded_simulator.gpu");
  char load[160], window[32], count[32], warm[32];
  cb__rep_describe_load(run, load, sizeof load);
  cb__rep_fmt_ms(run->all.window_s * 1e3, window, sizeof window);
  cb__rep_fmt_count(run->all.measured, count, sizeof count);
  cb__rep_fmt_count(run->all.warmup, warm, sizeof warm);
  cb__rep_doc_para(d, CB__REP_TONE_MUTED,
                   "Model %s%s%s%s at %s; %s; %s request%s measured (%s warm-up) over a %s window%s%s.",
                   model ? model : "(not recorded)", sim ? " (the built-in simulator on " : "",
                   sim ? sim : "", sim ? ")" : "", url ? url : "(target not recorded)", load, count,
                   run->all.measured == 1 ? "" : "s", warm,
                   window, start ? "; started " : "", start ? start : "");
}

/* Requests that carried images (records' image_bytes): how many, and their bytes; and
 * the image tokens where the server's usage says (prompt_tokens_details.image_tokens,
 * inside the prompt tokens), with how many requests it said it for. */
static void images_line(const cb__rep_run *run, cb__rep_doc *d) {
  uint64_t with = 0, bytes = 0, told = 0, tokens = 0;
  for (size_t i = 0; i < run->records.count; i++) {
    const cb_record *r = &run->records.items[i];
    if (r->warmup || !r->image_bytes) continue;
    with++;
    bytes += r->image_bytes;
    if (r->image_tokens >= 0) {
      told++;
      tokens += (uint64_t)r->image_tokens;
    }
  }
  if (!with) return;
  char n[32], total[32], mean[32], tk[32], tn[32];
  char said[160] = "their tokens are inside the prompt tokens (the server did not say how many)";
  if (told)
    snprintf(said, sizeof said,
             "the server counted %s image tokens in the prompt tokens of %s of them "
             "(%.1f each)",
             cb__rep_fmt_count(tokens, tk, sizeof tk), cb__rep_fmt_count(told, tn, sizeof tn),
             (double)tokens / (double)told);
  cb__rep_doc_para(d, CB__REP_TONE_MUTED,
                   "Images: %s measured request%s sent image files of %sB (%sB each on "
                   "average); %s.",
                   cb__rep_fmt_count(with, n, sizeof n), with == 1 ? "" : "s",
                   cb__rep_fmt_si((double)bytes, total, sizeof total),
                   cb__rep_fmt_si((double)bytes / (double)with, mean, sizeof mean), said);
}

static void tiles(const cb__rep_run *run, cb__rep_doc *d) {
  const cb_summary *s = &run->all;
  cb__rep_tile t[9];
  size_t n = 0;
  cb__rep_tone tone;
  const char *verdict = cb__rep_overall_verdict(s, &tone);
  /* A scenario whose classes carry their own SLOs: the verdict is over the classes. */
  size_t class_slos = 0;
  for (size_t i = 0; i < run->n_classes; i++) class_slos += run->classes[i].n_slos;
  int by_class = !s->n_slos && class_slos;
  if (by_class) {
    int rank = 0; /* 1 holds, 2 undecided, 3 violated */
    for (size_t i = 0; i < run->n_classes; i++) {
      cb__rep_tone ct;
      const char *v = cb__rep_overall_verdict(&run->classes[i], &ct);
      int k = ct == CB__REP_TONE_BAD ? 3 : ct == CB__REP_TONE_WARN ? 2 : ct == CB__REP_TONE_GOOD ? 1 : 0;
      if (k > rank) rank = k, verdict = v, tone = ct;
    }
  }
  tile(&t[n], "Verdict", tone);
  snprintf(t[n].value, sizeof t[n].value, "%s", verdict);
  if (s->n_slos) {
    char pct[24];
    snprintf(t[n].sub, sizeof t[n].sub, "%s of requests met every SLO",
             cb__rep_fmt_pct(s->joint_attainment, pct, sizeof pct));
  } else if (by_class) {
    snprintf(t[n].sub, sizeof t[n].sub, "over each class's own SLOs: see Scenario classes");
  }
  n++;
  tile(&t[n], "Goodput", CB__REP_TONE_NONE);
  if (s->n_slos) {
    cb__rep_fmt_rate(s->goodput, "req/s", t[n].value, sizeof t[n].value);
  } else {
    snprintf(t[n].value, sizeof t[n].value, "-");
    snprintf(t[n].sub, sizeof t[n].sub, "%s", by_class ? "per class: see Scenario classes" : "no SLOs given");
  }
  n++;
  tile(&t[n], "Throughput", CB__REP_TONE_NONE);
  cb__rep_fmt_rate(s->request_throughput, "req/s", t[n].value, sizeof t[n].value);
  if (s->requested_rate > 0) {
    char a[32], q[32];
    snprintf(t[n].sub, sizeof t[n].sub,
             s->ramp.n_bins ? "sent at %s req/s on a ramp to %s" : "sent at %s of %s req/s asked",
             cb__rep_fmt_si(s->achieved_rate, a, sizeof a), cb__rep_fmt_si(s->requested_rate, q, sizeof q));
  }
  n++;
  tile(&t[n], "Output tokens", CB__REP_TONE_NONE);
  cb__rep_fmt_rate(s->output_throughput, "tokens/s", t[n].value, sizeof t[n].value);
  if (s->succeeded) snprintf(t[n].sub, sizeof t[n].sub, "counted from %s", cb_token_source_name(s->output_source));
  n++;
  static const struct {
    const char *label;
    cb_metric m;
    int p99;
  } lat[] = {{"TTFT p50", CB_METRIC_TTFT, 0}, {"TTFT p99", CB_METRIC_TTFT, 1},
             {"TPOT p50", CB_METRIC_TPOT, 0}, {"TPOT p99", CB_METRIC_TPOT, 1}};
  for (size_t i = 0; i < 4; i++) {
    const cb_dist *dist = &s->metrics[lat[i].m];
    const cb_slo_result *slo = cb__rep_find_slo(s, lat[i].m);
    cb__rep_tone tt = CB__REP_TONE_NONE;
    if (slo && lat[i].p99 && isfinite(dist->p99))
      tt = dist->p99 <= slo->slo.bound_ns ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD;
    tile(&t[n], lat[i].label, tt);
    cb__rep_fmt_ms((lat[i].p99 ? dist->p99 : dist->p50) / 1e6, t[n].value, sizeof t[n].value);
    if (slo && lat[i].p99) {
      char b[32];
      snprintf(t[n].sub, sizeof t[n].sub, "SLO %s", cb__rep_fmt_ms(slo->slo.bound_ns / 1e6, b, sizeof b));
    }
    n++;
  }
  tile(&t[n], "Errors", s->failed ? CB__REP_TONE_BAD : CB__REP_TONE_GOOD);
  char c[32], m[32], pct[24];
  snprintf(t[n].value, sizeof t[n].value, "%s", cb__rep_fmt_count(s->failed, c, sizeof c));
  snprintf(t[n].sub, sizeof t[n].sub, "%s of %s measured",
           cb__rep_fmt_pct(s->measured ? (double)s->failed / (double)s->measured : NAN, pct, sizeof pct),
           cb__rep_fmt_count(s->measured, m, sizeof m));
  n++;
  cb__rep_doc_tiles(d, t, n);
}

static void slo_table(const cb_summary *s, cb__rep_doc *d) {
  if (!s->n_slos) return;
  cb__rep_table t;
  cb__rep_table_init(&t, "llrrrl");
  cb__rep_table_add(&t, 0, "SLO");
  cb__rep_table_add(&t, 0, "verdict");
  cb__rep_table_add(&t, 0, "attainment");
  cb__rep_table_add(&t, 0, "over the bound");
  cb__rep_table_add(&t, 0, "confidence");
  cb__rep_table_add(&t, 0, "to settle it");
  for (size_t k = 0; k < s->n_slos; k++) {
    const cb_slo_result *res = &s->slos[k];
    char text[128], pct[24], conf[24], a[32], b[32];
    cb__rep_slo_text(&res->slo, text, sizeof text);
    cb__rep_tone tone;
    const char *word = cb__rep_verdict_word(res->verdict, &tone);
    int itl = res->slo.metric == CB_METRIC_ITL || res->slo.metric == CB_METRIC_ITL_TOKEN;
    cb__rep_table_add(&t, 0, "%s", text);
    cb__rep_table_add(&t, tone, "%s", word);
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(res->attainment, pct, sizeof pct));
    cb__rep_table_add(&t, 0, "%s of %s %s", cb__rep_fmt_count(res->over, a, sizeof a),
                      cb__rep_fmt_count(res->units, b, sizeof b), itl ? "gaps" : "requests");
    cb__rep_table_add(&t, 0, "%s", cb__rep_fmt_pct(res->confidence, conf, sizeof conf));
    if (res->verdict == CB_VERDICT_UNDECIDED)
      cb__rep_table_add(&t, CB__REP_TONE_WARN, "%s more within the bound",
                        cb__rep_fmt_count(res->more_needed, a, sizeof a));
    else
      cb__rep_table_add(&t, 0, "-");
  }
  cb__rep_doc_table(d, &t);
  cb__rep_table_free(&t);
}

static void render(const cb_report *r, cb__rep_doc *d) {
  for (size_t i = 0; i < r->n_inputs; i++) {
    const cb__rep_input *in = &r->inputs[i];
    if (in->kind != CB__REP_INPUT_RUN) continue;
    const cb__rep_run *run = &in->runs[0];
    cb__rep_doc_heading(d, 3, NULL, "%s%s", in->path, run->predicted ? " (predicted)" : "");
    if (run->predicted)
      cb__rep_doc_para(d, CB__REP_TONE_WARN,
                       "A prediction: `calibench sim run` replayed the workload on the simulator in "
                       "virtual time. Nothing here was measured on a server.");
    context_line(run, d);
    images_line(run, d);
    tiles(run, d);
    slo_table(&run->all, d);
  }
}

const cb__rep_section cb__rep_sec_headline = {.id = "headline", .title = "Headline",
                                              .applies = applies,
                                              .render = render};
