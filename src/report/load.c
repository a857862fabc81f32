/*
 * load.c - the inputs given to a report: each directory is a run or a sweep, each
 * file a JSON result of calibrate, gate or history (load_file.c), all loaded whole
 * before anything is written; and the report object that holds them.
 *
 * A sweep's sweep.json names each point's directory as the run wrote it (often an
 * absolute path); the point is looked for under the sweep's own points/ first, so a
 * sweep directory that was moved or copied (a CI artifact, a test fixture) still
 * reads. A point that cannot be found is left out with a note.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "report_internal.h"

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

void cb__rep_note(cb_report *r, const char *fmt, ...) {
  cb_buf b;
  cb_buf_init(&b, 0);
  va_list ap;
  va_start(ap, fmt);
  cb_buf_vappendf(&b, fmt, ap);
  va_end(ap);
  r->notes = cb_reallocarray(r->notes, r->n_notes + 1, sizeof *r->notes);
  r->notes[r->n_notes++] = b.data ? b.data : cb_strdup("");
}

const char *cb_report_note(const cb_report *r, size_t i) {
  return r && i < r->n_notes ? r->notes[i] : NULL;
}

void cb__rep_run_name(const cb_report *r, const cb__rep_input *in, const cb__rep_run *run,
                      char *out, size_t n) {
  if (r->n_inputs > 1 && in->kind == CB__REP_INPUT_SWEEP)
    snprintf(out, n, "%s: %s", in->path, run->label);
  else
    snprintf(out, n, "%s", run->label);
}

static cb_status load_json(const char *path, json_t **out, cb_error *err) {
  return cb_json_load_file(path, JSON_DECODE_INT_AS_REAL, CB_LIMIT_JSON_BYTES, out, err);
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static cb_status load_sweep(cb_report *r, cb__rep_input *in, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/sweep.json", in->path);
  json_t *sw = NULL;
  cb_status st = load_json(path, &sw, err);
  if (st != CB_OK) return st;
  const json_t *points = json_object_get(sw, "points");
  if (!json_is_array(points)) {
    json_decref(sw);
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "\"points\": expected an array");
  }
  snprintf(in->sweep_kind, sizeof in->sweep_kind, "%s",
           cb__rep_json_str(sw, "sweep") ? cb__rep_json_str(sw, "sweep") : "");
  double att = cb__rep_json_num(sw, "slo_attainment");
  in->slo_attainment = att > 0 ? att : 0.99;
  double cap = cb__rep_json_num(sw, "capacity_at_slo.point");
  in->capacity = -1;
  size_t n = json_array_size(points);
  in->runs = cb_calloc(n ? n : 1, sizeof *in->runs);
  in->load = cb_calloc(n ? n : 1, sizeof *in->load);
  in->load_closed = cb_calloc(n ? n : 1, sizeof *in->load_closed);
  for (size_t i = 0; i < n && st == CB_OK; i++) {
    const json_t *p = json_array_get(points, i);
    const char *label = cb__rep_json_str(p, "label");
    const char *dir = cb__rep_json_str(p, "dir");
    if (!label || !dir) {
      st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "points[%zu]: expected \"label\" and \"dir\"", i);
      break;
    }
    char here[4200], probe[4300];
    snprintf(here, sizeof here, "%s/points/%s", in->path, base_name(dir));
    snprintf(probe, sizeof probe, "%s/records.jsonl", here);
    const char *use = here;
    if (!exists(probe)) {
      snprintf(probe, sizeof probe, "%s/records.jsonl", dir);
      if (!exists(probe)) {
        cb__rep_note(r, "%s: sweep point %s: no records in %s: left out", in->path, label, here);
        continue;
      }
      use = dir;
    }
    size_t k = in->n_runs;
    if ((st = cb__rep_run_load(r, use, label, &in->runs[k], err)) != CB_OK) break;
    const char *kind = cb__rep_json_str(p, "load.kind");
    in->load_closed[k] = kind && !strcmp(kind, "concurrency");
    in->load[k] = cb__rep_json_num(p, "load.value");
    if (isfinite(cap) && (double)i == cap) in->capacity = (long)k;
    in->n_runs++;
  }
  json_decref(sw);
  if (st == CB_OK && !in->n_runs)
    st = cb_error_set(err, CB_ERR_NOT_FOUND, "%s: sweep.json lists no point that could be read", in->path);
  return st;
}

cb_status cb__rep_input_load(cb_report *r, const char *path, cb__rep_input *in, cb_error *err) {
  memset(in, 0, sizeof *in);
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/') len--;
  in->path = cb_strndup(path, len);
  in->capacity = -1;
  char probe[4200];
  snprintf(probe, sizeof probe, "%s/sweep.json", in->path);
  cb_status st;
  if (exists(probe)) {
    in->kind = CB__REP_INPUT_SWEEP;
    st = load_sweep(r, in, err);
  } else {
    in->kind = CB__REP_INPUT_RUN;
    in->runs = cb_calloc(1, sizeof *in->runs);
    st = cb__rep_run_load(r, in->path, in->path, &in->runs[0], err);
    if (st == CB_OK) in->n_runs = 1;
    snprintf(probe, sizeof probe, "%s/interference.json", in->path);
    if (st == CB_OK && exists(probe)) st = load_json(probe, &in->interference, err);
  }
  if (st != CB_OK) cb__rep_input_free(in);
  return st;
}

void cb__rep_input_free(cb__rep_input *in) {
  for (size_t i = 0; i < in->n_runs; i++) cb__rep_run_free(&in->runs[i]);
  cb_free(in->runs);
  cb_free(in->path);
  cb_free(in->load);
  cb_free(in->load_closed);
  json_decref(in->interference);
  memset(in, 0, sizeof *in);
}

/* ---- the report ------------------------------------------------------------------- */

void cb_report_default_params(cb_report_params *p) {
  memset(p, 0, sizeof *p);
  p->max_output_text = 600;
  p->max_message = 240;
  p->max_scatter_points = 4000;
}

cb_status cb_report_open(const char *const *dirs, size_t n, const cb_report_params *params,
                         cb_report **out, cb_error *err) {
  return cb__rep_open(dirs, n, params, NULL, out, err);
}

cb_status cb__rep_open(const char *const *dirs, size_t n, const cb_report_params *params,
                       cb_record_set *records, cb_report **out, cb_error *err) {
  *out = NULL;
  if (!n) return cb_error_set(err, CB_ERR_INVALID, "no result directory or file to report on");
  cb_report *r = cb_calloc(1, sizeof *r);
  r->records_in = records;
  if (params) r->params = *params;
  else cb_report_default_params(&r->params);
  if (!r->params.max_output_text) r->params.max_output_text = 600;
  if (!r->params.max_message) r->params.max_message = 240;
  if (!r->params.max_scatter_points) r->params.max_scatter_points = 4000;
  r->inputs = cb_calloc(n, sizeof *r->inputs);
  r->files = cb_calloc(n, sizeof *r->files);
  for (size_t i = 0; i < n; i++) {
    int file = is_file(dirs[i]);
    cb_status st = file ? cb__rep_file_load(dirs[i], &r->files[r->n_files], err)
                                    : cb__rep_input_load(r, dirs[i], &r->inputs[r->n_inputs], err);
    if (st != CB_OK) {
      cb_report_free(r);
      return st;
    }
    if (file) r->n_files++;
    else r->n_inputs++;
  }
  *out = r;
  return CB_OK;
}

void cb_report_free(cb_report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_inputs; i++) cb__rep_input_free(&r->inputs[i]);
  cb_free(r->inputs);
  for (size_t i = 0; i < r->n_files; i++) cb__rep_file_free(&r->files[i]);
  cb_free(r->files);
  for (size_t i = 0; i < r->n_notes; i++) cb_free(r->notes[i]);
  cb_free(r->notes);
  cb_free(r);
}
