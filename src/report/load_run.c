/*
 * load_run.c - one run directory read for a report.
 *
 * records.jsonl is read with cb_record_set_load and every statistic recomputed with
 * cb_summary_compute, judged by the SLOs, confidence, rate and lag warning that
 * summary.json recorded (for the whole run and per scenario class), so the report
 * and the run's own summary agree. Without summary.json (a run that died) the
 * manifest's SLOs are used when there is a manifest, and a note says so.
 * manifest.json and the "server" part of summary.json are kept as JSON for the
 * sections that show them; server_metrics.jsonl becomes gauge series on the run's
 * clock (its scrapes carry CLOCK_MONOTONIC times; the manifest gives the origin).
 *
 * JSON files are decoded with integers as doubles: a manifest's derived seeds are
 * uint64 values above INT64_MAX, which jansson otherwise refuses. Numbers below 2^53
 * (times in ns since the origin, counts) stay exact.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "report_internal.h"

#define JSON_FLAGS JSON_DECODE_INT_AS_REAL

/* ---- JSON helpers --------------------------------------------------------------------- */

static const json_t *json_path(const json_t *o, const char *path) {
  char key[128];
  while (o && *path) {
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    if (n >= sizeof key) return NULL;
    memcpy(key, path, n);
    key[n] = '\0';
    o = json_is_object(o) ? json_object_get(o, key) : NULL;
    path += n + (dot ? 1 : 0);
  }
  return o;
}

const char *cb__rep_json_str(const json_t *o, const char *path) {
  const json_t *v = json_path(o, path);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

double cb__rep_json_num(const json_t *o, const char *path) {
  const json_t *v = json_path(o, path);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

double cb__rep_json_key_num(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Load DIR/NAME; *out NULL when the file is missing. A malformed file is an error
 * with its line and column. */
static cb_status load_json(const char *dir, const char *name, json_t **out, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  *out = NULL;
  if (!exists(path)) return CB_OK;
  return cb_json_load_file(path, JSON_FLAGS, CB_LIMIT_JSON_BYTES, out, err);
}

/* ---- summary parameters ------------------------------------------------------------ */

/* Without summary.json: the manifest's --slo and --confidence, if any. */
static void params_from_manifest(const json_t *m, cb_summary_params *p) {
  cb_summary_default_params(p);
  const json_t *slos = json_path(m, "config.slos");
  size_t i;
  const json_t *o;
  json_array_foreach(slos, i, o) {
    if (p->n_slos == CB_MAX_SLOS) break;
    if (!cb_slo_from_json(o, &p->slos[p->n_slos])) continue;
    p->n_slos++;
  }
  double conf = cb__rep_json_num(m, "config.confidence");
  if (conf > 0 && conf < 1) p->confidence = conf;
  double rate = cb__rep_json_num(m, "config.requested_rate");
  p->requested_rate = rate > 0 ? rate : 0;
}

/* ---- server_metrics.jsonl ----------------------------------------------------------- */

static void load_gauges(cb_report *r, cb__rep_run *run) {
  char path[4200];
  snprintf(path, sizeof path, "%s/server_metrics.jsonl", run->dir);
  if (!run->origin_mono_ns || !exists(path)) return;
  cb_buf file;
  cb_buf_init(&file, 0);
  cb_error err;
  if (cb_file_read_lines(path, CB_LIMIT_RECORDS_BYTES, CB_LIMIT_LINE_BYTES, &file, &err) != CB_OK) {
    cb__rep_note(r, "%s: server gauges left out: %s", run->dir, err.msg);
    return;
  }
  size_t lines = 0, bad = 0, alloc = 0;
  for (char *p = file.data, *end = file.data + file.len; p && p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (len) {
      lines++;
      json_error_t je;
      json_t *o = json_loadb(p, len, JSON_FLAGS, &je);
      double t = cb__rep_json_num(o, "t_mono_ns");
      if (!o || !isfinite(t)) {
        bad++;
      } else if (t >= (double)run->origin_mono_ns) { /* a scrape before the run began: left out */
        if (run->n_gauges == alloc) {
          alloc = alloc ? 2 * alloc : 64;
          run->gauge_t = cb_reallocarray(run->gauge_t, alloc, sizeof(double));
          run->gauge_running = cb_reallocarray(run->gauge_running, alloc, sizeof(double));
          run->gauge_waiting = cb_reallocarray(run->gauge_waiting, alloc, sizeof(double));
          run->gauge_kv = cb_reallocarray(run->gauge_kv, alloc, sizeof(double));
        }
        size_t k = run->n_gauges++;
        run->gauge_t[k] = (t - (double)run->origin_mono_ns) / 1e9;
        run->gauge_running[k] = cb__rep_json_num(o, "running");
        run->gauge_waiting[k] = cb__rep_json_num(o, "waiting");
        run->gauge_kv[k] = cb__rep_json_num(o, "kv_usage");
      }
      json_decref(o);
    }
    p = nl ? nl + 1 : end;
  }
  if (bad) cb__rep_note(r, "%s: server_metrics.jsonl: %zu of %zu lines unreadable, left out", run->dir, bad, lines);
  cb_buf_free(&file);
}

/* ---- the run ------------------------------------------------------------------------ */

static void compute_classes(cb__rep_run *run, const json_t *summary_json,
                            const cb_summary_params *all, const char *file, cb_error *err,
                            cb_status *st) {
  const json_t *classes = json_object_get(summary_json, "classes");
  if (json_is_array(classes) && json_array_size(classes) >= 2) {
    size_t n = json_array_size(classes);
    run->classes = cb_calloc(n, sizeof *run->classes);
    for (size_t i = 0; i < n && *st == CB_OK; i++) {
      const json_t *c = json_array_get(classes, i);
      const char *name = cb__rep_json_str(c, "class");
      char where[64];
      snprintf(where, sizeof where, "classes[%zu]", i);
      cb_summary_params p;
      if (!name) {
        *st = cb_error_at(err, CB_ERR_PARSE, file, 0, 0, "%s.class: expected a string", where);
        break;
      }
      if ((*st = cb_summary_params_from_json(c, file, where, &p, err)) != CB_OK) break;
      p.class_name = name;
      p.requested_rate = 0;
      cb_summary_compute(&run->records, &p, &run->classes[run->n_classes]);
      run->classes[run->n_classes++].interrupted = run->all.interrupted;
    }
    return;
  }
  if (summary_json) return;
  /* no summary.json: every class the records name, judged as the whole run */
  const char *names[64];
  size_t n = cb_record_set_classes(&run->records, names, 64);
  if (n < 2) return;
  run->classes = cb_calloc(n, sizeof *run->classes);
  for (size_t i = 0; i < n; i++) {
    cb_summary_params p = *all;
    p.class_name = names[i];
    p.requested_rate = 0;
    cb_summary_compute(&run->records, &p, &run->classes[run->n_classes]);
    run->classes[run->n_classes++].interrupted = run->all.interrupted;
  }
}

cb_status cb__rep_run_load(cb_report *r, const char *dir, const char *label, cb__rep_run *run,
                           cb_error *err) {
  memset(run, 0, sizeof *run);
  char path[4200];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  if (!exists(dir))
    return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: no such file or directory", dir);
  if (!exists(path))
    return cb_error_set(err, CB_ERR_NOT_FOUND,
                        "%s: no records.jsonl or sweep.json: not a calibench result directory", dir);
  run->dir = cb_strdup(dir);
  run->label = cb_strdup(label);
  cb_record_set_init(&run->records);
  json_t *summary = NULL;
  cb_status st = CB_OK;
  if (r->records_in) {
    run->records = *r->records_in;
    cb_record_set_init(r->records_in);
    r->records_in = NULL;
  } else {
    st = cb_record_set_load(&run->records, path, &run->torn_lines, err);
  }
  if (st == CB_OK) st = load_json(dir, "manifest.json", &run->manifest, err);
  if (st == CB_OK) st = load_json(dir, "summary.json", &summary, err);
  if (st == CB_OK) st = load_json(dir, "samples.json", &run->samples, err);
  if (st != CB_OK) goto fail;
  if (run->torn_lines)
    cb__rep_note(r, "%s: records.jsonl ends mid-line (%zu torn line skipped): the run was cut off while writing",
                 dir, run->torn_lines);

  const json_t *all = summary ? json_object_get(summary, "summary") : NULL;
  cb_summary_params p;
  snprintf(path, sizeof path, "%s/summary.json", dir);
  if (all) {
    if ((st = cb_summary_params_from_json(all, path, "summary", &p, err)) != CB_OK) goto fail;
    run->has_summary = 1;
  } else if (summary) {
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no \"summary\" object: not a calibench summary");
    goto fail;
  } else if (run->manifest) {
    params_from_manifest(run->manifest, &p);
    cb__rep_note(r, "%s: no summary.json (the run did not finish): statistics recomputed from the records%s",
                 dir, p.n_slos ? ", judged by the manifest's SLOs" : "");
  } else {
    cb_summary_default_params(&p);
    cb__rep_note(r, "%s: no summary.json and no manifest.json (the run did not finish): statistics "
                    "recomputed from the records, without SLOs", dir);
  }
  cb_summary_compute(&run->records, &p, &run->all);
  if (run->all.invalid)
    cb__rep_note(r, "%s: %zu record%s with impossible times left out of the statistics, first %s",
                 dir, run->all.invalid, run->all.invalid == 1 ? "" : "s", run->all.invalid_example);
  json_t *mi = run->manifest ? json_object_get(run->manifest, "interrupted") : NULL;
  run->all.interrupted = all ? json_is_true(json_object_get(all, "interrupted"))
                             : mi ? json_is_true(mi) : 1;
  run->predicted = json_is_true(json_object_get(all, "predicted")) ||
                   json_is_true(run->manifest ? json_object_get(run->manifest, "predicted") : NULL);
  double cpu = cb__rep_json_num(all, "client.cpu_s");
  run->all.client_cpu_s = isfinite(cpu) ? cpu : 0;
  compute_classes(run, summary, &p, path, err, &st);
  if (st != CB_OK) goto fail;

  json_t *server = summary ? json_object_get(summary, "server") : NULL;
  if (json_is_object(server)) run->server = json_incref(server);
  double origin = cb__rep_json_num(run->manifest, "origin_mono_ns");
  run->origin_mono_ns = origin > 0 ? (uint64_t)origin : 0;
  load_gauges(r, run);
  cb__rep_values_compute(run);
  json_decref(summary);
  return CB_OK;
fail:
  json_decref(summary);
  cb__rep_run_free(run);
  return st;
}

void cb__rep_run_free(cb__rep_run *run) {
  cb_free(run->dir);
  cb_free(run->label);
  cb_record_set_free(&run->records);
  cb_free(run->classes);
  json_decref(run->manifest);
  json_decref(run->server);
  json_decref(run->samples);
  cb_free(run->gauge_t);
  cb_free(run->gauge_running);
  cb_free(run->gauge_waiting);
  cb_free(run->gauge_kv);
  for (int k = 0; k < CB__REP_NDIST; k++) cb__rep_values_free(&run->dist[k]);
  memset(run, 0, sizeof *run);
}
