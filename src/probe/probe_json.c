/*
 * probe_json.c - DIR/probe.json, the one result file every probe writes (probe.h):
 * the document's frame, its metrics, its atomic write and its checked read.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "calibench/results.h"
#include "probe_internal.h"

int cb__probe_name_ok(const char *s, size_t max) {
  size_t n = 0;
  for (; s[n]; n++)
    if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '_')) return 0;
  return n > 0 && n < max;
}

json_t *cb_probe_json_new(const char *probe) {
  return json_pack("{s:s, s:i, s:o}", "probe", probe, "version", CB_PROBE_JSON_VERSION, "metrics",
                   json_object());
}

static json_t *number_or_null(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* "probe." + probe + "." + metric must fit the store's 48-byte metric names. */
#define STORE_NAME_MAX 47

cb_status cb_probe_json_metric(json_t *doc, const char *name, double value, double lo, double hi,
                               int higher_is_better, cb_error *err) {
  const char *probe = json_string_value(json_object_get(doc, "probe"));
  size_t used = 7 + (probe ? strlen(probe) : 0);
  if (!cb__probe_name_ok(name, STORE_NAME_MAX) || used + strlen(name) > STORE_NAME_MAX)
    return cb_error_set(err, CB_ERR_INVALID,
                        "probe metric '%s': expected [a-z0-9_] and probe.%s.<metric> within %d bytes",
                        name, probe ? probe : "?", STORE_NAME_MAX);
  if (!isfinite(value))
    return cb_error_set(err, CB_ERR_INVALID, "probe metric '%s': the value is not a finite number", name);
  json_object_set_new(json_object_get(doc, "metrics"), name,
                      json_pack("{s:f, s:o, s:o, s:b}", "value", value, "lo", number_or_null(lo), "hi",
                                number_or_null(hi), "higher_is_better", higher_is_better));
  return CB_OK;
}

cb_status cb_probe_json_write(const char *dir, const json_t *doc, cb_error *err) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/" CB_PROBE_JSON_NAME, dir) >= sizeof path)
    return cb_error_set(err, CB_ERR_RANGE, "%s: the path is too long", dir);
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
  if (!text) return cb_error_set(err, CB_ERR_INVALID, "%s: the document cannot be written as JSON", path);
  size_t len = strlen(text);
  cb_buf out;
  cb_buf_init(&out, 0);
  cb_buf_append(&out, text, len);
  cb_buf_append_char(&out, '\n');
  free(text);
  cb_status st = cb_results_write_file(path, out.data, out.len, err);
  cb_buf_free(&out);
  return st;
}

static cb_status bad(cb_error *err, const char *path, const char *field, const char *expected) {
  return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "field '%s': expected %s", field, expected);
}

cb_status cb_probe_json_load(const char *dir, json_t **doc, cb_error *err) {
  *doc = NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/" CB_PROBE_JSON_NAME, dir);
  struct stat sb;
  if (stat(path, &sb)) return cb_error_set(err, CB_ERR_NOT_FOUND, "%s: no such file", path);
  json_t *d;
  cb_status st = cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, &d, err);
  if (st != CB_OK) return st;
  const char *probe = json_string_value(json_object_get(d, "probe"));
  json_t *metrics = json_object_get(d, "metrics");
  if (!json_is_object(d)) st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "expected a JSON object");
  else if (!probe || !cb__probe_name_ok(probe, CB_PROBE_NAME_MAX))
    st = bad(err, path, "probe", "a probe name ([a-z0-9_])");
  else if (json_integer_value(json_object_get(d, "version")) != CB_PROBE_JSON_VERSION)
    st = bad(err, path, "version", "1");
  else if (!json_is_object(metrics))
    st = bad(err, path, "metrics", "an object");
  const char *name;
  json_t *m;
  if (st == CB_OK) json_object_foreach(metrics, name, m) {
      char field[128];
      snprintf(field, sizeof field, "metrics.%.100s", name);
      json_t *v = json_object_get(m, "value"), *lo = json_object_get(m, "lo"),
             *hi = json_object_get(m, "hi");
      if (!cb__probe_name_ok(name, STORE_NAME_MAX) || 7 + strlen(probe) + strlen(name) > STORE_NAME_MAX)
        st = bad(err, path, field, "a metric name of [a-z0-9_] (probe.<probe>.<metric> within 47 bytes)");
      else if (!json_is_object(m) || !json_is_number(v) || !isfinite(json_number_value(v)))
        st = bad(err, path, field, "an object with a finite number 'value'");
      else if ((lo && !json_is_null(lo) && !json_is_number(lo)) ||
               (hi && !json_is_null(hi) && !json_is_number(hi)))
        st = bad(err, path, field, "'lo' and 'hi' numbers or null");
      else if (!json_is_boolean(json_object_get(m, "higher_is_better")))
        st = bad(err, path, field, "a boolean 'higher_is_better'");
      if (st != CB_OK) break;
    }
  if (st != CB_OK) {
    json_decref(d);
    return st;
  }
  *doc = d;
  return CB_OK;
}
