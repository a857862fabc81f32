/*
 * probe_embed.h - `probe embed --a URL --b URL` (docs/probe.md, "probe embed"; issue
 * 16): do two embedding models (an old and a new index, a retriever and a reranker, an
 * f16 and a quantized build) see a retrieval set alike?
 *
 * The retrieval set is in BEIR's layout (Thakur et al., "BEIR: A Heterogeneous
 * Benchmark for Zero-shot Evaluation of Information Retrieval Models", 2021;
 * beir/datasets/data_loader.py): DIR/corpus.jsonl ({"_id", "title", "text"}),
 * DIR/queries.jsonl ({"_id", "text"}), DIR/qrels/<split>.tsv (a header line, then
 * "query-id<TAB>corpus-id<TAB>score"). Every query and document is embedded by both
 * endpoints (eval's /v1/embeddings client, eval_embed.h); everything else is computed
 * from the two sets of vectors:
 *  - per model: the norms, the cosine of relevant and of other pairs, recall@k and
 *    nDCG@k as trec_eval 9 (pytrec_eval, which BEIR calls) computes them;
 *  - across models: Kendall's tau-b and Spearman's rho between the two models'
 *    cosines per query, and the shift cos_b - cos_a per (query, document) pair;
 *  - calibration: scores dot(u / |u|^alpha, v / |v|^alpha) swept over alpha, the alpha
 *    whose score distributions of the two models are closest, recall before (alpha 0,
 *    the raw dot product) and after.
 */
#ifndef CALIBENCH_PROBE_EMBED_H
#define CALIBENCH_PROBE_EMBED_H

#include <signal.h>
#include <stddef.h>

#include <jansson.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One relevance judgment: query and document indices into the set, the qrels score. */
typedef struct cb_probe_embed_judgment {
  size_t query, doc;
  long score;
} cb_probe_embed_judgment;

typedef struct cb_probe_embed_set {
  size_t n_docs, n_queries, n_qrels;
  char **doc_ids, **doc_texts;     /* text: title + " " + text, trimmed (BEIR's models) */
  char **query_ids, **query_texts; /* the queries that have a judgment, file order */
  cb_probe_embed_judgment *qrels;  /* sorted by query, then document */
  size_t unjudged_queries;         /* queries.jsonl entries without one (not used) */
} cb_probe_embed_set;

/*
 * Read DIR/corpus.jsonl, DIR/queries.jsonl and DIR/qrels/<split>.tsv. Errors name
 * the file and line ("q.jsonl:3: field '_id': expected a string"): a line that is not
 * a JSON object, a missing or empty id or text, an id given twice, a qrels row without
 * three tab-separated fields, a score that is not an integer, an id the corpus or the
 * queries do not have, a pair judged twice, no judged query at all.
 */
cb_status cb_probe_embed_set_load(const char *dir, const char *split, cb_probe_embed_set *out,
                                  cb_error *err);
void cb_probe_embed_set_free(cb_probe_embed_set *s);

/*
 * One query's ranking as trec_eval orders it: by score, highest first, ties by
 * document id in descending byte order. order[0..n) gets document indices.
 */
void cb_probe_embed_rank(const double *scores, char *const *doc_ids, size_t n, size_t *order);

/*
 * recall@k and nDCG@k of one ranking (trec_eval 9's recall_k and ndcg_cut_k):
 * rel[d] is document d's judged score (0 when unjudged). recall = relevant documents
 * (score >= 1) in the first k / all relevant ones; nDCG = DCG@k / ideal DCG@k with
 * DCG = sum over ranks r <= k of rel / log2(r + 1) (rel > 0 only, linear gain), the
 * ideal from the judged scores sorted. Both 0 when the query has no relevant document.
 */
void cb_probe_embed_query_scores(const size_t *order, size_t n, const long *rel, size_t k,
                                 double *recall, double *ndcg);

/* What the probe computes, and how. */
typedef struct cb_probe_embed_params {
  size_t ks[8];         /* cutoffs of recall@k and nDCG@k, ascending, >= 1 */
  size_t n_ks;
  double alphas[32];    /* the power-norm exponents swept, each in [0, 2] */
  size_t n_alphas;
  int objective;        /* CB_PROBE_EMBED_KS or CB_PROBE_EMBED_MAD */
  size_t bins;          /* histogram bins of the score shifts */
} cb_probe_embed_params;

enum { CB_PROBE_EMBED_KS = 0, CB_PROBE_EMBED_MAD = 1 };

/* k 1, 5, 10; alpha 0.5, 0.6, 0.7, 0.8, 0.9; KS; 40 bins. */
void cb_probe_embed_params_init(cb_probe_embed_params *p);

/* One model's vectors of the set: queries (n_queries x dim) and documents (n_docs x
 * dim), each non-zero and finite (as eval's parser checks them). */
typedef struct cb_probe_embed_vectors {
  const float *queries, *docs;
  size_t dim;
} cb_probe_embed_vectors;

/* The largest n_queries x n_docs the probe scores: every pair is kept per model and
 * per score, about 50 bytes a pair at the peak (250 MB); BEIR's scifact is 1.6 million. */
#define CB_PROBE_EMBED_MAX_PAIRS ((size_t)5000000)

/*
 * Everything above for models a and b into `doc` (a probe.json document,
 * cb_probe_json_new("embed")): its metrics and the fields "a", "b", "agreement",
 * "shift", "calibration" (docs/probe.md, "probe embed").
 */
cb_status cb_probe_embed_analyse(const cb_probe_embed_set *set, const cb_probe_embed_params *p,
                                 const cb_probe_embed_vectors *a,
                                 const cb_probe_embed_vectors *b, json_t *doc, cb_error *err);

/*
 * The whole probe: load the set, embed every query and document through both
 * endpoints (eval_embed.h's client: one POST per batch, each batch a record of
 * records.jsonl, class "a" or "b", its time from send to the whole answer), analyse,
 * and write DIR/records.jsonl, summary.json, manifest.json (the URLs with passwords
 * masked, never a key) and probe.json. *doc_out (optional) gets the probe.json
 * document (json_decref it). A failed request ends the probe with CB_ERR_NETWORK
 * naming the model, the batch and the text; DIR then holds the records so far.
 */
#include "calibench/eval_embed.h"

typedef struct cb_probe_embed_run_params {
  cb_embed_config a, b;       /* the two endpoints (url, model, key, batch, timeout) */
  const char *dataset, *split; /* BEIR directory and qrels split ("test") */
  const char *out_dir;
  cb_probe_embed_params p;
  /* when non-zero (a signal handler counts into it), no further batch is sent: the
   * records so far, summary.json and manifest.json ("interrupted": true) are written,
   * no probe.json, and the run returns CB_ERR_INTERRUPTED; NULL: never */
  const volatile sig_atomic_t *stop;
} cb_probe_embed_run_params;

cb_status cb_probe_embed_run(const cb_probe_embed_run_params *rp, json_t **doc_out,
                             cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
