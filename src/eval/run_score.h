/*
 * run_score.h - the scoring of one result directory (run_score.c) as the document
 * writer (run_json.c) reads it.
 */
#ifndef CALIBENCH_EVAL_RUN_SCORE_H
#define CALIBENCH_EVAL_RUN_SCORE_H

#include "calibench/results.h"
#include "run_internal.h"

/* What a record's answer counts as (eval.json's "status"). */
typedef enum { CB__EVAL_OK = 0, CB__EVAL_TRUNCATED, CB__EVAL_ERROR, CB__EVAL_TIMEOUT } cb__eval_status;
#define CB__EVAL_NSTATUS 4
const char *cb__eval_status_name(cb__eval_status s);

typedef struct cb__eval_seg {
  const cb_record *rec;
  size_t class_id;
  const cb__eval_item *item;
  cb__eval_status status;
  cb_eval_segment seg; /* the answer ("" when it failed) and the item's references */
} cb__eval_seg;

typedef struct cb__eval_class {
  cb__eval_items items; /* has_refs 0: measured, not scored */
} cb__eval_class;

typedef struct cb__eval_metric_run {
  const char *name;
  const cb_eval_metric *m;
  void *state;          /* corpus scoring */
  void *sentence_state; /* per item (sacrebleu's --sentence-level settings) */
  size_t k;
  double *rows;         /* n_segs x k statistics */
} cb__eval_metric_run;

typedef struct cb__eval_interval {
  double mean, low, high;
  long resamples;       /* 0: none */
} cb__eval_interval;

/* The judge: metric over the answered items (run_judge.c). */
typedef struct cb__eval_judging {
  cb_judge_rubric rubric;
  cb_judge_result result;
  long *item_of_seg;    /* per segment: its judge item, -1 when its request failed */
  size_t answer_failures; /* segments not sent to the judge (error, timeout) */
} cb__eval_judging;

typedef struct cb__eval_scoring {
  cb_workload *wl;
  cb__eval_class *classes;
  size_t n_classes;
  cb_record_set records;
  cb__eval_seg *segs;   /* in schedule order */
  size_t n_segs;
  cb__eval_metric_run *metrics;
  size_t n_metrics;
  cb__eval_judging *judge; /* NULL: no judge, or it failed */
  int interrupted;         /* the run was stopped by a signal (its summary.json says) */
} cb__eval_scoring;

void cb__eval_scoring_free(cb__eval_scoring *sc);
/* The corpus result of metric m over every segment (class_id -1) or one class's;
 * interval (NULL: none) gets the bootstrap over those segments when p->bootstrap. */
void cb__eval_corpus_result(const cb__eval_scoring *sc, const cb__eval_metric_run *m, int class_id,
                            const cb_eval_run_params *p, cb_eval_result *out,
                            cb__eval_interval *interval);
/* eval.json's document (docs/eval.md, "eval.json"). */
json_t *cb__eval_run_json(const cb__eval_scoring *sc, const cb_eval_run_params *p);
int cb__eval_cmp_double(const void *a, const void *b);

/* Judge the answered segments into dir/judge (cb_judge_run); sc->judge on success. */
cb_status cb__eval_run_judge(cb__eval_scoring *sc, const cb_eval_run_params *p, const char *dir,
                             cb_error *err);
void cb__eval_judging_free(cb__eval_judging *j);
/* A segment's judge score: NAN when the judge's answers did not parse. */
double cb__eval_judge_seg_score(const cb__eval_judging *j, size_t seg);
/* metrics[judge_name] over every segment (class_id -1) or one class's. */
json_t *cb__eval_judge_metric_json(const cb__eval_scoring *sc, const cb_eval_run_params *p,
                                   int class_id);

#endif
