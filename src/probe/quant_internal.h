/*
 * quant_internal.h - what probe quant's files share (quant_run.c: prompts, the two
 * phases' requests and answers; quant_score.c: scoring and probe.json). Internal to
 * the probe module; the public side is calibench/probe_quant.h.
 */
#ifndef CALIBENCH_PROBE_QUANT_INTERNAL_H
#define CALIBENCH_PROBE_QUANT_INTERNAL_H

#include "calibench/buf.h"
#include "calibench/probe_quant.h"

/* One prompt and what both endpoints said of it. */
typedef struct cb__quant_seq {
  char *prompt;
  size_t prompt_len;
  /* the reference: its greedy continuation, each token with its top list */
  int ref_answered, ref_ok;
  int ref_ids;                  /* every token of it came with the server's id */
  int64_t ref_prompt_tokens;    /* usage.prompt_tokens, -1 unknown */
  cb_quant_token *ref;
  size_t n_ref;
  char ref_error[64];
  /* the candidate at each position of it (n_ref): its first output token */
  cb_quant_token *cand;         /* id -1 and no list where no answer (yet) */
  int64_t *cand_prompt_tokens;  /* usage.prompt_tokens per position, -1 unknown */
  size_t cand_failed;
} cb__quant_seq;

struct cb_probe_quant {
  cb_probe_quant_params p;
  cb__quant_seq *seqs;
  size_t n_seqs;
  int phase;                    /* 0 reference, 1 candidate */
  cb_quant_refeed refeed;       /* what the candidate phase does (auto resolved) */
  size_t next_seq, next_pos;    /* the live source's place */
  uint64_t stride;              /* record index = seq * stride + position */
  cb_buf body, scratch;         /* the live request's prompt and extra members */
  uint64_t requests[2];         /* sent per phase */
  uint64_t prompt_tokens_sent;  /* candidate phase: usage.prompt_tokens summed */
  uint64_t cached_tokens;       /* candidate phase: usage's cached tokens summed */
  size_t cand_without_ids;      /* candidate answers whose tokens came without ids */
  cb_error parse_err;           /* the first answer whose logprobs could not be read */
  int parse_failed;
};

#endif
