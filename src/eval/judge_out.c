/*
 * judge_out.c - judge.json (docs/eval-judge.md, "judge.json"): the run's parameters,
 * the summary and every item with each of its answers' outcome. Numbers that are
 * undefined (no human scores, a single repeat) are null.
 */
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "calibench/eval_judge.h"
#include "calibench/results.h"
#include "eval/judge_internal.h"

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *agreement(const cb_judge_summary *s) {
  json_t *o = json_object();
  for (int k = 0; k < CB_STATS_AGREE_COUNT; k++) {
    const cb_stats_agreement_interval *a = &s->agreement[k];
    json_object_set_new(o, cb_stats_agreement_name((cb_stats_agreement_kind)k),
                        json_pack("{s:o, s:o, s:o, s:f, s:I, s:I}", "estimate", num(a->estimate),
                                  "lo", num(a->lo), "hi", num(a->hi), "level", a->level,
                                  "replicates", (json_int_t)a->replicates, "undefined_replicates",
                                  (json_int_t)a->undefined));
  }
  return o;
}

static json_t *summary(const cb_judge_items *items, const cb_judge_summary *s) {
  json_t *o = json_pack(
      "{s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:o, s:I, s:o, s:o}", "items",
      (json_int_t)s->items, "scored", (json_int_t)s->scored, "requests", (json_int_t)s->requests,
      "request_failures", (json_int_t)s->request_failures, "parse_failures",
      (json_int_t)s->parse_failures, "parse_failure_rate",
      num(s->requests ? (double)s->parse_failures / (double)s->requests : NAN), "mean_score",
      num(s->mean_score), "self_agreement", num(s->self_agreement), "human_items",
      (json_int_t)s->human_items, "agreement", s->human_items ? agreement(s) : json_null(),
      "prompt_tokens", (json_int_t)s->prompt_tokens, "cost", num(s->cost), "latency_s",
      json_pack("{s:o, s:o}", "p50", num(s->latency_p50_s), "p99", num(s->latency_p99_s)));
  json_object_set_new(o, "output_tokens", json_integer(s->output_tokens));
  json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
  if (items->pair)
    json_object_update_new(
        o, json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:o}", "win_rate_a", num(s->win_rate_a),
                     "wins_a", (json_int_t)s->wins_a, "wins_b", (json_int_t)s->wins_b, "ties",
                     (json_int_t)s->ties, "consistent", (json_int_t)s->consistent,
                     "inconsistent", (json_int_t)s->inconsistent, "position_consistency",
                     num(s->position_consistency)));
  return o;
}

static json_t *answer(const cb__judge_answer *a, int pair, size_t repeat, int order,
                      int interrupted) {
  json_t *o = json_pack("{s:I}", "repeat", (json_int_t)repeat);
  if (pair) json_object_set_new(o, "order", json_string(order ? "b_first" : "a_first"));
  if (!a->returned || a->request_failed) {
    json_object_set_new(o, "status", json_string("request_failed"));
    json_object_set_new(o, "error", json_string(a->returned ? a->error
                                                : interrupted ? "not answered: the run was stopped"
                                                              : "no record"));
  } else if (!a->parsed.ok) {
    json_object_set_new(o, "status", json_string("parse_failure"));
    json_object_set_new(o, "why", json_string(a->parsed.why));
  } else {
    json_object_set_new(o, "status", json_string("ok"));
    if (pair) json_object_set_new(o, "verdict", json_stringn(&a->parsed.verdict, 1));
    else json_object_set_new(o, "score", json_real(a->parsed.score));
  }
  return o;
}

static json_t *item(const cb_judge_items *items, size_t i, size_t k,
                    const cb__judge_answer *answers, const cb_judge_item_result *r,
                    int interrupted) {
  const cb_judge_item *it = &items->v[i];
  json_t *o = json_object();
  json_object_set_new(o, "id", it->id ? json_string(it->id) : json_integer((json_int_t)i + 1));
  json_object_set_new(o, "score", r->ok ? json_real(r->score) : json_null());
  json_object_set_new(o, "human", num(it->human));
  json_object_set_new(o, "parsed", json_integer((json_int_t)r->parsed));
  json_object_set_new(o, "parse_failures", json_integer((json_int_t)r->parse_failures));
  json_object_set_new(o, "request_failures", json_integer((json_int_t)r->request_failures));
  json_object_set_new(o, "agreement", num(r->agreement));
  if (items->pair) {
    json_object_set_new(o, "consistent", json_integer((json_int_t)r->consistent));
    json_object_set_new(o, "inconsistent", json_integer((json_int_t)r->inconsistent));
  }
  json_t *list = json_array();
  int orders = items->pair ? 2 : 1;
  for (size_t rep = 0; rep < k; rep++)
    for (int ord = 0; ord < orders; ord++)
      json_array_append_new(list, answer(&answers[(i * k + rep) * (size_t)orders + (size_t)ord],
                                         items->pair, rep, ord, interrupted));
  json_object_set_new(o, "answers", list);
  return o;
}

json_t *cb__judge_prices_json(const cb_judge_params *p) {
  if (!isfinite(p->price_input_per_1k) || !isfinite(p->price_output_per_1k)) return json_null();
  return json_pack("{s:f, s:f}", "input_per_1k", p->price_input_per_1k, "output_per_1k",
                   p->price_output_per_1k);
}

cb_status cb__judge_write_json(const char *path, const cb_judge_items *items,
                               const cb_judge_params *p, const char *model,
                               const cb__judge_answer *answers,
                               const cb_judge_result *r, cb_error *err) {
  const cb_judge_rubric *ru = p->rubric;
  json_t *root = json_pack(
      "{s:s, s:s?, s:{s:s, s:f, s:f, s:b}, s:I, s:s, s:I, s:I}", "mode",
      items->pair ? "pair" : "single", "judge_model", model, "rubric", "name", ru->name,
      "scale_min", ru->scale_min, "scale_max", ru->scale_max, "reference", ru->show_reference,
      "repeats", (json_int_t)p->repeats, "reduce", p->reduce == CB_JUDGE_MAJORITY ? "majority" : "mean",
      "bootstrap", (json_int_t)p->bootstrap, "seed", (json_int_t)p->seed);
  json_object_set_new(root, "prices", cb__judge_prices_json(p));
  json_object_set_new(root, "summary", summary(items, &r->summary));
  json_t *list = json_array();
  for (size_t i = 0; i < r->n; i++)
    json_array_append_new(list, item(items, i, p->repeats, answers, &r->items[i],
                                     r->summary.interrupted));
  json_object_set_new(root, "items", list);
  char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
  json_decref(root);
  size_t len = strlen(text);
  cb_status st = cb_results_write_file(path, text, len, err);
  free(text);
  return st;
}
