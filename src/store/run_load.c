/*
 * run_load.c - a result directory (docs/results.md) as run data: identity from
 * manifest.json, every catalog metric found in summary.json (the whole run and each
 * class), and on request per-request samples from records.jsonl (read with
 * cb_record_set_load). A sweep directory gives one run per point.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/limits.h"
#include "calibench/results.h"
#include "calibench/store.h"
#include "store_internal.h"


static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Read and parse a JSON file; errors name the file, line and column. */
static cb_status load_json(const char *path, json_t **out, char **text, cb_error *err) {
  cb_buf b = {0};
  cb_status st = cb_file_read(path, CB_LIMIT_JSON_BYTES, &b, err);
  if (st != CB_OK) return st;
  json_error_t je;
  json_t *j = json_loadb(b.data, b.len, JSON_DECODE_INT_AS_REAL, &je);
  if (!j) {
    cb_buf_free(&b);
    return cb_error_at(err, CB_ERR_PARSE, path, je.line, je.column, "%s", je.text);
  }
  if (!json_is_object(j)) {
    json_decref(j);
    cb_buf_free(&b);
    return cb_error_at(err, CB_ERR_PARSE, path, 1, 0, "expected a JSON object");
  }
  *out = j;
  if (text) *text = b.data;
  else cb_buf_free(&b);
  return CB_OK;
}

static void copy_str(json_t *o, const char *key, char *out, size_t n) {
  json_t *v = json_object_get(o, key);
  snprintf(out, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* Follow a dot path whose keys may contain dots themselves ("p99.9_ms"): at each level
 * take the longest key that the rest of the path starts with. */
static json_t *walk(json_t *o, const char *path) {
  while (o && *path) {
    if (!json_is_object(o)) return NULL;
    const char *key;
    json_t *val, *best = NULL;
    size_t best_len = 0;
    json_object_foreach(o, key, val) {
      size_t k = strlen(key);
      if (k > best_len && !strncmp(path, key, k) && (path[k] == '\0' || path[k] == '.')) {
        best = val;
        best_len = k;
      }
    }
    if (!best) return NULL;
    o = best;
    path += best_len;
    if (*path == '.') path++;
  }
  return o;
}

static double number_at(json_t *o, const char *path) {
  json_t *v = walk(o, path);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Every catalog metric of one summary object (plus server.* for the whole run). */
static void take_values(cb_run_data *r, json_t *summary, json_t *server, const char *cls) {
  size_t n = cb_store_metric_count();
  for (size_t i = 0; i < n; i++) {
    const cb_store_metric *m = cb_store_metric_at(i);
    double v;
    if (!strcmp(m->name, "error_rate")) {
      double failed = number_at(summary, "failed"), measured = number_at(summary, "measured");
      v = measured > 0 ? failed / measured : NAN;
    } else if (!strncmp(m->path, "server.", 7)) {
      if (cls[0] || !server) continue;
      v = number_at(server, m->path + 7);
    } else {
      v = number_at(summary, m->path);
    }
    if (isfinite(v)) cb_run_data_add_value(r, cls, m, v);
  }
}

static uint64_t u64_at(json_t *o, const char *path) {
  double v = number_at(o, path);
  return v > 0 ? (uint64_t)v : 0;
}

static cb_status load_run_dir(const char *dir, const char *point, int samples, cb_run_data *r,
                              cb_error *err) {
  char path[4096];
  json_t *manifest = NULL, *summary = NULL;
  cb_status st;
  cb_record_set set;
  cb_record_set_init(&set);

  snprintf(path, sizeof path, "%s/manifest.json", dir);
  if ((st = load_json(path, &manifest, &r->manifest_json, err)) != CB_OK) goto out;
  json_t *id = json_object_get(manifest, "run_id");
  if (!json_is_string(id) || !json_string_length(id)) {
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "field 'run_id': expected a string");
    goto out;
  }
  if (point && point[0])
    snprintf(r->run_id, sizeof r->run_id, "%s/%s", json_string_value(id), point);
  else snprintf(r->run_id, sizeof r->run_id, "%s", json_string_value(id));
  copy_str(manifest, "start_utc", r->start_utc, sizeof r->start_utc);
  copy_str(manifest, "end_utc", r->end_utc, sizeof r->end_utc);
  copy_str(manifest, "workload_hash", r->workload_hash, sizeof r->workload_hash);
  r->interrupted = json_is_true(json_object_get(manifest, "interrupted"));
  snprintf(r->point, sizeof r->point, "%s", point ? point : "");
  /* The model under test labels the run unless the caller's --tag model= says otherwise
   * (a name a tag cannot hold is left out, not an error). */
  json_t *model = json_object_get(manifest, "model");
  if (json_is_string(model)) cb_tags_set(&r->tags, "model", json_string_value(model), NULL);
  if (point && point[0] && (st = cb_tags_set(&r->tags, "point", point, err)) != CB_OK) goto out;

  snprintf(path, sizeof path, "%s/summary.json", dir);
  if ((st = load_json(path, &summary, &r->summary_json, err)) != CB_OK) goto out;
  json_t *whole = json_object_get(summary, "summary");
  if (!json_is_object(whole)) {
    st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "field 'summary': expected an object");
    goto out;
  }
  json_t *server = json_object_get(summary, "server");
  take_values(r, whole, json_is_object(server) ? server : NULL, "");
  json_t *classes = json_object_get(summary, "classes");
  size_t ci;
  json_t *c;
  if (json_is_array(classes)) json_array_foreach(classes, ci, c) {
      json_t *name = json_object_get(c, "class");
      if (!json_is_object(c) || !json_is_string(name) || !json_string_length(name)) {
        st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                         "field 'classes[%zu]': expected an object with a 'class' name", ci);
        goto out;
      }
      take_values(r, c, NULL, json_string_value(name));
    }
  if ((st = cb__run_quality_load(r, dir, err)) != CB_OK) goto out;
  if ((st = cb__run_probe_load(r, dir, err)) != CB_OK) goto out;
  r->source = cb_strdup(dir);
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  r->torn_line = cb_record_file_torn_line(path);

  if (samples) {
    snprintf(path, sizeof path, "%s/records.jsonl", dir);
    size_t torn = 0;
    if ((st = cb_record_set_load(&set, path, &torn, err)) != CB_OK) goto out;
    cb__run_samples_from_records(r, &set, NULL, u64_at(whole, "window.start_ns"),
                                 u64_at(whole, "window.end_ns"));
    if (json_is_array(classes)) json_array_foreach(classes, ci, c) {
        cb__run_samples_from_records(r, &set, json_string_value(json_object_get(c, "class")),
                                     u64_at(c, "window.start_ns"), u64_at(c, "window.end_ns"));
      }
    r->has_samples = 1;
  }
out:
  cb_record_set_free(&set);
  json_decref(manifest);
  json_decref(summary);
  return st;
}

static void list_push(cb_run_list *l, size_t *alloc) {
  if (l->count == *alloc) {
    *alloc = *alloc ? 2 * *alloc : 4;
    l->items = cb_reallocarray(l->items, *alloc, sizeof *l->items);
  }
  cb_run_data_init(&l->items[l->count++]);
}

cb_status cb_run_data_load(const char *dir, int samples, cb_run_list *out, cb_error *err) {
  out->items = NULL;
  out->count = 0;
  size_t alloc = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/sweep.json", dir);
  if (!file_exists(path)) {
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (!file_exists(path))
      return cb_error_set(err, CB_ERR_NOT_FOUND,
                          "%s: not a result directory (no manifest.json or sweep.json)", dir);
    list_push(out, &alloc);
    cb_status st = load_run_dir(dir, NULL, samples, &out->items[0], err);
    if (st != CB_OK) cb_run_list_free(out);
    return st;
  }
  json_t *sweep;
  cb_status st = load_json(path, &sweep, NULL, err);
  if (st != CB_OK) return st;
  json_t *points = json_object_get(sweep, "points"), *p;
  size_t i;
  if (!json_is_array(points) || !json_array_size(points)) {
    json_decref(sweep);
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "field 'points': expected a non-empty array");
  }
  json_array_foreach(points, i, p) {
    json_t *label = json_object_get(p, "label"), *pdir = json_object_get(p, "dir");
    if (!json_is_string(label) || !json_is_string(pdir)) {
      st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                       "field 'points[%zu]': expected 'label' and 'dir' strings", i);
      break;
    }
    /* The points live under DIR/points/ whatever absolute path the sweep recorded, so a
     * moved or copied sweep directory still loads. */
    const char *base = strrchr(json_string_value(pdir), '/');
    base = base ? base + 1 : json_string_value(pdir);
    char pd[4096];
    snprintf(pd, sizeof pd, "%s/points/%s", dir, base);
    list_push(out, &alloc);
    st = load_run_dir(pd, json_string_value(label), samples, &out->items[out->count - 1], err);
    if (st != CB_OK) break;
  }
  json_decref(sweep);
  if (st != CB_OK) cb_run_list_free(out);
  return st;
}
