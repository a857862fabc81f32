/*
 * squad_metric.c - `exact` and `f1` as metrics of `eval score` (docs/eval.md, SQuAD):
 * SQuAD v1.1's exact match and F1 of each segment (the max over its references),
 * and the corpus score as evaluate-v1.1.py prints it, 100 * the mean over segments.
 *
 * A segment's statistics are [exact, f1, 1]; both metrics share the row and differ
 * only in which mean is the score.
 */
#include <stdio.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "calibench/eval_rouge.h"
#include "seg_refs.h"

typedef struct squad_state {
  int f1; /* 0: exact is the score; 1: f1 is */
} squad_state;

static const cb_eval_option_def SQUAD_OPTIONS[] = {{NULL, NULL, NULL}};

static void squad_destroy(void *state) { cb_free(state); }

static size_t squad_n_stats(const void *state) {
  (void)state;
  return 3;
}

static cb_status squad_segment(void *state, const cb_eval_segment *seg, double *stats,
                               cb_error *err) {
  (void)state;
  cb__seg_refs refs;
  cb__seg_refs_of(seg, &refs);
  cb_eval_squad sq;
  /* fails only without a reference, which the corpus readers never give */
  cb_status st = cb_eval_squad_score(seg->hyp.s, seg->hyp.n, refs.s, refs.n, seg->nrefs, &sq, err);
  cb__seg_refs_free(&refs);
  if (st != CB_OK) return st;
  stats[0] = sq.exact;
  stats[1] = sq.f1;
  stats[2] = 1;
  return CB_OK;
}

static void squad_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                         cb_eval_result *out) {
  const squad_state *s = state;
  double n = stats[2];
  double exact = n > 0 ? 100.0 * stats[0] / n : 0, f1 = n > 0 ? 100.0 * stats[1] / n : 0;
  out->score = s->f1 ? f1 : exact;
  snprintf(out->display, sizeof out->display, "%s", s->f1 ? "SQuAD-F1" : "SQuAD-EM");
  cb_eval_sig_head(sig, &out->signature);
  cb_buf_appendf(&out->signature, "refs:max|norm:squad-v1.1|scale:0-100");
  cb_buf_appendf(&out->verbose, "(exact_match = %.4f, f1 = %.4f over %.0f segment%s)", exact, f1,
                 n, n == 1 ? "" : "s");
  out->stats = json_pack("{s:f, s:f, s:f}", "exact_match", exact, "f1", f1, "segments", n);
}

static cb_status create_state(int f1, void **state) {
  squad_state *s = cb_calloc(1, sizeof *s);
  s->f1 = f1;
  *state = s;
  return CB_OK;
}

static cb_status exact_create(cb_eval_options *o, void **state, cb_error *err) {
  (void)o, (void)err;
  return create_state(0, state);
}

static cb_status f1_create(cb_eval_options *o, void **state, cb_error *err) {
  (void)o, (void)err;
  return create_state(1, state);
}

const cb_eval_metric cb_eval_metric_exact = {
    .name = "exact",
    .options = SQUAD_OPTIONS,
    .create = exact_create,
    .destroy = squad_destroy,
    .n_stats = squad_n_stats,
    .segment = squad_segment,
    .result = squad_result,
};

const cb_eval_metric cb_eval_metric_f1 = {
    .name = "f1",
    .options = SQUAD_OPTIONS,
    .create = f1_create,
    .destroy = squad_destroy,
    .n_stats = squad_n_stats,
    .segment = squad_segment,
    .result = squad_result,
};
