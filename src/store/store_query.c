/*
 * store_query.c - reading the registry: one stored run back as run data, and the
 * history of metrics over the runs a filter selects (by tags, by series, newest N).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "store_internal.h"

static const char *cell(const cb__db_result *r, size_t row, size_t col) {
  const char *c = cb__db_cell(r, row, col);
  return c ? c : "";
}

static double *decode_samples(const char *text, size_t n) {
  double *v = cb_malloc((n ? n : 1) * sizeof *v);
  const char *p = text;
  for (size_t i = 0; i < n; i++) {
    char *end;
    v[i] = strtod(p, &end);
    if (end == p) v[i] = NAN;
    p = end;
  }
  return v;
}

cb_status cb_store_get(cb_store *s, const char *run_id, int samples, cb_run_data *out,
                       cb_error *err) {
  cb_run_data_init(out);
  const char *id[] = {run_id};
  cb__db_result r;
  cb_status st = cb__store_exec(s,
                                "SELECT start_utc, end_utc, workload_hash, point, tags, "
                                "interrupted, has_samples, manifest_json, summary_json "
                                "FROM runs WHERE run_id = ?", id, 1, &r, err);
  if (st != CB_OK) return st;
  if (!r.rows) {
    cb__db_result_free(&r);
    return cb_error_set(err, CB_ERR_NOT_FOUND, "run '%s' is not in the registry", run_id);
  }
  snprintf(out->run_id, sizeof out->run_id, "%s", run_id);
  snprintf(out->start_utc, sizeof out->start_utc, "%s", cell(&r, 0, 0));
  snprintf(out->end_utc, sizeof out->end_utc, "%s", cell(&r, 0, 1));
  snprintf(out->workload_hash, sizeof out->workload_hash, "%s", cell(&r, 0, 2));
  snprintf(out->point, sizeof out->point, "%s", cell(&r, 0, 3));
  st = cb_tags_parse(&out->tags, cell(&r, 0, 4), err);
  out->interrupted = atoi(cell(&r, 0, 5));
  int has_samples = atoi(cell(&r, 0, 6));
  out->manifest_json = cb_strdup(cell(&r, 0, 7));
  out->summary_json = cb_strdup(cell(&r, 0, 8));
  cb__db_result_free(&r);
  if (st == CB_OK)
    st = cb__store_exec(s, "SELECT class, metric, value FROM run_metrics WHERE run_id = ?", id, 1,
                        &r, err);
  if (st == CB_OK) {
    for (size_t i = 0; i < r.rows; i++) {
      const cb_store_metric *m = cb_store_metric_find(cell(&r, i, 1));
      if (m) cb_run_data_add_value(out, cell(&r, i, 0), m, strtod(cell(&r, i, 2), NULL));
    }
    cb__db_result_free(&r);
  }
  if (st == CB_OK && samples && has_samples) {
    st = cb__store_exec(s, "SELECT class, sample, n, data FROM run_samples WHERE run_id = ?", id,
                        1, &r, err);
    if (st == CB_OK) {
      for (size_t i = 0; i < r.rows; i++) {
        size_t n = (size_t)strtoull(cell(&r, i, 2), NULL, 10);
        cb_run_data_add_samples(out, cell(&r, i, 0), cell(&r, i, 1),
                                decode_samples(cell(&r, i, 3), n), n);
      }
      out->has_samples = 1;
      cb__db_result_free(&r);
    }
  }
  if (st != CB_OK) cb_run_data_free(out);
  return st;
}

void cb_history_free(cb_history *h) {
  for (size_t i = 0; i < h->count; i++) cb_free(h->rows[i].values);
  cb_free(h->rows);
  h->rows = NULL;
  h->count = 0;
}

cb_status cb_store_history(cb_store *s, const char *const *metrics, size_t n_metrics,
                           const char *class_name, const cb_store_filter *f, cb_history *out,
                           cb_error *err) {
  out->rows = NULL;
  out->count = 0;
  for (size_t k = 0; k < n_metrics; k++) {
    const cb_store_metric *m;
    cb_status st = cb_store_metric_lookup(metrics[k], &m, err);
    if (st != CB_OK) return st;
  }
  size_t n_where = f && f->where ? f->where->count : 0;
  const char **p = cb_calloc(4 + 2 * n_where + n_metrics, sizeof *p);
  size_t np = 0;
  cb_buf sql = {0};
  cb_buf_append_str(&sql, "SELECT r.run_id, r.start_utc, r.tags, m.metric, m.value FROM "
                          "(SELECT run_id, start_utc, tags, seq FROM runs WHERE 1 = 1");
  if (f && f->series) {
    cb_buf_append_str(&sql, " AND series = ?");
    p[np++] = f->series;
  }
  if (f && f->exclude_run) {
    cb_buf_append_str(&sql, " AND run_id <> ?");
    p[np++] = f->exclude_run;
  }
  for (size_t i = 0; i < n_where; i++) {
    cb_buf_append_str(&sql, " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.run_id"
                            " AND t.key = ? AND t.value = ?)");
    p[np++] = f->where->items[i].key;
    p[np++] = f->where->items[i].value;
  }
  cb_buf_append_str(&sql, " ORDER BY start_utc DESC, seq DESC");
  if (f && f->last) cb_buf_appendf(&sql, " LIMIT %zu", f->last);
  cb_buf_append_str(&sql, ") r LEFT JOIN run_metrics m ON m.run_id = r.run_id AND m.class = ?");
  p[np++] = class_name ? class_name : "";
  cb_buf_append_str(&sql, " AND m.metric IN (");
  for (size_t k = 0; k < n_metrics; k++) {
    cb_buf_append_str(&sql, k ? ", ?" : "?");
    p[np++] = metrics[k];
  }
  if (!n_metrics) cb_buf_append_str(&sql, "''");
  cb_buf_append_str(&sql, ") ORDER BY r.start_utc, r.seq");
  cb__db_result r;
  cb_status st = cb__store_exec(s, sql.data, p, np, &r, err);
  cb_buf_free(&sql);
  cb_free(p);
  if (st != CB_OK) return st;
  out->rows = cb_calloc(r.rows + 1, sizeof *out->rows);
  for (size_t i = 0; i < r.rows; i++) {
    cb_history_row *row = out->count ? &out->rows[out->count - 1] : NULL;
    if (!row || strcmp(row->run_id, cell(&r, i, 0))) {
      row = &out->rows[out->count++];
      snprintf(row->run_id, sizeof row->run_id, "%s", cell(&r, i, 0));
      snprintf(row->start_utc, sizeof row->start_utc, "%s", cell(&r, i, 1));
      snprintf(row->tags, sizeof row->tags, "%s", cell(&r, i, 2));
      row->values = cb_malloc((n_metrics ? n_metrics : 1) * sizeof *row->values);
      for (size_t k = 0; k < n_metrics; k++) row->values[k] = NAN;
    }
    if (!cb__db_cell(&r, i, 3)) continue;
    for (size_t k = 0; k < n_metrics; k++)
      if (!strcmp(metrics[k], cell(&r, i, 3))) row->values[k] = strtod(cell(&r, i, 4), NULL);
  }
  cb__db_result_free(&r);
  return CB_OK;
}

/* ---- gate snapshots ------------------------------------------------------------------ */

cb_status cb_store_snapshot_put(cb_store *s, const cb_store_snapshot *snap, size_t keep,
                                cb_error *err) {
  if (!keep) keep = CB_STORE_SNAPSHOTS_KEPT;
  cb_status st = cb__store_begin(s, 1, err);
  if (st != CB_OK) return st;
  cb__db_result r;
  st = cb__store_exec(s, "SELECT COALESCE(MAX(seq), 0) + 1 FROM gate_snapshots", NULL, 0, &r, err);
  if (st == CB_OK) {
    char seq[32], now[40];
    snprintf(seq, sizeof seq, "%s", cell(&r, 0, 0));
    cb__db_result_free(&r);
    cb__store_now_utc(now, sizeof now);
    const char *created = snap->created_utc[0] ? snap->created_utc : now;
    const char *p[] = {seq, snap->series, snap->run_id, snap->baseline, created, snap->status,
                       snap->result_json ? snap->result_json : "{}"};
    st = cb__store_write(s,
                         "INSERT INTO gate_snapshots (seq, series, run_id, baseline, "
                         "created_utc, status, result_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         p, 7, err);
  }
  if (st == CB_OK) {
    char sql[256];
    snprintf(sql, sizeof sql,
             "DELETE FROM gate_snapshots WHERE series = ? AND seq NOT IN (SELECT seq FROM "
             "gate_snapshots WHERE series = ? ORDER BY seq DESC LIMIT %zu)", keep);
    const char *p[] = {snap->series, snap->series};
    st = cb__store_write(s, sql, p, 2, err);
  }
  if (st == CB_OK) return cb__store_commit(s, err);
  cb__store_rollback(s);
  return st;
}

cb_status cb_store_snapshots(cb_store *s, const char *series, cb_store_snapshot *out,
                             size_t max, size_t *n, cb_error *err) {
  *n = 0;
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT series, run_id, baseline, created_utc, status, result_json FROM "
           "gate_snapshots WHERE series = ? ORDER BY seq DESC LIMIT %zu", max);
  const char *p[] = {series};
  cb__db_result r;
  cb_status st = cb__store_exec(s, sql, p, 1, &r, err);
  if (st != CB_OK) return st;
  for (size_t i = 0; i < r.rows && i < max; i++) {
    cb_store_snapshot *x = &out[(*n)++];
    memset(x, 0, sizeof *x);
    snprintf(x->series, sizeof x->series, "%s", cell(&r, i, 0));
    snprintf(x->run_id, sizeof x->run_id, "%s", cell(&r, i, 1));
    snprintf(x->baseline, sizeof x->baseline, "%s", cell(&r, i, 2));
    snprintf(x->created_utc, sizeof x->created_utc, "%s", cell(&r, i, 3));
    snprintf(x->status, sizeof x->status, "%s", cell(&r, i, 4));
    x->result_json = cb_strdup(cell(&r, i, 5));
  }
  cb__db_result_free(&r);
  return CB_OK;
}

void cb_store_snapshot_free(cb_store_snapshot *snap) {
  cb_free(snap->result_json);
  snap->result_json = NULL;
}
