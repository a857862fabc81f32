/*
 * behavior_perturb.c - the `perturb` section of a simulator behaviour file
 * (behavior_answer.h, docs/probe.md): its parser and the prompt-driven choice of
 * each answer token among its candidates.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/workload.h"
#include "sim/behavior.h"
#include "sim/behavior_answer.h"
#include "sim/behavior_perturb.h"

#define STREAM_BASE UINT64_C(0x62617365)      /* "base" */
#define STREAM_FEATURE UINT64_C(0x66656174)   /* "feat" */
#define STREAM_WORD UINT64_C(0x776f7264)      /* "word" */
/* Trigrams of at most this many prompt bytes shape the answer: the cost per request is
 * O(bytes * tokens * candidates), kept bounded for long prompts. */
#define MAX_FEATURE_BYTES 16384

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

cb_status cb__sim_perturb_parse(const cb__yaml_ctx *y, const yaml_node_t *map, cb__sim_perturb *out) {
  *out = (cb__sim_perturb){.sensitivity = 1, .answer_tokens = 12, .candidates = 8};
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, map, CB_ERR_PARSE, "perturb", "expected a mapping");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
    cb_status st;
    if (k->type != YAML_SCALAR_NODE) st = cb__yaml_at(y, k, CB_ERR_PARSE, "perturb: expected a key");
    else if (!strcmp(scalar(k), "sensitivity"))
      st = cb__yaml_number(y->path, v, "perturb.sensitivity", 0, 0, 100, &out->sensitivity, y->err);
    else if (!strcmp(scalar(k), "answer_tokens"))
      st = cb__yaml_int(y, v, "perturb.answer_tokens", 1, CB__SIM_PERTURB_MAX_TOKENS, &out->answer_tokens);
    else if (!strcmp(scalar(k), "candidates"))
      st = cb__yaml_int(y, v, "perturb.candidates", 2, CB__SIM_PERTURB_MAX_CANDIDATES, &out->candidates);
    else
      st = cb__yaml_at(y, k, CB_ERR_PARSE,
                       "unknown key 'perturb.%s' (expected sensitivity, answer_tokens or candidates)",
                       scalar(k));
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

/* A seeded value with mean 0 and variance 1 (uniform, scaled): cheap, and a sum of
 * many is near normal. */
static double unit(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b) {
  uint64_t h = cb_hash3_u64(cb_hash3_u64(seed, stream, a), b, 0x9e37);
  return ((double)(h >> 11) * 0x1.0p-53 - 0.5) * 3.4641016151377544; /* sqrt(12) */
}

/* Candidate word v of token k: distinct within the token. */
static void candidate_words(uint64_t seed, int k, int n, uint32_t vocab,
                            char (*out)[CB_SIM_TOKEN_TEXT_MAX], uint32_t *ids) {
  int have = 0;
  for (int64_t tries = 0; have < n; tries++) {
    char w[CB_SIM_TOKEN_TEXT_MAX];
    uint32_t id = cb_sim_text_token(cb_hash3_u64(seed, STREAM_WORD, (uint64_t)k), tries, vocab, w);
    int dup = !w[0];
    for (int j = 0; j < have && !dup; j++) dup = !strcmp(w, out[j]);
    if (dup && tries < 64 * CB__SIM_PERTURB_MAX_CANDIDATES) continue;
    if (dup) snprintf(w, sizeof w, " w%d", have); /* never reached with the word list */
    memcpy(out[have], w, sizeof w);
    ids[have++] = id;
  }
}

void cb__sim_perturb_logits(const cb__sim_perturb *p, uint64_t seed, const char *prompt,
                            size_t len, int k, double *z) {
  int n = p->candidates;
  for (int v = 0; v < n; v++) z[v] = unit(seed, STREAM_BASE, (uint64_t)k, (uint64_t)v);
  if (len > MAX_FEATURE_BYTES) len = MAX_FEATURE_BYTES;
  if (len < 3 || p->sensitivity == 0) return;
  double f[CB__SIM_PERTURB_MAX_CANDIDATES] = {0};
  size_t grams = len - 2;
  for (size_t i = 0; i < grams; i++) {
    uint64_t g = (uint64_t)(unsigned char)prompt[i] << 16 |
                 (uint64_t)(unsigned char)prompt[i + 1] << 8 | (unsigned char)prompt[i + 2];
    for (int v = 0; v < n; v++) f[v] += unit(seed, STREAM_FEATURE, g, (uint64_t)k * 64 + (uint64_t)v);
  }
  double norm = 1.0 / sqrt((double)grams);
  for (int v = 0; v < n; v++) z[v] += p->sensitivity * f[v] * norm;
}

void cb__sim_perturb_fill(const cb__sim_perturb *p, uint64_t seed, const char *prompt, size_t len,
                          uint32_t vocab, cb__sim_answer *a) {
  for (int k = 0; k < p->answer_tokens; k++) {
    char words[CB__SIM_PERTURB_MAX_CANDIDATES][CB_SIM_TOKEN_TEXT_MAX];
    uint32_t ids[CB__SIM_PERTURB_MAX_CANDIDATES];
    double z[CB__SIM_PERTURB_MAX_CANDIDATES];
    candidate_words(seed, k, p->candidates, vocab, words, ids);
    cb__sim_perturb_logits(p, seed, prompt, len, k, z);
    cb__sim_answer_token(a, k, z, (const char (*)[CB_SIM_TOKEN_TEXT_MAX])words, ids);
  }
}

/* ---- the section (behavior.h) ------------------------------------------------------ */

cb_status cb__sim_behavior_perturb_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  cb__sim_perturb *p = cb_calloc(1, sizeof *p);
  *out = p; /* on failure too: the loader frees it (behavior.h) */
  return cb__sim_perturb_parse(y, map, p);
}

void cb__sim_behavior_perturb_free(void *section) { cb_free(section); }

int cb__sim_behavior_perturb_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply) {
  reply->answer = cb__sim_perturb_answer(section, rq->seed, rq->text, rq->len,
                                         rq->vocab ? rq->vocab : CB_WORKLOAD_APPROX_VOCAB);
  return 1;
}
