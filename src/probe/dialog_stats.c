/*
 * dialog_stats.c - what a `probe dialog` run adds up to (dialog.h): satisfaction of
 * every check, per check and turn, and by recall depth (implicit constraints only),
 * each with Wilson's interval; clarification questions; TTFT and prompt tokens per
 * turn as the conversation grows; the failing checks with their answers.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/stats.h"
#include "probe/dialog_run.h"

/* Depths at or past this one are where recall is put to the test (a metric). */
#define DEEP 3

typedef struct tally {
  uint64_t n, k;
} tally;

static json_t *rate_json(const tally *t, double level) {
  double lo, hi;
  cb_stats_wilson(t->k, t->n, level, &lo, &hi);
  json_t *o = json_object();
  json_object_set_new(o, "n", json_integer((json_int_t)t->n));
  json_object_set_new(o, "satisfied", json_integer((json_int_t)t->k));
  json_object_set_new(o, "rate", t->n ? json_real((double)t->k / (double)t->n) : json_null());
  json_object_set_new(o, "lo", json_real(lo));
  json_object_set_new(o, "hi", json_real(hi));
  return o;
}

/* A gateable metric; left out when nothing was measured. */
static void metric(json_t *metrics, const char *name, const tally *t, double level, int higher) {
  if (!t->n) return;
  double lo, hi;
  cb_stats_wilson(t->k, t->n, level, &lo, &hi);
  json_t *m = json_object();
  json_object_set_new(m, "value", json_real((double)t->k / (double)t->n));
  json_object_set_new(m, "lo", json_real(lo));
  json_object_set_new(m, "hi", json_real(hi));
  json_object_set_new(m, "higher_is_better", json_boolean(higher));
  json_object_set_new(m, "n", json_integer((json_int_t)t->n));
  json_object_set(metrics, name, m);
  json_decref(m);
}

static int max_depth(const cb__probe_dialog_suite *s) {
  int d = -1;
  for (size_t i = 0; i < s->n; i++)
    for (size_t t = 0; t < s->scenarios[i].n_turns; t++)
      for (size_t c = 0; c < s->scenarios[i].turns[t].n_checks; c++)
        if (s->scenarios[i].turns[t].checks[c].depth > d) d = s->scenarios[i].turns[t].checks[c].depth;
  return d;
}

/* TTFT per turn: mean, p50, p90 in ms over the turns answered with content. */
static json_t *ttft_json(double *v, size_t n) {
  if (!n) return json_null();
  cb_stats_sort(v, n);
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  json_t *o = json_object();
  json_object_set_new(o, "mean", json_real(sum / (double)n));
  json_object_set_new(o, "p50", json_real(cb_stats_quantile_sorted(v, n, 0.5)));
  json_object_set_new(o, "p90", json_real(cb_stats_quantile_sorted(v, n, 0.9)));
  return o;
}

static json_t *by_turn(const cb__probe_dialog_run *r, double level) {
  json_t *arr = json_array();
  double *ttft = cb_calloc(r->n_convs + 1, sizeof *ttft);
  for (size_t t = 0; t < r->stride; t++) {
    tally checks = {0}, clar = {0};
    size_t nt = 0, np = 0;
    double prompt = 0;
    for (size_t k = 0; k < r->n_convs; k++) {
      const cb__probe_dialog_conv *c = &r->convs[k];
      const cb__probe_dialog_scenario *sc = &r->suite->scenarios[c->scenario];
      if (t >= sc->n_turns || !c->turns[t].answered) continue;
      const cb__probe_dialog_turn_result *tr = &c->turns[t];
      clar.n++;
      clar.k += (uint64_t)tr->clarification;
      if (!isnan(tr->ttft_ms)) ttft[nt++] = tr->ttft_ms;
      if (tr->prompt_tokens >= 0) {
        prompt += (double)tr->prompt_tokens;
        np++;
      }
      size_t base = 0;
      for (size_t u = 0; u < t; u++) base += sc->turns[u].n_checks;
      for (size_t i = 0; i < sc->turns[t].n_checks; i++) {
        checks.n++;
        checks.k += c->outcome[base + i] == 1;
      }
    }
    json_t *o = json_object();
    json_object_set_new(o, "turn", json_integer((json_int_t)t + 1));
    json_object_set_new(o, "answers", json_integer((json_int_t)clar.n));
    json_object_set_new(o, "checks", rate_json(&checks, level));
    json_object_set_new(o, "clarifications", json_integer((json_int_t)clar.k));
    json_object_set_new(o, "ttft_ms", ttft_json(ttft, nt));
    json_object_set_new(o, "prompt_tokens_mean", np ? json_real(prompt / (double)np) : json_null());
    json_array_append_new(arr, o);
  }
  cb_free(ttft);
  return arr;
}

/* Every check of every scenario, its satisfaction over the repetitions. */
static json_t *by_check(const cb__probe_dialog_run *r, double level) {
  json_t *arr = json_array();
  for (size_t i = 0; i < r->suite->n; i++) {
    const cb__probe_dialog_scenario *sc = &r->suite->scenarios[i];
    size_t base = 0;
    for (size_t t = 0; t < sc->n_turns; t++) {
      for (size_t j = 0; j < sc->turns[t].n_checks; j++) {
        const cb__probe_dialog_check *ch = &sc->turns[t].checks[j];
        tally tl = {0};
        for (size_t k = i; k < r->n_convs; k += r->suite->n) {
          int8_t o = r->convs[k].outcome[base + j];
          if (o < 0) continue;
          tl.n++;
          tl.k += o == 1;
        }
        json_t *o = rate_json(&tl, level);
        json_object_set_new(o, "scenario", json_string(sc->name));
        json_object_set_new(o, "turn", json_integer((json_int_t)t + 1));
        json_object_set_new(o, "line", json_integer(ch->line));
        json_object_set_new(o, "kind", json_string(cb__probe_dialog_check_kind_name(ch->kind)));
        json_object_set_new(o, "slot", ch->slot >= 0 ? json_string(sc->slots[ch->slot].name) : json_null());
        json_object_set_new(o, "depth", ch->depth >= 0 ? json_integer(ch->depth) : json_null());
        if (ch->pattern) json_object_set_new(o, "pattern", json_string(ch->pattern));
        if (ch->path) json_object_set_new(o, "path", json_string(ch->path));
        if (ch->expected) json_object_set_new(o, "expected", json_string(ch->expected));
        json_array_append_new(arr, o);
      }
      base += sc->turns[t].n_checks;
    }
  }
  return arr;
}

static json_t *failures_json(const cb__probe_dialog_run *r) {
  json_t *arr = json_array();
  for (size_t i = 0; i < r->n_failures; i++) {
    const cb__probe_dialog_failure *f = &r->failures[i];
    const cb__probe_dialog_conv *c = &r->convs[f->conv];
    const cb__probe_dialog_scenario *sc = &r->suite->scenarios[c->scenario];
    const cb__probe_dialog_check *ch = &sc->turns[f->turn].checks[f->check];
    json_t *o = json_object();
    json_object_set_new(o, "scenario", json_string(sc->name));
    json_object_set_new(o, "repetition", json_integer((json_int_t)c->rep));
    json_object_set_new(o, "turn", json_integer((json_int_t)f->turn + 1));
    json_object_set_new(o, "line", json_integer(ch->line));
    json_object_set_new(o, "kind", json_string(cb__probe_dialog_check_kind_name(ch->kind)));
    json_object_set_new(o, "slot", ch->slot >= 0 ? json_string(sc->slots[ch->slot].name) : json_null());
    json_object_set_new(o, "depth", ch->depth >= 0 ? json_integer(ch->depth) : json_null());
    /* model text, cleaned when kept (dialog_live.c); the report escapes it again */
    json_object_set_new(o, "answer", json_string(f->answer));
    json_object_set_new(o, "answer_cut", json_boolean(f->answer_cut));
    json_array_append_new(arr, o);
  }
  return arr;
}

json_t *cb__probe_dialog_run_json(const cb__probe_dialog_run *r) {
  const cb__probe_dialog_suite *s = r->suite;
  double level = r->p.level;
  int dmax = max_depth(s);
  tally all = {0}, implicit = {0}, deep = {0}, clar = {0};
  tally *depth = cb_calloc((size_t)(dmax + 2), sizeof *depth);
  size_t failed = 0;
  for (size_t k = 0; k < r->n_convs; k++) {
    const cb__probe_dialog_conv *c = &r->convs[k];
    const cb__probe_dialog_scenario *sc = &s->scenarios[c->scenario];
    failed += (size_t)c->failed;
    size_t base = 0;
    for (size_t t = 0; t < sc->n_turns; t++) {
      if (c->turns[t].answered) {
        clar.n++;
        clar.k += (uint64_t)c->turns[t].clarification;
      }
      for (size_t i = 0; i < sc->turns[t].n_checks; i++) {
        int8_t o = c->outcome[base + i];
        if (o < 0) continue;
        int d = sc->turns[t].checks[i].depth;
        all.n++;
        all.k += o == 1;
        if (d < 0) continue;
        implicit.n++;
        implicit.k += o == 1;
        depth[d].n++;
        depth[d].k += o == 1;
        if (d >= DEEP) {
          deep.n++;
          deep.k += o == 1;
        }
      }
      base += sc->turns[t].n_checks;
    }
  }
  json_t *doc = json_object();
  json_t *metrics = json_object();
  metric(metrics, "satisfaction", &all, level, 1);
  metric(metrics, "implicit_satisfaction", &implicit, level, 1);
  metric(metrics, "satisfaction_depth_ge3", &deep, level, 1);
  metric(metrics, "clarification_rate", &clar, level, 0);
  json_object_set_new(doc, "metrics", metrics);
  json_t *conv = json_object();
  json_object_set_new(conv, "scenarios", json_integer((json_int_t)s->n));
  json_object_set_new(conv, "repetitions", json_integer((json_int_t)r->p.repetitions));
  json_object_set_new(conv, "planned", json_integer((json_int_t)r->n_convs));
  json_object_set_new(conv, "completed", json_integer((json_int_t)r->completed));
  json_object_set_new(conv, "failed", json_integer((json_int_t)failed));
  json_object_set_new(doc, "conversations", conv);
  json_object_set_new(doc, "index_stride", json_integer((json_int_t)r->stride));
  json_object_set_new(doc, "level", json_real(level));
  json_object_set_new(doc, "satisfaction", rate_json(&all, level));
  json_t *bd = json_array();
  for (int d = 0; d <= dmax; d++) {
    if (!depth[d].n) continue;
    json_t *o = rate_json(&depth[d], level);
    json_object_set_new(o, "depth", json_integer(d));
    json_array_append_new(bd, o);
  }
  json_object_set_new(doc, "by_depth", bd);
  json_object_set_new(doc, "by_turn", by_turn(r, level));
  json_object_set_new(doc, "checks", by_check(r, level));
  json_t *cl = rate_json(&clar, level);
  json_object_set_new(doc, "clarification", cl);
  json_object_set_new(doc, "failed_checks", json_integer((json_int_t)r->n_failed_checks));
  json_object_set_new(doc, "failures", failures_json(r));
  cb_free(depth);
  return doc;
}
