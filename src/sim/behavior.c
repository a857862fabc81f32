/*
 * behavior.c - `--behavior FILE` (calibench/sim_behavior.h): the YAML file read into
 * its sections, each by the parser of its row in the table below, and the reply to a
 * request asked of the sections in the table's order.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "sim/behavior.h"
#include "sim/behavior_answer.h"

/* One row per section, asked in this order: a refusal comes before perturb's answer,
 * so a refused prompt is refused however it was perturbed. */
static const cb__sim_behavior_section SECTIONS[] = {
    {"context", cb__sim_behavior_context_parse, cb__sim_behavior_context_free,
     cb__sim_behavior_context_answer},
    {"refusal", cb__sim_behavior_refusal_parse, cb__sim_behavior_refusal_free,
     cb__sim_behavior_refusal_answer},
    {"perturb", cb__sim_behavior_perturb_parse, cb__sim_behavior_perturb_free,
     cb__sim_behavior_perturb_answer},
    {"dialog", cb__sim_behavior_dialog_parse, cb__sim_behavior_dialog_free,
     cb__sim_behavior_dialog_answer},
    {"agent", cb__sim_behavior_agent_parse, cb__sim_behavior_agent_free,
     cb__sim_behavior_agent_answer},
    {"embed", cb__sim_behavior_embed_parse, cb__sim_behavior_embed_free,
     cb__sim_behavior_embed_answer},
    /* last: it answers every prompt the others leave */
    {"lm", cb__sim_behavior_lm_parse, cb__sim_behavior_lm_free, cb__sim_behavior_lm_answer},
};
#define N_SECTIONS (sizeof SECTIONS / sizeof SECTIONS[0])

struct cb_sim_behavior {
  uint64_t seed;               /* the file's `seed` (0 when absent) */
  void *section[N_SECTIONS];   /* each section's object, NULL when the file has none */
};

void cb_sim_behavior_free(cb_sim_behavior *b) {
  if (!b) return;
  for (size_t i = 0; i < N_SECTIONS; i++)
    if (b->section[i]) SECTIONS[i].free(b->section[i]);
  cb_free(b);
}

const void *cb__sim_behavior_find(const cb_sim_behavior *b, const char *name) {
  for (size_t i = 0; b && i < N_SECTIONS; i++)
    if (!strcmp(SECTIONS[i].name, name)) return b->section[i];
  return NULL;
}

uint64_t cb__sim_behavior_seed(const cb_sim_behavior *b) { return b ? b->seed : 0; }

static cb_status known_keys(const cb__yaml_ctx *y, const yaml_node_t *key) {
  char list[256] = "seed";
  size_t used = strlen(list);
  for (size_t i = 0; i < N_SECTIONS && SECTIONS[i].parse; i++) {
    int w = snprintf(list + used, sizeof list - used, ", %s", SECTIONS[i].name);
    if (w > 0 && (size_t)w < sizeof list - used) used += (size_t)w;
  }
  return cb__yaml_at(y, key, CB_ERR_PARSE, "unknown key '%s' (known: %s)",
                     (const char *)key->data.scalar.value, list);
}

static cb_status load_root(const cb__yaml_ctx *y, const yaml_node_t *root, cb_sim_behavior *b) {
  if (root->type != YAML_MAPPING_NODE)
    return cb__yaml_at(y, root, CB_ERR_PARSE,
                       "expected a mapping of sections (context, ...; docs/probe.md)");
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start; pr < root->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *key = yaml_document_get_node(y->doc, pr->key);
    yaml_node_t *val = yaml_document_get_node(y->doc, pr->value);
    if (key->type != YAML_SCALAR_NODE)
      return cb__yaml_at(y, key, CB_ERR_PARSE, "keys must be section names");
    const char *name = (const char *)key->data.scalar.value;
    if (!strcmp(name, "seed")) {
      double s;
      cb_status st = cb__yaml_number(y->path, val, "seed", 0, 0, 9007199254740992.0, &s, y->err);
      if (st != CB_OK) return st;
      b->seed = (uint64_t)s;
      continue;
    }
    size_t i = 0;
    while (i < N_SECTIONS && strcmp(SECTIONS[i].name, name)) i++;
    if (i == N_SECTIONS) return known_keys(y, key);
    if (val->type != YAML_MAPPING_NODE)
      return cb__yaml_key_at(y, val, CB_ERR_PARSE, name, "expected a mapping");
    cb_status st = SECTIONS[i].parse(y, val, &b->section[i]);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

cb_status cb_sim_behavior_load(const char *path, cb_sim_behavior **out, cb_error *err) {
  *out = NULL;
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  cb_sim_behavior *b = cb_calloc(1, sizeof *b);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  cb__yaml_ctx y = {path, &doc, err};
  if (!root) st = cb_error_at(err, CB_ERR_PARSE, path, 1, 0, "empty file: expected a mapping of sections");
  else st = load_root(&y, root, b);
  yaml_document_delete(&doc);
  if (st != CB_OK) {
    cb_sim_behavior_free(b);
    return st;
  }
  *out = b;
  return CB_OK;
}

void cb__sim_behavior_request_init(const cb_sim_behavior *b, cb__sim_behavior_request *rq,
                                   const cb__sim_api_request *req, const char *text, size_t len,
                                   int64_t prompt_tokens, uint64_t seed) {
  *rq = (cb__sim_behavior_request){.req = req, .text = text ? text : "", .len = text ? len : 0,
                                   .prompt_tokens = prompt_tokens,
                                   .seed = cb_hash3_u64(seed, b->seed, UINT64_C(0x626568)),
                                   .text_hash = cb_fnv1a64(text ? text : "", text ? len : 0)};
}

double cb__sim_behavior_uniform(const cb__sim_behavior_request *rq, uint64_t stream,
                                uint64_t index) {
  cb_rng rng;
  cb_rng_init_stream(&rng, cb_hash3_u64(rq->seed, rq->text_hash, stream), stream, index);
  return cb_rng_uniform(&rng);
}

int cb__sim_behavior_reply_to(const cb_sim_behavior *b, const cb__sim_behavior_request *rq,
                              cb__sim_behavior_reply *reply) {
  for (size_t i = 0; b && i < N_SECTIONS; i++)
    if (b->section[i] && SECTIONS[i].answer(b->section[i], rq, reply)) return 1;
  return 0;
}

int cb_sim_behavior_answer(const cb_sim_behavior *b, const char *prompt, size_t len,
                           int64_t prompt_tokens, uint64_t seed, cb_buf *out) {
  if (!b) return 0;
  cb__sim_behavior_request rq;
  cb__sim_behavior_request_init(b, &rq, NULL, prompt, len, prompt_tokens, seed);
  cb__sim_behavior_reply reply;
  memset(&reply, 0, sizeof reply);
  cb_buf_init(&reply.text, 0);
  int answered = cb__sim_behavior_reply_to(b, &rq, &reply);
  if (answered && reply.answer) cb_buf_append(out, reply.answer->text->text, reply.answer->text->text_len);
  else if (answered) cb_buf_append(out, reply.text.data, reply.text.len);
  cb__sim_answer_free(reply.answer);
  cb_buf_free(&reply.text);
  return answered;
}
