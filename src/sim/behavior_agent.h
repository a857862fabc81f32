/*
 * behavior_agent.h - the `agent` section of `--behavior FILE` (internal to sim): a
 * Markov chain over tool names that decides, for a chat request that offers tools,
 * whether the simulated model calls a tool (which one) or answers, deterministically
 * from the request's output seed. docs/probe.md, "Simulator: agent".
 *
 *   agent:
 *     start: {search: 0.7, lookup: 0.3}     # the first call (or final)
 *     after:                                # after a call to KEY, the next choice
 *       search: {fetch: 0.5, final: 0.5}
 *       lookup: {final: 1}
 *     give_up_after_error: 0.8              # after a failed tool, answer give_up
 *     max_tool_calls: 8                     # then always the final answer
 *     answer: "ANSWER: done"
 *     give_up: "I could not complete the task."
 *     arguments: {search: '{"query": "x"}'} # a call's arguments (default {"step": N})
 *
 * `final` is the answer; a tool without an `after` row is followed by the answer.
 */
#ifndef CALIBENCH_SIM_BEHAVIOR_AGENT_H
#define CALIBENCH_SIM_BEHAVIOR_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/api.h"
#include "sim/responses.h"
#include "util/yaml_doc.h"

#define CB__SIM_AGENT_MAX_TOOLS 32
#define CB__SIM_AGENT_FINAL (-1)

/* One row of the chain: choice i goes to tool target[i] (or FINAL) with probability
 * p[i]; the p sum to 1. */
typedef struct cb__sim_agent_row {
  int n;
  int target[CB__SIM_AGENT_MAX_TOOLS + 1];
  double p[CB__SIM_AGENT_MAX_TOOLS + 1];
} cb__sim_agent_row;

typedef struct cb__sim_agent {
  char *tools[CB__SIM_AGENT_MAX_TOOLS]; /* owned: every name the chain uses */
  char *arguments[CB__SIM_AGENT_MAX_TOOLS]; /* owned, NULL: {"step": N} */
  int n_tools;
  cb__sim_agent_row start;
  cb__sim_agent_row after[CB__SIM_AGENT_MAX_TOOLS];
  int has_after[CB__SIM_AGENT_MAX_TOOLS];
  double give_up_after_error; /* 0 */
  int64_t max_tool_calls;     /* 8 */
  char *answer;               /* owned: "ANSWER: done" */
  char *give_up;              /* owned: "I could not complete the task." */
} cb__sim_agent;

/* Read the section's mapping (its value node). Errors as "path:line: key 'K': ...":
 * an unknown key, a probability outside [0, 1], a row not summing to 1, a tool name
 * that is empty, `final` used as a tool, more than CB__SIM_AGENT_MAX_TOOLS names. */
cb_status cb__sim_agent_parse(const cb__yaml_ctx *y, const yaml_node_t *section,
                              cb__sim_agent **out);
void cb__sim_agent_free(cb__sim_agent *a);

/* What the simulated model says to one request. */
typedef struct cb__sim_agent_reply {
  char call_id[32];
  cb__sim_api_tool_call call; /* points into this reply; name NULL when it answers */
  cb__sim_response script;    /* the answer's text, or the call's arguments, tokenized */
} cb__sim_agent_reply;

/* The reply to a chat request that offered tools (req->has_tools), from its
 * conversation (req->tool_calls_made, last_tool, last_tool_error) and `seed` (the
 * request's output seed): the same request and seed give the same reply. Tokens
 * under the approximate tokenizer over `vocab`. Free with cb__sim_agent_reply_free. */
void cb__sim_agent_decide(const cb__sim_agent *a, const cb__sim_api_request *req,
                          uint64_t seed, uint32_t vocab, cb__sim_agent_reply *out);
void cb__sim_agent_reply_free(cb__sim_agent_reply *r);

#endif
