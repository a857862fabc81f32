/*
 * chrf.c - chrF and chrF++ (Popović 2015, 2017) exactly as sacrebleu 2.6.0 computes
 * them (sacrebleu/metrics/chrf.py, metrics/helpers.py): character n-grams of the
 * segment without whitespace (orders 1..char order), and for chrF++ word n-grams
 * (orders 1..word order) of its words with one punctuation mark split off each end;
 * per segment the statistics of the reference with the best F-score; the corpus
 * score from the summed statistics with sacrebleu's effective-order averaging of
 * precision and recall, or chrF++.py's eps smoothing (--eps-smoothing).
 *
 * Statistics vector: [hyp, ref, match] for each order, character orders first.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "chrf_chars.h"
#include "eval_text.h"
#include "ngram.h"

#define MAX_CHAR_ORDER 32
#define MAX_WORD_ORDER 8

typedef struct chrf {
  long char_order, word_order, beta;
  int lowercase, whitespace, eps_smoothing;
  cb__eval_vocab vocab;
  cb__chrf_chars packed; /* character n-grams, when the hypothesis' pack (chrf_chars.h) */
  cb__trie chars, words; /* character n-grams otherwise; word n-grams */
  cb_buf lower;
  uint32_t *ids[2]; /* the segment's code points, its words' ids */
  size_t ids_cap[2];
  double *best, *cur; /* statistics of the best reference so far, of this one */
  double *match;      /* per reference: its matches per order (character orders first) */
  size_t *ref_lens;   /* per reference: its number of characters, of words */
  size_t refs_cap;
} chrf;

static const cb_eval_option_def CHRF_OPTIONS[] = {
    {"char-order", "N", "chrF character n-gram order [6]"},
    {"word-order", "N", "chrF word n-gram order [0 for chrf, 2 for chrf++]"},
    {"beta", "N", "chrF: weight of recall over precision [2]"},
    {"whitespace", NULL, "chrF: keep whitespace in character n-grams"},
    {"eps-smoothing", NULL, "chrF: chrF++.py's eps smoothing instead of effective order"},
    {"lowercase", NULL, "lowercase hypotheses and references first (Python's str.lower)"},
    {NULL, NULL, NULL},
};

static cb_status create(cb_eval_options *o, long word_order, void **state, cb_error *err) {
  chrf *c = cb_calloc(1, sizeof *c);
  c->char_order = 6;
  c->word_order = word_order;
  c->beta = 2;
  cb_status st = cb_eval_opt_long(o, "char-order", 0, MAX_CHAR_ORDER, &c->char_order, err);
  if (!st) st = cb_eval_opt_long(o, "word-order", 0, MAX_WORD_ORDER, &c->word_order, err);
  if (!st) st = cb_eval_opt_long(o, "beta", 0, 1000, &c->beta, err);
  if (!st && c->char_order + c->word_order == 0)
    st = cb_error_set(err, CB_ERR_INVALID, "--char-order and --word-order are both 0");
  c->whitespace = cb_eval_opt_flag(o, "whitespace");
  c->eps_smoothing = cb_eval_opt_flag(o, "eps-smoothing");
  c->lowercase = cb_eval_opt_flag(o, "lowercase");
  if (st) {
    cb_free(c);
    return st;
  }
  size_t k = 3 * (size_t)(c->char_order + c->word_order);
  c->best = cb_calloc(k, sizeof *c->best);
  c->cur = cb_calloc(k, sizeof *c->cur);
  *state = c;
  return CB_OK;
}

static cb_status chrf_create(cb_eval_options *o, void **state, cb_error *err) {
  return create(o, 0, state, err);
}

static cb_status chrfpp_create(cb_eval_options *o, void **state, cb_error *err) {
  return create(o, 2, state, err);
}

static void chrf_destroy(void *state) {
  chrf *c = state;
  if (!c) return;
  cb__eval_vocab_free(&c->vocab);
  cb__chrf_chars_free(&c->packed);
  cb__trie_free(&c->chars);
  cb__trie_free(&c->words);
  cb_buf_free(&c->lower);
  cb_free(c->ids[0]);
  cb_free(c->ids[1]);
  cb_free(c->best);
  cb_free(c->cur);
  cb_free(c->match);
  cb_free(c->ref_lens);
  cb_free(c);
}

static size_t chrf_n_stats(const void *state) {
  const chrf *c = state;
  return 3 * (size_t)(c->char_order + c->word_order);
}

static void push_id(chrf *c, int which, size_t *n, uint32_t id) {
  if (*n == c->ids_cap[which]) {
    c->ids_cap[which] = c->ids_cap[which] ? c->ids_cap[which] * 2 : 256;
    c->ids[which] = cb_reallocarray(c->ids[which], c->ids_cap[which], sizeof *c->ids[which]);
  }
  c->ids[which][(*n)++] = id;
}

/* string.punctuation, the set chrf.py's _remove_punctuation splits off. */
static int is_punct(unsigned char ch) {
  return ch < 0x80 && ((ch >= 0x21 && ch <= 0x2F) || (ch >= 0x3A && ch <= 0x40) ||
                       (ch >= 0x5B && ch <= 0x60) || (ch >= 0x7B && ch <= 0x7E));
}

/* The segment's code points (whitespace removed unless --whitespace: helpers.py
 * extract_all_char_ngrams) into c->ids[0], and its words (chrf.py _remove_punctuation:
 * a word of two or more characters loses a final punctuation mark, or else an initial
 * one, as a word of its own) as vocabulary ids into c->ids[1]. */
static void segment_ids(chrf *c, const cb_eval_text *t, size_t *nchars, size_t *nwords) {
  const char *s = t->s;
  size_t n = t->n;
  if (c->lowercase) {
    cb_buf_reset(&c->lower);
    cb__eval_lower_text(s, n, &c->lower);
    s = c->lower.data ? c->lower.data : "";
    n = c->lower.len;
  }
  /* A text has at most one code point per byte: room for all of them first, so the
   * loop stores without checking. */
  if (n > c->ids_cap[0]) {
    c->ids_cap[0] = n;
    cb_free(c->ids[0]);
    c->ids[0] = cb_reallocarray(NULL, n, sizeof *c->ids[0]);
  }
  uint32_t *cps = c->ids[0];
  size_t k = 0;
  /* ASCII whitespace (cb__eval_ascii_space: 0x09-0x0D, 0x1C-0x1F, ' '), one bit per
   * byte below 64, and none with --whitespace: every ASCII byte is stored, and counted
   * unless its bit is set, with no branch on the text. */
  const uint64_t drop = c->whitespace ? 0 : 0x1F0003E00ull;
  const int whitespace = c->whitespace;
  for (size_t i = 0; i < n;) {
    unsigned char b = (unsigned char)s[i];
    if (b < 0x80) {
      cps[k] = b;
      k += !((drop >> (b & 63)) & (b < 64));
      i++;
      continue;
    }
    size_t sp = whitespace ? 0 : cb__eval_space_len(s + i, n - i);
    if (sp) {
      i += sp;
      continue;
    }
    size_t l;
    cps[k++] = cb__eval_decode(s + i, n - i, &l);
    i += l;
  }
  *nchars = k;
  k = 0;
  if (c->word_order > 0) {
    size_t pos = 0, st, en;
    while (cb__eval_next_word(s, n, &pos, &st, &en)) {
      size_t first_len;
      cb__eval_decode(s + st, en - st, &first_len);
      if (first_len == en - st) { /* one character */
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + st, en - st));
      } else if (is_punct((unsigned char)s[en - 1])) {
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + st, en - 1 - st));
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + en - 1, 1));
      } else if (is_punct((unsigned char)s[st])) {
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + st, 1));
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + st + 1, en - st - 1));
      } else {
        push_id(c, 1, &k, cb__eval_vocab_id(&c->vocab, s + st, en - st));
      }
    }
  }
  *nwords = k;
}

/* chrf.py _compute_f_score. */
static double f_score(const chrf *c, const double *stats) {
  const double eps = 1e-16;
  double factor = (double)(c->beta * c->beta), score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  long order = c->char_order + c->word_order, effective = 0;
  for (long i = 0; i < order; i++) {
    double n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
    double prec = n_hyp > 0 ? n_match / n_hyp : eps;
    double rec = n_ref > 0 ? n_match / n_ref : eps;
    double denom = factor * prec + rec;
    score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      effective++;
    }
  }
  if (c->eps_smoothing) return 100 * score / (double)order;
  if (effective == 0) {
    avg_prec = avg_rec = 0.0;
  } else {
    avg_prec /= (double)effective;
    avg_rec /= (double)effective;
  }
  if (avg_prec + avg_rec == 0) return 0.0;
  score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

/* Per order, the number of n-grams of a text of len items. */
static void order_counts(size_t len, long max, double *counts) {
  for (long n = 1; n <= max; n++) counts[n - 1] = len >= (size_t)n ? (double)(len - (size_t)n + 1) : 0;
}

/* The hypothesis's n-grams of orders 1..max counted into t (->hyp). */
static void count_hyp(cb__trie *t, const uint32_t *ids, size_t len, long max) {
  for (size_t i = 0; i < len; i++) {
    uint32_t node = 0;
    for (size_t n = 1; n <= (size_t)max && i + n <= len; n++) {
      node = cb__trie_child(t, node, ids[i + n - 1], 1);
      t->count[node].hyp++;
    }
  }
}

/* One reference's matches per order against the hypothesis in t (chrf.py
 * _get_match_statistics): match grows by one each time the reference's count of an
 * n-gram reaches one it still has in the hypothesis. */
static void ref_matches(cb__trie *t, uint32_t mark, const uint32_t *ids, size_t len, long max,
                        double *match) {
  for (size_t i = 0; i < len; i++) {
    uint32_t node = 0;
    for (size_t n = 1; n <= (size_t)max && i + n <= len; n++) {
      /* Only n-grams the hypothesis has can match, and when it lacks this one it lacks
       * every longer one starting here too. */
      node = cb__trie_child(t, node, ids[i + n - 1], 0);
      if (!node) break;
      cb__trie_count *c = &t->count[node];
      if (c->mark != mark) {
        c->mark = mark;
        c->cur = 0;
      }
      if (++c->cur <= c->hyp) match[n - 1]++;
    }
  }
}

/* One reference's [hyp, ref, match] per order. */
static void ref_stats(size_t len, long max, const double *hyp_counts, const double *match, double *out) {
  for (long n = 1; n <= max; n++) {
    double n_ref = len >= (size_t)n ? (double)(len - (size_t)n + 1) : 0;
    /* "Don't count hits if no reference exists for that n-gram" */
    out[3 * (n - 1)] = n_ref > 0 ? hyp_counts[n - 1] : 0;
    out[3 * (n - 1) + 1] = n_ref;
    out[3 * (n - 1) + 2] = match[n - 1];
  }
}

/* chrf.py _compute_segment_statistics: the first reference with the highest F. The
 * packed character n-grams read every reference before the hypothesis is counted
 * (chrf_chars.h), so the references' matches are counted first, their F after. */
static cb_status chrf_segment(void *state, const cb_eval_segment *seg, double *stats,
                              cb_error *err) {
  (void)err;
  chrf *c = state;
  size_t k = chrf_n_stats(c), orders = (size_t)(c->char_order + c->word_order);
  if (!c->match || seg->nrefs > c->refs_cap) {
    c->refs_cap = seg->nrefs * 2 + 2;
    cb_free(c->match);
    cb_free(c->ref_lens);
    c->match = cb_reallocarray(NULL, c->refs_cap * orders, sizeof *c->match);
    c->ref_lens = cb_reallocarray(NULL, 2 * c->refs_cap, sizeof *c->ref_lens);
  }
  cb__trie_reset(&c->words);
  size_t nc, nw;
  double hyp_chars[MAX_CHAR_ORDER], hyp_words[MAX_WORD_ORDER];
  segment_ids(c, &seg->hyp, &nc, &nw);
  order_counts(nc, c->char_order, hyp_chars);
  order_counts(nw, c->word_order, hyp_words);
  int packed = cb__chrf_chars_hyp(&c->packed, c->ids[0], nc, c->char_order);
  if (!packed) {
    cb__trie_reset(&c->chars);
    count_hyp(&c->chars, c->ids[0], nc, c->char_order);
  }
  count_hyp(&c->words, c->ids[1], nw, c->word_order);
  memset(c->match, 0, seg->nrefs * orders * sizeof *c->match);
  for (size_t r = 0; r < seg->nrefs; r++) {
    segment_ids(c, &seg->refs[r], &nc, &nw);
    double *match = c->match + r * orders;
    uint32_t mark = (uint32_t)r + 1;
    c->ref_lens[2 * r] = nc;
    c->ref_lens[2 * r + 1] = nw;
    if (packed) cb__chrf_chars_add_ref(&c->packed, c->ids[0], nc);
    else ref_matches(&c->chars, mark, c->ids[0], nc, c->char_order, match);
    ref_matches(&c->words, mark, c->ids[1], nw, c->word_order, match + c->char_order);
  }
  if (packed) {
    cb__chrf_chars_count_hyp(&c->packed);
    for (size_t r = 0; r < seg->nrefs; r++) cb__chrf_chars_ref(&c->packed, r, c->match + r * orders);
  }
  double best_f = -1.0;
  for (size_t r = 0; r < seg->nrefs; r++) {
    const double *match = c->match + r * orders;
    ref_stats(c->ref_lens[2 * r], c->char_order, hyp_chars, match, c->cur);
    ref_stats(c->ref_lens[2 * r + 1], c->word_order, hyp_words, match + c->char_order,
              c->cur + 3 * c->char_order);
    double f = f_score(c, c->cur);
    if (f > best_f) {
      best_f = f;
      memcpy(c->best, c->cur, k * sizeof *c->best);
    }
  }
  memcpy(stats, c->best, k * sizeof *stats);
  return CB_OK;
}

static json_t *order_stats(const double *stats, long from, long count) {
  json_t *a = json_array();
  for (long i = from; i < from + count; i++)
    json_array_append_new(a, json_pack("{s:I, s:I, s:I}", "hyp", (json_int_t)stats[3 * i], "ref",
                                       (json_int_t)stats[3 * i + 1], "match", (json_int_t)stats[3 * i + 2]));
  return a;
}

/* CHRFSignature and CHRFScore (chrf.py), Signature.format (base.py). */
static void chrf_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                        cb_eval_result *out) {
  const chrf *c = state;
  out->score = f_score(c, stats);
  /* f'chrF{beta}' + '+' * word_order */
  snprintf(out->display, sizeof out->display, "chrF%ld%.*s", c->beta, (int)c->word_order, "++++++++");
  cb_buf *s = &out->signature;
  cb_eval_sig_head(sig, s);
  cb_buf_appendf(s, "case:%s|eff:%s|nc:%ld|nw:%ld|space:%s|version:%s", c->lowercase ? "lc" : "mixed",
                 c->eps_smoothing ? "no" : "yes", c->char_order, c->word_order,
                 c->whitespace ? "yes" : "no", CB_EVAL_SACREBLEU_VERSION);
  out->stats = json_pack("{s:o, s:o}", "chars", order_stats(stats, 0, c->char_order), "words",
                         order_stats(stats, c->char_order, c->word_order));
}

const cb_eval_metric cb_eval_metric_chrf = {
    .name = "chrf",
    .options = CHRF_OPTIONS,
    .create = chrf_create,
    .destroy = chrf_destroy,
    .n_stats = chrf_n_stats,
    .segment = chrf_segment,
    .result = chrf_result,
};

const cb_eval_metric cb_eval_metric_chrfpp = {
    .name = "chrf++",
    .options = CHRF_OPTIONS,
    .create = chrfpp_create,
    .destroy = chrf_destroy,
    .n_stats = chrf_n_stats,
    .segment = chrf_segment,
    .result = chrf_result,
};
