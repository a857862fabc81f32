/*
 * test_probe_embed.c - probe embed's library (probe_embed.h): the BEIR set's reader and
 * its file:line errors, trec_eval's ranking (ties by document id, descending) and its
 * recall@k / nDCG@k computed by hand, the two-sample KS distance with ties, and the
 * analysis of a planted pair of models: b = s R a (R orthogonal) ranks every query
 * alike (tau 1, no shift), shows s in the norms, and the alpha sweep closes the gap
 * the raw dot product opens.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/probe.h"
#include "calibench/probe_embed.h"
#include "calibench/rng.h"
#include "calibench/stats.h"
#include "test_file.h"

static void test_rank_ties_by_id_descending(void **state) {
  (void)state;
  char *ids[] = {"d1", "d2", "d3", "d4", "d5"};
  double scores[] = {0.9, 0.8, 0.8, 0.1, 0.5};
  size_t order[5];
  cb_probe_embed_rank(scores, ids, 5, order);
  size_t want[] = {0, 2, 1, 4, 3}; /* d3 before d2: trec_eval's tie order */
  for (int i = 0; i < 5; i++) assert_int_equal(order[i], want[i]);
}

static void test_recall_ndcg_by_hand(void **state) {
  (void)state;
  size_t order[] = {0, 2, 1, 4, 3};
  long rel[] = {0, 2, 0, 1, 1}; /* d2 graded 2, d4 and d5 graded 1 */
  double recall, ndcg;
  cb_probe_embed_query_scores(order, 5, rel, 3, &recall, &ndcg);
  /* top 3: d1 (0), d3 (0), d2 (2): DCG = 2 / log2(4); ideal: 2/log2(2) + 1/log2(3) + 1/log2(4) */
  assert_float_equal(recall, 1.0 / 3, 1e-15);
  assert_float_equal(ndcg, (2 / log2(4)) / (2 + 1 / log2(3) + 1 / log2(4)), 1e-15);
  cb_probe_embed_query_scores(order, 5, rel, 5, &recall, &ndcg);
  assert_float_equal(recall, 1, 1e-15);
  double dcg = 2 / log2(4) + 1 / log2(5) + 1 / log2(6);
  assert_float_equal(ndcg, dcg / (2 + 1 / log2(3) + 1 / log2(4)), 1e-15);
  /* k beyond the list, and a query without a relevant document */
  cb_probe_embed_query_scores(order, 5, rel, 100, &recall, &ndcg);
  assert_float_equal(recall, 1, 1e-15);
  long none[] = {0, 0, -1, 0, 0};
  cb_probe_embed_query_scores(order, 5, none, 3, &recall, &ndcg);
  assert_float_equal(recall, 0, 0);
  assert_float_equal(ndcg, 0, 0);
}

static void test_ks_2samp_ties(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4}, y[] = {3, 4, 5, 6};
  assert_float_equal(cb_stats_ks_2samp_d(x, 4, y, 4), 0.5, 1e-15);
  /* a value in both samples moves both CDFs at once: 1/3, not 2/3 */
  double a[] = {1, 1, 2}, b[] = {1, 2, 2};
  assert_float_equal(cb_stats_ks_2samp_d(a, 3, b, 3), 1.0 / 3, 1e-15);
  assert_float_equal(cb_stats_ks_2samp_d(a, 3, a, 3), 0, 0);
  assert_true(isnan(cb_stats_ks_2samp_d(a, 0, b, 3)));
}

/* ---- the set's reader ------------------------------------------------------------- */

static char tmpdir[64];

static void make_set(const char *corpus, const char *queries, const char *qrels) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/cb-embed-set-XXXXXX");
  assert_non_null(mkdtemp(tmpdir));
  char p[256];
  snprintf(p, sizeof p, "%s/corpus.jsonl", tmpdir);
  write_file(p, corpus);
  snprintf(p, sizeof p, "%s/queries.jsonl", tmpdir);
  write_file(p, queries);
  snprintf(p, sizeof p, "%s/qrels", tmpdir);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/qrels/test.tsv", tmpdir);
  write_file(p, qrels);
}

static void drop_set(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  assert_int_equal(system(cmd), 0);
}

static const char *CORPUS = "{\"_id\": \"d1\", \"title\": \"Cats\", \"text\": \"Cats purr. \"}\n"
                            "\n"
                            "{\"_id\": 7, \"text\": \"  Dogs bark.\"}\n";
static const char *QUERIES = "{\"_id\": \"q1\", \"text\": \"what purrs\"}\n"
                             "{\"_id\": \"q2\", \"text\": \"unjudged\"}\n"
                             "{\"_id\": \"q3\", \"text\": \"what barks\", \"metadata\": {}}\n";

static void test_set_reads_beir(void **state) {
  (void)state;
  make_set(CORPUS, QUERIES, "query-id\tcorpus-id\tscore\nq3\t7\t1\nq1\td1\t2\nq1\t7\t0\n");
  cb_probe_embed_set s;
  cb_error err = {0};
  assert_int_equal(cb_probe_embed_set_load(tmpdir, "test", &s, &err), CB_OK);
  assert_int_equal(s.n_docs, 2);
  assert_string_equal(s.doc_texts[0], "Cats Cats purr."); /* title + " " + text, stripped */
  assert_string_equal(s.doc_ids[1], "7");
  assert_string_equal(s.doc_texts[1], "Dogs bark.");
  assert_int_equal(s.n_queries, 2); /* q2 has no judgment */
  assert_int_equal(s.unjudged_queries, 1);
  assert_string_equal(s.query_ids[0], "q1");
  assert_string_equal(s.query_ids[1], "q3");
  assert_int_equal(s.n_qrels, 3);
  /* sorted by query, then document */
  assert_int_equal(s.qrels[0].query, 0);
  assert_int_equal(s.qrels[0].doc, 0);
  assert_int_equal(s.qrels[0].score, 2);
  assert_int_equal(s.qrels[2].query, 1);
  assert_int_equal(s.qrels[2].doc, 1);
  cb_probe_embed_set_free(&s);
  drop_set();
}

/* The set fails to load with a message containing `want` (file and line). */
static void set_fails(const char *corpus, const char *queries, const char *qrels,
                      const char *want) {
  make_set(corpus, queries, qrels);
  cb_probe_embed_set s;
  cb_error err = {0};
  cb_status st = cb_probe_embed_set_load(tmpdir, "test", &s, &err);
  if (st == CB_OK || !strstr(err.msg, want)) fail_msg("want an error with '%s', got: %s", want, err.msg);
  drop_set();
}

static void test_set_errors_name_file_and_line(void **state) {
  (void)state;
  const char *Q = "query-id\tcorpus-id\tscore\nq1\td1\t1\n";
  set_fails("{\"_id\": \"d1\", \"text\": \"a\"}\nnot json\n", QUERIES, Q, "corpus.jsonl:2:");
  set_fails("{\"_id\": \"d1\", \"text\": 5}\n", QUERIES, Q, "corpus.jsonl:1: field 'text': expected a string");
  set_fails("{\"text\": \"a\"}\n", QUERIES, Q, "corpus.jsonl:1: field '_id'");
  set_fails("{\"_id\": \"d1\", \"text\": \"  \"}\n", QUERIES, Q, "corpus.jsonl:1: field 'text': empty");
  set_fails("{\"_id\": \"d1\", \"text\": \"a\"}\n{\"_id\": \"d1\", \"text\": \"b\"}\n", QUERIES, Q,
            "corpus.jsonl:2: field '_id': 'd1' again (first on line 1)");
  set_fails(CORPUS, "[1]\n", Q, "queries.jsonl:1: expected a JSON object");
  set_fails(CORPUS, QUERIES, "query-id\tcorpus-id\tscore\nq1\td1\n", "test.tsv:2: expected three tab-separated");
  set_fails(CORPUS, QUERIES, "query-id\tcorpus-id\tscore\nq1\td1\thigh\n", "test.tsv:2: field 'score': expected an integer");
  set_fails(CORPUS, QUERIES, "h\nq1\td1\t1\nq9\td1\t1\n", "test.tsv:3: field 'query-id': 'q9' is not in queries.jsonl");
  set_fails(CORPUS, QUERIES, "h\nq1\tdx\t1\n", "test.tsv:2: field 'corpus-id': 'dx' is not in corpus.jsonl");
  set_fails(CORPUS, QUERIES, "h\nq1\td1\t1\nq3\t7\t1\nq1\td1\t2\n",
            "test.tsv:4: query 'q1' and document 'd1' judged again (first on line 2)");
  set_fails(CORPUS, QUERIES, "query-id\tcorpus-id\tscore\n", "test.tsv: no judgments");
  set_fails(CORPUS, QUERIES, "", "test.tsv:1: empty");
}

/* ---- a planted pair of models ------------------------------------------------------ */

#define DIM 32
#define NQ 6
#define ND 40

/* b = s R a with R a seeded signed permutation (orthogonal): cosines unchanged. */
static void planted(float *qa, float *da, float *qb, float *db, double s) {
  cb_rng rng;
  cb_rng_init(&rng, 11);
  int perm[DIM], sign[DIM];
  for (int i = 0; i < DIM; i++) perm[i] = i, sign[i] = cb_rng_uniform(&rng) < 0.5 ? -1 : 1;
  for (int i = DIM - 1; i > 0; i--) {
    int j = (int)(cb_rng_uniform(&rng) * (i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  float *src[] = {qa, da}, *dst[] = {qb, db};
  size_t rows[] = {NQ, ND};
  for (int m = 0; m < 2; m++)
    for (size_t r = 0; r < rows[m]; r++) {
      /* norms spread over [0.5, 2): the raw dot product then differs from the cosine */
      double len = 0.5 + 1.5 * cb_rng_uniform(&rng);
      for (int i = 0; i < DIM; i++) src[m][r * DIM + i] = (float)(len * cb_rng_normal(&rng, 0, 1) / sqrt(DIM));
      for (int i = 0; i < DIM; i++) dst[m][r * DIM + perm[i]] = (float)(s * sign[i] * src[m][r * DIM + i]);
    }
}

static void fake_set(cb_probe_embed_set *s) {
  memset(s, 0, sizeof *s);
  s->n_queries = NQ;
  s->n_docs = ND;
  s->doc_ids = cb_calloc(ND, sizeof *s->doc_ids);
  for (int d = 0; d < ND; d++) {
    char id[16];
    snprintf(id, sizeof id, "d%02d", d);
    s->doc_ids[d] = cb_strdup(id);
  }
  s->doc_texts = cb_calloc(ND, sizeof *s->doc_texts);
  s->query_texts = cb_calloc(NQ, sizeof *s->query_texts);
  s->query_ids = cb_calloc(NQ, sizeof *s->query_ids);
  s->qrels = cb_calloc(NQ, sizeof *s->qrels);
  for (int q = 0; q < NQ; q++) {
    s->query_ids[q] = cb_strdup("q");
    s->qrels[q] = (cb_probe_embed_judgment){(size_t)q, (size_t)(3 * q), 1};
  }
  s->n_qrels = NQ;
}

/* The analysis of vectors a and b over the fake set under p; it must succeed. */
static json_t *analyse_ok(const cb_probe_embed_params *p, const cb_probe_embed_vectors *a,
                          const cb_probe_embed_vectors *b) {
  cb_probe_embed_set s;
  fake_set(&s);
  json_t *doc = cb_probe_json_new("embed");
  cb_error err = {0};
  cb_status st = cb_probe_embed_analyse(&s, p, a, b, doc, &err);
  if (st != CB_OK) fail_msg("analyse: status %d: %s", st, err.msg);
  cb_probe_embed_set_free(&s);
  return doc;
}

static double field(json_t *doc, const char *a, const char *b) {
  return json_number_value(json_object_get(json_object_get(doc, a), b));
}

static void test_planted_rotation_and_scale(void **state) {
  (void)state;
  static float qa[NQ * DIM], da[ND * DIM], qb[NQ * DIM], db[ND * DIM];
  planted(qa, da, qb, db, 3.0);
  cb_probe_embed_params p;
  cb_probe_embed_params_init(&p);
  cb_probe_embed_vectors a = {qa, da, DIM}, b = {qb, db, DIM};
  json_t *doc = analyse_ok(&p, &a, &b);
  json_t *ag = json_object_get(doc, "agreement");
  assert_float_equal(field(ag, "kendall_tau_b", "mean"), 1, 1e-12);
  assert_float_equal(field(ag, "spearman", "mean"), 1, 1e-12);
  assert_float_equal(field(doc, "shift", "abs_mean"), 0, 1e-6);
  /* the scale is in the norms: b's are 3 times a's */
  double na = field(json_object_get(doc, "a"), "norms", "mean"), nb = field(json_object_get(doc, "b"), "norms", "mean");
  assert_float_equal(nb / na, 3, 1e-5);
  /* same rankings by cosine: same recall */
  json_t *ra = json_array_get(json_object_get(json_object_get(doc, "a"), "retrieval"), 2);
  json_t *rb = json_array_get(json_object_get(json_object_get(doc, "b"), "retrieval"), 2);
  assert_float_equal(json_number_value(json_object_get(ra, "recall")),
                     json_number_value(json_object_get(rb, "recall")), 1e-12);
  /* the raw dot products of b are 9 times a's: their distributions are apart; the
   * sweep's best alpha is its largest (closest to the cosine, where they coincide) */
  json_t *c = json_object_get(doc, "calibration");
  assert_float_equal(json_number_value(json_object_get(c, "alpha")), 0.9, 1e-12);
  double before = field(c, "before", "ks"), after = field(c, "after", "ks");
  assert_true(before > 0.3);
  assert_true(after < before);
  json_t *rows = json_object_get(c, "rows");
  json_t *last = json_array_get(rows, json_array_size(rows) - 1); /* alpha 1: the cosine */
  assert_float_equal(json_number_value(json_object_get(last, "alpha")), 1, 0);
  /* equal up to float rounding, which can swap two neighbours: at most one step of
   * the empirical CDF, 1 / pairs */
  assert_true(json_number_value(json_object_get(last, "ks")) <= 1.0 / (NQ * ND) + 1e-12);
  /* the paired objective picks the same alpha: b's scores are 9^(1 - alpha) times a's */
  p.objective = CB_PROBE_EMBED_MAD;
  json_t *doc2 = analyse_ok(&p, &a, &b);
  json_t *c2 = json_object_get(doc2, "calibration");
  assert_string_equal(json_string_value(json_object_get(c2, "objective")), "mad");
  assert_float_equal(json_number_value(json_object_get(c2, "alpha")), 0.9, 1e-12);
  assert_true(field(c2, "after", "mad") < field(c2, "before", "mad") / 4);
  json_decref(doc2);
  /* gateable metrics */
  json_t *m = json_object_get(doc, "metrics");
  assert_non_null(json_object_get(m, "tau_mean"));
  assert_non_null(json_object_get(m, "recall_at_10_a"));
  assert_non_null(json_object_get(m, "ndcg_at_10_b"));
  assert_non_null(json_object_get(m, "align_after"));
  json_decref(doc);
}

static void test_independent_models_disagree(void **state) {
  (void)state;
  static float qa[NQ * DIM], da[ND * DIM], qb[NQ * DIM], db[ND * DIM], q2[NQ * DIM], d2[ND * DIM];
  planted(qa, da, q2, d2, 1.0);
  /* b: vectors of their own, unrelated to a's */
  cb_rng rng;
  cb_rng_init(&rng, 99);
  for (size_t i = 0; i < NQ * DIM; i++) qb[i] = (float)cb_rng_normal(&rng, 0, 1);
  for (size_t i = 0; i < ND * DIM; i++) db[i] = (float)cb_rng_normal(&rng, 0, 1);
  cb_probe_embed_params p;
  cb_probe_embed_params_init(&p);
  cb_probe_embed_vectors a = {qa, da, DIM}, b = {qb, db, DIM};
  json_t *doc = analyse_ok(&p, &a, &b);
  /* 6 queries of 40 documents: the mean tau of independent rankings has sd about 0.05 */
  assert_true(fabs(field(json_object_get(doc, "agreement"), "kendall_tau_b", "mean")) < 0.2);
  /* one relevant document in 40 found by chance: the normal interval of recall@1 would
   * reach below 0; it is clipped to the statistic's range */
  const char *tags[] = {"a", "b"};
  for (int t = 0; t < 2; t++) {
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(json_object_get(doc, tags[t]), "retrieval"), i, row) {
      assert_true(json_number_value(json_object_get(row, "recall_lo")) >= 0);
      assert_true(json_number_value(json_object_get(row, "ndcg_lo")) >= 0);
      assert_true(json_number_value(json_object_get(row, "recall_hi")) <= 1);
    }
  }
  json_decref(doc);
}

static void test_too_many_pairs_refused(void **state) {
  (void)state;
  /* checked before anything is allocated or read: no vectors needed */
  cb_probe_embed_set s = {.n_queries = 2001, .n_docs = 2500};
  cb_probe_embed_params p;
  cb_probe_embed_params_init(&p);
  cb_probe_embed_vectors v = {NULL, NULL, 4};
  json_t *doc = cb_probe_json_new("embed");
  cb_error err = {0};
  assert_int_equal(cb_probe_embed_analyse(&s, &p, &v, &v, doc, &err), CB_ERR_CAPACITY);
  assert_non_null(strstr(err.msg, "2001 queries x 2500 documents is over 5000000 pairs"));
  json_decref(doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_ties_by_id_descending),
      cmocka_unit_test(test_recall_ndcg_by_hand),
      cmocka_unit_test(test_ks_2samp_ties),
      cmocka_unit_test(test_set_reads_beir),
      cmocka_unit_test(test_set_errors_name_file_and_line),
      cmocka_unit_test(test_planted_rotation_and_scale),
      cmocka_unit_test(test_independent_models_disagree),
      cmocka_unit_test(test_too_many_pairs_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
