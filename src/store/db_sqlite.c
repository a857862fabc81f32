/*
 * db_sqlite.c - the SQLite driver of the registry: one connection, a 10 s busy
 * timeout so concurrent writers wait for each other, and SQLite's default rollback
 * journal, which makes every transaction atomic across crashes and power loss.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "store_internal.h"
#include "util/sqlite_api.h"

typedef struct sq {
  cb__db base;
  sqlite3 *h;
  char path[1024];
} sq;

void cb__db_result_free(cb__db_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->rows * r->cols; i++) cb_free(r->cells[i]);
  cb_free(r->cells);
  memset(r, 0, sizeof *r);
}

static cb_status sq_error(sq *d, cb_error *err, const char *what) {
  return cb_error_set(err, CB_ERR_IO, "registry %s: %s: %s", d->path, what, cb__sqlite.sqlite3_errmsg(d->h));
}

static char *cell_text(sqlite3_stmt *st, int col) {
  switch (cb__sqlite.sqlite3_column_type(st, col)) {
    case SQLITE_NULL: return NULL;
    case SQLITE_FLOAT: {
      char buf[40];
      snprintf(buf, sizeof buf, "%.17g", cb__sqlite.sqlite3_column_double(st, col));
      return cb_strdup(buf);
    }
    default: {
      const unsigned char *t = cb__sqlite.sqlite3_column_text(st, col);
      return cb_strndup((const char *)t, (size_t)cb__sqlite.sqlite3_column_bytes(st, col));
    }
  }
}

static cb_status sq_exec(cb__db *db, const char *sql, const char *const *params, size_t n,
                         cb__db_result *res, cb_error *err) {
  sq *d = (sq *)db;
  sqlite3_stmt *st;
  if (res) memset(res, 0, sizeof *res);
  if (cb__sqlite.sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sq_error(d, err, "prepare");
  for (size_t i = 0; i < n; i++) {
    int rc = params[i] ? cb__sqlite.sqlite3_bind_text(st, (int)i + 1, params[i], -1, SQLITE_STATIC)
                       : cb__sqlite.sqlite3_bind_null(st, (int)i + 1);
    if (rc != SQLITE_OK) {
      cb__sqlite.sqlite3_finalize(st);
      return sq_error(d, err, "bind");
    }
  }
  size_t alloc = 0;
  int rc;
  while ((rc = cb__sqlite.sqlite3_step(st)) == SQLITE_ROW) {
    if (!res) continue;
    size_t cols = (size_t)cb__sqlite.sqlite3_column_count(st);
    res->cols = cols;
    if ((res->rows + 1) * cols > alloc) {
      alloc = alloc ? 2 * alloc : 16 * cols;
      res->cells = cb_reallocarray(res->cells, alloc, sizeof *res->cells);
    }
    for (size_t c = 0; c < cols; c++) res->cells[res->rows * cols + c] = cell_text(st, (int)c);
    res->rows++;
  }
  if (rc != SQLITE_DONE) {
    cb_status s = sq_error(d, err, "step");
    cb__sqlite.sqlite3_finalize(st);
    cb__db_result_free(res);
    return s;
  }
  if (res && !res->rows) res->cols = (size_t)cb__sqlite.sqlite3_column_count(st);
  cb__sqlite.sqlite3_finalize(st);
  return CB_OK;
}

static cb_status sq_begin(cb__db *db, int write, cb_error *err) {
  return sq_exec(db, write ? "BEGIN IMMEDIATE" : "BEGIN", NULL, 0, NULL, err);
}

static void sq_close(cb__db *db) {
  sq *d = (sq *)db;
  cb__sqlite.sqlite3_close(d->h);
  cb_free(d);
}

static const cb__db_ops sq_ops = {"sqlite", sq_exec, sq_begin, sq_close};

cb_status cb__db_sqlite_open(const char *path, int create, cb__db **out, cb_error *err) {
  cb_status loaded = cb__sqlite_load(err);
  if (loaded != CB_OK) return loaded;
  struct stat stt;
  if (!create && stat(path, &stt) != 0)
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "registry %s: %s (record runs with `calibench store` first)", path,
                        strerror(errno));
  sq *d = cb_calloc(1, sizeof *d);
  d->base.ops = &sq_ops;
  snprintf(d->path, sizeof d->path, "%s", path);
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (cb__sqlite.sqlite3_open_v2(path, &d->h, flags, NULL) != SQLITE_OK) {
    cb_status s = cb_error_set(err, CB_ERR_IO, "registry %s: cannot open: %s", path,
                               d->h ? cb__sqlite.sqlite3_errmsg(d->h) : "out of memory");
    cb__sqlite.sqlite3_close(d->h);
    cb_free(d);
    return s;
  }
  cb__sqlite.sqlite3_busy_timeout(d->h, 10000);
  cb_status s = sq_exec(&d->base, "PRAGMA foreign_keys = ON", NULL, 0, NULL, err);
  if (s == CB_OK) {
    /* A file that is not a database fails here, with SQLite's own words. */
    s = sq_exec(&d->base, "SELECT count(*) FROM sqlite_master", NULL, 0, NULL, err);
  }
  if (s != CB_OK) {
    sq_close(&d->base);
    return s;
  }
  *out = &d->base;
  return CB_OK;
}
