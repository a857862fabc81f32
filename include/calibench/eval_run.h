/*
 * eval_run.h - quality under load (`calibench eval run`, docs/eval.md): the answers of
 * a measured run scored against its dataset's references with the metric table of
 * eval.h, written to eval.json beside summary.json.
 *
 * An evaluation dataset is JSONL, one item per line: `id` (string or number; the
 * line's item number when absent), `prompt` (a string) or `messages` (an OpenAI chat
 * array), `reference` (a string, or a non-empty list of strings for several), and
 * optionally `max_tokens`, `labels` and human scores, which are kept as they are.
 * The run sends it as a workload dataset (jsonl: or chat:, docs/workload.md), which
 * ignores the other keys; each record is matched to its item through the schedule
 * (record index -> class and item -> the item's line), so scenario classes and
 * shuffled orders score right. A class whose dataset has no `reference` is measured
 * but not scored.
 *
 * A request that failed (an error, a timeout) scores as an empty answer: wrong, and
 * counted. An answer cut by max_tokens (finish_reason "length") is scored as it came
 * and counted as truncated.
 */
#ifndef CALIBENCH_EVAL_RUN_H
#define CALIBENCH_EVAL_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "calibench/error.h"
#include "calibench/eval.h"
#include "calibench/eval_judge.h"
#include "calibench/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_EVAL_RUN_MAX_METRICS 16
/* sacrebleu's default resampling seed (SACREBLEU_SEED); our generator is calibench's. */
#define CB_EVAL_RUN_SEED 12345

typedef struct cb_eval_run_params {
  const char *metrics[CB_EVAL_RUN_MAX_METRICS]; /* names in the metric table */
  size_t n_metrics;
  /* The metrics' options as `eval score` takes them (--tokenize intl, --lowercase);
   * borrowed, NULL or empty for the defaults. Recorded in eval.json ("options"). */
  const cb_eval_option *opts;
  size_t n_opts;
  long bootstrap;  /* resamples for each corpus score's 95% interval; 0: none */
  uint64_t seed;   /* of the resampling */
  /* Threads to score the answers on (0 or 1: the calling thread); eval.json is the
   * same byte for byte whatever the count (cb_eval_segment_rows). */
  int threads;
  /* "judge:RUBRIC" in the metrics: the rubric file (NULL: no judge; points into the
   * list given to cb_eval_run_parse_metrics) and the name its scores go under in
   * eval.json, "judge:" and the file's base name without .yaml / .yml. */
  const char *judge_rubric;
  char judge_name[128];
  /* The judge to ask (url, model, api_key_env, concurrency, repeats, ...); rubric and
   * out_dir are set for each result directory (DIR/judge). */
  cb_judge_params judge;
} cb_eval_run_params;

/* No metrics, no bootstrap, seed CB_EVAL_RUN_SEED, no judge (its defaults otherwise). */
void cb_eval_run_params_init(cb_eval_run_params *p);
/* Split a comma-separated list (--metrics bleu,chrf) into p->metrics (the strings
 * point into `list`, which must outlive p) and check each: an unknown name, one given
 * twice, or none is CB_ERR_INVALID naming it. One "judge:RUBRIC" may be among them:
 * it sets p->judge_rubric and p->judge_name instead of a table entry (a second judge,
 * or an empty RUBRIC, is CB_ERR_INVALID). */
cb_status cb_eval_run_parse_metrics(cb_eval_run_params *p, char *list, cb_error *err);

/* Every metric's options, each name once (an option shared by two metrics means the
 * same to both), in the table's order: *n of them into out (room for max). */
size_t cb_eval_option_defs(const cb_eval_option_def **out, size_t max);
/* Create each metric with p's options: CB_ERR_INVALID naming the option when a value
 * is wrong or none of the metrics takes it. With a judge, its rubric is read (errors
 * as "FILE:LINE: key ...") and p->judge.url must be set. */
cb_status cb_eval_run_check_options(const cb_eval_run_params *p, cb_error *err);

/* 1 when higher scores are better for the metric (TER is an error rate: 0). */
int cb_eval_metric_higher_is_better(const char *name);

/* The workload dataset spec for an evaluation dataset FILE ("jsonl:FILE" when its
 * items have `prompt`, "chat:FILE" when `messages`; a FILE already given as jsonl: or
 * chat: stays as it is) into spec[0..n), and its number of items. Errors name the
 * file and line: unreadable, not JSON, an item with neither or both prompt forms,
 * kinds mixed, no `reference`, no items. */
cb_status cb_eval_dataset_spec(const char *file, char *spec, size_t n, size_t *items,
                               cb_error *err);

/*
 * Score the result directory `dir` of a run of workload `w` (the parameters the
 * session ran; a sweep point's load may differ, its classes and items do not): read
 * dir/records.jsonl, match each record to its item, score every class with
 * references, write dir/eval.json atomically (docs/eval.md, "eval.json"). *doc, when
 * not NULL, gets the document (json_decref it). CB_ERR_NOT_FOUND when no class has
 * references; errors name the file and line.
 *
 * With a judge (p->judge_rubric), the answered items (status ok or truncated: prompt,
 * answer, first reference, `human` when the item has one) are judged with
 * cb_judge_run into dir/judge (its own run: records.jsonl, summary.json, judge.json);
 * eval.json gets each item's scores[judge_name] (null when the judge's answers did not
 * parse; the scale's minimum for a request that failed, which was not sent) and
 * metrics[judge_name]. A judge that fails (unreachable, the disk, every one of its
 * requests failed) still leaves eval.json with the other metrics (and the judge's
 * counts when it ran), *doc set to it; the error is returned (CB_ERR_NETWORK, or
 * CB_ERR_INVALID for bad input).
 */
cb_status cb_eval_run_score(const cb_eval_run_params *p, const cb_workload_params *w,
                            const char *dir, json_t **doc, cb_error *err);

/* Two runs' corpus scores compared item by item (the gate's paired-bootstrap test). */
typedef struct cb_eval_run_pair {
  double baseline, current; /* corpus scores over the paired items */
  double p_value;           /* one-sided: that the current run is worse */
  double ci_low, ci_high;   /* interval of the change current - baseline */
  size_t n;                 /* items paired */
} cb_eval_run_pair;

/*
 * sacrebleu's paired bootstrap (significance.py, _paired_bs_test): the items of both
 * runs' eval.json paired by request index (their ids must agree: the same dataset in
 * the same seeded order), `resamples` resamples of the pairs drawn with `seed`, each
 * side's corpus score from its summed statistics. sacrebleu's test is two-sided on
 * |difference|; here the difference is signed toward "worse" (so an improvement is
 * never significant), the resampled differences are centred on their mean as there,
 * and p = (#{centred >= observed} + 1) / (resamples + 1). class_name "" = every item.
 * Errors name the file: no eval.json, items that do not pair, no metric's statistics.
 */
cb_status cb_eval_run_paired(const char *baseline_dir, const char *current_dir,
                             const char *metric, const char *class_name, size_t resamples,
                             double confidence, uint64_t seed, cb_eval_run_pair *out,
                             cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
