/*
 * behavior_lm.c - the `lm` section of a simulator behaviour file (docs/probe.md,
 * "lm"): a tiny language model whose next-token distribution is a function of the
 * text so far, so that a prompt extended by the model's own answer gets the
 * distribution the answer had at that point (what `probe quant` re-feeds), and the
 * `--weights int4` deployment's logit noise (CB_SIM_INT4_LOGIT_NOISE).
 *
 * The context is the FNV-1a 64-bit hash of the prompt's bytes followed by the
 * answer's bytes so far (bytes, not tokens: however a client re-splits the text into
 * tokens, the same text has the same hash). Word v's logit at context h is
 * scale * g(seed, h, v), g a standard normal draw; under int4 weights each logit also
 * gets noise * g'(seed, h, v), an independent standard normal draw. The answer is
 * greedy: each token is the word of the highest (noisy) logit.
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "calibench/workload.h"
#include "sim/behavior.h"
#include "sim/behavior_answer.h"

#define STREAM_LOGIT UINT64_C(0x6c6f676974)  /* "logit" */
#define STREAM_NOISE UINT64_C(0x696e7434)    /* "int4" */
#define STREAM_WORD UINT64_C(0x6c6d776f7264) /* "lmword" */
#define MAX_VOCAB CB__SIM_PERTURB_MAX_CANDIDATES
#define MAX_TOKENS CB__SIM_PERTURB_MAX_TOKENS

typedef struct lm {
  int vocab;         /* words, 2..20 (top_logprobs can list them all) [16] */
  double scale;      /* logit standard deviation, 0..20 [2] */
  int answer_tokens; /* tokens in each answer, cut by max_tokens, 1..256 [16] */
} lm;

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

cb_status cb__sim_behavior_lm_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  lm m = {.vocab = 16, .scale = 2, .answer_tokens = 16};
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
    cb_status st;
    if (k->type != YAML_SCALAR_NODE) st = cb__yaml_at(y, k, CB_ERR_PARSE, "lm: expected a key");
    else if (!strcmp(scalar(k), "vocab")) st = cb__yaml_int(y, v, "lm.vocab", 2, MAX_VOCAB, &m.vocab);
    else if (!strcmp(scalar(k), "scale"))
      st = cb__yaml_number(y->path, v, "lm.scale", 0, 0, 20, &m.scale, y->err);
    else if (!strcmp(scalar(k), "answer_tokens"))
      st = cb__yaml_int(y, v, "lm.answer_tokens", 1, MAX_TOKENS, &m.answer_tokens);
    else
      st = cb__yaml_at(y, k, CB_ERR_PARSE,
                       "unknown key 'lm.%s' (expected vocab, scale or answer_tokens)", scalar(k));
    if (st != CB_OK) return st;
  }
  lm *o = cb_calloc(1, sizeof *o);
  *o = m;
  *out = o;
  return CB_OK;
}

void cb__sim_behavior_lm_free(void *section) { cb_free(section); }

/* A standard normal draw for (seed, stream, h, v) (Box-Muller on two hashed uniforms). */
static double gauss(uint64_t seed, uint64_t stream, uint64_t h, int v) {
  uint64_t a = cb_hash3_u64(cb_hash3_u64(seed, stream, h), (uint64_t)v, 1);
  uint64_t b = cb_hash3_u64(cb_hash3_u64(seed, stream, h), (uint64_t)v, 2);
  double u1 = ((double)(a >> 11) + 0.5) * 0x1.0p-53, u2 = (double)(b >> 11) * 0x1.0p-53;
  return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static uint64_t fnv_more(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
  return h;
}

/* The model's words: distinct, each with the id the answer's text reports. */
static void words(uint64_t seed, int n, uint32_t vocab, char (*out)[CB_SIM_TOKEN_TEXT_MAX],
                  uint32_t *ids) {
  int have = 0;
  for (int64_t tries = 0; have < n; tries++) {
    char w[CB_SIM_TOKEN_TEXT_MAX];
    uint32_t id = cb_sim_text_token(cb_hash3_u64(seed, STREAM_WORD, 0), tries, vocab, w);
    /* only " word" forms: a word after any text starts a token of its own, so an
     * answer re-tokenizes to its words (a "Word" would merge with the word before) */
    int dup = w[0] != ' ';
    for (int j = 0; j < have && !dup; j++) dup = !strcmp(w, out[j]);
    if (dup && tries < 64 * MAX_VOCAB) continue;
    if (dup) snprintf(w, sizeof w, " w%d", have); /* never reached with the word list */
    memcpy(out[have], w, sizeof w);
    ids[have++] = id;
  }
}

/* The model's first T tokens after rq->text: each token's ranked words, greedy. */
static cb__sim_answer *answer(const lm *m, const cb__sim_behavior_request *rq, int T) {
  int n = m->vocab;
  uint32_t vocab = rq->vocab ? rq->vocab : CB_WORKLOAD_APPROX_VOCAB;
  char w[MAX_VOCAB][CB_SIM_TOKEN_TEXT_MAX];
  uint32_t ids[MAX_VOCAB];
  words(rq->seed, n, vocab, w, ids);
  cb__sim_answer *a = cb__sim_answer_ranked(T, n);
  uint64_t h = fnv_more(UINT64_C(0xcbf29ce484222325), rq->text, rq->len);
  for (int k = 0; k < T; k++) {
    double z[MAX_VOCAB];
    for (int v = 0; v < n; v++) {
      z[v] = m->scale * gauss(rq->seed, STREAM_LOGIT, h, v);
      if (rq->logit_noise > 0) z[v] += rq->logit_noise * gauss(rq->seed, STREAM_NOISE, h, v);
    }
    const char *word = w[cb__sim_answer_token(a, k, z, (const char (*)[CB_SIM_TOKEN_TEXT_MAX])w, ids)];
    h = fnv_more(h, word, strlen(word));
  }
  return a;
}

int cb__sim_behavior_lm_answer(const void *section, const cb__sim_behavior_request *rq,
                               cb__sim_behavior_reply *reply) {
  const lm *m = section;
  reply->answer = answer(m, rq, m->answer_tokens);
  return 1;
}

cb__sim_answer *cb__sim_behavior_lm_next(const cb_sim_behavior *b,
                                         const cb__sim_behavior_request *rq) {
  const lm *m = cb__sim_behavior_find(b, "lm");
  return m ? answer(m, rq, 1) : NULL;
}
