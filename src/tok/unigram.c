/*
 * unigram.c - the Unigram model of tokenizer.json (SentencePiece unigram: T5, XLM-R,
 * ALBERT conversions), as Hugging Face tokenizers' models/unigram (encode_optimized)
 * does it.
 *
 * Viterbi over the piece: at each character boundary, every vocab piece that starts
 * there (shortest first) offers score(piece) + best score so far to the node where it
 * ends; a strictly better score wins, so on a tie the shorter piece found first stays.
 * When no piece is exactly the one character there, the unknown token offers
 * min_score - 10 (kUnkPenalty) for that character. The best path is read back from
 * the end; adjacent unknown pieces are fused into one (the model's fuse_unk is always
 * on). A piece of the path that is not a vocab entry (a fused unknown run) becomes, with
 * byte_fallback, its bytes as <0xXX> tokens when all of them exist, else the unknown id.
 * Scores are doubles added in the same order as the reference, so ties break alike.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

#define UNK_PENALTY 10.0

static void push_piece(const cb_tok *tok, const unsigned char *p, size_t n, cb_tok_ids *out) {
  uint32_t id = cb__vocab_find(&tok->vocab, p, n);
  if (id != CB__TOK_NONE) {
    cb__ids_push(out, id);
    return;
  }
  if (tok->byte_fallback) {
    size_t i = 0;
    while (i < n && tok->fallback_id[p[i]] != CB__TOK_NONE) i++;
    if (i == n) {
      for (i = 0; i < n; i++) cb__ids_push(out, tok->fallback_id[p[i]]);
      return;
    }
  }
  cb__ids_push(out, tok->unk_id);
}

void cb__unigram(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                 cb_tok_ids *out) {
  if (n + 1 > s->nodes_cap) {
    s->nodes_cap = n + 1 > 2 * s->nodes_cap ? n + 1 : 2 * s->nodes_cap;
    s->nodes = cb_reallocarray(s->nodes, s->nodes_cap, sizeof *s->nodes);
  }
  cb__uni_node *best = s->nodes;
  for (size_t i = 0; i <= n; i++) best[i].start = -1;
  best[0].score = 0;
  double unk_score = tok->min_score - UNK_PENALTY;
  for (size_t at = 0; at < n;) {
    size_t clen;
    cb__utf8_decode(p + at, &clen);
    double here = best[at].score;
    int single = 0;
    size_t max = n - at < tok->max_token_len ? n - at : tok->max_token_len;
    for (size_t len = 1; len <= max; len++) {
      if (at + len < n && (p[at + len] & 0xC0) == 0x80) continue; /* pieces are whole chars */
      uint32_t id = cb__vocab_find(&tok->vocab, p + at, len);
      if (id == CB__TOK_NONE) continue;
      cb__uni_node *t = &best[at + len];
      double cand = tok->scores[id] + here;
      if (t->start < 0 || cand > t->score) {
        t->score = cand;
        t->start = (int64_t)at;
        t->id = id;
      }
      if (len == clen) single = 1;
    }
    if (!single) {
      cb__uni_node *t = &best[at + clen];
      double cand = unk_score + here;
      if (t->start < 0 || cand > t->score) {
        t->score = cand;
        t->start = (int64_t)at;
        t->id = tok->unk_id;
      }
    }
    at += clen;
  }
  /* read the path back from the end, fusing unknown runs: the ends, last first */
  cb_tok_ids *ends = &s->path;
  ends->len = 0;
  for (size_t end = n; end > 0;) {
    size_t st = (size_t)best[end].start;
    if (best[end].id == tok->unk_id)
      while (st > 0 && best[st].id == tok->unk_id) st = (size_t)best[st].start;
    cb__ids_push(ends, (uint32_t)end);
    end = st;
  }
  for (size_t k = ends->len; k-- > 0;) {
    size_t b = ends->ids[k], a = k + 1 < ends->len ? ends->ids[k + 1] : 0;
    if (best[b].id == tok->unk_id) push_piece(tok, p + a, b - a, out);
    else cb__ids_push(out, best[b].id);
  }
}
