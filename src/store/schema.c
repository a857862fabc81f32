/*
 * schema.c - the registry's schema and its migrations (docs/internals/store-schema.md).
 *
 * Migration N takes a registry from version N - 1 to N; schema_migrations records each
 * one applied. Opening a registry applies the missing ones in one write-locked
 * transaction, so two processes opening an old registry at once migrate it once, and a
 * failure leaves it at its old version. The SQL is the common subset of SQLite and
 * PostgreSQL: TEXT, INTEGER, BIGINT, DOUBLE PRECISION, no auto-increment (sequence
 * numbers are assigned under the write lock), no backend-specific functions.
 * Never edit a released migration: add one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_internal.h"

typedef struct migration {
  const char *description;
  const char *const *statements; /* NULL-terminated */
} migration;

static const char *const v1[] = {
    "CREATE TABLE runs ("
    " run_id TEXT PRIMARY KEY,"
    " seq BIGINT NOT NULL UNIQUE,"
    " stored_utc TEXT NOT NULL,"
    " start_utc TEXT NOT NULL,"
    " end_utc TEXT NOT NULL,"
    " workload_hash TEXT NOT NULL,"
    " point TEXT NOT NULL,"
    " tags TEXT NOT NULL,"
    " series TEXT NOT NULL,"
    " interrupted INTEGER NOT NULL,"
    " has_samples INTEGER NOT NULL,"
    " content_hash TEXT NOT NULL,"
    " source TEXT NOT NULL,"
    " manifest_json TEXT NOT NULL,"
    " summary_json TEXT NOT NULL)",
    "CREATE INDEX runs_series ON runs (series, start_utc, seq)",
    "CREATE TABLE run_tags ("
    " run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,"
    " key TEXT NOT NULL,"
    " value TEXT NOT NULL,"
    " PRIMARY KEY (run_id, key))",
    "CREATE INDEX run_tags_kv ON run_tags (key, value)",
    "CREATE TABLE run_metrics ("
    " run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,"
    " class TEXT NOT NULL,"
    " metric TEXT NOT NULL,"
    " value DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (run_id, class, metric))",
    "CREATE INDEX run_metrics_metric ON run_metrics (metric, class)",
    "CREATE TABLE run_samples ("
    " run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,"
    " class TEXT NOT NULL,"
    " sample TEXT NOT NULL,"
    " n BIGINT NOT NULL,"
    " data TEXT NOT NULL,"
    " PRIMARY KEY (run_id, class, sample))",
    NULL};

static const char *const v2[] = {
    "CREATE TABLE gate_snapshots ("
    " seq BIGINT PRIMARY KEY,"
    " series TEXT NOT NULL,"
    " run_id TEXT NOT NULL,"
    " baseline TEXT NOT NULL,"
    " created_utc TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " result_json TEXT NOT NULL)",
    "CREATE INDEX gate_snapshots_series ON gate_snapshots (series, seq)",
    NULL};

static const migration migrations[] = {
    {"runs, tags, metric values and per-request samples", v1},
    {"gate snapshots (the newest per series)", v2},
};

_Static_assert(sizeof migrations / sizeof migrations[0] == CB_STORE_SCHEMA_VERSION,
               "CB_STORE_SCHEMA_VERSION must equal the number of migrations");

/* The version recorded, 0 for a registry without the table; -1 on error. */
static int current_version(cb_store *s, cb_error *err) {
  cb__db_result r;
  if (s->db->ops->exec(s->db, "SELECT MAX(version) FROM schema_migrations", NULL, 0, &r, err) !=
      CB_OK)
    return -1;
  int v = r.rows && cb__db_cell(&r, 0, 0) ? atoi(cb__db_cell(&r, 0, 0)) : 0;
  cb__db_result_free(&r);
  return v;
}

cb_status cb__store_migrate(cb_store *s, cb_error *err) {
  cb_error probe;
  cb_error_clear(&probe);
  int v = current_version(s, &probe);
  if (v == CB_STORE_SCHEMA_VERSION) {
    s->schema_version = v;
    return CB_OK;
  }
  if (v > CB_STORE_SCHEMA_VERSION)
    return cb_error_set(err, CB_ERR_UNSUPPORTED,
                        "the registry's schema is version %d, newer than this calibench's %d: "
                        "upgrade calibench", v, CB_STORE_SCHEMA_VERSION);
  cb_status st = cb__store_begin(s, 1, err);
  if (st != CB_OK) return st;
  st = cb__store_exec(s,
                      "CREATE TABLE IF NOT EXISTS schema_migrations ("
                      " version INTEGER PRIMARY KEY,"
                      " description TEXT NOT NULL,"
                      " applied_utc TEXT NOT NULL)",
                      NULL, 0, NULL, err);
  if (st == CB_OK && (v = current_version(s, err)) < 0) st = CB_ERR_IO;
  if (st == CB_OK && v > CB_STORE_SCHEMA_VERSION)
    st = cb_error_set(err, CB_ERR_UNSUPPORTED,
                      "the registry's schema is version %d, newer than this calibench's %d", v,
                      CB_STORE_SCHEMA_VERSION);
  for (int m = v; st == CB_OK && m < CB_STORE_SCHEMA_VERSION; m++) {
    for (const char *const *sql = migrations[m].statements; st == CB_OK && *sql; sql++)
      st = cb__store_exec(s, *sql, NULL, 0, NULL, err);
    char ver[16], now[40];
    snprintf(ver, sizeof ver, "%d", m + 1);
    cb__store_now_utc(now, sizeof now);
    const char *p[] = {ver, migrations[m].description, now};
    if (st == CB_OK)
      st = cb__store_exec(s,
                          "INSERT INTO schema_migrations (version, description, applied_utc) "
                          "VALUES (?, ?, ?)", p, 3, NULL, err);
    if (st != CB_OK) cb_error_wrap(err, "migrating the registry to version %d", m + 1);
  }
  if (st == CB_OK) st = cb__store_commit(s, err);
  else cb__store_rollback(s);
  if (st == CB_OK) s->schema_version = CB_STORE_SCHEMA_VERSION;
  return st;
}
