/*
 * eval_rouge.h - overlap metrics of one hypothesis against its references: ROUGE as
 * Google's rouge-score computes it, and SQuAD v1.1's exact match and F1.
 *
 * ROUGE (google-research/google-research, rouge/rouge_scorer.py, tokenize.py,
 * scoring.py): rouge1..rouge9 (n-gram overlap), rougeL (longest common subsequence)
 * and rougeLsum (summary-level LCS over newline-separated sentences), each as
 * precision, recall and F-measure. The default tokenizer is rouge-score's (lowercase,
 * runs of [a-z0-9], so non-ASCII letters are dropped), optionally with NLTK's Porter
 * stemmer on tokens longer than 3 characters. CB_EVAL_ROUGE_TOK_UNICODE is calibench's
 * extension for non-Latin text (docs/eval.md).
 *
 * A scorer caches the tokens (and stems) it has seen, so it is not thread-safe: use
 * one per thread. Texts are UTF-8 (pointer and length, NULs allowed); ill-formed
 * UTF-8 is CB_ERR_PARSE with the byte offset.
 */
#ifndef CALIBENCH_EVAL_ROUGE_H
#define CALIBENCH_EVAL_ROUGE_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A rouge type: 1..9 are rouge1..rouge9; then rougeL and rougeLsum. */
#define CB_EVAL_ROUGE_L 10
#define CB_EVAL_ROUGE_LSUM 11

/* "rouge1".."rouge9", "rougeL", "rougeLsum" -> type; anything else (rouge0,
 * rouge10, rougeN) is CB_ERR_INVALID naming it, as rouge-score's ValueError. */
cb_status cb_eval_rouge_type_parse(const char *name, int *type, cb_error *err);
/* The name of a type ("rougeLsum"); "?" for a value that is not one. */
const char *cb_eval_rouge_type_name(int type);

typedef enum {
  CB_EVAL_ROUGE_TOK_DEFAULT = 0, /* rouge-score's tokenize.py */
  CB_EVAL_ROUGE_TOK_UNICODE,     /* calibench: Unicode letters, digits and marks */
} cb_eval_rouge_tokenizer;

typedef struct cb_eval_prf {
  double precision, recall, fmeasure;
} cb_eval_prf;

typedef struct cb_eval_rouge_config {
  const int *types; /* rouge types to score, in the order the scores come back */
  size_t n_types;
  int use_stemmer; /* NLTK's PorterStemmer (NLTK_EXTENSIONS) on tokens of > 3 chars */
  cb_eval_rouge_tokenizer tokenizer;
} cb_eval_rouge_config;

typedef struct cb_eval_rouge cb_eval_rouge;

/* The LCS of rougeL and of each rougeLsum sentence pair costs one step per pair of
 * tokens: above this many (two texts of ~46,000 tokens each) scoring stops with
 * CB_ERR_CAPACITY instead of running for minutes. */
#define CB_EVAL_ROUGE_MAX_LCS_CELLS ((size_t)1 << 31)

/* A scorer for cfg's types (copied). CB_ERR_INVALID for no type or an unknown one;
 * CB_ERR_UNSUPPORTED when the Unicode tokenizer's tables (C.UTF-8) are missing. */
cb_status cb_eval_rouge_new(const cb_eval_rouge_config *cfg, cb_eval_rouge **out,
                            cb_error *err);
void cb_eval_rouge_free(cb_eval_rouge *r);

/* rouge-score's RougeScorer.score(target=ref, prediction=hyp): scores[i] for the
 * config's types[i]. */
cb_status cb_eval_rouge_score(cb_eval_rouge *r, const char *ref, size_t ref_len,
                              const char *hyp, size_t hyp_len, cb_eval_prf *scores,
                              cb_error *err);

/* RougeScorer.score_multi: each type's score against the reference with the highest
 * F-measure (the first one on a tie). n_refs >= 1. */
cb_status cb_eval_rouge_score_multi(cb_eval_rouge *r, const char *const *refs,
                                    const size_t *ref_lens, size_t n_refs,
                                    const char *hyp, size_t hyp_len, cb_eval_prf *scores,
                                    cb_error *err);

/* The corpus score most tools print: each of P, R and F averaged over n segments
 * (all zero when n is 0). */
cb_eval_prf cb_eval_rouge_mean(const cb_eval_prf *segments, size_t n);

/* rouge-score's BootstrapAggregator (scoring.py): n_samples resamples of the n
 * segments with replacement, the mean of each, and the percentiles
 * (1-confidence)/2, 50 and 1-(1-confidence)/2 of those means (numpy's linear
 * percentile) as low, mid and high. The draws are numpy's legacy global generator
 * after np.random.seed(seed) (MT19937, masked rejection), so a script that seeds
 * numpy so gets the same interval. */
typedef struct cb_eval_rouge_interval {
  cb_eval_prf low, mid, high;
} cb_eval_rouge_interval;
cb_status cb_eval_rouge_bootstrap(const cb_eval_prf *segments, size_t n, size_t n_samples,
                                  double confidence, uint32_t seed,
                                  cb_eval_rouge_interval *out, cb_error *err);

/*
 * SQuAD v1.1's official evaluation (evaluate-v1.1.py): normalize_answer lowercases
 * (Python's str.lower), drops ASCII punctuation (string.punctuation), the words
 * a/an/the and extra whitespace; exact match compares the normalised strings, F1
 * the multisets of their whitespace-separated tokens; several references: the max.
 */
typedef struct cb_eval_squad {
  double exact; /* 0 or 1 */
  double f1;    /* 0..1 */
} cb_eval_squad;

/* normalize_answer(text) appended to `out` (a struct cb_buf). */
struct cb_buf;
cb_status cb_eval_squad_normalize(const char *text, size_t len, struct cb_buf *out,
                                  cb_error *err);
/* metric_max_over_ground_truths of exact_match_score and f1_score. n_refs >= 1. */
cb_status cb_eval_squad_score(const char *hyp, size_t hyp_len, const char *const *refs,
                              const size_t *ref_lens, size_t n_refs, cb_eval_squad *out,
                              cb_error *err);
/* compute_score's corpus figures: 100 * the sums over n segments / n (percent). */
cb_eval_squad cb_eval_squad_corpus(const cb_eval_squad *segments, size_t n);

#ifdef __cplusplus
}
#endif
#endif
