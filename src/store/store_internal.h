/*
 * store_internal.h - what the store module's files share: the records -> samples
 * step, the database driver interface (one per backend: db_sqlite.c, db_pg.c), the
 * migrations and the handle.
 */
#ifndef CALIBENCH_STORE_INTERNAL_H
#define CALIBENCH_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/results.h"
#include "calibench/store.h"

/* Per-request samples of one class (NULL = every record) of a record set, appended to
 * r; throughput bins cover [win_start, win_end] (ns from the origin; none if empty). */
void cb__run_samples_from_records(cb_run_data *r, const cb_record_set *set,
                                  const char *class_name, uint64_t win_start,
                                  uint64_t win_end);

/* The quality.* values of DIR/eval.json (`eval run`), whole run and each scored class,
 * appended to r; nothing when the file is absent. Errors name the file and field. */
cb_status cb__run_quality_load(cb_run_data *r, const char *dir, cb_error *err);
/* The probe.<probe>.<metric> values of DIR/probe.json (`probe`, docs/probe.md), each
 * with its direction; nothing when the file is absent. Errors name the file and field. */
cb_status cb__run_probe_load(cb_run_data *r, const char *dir, cb_error *err);

/* ---- the driver -------------------------------------------------------------------- */

/*
 * A query's result: rows x cols cells of text, NULL for SQL NULL. REAL/double columns
 * come back as "%.17g" text (SQLite) or PostgreSQL's shortest exact text, so doubles
 * survive the round trip. Owned; free with cb__db_result_free.
 */
typedef struct cb__db_result {
  size_t rows, cols;
  char **cells; /* rows * cols */
} cb__db_result;

void cb__db_result_free(cb__db_result *r);
static inline const char *cb__db_cell(const cb__db_result *r, size_t row, size_t col) {
  return r->cells[row * r->cols + col];
}

typedef struct cb__db cb__db;

/*
 * SQL is written once, in the dialect both backends accept, with '?' placeholders
 * (the PostgreSQL driver numbers them $1, $2, ...). Parameters are text (NULL = SQL
 * NULL); columns' types convert them. `res` may be NULL when no rows are wanted.
 */
typedef struct cb__db_ops {
  const char *name;
  cb_status (*exec)(cb__db *db, const char *sql, const char *const *params, size_t n_params,
                    cb__db_result *res, cb_error *err);
  /* Begin a transaction; write = 1 takes the registry's write lock at once (SQLite's
   * BEGIN IMMEDIATE; a transaction-scoped advisory lock on PostgreSQL). */
  cb_status (*begin)(cb__db *db, int write, cb_error *err);
  void (*close)(cb__db *db);
} cb__db_ops;

struct cb__db {
  const cb__db_ops *ops;
};

cb_status cb__db_sqlite_open(const char *path, int create, cb__db **out, cb_error *err);
cb_status cb__db_pg_open(const char *url, cb__db **out, cb_error *err);

/* ---- the handle ------------------------------------------------------------------- */

struct cb_store {
  cb__db *db;
  int schema_version;
  long fault_after; /* write statements left before an injected fault; < 0 = none */
  int fault_crash;
  int in_tx;
};

/* Run one statement (exec with the fault hook applied to writes). */
cb_status cb__store_exec(cb_store *s, const char *sql, const char *const *params, size_t n,
                         cb__db_result *res, cb_error *err);
cb_status cb__store_write(cb_store *s, const char *sql, const char *const *params, size_t n,
                          cb_error *err);
cb_status cb__store_begin(cb_store *s, int write, cb_error *err);
cb_status cb__store_commit(cb_store *s, cb_error *err);
void cb__store_rollback(cb_store *s);

/* Create or migrate the schema to CB_STORE_SCHEMA_VERSION. */
cb_status cb__store_migrate(cb_store *s, cb_error *err);

/* "2026-01-31T12:00:00.000Z" now. */
void cb__store_now_utc(char *out, size_t n);

#endif
