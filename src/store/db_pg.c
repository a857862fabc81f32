/*
 * db_pg.c - the PostgreSQL driver of the registry (libpq): the same SQL as SQLite with
 * '?' placeholders renumbered $1..$n, text parameters and text results, notices
 * silenced, and the write lock a transaction-scoped advisory lock so concurrent
 * `calibench store` runs queue instead of colliding. Messages never carry the password
 * of the connection URL.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/secret.h"
#include "store_internal.h"
#include "util/pq_api.h"

/* Arbitrary, fixed: the key of calibench's advisory lock. */
#define CB_PG_LOCK_KEY 7310251

typedef struct pg {
  cb__db base;
  PGconn *c;
  char where[512]; /* the URL without its password, for messages */
} pg;

static void ignore_notice(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

static char *number_placeholders(const char *sql) {
  cb_buf b = {0};
  int k = 0;
  for (const char *p = sql; *p; p++) {
    if (*p == '?') cb_buf_appendf(&b, "$%d", ++k);
    else cb_buf_append_char(&b, *p);
  }
  return b.data;
}

static cb_status pg_exec(cb__db *db, const char *sql, const char *const *params, size_t n,
                         cb__db_result *res, cb_error *err) {
  pg *d = (pg *)db;
  if (res) memset(res, 0, sizeof *res);
  char *q = number_placeholders(sql);
  PGresult *r = cb__pq.PQexecParams(d->c, q, (int)n, NULL, params, NULL, NULL, 0);
  cb_free(q);
  ExecStatusType s = cb__pq.PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    const char *why = cb__pq.PQresultErrorMessage(r);
    cb_status st = cb_error_set(err, CB_ERR_IO, "registry %s: %s", d->where,
                                why[0] ? why : cb__pq.PQerrorMessage(d->c));
    /* libpq messages end in a newline */
    size_t len = err ? strlen(err->msg) : 0;
    if (len && err->msg[len - 1] == '\n') err->msg[len - 1] = '\0';
    cb__pq.PQclear(r);
    return st;
  }
  if (res && s == PGRES_TUPLES_OK) {
    res->rows = (size_t)cb__pq.PQntuples(r);
    res->cols = (size_t)cb__pq.PQnfields(r);
    res->cells = cb_calloc(res->rows * res->cols + 1, sizeof *res->cells);
    for (size_t i = 0; i < res->rows; i++)
      for (size_t c = 0; c < res->cols; c++)
        if (!cb__pq.PQgetisnull(r, (int)i, (int)c))
          res->cells[i * res->cols + c] = cb_strdup(cb__pq.PQgetvalue(r, (int)i, (int)c));
  }
  cb__pq.PQclear(r);
  return CB_OK;
}

static cb_status pg_begin(cb__db *db, int write, cb_error *err) {
  cb_status st = pg_exec(db, "BEGIN", NULL, 0, NULL, err);
  if (st != CB_OK || !write) return st;
  char sql[64];
  snprintf(sql, sizeof sql, "SELECT pg_advisory_xact_lock(%d)", CB_PG_LOCK_KEY);
  st = pg_exec(db, sql, NULL, 0, NULL, err);
  if (st != CB_OK) pg_exec(db, "ROLLBACK", NULL, 0, NULL, NULL);
  return st;
}

static void pg_close(cb__db *db) {
  pg *d = (pg *)db;
  cb__pq.PQfinish(d->c);
  cb_free(d);
}

static const cb__db_ops pg_ops = {"postgresql", pg_exec, pg_begin, pg_close};

cb_status cb__db_pg_open(const char *url, cb__db **out, cb_error *err) {
  cb_status loaded = cb__pq_load(err);
  if (loaded != CB_OK) return loaded;
  pg *d = cb_calloc(1, sizeof *d);
  d->base.ops = &pg_ops;
  cb_secret_mask_url(url, d->where, sizeof d->where);
  d->c = cb__pq.PQconnectdb(url);
  if (!d->c || cb__pq.PQstatus(d->c) != CONNECTION_OK) {
    cb_status st = cb_error_set(err, CB_ERR_IO, "registry %s: cannot connect: %s", d->where,
                                d->c ? cb__pq.PQerrorMessage(d->c) : "out of memory");
    size_t len = err ? strlen(err->msg) : 0;
    while (len && (err->msg[len - 1] == '\n' || err->msg[len - 1] == ' ')) err->msg[--len] = '\0';
    pg_close(&d->base);
    return st;
  }
  cb__pq.PQsetNoticeProcessor(d->c, ignore_notice, NULL);
  *out = &d->base;
  return CB_OK;
}
