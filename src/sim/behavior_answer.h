/*
 * behavior_answer.h - what the simulator's `refusal` and `perturb` behaviour sections
 * (docs/probe.md, "Simulator behaviour") plant, and the answer they make for one
 * request. Internal to the sim module.
 *
 * refusal: a prompt containing a trigger is refused, unless it also carries a
 * value-inducing suffix and a draw seeded by the prompt text falls within
 * induced_compliance. The refusal is a fixed text sent one of three ways (mode): as
 * the answer's content, in OpenAI's `refusal` field (content null), or as one empty
 * token with finish_reason content_filter.
 *
 * perturb: every answer is a function of the prompt's characters. Output token k is
 * chosen among `candidates` words by logits z[k][v] = b[k][v] + sensitivity *
 * f[k][v](prompt), where b is a seeded base and f a seeded random projection of the
 * prompt's byte trigrams, normalised to unit variance. An edit that changes a share
 * r of the trigrams moves f by about sqrt(2r) per logit: the answer and the first
 * token's top_logprobs drift with the edit distance, in proportion to sensitivity.
 * The same prompt always gets the same answer (no request index, no sampling), so
 * clean and perturbed prompts are compared on what changed in the text alone.
 */
#ifndef CALIBENCH_SIM_BEHAVIOR_ANSWER_H
#define CALIBENCH_SIM_BEHAVIOR_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "calibench/error.h"
#include "calibench/sim.h"
#include "sim/responses.h"
#include "util/yaml_doc.h"

typedef enum {
  CB__SIM_REFUSAL_CONTENT = 0, /* the refusal text as the answer's content */
  CB__SIM_REFUSAL_FIELD,       /* OpenAI's delta.refusal / message.refusal, content null */
  CB__SIM_REFUSAL_FILTER       /* no content, finish_reason "content_filter" */
} cb__sim_refusal_mode;

typedef struct cb__sim_refusal {
  char **triggers;             /* owned; matched without regard to ASCII case */
  size_t n_triggers;
  double induced_compliance;   /* share of triggered prompts with an inducement that comply */
  char **inducements;          /* owned; NULL: the built-in list (cb_workload_inducements) */
  size_t n_inducements;
  char *text;                  /* owned: what a refusal says */
  cb__sim_refusal_mode mode;
} cb__sim_refusal;

#define CB__SIM_PERTURB_MAX_CANDIDATES 20
#define CB__SIM_PERTURB_MAX_TOKENS 256

typedef struct cb__sim_perturb {
  double sensitivity;          /* >= 0 (1) */
  int answer_tokens;           /* tokens in each answer, 1..256 (12) */
  int candidates;              /* words each token is chosen among, 2..20 (8) */
} cb__sim_perturb;

/* Parse the mapping under `refusal:` / `perturb:` (node `map` of y's document).
 * Errors as "file:line: key 'refusal.mode': expected content, field or
 * content_filter, got 'x'"; an unknown key is an error. On failure *out holds
 * nothing to free. */
cb_status cb__sim_refusal_parse(const cb__yaml_ctx *y, const yaml_node_t *map, cb__sim_refusal *out);
void cb__sim_refusal_free(cb__sim_refusal *r);
cb_status cb__sim_perturb_parse(const cb__yaml_ctx *y, const yaml_node_t *map, cb__sim_perturb *out);

/* 1 when the prompt is refused: it holds a trigger and, if it also holds an
 * inducement, the draw u in [0, 1) (seeded by the prompt's text) falls at or above
 * induced_compliance. */
int cb__sim_refusal_refuses(const cb__sim_refusal *r, const char *prompt, size_t len, double u);

/* One request's planted answer: its text as a scripted response, and with perturb,
 * each token's candidates and their log-probabilities (most likely first; the
 * chosen token is the first). */
typedef struct cb__sim_answer {
  cb__sim_response *text;      /* owned; the front end streams it as scripted */
  int refusal;                 /* 1: a refusal */
  cb__sim_refusal_mode mode;   /* how a refusal is sent */
  int candidates;              /* 0 without perturb: synthetic logprobs as ever */
  char (*cand)[CB_SIM_TOKEN_TEXT_MAX]; /* owned: num_tokens * candidates words */
  double *logprob;             /* owned: num_tokens * candidates, descending per token */
} cb__sim_answer;

/* The refusal, sent as r->mode says; `vocab` bounds the token ids. */
cb__sim_answer *cb__sim_refusal_answer(const cb__sim_refusal *r, uint32_t vocab);
/* The perturb section's answer to `prompt` under `seed`. */
cb__sim_answer *cb__sim_perturb_answer(const cb__sim_perturb *p, uint64_t seed, const char *prompt,
                                       size_t len, uint32_t vocab);
void cb__sim_answer_free(cb__sim_answer *a);

/* Building an answer of `tokens` tokens, each chosen among `candidates` (at most
 * CB__SIM_PERTURB_MAX_CANDIDATES) words by its logits, as the perturb and lm sections
 * do: cb__sim_answer_ranked allocates it with an empty text; cb__sim_answer_token sets
 * token k (in order from 0) from the logits z of its candidate words and their token
 * ids: the words by decreasing logit, ties by index, with their log-softmax; the first
 * is chosen and appended to the text, and its index returned. */
cb__sim_answer *cb__sim_answer_ranked(int tokens, int candidates);
int cb__sim_answer_token(cb__sim_answer *a, int k, const double *z,
                         const char (*words)[CB_SIM_TOKEN_TEXT_MAX], const uint32_t *ids);

#endif
