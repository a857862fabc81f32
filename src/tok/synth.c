/*
 * synth.c - exact-length prompt text from a corpus.
 *
 * Token counts do not add up across a cut (BPE merges across it), so the length is
 * searched, not computed: from a word boundary drawn with the seed, corpus words are
 * taken (wrapping, joined by single spaces) until the text has at least N tokens;
 * then a binary search over character boundaries finds the longest prefix with at
 * most N tokens. Counts grow almost monotonically with the prefix, so that prefix
 * usually has exactly N; when adding one character jumps past N (a character that
 * splits into two tokens, or a merge that undoes one), nearby cut points are tried,
 * then other start words. The last resort pads a prefix that is short by k tokens
 * with words that each add exactly one token. Every candidate is verified with the
 * caller's counter, so whatever is returned has exactly N tokens by that counter.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "tok_internal.h"

#define SYNTH_ATTEMPTS 24
#define SYNTH_NEARBY 48 /* characters tried each side of the binary-search cut */

typedef struct words {
  const char *text; /* sanitized corpus */
  size_t *off, *len;
  size_t n, cap;
} words;

static int is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void split_words(words *w, const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    while (i < n && is_space((unsigned char)s[i])) i++;
    size_t j = i;
    while (j < n && !is_space((unsigned char)s[j])) j++;
    if (j > i) {
      if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 1024;
        w->off = cb_reallocarray(w->off, w->cap, sizeof *w->off);
        w->len = cb_reallocarray(w->len, w->cap, sizeof *w->len);
      }
      w->off[w->n] = i;
      w->len[w->n++] = j - i;
    }
    i = j;
  }
}

/* Previous UTF-8 character boundary at or before i. */
static size_t char_floor(const char *s, size_t i) {
  while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
  return i;
}

static size_t char_next(const char *s, size_t n, size_t i) {
  if (i >= n) return n;
  i++;
  while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
  return i;
}

/* Longest prefix length (a character boundary) with count <= target, found by bisection
 * on [lo, hi] where count(lo) <= target < count(hi). */
static size_t bisect(cb_tok_count_fn count, void *ctx, const char *s, size_t lo, size_t hi,
                     size_t target) {
  while (1) {
    size_t mid = char_floor(s, lo + (hi - lo) / 2);
    if (mid <= lo) mid = char_next(s, hi, lo);
    if (mid >= hi) return lo;
    if (count(ctx, s, mid) <= target) lo = mid;
    else hi = mid;
  }
}

cb_status cb_tok_synth(cb_tok_count_fn count, void *ctx, const char *corpus,
                       size_t corpus_len, size_t n_tokens, uint64_t seed, cb_buf *out,
                       cb_error *err) {
  if (n_tokens == 0) {
    if (!out->data) cb_buf_append(out, "", 0);
    return CB_OK;
  }
  cb_buf clean, cand;
  cb_buf_init(&clean, 0);
  cb_buf_init(&cand, 0);
  cb__utf8_sanitize(corpus, corpus_len, &clean);
  words w = {clean.data, NULL, NULL, 0, 0};
  split_words(&w, clean.data, clean.len);
  cb_status st = CB_OK;
  if (w.n == 0) {
    st = cb_error_set(err, CB_ERR_INVALID, "synthesizing text: the corpus has no words");
    goto out;
  }
  cb_rng rng;
  cb_rng_init_stream(&rng, seed, 0x746f6b2e73796e74ULL /* "tok.synt" */, n_tokens);
  size_t best_len = 0, best_count = 0;
  cb_buf best;
  cb_buf_init(&best, 0);
  for (int attempt = 0; attempt < SYNTH_ATTEMPTS; attempt++) {
    size_t wi = (size_t)cb_rng_below(&rng, w.n);
    cb_buf_reset(&cand);
    /* grow until the text has more than n_tokens tokens */
    size_t target_bytes = n_tokens * 2 + 16, c = 0;
    for (;;) {
      while (cand.len < target_bytes) {
        if (cand.len) cb_buf_append_char(&cand, ' ');
        cb_buf_append(&cand, clean.data + w.off[wi], w.len[wi]);
        wi = (wi + 1) % w.n;
      }
      c = count(ctx, cand.data, cand.len);
      if (c > n_tokens) break;
      target_bytes = cand.len * 2;
    }
    size_t cut = bisect(count, ctx, cand.data, 0, cand.len, n_tokens);
    size_t got = count(ctx, cand.data, cut);
    if (got != n_tokens) { /* search nearby cut points */
      size_t lo = cut, hi = cut;
      for (int k = 0; k < SYNTH_NEARBY && got != n_tokens; k++) {
        lo = char_floor(cand.data, lo ? lo - 1 : 0);
        hi = char_next(cand.data, cand.len, hi);
        if (count(ctx, cand.data, hi) == n_tokens) cut = hi, got = n_tokens;
        else if (count(ctx, cand.data, lo) == n_tokens) cut = lo, got = n_tokens;
      }
    }
    if (got == n_tokens) {
      cb_buf_append(out, cand.data, cut);
      if (!out->data) cb_buf_append(out, "", 0);
      cb_buf_free(&best);
      goto out;
    }
    if (got < n_tokens && got > best_count) {
      best_count = got;
      best_len = cut;
      cb_buf_reset(&best);
      cb_buf_append(&best, cand.data, cut);
    }
  }
  /* last resort: pad the closest prefix with words that add exactly one token each */
  {
    static const char *const pads[] = {" the", " a", " and", " of", ".", " to", "\n"};
    size_t have = best_count;
    (void)best_len;
    for (size_t p = 0; have < n_tokens && p < sizeof pads / sizeof pads[0];) {
      size_t before = best.len;
      cb_buf_append_str(&best, pads[p]);
      size_t c2 = count(ctx, best.data, best.len);
      if (c2 == have + 1) have = c2;
      else {
        best.len = before;
        best.data[before] = '\0';
        p++;
      }
    }
    if (have == n_tokens && count(ctx, best.data, best.len) == n_tokens) {
      cb_buf_append(out, best.data, best.len);
    } else {
      st = cb_error_set(err, CB_ERR_RANGE,
                        "synthesizing text: no text of exactly %zu tokens found from this corpus",
                        n_tokens);
    }
    cb_buf_free(&best);
  }
out:
  cb_free(w.off);
  cb_free(w.len);
  cb_buf_free(&clean);
  cb_buf_free(&cand);
  return st;
}
