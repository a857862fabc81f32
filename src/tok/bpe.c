/*
 * bpe.c - the merge loop: one pre-tokenized piece in, its token ids out.
 *
 * A piece starts as a row of symbols (bytes for byte-level tokenizers, characters or
 * byte-fallback tokens for SentencePiece-style ones). Repeatedly, the adjacent pair
 * with the lowest rank is merged, the leftmost one among equal ranks, until no pair
 * has a rank. What "rank" means is the only difference between the two families:
 *
 *   tiktoken        rank(a, b) = id of the token whose bytes are bytes(a) + bytes(b)
 *   tokenizer.json  rank(a, b) = index of "a b" in the merges list; merged id from vocab
 *
 * Two implementations give identical results (tests/unit/test_tok_bpe.c checks this on
 * random input): pieces of up to cb__bpe_small_max symbols use a flat array and a
 * linear scan for the minimum (tiktoken's own loop; no allocation, cache-friendly);
 * longer ones (runs of spaces, unspaced CJK, SentencePiece's whole-segment words) use
 * a doubly linked list and a binary min-heap keyed (rank, start byte), with stale
 * entries skipped by a per-symbol generation counter: O(n log n).
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

size_t cb__bpe_small_max = 48;

void cb__ids_grow(cb_tok_ids *ids) {
  ids->cap = ids->cap ? ids->cap * 2 : 256;
  ids->ids = cb_reallocarray(ids->ids, ids->cap, sizeof *ids->ids);
}

typedef struct merge_ctx {
  const cb__vocab *vocab;
  const cb__pairmap *pairs;
  const unsigned char *bytes;
  int tiktoken;
} merge_ctx;

static inline uint32_t pair_rank(const merge_ctx *c, const cb__part *a, const cb__part *b,
                                 uint32_t *merged) {
  if (c->tiktoken) {
    uint32_t len = b->end - a->start;
    const unsigned char *p = c->bytes + a->start;
    uint32_t id = len == 2 ? c->vocab->pair_id[p[0] << 8 | p[1]] : cb__vocab_find(c->vocab, p, len);
    *merged = id;
    return id;
  }
  const cb__pair_slot *s = cb__pairmap_find(c->pairs, a->id, b->id);
  if (!s) {
    *merged = CB__TOK_NONE;
    return CB__TOK_NONE;
  }
  *merged = s->id;
  return s->rank;
}

static void ensure_parts(cb__scratch *s, size_t n) {
  if (n <= s->parts_cap) return;
  size_t cap = s->parts_cap ? s->parts_cap : 256;
  while (cap < n) cap *= 2;
  s->parts = cb_reallocarray(s->parts, cap, sizeof *s->parts);
  s->parts_cap = cap;
}

static void merge_small(const merge_ctx *c, cb__part *parts, size_t m, cb_tok_ids *out) {
  for (size_t i = 0; i + 1 < m; i++) parts[i].rank = pair_rank(c, &parts[i], &parts[i + 1], &parts[i].merge_id);
  parts[m - 1].rank = CB__TOK_NONE;
  while (m > 1) {
    uint32_t best = CB__TOK_NONE;
    size_t bi = 0;
    for (size_t i = 0; i + 1 < m; i++)
      if (parts[i].rank < best) {
        best = parts[i].rank;
        bi = i;
      }
    if (best == CB__TOK_NONE) break;
    parts[bi].end = parts[bi + 1].end;
    parts[bi].id = parts[bi].merge_id;
    memmove(&parts[bi + 1], &parts[bi + 2], (m - bi - 2) * sizeof *parts);
    m--;
    if (bi > 0) parts[bi - 1].rank = pair_rank(c, &parts[bi - 1], &parts[bi], &parts[bi - 1].merge_id);
    parts[bi].rank = bi + 1 < m ? pair_rank(c, &parts[bi], &parts[bi + 1], &parts[bi].merge_id)
                                : CB__TOK_NONE;
  }
  for (size_t i = 0; i < m; i++) cb__ids_push(out, parts[i].id);
}

/* ---- the heap variant ------------------------------------------------------------ */

static void heap_push(cb__scratch *s, size_t *n, cb__heap_entry e) {
  if (*n == s->heap_cap) {
    s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 256;
    s->heap = cb_reallocarray(s->heap, s->heap_cap, sizeof *s->heap);
  }
  cb__heap_entry *h = s->heap;
  size_t i = (*n)++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h[p].key <= e.key) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = e;
}

static cb__heap_entry heap_pop(cb__scratch *s, size_t *n) {
  cb__heap_entry *h = s->heap;
  cb__heap_entry top = h[0], last = h[--(*n)];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= *n) break;
    size_t m = l + 1 < *n && h[l + 1].key < h[l].key ? l + 1 : l;
    if (last.key <= h[m].key) break;
    h[i] = h[m];
    i = m;
  }
  h[i] = last;
  return top;
}

static void push_pair(const merge_ctx *c, cb__scratch *s, size_t *hn, uint32_t i) {
  cb__part *a = &s->parts[i];
  if (a->next < 0) {
    a->rank = CB__TOK_NONE;
    return;
  }
  a->rank = pair_rank(c, a, &s->parts[a->next], &a->merge_id);
  if (a->rank == CB__TOK_NONE) return;
  cb__heap_entry e = {(uint64_t)a->rank << 32 | a->start, i, a->gen};
  heap_push(s, hn, e);
}

static void merge_heap(const merge_ctx *c, cb__scratch *s, size_t m, cb_tok_ids *out) {
  cb__part *parts = s->parts;
  for (size_t i = 0; i < m; i++) {
    parts[i].prev = (int32_t)i - 1;
    parts[i].next = i + 1 < m ? (int32_t)i + 1 : -1;
    parts[i].gen = 0;
  }
  size_t hn = 0;
  for (size_t i = 0; i + 1 < m; i++) push_pair(c, s, &hn, (uint32_t)i);
  while (hn) {
    cb__heap_entry e = heap_pop(s, &hn);
    cb__part *a = &s->parts[e.part];
    if (a->id == CB__TOK_NONE || a->gen != e.gen || a->next < 0) continue;
    cb__part *b = &s->parts[a->next];
    a->end = b->end;
    a->id = a->merge_id;
    a->next = b->next;
    if (b->next >= 0) s->parts[b->next].prev = (int32_t)e.part;
    b->id = CB__TOK_NONE;
    a->gen++;
    push_pair(c, s, &hn, e.part);
    if (a->prev >= 0) {
      s->parts[a->prev].gen++;
      push_pair(c, s, &hn, (uint32_t)a->prev);
    }
  }
  for (int32_t i = 0; i >= 0; i = s->parts[i].next) cb__ids_push(out, s->parts[i].id);
}

static void merge_parts(const merge_ctx *c, cb__scratch *s, size_t m, cb_tok_ids *out) {
  if (m == 0) return;
  if (m <= cb__bpe_small_max) merge_small(c, s->parts, m, out);
  else merge_heap(c, s, m, out);
}

void cb__bpe_tiktoken(const cb__vocab *v, const unsigned char *p, size_t n, cb__scratch *s,
                      cb_tok_ids *out) {
  if (n == 0) return;
  if (n == 1) {
    cb__ids_push(out, v->byte_id[p[0]]);
    return;
  }
  uint32_t id = cb__vocab_find(v, p, n);
  if (id != CB__TOK_NONE) {
    cb__ids_push(out, id);
    return;
  }
  ensure_parts(s, n);
  for (size_t i = 0; i < n; i++) {
    s->parts[i].start = (uint32_t)i;
    s->parts[i].end = (uint32_t)i + 1;
    s->parts[i].id = v->byte_id[p[i]];
  }
  merge_ctx c = {v, NULL, p, 1};
  merge_parts(&c, s, n, out);
}

void cb__bpe_hf(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                cb_tok_ids *out) {
  if (n == 0) return;
  const cb__vocab *v = &tok->vocab;
  if (tok->ignore_merges) {
    uint32_t id = cb__vocab_find(v, p, n);
    if (id != CB__TOK_NONE) {
      cb__ids_push(out, id);
      return;
    }
  }
  ensure_parts(s, n); /* at most one symbol per byte */
  size_t m = 0;
  int last_unk = 0;
  for (size_t i = 0; i < n;) {
    size_t clen = 1;
    uint32_t id;
    if (tok->byte_level) id = v->byte_id[p[i]];
    else {
      cb__utf8_decode(p + i, &clen);
      id = cb__vocab_find(v, p + i, clen);
    }
    if (id != CB__TOK_NONE) {
      s->parts[m++] = (cb__part){(uint32_t)i, (uint32_t)(i + clen), id, 0, 0, 0, 0, 0};
      last_unk = 0;
    } else {
      int done = 0;
      if (tok->byte_fallback) {
        done = 1;
        for (size_t k = 0; k < clen; k++)
          if (tok->fallback_id[p[i + k]] == CB__TOK_NONE) done = 0;
        if (done)
          for (size_t k = 0; k < clen; k++)
            s->parts[m++] = (cb__part){(uint32_t)(i + k), (uint32_t)(i + k + 1),
                                       tok->fallback_id[p[i + k]], 0, 0, 0, 0, 0};
        if (done) last_unk = 0;
      }
      if (!done && tok->unk_id != CB__TOK_NONE) {
        if (tok->fuse_unk && last_unk) s->parts[m - 1].end = (uint32_t)(i + clen);
        else s->parts[m++] = (cb__part){(uint32_t)i, (uint32_t)(i + clen), tok->unk_id, 0, 0, 0, 0, 0};
        last_unk = 1;
      }
      /* no unk token: the character is dropped, as tokenizers does */
    }
    i += clen;
  }
  merge_ctx c = {v, &tok->pairs, p, 0};
  merge_parts(&c, s, m, out);
}
