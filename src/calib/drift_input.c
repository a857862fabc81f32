/*
 * drift_input.c - the inputs of `calibrate drift`: label distributions ({label: weight}
 * files), JSONL samples counted by label, numeric JSONL samples, and the per-label
 * weight table (cb_calib_dist) they all become. Every error names the file and line.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/calib.h"
#include "calibench/limits.h"
#include "cstat_internal.h"
#include "util/json_type.h"

/* ---- the table --------------------------------------------------------------------- */

void cb_calib_dist_init(cb_calib_dist *d) { memset(d, 0, sizeof *d); }

void cb_calib_dist_free(cb_calib_dist *d) {
  for (size_t i = 0; i < d->len; i++) cb_free(d->labels[i]);
  cb_free(d->labels);
  cb_free(d->weights);
  cb_free(d->index_);
  memset(d, 0, sizeof *d);
}

/* FNV-1a */
static size_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return (size_t)h;
}

/* Slot of `label` in the index: its entry, or the empty slot where it would go. */
static size_t slot_of(const cb_calib_dist *d, const char *label) {
  size_t mask = d->index_cap_ - 1;
  size_t i = hash_str(label) & mask;
  while (d->index_[i] && strcmp(d->labels[d->index_[i] - 1], label)) i = (i + 1) & mask;
  return i;
}

static void rehash(cb_calib_dist *d) {
  cb_free(d->index_);
  d->index_cap_ = d->index_cap_ ? d->index_cap_ * 2 : 64;
  d->index_ = cb_calloc(d->index_cap_, sizeof *d->index_);
  for (size_t k = 0; k < d->len; k++) d->index_[slot_of(d, d->labels[k])] = k + 1;
}

long cb_calib_dist_find(const cb_calib_dist *d, const char *label) {
  if (!d->index_cap_) return -1;
  size_t e = d->index_[slot_of(d, label)];
  return e ? (long)e - 1 : -1;
}

cb_status cb_calib_dist_add(cb_calib_dist *d, const char *label, double weight, cb_error *err) {
  if (!(weight >= 0.0) || !isfinite(weight))
    return cb_error_set(err, CB_ERR_INVALID, "label '%s': weight %g is not a non-negative number",
                        label, weight);
  long at = cb_calib_dist_find(d, label);
  if (at >= 0) {
    d->weights[at] += weight;
    return CB_OK;
  }
  if (d->len >= CB_CALIB_MAX_LABELS)
    return cb_error_set(err, CB_ERR_CAPACITY,
                        "more than %d distinct labels: is this field really a label?",
                        CB_CALIB_MAX_LABELS);
  if (d->len == d->cap_) {
    d->cap_ = d->cap_ ? 2 * d->cap_ : 16;
    d->labels = cb_reallocarray(d->labels, d->cap_, sizeof *d->labels);
    d->weights = cb_reallocarray(d->weights, d->cap_, sizeof *d->weights);
  }
  d->labels[d->len] = cb_strdup(label);
  d->weights[d->len] = weight;
  d->len++;
  if (2 * d->len > d->index_cap_)
    rehash(d);
  else
    d->index_[slot_of(d, label)] = d->len;
  return CB_OK;
}

double cb_calib_dist_total(const cb_calib_dist *d) {
  double s = 0.0;
  for (size_t i = 0; i < d->len; i++) s += d->weights[i];
  return s;
}

static void set_path(char *dst, size_t n, const char *src) {
  snprintf(dst, n, "%s", src ? src : "");
}

/* ---- {label: value} files ------------------------------------------------------------ */

/* shares: values in [0, 1], "92%" allowed; otherwise non-negative weights. */
static cb_status load_mapping(cb_calib_dist *d, const char *path, int shares, cb_error *err) {
  cb_calib_dist_init(d);
  cb__cstat_node root;
  cb_status st = cb__cstat_yaml_load(path, CB_CALIB_MAX_FILE_BYTES, &root, err);
  if (st != CB_OK) return st;
  const char *what = shares ? "accuracy" : "weight";
  if (root.kind != CB__CSTAT_MAP) {
    st = cb_error_at(err, CB_ERR_PARSE, path, root.line, 0,
                     "expected a mapping {label: %s}, got %s", what, cb__cstat_node_what(&root));
    goto out;
  }
  for (size_t i = 0; i < root.len; i++) {
    const cb__cstat_node *k = &root.items[2 * i], *v = &root.items[2 * i + 1];
    double w;
    bool ok = v->kind == CB__CSTAT_SCALAR &&
              (shares ? cb__cstat_parse_share(v->value, &w, NULL)
                      : (!v->quoted && cb__cstat_parse_double(v->value, &w)));
    if (!ok) {
      const char *got = cb__cstat_node_what(v);
      bool show = v->kind == CB__CSTAT_SCALAR && strcmp(got, "null");
      st = cb_error_at(err, CB_ERR_PARSE, path, v->line, 0,
                       "label '%s': expected a number (the %s), got %s%s%s%s", k->value, what, got,
                       show ? " '" : "", show ? v->value : "", show ? "'" : "");
      goto out;
    }
    if (w < 0.0 || (shares && w > 1.0)) {
      st = cb_error_at(err, CB_ERR_INVALID, path, v->line, 0, "label '%s': %s %g is %s", k->value,
                       what, w, w < 0.0 ? "negative" : "above 1 (write 0.92 or 92%)");
      goto out;
    }
    st = cb_calib_dist_add(d, k->value, w, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "%s:%ld", path, k->line);
      goto out;
    }
  }
  if (d->len == 0) {
    st = cb_error_at(err, CB_ERR_INVALID, path, root.line, 0,
                     "the distribution is empty (no labels)");
    goto out;
  }
  if (!shares && !(cb_calib_dist_total(d) > 0.0)) {
    st = cb_error_at(err, CB_ERR_INVALID, path, root.line, 0, "every weight is 0");
    goto out;
  }
  d->kind = CB_CALIB_DIST_WEIGHTS;
  set_path(d->path, sizeof d->path, path);
out:
  cb__cstat_node_free(&root);
  if (st != CB_OK) cb_calib_dist_free(d);
  return st;
}

cb_status cb_calib_dist_load(cb_calib_dist *d, const char *path, cb_error *err) {
  return load_mapping(d, path, 0, err);
}

cb_status cb_calib_label_values_load(cb_calib_dist *d, const char *path, cb_error *err) {
  return load_mapping(d, path, 1, err);
}

/* ---- JSONL samples -------------------------------------------------------------------- */

/* obj[field], or the dotted path through nested objects when there is no such key. */
static json_t *get_field(json_t *obj, const char *field) {
  json_t *v = json_object_get(obj, field);
  if (v || !strchr(field, '.')) return v;
  char *copy = cb_strdup(field), *save = NULL;
  json_t *cur = obj;
  for (char *part = strtok_r(copy, ".", &save); part && cur; part = strtok_r(NULL, ".", &save))
    cur = json_is_object(cur) ? json_object_get(cur, part) : NULL;
  cb_free(copy);
  return cur;
}

typedef cb_status (*line_fn)(void *ctx, json_t *v, const char *path, long line, cb_error *err);

/* Call fn for every non-blank line of a JSONL file, parsed; a repeated key in an
 * object is an error (jansson would keep the last). */
static cb_status each_line(const char *path, line_fn fn, void *ctx, cb_error *err) {
  cb_buf file;
  cb_buf_init(&file, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &file, err);
  long lineno = 0;
  const char *end = file.data ? file.data + file.len : NULL; /* no data when the read failed */
  for (const char *p = file.data; st == CB_OK && p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *line = p;
    p = nl ? nl + 1 : end;
    lineno++;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t')) len--;
    size_t start = 0;
    while (start < len && (line[start] == ' ' || line[start] == '\t')) start++;
    if (start == len) continue;
    json_error_t je;
    json_t *v =
        json_loadb(line + start, len - start, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!v) {
      st = cb_error_at(err, CB_ERR_PARSE, path, lineno, je.column > 0 ? je.column + (long)start : 0,
                       "invalid JSON: %s", je.text);
      break;
    }
    st = fn(ctx, v, path, lineno, err);
    json_decref(v);
  }
  cb_buf_free(&file);
  return st;
}

typedef struct label_ctx {
  cb_calib_dist *d;
  const char *field;
} label_ctx;

static cb_status on_label(void *vctx, json_t *v, const char *path, long line, cb_error *err) {
  label_ctx *c = vctx;
  if (!json_is_object(v))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected a JSON object, got %s",
                       cb__json_type_name(v));
  json_t *f = get_field(v, c->field);
  if (!f) return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "key '%s' missing", c->field);
  char tmp[32];
  const char *label;
  if (json_is_string(f))
    label = json_string_value(f);
  else if (json_is_integer(f)) {
    snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, json_integer_value(f));
    label = tmp;
  } else if (json_is_boolean(f))
    label = json_is_true(f) ? "true" : "false";
  else
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "key '%s': expected a label (a string, an integer or a boolean), got %s",
                       c->field, cb__json_type_name(f));
  cb_status st = cb_calib_dist_add(c->d, label, 1.0, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "%s:%ld", path, line);
    return st;
  }
  c->d->sample_size++;
  return CB_OK;
}

cb_status cb_calib_sample_labels_load(cb_calib_dist *d, const char *path, const char *field,
                                      cb_error *err) {
  cb_calib_dist_init(d);
  if (!field || !*field)
    return cb_error_set(err, CB_ERR_INVALID, "%s: a JSONL sample needs --field (the label's key)",
                        path);
  label_ctx c = {d, field};
  cb_status st = each_line(path, on_label, &c, err);
  if (st == CB_OK && d->sample_size == 0)
    st = cb_error_at(err, CB_ERR_INVALID, path, 0, 0, "the sample is empty (no JSON lines)");
  if (st != CB_OK) {
    cb_calib_dist_free(d);
    return st;
  }
  d->kind = CB_CALIB_DIST_SAMPLE;
  set_path(d->path, sizeof d->path, path);
  set_path(d->field, sizeof d->field, field);
  return CB_OK;
}

typedef struct value_ctx {
  const char *field;
  double *values;
  size_t n, cap;
} value_ctx;

static cb_status on_value(void *vctx, json_t *v, const char *path, long line, cb_error *err) {
  value_ctx *c = vctx;
  json_t *f = v;
  if (c->field) {
    if (!json_is_object(v))
      return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected a JSON object, got %s",
                         cb__json_type_name(v));
    f = get_field(v, c->field);
    if (!f) return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "key '%s' missing", c->field);
  }
  if (!json_is_number(f)) {
    if (c->field)
      return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "key '%s': expected a number, got %s",
                         c->field, cb__json_type_name(f));
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "expected a number (or give --field), got %s", cb__json_type_name(f));
  }
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 1024;
    c->values = cb_reallocarray(c->values, c->cap, sizeof *c->values);
  }
  c->values[c->n++] = json_number_value(f);
  return CB_OK;
}

cb_status cb_calib_sample_values_load(const char *path, const char *field, double **values,
                                      size_t *n, cb_error *err) {
  value_ctx c = {field && *field ? field : NULL, NULL, 0, 0};
  cb_status st = each_line(path, on_value, &c, err);
  if (st == CB_OK && c.n == 0)
    st = cb_error_at(err, CB_ERR_INVALID, path, 0, 0, "the sample is empty (no JSON lines)");
  if (st != CB_OK) {
    cb_free(c.values);
    return st;
  }
  *values = c.values;
  *n = c.n;
  return CB_OK;
}
