/*
 * store.c - opening and closing a registry, transactions, the fault-injection hook,
 * and the choice of backend: a postgresql:// (or postgres://) URL is PostgreSQL,
 * anything else an SQLite file.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "store_internal.h"

const char *cb_store_default_target(void) {
  const char *e = getenv("CALIBENCH_REGISTRY");
  return e && e[0] ? e : "calibench.db";
}

static int is_pg(const char *t) {
  return !strncmp(t, "postgresql://", 13) || !strncmp(t, "postgres://", 11);
}

cb_status cb_store_open(const char *target, int create, cb_store **out, cb_error *err) {
  if (!target) target = cb_store_default_target();
  cb__db *db;
  cb_status st = is_pg(target) ? cb__db_pg_open(target, &db, err)
                               : cb__db_sqlite_open(target, create, &db, err);
  if (st != CB_OK) return st;
  cb_store *s = cb_calloc(1, sizeof *s);
  s->db = db;
  s->fault_after = -1;
  st = cb__store_migrate(s, err);
  if (st != CB_OK) {
    cb_store_close(s);
    return st;
  }
  *out = s;
  return CB_OK;
}

void cb_store_close(cb_store *s) {
  if (!s) return;
  if (s->in_tx) cb__store_rollback(s);
  s->db->ops->close(s->db);
  cb_free(s);
}

const char *cb_store_backend(const cb_store *s) { return s->db->ops->name; }
int cb_store_schema_version(const cb_store *s) { return s->schema_version; }

void cb_store_inject_fault(cb_store *s, long n, int crash) {
  s->fault_after = n;
  s->fault_crash = crash;
}

cb_status cb__store_exec(cb_store *s, const char *sql, const char *const *params, size_t n,
                         cb__db_result *res, cb_error *err) {
  return s->db->ops->exec(s->db, sql, params, n, res, err);
}

cb_status cb__store_write(cb_store *s, const char *sql, const char *const *params, size_t n,
                          cb_error *err) {
  if (s->fault_after == 0) {
    s->fault_after = -1;
    if (s->fault_crash) kill(getpid(), SIGKILL);
    return cb_error_set(err, CB_ERR_IO, "registry: injected failure (test hook)");
  }
  if (s->fault_after > 0) s->fault_after--;
  return s->db->ops->exec(s->db, sql, params, n, NULL, err);
}

cb_status cb__store_begin(cb_store *s, int write, cb_error *err) {
  cb_status st = s->db->ops->begin(s->db, write, err);
  if (st == CB_OK) s->in_tx = 1;
  return st;
}

cb_status cb__store_commit(cb_store *s, cb_error *err) {
  cb_status st = s->db->ops->exec(s->db, "COMMIT", NULL, 0, NULL, err);
  if (st != CB_OK) cb__store_rollback(s);
  s->in_tx = 0;
  return st;
}

void cb__store_rollback(cb_store *s) {
  s->db->ops->exec(s->db, "ROLLBACK", NULL, 0, NULL, NULL);
  s->in_tx = 0;
}

void cb__store_now_utc(char *out, size_t n) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char base[32];
  strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, n, "%s.%03ldZ", base, ts.tv_nsec / 1000000);
}
