/*
 * blocks.c - segments scored in contiguous blocks on several threads (blocks.h).
 * Each block writes only its own segments' results, so the caller combines them in
 * segment order afterwards exactly as one thread would have.
 */
#include <pthread.h>
#include <string.h>

#include "blocks.h"
#include "calibench/alloc.h"

size_t cb__eval_block_count(size_t n, int threads) {
  size_t nb = threads > 1 ? (size_t)threads : 1;
  return nb < n ? nb : (n ? n : 1);
}

typedef struct block_job {
  cb__eval_block_fn fn;
  void *ctx;
  size_t block, lo, hi, failed;
  cb_status st;
  cb_error err;
  int started; /* a thread of its own runs it */
  pthread_t tid;
} block_job;

static void *run_job(void *arg) {
  block_job *j = arg;
  cb_error_clear(&j->err);
  j->st = j->fn(j->ctx, j->block, j->lo, j->hi, &j->failed, &j->err);
  return NULL;
}

cb_status cb__eval_blocks(size_t n, size_t nb, cb__eval_block_fn fn, void *ctx, size_t *failed,
                          cb_error *err) {
  if (nb <= 1) return fn(ctx, 0, 0, n, failed, err);
  block_job *jobs = cb_calloc(nb, sizeof *jobs);
  for (size_t b = 0; b < nb; b++)
    jobs[b] = (block_job){.fn = fn, .ctx = ctx, .block = b, .lo = n * b / nb,
                          .hi = n * (b + 1) / nb};
  for (size_t b = 1; b < nb; b++)
    jobs[b].started = pthread_create(&jobs[b].tid, NULL, run_job, &jobs[b]) == 0;
  run_job(&jobs[0]);
  for (size_t b = 1; b < nb; b++) {
    if (jobs[b].started) pthread_join(jobs[b].tid, NULL);
    else run_job(&jobs[b]);
  }
  cb_status st = CB_OK;
  for (size_t b = 0; b < nb && st == CB_OK; b++)
    if (jobs[b].st != CB_OK) {
      st = jobs[b].st;
      *failed = jobs[b].failed;
      if (err) *err = jobs[b].err;
    }
  cb_free(jobs);
  return st;
}
