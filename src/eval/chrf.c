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
#include "eval_text.h"
#include "ngram.h"

#define MAX_CHAR_ORDER 32
#define MAX_WORD_ORDER 8

typedef struct chrf {
  long char_order, word_order, beta;
  int lowercase, whitespace, eps_smoothing;
  cb__eval_vocab vocab;
  cb__trie chars, words;
  cb_buf lower;
  uint32_t *ids[2]; /* the segment's code points, its words' ids */
  size_t ids_cap[2];
  double *best, *cur; /* statistics of the best reference so far, of this one */
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
  cb__trie_free(&c->chars);
  cb__trie_free(&c->words);
  cb_buf_free(&c->lower);
  cb_free(c->ids[0]);
  cb_free(c->ids[1]);
  cb_free(c->best);
  cb_free(c->cur);
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
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    unsigned char b = (unsigned char)s[i];
    if (b < 0x80) { /* ASCII: whitespace inline */
      if (c->whitespace || !cb__eval_ascii_space(b)) push_id(c, 0, &k, b);
      i++;
      continue;
    }
    size_t sp = c->whitespace ? 0 : cb__eval_space_len(s + i, n - i);
    if (sp) {
      i += sp;
      continue;
    }
    size_t l;
    push_id(c, 0, &k, cb__eval_decode(s + i, n - i, &l));
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

/* The hypothesis's n-grams of orders 1..max counted into t (->hyp); per order,
 * their number into counts[]. */
static void count_hyp(cb__trie *t, const uint32_t *ids, size_t len, long max, double *counts) {
  for (long n = 1; n <= max; n++) counts[n - 1] = len >= (size_t)n ? (double)(len - (size_t)n + 1) : 0;
  for (size_t i = 0; i < len; i++) {
    uint32_t node = 0;
    for (size_t n = 1; n <= (size_t)max && i + n <= len; n++) {
      node = cb__trie_child(t, node, ids[i + n - 1], 1);
      t->hyp[node]++;
    }
  }
}

/* One reference's [hyp, ref, match] per order against the hypothesis in t
 * (chrf.py _get_match_statistics): match grows by one each time the reference's count
 * of an n-gram reaches one it still has in the hypothesis. */
static void ref_stats(cb__trie *t, uint32_t mark, const uint32_t *ids, size_t len, long max,
                      const double *hyp_counts, double *out) {
  double match[MAX_CHAR_ORDER] = {0};
  for (size_t i = 0; i < len; i++) {
    uint32_t node = 0;
    for (size_t n = 1; n <= (size_t)max && i + n <= len; n++) {
      /* Only n-grams the hypothesis has can match, and when it lacks this one it lacks
       * every longer one starting here too. */
      node = cb__trie_child(t, node, ids[i + n - 1], 0);
      if (!node) break;
      if (t->mark[node] != mark) {
        t->mark[node] = mark;
        t->cur[node] = 0;
      }
      if (++t->cur[node] <= t->hyp[node]) match[n - 1]++;
    }
  }
  for (long n = 1; n <= max; n++) {
    double n_ref = len >= (size_t)n ? (double)(len - (size_t)n + 1) : 0;
    /* "Don't count hits if no reference exists for that n-gram" */
    out[3 * (n - 1)] = n_ref > 0 ? hyp_counts[n - 1] : 0;
    out[3 * (n - 1) + 1] = n_ref;
    out[3 * (n - 1) + 2] = match[n - 1];
  }
}

/* chrf.py _compute_segment_statistics: the first reference with the highest F. */
static cb_status chrf_segment(void *state, const cb_eval_segment *seg, double *stats,
                              cb_error *err) {
  (void)err;
  chrf *c = state;
  size_t k = chrf_n_stats(c);
  cb__trie_reset(&c->chars);
  cb__trie_reset(&c->words);
  size_t nc, nw;
  double hyp_chars[MAX_CHAR_ORDER], hyp_words[MAX_WORD_ORDER];
  segment_ids(c, &seg->hyp, &nc, &nw);
  count_hyp(&c->chars, c->ids[0], nc, c->char_order, hyp_chars);
  count_hyp(&c->words, c->ids[1], nw, c->word_order, hyp_words);
  double best_f = -1.0;
  for (size_t r = 0; r < seg->nrefs; r++) {
    segment_ids(c, &seg->refs[r], &nc, &nw);
    ref_stats(&c->chars, (uint32_t)r + 1, c->ids[0], nc, c->char_order, hyp_chars, c->cur);
    ref_stats(&c->words, (uint32_t)r + 1, c->ids[1], nw, c->word_order, hyp_words,
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
