/*
 * run_json.c - eval.json (docs/eval.md, "eval.json"): the corpus score of every
 * metric with its signature, statistics and interval; the same per class; and every
 * scored request with its status, its scores, its statistics (what a paired test
 * between two runs resamples) and its texts.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "run_score.h"

static json_t *status_counts(const cb__eval_scoring *sc, int class_id, size_t *requests) {
  size_t n[CB__EVAL_NSTATUS] = {0};
  *requests = 0;
  for (size_t s = 0; s < sc->n_segs; s++)
    if (class_id < 0 || sc->segs[s].class_id == (size_t)class_id) {
      n[sc->segs[s].status]++;
      (*requests)++;
    }
  json_t *o = json_object();
  for (int i = 0; i < CB__EVAL_NSTATUS; i++)
    json_object_set_new(o, cb__eval_status_name((cb__eval_status)i), json_integer((json_int_t)n[i]));
  json_object_set_new(o, "wrong", json_integer((json_int_t)(n[CB__EVAL_ERROR] + n[CB__EVAL_TIMEOUT])));
  return o;
}

static json_t *metric_json(const cb__eval_scoring *sc, const cb__eval_metric_run *m, int class_id,
                           const cb_eval_run_params *p) {
  cb_eval_result r;
  cb__eval_interval iv;
  cb__eval_corpus_result(sc, m, class_id, p, &r, &iv);
  json_t *o = json_pack("{s:s, s:f, s:s, s:b, s:O}", "name", r.display, "score", r.score,
                        "signature", r.signature.data ? r.signature.data : "", "higher_is_better",
                        cb_eval_metric_higher_is_better(m->name), "stats", r.stats);
  if (iv.resamples)
    json_object_set_new(o, "interval",
                        json_pack("{s:f, s:f, s:f, s:f, s:I, s:I}", "mean", iv.mean, "low", iv.low,
                                  "high", iv.high, "confidence", 0.95, "resamples",
                                  (json_int_t)iv.resamples, "seed", (json_int_t)p->seed));
  cb_eval_result_free(&r);
  return o;
}

static json_t *item_json(const cb__eval_scoring *sc, const cb_eval_run_params *p, size_t s) {
  const cb__eval_seg *g = &sc->segs[s];
  const cb_workload_class *cls = cb_workload_get_class(sc->wl, g->class_id);
  json_t *refs = json_array();
  for (size_t r = 0; r < g->seg.nrefs; r++)
    json_array_append_new(refs, json_stringn(g->seg.refs[r].s, g->seg.refs[r].n));
  json_t *scores = json_object(), *stats = json_object();
  for (size_t i = 0; i < sc->n_metrics; i++) {
    const cb__eval_metric_run *m = &sc->metrics[i];
    const double *row = m->rows + s * m->k;
    char nb[24];
    snprintf(nb, sizeof nb, "%zu", g->seg.nrefs);
    cb_eval_sig_info sig = {.nrefs = nb};
    cb_eval_result r = {0};
    m->m->result(m->sentence_state, row, &sig, &r);
    json_object_set_new(scores, m->name, json_real(r.score));
    cb_eval_result_free(&r);
    json_t *v = json_array();
    for (size_t j = 0; j < m->k; j++) json_array_append_new(v, json_real(row[j]));
    json_object_set_new(stats, m->name, v);
  }
  if (sc->judge) {
    double v = cb__eval_judge_seg_score(sc->judge, s);
    json_object_set_new(scores, p->judge_name, isnan(v) ? json_null() : json_real(v));
  }
  json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:s, s:s, s:s}", "index", (json_int_t)g->rec->index,
                        "id", g->item->id, "class", cls->name, "line", (json_int_t)g->item->line,
                        "status", cb__eval_status_name(g->status), "finish_reason",
                        g->rec->finish_reason, "error_class", g->rec->error_class);
  json_object_set_new(o, "scores", scores);
  json_object_set_new(o, "stats", stats);
  json_object_set_new(o, "prompt", json_string(cb__eval_item_prompt(g->item)));
  json_object_set_new(o, "references", refs);
  json_object_set_new(o, "hypothesis", json_stringn(g->seg.hyp.s, g->seg.hyp.n));
  /* scored on the first CB_SESSION_ANSWER_MAX bytes: the rest was not kept */
  if (g->rec->output_text_cut) json_object_set_new(o, "answer_cut", json_true());
  return o;
}

json_t *cb__eval_run_json(const cb__eval_scoring *sc, const cb_eval_run_params *p) {
  size_t requests;
  json_t *doc = json_object();
  json_object_set_new(doc, "version", json_integer(1));
  json_object_set_new(doc, "options", cb__eval_options_json(p));
  json_object_set_new(doc, "status", status_counts(sc, -1, &requests));
  json_object_set_new(doc, "requests", json_integer((json_int_t)requests));
  json_object_set_new(doc, "interrupted", json_boolean(sc->interrupted));
  json_t *metrics = json_object();
  for (size_t i = 0; i < sc->n_metrics; i++)
    json_object_set_new(metrics, sc->metrics[i].name, metric_json(sc, &sc->metrics[i], -1, p));
  if (sc->judge) json_object_set_new(metrics, p->judge_name, cb__eval_judge_metric_json(sc, p, -1));
  json_object_set_new(doc, "metrics", metrics);
  json_t *classes = json_object();
  for (size_t c = 0; c < sc->n_classes; c++) {
    const cb__eval_items *items = &sc->classes[c].items;
    json_t *co = json_pack("{s:s, s:b}", "dataset", items->path, "scored", items->has_refs);
    if (items->has_refs) {
      json_object_set_new(co, "status", status_counts(sc, (int)c, &requests));
      json_object_set_new(co, "requests", json_integer((json_int_t)requests));
      json_t *cm = json_object();
      for (size_t i = 0; i < sc->n_metrics; i++)
        json_object_set_new(cm, sc->metrics[i].name, metric_json(sc, &sc->metrics[i], (int)c, p));
      if (sc->judge)
        json_object_set_new(cm, p->judge_name, cb__eval_judge_metric_json(sc, p, (int)c));
      json_object_set_new(co, "metrics", cm);
    }
    json_object_set_new(classes, cb_workload_get_class(sc->wl, c)->name, co);
  }
  json_object_set_new(doc, "classes", classes);
  json_t *items = json_array();
  for (size_t s = 0; s < sc->n_segs; s++) json_array_append_new(items, item_json(sc, p, s));
  json_object_set_new(doc, "items", items);
  return doc;
}
