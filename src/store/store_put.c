/*
 * store_put.c - recording runs. All runs of one call go in one write transaction, so a
 * failure or a crash anywhere leaves the registry as it was (the test suite kills a
 * store mid-transaction to check). Idempotent by run id: a run stored again with the
 * same tags, manifest and summary is left alone; with different ones it is replaced in
 * place (keeping its sequence number). Samples are only ever added: storing a run
 * again without them keeps the ones stored.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "store_internal.h"

/* Rows per multi-row INSERT (fewer round trips to PostgreSQL). */
#define BATCH 64

const char *cb_store_outcome_name(cb_store_outcome o) {
  switch (o) {
    case CB_STORE_ADDED: return "added";
    case CB_STORE_UNCHANGED: return "unchanged";
    default: return "replaced";
  }
}

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h * 1099511628211ull; /* separator */
}

static void content_hash(const cb_run_data *r, const char *tags, char out[17]) {
  uint64_t h = 1469598103934665603ull;
  h = fnv1a(h, tags);
  h = fnv1a(h, r->manifest_json);
  h = fnv1a(h, r->summary_json);
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* INSERT INTO table (cols) VALUES (?,..),(?,..) for rows of `ncols` params each. */
static cb_status insert_rows(cb_store *s, const char *head, size_t ncols, const char **params,
                             size_t rows, cb_error *err) {
  for (size_t start = 0; start < rows; start += BATCH) {
    size_t k = rows - start < BATCH ? rows - start : BATCH;
    cb_buf sql = {0};
    cb_buf_append_str(&sql, head);
    for (size_t i = 0; i < k; i++) {
      cb_buf_append_str(&sql, i ? ",(" : " VALUES (");
      for (size_t c = 0; c < ncols; c++) cb_buf_append_str(&sql, c ? ",?" : "?");
      cb_buf_append_char(&sql, ')');
    }
    cb_status st = cb__store_write(s, sql.data, params + start * ncols, k * ncols, err);
    cb_buf_free(&sql);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

static char *encode_samples(const double *v, size_t n) {
  cb_buf b = {0};
  for (size_t i = 0; i < n; i++) cb_buf_appendf(&b, i ? " %.17g" : "%.17g", v[i]);
  if (!b.data) cb_buf_append_str(&b, "");
  return b.data;
}

static cb_status put_children(cb_store *s, const cb_run_data *r, int samples, cb_error *err) {
  const char *id = r->run_id;
  cb_status st = CB_OK;
  /* tags */
  const char **p = cb_calloc(3 * (r->tags.count + 1), sizeof *p);
  for (size_t i = 0; i < r->tags.count; i++) {
    p[3 * i] = id;
    p[3 * i + 1] = r->tags.items[i].key;
    p[3 * i + 2] = r->tags.items[i].value;
  }
  if (r->tags.count)
    st = insert_rows(s, "INSERT INTO run_tags (run_id, key, value)", 3, p, r->tags.count, err);
  cb_free(p);
  if (st != CB_OK) return st;
  /* metric values */
  char(*num)[32] = cb_calloc(r->n_values + 1, sizeof *num);
  p = cb_calloc(4 * (r->n_values + 1), sizeof *p);
  for (size_t i = 0; i < r->n_values; i++) {
    snprintf(num[i], sizeof num[i], "%.17g", r->values[i].value);
    p[4 * i] = id;
    p[4 * i + 1] = r->values[i].class_name;
    p[4 * i + 2] = r->values[i].metric->name;
    p[4 * i + 3] = num[i];
  }
  if (r->n_values)
    st = insert_rows(s, "INSERT INTO run_metrics (run_id, class, metric, value)", 4, p,
                     r->n_values, err);
  cb_free(p);
  cb_free(num);
  if (st != CB_OK || !samples) return st;
  /* samples, one row each (they can be large) */
  for (size_t i = 0; i < r->n_samples && st == CB_OK; i++) {
    const cb_run_samples *x = &r->samples[i];
    char n[32];
    snprintf(n, sizeof n, "%zu", x->n);
    char *data = encode_samples(x->values, x->n);
    const char *q[] = {id, x->class_name, x->name, n, data};
    st = cb__store_write(s, "INSERT INTO run_samples (run_id, class, sample, n, data) "
                            "VALUES (?, ?, ?, ?, ?)", q, 5, err);
    cb_free(data);
  }
  return st;
}

static cb_status put_one(cb_store *s, const cb_run_data *r, cb_store_outcome *outcome,
                         cb_error *err) {
  char tags[CB_TAGS_TEXT_MAX], series_text[CB_TAGS_TEXT_MAX], hash[17];
  cb_tags series;
  cb_tags_format(&r->tags, tags, sizeof tags);
  cb_tags_series(&r->tags, &series);
  cb_tags_format(&series, series_text, sizeof series_text);
  content_hash(r, tags, hash);
  const char *id[] = {r->run_id};
  cb__db_result res;
  cb_status st = cb__store_exec(s, "SELECT seq, content_hash, has_samples FROM runs WHERE run_id = ?",
                                id, 1, &res, err);
  if (st != CB_OK) return st;
  char seq[32], now[40];
  int exists = res.rows > 0, stored_samples = 0;
  if (exists) {
    snprintf(seq, sizeof seq, "%s", cb__db_cell(&res, 0, 0));
    stored_samples = atoi(cb__db_cell(&res, 0, 2));
    int same = !strcmp(cb__db_cell(&res, 0, 1), hash);
    cb__db_result_free(&res);
    if (same && (stored_samples || !r->has_samples)) {
      *outcome = CB_STORE_UNCHANGED;
      return CB_OK;
    }
    *outcome = CB_STORE_REPLACED;
  } else {
    cb__db_result_free(&res);
    st = cb__store_exec(s, "SELECT COALESCE(MAX(seq), 0) + 1 FROM runs", NULL, 0, &res, err);
    if (st != CB_OK) return st;
    snprintf(seq, sizeof seq, "%s", cb__db_cell(&res, 0, 0));
    cb__db_result_free(&res);
    *outcome = CB_STORE_ADDED;
  }
  cb__store_now_utc(now, sizeof now);
  const char *has = r->has_samples || stored_samples ? "1" : "0";
  const char *src = r->source ? r->source : "";
  const char *interrupted = r->interrupted ? "1" : "0";
  const char *mj = r->manifest_json ? r->manifest_json : "{}";
  const char *sj = r->summary_json ? r->summary_json : "{}";
  if (exists) {
    st = cb__store_write(s, "DELETE FROM run_tags WHERE run_id = ?", id, 1, err);
    if (st == CB_OK) st = cb__store_write(s, "DELETE FROM run_metrics WHERE run_id = ?", id, 1, err);
    if (st == CB_OK && r->has_samples)
      st = cb__store_write(s, "DELETE FROM run_samples WHERE run_id = ?", id, 1, err);
    const char *p[] = {now, r->start_utc, r->end_utc, r->workload_hash, r->point, tags,
                       series_text, interrupted, has, hash, src, mj, sj, r->run_id};
    if (st == CB_OK)
      st = cb__store_write(s,
                           "UPDATE runs SET stored_utc = ?, start_utc = ?, end_utc = ?, "
                           "workload_hash = ?, point = ?, tags = ?, series = ?, interrupted = ?, "
                           "has_samples = ?, content_hash = ?, source = ?, manifest_json = ?, "
                           "summary_json = ? WHERE run_id = ?", p, 14, err);
  } else {
    const char *p[] = {r->run_id, seq, now, r->start_utc, r->end_utc, r->workload_hash,
                       r->point, tags, series_text, interrupted, has, hash, src, mj, sj};
    st = cb__store_write(s,
                         "INSERT INTO runs (run_id, seq, stored_utc, start_utc, end_utc, "
                         "workload_hash, point, tags, series, interrupted, has_samples, "
                         "content_hash, source, manifest_json, summary_json) VALUES "
                         "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", p, 15, err);
  }
  if (st == CB_OK) st = put_children(s, r, r->has_samples, err);
  return st;
}

cb_status cb_store_put(cb_store *s, const cb_run_data *runs, size_t n,
                       cb_store_outcome *outcomes, cb_error *err) {
  cb_status st = cb__store_begin(s, 1, err);
  if (st != CB_OK) return st;
  for (size_t i = 0; i < n && st == CB_OK; i++) {
    cb_store_outcome o;
    st = put_one(s, &runs[i], &o, err);
    if (st != CB_OK) cb_error_wrap(err, "storing run %s", runs[i].run_id);
    else if (outcomes) outcomes[i] = o;
  }
  if (st == CB_OK) return cb__store_commit(s, err);
  cb__store_rollback(s);
  return st;
}
