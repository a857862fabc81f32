/*
 * ter.c - TER, translation edit rate (Snover et al., 2006), exactly as sacrebleu 2.6.0
 * computes it (sacrebleu/metrics/ter.py and lib_ter.py, its reimplementation of
 * Tercom): per reference, greedy block shifts (at most 10 words, at most 50 positions
 * apart, ranked by edit-distance gain, then length, then the earliest source, then the
 * earliest target; at most 1000 candidates evaluated per segment and reference) while
 * a shift lowers the word edit distance, which is computed with a beam of 25 cells
 * around the length-scaled diagonal. A segment's statistics: the fewest edits over its
 * references and their average length; the score is 100 x edits / length summed over
 * the corpus.
 *
 * Statistics vector: [edits, average reference length].
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "eval_text.h"
#include "ngram.h"
#include "ter_tok.h"

/* lib_ter.py's limits. */
#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM_WIDTH 25
#define MAX_SHIFT_CANDIDATES 1000
#define INF (INT_MAX / 2) /* lib_ter's _INT_INFINITY: above any real cost, INF + 1 safe */

enum { OP_NOP = ' ', OP_SUB = 's', OP_INS = 'i', OP_DEL = 'd', OP_UNDEF = 'x' };

/* The edit-distance matrix of one hypothesis length: row i holds the cells
 * [lo[i], hi[i]) of its beam (row 0 and the last row all of them); any other cell
 * is (INF, undefined), as the reference's rows of infinities are. */
typedef struct band {
  size_t nh, nr;
  size_t *lo, *hi, *at; /* per row: beam and offset into the cells */
  size_t ncells;
} band;

typedef struct matrix {
  int *cost;
  char *op;
} matrix;

typedef struct ter {
  cb__ter_tok_opts tok;
  cb__eval_vocab vocab;
  cb_buf a, b, words;
  uint32_t *ids;
  size_t ids_len, ids_cap;
  band band;
  matrix base, scratch;
  size_t cells_cap;
  uint32_t *shifted, *best_words, *work;
  size_t words_cap;
  int *align;
  char *hyp_err, *ref_err, *trace;
  size_t aux_cap;
} ter;

static const cb_eval_option_def TER_OPTIONS[] = {
    {"ter-case-sensitive", NULL, "TER: keep case (TER lowercases by default)"},
    {"ter-normalized", NULL, "TER: Tercom's normalisation (punctuation, entities, ...)"},
    {"ter-no-punct", NULL, "TER: remove punctuation"},
    {"ter-asian-support", NULL, "TER: with --ter-normalized/--ter-no-punct, CJK handling"},
    {NULL, NULL, NULL},
};

static cb_status ter_create(cb_eval_options *o, void **state, cb_error *err) {
  (void)err;
  ter *t = cb_calloc(1, sizeof *t);
  t->tok.case_sensitive = cb_eval_opt_flag(o, "ter-case-sensitive");
  t->tok.normalized = cb_eval_opt_flag(o, "ter-normalized");
  t->tok.no_punct = cb_eval_opt_flag(o, "ter-no-punct");
  t->tok.asian_support = cb_eval_opt_flag(o, "ter-asian-support");
  *state = t;
  return CB_OK;
}

static void ter_destroy(void *state) {
  ter *t = state;
  if (!t) return;
  cb__eval_vocab_free(&t->vocab);
  cb_buf_free(&t->a);
  cb_buf_free(&t->b);
  cb_buf_free(&t->words);
  cb_free(t->ids);
  cb_free(t->band.lo);
  cb_free(t->band.hi);
  cb_free(t->band.at);
  cb_free(t->base.cost);
  cb_free(t->base.op);
  cb_free(t->scratch.cost);
  cb_free(t->scratch.op);
  cb_free(t->shifted);
  cb_free(t->best_words);
  cb_free(t->work);
  cb_free(t->align);
  cb_free(t->hyp_err);
  cb_free(t->ref_err);
  cb_free(t->trace);
  cb_free(t);
}

static size_t ter_n_stats(const void *state) {
  (void)state;
  return 2;
}

/* _preprocess_segment (rstrip, tokenize) and split: the words' ids appended to
 * t->ids; returns the offset of the first. */
static size_t words(ter *t, const cb_eval_text *x, size_t *count) {
  size_t n = cb__eval_rstrip(x->s, x->n);
  cb__ter_tokenize(&t->tok, x->s, n, &t->a, &t->b, &t->words);
  size_t off = t->ids_len, k = 0;
  const char *p = t->words.data;
  for (size_t i = 0; i < t->words.len;) {
    const char *sp = memchr(p + i, ' ', t->words.len - i);
    size_t end = sp ? (size_t)(sp - p) : t->words.len;
    if (t->ids_len == t->ids_cap) {
      t->ids_cap = t->ids_cap ? t->ids_cap * 2 : 256;
      t->ids = cb_reallocarray(t->ids, t->ids_cap, sizeof *t->ids);
    }
    t->ids[t->ids_len++] = cb__eval_vocab_id(&t->vocab, p + i, end - i);
    k++;
    i = end + 1;
  }
  *count = k;
  return off;
}

/* The beams of BeamEditDistance._edit_distance for these lengths. */
static void band_init(ter *t, size_t nh, size_t nr) {
  band *b = &t->band;
  b->nh = nh, b->nr = nr;
  b->lo = cb_reallocarray(b->lo, nh + 1, sizeof *b->lo);
  b->hi = cb_reallocarray(b->hi, nh + 1, sizeof *b->hi);
  b->at = cb_reallocarray(b->at, nh + 1, sizeof *b->at);
  double ratio = nh ? (double)nr / (double)nh : 1;
  long beam = BEAM_WIDTH < ratio / 2 ? (long)ceil(ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
  b->lo[0] = 0, b->hi[0] = nr + 1, b->at[0] = 0;
  size_t cells = nr + 1;
  for (size_t i = 1; i <= nh; i++) {
    long diag = (long)floor((double)i * ratio);
    long lo = diag - beam < 0 ? 0 : diag - beam;
    long hi = diag + beam < (long)nr + 1 ? diag + beam : (long)nr + 1;
    if (i == nh) hi = (long)nr + 1;
    if (hi < lo) hi = lo;
    b->lo[i] = (size_t)lo, b->hi[i] = (size_t)hi, b->at[i] = cells;
    cells += (size_t)(hi - lo);
  }
  b->ncells = cells;
  if (cells > t->cells_cap) {
    t->cells_cap = cells * 2;
    t->base.cost = cb_reallocarray(t->base.cost, t->cells_cap, sizeof *t->base.cost);
    t->base.op = cb_reallocarray(t->base.op, t->cells_cap, 1);
    t->scratch.cost = cb_reallocarray(t->scratch.cost, t->cells_cap, sizeof *t->scratch.cost);
    t->scratch.op = cb_reallocarray(t->scratch.op, t->cells_cap, 1);
  }
  for (size_t j = 0; j <= nr; j++) { /* the first row: inserting the reference */
    t->base.cost[j] = t->scratch.cost[j] = (int)j;
    t->base.op[j] = t->scratch.op[j] = OP_INS;
  }
}

/* Cell (i, j) of m, whose rows below `from` are base's (the shared prefix). */
static inline void cell(const ter *t, const matrix *m, size_t from, size_t i, size_t j, int *cost,
                        char *op) {
  const band *b = &t->band;
  if (j < b->lo[i] || j >= b->hi[i]) {
    *cost = INF;
    *op = OP_UNDEF;
    return;
  }
  const matrix *src = i < from ? &t->base : m;
  size_t k = b->at[i] + j - b->lo[i];
  *cost = src->cost[k];
  *op = src->op[k];
}

/* Rows from..nh of the distance between hyp and ref into m (rows below `from` are
 * base's); returns the distance. BeamEditDistance._edit_distance. */
static int edit_distance(ter *t, matrix *m, size_t from, const uint32_t *hyp, const uint32_t *ref) {
  const band *b = &t->band;
  for (size_t i = from; i <= b->nh; i++) {
    if (i == 0) continue;
    for (size_t j = b->lo[i]; j < b->hi[i]; j++) {
      int best = INF, c;
      char best_op = OP_UNDEF, o;
      if (j == 0) {
        cell(t, m, from, i - 1, 0, &c, &o);
        best = c + 1;
        best_op = OP_DEL;
      } else {
        /* Tercom's preference: no-op/substitution, then (flipped) deletion, then
         * insertion; a later one wins only when strictly cheaper. */
        int sub = hyp[i - 1] == ref[j - 1] ? 0 : 1;
        cell(t, m, from, i - 1, j - 1, &c, &o);
        if (best > c + sub) best = c + sub, best_op = sub ? OP_SUB : OP_NOP;
        cell(t, m, from, i - 1, j, &c, &o);
        if (best > c + 1) best = c + 1, best_op = OP_DEL;
        cell(t, m, from, i, j - 1, &c, &o);
        if (best > c + 1) best = c + 1, best_op = OP_INS;
      }
      size_t k = b->at[i] + j - b->lo[i];
      m->cost[k] = best;
      m->op[k] = best_op;
    }
  }
  int c;
  char o;
  cell(t, m, from, b->nh, b->nr, &c, &o);
  return c;
}

static void aux_reserve(ter *t, size_t n) {
  if (n <= t->aux_cap) return;
  t->aux_cap = n * 2;
  t->align = cb_reallocarray(t->align, t->aux_cap, sizeof *t->align);
  t->hyp_err = cb_reallocarray(t->hyp_err, t->aux_cap, 1);
  t->ref_err = cb_reallocarray(t->ref_err, t->aux_cap, 1);
  t->trace = cb_reallocarray(t->trace, t->aux_cap, 1);
}

/* The trace of base (hypothesis -> reference) flipped (insertions <-> deletions) and
 * turned into the alignment and error marks: _flip_trace and trace_to_alignment. */
static void alignment(ter *t) {
  const band *b = &t->band;
  size_t i = b->nh, j = b->nr, n = 0;
  aux_reserve(t, b->nh + b->nr + 1);
  while (i > 0 || j > 0) {
    int c;
    char op;
    cell(t, &t->base, 0, i, j, &c, &op);
    if (op == OP_SUB || op == OP_NOP) i--, j--;
    else if (op == OP_INS) j--;
    else if (op == OP_DEL) i--;
    else break; /* an undefined cell: the reference raises here; never seen */
    t->trace[n++] = op;
  }
  /* Every reference word gets an alignment from the trace; -1 as well stands for one
   * the trace did not reach (an undefined cell, where the reference raises). */
  for (size_t k = 0; k < b->nr; k++) t->align[k] = -1, t->ref_err[k] = 0;
  for (size_t k = 0; k < b->nh; k++) t->hyp_err[k] = 0;
  long ph = -1, pr = -1;
  size_t nhe = 0, nre = 0;
  for (size_t k = n; k-- > 0;) {
    char op = t->trace[k];
    op = op == OP_INS ? OP_DEL : op == OP_DEL ? OP_INS : op;
    if (op == OP_NOP || op == OP_SUB) {
      ph++, pr++;
      t->align[pr] = (int)ph;
      t->hyp_err[nhe++] = op == OP_SUB;
      t->ref_err[nre++] = op == OP_SUB;
    } else if (op == OP_INS) {
      ph++;
      t->hyp_err[nhe++] = 1;
    } else {
      pr++;
      t->align[pr] = (int)ph;
      t->ref_err[nre++] = 1;
    }
  }
}

/* _perform_shift: words[start, start+len) moved before position target. */
static void perform_shift(const uint32_t *w, size_t n, size_t start, size_t len, size_t target,
                          uint32_t *out) {
  size_t k = 0;
#define COPY(a, b)                                        \
  for (size_t x_ = (a); x_ < (b) && x_ < n; x_++) out[k++] = w[x_];
  if (target < start) {
    COPY(0, target) COPY(start, start + len) COPY(target, start) COPY(start + len, n)
  } else if (target > start + len) {
    COPY(0, start) COPY(start + len, target) COPY(start, start + len) COPY(target, n)
  } else {
    COPY(0, start) COPY(start + len, len + target) COPY(start, start + len) COPY(len + target, n)
  }
#undef COPY
}

static int sum_err(const char *e, size_t from, size_t len, size_t n) {
  int s = 0;
  for (size_t i = from; i < from + len && i < n; i++) s += e[i];
  return s;
}

/* _shift: the best shift of hyp (into t->best_words), its gain; *checked counts the
 * candidates evaluated. */
static int best_shift(ter *t, const uint32_t *hyp, const uint32_t *ref, long *checked, int *found) {
  const band *b = &t->band;
  size_t nh = b->nh, nr = b->nr;
  int pre = edit_distance(t, &t->base, 0, hyp, ref);
  alignment(t);
  int have = 0;
  long best[4] = {0, 0, 0, 0}; /* gain, length, -start_h, -target */
  for (size_t sh = 0; sh < nh; sh++) {
    for (size_t sr = 0; sr < nr; sr++) {
      if ((sr > sh ? sr - sh : sh - sr) > MAX_SHIFT_DIST) continue;
      /* _find_shifted_pairs: every length of the common run at (sh, sr) */
      for (size_t len = 1; len <= MAX_SHIFT_SIZE && hyp[sh + len - 1] == ref[sr + len - 1]; len++) {
        if (sum_err(t->hyp_err, sh, len, nh) && sum_err(t->ref_err, sr, len, nr) &&
            !((size_t)t->align[sr] >= sh && (size_t)t->align[sr] < sh + len && t->align[sr] >= 0)) {
          long prev = -1;
          for (long off = -1; off < (long)len; off++) {
            long idx = (long)sr + off == -1 ? 0 : t->align[(long)sr + off] + 1;
            if (idx == prev) continue;
            prev = idx;
            perform_shift(hyp, nh, sh, len, (size_t)idx, t->shifted);
            size_t from = sh < (size_t)idx ? sh : (size_t)idx; /* rows before it are unchanged */
            long cand[4] = {pre - edit_distance(t, &t->scratch, from + 1, t->shifted, ref), (long)len,
                            -(long)sh, -idx};
            (*checked)++;
            int better = !have;
            for (int q = 0; q < 4 && !better; q++) {
              if (cand[q] != best[q]) {
                better = cand[q] > best[q];
                break;
              }
            }
            if (better) {
              memcpy(best, cand, sizeof best);
              memcpy(t->best_words, t->shifted, nh * sizeof *t->shifted);
              have = 1;
            }
          }
          if (*checked >= MAX_SHIFT_CANDIDATES) goto done;
        }
        if (nh == sh + len || nr == sr + len) break;
      }
    }
  }
done:
  *found = have;
  return have ? (int)best[0] : 0;
}

/* translation_edit_rate: edits (shifts + edit distance after them). */
static long edits(ter *t, const uint32_t *hyp0, size_t nh, const uint32_t *ref, size_t nr) {
  if (nr == 0) return (long)nh;
  band_init(t, nh, nr);
  if (nh + 1 > t->words_cap) {
    t->words_cap = (nh + 1) * 2;
    t->shifted = cb_reallocarray(t->shifted, t->words_cap, sizeof *t->shifted);
    t->best_words = cb_reallocarray(t->best_words, t->words_cap, sizeof *t->best_words);
    t->work = cb_reallocarray(t->work, t->words_cap, sizeof *t->work);
  }
  if (nh) memcpy(t->work, hyp0, nh * sizeof *hyp0);
  long shifts = 0, checked = 0;
  for (;;) {
    int found;
    int delta = best_shift(t, t->work, ref, &checked, &found);
    if (checked >= MAX_SHIFT_CANDIDATES) break;
    if (delta <= 0) break;
    shifts++;
    memcpy(t->work, t->best_words, nh * sizeof *t->work);
  }
  return shifts + edit_distance(t, &t->base, 0, t->work, ref);
}

/* TER._compute_segment_statistics: the fewest edits over the references, and the
 * references' average length. */
static cb_status ter_segment(void *state, const cb_eval_segment *seg, double *stats,
                             cb_error *err) {
  (void)err;
  ter *t = state;
  t->ids_len = 0;
  size_t nh, nr;
  size_t hoff = words(t, &seg->hyp, &nh);
  long best = -1;
  size_t total_len = 0;
  for (size_t r = 0; r < seg->nrefs; r++) {
    size_t roff = words(t, &seg->refs[r], &nr);
    long e = edits(t, t->ids + hoff, nh, t->ids + roff, nr);
    total_len += nr;
    if (best < 0 || e < best) best = e;
  }
  stats[0] = (double)best;
  stats[1] = (double)total_len / (double)seg->nrefs;
  return CB_OK;
}

/* TER._compute_score_from_stats, TERSignature. */
static void ter_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                       cb_eval_result *out) {
  const ter *t = state;
  double edits_sum = stats[0], len = stats[1], score;
  if (len > 0) score = edits_sum / len;
  else if (edits_sum > 0) score = 1.0;
  else score = 0.0;
  out->score = 100 * score;
  snprintf(out->display, sizeof out->display, "TER");
  cb_buf *s = &out->signature;
  cb_eval_sig_head(sig, s);
  cb_buf_appendf(s, "case:%s|tok:tercom|norm:%s|punct:%s|asian:%s|version:%s",
                 t->tok.case_sensitive ? "mixed" : "lc", t->tok.normalized ? "yes" : "no",
                 t->tok.no_punct ? "no" : "yes", t->tok.asian_support ? "yes" : "no",
                 CB_EVAL_SACREBLEU_VERSION);
  out->stats = json_pack("{s:f, s:f}", "edits", edits_sum, "ref_len", len);
}

const cb_eval_metric cb_eval_metric_ter = {
    .name = "ter",
    .options = TER_OPTIONS,
    .create = ter_create,
    .destroy = ter_destroy,
    .n_stats = ter_n_stats,
    .segment = ter_segment,
    .result = ter_result,
};
