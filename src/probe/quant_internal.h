/*
 * quant_internal.h - what probe quant's files share (quant_run.c: prompts, the two
 * phases' requests and answers; quant_path.c: the candidate's scoring path;
 * quant_score.c: scoring and probe.json). Internal to
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
  signed char *retok;           /* per position: the candidate scored another token than
                                   the reference's (1), the same (0), unknown (-1) */
  size_t cand_failed;
} cb__quant_seq;

struct cb_probe_quant {
  cb_probe_quant_params p;
  cb__quant_seq *seqs;
  size_t n_seqs;
  int phase;                    /* 0 reference, 1 candidate */
  cb_quant_refeed refeed;       /* what the candidate phase does (auto resolved) */
  cb_quant_path path;           /* how the candidate scores (auto resolved) */
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

/* Resolve pq->refeed from the reference's answers (before the candidate phase). */
cb_status cb__quant_resolve_refeed(cb_probe_quant *pq, cb_error *err);
/* The first sequence the reference answered, NULL when none. */
const cb__quant_seq *cb__quant_first_answered(const cb_probe_quant *pq);
/* pq->scratch = the candidate's request members for scoring s's first j continuation
 * tokens by path: the prompt (text with them appended, or text then their ids), then
 * what the path asks besides (logprobs, echo or prompt_logprobs, stream off for
 * prompt_logprobs, which vLLM refuses to stream). */
void cb__quant_cand_members(cb_probe_quant *pq, const cb__quant_seq *s, size_t j,
                            cb_quant_path path);
/* The tokens the answer of path carries after the scored prompt (echo asks max_tokens
 * 0: none; prompt_logprobs 1, outside the prompt_logprobs list). */
int64_t cb__quant_path_max_tokens(cb_quant_path path);

#endif
