/*
 * embed_retrieval.c - one query's ranking and its recall@k and nDCG@k, as trec_eval 9
 * computes them (usnistgov/trec_eval: form_res_rels.c orders the results, m_recall.c
 * and m_ndcg_cut.c score them); pytrec_eval wraps that code and BEIR calls pytrec_eval
 * with relevance level 1 (beir/retrieval/evaluation.py).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/probe_embed.h"

typedef struct ranked {
  double score;
  const char *id;
  size_t doc;
} ranked;

/* trec_eval's order: the higher score first; a tie by document id, the greater first. */
static int ranked_cmp(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->score != y->score) return x->score > y->score ? -1 : 1;
  return strcmp(y->id, x->id);
}

void cb_probe_embed_rank(const double *scores, char *const *doc_ids, size_t n, size_t *order) {
  ranked *r = cb_calloc(n ? n : 1, sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (ranked){scores[i], doc_ids[i], i};
  qsort(r, n, sizeof *r, ranked_cmp);
  for (size_t i = 0; i < n; i++) order[i] = r[i].doc;
  cb_free(r);
}

static int long_desc(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x < y) - (x > y);
}

void cb_probe_embed_query_scores(const size_t *order, size_t n, const long *rel, size_t k,
                                 double *recall, double *ndcg) {
  size_t relevant = 0, positive = 0;
  for (size_t d = 0; d < n; d++) {
    relevant += rel[d] >= 1;
    positive += rel[d] > 0;
  }
  size_t cut = k < n ? k : n, found = 0;
  double dcg = 0;
  for (size_t r = 0; r < cut; r++) {
    long g = rel[order[r]];
    found += g >= 1;
    /* rank r + 1 is discounted by log2(rank + 1) (trec_eval 9: "i+2 since doc i has
     * rank i+1"), the gain is the judged score itself */
    if (g > 0) dcg += (double)g / log2((double)r + 2);
  }
  long *ideal = cb_calloc(positive ? positive : 1, sizeof *ideal);
  size_t m = 0;
  for (size_t d = 0; d < n; d++)
    if (rel[d] > 0) ideal[m++] = rel[d];
  qsort(ideal, m, sizeof *ideal, long_desc);
  double idcg = 0;
  for (size_t r = 0; r < m && r < k; r++) idcg += (double)ideal[r] / log2((double)r + 2);
  cb_free(ideal);
  *recall = relevant ? (double)found / (double)relevant : 0;
  *ndcg = idcg > 0 ? dcg / idcg : 0;
}
