/*
 * run_judge.c - `eval run`'s judge:RUBRIC metric (eval_run.h): the answered items go
 * to an LLM judge through cb_judge_run, whose own run (latency, tokens, errors) and
 * judge.json land in DIR/judge; eval.json gets each item's grade and the summary.
 *
 * A request of the run that failed is not sent to the judge: there is no answer to
 * grade. It is worth the scale's minimum, as the other metrics score it as an empty
 * answer, so the mean falls as errors rise under load. A judge answer that does not
 * parse is no grade at all: null, counted, and left out of the mean.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "eval/judge_internal.h"
#include "run_score.h"

void cb__eval_judging_free(cb__eval_judging *j) {
  if (!j) return;
  cb_judge_rubric_free(&j->rubric);
  cb_judge_result_free(&j->result);
  cb_free(j->item_of_seg);
  cb_free(j);
}

static cb_status judge_status(int rc) { return rc == 2 ? CB_ERR_INVALID : CB_ERR_NETWORK; }

cb_status cb__eval_run_judge(cb__eval_scoring *sc, const cb_eval_run_params *p, const char *dir,
                             cb_error *err) {
  cb__eval_judging *j = cb_calloc(1, sizeof *j);
  cb_status st = cb_judge_rubric_load(p->judge_rubric, &j->rubric, err);
  if (st) {
    cb_error_wrap(err, "%s", p->judge_name);
    cb__eval_judging_free(j);
    return st;
  }
  j->item_of_seg = cb_calloc(sc->n_segs + 1, sizeof *j->item_of_seg);
  cb_judge_items items = {.v = cb_calloc(sc->n_segs + 1, sizeof *items.v)};
  for (size_t s = 0; s < sc->n_segs; s++) {
    const cb__eval_seg *g = &sc->segs[s];
    if (g->status > CB__EVAL_TRUNCATED) {
      j->item_of_seg[s] = -1;
      j->answer_failures++;
      continue;
    }
    j->item_of_seg[s] = (long)items.n;
    items.v[items.n++] = (cb_judge_item){
        .id = g->item->id,
        .prompt = cb__eval_item_prompt(g->item),
        .answer = g->seg.hyp.s,
        .reference = g->seg.nrefs ? g->seg.refs[0].s : NULL,
        .human = g->item->human};
  }
  char out_dir[1200];
  snprintf(out_dir, sizeof out_dir, "%s/judge", dir);
  cb_judge_params jp = p->judge;
  jp.rubric = &j->rubric;
  jp.out_dir = out_dir;
  int rc = 0;
  if (items.n) {
    rc = cb_judge_run(&items, &jp, &j->result, err);
    if (rc) {
      st = judge_status(rc);
      cb_error_wrap(err, "%s", p->judge_name);
    }
  }
  cb_free(items.v);
  if (st) {
    cb__eval_judging_free(j);
    return st;
  }
  sc->judge = j;
  /* A judge that answered nothing graded nothing: its counts go into eval.json, but
   * the run's quality was not judged, which is the judge failing (exit 1), as a judge
   * that cannot be reached. A stopped run's unsent requests are not the judge's. */
  const cb_judge_summary *s = &j->result.summary;
  if (s->requests && s->request_failures == s->requests && !s->interrupted)
    return cb_error_set(err, CB_ERR_NETWORK,
                        "%s: every one of its %zu judge requests failed (their errors are in "
                        "%s/records.jsonl)",
                        p->judge_name, s->requests, out_dir);
  return CB_OK;
}

double cb__eval_judge_seg_score(const cb__eval_judging *j, size_t seg) {
  long i = j->item_of_seg[seg];
  if (i < 0) return j->rubric.scale_min;
  const cb_judge_item_result *r = &j->result.items[i];
  return r->ok ? r->score : NAN;
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* The judge's agreement with the items' human scores, as judge.json gives it. */
static json_t *agreement_json(const cb_judge_summary *s) {
  json_t *o = json_object();
  for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
    const cb_stats_agreement_interval *a = &s->agreement[k];
    json_object_set_new(o, cb_stats_agreement_name((cb_stats_agreement_kind)k),
                        json_pack("{s:o, s:o, s:o, s:f, s:I}", "estimate", num(a->estimate),
                                  "lo", num(a->lo), "hi", num(a->hi), "level", a->level,
                                  "replicates", (json_int_t)a->replicates));
  }
  return o;
}

json_t *cb__eval_judge_metric_json(const cb__eval_scoring *sc, const cb_eval_run_params *p,
                                   int class_id) {
  const cb__eval_judging *j = sc->judge;
  double sum = 0;
  size_t graded = 0, ungraded = 0, failed = 0;
  for (size_t s = 0; s < sc->n_segs; s++) {
    if (class_id >= 0 && sc->segs[s].class_id != (size_t)class_id) continue;
    double v = cb__eval_judge_seg_score(j, s);
    if (j->item_of_seg[s] < 0) failed++;
    if (isnan(v)) {
      ungraded++;
      continue;
    }
    sum += v;
    graded++;
  }
  char sig[256];
  snprintf(sig, sizeof sig, "judge:%s|scale:%g-%g|repeats:%zu|reduce:%s|ref:%s", j->rubric.name,
           j->rubric.scale_min, j->rubric.scale_max, p->judge.repeats,
           p->judge.reduce == CB_JUDGE_MAJORITY ? "majority" : "mean",
           j->rubric.show_reference ? "yes" : "no");
  json_t *o = json_pack("{s:s, s:o, s:s, s:b, s:[f,f], s:I, s:I, s:I}", "name", p->judge_name,
                        "score", graded ? json_real(sum / (double)graded) : json_null(),
                        "signature", sig, "higher_is_better", 1, "scale", j->rubric.scale_min,
                        j->rubric.scale_max, "scored", (json_int_t)graded, "unscored",
                        (json_int_t)ungraded, "answer_failures", (json_int_t)failed);
  if (class_id >= 0) return o;
  const cb_judge_summary *s = &j->result.summary;
  json_object_update_new(
      o, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:o, s:{s:o, s:o}}", "dir",
                   "judge", "judged", (json_int_t)s->items, "requests", (json_int_t)s->requests,
                   "parse_failures", (json_int_t)s->parse_failures, "request_failures",
                   (json_int_t)s->request_failures, "prompt_tokens", (json_int_t)s->prompt_tokens,
                   "self_agreement", num(s->self_agreement), "human_items",
                   (json_int_t)s->human_items, "agreement",
                   s->human_items ? agreement_json(s) : json_null(), "cost", num(s->cost),
                   "latency_s", "p50", num(s->latency_p50_s), "p99", num(s->latency_p99_s)));
  json_object_set_new(o, "output_tokens", json_integer(s->output_tokens));
  json_object_set_new(o, "prices", cb__judge_prices_json(&p->judge));
  return o;
}
