/*
 * behavior_agent.c - the `agent` section of a behaviour file (docs/probe.md,
 * "Simulator: agent"): a Markov chain over tool names that decides, for a chat
 * request that offers tools, whether the simulated model calls a tool (which one,
 * with what arguments) or answers.
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
 * The simulated model is stateless, as a real one is: it reads where the
 * conversation stands from the messages (how many tool calls were made, the last
 * tool's name, whether its result reported an error) and draws its next move from
 * that state's row with uniforms hashed from the request's own output seed (its
 * `seed`, else its arrival index): two runs of one task send identical requests and
 * must be free to take different paths.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "sim/behavior.h"

#define MAX_TOOLS 32
#define FINAL (-1)

/* One row of the chain: choice i goes to tool target[i] (or FINAL) with probability
 * p[i]; the p sum to 1. */
typedef struct agent_row {
  int n;
  int target[MAX_TOOLS + 1];
  double p[MAX_TOOLS + 1];
} agent_row;

typedef struct agent_behavior {
  char *tools[MAX_TOOLS];     /* owned: every name the chain uses */
  char *arguments[MAX_TOOLS]; /* owned, NULL: {"step": N} */
  int n_tools;
  agent_row start;
  agent_row after[MAX_TOOLS];
  int has_after[MAX_TOOLS];
  double give_up_after_error; /* 0 */
  int64_t max_tool_calls;     /* 8 */
  char *answer;               /* owned */
  char *give_up;              /* owned */
} agent_behavior;

#define DEFAULT_ANSWER "ANSWER: done"
#define DEFAULT_GIVE_UP "I could not complete the task."
#define ROW_SUM_TOLERANCE 1e-6
#define KEY_MAX 160

static const char *text_of(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static yaml_node_t *node(const cb__yaml_ctx *y, int id) { return yaml_document_get_node(y->doc, id); }

/* "prefix.name" for error messages. */
static const char *qualify(char *buf, const char *prefix, const char *name) {
  snprintf(buf, KEY_MAX, "%s.%s", prefix, name);
  return buf;
}

/* The index of a tool name, added when new. */
static cb_status tool_index(const cb__yaml_ctx *y, agent_behavior *a, const yaml_node_t *n,
                            const char *key, int *out) {
  const char *name = text_of(n);
  if (!name[0]) return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "a tool name must not be empty");
  if (!strcmp(name, "final"))
    return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "'final' is the answer, not a tool");
  for (int i = 0; i < a->n_tools; i++)
    if (!strcmp(a->tools[i], name)) return *out = i, CB_OK;
  if (a->n_tools == MAX_TOOLS)
    return cb__yaml_key_at(y, n, CB_ERR_RANGE, key, "more than %d tool names", MAX_TOOLS);
  a->tools[a->n_tools] = cb_strdup(name);
  *out = a->n_tools++;
  return CB_OK;
}

static cb_status expect_map(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key) {
  if (n->type == YAML_MAPPING_NODE) return CB_OK;
  return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected a mapping {tool: probability, ...}");
}

/* {name: probability, ...} with `final` allowed; the probabilities sum to 1. */
static cb_status parse_row(const cb__yaml_ctx *y, agent_behavior *a, const yaml_node_t *n,
                           const char *key, agent_row *row) {
  cb_status st = expect_map(y, n, key);
  if (st != CB_OK) return st;
  double sum = 0;
  row->n = 0;
  char sub[KEY_MAX];
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    if (k->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "expected tool names as keys");
    int target = FINAL;
    if (strcmp(text_of(k), "final") && (st = tool_index(y, a, k, key, &target)) != CB_OK) return st;
    double prob;
    if ((st = cb__yaml_number(y->path, v, qualify(sub, key, text_of(k)), 0, 0, 1, &prob, y->err)) != CB_OK)
      return st;
    row->target[row->n] = target;
    row->p[row->n++] = prob;
    sum += prob;
  }
  if (row->n == 0 || fabs(sum - 1) > ROW_SUM_TOLERANCE)
    return cb__yaml_key_at(y, n, CB_ERR_RANGE, key, "the probabilities must sum to 1, got %g", sum);
  return CB_OK;
}

/* after: {tool: row, ...} or arguments: {tool: text, ...}. */
static cb_status parse_per_tool(const cb__yaml_ctx *y, agent_behavior *a, const yaml_node_t *n,
                                const char *key, int after) {
  if (n->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected a mapping with tool names as keys");
  cb_status st = CB_OK;
  char sub[KEY_MAX];
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; st == CB_OK && p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    int i;
    if (k->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "expected tool names as keys");
    if ((st = tool_index(y, a, k, key, &i)) != CB_OK) return st;
    qualify(sub, key, text_of(k));
    if (after) {
      st = parse_row(y, a, v, sub, &a->after[i]);
      a->has_after[i] = 1;
    } else {
      st = cb__yaml_text(y, v, sub, &a->arguments[i]);
    }
  }
  return st;
}

static cb_status parse_key(const cb__yaml_ctx *y, agent_behavior *a, const yaml_node_t *k,
                           const yaml_node_t *v) {
  const char *name = text_of(k);
  char key[KEY_MAX];
  qualify(key, "agent", name);
  if (!strcmp(name, "start")) return parse_row(y, a, v, key, &a->start);
  if (!strcmp(name, "after")) return parse_per_tool(y, a, v, key, 1);
  if (!strcmp(name, "arguments")) return parse_per_tool(y, a, v, key, 0);
  if (!strcmp(name, "give_up_after_error"))
    return cb__yaml_number(y->path, v, key, 0, 0, 1, &a->give_up_after_error, y->err);
  if (!strcmp(name, "max_tool_calls")) {
    double x;
    cb_status st = cb__yaml_number(y->path, v, key, 1, 0, 1000, &x, y->err);
    if (st == CB_OK && x != floor(x))
      st = cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a whole number, got %g", x);
    a->max_tool_calls = (int64_t)x;
    return st;
  }
  if (!strcmp(name, "answer")) return cb__yaml_text(y, v, key, &a->answer);
  if (!strcmp(name, "give_up")) return cb__yaml_text(y, v, key, &a->give_up);
  return cb__yaml_at(y, k, CB_ERR_PARSE, "unknown key 'agent.%s' (known: start, after, "
                     "give_up_after_error, max_tool_calls, answer, give_up, arguments)", name);
}

void cb__sim_behavior_agent_free(void *section) {
  agent_behavior *a = section;
  if (!a) return;
  for (int i = 0; i < a->n_tools; i++) {
    cb_free(a->tools[i]);
    cb_free(a->arguments[i]);
  }
  cb_free(a->answer);
  cb_free(a->give_up);
  cb_free(a);
}

cb_status cb__sim_behavior_agent_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  *out = NULL;
  agent_behavior *a = cb_calloc(1, sizeof *a);
  a->max_tool_calls = 8;
  int has_start = 0;
  cb_status st = CB_OK;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; st == CB_OK && p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    if (k->type != YAML_SCALAR_NODE) {
      st = cb__yaml_key_at(y, k, CB_ERR_PARSE, "agent", "keys must be plain names");
      break;
    }
    has_start |= !strcmp(text_of(k), "start");
    st = parse_key(y, a, k, v);
  }
  if (st == CB_OK && !has_start)
    st = cb__yaml_key_at(y, map, CB_ERR_PARSE, "agent", "'start' (the first step's choices) is required");
  if (st != CB_OK) {
    cb__sim_behavior_agent_free(a);
    return st;
  }
  if (!a->answer) a->answer = cb_strdup(DEFAULT_ANSWER);
  if (!a->give_up) a->give_up = cb_strdup(DEFAULT_GIVE_UP);
  *out = a;
  return CB_OK;
}

/* ---- answering ----------------------------------------------------------------------- */

/* A uniform in [0, 1) for draw `what` at step `step` of the request's own seed. */
static double uniform(uint64_t seed, int64_t step, uint64_t what) {
  return (double)(cb_hash3_u64(seed, (uint64_t)step, what) >> 11) * 0x1.0p-53;
}

static int draw(const agent_row *row, double u) {
  double acc = 0;
  for (int i = 0; i < row->n; i++) {
    acc += row->p[i];
    if (u < acc) return row->target[i];
  }
  return row->target[row->n - 1]; /* rounding: the sum fell a hair short of 1 */
}

static int find_tool(const agent_behavior *a, const char *name) {
  for (int i = 0; name && i < a->n_tools; i++)
    if (!strcmp(a->tools[i], name)) return i;
  return -1;
}

int cb__sim_behavior_agent_answer(const void *section, const cb__sim_behavior_request *rq,
                                  cb__sim_behavior_reply *reply) {
  const agent_behavior *a = section;
  const cb__sim_api_request *req = rq->req;
  if (!req || !req->has_tools) return 0; /* not an agent's request */
  uint64_t seed = cb_hash3_u64(rq->seed, rq->request_seed, UINT64_C(0x6167656e74)); /* "agent" */
  int64_t step = req->tool_calls_made;
  int next = FINAL;
  const char *answer = a->answer;
  if (req->last_tool_error && uniform(seed, step, 0x6769) < a->give_up_after_error) {
    answer = a->give_up;
  } else if (step < a->max_tool_calls) {
    int from = find_tool(a, req->last_tool);
    const agent_row *row = step == 0                           ? &a->start
                           : from >= 0 && a->has_after[from] ? &a->after[from]
                                                             : NULL;
    if (row) next = draw(row, uniform(seed, step, 0x6e78));
  }
  if (next == FINAL) {
    cb_buf_append_str(&reply->text, answer);
    return 1;
  }
  snprintf(reply->call_id, sizeof reply->call_id, "call_%016llx",
           (unsigned long long)cb_hash3_u64(seed, (uint64_t)step, 0x6964));
  snprintf(reply->tool_name, sizeof reply->tool_name, "%s", a->tools[next]);
  if (a->arguments[next]) cb_buf_append_str(&reply->text, a->arguments[next]);
  else cb_buf_appendf(&reply->text, "{\"step\": %lld}", (long long)step + 1);
  return 1;
}
