/*
 * context_prompt.c - the prompts of `probe context` (probe_context.h): RULER's
 * needle-in-a-haystack template (Hsieh et al. 2024, "RULER: What's the Real Context
 * Size of Your Long-Context Language Models?", github.com/NVIDIA/RULER,
 * scripts/data/synthetic/constants.py and niah.py) around a haystack of exactly the
 * asked length, and RULER's string-match score.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe_context.h"
#include "calibench/rng.h"
#include "calibench/tok.h"
#include "probe_internal.h"

void cb_probe_context_params_init(cb_probe_context_params *p) {
  memset(p, 0, sizeof *p);
  static const size_t lengths[] = {4096, 8192, 16384, 32768, 65536};
  memcpy(p->lengths, lengths, sizeof lengths);
  p->n_lengths = 5;
  for (size_t i = 0; i < 5; i++) p->depths[i] = 0.25 * (double)i;
  p->n_depths = 5;
  p->trials = 3;
  p->needle = CB_PROBE_NEEDLE_SINGLE;
  p->keys = 4;
  p->values = 4;
  p->tolerance = 0.1;
  p->bisect_rounds = 4;
  p->bootstrap = 1000;
  p->confidence = 0.95;
  p->pressure_scale = 0.05;
  p->max_tokens = 128;
}

cb_status cb_probe_context_params_check(const cb_probe_context_params *p, cb_error *err) {
  if (p->n_lengths < 2)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --lengths: expected at least two lengths");
  for (size_t i = 0; i < p->n_lengths; i++) {
    if (p->lengths[i] < 64)
      return cb_error_set(err, CB_ERR_INVALID, "probe context: --lengths: expected lengths of at "
                          "least 64 tokens, got %zu", p->lengths[i]);
    if (i && p->lengths[i] <= p->lengths[i - 1])
      return cb_error_set(err, CB_ERR_INVALID, "probe context: --lengths: expected increasing "
                          "lengths, got %zu after %zu", p->lengths[i], p->lengths[i - 1]);
  }
  if (!p->n_depths)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --depths: expected at least one depth");
  for (size_t i = 0; i < p->n_depths; i++)
    if (!(p->depths[i] >= 0 && p->depths[i] <= 1))
      return cb_error_set(err, CB_ERR_INVALID, "probe context: --depths: expected percentages in "
                          "[0, 100], got %g", 100 * p->depths[i]);
  if (p->trials < 1 || p->trials > 10000)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --trials: expected 1..10000, got %zu", p->trials);
  if (p->keys < 2 || p->keys > CB_PROBE_CONTEXT_MAX_KEYS)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --keys: expected 2..%d, got %zu",
                        CB_PROBE_CONTEXT_MAX_KEYS, p->keys);
  if (p->values < 1 || p->values > CB_PROBE_CONTEXT_MAX_VALUES)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --values: expected 1..%d, got %zu",
                        CB_PROBE_CONTEXT_MAX_VALUES, p->values);
  if (!(p->tolerance >= 0 && p->tolerance < 1))
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --tolerance: expected [0, 1), got %g", p->tolerance);
  if (!(p->confidence > 0 && p->confidence < 1))
    return cb_error_set(err, CB_ERR_INVALID, "probe context: confidence: expected (0, 1), got %g", p->confidence);
  for (size_t i = 0; i < p->n_densities; i++)
    if (!(p->densities[i] >= 0 && p->densities[i] <= 1000))
      return cb_error_set(err, CB_ERR_INVALID, "probe context: --pressure: expected distractors "
                          "per 1k tokens in [0, 1000], got %g", p->densities[i]);
  if (!(p->pressure_scale > 0 && p->pressure_scale <= 1))
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --pressure-scale: expected (0, 1], got %g",
                        p->pressure_scale);
  if (p->max_tokens < 1)
    return cb_error_set(err, CB_ERR_INVALID, "probe context: --max-tokens: expected >= 1");
  return CB_OK;
}

/* RULER's template (niah "Some special magic {type_needle_v} are hidden ...") and
 * needle and query for numbers as values. */
#define PREAMBLE                                                                          \
  "Some special magic numbers are hidden within the following text. Make sure to "        \
  "memorize it. I will quiz you about the numbers afterwards.\n"
#define NEEDLE_FMT "One of the special magic numbers for %s is: %s. "
#define QUESTION_FMT "\nWhat are all the special magic numbers for %s mentioned in the provided text?"

/* Keys as RULER's words are: two words joined by a hyphen. */
static const char *const ADJ[] = {
    "amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly",
    "keen", "lofty", "mellow", "nimble", "odd", "pale", "quiet", "rapid", "silent", "tidy",
    "upbeat", "vivid", "wary", "young", "zesty", "bold", "crisp", "dim", "early", "fuzzy",
    "grand", "humble"};
static const char *const NOUN[] = {
    "anchor", "badger", "canyon", "dolphin", "ember", "falcon", "garden", "harbor", "island",
    "jasmine", "kettle", "lantern", "meadow", "nectar", "orchard", "pebble", "quarry", "raven",
    "saddle", "thistle", "umbrella", "valley", "walrus", "yarrow", "zephyr", "beacon", "cedar",
    "delta", "fjord", "glacier", "heron", "ivory"};
#define N_ADJ (sizeof ADJ / sizeof ADJ[0])
#define N_NOUN (sizeof NOUN / sizeof NOUN[0])

static void draw_key(cb_rng *rng, char *out, size_t n) {
  snprintf(out, n, "%s-%s", ADJ[cb_rng_below(rng, N_ADJ)], NOUN[cb_rng_below(rng, N_NOUN)]);
}

static void draw_value(cb_rng *rng, char *out, size_t n) {
  snprintf(out, n, "%07llu", (unsigned long long)(1000000 + cb_rng_below(rng, 9000000)));
}

static size_t count(const cb_probe_context_params *p, const char *s, size_t len) {
  return p->counter.count ? p->counter.count(p->counter.ctx, s, len)
                          : cb_workload_approx_count(NULL, s, len);
}

/* A piece of text inserted into the haystack: at `share` of it (byte `at` once the
 * haystack is made); `order` keeps the needles of one depth in their order. */
typedef struct insert {
  double share;
  size_t at, order;
  char text[160];
} insert;

static int by_at(const void *a, const void *b) {
  const insert *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The sentence boundary at or after `at` (within 600 bytes), else the next space, else
 * the end: where a needle goes without splitting a word. */
static size_t boundary(const char *hay, size_t len, size_t at) {
  if (at == 0 || at >= len) return at >= len ? len : 0;
  for (size_t i = at; i < len && i < at + 600; i++)
    if (hay[i - 1] == ' ' && i >= 2 && hay[i - 2] == '.') return i;
  for (size_t i = at; i < len; i++)
    if (hay[i - 1] == ' ') return i;
  return len;
}

static void assemble(cb_buf *out, const cb_buf *hay, insert *ins, size_t n_ins, const char *key) {
  for (size_t i = 0; i < n_ins; i++) ins[i].at = boundary(hay->data, hay->len, (size_t)(ins[i].share * (double)hay->len));
  qsort(ins, n_ins, sizeof *ins, by_at);
  cb_buf_reset(out);
  cb_buf_append_str(out, PREAMBLE);
  size_t pos = 0;
  for (size_t i = 0; i < n_ins; i++) {
    cb_buf_append(out, hay->data + pos, ins[i].at - pos);
    if (ins[i].at == hay->len && hay->len && hay->data[hay->len - 1] != ' ') cb_buf_append_char(out, ' ');
    cb_buf_append_str(out, ins[i].text);
    pos = ins[i].at;
  }
  cb_buf_append(out, hay->data + pos, hay->len - pos);
  cb_buf_appendf(out, QUESTION_FMT, key);
}

cb_status cb_probe_context_prompt(const cb_probe_context_params *p, uint64_t stream,
                                  size_t length, double depth, size_t trial, double density,
                                  cb_buf *prompt, cb_probe_context_needle *needle, cb_error *err) {
  memset(needle, 0, sizeof *needle);
  cb_rng rng;
  uint64_t cell = cb_hash3_u64((uint64_t)length, (uint64_t)llround(depth * 1e6),
                               (uint64_t)llround(density * 1e3));
  cb_rng_init_stream(&rng, cb_hash3_u64(p->seed, stream, cell), UINT64_C(0x6e65656465), trial);
  draw_key(&rng, needle->key, sizeof needle->key);
  needle->n_values = p->needle == CB_PROBE_NEEDLE_MULTI_VALUE ? p->values : 1;
  for (size_t v = 0; v < needle->n_values; v++) {
    draw_value(&rng, needle->values[v], sizeof needle->values[v]);
    for (size_t w = 0; w < v; w++) /* distinct values: a substring match must mean one */
      if (!strcmp(needle->values[v], needle->values[w])) {
        v--;
        break;
      }
  }
  /* Distractors: other keys (multi-key), and the pressure's `density` per 1k tokens. */
  size_t others = p->needle == CB_PROBE_NEEDLE_MULTI_KEY ? p->keys - 1 : 0;
  size_t pressure = (size_t)llround(density * (double)length / 1000.0);
  size_t n_ins = needle->n_values + others + pressure;
  insert *ins = cb_calloc(n_ins, sizeof *ins);
  size_t k = 0;
  for (size_t v = 0; v < needle->n_values; v++, k++) {
    snprintf(ins[k].text, sizeof ins[k].text, NEEDLE_FMT, needle->key, needle->values[v]);
    ins[k].share = depth;
    ins[k].order = k;
  }
  for (size_t d = 0; d < others + pressure; d++, k++) {
    char key[32], value[16];
    do draw_key(&rng, key, sizeof key);
    while (!strcmp(key, needle->key));
    draw_value(&rng, value, sizeof value);
    snprintf(ins[k].text, sizeof ins[k].text, NEEDLE_FMT, key, value);
    ins[k].order = k;
    if (d < others) {
      ins[k].share = cb_rng_uniform(&rng);
    } else { /* density decaying with distance from the needle: exponential, either side */
      double dist = cb_rng_exponential(&rng, 1.0 / p->pressure_scale);
      double s = depth + (cb_rng_uniform(&rng) < 0.5 ? -dist : dist);
      ins[k].share = s < 0 ? 0 : s > 1 ? 1 : s;
    }
  }
  needle->distractors = others + pressure;

  /* The fixed parts measured, then a haystack of the rest; the whole re-measured and
   * the haystack's target moved by the miss until exact (a tokenizer may merge across
   * the joins). The closest is kept. */
  const char *corpus = p->haystack;
  size_t corpus_len = p->haystack_len;
  if (!corpus) corpus = cb_probe_context_haystack(&corpus_len);
  cb_tok_count_fn fn = p->counter.count ? (cb_tok_count_fn)p->counter.count
                                        : (cb_tok_count_fn)cb_workload_approx_count;
  void *ctx = p->counter.count ? p->counter.ctx : NULL;
  size_t fixed = count(p, PREAMBLE, strlen(PREAMBLE)) + count(p, QUESTION_FMT, strlen(QUESTION_FMT));
  for (size_t i = 0; i < n_ins; i++) fixed += count(p, ins[i].text, strlen(ins[i].text));
  long first_target = (long)length - (long)fixed;
  uint64_t hay_seed = cb_hash3_u64(p->seed, stream ^ UINT64_C(0x686179), (uint64_t)trial);
  cb_buf hay = {0}, best = {0};
  long best_miss = -1;
  cb_status st = CB_OK;
  /* A count can skip the length (the joins merge into one token either way): then
   * another start in the corpus, whose words join differently. */
  for (uint64_t start = 0; start < 6 && best_miss != 0 && st == CB_OK; start++) {
    long target = first_target;
    uint64_t seed = start ? cb_hash3_u64(hay_seed, start, 0) : hay_seed;
    for (int round = 0; round < 6 && best_miss != 0; round++) {
      if (target < 1) target = 1;
      cb_buf_reset(&hay);
      if ((st = cb_tok_synth(fn, ctx, corpus, corpus_len, (size_t)target, seed, &hay, err)) != CB_OK)
        break;
      assemble(prompt, &hay, ins, n_ins, needle->key);
      size_t got = count(p, prompt->data, prompt->len);
      long miss = (long)length - (long)got;
      if (best_miss < 0 || labs(miss) < best_miss) {
        best_miss = labs(miss);
        cb_buf_reset(&best);
        cb_buf_append(&best, prompt->data, prompt->len);
        needle->tokens = got;
      }
      if (!miss) break;
      target += miss;
    }
  }
  if (st == CB_OK) {
    cb_buf_reset(prompt);
    cb_buf_append(prompt, best.data, best.len);
  }
  cb_buf_free(&hay);
  cb_buf_free(&best);
  cb_free(ins);
  return st;
}

/* Case-insensitive substring. */
static int contains(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (const char *h = hay; *h; h++) {
    size_t i = 0;
    while (i < n && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == n) return 1;
  }
  return n == 0;
}

double cb_probe_context_score(const cb_probe_context_needle *needle, const char *answer) {
  if (!answer || !needle->n_values) return 0;
  size_t hit = 0;
  for (size_t v = 0; v < needle->n_values; v++) hit += contains(answer, needle->values[v]);
  return (double)hit / (double)needle->n_values;
}
