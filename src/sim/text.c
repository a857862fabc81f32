/*
 * text.c - the simulator's synthetic output text.
 *
 * Output text: token k of a request is a pure function of (seed, k), so the server
 * can render any token without keeping per-request text state, and the engine can
 * hash output blocks for prefix caching from the same ids. The pieces are common
 * English words (with their leading space), "." and ",", arranged into sentences:
 * a piece is punctuation when a seeded coin says so and the previous piece was not
 * punctuation; the word after "." is capitalised. Each piece is one token of the
 * approximate tokenizer (tok's cb_tok_approx_*), and its id is that token's id.
 */
#include <stdint.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "calibench/tok.h"

/* Common English words of at most 6 letters (the approximate tokenizer's letter
 * chunk): each is one approximate token with its leading space. */
static const char *const words[] = {
    "the",    "of",     "and",    "to",     "in",     "is",     "that",   "for",
    "it",     "as",     "was",    "with",   "be",     "by",     "on",     "not",
    "he",     "this",   "are",    "or",     "his",    "from",   "at",     "which",
    "but",    "have",   "an",     "had",    "they",   "you",    "were",   "their",
    "one",    "all",    "we",     "can",    "her",    "has",    "there",  "been",
    "if",     "more",   "when",   "will",   "would",  "who",    "so",     "no",
    "model",  "data",   "token",  "cache",  "batch",  "server", "speed",  "memory",
    "time",   "work",   "system", "result", "value",  "number", "state",  "point",
    "long",   "small",  "large",  "first",  "last",   "next",   "good",   "fast",
    "slow",   "early",  "late",   "new",    "old",    "high",   "low",    "same",
    "other",  "every",  "each",   "many",   "most",   "some",   "few",    "much",
    "make",   "take",   "give",   "find",   "keep",   "show",   "run",    "read",
    "write",  "send",   "wait",   "start",  "stop",   "learn",  "build",  "test",
    "river",  "stone",  "light",  "water",  "city",   "road",   "house",  "garden",
    "paper",  "music",  "letter", "window", "market", "forest", "summer", "winter",
    "quiet",  "bright", "simple", "steady", "clear",  "open",   "close",  "near",
    "under",  "over",   "after",  "before", "about",  "around", "again",  "still",
    "often",  "always", "never",  "today",  "here",   "where",  "while",  "since",  
};
#define NWORDS (sizeof words / sizeof words[0])

/* Seeded coin per position: 1 in 8 positions are punctuation candidates. */
static uint64_t position_hash(uint64_t seed, int64_t k) {
  return cb_hash3_u64(seed, UINT64_C(0x74657874), (uint64_t)k);
}
static int is_candidate(uint64_t h) { return (h & 7) == 0; }

/* 0 = word, '.' or ',' = punctuation at position k >= 2, from the hashes of k and
 * k - 1. Never two punctuation pieces in a row: a candidate right after a candidate
 * stays a word. */
static char punct_of(uint64_t h_k, uint64_t h_prev) {
  if (!is_candidate(h_k) || is_candidate(h_prev)) return 0;
  return (h_k >> 3) % 3 == 0 ? ',' : '.';
}

/* Which piece k is, from the hashes of k, k - 1 and k - 2 (0 before the start):
 * ',' or '.', or a word and its form. */
enum { FORM_FIRST, FORM_LOWER, FORM_CAPITAL, NFORMS }; /* "Word", " word", " Word" */
typedef struct piece {
  char punct;  /* 0: a word */
  size_t word; /* index in words */
  int form;
} piece;

static piece piece_of(uint64_t h0, uint64_t h1, uint64_t h2, int64_t k) {
  piece p = {.punct = k >= 2 ? punct_of(h0, h1) : 0, .word = (h0 >> 8) % NWORDS};
  p.form = k == 0 ? FORM_FIRST : k >= 3 && punct_of(h1, h2) == '.' ? FORM_CAPITAL : FORM_LOWER;
  return p;
}

static size_t render(piece p, char *out) {
  size_t n = 0;
  if (p.punct) {
    out[n++] = p.punct;
  } else {
    const char *w = words[p.word];
    if (p.form != FORM_FIRST) out[n++] = ' ';
    size_t start = n;
    while (*w) out[n++] = *w++;
    if (p.form != FORM_LOWER) out[start] = (char)(out[start] - 'a' + 'A');
  }
  out[n] = '\0';
  return n;
}

static uint32_t piece_at(uint64_t h0, uint64_t h1, uint64_t h2, int64_t k, uint32_t vocab,
                         char *out) {
  size_t n = render(piece_of(h0, h1, h2, k), out);
  return cb_tok_approx_id(out, n, vocab);
}

uint32_t cb_sim_text_token(uint64_t seed, int64_t k, uint32_t vocab, char *out) {
  uint64_t h1 = k >= 1 ? position_hash(seed, k - 1) : 0;
  uint64_t h2 = k >= 2 ? position_hash(seed, k - 2) : 0;
  return piece_at(position_hash(seed, k), h1, h2, k, vocab, out);
}

void cb_sim_text_cursor_init(cb_sim_text_cursor *c, uint64_t seed, int64_t k) {
  c->seed = seed;
  c->k = k;
  c->h1 = k >= 1 ? position_hash(seed, k - 1) : 0;
  c->h2 = k >= 2 ? position_hash(seed, k - 2) : 0;
}

uint32_t cb_sim_text_cursor_next(cb_sim_text_cursor *c, uint32_t vocab, char *out) {
  uint64_t h0 = position_hash(c->seed, c->k);
  uint32_t id = piece_at(h0, c->h1, c->h2, c->k, vocab, out);
  c->h2 = c->h1;
  c->h1 = h0;
  c->k++;
  return id;
}

/* Table layout: [word * NFORMS + form] for the words, then ',' and '.'. */
uint32_t *cb_sim_text_ids_new(uint32_t vocab) {
  uint32_t *ids = cb_reallocarray(NULL, NWORDS * NFORMS + 2, sizeof *ids);
  char text[CB_SIM_TOKEN_TEXT_MAX];
  for (size_t w = 0; w < NWORDS; w++)
    for (int f = 0; f < NFORMS; f++) {
      size_t n = render((piece){.word = w, .form = f}, text);
      ids[w * NFORMS + (size_t)f] = cb_tok_approx_id(text, n, vocab);
    }
  ids[NWORDS * NFORMS] = cb_tok_approx_id(",", 1, vocab);
  ids[NWORDS * NFORMS + 1] = cb_tok_approx_id(".", 1, vocab);
  return ids;
}

uint32_t cb_sim_text_cursor_next_id(cb_sim_text_cursor *c, const uint32_t *ids) {
  uint64_t h0 = position_hash(c->seed, c->k);
  piece p = piece_of(h0, c->h1, c->h2, c->k);
  c->h2 = c->h1;
  c->h1 = h0;
  c->k++;
  if (p.punct) return ids[NWORDS * NFORMS + (p.punct == '.')];
  return ids[p.word * NFORMS + (size_t)p.form];
}
