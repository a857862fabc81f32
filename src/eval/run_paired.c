/*
 * run_paired.c - two `eval run`s compared item by item (eval_run.h,
 * cb_eval_run_paired): the gate's paired-bootstrap test of a quality metric.
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

/* items[i].stats[metric] into row[0..k). */
static cb_status stats_row(const side *s, json_t *item, const char *metric, size_t k, double *row,
                           cb_error *err) {
  json_t *v = json_object_get(json_object_get(item, "stats"), metric);
  if (!json_is_array(v) || json_array_size(v) != k)
    return cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0,
                       "item %lld: field 'stats.%s': expected %zu numbers (was %s scored?)",
                       (long long)json_integer_value(json_object_get(item, "index")), metric, k,
                       metric);
  for (size_t j = 0; j < k; j++) {
    json_t *x = json_array_get(v, j);
    if (!json_is_number(x))
      return cb_error_at(err, CB_ERR_PARSE, s->path, 0, 0, "field 'stats.%s': expected numbers",
                         metric);
    row[j] = json_number_value(x);
  }
  return CB_OK;
}

/* The items both runs answered, paired by index: rows (n x k) for each side. */
static cb_status pair_items(const side *b, const side *c, const char *metric, size_t k,
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
    cb_status st = stats_row(b, x, metric, k, *brows + *n * k, err);
    if (!st) st = stats_row(c, y, metric, k, *crows + *n * k, err);
    if (st) return st;
    (*n)++;
    i++;
    j++;
  }
  if (!*n)
    return cb_error_set(err, CB_ERR_NOT_FOUND, "no request of %s pairs with one of %s", c->path,
                        b->path);
  return CB_OK;
}

static double score_of(const cb_eval_metric *m, void *state, const double *sum) {
  cb_eval_sig_info sig = {.nrefs = "1"};
  cb_eval_result r = {0};
  m->result(state, sum, &sig, &r);
  double s = r.score;
  cb_eval_result_free(&r);
  return s;
}

cb_status cb_eval_run_paired(const char *baseline_dir, const char *current_dir,
                             const char *metric, const char *class_name, size_t resamples,
                             double confidence, uint64_t seed, cb_eval_run_pair *out,
                             cb_error *err) {
  memset(out, 0, sizeof *out);
  const cb_eval_metric *m = cb_eval_metric_find(metric);
  if (!m) return cb_error_set(err, CB_ERR_NOT_FOUND, "no metric '%s'", metric);
  if (!resamples) return cb_error_set(err, CB_ERR_INVALID, "paired bootstrap: no resamples");
  side b = {0}, c = {0};
  double *brows = NULL, *crows = NULL, *diffs = NULL, *changes = NULL, *sb = NULL, *sc = NULL;
  void *state = NULL;
  cb_eval_options opts = {0};
  size_t n = 0;
  cb_status st = load_side(&b, baseline_dir, class_name, err);
  if (!st) st = load_side(&c, current_dir, class_name, err);
  /* Both sides scored with the same settings, which the comparison uses. */
  json_t *bo = b.doc ? json_object_get(b.doc, "options") : NULL;
  json_t *co = c.doc ? json_object_get(c.doc, "options") : NULL;
  if (!st && (json_object_size(bo) || json_object_size(co)) && !(bo && co && json_equal(bo, co)))
    st = cb_error_set(err, CB_ERR_INVALID, "%s and %s were scored with different metric options",
                      b.path, c.path);
  if (!st && bo) st = cb__eval_options_from_json(bo, &opts, err);
  if (!st) st = m->create(&opts, &state, err);
  size_t k = state ? m->n_stats(state) : 0;
  if (!st) st = pair_items(&b, &c, metric, k, &brows, &crows, &n, err);
  if (!st) {
    int higher = cb_eval_metric_higher_is_better(metric);
    sb = cb_calloc(k, sizeof *sb);
    sc = cb_calloc(k, sizeof *sc);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < k; j++) {
        sb[j] += brows[i * k + j];
        sc[j] += crows[i * k + j];
      }
    out->baseline = score_of(m, state, sb);
    out->current = score_of(m, state, sc);
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
      double x = score_of(m, state, sb), y = score_of(m, state, sc);
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
  if (state) m->destroy(state);
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
