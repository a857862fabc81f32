/*
 * bleu.c - BLEU (Papineni et al., 2002) exactly as sacrebleu 2.6.0 computes it
 * (sacrebleu/metrics/bleu.py): per segment, the hypothesis length, the closest
 * reference length, and per n-gram order the clipped matches (against the maximum
 * count over the references) and the hypothesis n-grams; the score from their sums
 * with sacrebleu's smoothing (Chen & Cherry 2014, WMT: methods 1-3) and effective order.
 *
 * Statistics vector: [sys_len, ref_len, correct[0..N), total[0..N)], N the max order.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bleu_tok.h"
#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "eval_text.h"
#include "ngram.h"

#define MAX_ORDER 32

enum { SMOOTH_EXP, SMOOTH_FLOOR, SMOOTH_ADD_K, SMOOTH_NONE };
static const char *const SMOOTH_NAMES[] = {"exp", "floor", "add-k", "none", NULL};
static const char *const TOK_CHOICES[] = {"13a", "intl", "zh", "char", "none", NULL};

typedef struct bleu {
  cb__bleu_tok tok;
  int smooth;
  double smooth_value; /* floor and add-k: their value (bleu.py SMOOTH_DEFAULTS) */
  int lowercase, effective_order;
  long order;
  cb__eval_vocab vocab;
  cb__trie trie;
  cb__bleu_tok_scratch scratch;
  cb_buf lower;
  uint32_t *ids[2]; /* the words as ids: a reference's, the hypothesis' */
  size_t ids_cap[2];
  uint32_t *in_hyp; /* per word id: the stamp of the last segment whose hypothesis has it */
  size_t in_hyp_cap;
  uint32_t stamp;   /* this segment's (from 1) */
} bleu;

static const cb_eval_option_def BLEU_OPTIONS[] = {
    {"tokenize", "TOK", "BLEU tokenizer: 13a (default), intl, zh, char, none"},
    {"smooth", "METHOD", "BLEU smoothing: exp (default), floor, add-k, none"},
    {"smooth-value", "X", "value for floor [0.1] and add-k [1]"},
    {"max-ngram-order", "N", "BLEU's highest n-gram order [4]"},
    {"effective-order", NULL, "BLEU: leave out orders with no n-grams (on with --sentence)"},
    {"no-effective-order", NULL, "BLEU: keep every order even with --sentence"},
    {"lowercase", NULL, "lowercase hypotheses and references first (Python's str.lower)"},
    {NULL, NULL, NULL},
};

static cb_status bleu_create(cb_eval_options *o, void **state, cb_error *err) {
  bleu *b = cb_calloc(1, sizeof *b);
  int tok = CB__BLEU_TOK_13A;
  b->smooth = SMOOTH_EXP;
  b->order = 4;
  cb_status st = cb_eval_opt_choice(o, "tokenize", TOK_CHOICES, &tok, err);
  if (!st) st = cb_eval_opt_choice(o, "smooth", SMOOTH_NAMES, &b->smooth, err);
  if (!st) st = cb_eval_opt_long(o, "max-ngram-order", 1, MAX_ORDER, &b->order, err);
  b->smooth_value = b->smooth == SMOOTH_ADD_K ? 1.0 : 0.1;
  int has_value = cb_eval_opt(o, "smooth-value") != NULL;
  if (!st) st = cb_eval_opt_double(o, "smooth-value", 0, 1e9, &b->smooth_value, err);
  if (!st && has_value && b->smooth != SMOOTH_FLOOR && b->smooth != SMOOTH_ADD_K)
    st = cb_error_set(err, CB_ERR_INVALID,
                      "--smooth-value: only --smooth floor and add-k take a value");
  b->lowercase = cb_eval_opt_flag(o, "lowercase");
  /* sacrebleu's CLI turns effective order on for sentence scores (sacrebleu.py). */
  b->effective_order = o->sentence ? !cb_eval_opt_flag(o, "no-effective-order")
                                   : cb_eval_opt_flag(o, "effective-order");
  if (o->sentence) cb_eval_opt_flag(o, "effective-order");
  else if (!st && cb_eval_opt_flag(o, "no-effective-order"))
    st = cb_error_set(err, CB_ERR_INVALID, "--no-effective-order: only with --sentence");
  b->tok = (cb__bleu_tok)tok;
  if (st) {
    cb_free(b);
    return st;
  }
  *state = b;
  return CB_OK;
}

static void bleu_destroy(void *state) {
  bleu *b = state;
  if (!b) return;
  cb__eval_vocab_free(&b->vocab);
  cb__trie_free(&b->trie);
  cb__bleu_tok_scratch_free(&b->scratch);
  cb_buf_free(&b->lower);
  cb_free(b->ids[0]);
  cb_free(b->ids[1]);
  cb_free(b->in_hyp);
  cb_free(b);
}

static size_t bleu_n_stats(const void *state) { return 2 + 2 * (size_t)((const bleu *)state)->order; }

/* _preprocess_segment: lowercase (optionally), rstrip, tokenize; then the words as ids
 * into b->ids[which] (0: a reference, 1: the hypothesis). Returns the number of words. */
static size_t words(bleu *b, const cb_eval_text *t, int which) {
  const char *s = t->s;
  size_t n = t->n;
  if (b->lowercase) {
    cb_buf_reset(&b->lower);
    cb__eval_lower_text(s, n, &b->lower);
    s = b->lower.data ? b->lower.data : "";
    n = b->lower.len;
  }
  n = cb__eval_rstrip(s, n);
  size_t count;
  const char *p = cb__bleu_tokens(b->tok, s, n, &b->scratch, &count);
  if (count > b->ids_cap[which]) {
    b->ids_cap[which] = count > 256 ? count : 256;
    cb_free(b->ids[which]);
    b->ids[which] = cb_reallocarray(NULL, b->ids_cap[which], sizeof *b->ids[which]);
  }
  uint32_t *ids = b->ids[which];
  const cb__bleu_span *sp = b->scratch.spans;
  for (size_t i = 0; i < count; i++) ids[i] = cb__eval_vocab_id(&b->vocab, p + sp[i].at, sp[i].len);
  return count;
}

/* Marks the hypothesis' words (ids[0..len)) in b->in_hyp with a new stamp. */
static void mark_hyp_words(bleu *b, const uint32_t *ids, size_t len) {
  if (b->vocab.used > b->in_hyp_cap) { /* every id so far: the hypothesis' are among them */
    size_t cap = b->vocab.used * 2;
    b->in_hyp = cb_reallocarray(b->in_hyp, cap, sizeof *b->in_hyp);
    memset(b->in_hyp + b->in_hyp_cap, 0, (cap - b->in_hyp_cap) * sizeof *b->in_hyp);
    b->in_hyp_cap = cap;
  }
  if (++b->stamp == 0) { /* every stamp used: start again from a clean slate */
    memset(b->in_hyp, 0, b->in_hyp_cap * sizeof *b->in_hyp);
    b->stamp = 1;
  }
  for (size_t i = 0; i < len; i++) b->in_hyp[ids[i]] = b->stamp;
}

static int in_hyp(const bleu *b, uint32_t id) { return id < b->in_hyp_cap && b->in_hyp[id] == b->stamp; }

/* _get_closest_ref_len: the reference length nearest the hypothesis length, the
 * shorter one on a tie. */
static size_t closest_ref_len(size_t hyp_len, const size_t *lens, size_t n) {
  size_t best = 0, best_diff = 0;
  for (size_t i = 0; i < n; i++) {
    size_t diff = hyp_len > lens[i] ? hyp_len - lens[i] : lens[i] - hyp_len;
    if (i == 0 || diff < best_diff || (diff == best_diff && lens[i] < best)) {
      best_diff = diff;
      best = lens[i];
    }
  }
  return best;
}

/* _extract_reference_info + _compute_segment_statistics: the references' n-grams in
 * the trie with the highest count in any one reference; then the hypothesis' n-grams,
 * each match counted while the hypothesis has no more of it than that (the clip).
 * Only a reference n-gram whose words are all in the hypothesis can equal one of the
 * hypothesis' n-grams, so only those go in the trie (each with every occurrence in its
 * reference, so its count is whole): about half of them on prose. */
static cb_status bleu_segment(void *state, const cb_eval_segment *seg, double *stats,
                              cb_error *err) {
  (void)err;
  bleu *b = state;
  cb__trie *t = &b->trie;
  size_t N = (size_t)b->order;
  cb__trie_reset(t);
  size_t hyp_len = words(b, &seg->hyp, 1);
  const uint32_t *hyp = b->ids[1];
  mark_hyp_words(b, hyp, hyp_len);
  size_t lens_small[8], *lens = seg->nrefs <= 8 ? lens_small : cb_calloc(seg->nrefs, sizeof *lens);
  for (size_t r = 0; r < seg->nrefs; r++) {
    size_t len = words(b, &seg->refs[r], 0);
    const uint32_t *ids = b->ids[0];
    lens[r] = len;
    size_t miss = 0; /* the first word from i on that the hypothesis lacks (len: none) */
    for (size_t i = 0; i < len; i++) {
      if (miss < i) miss = i;
      while (miss < len && in_hyp(b, ids[miss])) miss++;
      uint32_t node = 0;
      for (size_t n = 1; n <= N && i + n <= miss; n++) {
        node = cb__trie_child(t, node, ids[i + n - 1], 1);
        cb__trie_count *c = &t->count[node];
        if (c->mark != r + 1) {
          c->mark = (uint32_t)r + 1;
          c->cur = 0;
        }
        if (++c->cur > c->ref) c->ref = c->cur;
      }
    }
  }
  double *correct = stats + 2, *total = stats + 2 + N;
  for (size_t i = 0; i < hyp_len; i++) {
    uint32_t node = 0;
    for (size_t n = 1; n <= N && i + n <= hyp_len; n++) {
      /* Only n-grams of a reference can match, and when no reference has this one none
       * has a longer one starting here. */
      node = cb__trie_child(t, node, hyp[i + n - 1], 0);
      if (!node) break;
      cb__trie_count *c = &t->count[node];
      if (++c->hyp <= c->ref) correct[n - 1]++;
    }
  }
  for (size_t n = 1; n <= N && n <= hyp_len; n++) total[n - 1] = (double)(hyp_len - n + 1);
  stats[0] = (double)hyp_len;
  stats[1] = (double)closest_ref_len(hyp_len, lens, seg->nrefs);
  if (lens != lens_small) cb_free(lens);
  return CB_OK;
}

/* utils.py my_log: log, with log(0) floored to -9999999999. */
static double my_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

/* BLEU.compute_bleu. correct/total are updated in place by add-k, as the reference's
 * are (its BLEUScore reports the smoothed counts). */
static double compute_bleu(const bleu *b, double *correct, double *total, double sys_len,
                           double ref_len, double *prec, double *bp_out) {
  size_t N = (size_t)b->order;
  double bp = 1.0;
  if (sys_len < ref_len) bp = sys_len > 0 ? exp(1 - ref_len / sys_len) : 0.0;
  *bp_out = bp;
  for (size_t n = 0; n < N; n++) prec[n] = 0.0;
  int any = 0;
  for (size_t n = 0; n < N; n++) any |= correct[n] != 0;
  if (!any) return 0.0;
  double smooth_mteval = 1.0;
  size_t eff_order = N;
  for (size_t n = 1; n <= N; n++) {
    if (b->smooth == SMOOTH_ADD_K && n > 1) {
      correct[n - 1] += b->smooth_value;
      total[n - 1] += b->smooth_value;
    }
    if (total[n - 1] == 0) break;
    if (b->effective_order) eff_order = n;
    if (correct[n - 1] == 0) {
      if (b->smooth == SMOOTH_EXP) {
        smooth_mteval *= 2;
        prec[n - 1] = 100. / (smooth_mteval * total[n - 1]);
      } else if (b->smooth == SMOOTH_FLOOR) {
        prec[n - 1] = 100. * b->smooth_value / total[n - 1];
      }
    } else {
      prec[n - 1] = 100. * correct[n - 1] / total[n - 1];
    }
  }
  double sum = 0;
  for (size_t n = 0; n < eff_order; n++) sum += my_log(prec[n]);
  return bp * exp(sum / (double)eff_order);
}

/* Counts stay integers in the JSON unless add-k made them fractional. */
static json_t *array_of(const double *v, size_t n, int counts) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, counts && v[i] == (double)(json_int_t)v[i] ? json_integer((json_int_t)v[i])
                                                                       : json_real(v[i]));
  return a;
}

/* BLEUSignature and BLEUScore (bleu.py), Signature.format (base.py). */
static void bleu_result(const void *state, const double *stats, const cb_eval_sig_info *sig,
                        cb_eval_result *out) {
  const bleu *b = state;
  size_t N = (size_t)b->order;
  double correct[MAX_ORDER], total[MAX_ORDER], prec[MAX_ORDER], bp;
  memcpy(correct, stats + 2, N * sizeof *correct);
  memcpy(total, stats + 2 + N, N * sizeof *total);
  double sys_len = stats[0], ref_len = stats[1];
  out->score = compute_bleu(b, correct, total, sys_len, ref_len, prec, &bp);
  snprintf(out->display, sizeof out->display, "BLEU");
  cb_buf *s = &out->signature;
  cb_eval_sig_head(sig, s);
  cb_buf_appendf(s, "case:%s|eff:%s|tok:%s|smooth:%s", b->lowercase ? "lc" : "mixed",
                 b->effective_order ? "yes" : "no", cb__bleu_tok_name(b->tok), SMOOTH_NAMES[b->smooth]);
  if (b->smooth == SMOOTH_FLOOR || b->smooth == SMOOTH_ADD_K) cb_buf_appendf(s, "[%.2f]", b->smooth_value);
  cb_buf_appendf(s, "|version:%s", CB_EVAL_SACREBLEU_VERSION);
  double ratio = ref_len ? sys_len / ref_len : 0;
  cb_buf *v = &out->verbose;
  for (size_t n = 0; n < N; n++) cb_buf_appendf(v, "%s%.1f", n ? "/" : "", prec[n]);
  cb_buf_appendf(v, " (BP = %.3f ratio = %.3f hyp_len = %.0f ref_len = %.0f)", bp, ratio, sys_len,
                 ref_len);
  out->stats = json_pack("{s:o, s:o, s:o, s:f, s:f, s:I, s:I}", "counts", array_of(correct, N, 1),
                         "totals", array_of(total, N, 1), "precisions", array_of(prec, N, 0), "bp", bp,
                         "ratio", ratio, "sys_len", (json_int_t)sys_len, "ref_len", (json_int_t)ref_len);
}

const cb_eval_metric cb_eval_metric_bleu = {
    .name = "bleu",
    .options = BLEU_OPTIONS,
    .create = bleu_create,
    .destroy = bleu_destroy,
    .n_stats = bleu_n_stats,
    .segment = bleu_segment,
    .result = bleu_result,
};
