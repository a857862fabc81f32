/*
 * run_paired.c - two `eval run`s compared item by item (eval_run.h,
 * cb_eval_run_paired): the gate's paired-bootstrap test of a quality metric. A metric
 * of the table is rescored from each item's statistics; a judge's grade (judge:NAME)
 * is a mean, each item's row (its grade, 1), and an item the judge left without a
 * grade on either side (null) pairs with nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/rng.h"
#include "run_score.h"

typedef struct side {
  char path[1100];
  json_t *doc;
  json_t *items; /* of the class asked for, in index order */
} side;

static cb_status load_side(side *s, const char *dir, const char *class_name, cb_error *err) {
  snprintf(s->path, sizeof s->path, "%s/eval.json", dir);
  cb_status st = cb_json_load_file(s->path, 0, CB_LIMIT_JSON_BYTES, &s->doc, err);
  if (st) return st;
  json_t *items = json_object_get(s->doc, "items");
  if (!json_is_array(items))
    return cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0, "field 'items': expected an array");
  s->items = json_array();
  size_t i;
  json_t *it;
  json_array_foreach(items, i, it) {
    const char *cls = json_string_value(json_object_get(it, "class"));
    if (!json_is_integer(json_object_get(it, "index")) || !cls)
      return cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0,
                         "field 'items[%zu]': expected an object with 'index' and 'class'", i);
    if (!class_name[0] || !strcmp(cls, class_name)) json_array_append(s->items, it);
  }
  return CB_OK;
}

/* How k summed rows become a corpus score: a metric of the table (m), or the judge's
 * mean grade (m NULL, rows (grade, 1)). */
typedef struct scorer {
  const cb_eval_metric *m;
  void *state;
  const char *metric;
} scorer;

/* items[i].stats[metric] (a judge: (scores[metric], 1)) into row[0..k). 1: the item
 * has no grade of the judge, so no row. */
static int item_row(const side *s, const scorer *sc, json_t *item, size_t k, double *row,
                    cb_status *st, cb_error *err) {
  const char *metric = sc->metric;
  long long index = (long long)json_integer_value(json_object_get(item, "index"));
  if (!sc->m) {
    json_t *v = json_object_get(json_object_get(item, "scores"), metric);
    if (json_is_null(v)) return 1;
    if (!json_is_number(v)) {
      *st = cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0,
                        "item %lld: field 'scores.%s': expected a grade or null (was %s scored?)",
                        index, metric, metric);
      return -1;
    }
    row[0] = json_number_value(v);
    row[1] = 1;
    return 0;
  }
  json_t *v = json_object_get(json_object_get(item, "stats"), metric);
  if (!json_is_array(v) || json_array_size(v) != k) {
    *st = cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0,
                      "item %lld: field 'stats.%s': expected %zu numbers (was %s scored?)", index,
                      metric, k, metric);
    return -1;
  }
  for (size_t j = 0; j < k; j++) {
    json_t *x = json_array_get(v, j);
    if (!json_is_number(x)) {
      *st = cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0, "field 'stats.%s': expected numbers",
                        metric);
      return -1;
    }
    row[j] = json_number_value(x);
  }
  return 0;
}

/* The items both runs answered, paired by index: rows (n x k) for each side. */
static cb_status pair_items(const side *b, const side *c, const scorer *sc, size_t k,
                            double **brows, double **crows, size_t *n, cb_error *err) {
  size_t nb = json_array_size(b->items), nc = json_array_size(c->items), i = 0, j = 0;
  *brows = cb_calloc((nb < nc ? nb : nc) * k + 1, sizeof **brows);
  *crows = cb_calloc((nb < nc ? nb : nc) * k + 1, sizeof **crows);
  *n = 0;
  while (i < nb && j < nc) {
    json_t *x = json_array_get(b->items, i), *y = json_array_get(c->items, j);
    json_int_t xi = json_integer_value(json_object_get(x, "index"));
    json_int_t yi = json_integer_value(json_object_get(y, "index"));
    if (xi < yi) { i++; continue; }
    if (yi < xi) { j++; continue; }
    const char *xid = json_string_value(json_object_get(x, "id"));
    const char *yid = json_string_value(json_object_get(y, "id"));
    if (!xid || !yid || strcmp(xid, yid))
      return cb_error_set(err, CB_ERR_INVALID,
                          "request %lld is item '%s' in %s but '%s' in %s: not the same dataset "
                          "in the same order (same --dataset and --seed?)", (long long)xi,
                          xid ? xid : "?", b->path, yid ? yid : "?", c->path);
    cb_status st = CB_OK;
    int rb = item_row(b, sc, x, k, *brows + *n * k, &st, err);
    int rc = rb < 0 ? 0 : item_row(c, sc, y, k, *crows + *n * k, &st, err);
    if (rb < 0 || rc < 0) return st;
    if (!rb && !rc) (*n)++;
    i++;
    j++;
  }
  if (!*n)
    return cb_error_set(err, CB_ERR_NOT_FOUND, "no request of %s pairs with one of %s%s", c->path,
                        b->path, sc->m ? "" : " graded on both sides");
  return CB_OK;
}

static double score_of(const scorer *sc, const double *sum) {
  if (!sc->m) return sum[0] / sum[1];
  cb_eval_sig_info sig = {.nrefs = "1"};
  cb_eval_result r = {0};
  sc->m->result(sc->state, sum, &sig, &r);
  double s = r.score;
  cb_eval_result_free(&r);
  return s;
}

cb_status cb_eval_run_paired(const char *baseline_dir, const char *current_dir,
                             const char *metric, const char *class_name, size_t resamples,
                             double confidence, uint64_t seed, cb_eval_run_pair *out,
                             cb_error *err) {
  memset(out, 0, sizeof *out);
  int judge = !strncmp(metric, "judge:", 6);
  scorer score = {.m = judge ? NULL : cb_eval_metric_find(metric), .metric = metric};
  if (!judge && !score.m) return cb_error_set(err, CB_ERR_NOT_FOUND, "no metric '%s'", metric);
  if (!resamples) return cb_error_set(err, CB_ERR_INVALID, "paired bootstrap: no resamples");
  side b = {0}, c = {0};
  double *brows = NULL, *crows = NULL, *diffs = NULL, *changes = NULL, *sb = NULL, *sc = NULL;
  cb_eval_options opts = {0};
  size_t n = 0, k = 2; /* a judge's row: (grade, 1) */
  cb_status st = load_side(&b, baseline_dir, class_name, err);
  if (!st) st = load_side(&c, current_dir, class_name, err);
  if (judge) {
    /* Grades compare on one scale; the metric options (tokenizers...) do not apply. */
    json_t *bs = json_object_get(json_object_get(json_object_get(b.doc, "metrics"), metric), "scale");
    json_t *cs = json_object_get(json_object_get(json_object_get(c.doc, "metrics"), metric), "scale");
    if (!st && (!bs || !cs))
      st = cb_error_at(err, CB_ERR_NOT_FOUND, bs ? c.path : b.path, 0, 0,
                       "field 'metrics.%s.scale' missing (was %s scored?)", metric, metric);
    else if (!st && !json_equal(bs, cs))
      st = cb_error_set(err, CB_ERR_INVALID, "%s and %s grade %s on different scales", b.path,
                        c.path, metric);
  } else {
    /* Both sides scored with the same settings, which the comparison uses. */
    json_t *bo = b.doc ? json_object_get(b.doc, "options") : NULL;
    json_t *co = c.doc ? json_object_get(c.doc, "options") : NULL;
    if (!st && (json_object_size(bo) || json_object_size(co)) && !(bo && co && json_equal(bo, co)))
      st = cb_error_set(err, CB_ERR_INVALID, "%s and %s were scored with different metric options",
                        b.path, c.path);
    if (!st && bo) st = cb__eval_options_from_json(bo, &opts, err);
    if (!st) st = score.m->create(&opts, &score.state, err);
    k = score.state ? score.m->n_stats(score.state) : 0;
  }
  if (!st) st = pair_items(&b, &c, &score, k, &brows, &crows, &n, err);
  if (!st) {
    int higher = judge || cb_eval_metric_higher_is_better(metric);
    sb = cb_calloc(k, sizeof *sb);
    sc = cb_calloc(k, sizeof *sc);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < k; j++) {
        sb[j] += brows[i * k + j];
        sc[j] += crows[i * k + j];
      }
    out->baseline = score_of(&score, sb);
    out->current = score_of(&score, sc);
    out->n = n;
    double observed = higher ? out->baseline - out->current : out->current - out->baseline;
    diffs = cb_calloc(resamples, sizeof *diffs);
    changes = cb_calloc(resamples, sizeof *changes);
    cb_rng rng;
    cb_rng_init(&rng, seed);
    double mean = 0;
    for (size_t r = 0; r < resamples; r++) {
      memset(sb, 0, k * sizeof *sb);
      memset(sc, 0, k * sizeof *sc);
      for (size_t i = 0; i < n; i++) {
        size_t pick = (size_t)cb_rng_below(&rng, n);
        for (size_t j = 0; j < k; j++) {
          sb[j] += brows[pick * k + j];
          sc[j] += crows[pick * k + j];
        }
      }
      double x = score_of(&score, sb), y = score_of(&score, sc);
      changes[r] = y - x;
      diffs[r] = higher ? x - y : y - x;
      mean += diffs[r];
    }
    mean /= (double)resamples;
    size_t count = 0;
    for (size_t r = 0; r < resamples; r++) count += diffs[r] - mean >= observed;
    out->p_value = (double)(count + 1) / (double)(resamples + 1);
    qsort(changes, resamples, sizeof *changes, cb__eval_cmp_double);
    double tail = (1 - confidence) / 2;
    size_t lo = (size_t)floor(tail * (double)(resamples - 1));
    size_t hi = (size_t)ceil((1 - tail) * (double)(resamples - 1));
    out->ci_low = changes[lo];
    out->ci_high = changes[hi < resamples ? hi : resamples - 1];
  }
  if (score.state) score.m->destroy(score.state);
  cb_free(opts.v);
  cb_free(brows);
  cb_free(crows);
  cb_free(diffs);
  cb_free(changes);
  cb_free(sb);
  cb_free(sc);
  json_decref(b.items);
  json_decref(b.doc);
  json_decref(c.items);
  json_decref(c.doc);
  return st;
}
