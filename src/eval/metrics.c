/*
 * metrics.c - the table of metrics `eval score` knows (eval.h says how one plugs in),
 * and what every metric shares: the score line and the corpus statistics.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "blocks.h"

extern const cb_eval_metric cb_eval_metric_bleu, cb_eval_metric_chrf, cb_eval_metric_chrfpp,
    cb_eval_metric_ter, cb_eval_metric_embed_cosine, cb_eval_metric_rouge1, cb_eval_metric_rouge2,
    cb_eval_metric_rouge3, cb_eval_metric_rouge4, cb_eval_metric_rouge5, cb_eval_metric_rouge6,
    cb_eval_metric_rouge7, cb_eval_metric_rouge8, cb_eval_metric_rouge9, cb_eval_metric_rougeL,
    cb_eval_metric_rougeLsum, cb_eval_metric_exact, cb_eval_metric_f1;

static const cb_eval_metric *const METRICS[] = {
    &cb_eval_metric_bleu,
    &cb_eval_metric_chrf,
    &cb_eval_metric_chrfpp,
    &cb_eval_metric_ter,
    &cb_eval_metric_embed_cosine,
    &cb_eval_metric_rouge1,
    &cb_eval_metric_rouge2,
    &cb_eval_metric_rouge3,
    &cb_eval_metric_rouge4,
    &cb_eval_metric_rouge5,
    &cb_eval_metric_rouge6,
    &cb_eval_metric_rouge7,
    &cb_eval_metric_rouge8,
    &cb_eval_metric_rouge9,
    &cb_eval_metric_rougeL,
    &cb_eval_metric_rougeLsum,
    &cb_eval_metric_exact,
    &cb_eval_metric_f1,
};

const cb_eval_metric *const *cb_eval_metrics(size_t *n) {
  *n = sizeof METRICS / sizeof METRICS[0];
  return METRICS;
}

const cb_eval_metric *cb_eval_metric_find(const char *name) {
  for (size_t i = 0; i < sizeof METRICS / sizeof METRICS[0]; i++)
    if (!strcmp(METRICS[i]->name, name)) return METRICS[i];
  return NULL;
}

void cb_eval_result_free(cb_eval_result *r) {
  cb_buf_free(&r->signature);
  cb_buf_free(&r->verbose);
  json_decref(r->stats);
  memset(r, 0, sizeof *r);
}

/* sacrebleu/metrics/base.py, Score.format (without confidence, which the driver adds). */
void cb_eval_score_line(const cb_eval_result *r, int width, const cb_eval_interval *iv,
                        cb_buf *out) {
  cb_buf_append_str(out, r->display);
  if (r->signature.len) {
    cb_buf_append_char(out, '|');
    cb_buf_append(out, r->signature.data, r->signature.len);
  }
  cb_buf_appendf(out, " = %.*f", width, r->score);
  if (iv) cb_buf_appendf(out, " (\xCE\xBC = %.*f \xC2\xB1 %.*f)", width, iv->mean, width, iv->ci);
  if (r->verbose.len) {
    cb_buf_append_char(out, ' ');
    cb_buf_append(out, r->verbose.data, r->verbose.len);
  }
}

/* Signature.format (base.py): the keys in their dict's order, version last. */
void cb_eval_sig_head(const cb_eval_sig_info *sig, cb_buf *out) {
  cb_buf_appendf(out, "nrefs:%s|", sig->nrefs);
  if (sig->bootstrap) cb_buf_appendf(out, "bs:%ld|", sig->bootstrap);
  if (sig->ar) cb_buf_appendf(out, "ar:%ld|", sig->ar);
  if (sig->bootstrap || sig->ar) cb_buf_appendf(out, "seed:%llu|", (unsigned long long)sig->seed);
}

/* One block's segments with its own state (states[block]). */
typedef struct rows_job {
  const cb_eval_metric *m;
  void **states;
  const cb_eval_segment *segs;
  double *rows;
  size_t k;
} rows_job;

static cb_status rows_block(void *ctx, size_t block, size_t lo, size_t hi, size_t *failed,
                            cb_error *err) {
  const rows_job *j = ctx;
  for (size_t i = lo; i < hi; i++) {
    cb_status st = j->m->segment(j->states[block], &j->segs[i], j->rows + i * j->k, err);
    if (st != CB_OK) {
      *failed = i;
      return st;
    }
  }
  return CB_OK;
}

cb_status cb_eval_segment_rows(const cb_eval_metric *m, void *state, cb_eval_options *opts,
                               const cb_eval_segment *segs, size_t n, double *rows,
                               size_t *failed, cb_error *err) {
  size_t nb = m->prepare ? 1 : cb__eval_block_count(n, opts ? opts->threads : 1);
  void **states = cb_calloc(nb, sizeof *states);
  states[0] = state;
  /* made here, on one thread: create reads opts (marking them used); a state that
   * cannot be made (it was made once already, so not expected) means fewer blocks */
  for (size_t b = 1; b < nb; b++) {
    cb_error ignored;
    if (m->create(opts, &states[b], &ignored) != CB_OK) {
      nb = b;
      break;
    }
  }
  rows_job job = {m, states, segs, rows, m->n_stats(state)};
  cb_status st = cb__eval_blocks(n, nb, rows_block, &job, failed, err);
  for (size_t b = 1; b < nb; b++)
    if (states[b]) m->destroy(states[b]);
  cb_free(states);
  return st;
}

cb_status cb_eval_segment_stats_opts(const cb_eval_metric *m, void *state, cb_eval_options *opts,
                                     const cb_eval_corpus *c, double **rows, cb_error *err) {
  size_t k = m->n_stats(state), failed = 0;
  *rows = cb_calloc(c->n ? c->n * k : 1, sizeof **rows);
  cb_status st = cb_eval_segment_rows(m, state, opts, c->segs, c->n, *rows, &failed, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "segment %zu", failed + 1);
    cb_free(*rows);
    *rows = NULL;
  }
  return st;
}

cb_status cb_eval_segment_stats(const cb_eval_metric *m, void *state, const cb_eval_corpus *c,
                                double **rows, cb_error *err) {
  return cb_eval_segment_stats_opts(m, state, NULL, c, rows, err);
}

void cb_eval_sum_stats(const double *rows, size_t n, size_t k, double *sum) {
  for (size_t j = 0; j < k; j++) sum[j] = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < k; j++) sum[j] += rows[i * k + j];
}
