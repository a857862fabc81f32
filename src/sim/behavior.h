/*
 * behavior.h - the simulator's planted behaviour (calibench/sim_behavior.h), internal
 * to the sim module: the loader (behavior.c) and the sections it dispatches to.
 *
 * A section plugs in with one row of the table in behavior.c and one file
 * behavior_<name>.c holding its three functions:
 *   parse   read the section's YAML mapping into a new section object; errors as
 *           "FILE:LINE: key 'section.key': ..." (cb__yaml_key_at with the section's
 *           name before the key). *out is the object, or on failure NULL or what of
 *           it was made, which the loader releases with free
 *   free    release it
 *   answer  given a request, decide its reply (return 1) or leave it to the next
 *           section (return 0). Sections are asked in table order; the first that
 *           answers wins; when none does the simulator answers its synthetic text.
 * A section draws its randomness with cb__sim_behavior_uniform, so the same request
 * gets the same reply whatever the order or concurrency of the run.
 */
#ifndef CALIBENCH_SIM_BEHAVIOR_INTERNAL_H
#define CALIBENCH_SIM_BEHAVIOR_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#include "calibench/buf.h"
#include "calibench/sim_behavior.h"
#include "sim/api.h"
#include "util/yaml_doc.h"

/* What a section sees of a request. */
typedef struct cb__sim_behavior_request {
  const cb__sim_api_request *req; /* the parsed request, or NULL (cb_sim_behavior_answer) */
  const char *text;               /* the prompt, or a chat request's last user message */
  size_t len;
  int64_t prompt_tokens;          /* the whole prompt's tokens as the server counts them */
  uint64_t seed;                  /* the server's seed mixed with the behaviour's */
  uint64_t text_hash;             /* FNV-1a of text: draws depend on the request's content */
  uint32_t vocab;                 /* ids of an answer's tokens are below it (0: the
                                     approximate tokenizer's CB_WORKLOAD_APPROX_VOCAB) */
  uint64_t request_seed;          /* the request's own output seed (its `seed`, else its
                                     arrival index): for draws that must differ between
                                     identical requests (agent: two runs of one task) */
  double logit_noise;             /* standard deviation of the logit noise the deployment's
                                     weights add (CB_SIM_INT4_LOGIT_NOISE under int4, else
                                     0): sections with planted logits (lm) add it */
} cb__sim_behavior_request;

/* What a section answers. */
struct cb__sim_answer;
typedef struct cb__sim_behavior_reply {
  cb_buf text;                    /* the answer's content (a tool call: its arguments) */
  struct cb__sim_answer *answer;  /* or, owned: an answer split into tokens with what goes
                                     beside its text (a refusal's form, planted
                                     top_logprobs: behavior_answer.h); `text` is unused */
  char tool_name[64];             /* "" or the tool the answer calls (agent) */
  char call_id[32];               /* the call's id, with tool_name */
} cb__sim_behavior_reply;

typedef struct cb__sim_behavior_section {
  const char *name;               /* the top-level key */
  cb_status (*parse)(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
  void (*free)(void *section);
  int (*answer)(const void *section, const cb__sim_behavior_request *rq,
                cb__sim_behavior_reply *reply);
} cb__sim_behavior_section;

/* A uniform draw in [0, 1) for (request, stream, index): deterministic in the
 * seeds and the request's text. */
double cb__sim_behavior_uniform(const cb__sim_behavior_request *rq, uint64_t stream,
                                uint64_t index);

/* Decide the reply to a request (1), or leave it to the synthetic text (0). */
int cb__sim_behavior_reply_to(const cb_sim_behavior *b, const cb__sim_behavior_request *rq,
                              cb__sim_behavior_reply *reply);
/* Fill rq for a request's text under server seed `seed`. */
void cb__sim_behavior_request_init(const cb_sim_behavior *b, cb__sim_behavior_request *rq,
                                   const cb__sim_api_request *req, const char *text, size_t len,
                                   int64_t prompt_tokens, uint64_t seed);

/* ---- sections -------------------------------------------------------------------- */

/* context (behavior_context.c): needle recall by length and depth. */
cb_status cb__sim_behavior_context_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_context_free(void *section);
int cb__sim_behavior_context_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply);

/* refusal (behavior_refusal.c): trigger phrases refused, induced compliance. */
cb_status cb__sim_behavior_refusal_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_refusal_free(void *section);
int cb__sim_behavior_refusal_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply);

/* perturb (behavior_perturb.c): answers and top_logprobs drifting with edit distance. */
cb_status cb__sim_behavior_perturb_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_perturb_free(void *section);
int cb__sim_behavior_perturb_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply);
/* agent (behavior_agent.c): tool calls chosen by a Markov chain over tool names. */
cb_status cb__sim_behavior_agent_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_agent_free(void *section);
int cb__sim_behavior_agent_answer(const void *section, const cb__sim_behavior_request *rq,
                                  cb__sim_behavior_reply *reply);
/* dialog (behavior_dialog.c): slot recall that decays with the turns since the slot
 * was stated. */
cb_status cb__sim_behavior_dialog_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_dialog_free(void *section);
int cb__sim_behavior_dialog_answer(const void *section, const cb__sim_behavior_request *rq,
                                   cb__sim_behavior_reply *reply);
/* lm (behavior_lm.c): next-token distributions that are a function of the text so
 * far, greedy answers, int4 logit noise. */
cb_status cb__sim_behavior_lm_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_lm_free(void *section);
int cb__sim_behavior_lm_answer(const void *section, const cb__sim_behavior_request *rq,
                               cb__sim_behavior_reply *reply);
/* The lm section's distribution of the token after rq->text (an answer of one token:
 * its words ranked, with their log-probabilities), by the function its answers use, so
 * a prompt position's log-probabilities are those of the prefix sent alone with
 * max_tokens 1; NULL when b has no lm section. Free with cb__sim_answer_free. */
struct cb__sim_answer *cb__sim_behavior_lm_next(const cb_sim_behavior *b,
                                                const cb__sim_behavior_request *rq);

/* embed (behavior_embed.c): a second embedding model b = scale (R a + noise) planted
 * against the simulator's own vectors; it answers no generation request. */
cb_status cb__sim_behavior_embed_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out);
void cb__sim_behavior_embed_free(void *section);
int cb__sim_behavior_embed_answer(const void *section, const cb__sim_behavior_request *rq,
                                  cb__sim_behavior_reply *reply);
/* v (dim floats, the unit vector of an input whose token ids hash to input_hash)
 * turned into the planted model's vector; unchanged without an embed section (b may
 * be NULL). */
void cb__sim_behavior_embed_transform(const cb_sim_behavior *b, uint64_t input_hash, float *v,
                                      int dim);

/* The object of section `name`, NULL when the file has none (or b is NULL). */
const void *cb__sim_behavior_find(const cb_sim_behavior *b, const char *name);
/* The file's `seed` (0 when absent). */
uint64_t cb__sim_behavior_seed(const cb_sim_behavior *b);

#endif
