/*
 * blocks.h - a corpus's segments split into contiguous blocks, one per thread
 * (blocks.c): what `eval score --threads` and `eval run --threads` score with.
 */
#ifndef CALIBENCH_EVAL_BLOCKS_H
#define CALIBENCH_EVAL_BLOCKS_H

#include <stddef.h>

#include "calibench/error.h"

/* Scores segments [lo, hi) of block `block`; on an error sets *failed to the failing
 * segment's index (in the whole corpus) and stops there. */
typedef cb_status (*cb__eval_block_fn)(void *ctx, size_t block, size_t lo, size_t hi,
                                       size_t *failed, cb_error *err);

/* How many blocks n segments get on `threads` threads (0 or 1: one; never more blocks
 * than segments), so a caller can make one state per block before running them. */
size_t cb__eval_block_count(size_t n, int threads);

/* fn over the n segments in nb (cb__eval_block_count) contiguous blocks, block 0 on
 * the calling thread and each other on its own thread (a block whose thread cannot
 * start runs on the caller afterwards). Each block stops at its own first error; the
 * error returned is the lowest block's, so the lowest failing segment's: the same
 * segment and message as one thread scoring in order. */
cb_status cb__eval_blocks(size_t n, size_t nb, cb__eval_block_fn fn, void *ctx, size_t *failed,
                          cb_error *err);

#endif
