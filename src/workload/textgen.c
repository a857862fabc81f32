/*
 * textgen.c - corpus text of an exact token length under any token counter.
 *
 * The text model cuts the built-in corpus into words and measures " word" once under
 * the counter. A region of text is then grown greedily: sentences are picked by the
 * seeded RNG and their words appended while the running estimate (the sum of the
 * words' own counts) stays at or below the goal; a word that would overshoot is
 * skipped for the next one, short filler words close the last gap. For tokenizers
 * that split at spaces before words (BPE pre-tokenizers, the approximate tokenizer)
 * counts add up across words, so the estimate is exact and one verification count
 * of the result confirms it: O(length).
 *
 * The result is always verified with the real counter. When it is off (a counter
 * that is not additive, or not even monotonic on prefixes), the slow path searches:
 * a binary search over word boundaries for the longest prefix not above the goal,
 * then single filler words (or punctuation) appended one at a time, each kept only
 * if the measured count moves toward the goal, backing off whole words when no filler
 * helps. Every candidate is measured, so whatever the counter, success means the text
 * measures exactly the goal; failure (no candidate reaches it within a bounded number
 * of steps) is reported, never hidden.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/tok.h"
#include "workload_internal.h"

size_t cb_workload_approx_count(void *ctx, const char *text, size_t len) {
  (void)ctx;
  return cb_tok_approx_tokenize(text, len, CB_WORKLOAD_APPROX_VOCAB, NULL, 0);
}

void cb__counter_resolve(const cb_token_counter *in, cb_token_counter *out) {
  out->count = in && in->count ? in->count : cb_workload_approx_count;
  out->ctx = in && in->count ? in->ctx : NULL;
  out->name = in && in->name ? in->name : (in && in->count ? "custom" : "approx-128256");
}

/* ---- prompts' storage ----------------------------------------------------------------- */

void cb_workload_prompt_init(cb_workload_prompt *p) {
  memset(p, 0, sizeof *p);
  cb_buf_init(&p->text, 0);
  cb_buf_init(&p->messages, 0);
}

void cb_workload_prompt_free(cb_workload_prompt *p) {
  cb_buf_free(&p->text);
  cb_buf_free(&p->messages);
  cb_free(p->ends);
  memset(p, 0, sizeof *p);
}

static void ends_push(cb_workload_prompt *s, size_t end) {
  if (s->ends_len == s->ends_cap) {
    s->ends_cap = s->ends_cap ? 2 * s->ends_cap : 256;
    s->ends = cb_reallocarray(s->ends, s->ends_cap, sizeof *s->ends);
  }
  s->ends[s->ends_len++] = end;
}

/* ---- the text model ------------------------------------------------------------------- */

/* Short words tried to close the last gap (space-led, so they never merge with the
 * word before them under space-splitting tokenizers), then punctuation (slow path). */
static const char *const word_fillers[] = {" a", " I", " the", " of", " and", " to",
                                           " in", " it", " is", " was", " on", " so"};
static const char *const punct_fillers[] = {".", ",", ";", "!", "\n"};
#define NWORD_FILLERS (sizeof word_fillers / sizeof word_fillers[0])
#define NPUNCT_FILLERS (sizeof punct_fillers / sizeof punct_fillers[0])

void cb__textmodel_init(cb__textmodel *tm, const cb_token_counter *counter) {
  memset(tm, 0, sizeof *tm);
  cb__counter_resolve(counter, &tm->counter);
  size_t ns;
  const char *const *sent = cb__corpus_sentences(&ns);
  size_t bytes = 0, words = 0;
  for (size_t i = 0; i < ns; i++) {
    const char *s = sent[i];
    for (size_t j = 0; s[j]; j++) {
      bytes++;
      if (s[j] != ' ' && (j == 0 || s[j - 1] == ' ')) words++;
    }
    bytes += 2;
  }
  tm->arena = cb_malloc(bytes + 1);
  tm->pieces = cb_calloc(words, sizeof *tm->pieces);
  tm->sentence_start = cb_calloc(ns + 1, sizeof *tm->sentence_start);
  size_t off = 0, np = 0;
  for (size_t i = 0; i < ns; i++) {
    tm->sentence_start[i] = (uint32_t)np;
    const char *s = sent[i];
    size_t j = 0;
    while (s[j]) {
      while (s[j] == ' ') j++;
      if (!s[j]) break;
      size_t k = j;
      while (s[k] && s[k] != ' ') k++;
      /* stored as " word" */
      tm->arena[off] = ' ';
      memcpy(tm->arena + off + 1, s + j, k - j);
      cb__piece *p = &tm->pieces[np++];
      p->off = (uint32_t)(off + 1);
      p->len = (uint16_t)(k - j);
      size_t c = cb__count(&tm->counter, tm->arena + off, k - j + 1);
      p->count = (uint16_t)(c > UINT16_MAX ? UINT16_MAX : c);
      off += k - j + 1;
      j = k;
    }
  }
  tm->sentence_start[ns] = (uint32_t)np;
  tm->arena[off] = '\0';
  tm->num_pieces = np;
  tm->num_sentences = ns;
}

void cb__textmodel_free(cb__textmodel *tm) {
  cb_free(tm->arena);
  cb_free(tm->pieces);
  cb_free(tm->sentence_start);
  memset(tm, 0, sizeof *tm);
}

/* ---- exact-length synthesis ----------------------------------------------------------- */

typedef struct synth_ctx {
  const cb__textmodel *tm;
  cb_buf *out;
  size_t start;   /* where the region begins in out */
  int standalone; /* measure the region alone, else the whole buffer */
  size_t goal;
  cb_workload_prompt *s;
  /* the word stream */
  cb_rng rng;
  size_t sentence, piece;
  int first; /* the next word starts the text: no leading space */
} synth_ctx;

static size_t measure(const synth_ctx *c) {
  if (c->standalone)
    return cb__count(&c->tm->counter, c->out->data + c->start, c->out->len - c->start);
  return cb__count(&c->tm->counter, c->out->data, c->out->len);
}

static void truncate_to(cb_buf *b, size_t len) {
  b->len = len;
  if (b->data) b->data[len] = '\0';
}

static int append(synth_ctx *c, const char *text, size_t len) {
  if (cb_buf_append(c->out, text, len) != CB_OK) return 0;
  ends_push(c->s, c->out->len);
  return 1;
}

/* The next word of the stream: its text (with its leading space unless it starts the
 * text) and its own count. */
static void next_word(synth_ctx *c, const char **text, size_t *len, size_t *count) {
  const cb__textmodel *tm = c->tm;
  const cb__piece *pc = &tm->pieces[c->piece];
  if (++c->piece == tm->sentence_start[c->sentence + 1]) {
    c->sentence = (size_t)cb_rng_below(&c->rng, tm->num_sentences);
    c->piece = tm->sentence_start[c->sentence];
  }
  *text = tm->arena + pc->off - 1; /* " word" */
  *len = (size_t)pc->len + 1;
  *count = pc->count;
  if (c->first) {
    (*text)++;
    (*len)--;
    *count = cb__count(&tm->counter, *text, *len);
  }
}

static const char *filler(size_t f) {
  return f < NWORD_FILLERS ? word_fillers[f] : punct_fillers[f - NWORD_FILLERS];
}

/* Slow path: search by measuring every candidate. Returns 1 when the goal is met. */
static int adjust(synth_ctx *c) {
  cb_workload_prompt *s = c->s;
  const size_t nf = NWORD_FILLERS + NPUNCT_FILLERS;
  /* 1. Make the text long enough: words in batches sized by the measured deficit. */
  for (int round = 0; round < 64; round++) {
    size_t cur = measure(c);
    if (cur >= c->goal) break;
    size_t want = (c->goal - cur) + (c->goal - cur) / 4 + 8, est = 0;
    while (est < want) {
      const char *t;
      size_t len, cnt;
      next_word(c, &t, &len, &cnt);
      if (!append(c, t, len)) return 0;
      c->first = 0;
      est += cnt ? cnt : 1;
    }
  }
  /* 2. The longest word-boundary prefix whose count is <= goal (binary search: exact
   * for monotonic counters, a starting point for the others). */
  size_t lo = 0, hi = s->ends_len;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    truncate_to(c->out, s->ends[mid - 1]);
    if (measure(c) <= c->goal)
      lo = mid;
    else
      hi = mid - 1;
  }
  s->ends_len = lo;
  truncate_to(c->out, lo ? s->ends[lo - 1] : c->start);

  /* 3. Close the gap with fillers, one or two at a time, each candidate measured. */
  size_t depth = 1;
  int neutral = 0;
  for (int step = 0; step < 400; step++) {
    size_t cur = measure(c);
    if (cur == c->goal) return 1;
    if (cur < c->goal) {
      size_t base = c->out->len;
      long up = -1, same = -1;
      for (size_t f = 0; f < nf; f++) {
        const char *t = filler(f);
        if (cb_buf_append(c->out, t, strlen(t)) != CB_OK) return 0;
        size_t m = measure(c);
        truncate_to(c->out, base);
        if (m == c->goal) return append(c, t, strlen(t));
        if (up < 0 && m > cur && m < c->goal) up = (long)f;
        if (same < 0 && m == cur) same = (long)f;
      }
      if (up >= 0) {
        if (!append(c, filler((size_t)up), strlen(filler((size_t)up)))) return 0;
        continue;
      }
      for (size_t f = 0; f < nf; f++)
        for (size_t g = 0; g < nf; g++) {
          if (cb_buf_append(c->out, filler(f), strlen(filler(f))) != CB_OK ||
              cb_buf_append(c->out, filler(g), strlen(filler(g))) != CB_OK)
            return 0;
          size_t m = measure(c);
          truncate_to(c->out, base);
          if (m == c->goal)
            return append(c, filler(f), strlen(filler(f))) &&
                   append(c, filler(g), strlen(filler(g)));
        }
      /* A step that keeps the count may still lead somewhere (counters that are not
       * monotonic); a few are allowed. */
      if (same >= 0 && neutral < 8) {
        neutral++;
        if (!append(c, filler((size_t)same), strlen(filler((size_t)same)))) return 0;
        continue;
      }
    }
    /* Over the goal, or stuck below it: back off `depth` pieces (more each time, so the
     * search cannot cycle between the same two states). */
    if (s->ends_len == 0) return 0;
    size_t drop = depth < s->ends_len ? depth : s->ends_len;
    s->ends_len -= drop;
    truncate_to(c->out, s->ends_len ? s->ends[s->ends_len - 1] : c->start);
    depth++;
    neutral = 0;
  }
  return 0;
}

cb_status cb__synth(const cb__textmodel *tm, cb_buf *out, uint32_t n_tokens, uint64_t seed,
                    int lead_space, int standalone, cb_workload_prompt *scratch, cb_error *err) {
  synth_ctx c;
  memset(&c, 0, sizeof c);
  c.tm = tm;
  c.out = out;
  c.start = out->len;
  c.standalone = standalone;
  c.goal = n_tokens;
  c.s = scratch;
  scratch->ends_len = 0;
  if (!out->data) cb_buf_append(out, "", 0);
  size_t est = standalone ? 0 : measure(&c);
  if (est > c.goal)
    return cb_error_set(err, CB_ERR_RANGE,
                        "cannot make a prompt of exactly %u tokens: the text before the "
                        "generated part already has %zu under counter '%s'",
                        n_tokens, est, tm->counter.name);
  cb_rng_init(&c.rng, seed);
  c.sentence = (size_t)cb_rng_below(&c.rng, tm->num_sentences);
  c.piece = tm->sentence_start[c.sentence];
  c.first = !lead_space && out->len == c.start;

  /* Greedy: words while their own counts fit, a skipped word for the next one, short
   * fillers for the last gap. Bounded even for counters that give most words 0. */
  size_t skips = 0;
  size_t budget = 16 * (size_t)n_tokens + 4096;
  while (est < c.goal && budget-- > 0) {
    const char *text;
    size_t len, cnt;
    next_word(&c, &text, &len, &cnt);
    if (est + cnt <= c.goal) {
      if (!append(&c, text, len)) break;
      est += cnt;
      c.first = 0;
      skips = 0;
      continue;
    }
    if (++skips < 16) continue; /* try the next words first */
    int placed = 0;
    for (size_t f = 0; f < NWORD_FILLERS && !c.first; f++) {
      size_t fc = cb__count(&tm->counter, word_fillers[f], strlen(word_fillers[f]));
      if (fc >= 1 && est + fc <= c.goal) {
        if (!append(&c, word_fillers[f], strlen(word_fillers[f]))) break;
        est += fc;
        placed = 1;
        break;
      }
    }
    if (!placed) break;
    skips = 0;
  }
  if (measure(&c) == c.goal || adjust(&c)) return CB_OK;
  size_t got = measure(&c);
  truncate_to(out, c.start);
  return cb_error_set(err, CB_ERR_RANGE,
                      "cannot make a prompt of exactly %u tokens under counter '%s' "
                      "(closest found: %zu)",
                      n_tokens, tm->counter.name, got);
}

cb_status cb_workload_synth_text(const cb_token_counter *counter, uint32_t n_tokens,
                                 uint64_t seed, int lead_space, cb_workload_prompt *scratch,
                                 cb_buf *out, cb_error *err) {
  if (n_tokens < 1) return cb_error_set(err, CB_ERR_INVALID, "n_tokens must be >= 1");
  cb__textmodel tm;
  cb__textmodel_init(&tm, counter);
  cb_status st = cb__synth(&tm, out, n_tokens, seed, lead_space, 1, scratch, err);
  cb__textmodel_free(&tm);
  return st;
}
