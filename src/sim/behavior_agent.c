/*
 * behavior_agent.c - the `agent` behaviour section: its parser and the decision it
 * makes for each chat request that offers tools (behavior_agent.h).
 *
 * The simulated model is stateless, as a real one is: it reads where the
 * conversation stands from the messages (how many tool calls were made, the last
 * tool's name, whether its result reported an error) and draws its next move from
 * that state's row of the chain with uniforms hashed from the request's output seed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "sim/behavior_agent.h"

#define DEFAULT_ANSWER "ANSWER: done"
#define DEFAULT_GIVE_UP "I could not complete the task."
#define ROW_SUM_TOLERANCE 1e-6

static const char *text_of(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static yaml_node_t *node(const cb__yaml_ctx *y, int id) { return yaml_document_get_node(y->doc, id); }

/* The index of a tool name, added when new. */
static cb_status tool_index(const cb__yaml_ctx *y, cb__sim_agent *a, const yaml_node_t *n,
                            const char *key, int *out) {
  const char *name = text_of(n);
  if (!name[0]) return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "a tool name must not be empty");
  if (!strcmp(name, "final")) return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "'final' is the answer, not a tool");
  for (int i = 0; i < a->n_tools; i++)
    if (!strcmp(a->tools[i], name)) return *out = i, CB_OK;
  if (a->n_tools == CB__SIM_AGENT_MAX_TOOLS)
    return cb__yaml_key_at(y, n, CB_ERR_RANGE, key, "more than %d tool names",
                           CB__SIM_AGENT_MAX_TOOLS);
  a->tools[a->n_tools] = cb_strdup(name);
  *out = a->n_tools++;
  return CB_OK;
}

static cb_status expect_map(const cb__yaml_ctx *y, const yaml_node_t *n, const char *key) {
  if (n->type == YAML_MAPPING_NODE) return CB_OK;
  return cb__yaml_key_at(y, n, CB_ERR_PARSE, key, "expected a mapping");
}

/* {name: probability, ...} with `final` allowed; the probabilities sum to 1. */
static cb_status parse_row(const cb__yaml_ctx *y, cb__sim_agent *a, const yaml_node_t *n,
                           const char *key, cb__sim_agent_row *row) {
  cb_status st = expect_map(y, n, key);
  if (st != CB_OK) return st;
  double sum = 0;
  row->n = 0;
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    if (k->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "expected tool names as keys");
    int target = CB__SIM_AGENT_FINAL;
    if (strcmp(text_of(k), "final") && (st = tool_index(y, a, k, key, &target)) != CB_OK) return st;
    if (row->n > CB__SIM_AGENT_MAX_TOOLS)
      return cb__yaml_key_at(y, k, CB_ERR_RANGE, key, "too many choices");
    double prob;
    if ((st = cb__yaml_number(y->path, v, text_of(k), 0, 0, 1, &prob, y->err)) != CB_OK) return st;
    row->target[row->n] = target;
    row->p[row->n++] = prob;
    sum += prob;
  }
  if (row->n == 0 || fabs(sum - 1) > ROW_SUM_TOLERANCE)
    return cb__yaml_key_at(y, n, CB_ERR_RANGE, key, "the probabilities must sum to 1, got %g", sum);
  return CB_OK;
}

static cb_status parse_text(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key, char **out) {
  const char *s;
  cb_status st = cb__yaml_scalar(y->path, v, key, &s, y->err);
  if (st != CB_OK) return st;
  if (!s[0]) return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a non-empty text");
  cb_free(*out);
  *out = cb_strdup(s);
  return CB_OK;
}

/* after: {tool: row, ...} or arguments: {tool: text, ...}. */
static cb_status parse_per_tool(const cb__yaml_ctx *y, cb__sim_agent *a, const yaml_node_t *n,
                                const char *key) {
  cb_status st = expect_map(y, n, key);
  int after = !strcmp(key, "after");
  for (yaml_node_pair_t *p = n->data.mapping.pairs.start; st == CB_OK && p < n->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    int i;
    if (k->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(y, k, CB_ERR_PARSE, key, "expected tool names as keys");
    if ((st = tool_index(y, a, k, key, &i)) != CB_OK) return st;
    if (after) {
      st = parse_row(y, a, v, text_of(k), &a->after[i]);
      a->has_after[i] = 1;
    } else {
      st = parse_text(y, v, text_of(k), &a->arguments[i]);
    }
  }
  return st;
}

static cb_status parse_key(const cb__yaml_ctx *y, cb__sim_agent *a, const yaml_node_t *k,
                           const yaml_node_t *v) {
  const char *key = text_of(k);
  if (!strcmp(key, "start")) return parse_row(y, a, v, key, &a->start);
  if (!strcmp(key, "after") || !strcmp(key, "arguments")) return parse_per_tool(y, a, v, key);
  if (!strcmp(key, "give_up_after_error"))
    return cb__yaml_number(y->path, v, key, 0, 0, 1, &a->give_up_after_error, y->err);
  if (!strcmp(key, "max_tool_calls")) {
    double x;
    cb_status st = cb__yaml_number(y->path, v, key, 1, 0, 1000, &x, y->err);
    if (st == CB_OK && x != floor(x)) st = cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a whole number, got %g", x);
    a->max_tool_calls = (int64_t)x;
    return st;
  }
  if (!strcmp(key, "answer")) return parse_text(y, v, key, &a->answer);
  if (!strcmp(key, "give_up")) return parse_text(y, v, key, &a->give_up);
  return cb_error_at(y->err, CB_ERR_PARSE, y->path, cb__yaml_line(k), 0,
                     "agent: unknown key '%s' (known: start, after, give_up_after_error, "
                     "max_tool_calls, answer, give_up, arguments)", key);
}

cb_status cb__sim_agent_parse(const cb__yaml_ctx *y, const yaml_node_t *section,
                              cb__sim_agent **out) {
  *out = NULL;
  cb_status st = expect_map(y, section, "agent");
  if (st != CB_OK) return st;
  cb__sim_agent *a = cb_calloc(1, sizeof *a);
  a->max_tool_calls = 8;
  int has_start = 0;
  for (yaml_node_pair_t *p = section->data.mapping.pairs.start;
       st == CB_OK && p < section->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(y, p->key), *v = node(y, p->value);
    if (k->type != YAML_SCALAR_NODE) {
      st = cb__yaml_key_at(y, k, CB_ERR_PARSE, "agent", "keys must be plain names");
      break;
    }
    has_start |= !strcmp(text_of(k), "start");
    st = parse_key(y, a, k, v);
  }
  if (st == CB_OK && !has_start)
    st = cb__yaml_key_at(y, section, CB_ERR_PARSE, "agent", "'start' (the first step's choices) is required");
  if (st != CB_OK) {
    cb__sim_agent_free(a);
    return st;
  }
  if (!a->answer) a->answer = cb_strdup(DEFAULT_ANSWER);
  if (!a->give_up) a->give_up = cb_strdup(DEFAULT_GIVE_UP);
  *out = a;
  return CB_OK;
}

void cb__sim_agent_free(cb__sim_agent *a) {
  if (!a) return;
  for (int i = 0; i < a->n_tools; i++) {
    cb_free(a->tools[i]);
    cb_free(a->arguments[i]);
  }
  cb_free(a->answer);
  cb_free(a->give_up);
  cb_free(a);
}

/* ---- deciding ------------------------------------------------------------------------ */

/* A uniform in [0, 1) for draw `what` of step `step`. */
static double uniform(uint64_t seed, int64_t step, uint64_t what) {
  return (double)(cb_hash3_u64(seed, (uint64_t)step, what) >> 11) * 0x1.0p-53;
}

static int draw(const cb__sim_agent_row *row, double u) {
  double acc = 0;
  for (int i = 0; i < row->n; i++) {
    acc += row->p[i];
    if (u < acc) return row->target[i];
  }
  return row->target[row->n - 1]; /* rounding: the sum fell a hair short of 1 */
}

static int find_tool(const cb__sim_agent *a, const char *name) {
  for (int i = 0; name && i < a->n_tools; i++)
    if (!strcmp(a->tools[i], name)) return i;
  return -1;
}

static void script(cb__sim_response *s, const char *text, uint32_t vocab) {
  memset(s, 0, sizeof *s);
  s->text_len = strlen(text);
  s->text = cb_strndup(text, s->text_len);
  s->num_tokens = cb_sim_approx_split(s->text, s->text_len, vocab, NULL, NULL, 0);
  s->ids = cb_reallocarray(NULL, s->num_tokens ? s->num_tokens : 1, sizeof *s->ids);
  s->ends = cb_reallocarray(NULL, s->num_tokens ? s->num_tokens : 1, sizeof *s->ends);
  cb_sim_approx_split(s->text, s->text_len, vocab, s->ids, s->ends, s->num_tokens);
}

void cb__sim_agent_decide(const cb__sim_agent *a, const cb__sim_api_request *req,
                          uint64_t seed, uint32_t vocab, cb__sim_agent_reply *out) {
  memset(out, 0, sizeof *out);
  int64_t step = req->tool_calls_made;
  int next = CB__SIM_AGENT_FINAL;
  const char *answer = a->answer;
  if (req->last_tool_error && uniform(seed, step, 0x6769) < a->give_up_after_error) {
    answer = a->give_up;
  } else if (step < a->max_tool_calls) {
    int from = find_tool(a, req->last_tool);
    const cb__sim_agent_row *row = step == 0 ? &a->start
                                   : from >= 0 && a->has_after[from] ? &a->after[from]
                                                                     : NULL;
    if (row) next = draw(row, uniform(seed, step, 0x6e78));
  }
  if (next == CB__SIM_AGENT_FINAL) {
    script(&out->script, answer, vocab);
    return;
  }
  snprintf(out->call_id, sizeof out->call_id, "call_%016llx",
           (unsigned long long)cb_hash3_u64(seed, (uint64_t)step, 0x6964));
  out->call.id = out->call_id;
  out->call.name = a->tools[next];
  char args[64];
  snprintf(args, sizeof args, "{\"step\": %lld}", (long long)step + 1);
  script(&out->script, a->arguments[next] ? a->arguments[next] : args, vocab);
}

void cb__sim_agent_reply_free(cb__sim_agent_reply *r) {
  cb_free(r->script.text);
  cb_free(r->script.ids);
  cb_free(r->script.ends);
  memset(r, 0, sizeof *r);
}
