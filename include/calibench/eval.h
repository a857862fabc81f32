/*
 * eval.h - reference quality metrics over a corpus of hypothesis/reference segments
 * (`calibench eval score`, docs/eval.md), each identical to its reference
 * implementation (BLEU, chrF, chrF++, TER, their intervals and paired tests: sacrebleu
 * 2.6.0; ROUGE: rouge-score; exact/f1: SQuAD v1.1's script).
 *
 * Every metric works the way sacrebleu's do: each segment gives a fixed-width vector of
 * sufficient statistics (BLEU: lengths, matched and total n-grams per order); the
 * corpus score is computed from the sum of the segments' vectors, a sentence score
 * from one segment's vector, and a bootstrap resample from the sum over resampled
 * segments. So the driver never needs to know a metric's insides.
 *
 * How a metric plugs in (one row of the table in src/eval/metrics.c):
 *  1. Write src/eval/<metric>.c defining `const cb_eval_metric cb_eval_metric_<x>`:
 *     - name: what --metric takes ("bleu"); the JSON key metrics.<name>;
 *     - options: the command-line options it reads ({"tokenize", "NAME", "help"},
 *       {NULL} last). The CLI builds its option list and --help from these, so a new
 *       option needs no CLI edit; an option shared by two metrics (--lowercase) is
 *       listed by each, and means the same to both;
 *     - create: reads its options with cb_eval_opt_*() (which validate and name the
 *       option in the error), returns its state;
 *     - prepare (optional): work over the whole corpus before any segment, which may
 *       fail (embed-cosine fetches every text's vector here);
 *     - n_stats, segment: the statistics vector of one segment, from that segment
 *       alone (the bootstrap and the paired tests re-sum the same rows); it fails
 *       only on a segment the metric cannot score (ROUGE's pair past the LCS limit),
 *       with an error, never by leaving the process. It may change its own state
 *       (caches) but nothing shared: with --threads, each block of segments is scored
 *       on its own thread with its own state, made by create with the same options
 *       (cb_eval_segment_rows), and the rows must not depend on which state scored
 *       them. A metric
 *       whose corpus score is the mean of segment scores (ROUGE, SQuAD exact/F1) puts
 *       the segment's scores and a count of 1 in its vector and divides in result;
 *     - result: score, display name (into out->display), signature (starting with
 *       cb_eval_sig_head, which writes nrefs and the bs/ar/seed of a test), score-line
 *       tail and JSON statistics, from any statistics vector: one segment's, the sum,
 *       or a resample's. It keeps no pointer into its state in `out`.
 *  2. Add `&cb_eval_metric_<x>` to the table in src/eval/metrics.c.
 *  3. Vectors from the reference under tests/data/eval/ (made by a script in
 *     scripts/, with the reference's commit and the command in the README there) and
 *     a tests/unit/test_eval_<x>.c; test_eval_vectors.h replays hyps/refs vectors.
 * Nothing else changes: the CLI's --metric, options, --help, text and JSON output,
 * --sentence, --bootstrap and --baseline work from the table.
 */
#ifndef CALIBENCH_EVAL_H
#define CALIBENCH_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of sacrebleu whose numbers and signatures calibench reproduces. */
#define CB_EVAL_SACREBLEU_VERSION "2.6.0"

typedef struct cb_eval_text {
  const char *s; /* well-formed UTF-8, no NUL */
  size_t n;
} cb_eval_text;

/* One segment: the hypothesis and its references (at least one). */
typedef struct cb_eval_segment {
  cb_eval_text hyp;
  const cb_eval_text *refs;
  size_t nrefs;
} cb_eval_segment;

/* --- options ------------------------------------------------------------------ */

typedef struct cb_eval_option_def {
  const char *name; /* without the dashes */
  const char *arg;  /* the value's placeholder in --help; NULL for a flag */
  const char *help;
} cb_eval_option_def;

/* One option as given (value NULL for a flag); `used` is set when a metric reads it. */
typedef struct cb_eval_option {
  const char *name;
  const char *value;
  int used;
} cb_eval_option;

typedef struct cb_eval_options {
  cb_eval_option *v;
  size_t n;
  int sentence; /* scoring segment by segment (--sentence) */
  /* Threads to score segments on (--threads; 0 or 1: the calling thread alone). The
   * rows are the same bit for bit whatever the count: cb_eval_segment_stats_opts. */
  int threads;
} cb_eval_options;

/* The option's value (the last one given), NULL when absent; marks it used. */
const char *cb_eval_opt(cb_eval_options *o, const char *name);
/* 1 when the flag was given; marks it used. */
int cb_eval_opt_flag(cb_eval_options *o, const char *name);
/* The option as a number in [lo, hi] (*out unchanged when absent); CB_ERR_INVALID
 * "--NAME: expected ..., got '...'" otherwise. */
cb_status cb_eval_opt_long(cb_eval_options *o, const char *name, long lo, long hi, long *out,
                           cb_error *err);
cb_status cb_eval_opt_double(cb_eval_options *o, const char *name, double lo, double hi,
                             double *out, cb_error *err);
/* The option's value as one of choices[] (NULL-terminated): its index in *out. */
cb_status cb_eval_opt_choice(cb_eval_options *o, const char *name, const char *const *choices,
                             int *out, cb_error *err);

/* --- metrics ------------------------------------------------------------------ */

struct cb_eval_corpus;

/* What the signature carries beside the metric's own settings. */
typedef struct cb_eval_sig_info {
  const char *nrefs;  /* "1", "2", ... or "var" */
  long bootstrap;     /* bootstrap resamples (bs:N), 0 when none */
  uint64_t seed;      /* with bs or ar: the generator's seed */
  long ar;            /* approximate randomisation trials (ar:N), 0 when none */
} cb_eval_sig_info;

/* The signature's shared head, "nrefs:N|" then "bs:N|", "ar:N|", "seed:S|" as they
 * apply (sacrebleu's Signature key order), appended to out: every metric's signature
 * starts with it. */
void cb_eval_sig_head(const cb_eval_sig_info *sig, cb_buf *out);

typedef struct cb_eval_result {
  double score;
  char display[32];    /* the name on the score line ("BLEU", "chrF2++") */
  cb_buf signature;    /* "nrefs:1|case:mixed|...|version:2.6.0" */
  cb_buf verbose;      /* the score line after the score ("" when none) */
  json_t *stats;       /* owned: the statistics (counts, lengths, ...) */
} cb_eval_result;

void cb_eval_result_free(cb_eval_result *r);

typedef struct cb_eval_metric {
  const char *name;
  const cb_eval_option_def *options;
  cb_status (*create)(cb_eval_options *opts, void **state, cb_error *err);
  void (*destroy)(void *state);
  /* Optional (NULL for most): called once with the whole corpus after create and
   * before any segment(), for work over all texts first (embed-cosine fetches its
   * vectors). CB_ERR_NETWORK when a server failed (exit 1), another status for bad
   * input (exit 2); err says what and where. */
  cb_status (*prepare)(void *state, const struct cb_eval_corpus *c, cb_error *err);
  size_t (*n_stats)(const void *state);
  /* stats[0 .. n_stats) of one segment (zeroed by the caller). An error for a segment
   * the metric cannot score (ROUGE: more than CB_EVAL_ROUGE_MAX_LCS_CELLS; a text
   * prepare did not see, for prepare_required) or a reference missing: CB_ERR_CAPACITY,
   * CB_ERR_STATE or CB_ERR_INVALID, err says why. */
  cb_status (*segment)(void *state, const cb_eval_segment *seg, double *stats, cb_error *err);
  /* From a statistics vector (one segment's or the sum); out is zeroed by the caller. */
  void (*result)(const void *state, const double *stats, const cb_eval_sig_info *sig,
                 cb_eval_result *out);
  /* 1: a segment prepare did not see cannot be scored (embed-cosine has no vector for
   * it), so no second corpus (--baseline) can be scored with this state. */
  int prepare_required;
} cb_eval_metric;

/* The metrics calibench has, in the order --help lists them. */
const cb_eval_metric *const *cb_eval_metrics(size_t *n);
/* The metric --metric NAME selects, NULL when none. */
const cb_eval_metric *cb_eval_metric_find(const char *name);

/* sacrebleu's score line: "DISPLAY|SIGNATURE = SCORE VERBOSE", SCORE with `width`
 * decimals (sacrebleu's --width, 1 by default), appended to out; with an interval
 * (NULL for none) SCORE is followed by " (μ = MEAN ± CI)". */
struct cb_eval_interval;
void cb_eval_score_line(const cb_eval_result *r, int width, const struct cb_eval_interval *iv,
                        cb_buf *out);

/* --- corpus ------------------------------------------------------------------- */

typedef struct cb_eval_corpus {
  cb_eval_segment *segs;
  size_t n;
  size_t nrefs_min, nrefs_max;
  /* storage */
  cb_eval_text *ref_texts;
  cb_buf *bufs;
  size_t nbufs;
  json_t *json; /* the JSONL records jansson read (lines the scanner left), or NULL */
} cb_eval_corpus;

void cb_eval_corpus_free(cb_eval_corpus *c);
/* sacrebleu's nrefs in the signature: the count, or "var" when segments differ. */
const char *cb_eval_corpus_nrefs(const cb_eval_corpus *c, char buf[24]);

/* Plain text: one segment per line (a last line without newline counts; trailing
 * whitespace is dropped, as sacrebleu's CLI does), one file per reference stream
 * (none: segments without references, e.g. a baseline system's to pair with).
 * Errors name the file and line: unreadable file, invalid UTF-8, line counts that
 * differ, no segments. */
cb_status cb_eval_read_text(cb_eval_corpus *c, const char *hyp_path, const char *const *ref_paths,
                            size_t nref, cb_error *err);
/* JSONL: one object per line; `field` holds the hypothesis (a string), `ref_field`
 * the reference (a string, or a non-empty list of strings for several; NULL: no
 * references are read, as for a baseline system's file). */
cb_status cb_eval_read_jsonl(cb_eval_corpus *c, const char *path, const char *field,
                             const char *ref_field, cb_error *err);

/* Every segment's statistics into *rows (owned by the caller): rows[i * n_stats ...]
 * for segment i. A segment the metric cannot score fails it: "segment N: ...", *rows
 * NULL. */
cb_status cb_eval_segment_stats(const cb_eval_metric *m, void *state, const cb_eval_corpus *c,
                                double **rows, cb_error *err);
/* cb_eval_segment_stats on opts->threads threads (opts NULL: one), the rows bit for
 * bit the same: contiguous blocks of segments, the first scored with `state` on the
 * calling thread, each other with a state of its own made by m->create(opts) (a
 * metric's vocabularies and caches are never shared), every row written by the block
 * that owns its segment. A metric with prepare scores on one thread here: its prepare
 * did the corpus's work (ROUGE's on opts->threads threads itself). An error is the
 * first failing segment's, with the message one thread gives. */
cb_status cb_eval_segment_stats_opts(const cb_eval_metric *m, void *state, cb_eval_options *opts,
                                     const cb_eval_corpus *c, double **rows, cb_error *err);
/* The rows of segs[0..n) into rows (n x n_stats, zeroed by the caller) as
 * cb_eval_segment_stats_opts does; on an error *failed is the failing segment's
 * index and err is the metric's own (the caller says where). */
cb_status cb_eval_segment_rows(const cb_eval_metric *m, void *state, cb_eval_options *opts,
                               const cb_eval_segment *segs, size_t n, double *rows,
                               size_t *failed, cb_error *err);
/* The column sums of rows (n rows of k) into sum[0..k). */
void cb_eval_sum_stats(const double *rows, size_t n, size_t k, double *sum);

/* --- confidence (sacrebleu/significance.py and metrics/base.py) ------------------ */

/* sacrebleu's default seed (its SACREBLEU_SEED). */
#define CB_EVAL_DEFAULT_SEED 12345

typedef struct cb_eval_interval {
  double mean; /* mean of the resampled scores */
  double ci;   /* half the width of the 95% interval: (upper - lower) / 2 */
} cb_eval_interval;

/* Bootstrap resampling of segments (Metric.corpus_score with n_bootstrap): `samples`
 * resamples of the n segments' statistics rows (k each) drawn with numpy's
 * default_rng(seed).choice, each scored from its sum, then Score.estimate_ci. */
cb_eval_interval cb_eval_bootstrap(const cb_eval_metric *m, const void *state, const double *rows,
                                   size_t n, size_t k, long samples, uint64_t seed);

typedef struct cb_eval_paired {
  double baseline, system; /* the two corpus scores */
  double p_value;
  int has_interval;        /* paired bootstrap: the intervals below are set */
  cb_eval_interval baseline_ci, system_ci;
} cb_eval_paired;

/* Paired bootstrap resampling (_paired_bs_test, Koehn 2004 as Moses'
 * bootstrap-hypothesis-difference-significance.pl) of a system against a baseline
 * over the same segments. */
cb_eval_paired cb_eval_paired_bs(const cb_eval_metric *m, const void *state, const double *bl_rows,
                                 const double *sys_rows, size_t n, size_t k, long samples,
                                 uint64_t seed);
/* Paired approximate randomisation (_paired_ar_test, after multeval): each trial
 * swaps each segment's two outputs with probability 1/2. */
cb_eval_paired cb_eval_paired_ar(const cb_eval_metric *m, const void *state, const double *bl_rows,
                                 const double *sys_rows, size_t n, size_t k, long trials,
                                 uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
