/*
 * load_file.c - the JSON files a report shows besides result directories: results of
 * `calibrate ... --out`, `gate --json` and `history --format json`, recognised by
 * their content. calibrate results carry "kind": "calibrate.<subcommand>"; a gate's
 * verdict has "verdicts" and "traceability"; a history has "metrics" and "runs".
 * Each kind's main member is checked here, so the sections can walk it; everything
 * else a section reads may be missing and then shows as "-".
 */
#include <jansson.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "report_internal.h"

#define SCHEMA_VERSION 1

static const struct {
  const char *kind;           /* "kind" of a calibrate result, NULL for gate and history */
  const char *name;           /* what the report calls it */
  const char *array;          /* the member that must be an array */
} kinds[] = {
    [CB__REP_FILE_DRIFT] = {"calibrate.drift", "calibrate drift", "labels"},
    [CB__REP_FILE_EXPECT] = {"calibrate.expect", "calibrate expect", "factors"},
    [CB__REP_FILE_COST] = {"calibrate.cost", "calibrate cost", "candidates"},
    [CB__REP_FILE_ROOFLINE] = {"calibrate.roofline", "calibrate roofline", NULL},
    [CB__REP_FILE_FIT] = {"calibrate.fit", "calibrate fit", NULL},
    [CB__REP_FILE_PERF] = {"calibrate.perf", "calibrate perf", "metrics"},
    [CB__REP_FILE_SLA] = {"calibrate.sla", "calibrate sla", "sla"},
    [CB__REP_FILE_GATE] = {NULL, "gate verdict", "verdicts"},
    [CB__REP_FILE_HISTORY] = {NULL, "history", "runs"},
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

const char *cb__rep_file_kind_name(cb__rep_file_kind k) {
  return (size_t)k < N_KINDS ? kinds[k].name : "?";
}

int cb__rep_has_file(const cb_report *r, cb__rep_file_kind lo, cb__rep_file_kind hi) {
  for (size_t i = 0; i < r->n_files; i++)
    if (r->files[i].kind >= lo && r->files[i].kind <= hi) return 1;
  return 0;
}

static cb_status detect(const char *path, const json_t *root, cb__rep_file_kind *out,
                        cb_error *err) {
  const json_t *kind = json_object_get(root, "kind");
  if (kind) {
    const char *k = json_string_value(kind);
    for (size_t i = 0; k && i < N_KINDS; i++)
      if (kinds[i].kind && !strcmp(kinds[i].kind, k)) {
        *out = (cb__rep_file_kind)i;
        return CB_OK;
      }
    if (!k) return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "\"kind\": expected a string");
    cb_buf known, shown;
    cb_buf_init(&known, 0);
    cb_buf_init(&shown, 0);
    for (size_t i = 0; i < N_KINDS; i++)
      if (kinds[i].kind) cb_buf_appendf(&known, "%s%s", known.len ? ", " : "", kinds[i].kind);
    cb_buf_append_json_string(&shown, k, strlen(k));
    cb_status st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                               "\"kind\": \"%s\" is not a result a report shows (known: %s, "
                               "and gate --json and history --format json without a kind)",
                               shown.data ? shown.data : "", known.data);
    cb_buf_free(&shown);
    cb_buf_free(&known);
    return st;
  }
  if (json_object_get(root, "verdicts") && json_object_get(root, "traceability")) {
    *out = CB__REP_FILE_GATE;
    return CB_OK;
  }
  if (json_object_get(root, "metrics") && json_object_get(root, "runs")) {
    *out = CB__REP_FILE_HISTORY;
    return CB_OK;
  }
  return cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "\"kind\": missing, and neither a gate verdict (\"verdicts\", "
                     "\"traceability\") nor a history (\"metrics\", \"runs\"): not a result "
                     "of calibrate --out, gate --json or history --format json");
}

cb_status cb__rep_file_load(const char *path, cb__rep_file *f, cb_error *err) {
  memset(f, 0, sizeof *f);
  json_t *root;
  cb_status loaded =
      cb_json_load_file(path, JSON_DECODE_INT_AS_REAL, CB_LIMIT_JSON_BYTES, &root, err);
  if (loaded != CB_OK) return loaded;
  cb_status st = CB_OK;
  cb__rep_file_kind kind = CB__REP_FILE_DRIFT;
  const json_t *version = json_object_get(root, "schema_version");
  if (!json_is_object(root))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "expected a JSON object");
  else if (version && !(json_is_number(version) && json_number_value(version) >= 1 &&
                        json_number_value(version) <= SCHEMA_VERSION))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                     "\"schema_version\": this calibench reads version %d; a newer calibench "
                     "wrote this file",
                     SCHEMA_VERSION);
  else if ((st = detect(path, root, &kind, err)) == CB_OK && kinds[kind].array &&
           !json_is_array(json_object_get(root, kinds[kind].array)))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "\"%s\": expected an array (a %s)",
                     kinds[kind].array, kinds[kind].name);
  else if (st == CB_OK && kind == CB__REP_FILE_HISTORY &&
           !json_is_array(json_object_get(root, "metrics")))
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "\"metrics\": expected an array (a history)");
  if (st != CB_OK) {
    json_decref(root);
    return st;
  }
  f->path = cb_strdup(path);
  f->kind = kind;
  f->root = root;
  return CB_OK;
}

void cb__rep_file_free(cb__rep_file *f) {
  cb_free(f->path);
  json_decref(f->root);
  memset(f, 0, sizeof *f);
}
