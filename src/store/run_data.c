/*
 * run_data.c - the in-memory form of one run for the registry and the gate: values
 * per (class, metric) and per-request samples per (class, sample name).
 */
#include <string.h>
#include <stdio.h>
#include <math.h>

#include "calibench/alloc.h"
#include "calibench/store.h"

void cb_run_data_init(cb_run_data *r) { memset(r, 0, sizeof *r); }

void cb_run_data_free(cb_run_data *r) {
  for (size_t i = 0; i < r->n_samples; i++) cb_free(r->samples[i].values);
  cb_free(r->samples);
  cb_free(r->values);
  cb_free(r->source);
  cb_free(r->manifest_json);
  cb_free(r->summary_json);
  memset(r, 0, sizeof *r);
}

void cb_run_list_free(cb_run_list *l) {
  for (size_t i = 0; i < l->count; i++) cb_run_data_free(&l->items[i]);
  cb_free(l->items);
  l->items = NULL;
  l->count = 0;
}

void cb_run_data_add_value(cb_run_data *r, const char *class_name, const cb_store_metric *m,
                           double v) {
  if (r->n_values == r->alloc_values) {
    r->alloc_values = r->alloc_values ? 2 * r->alloc_values : 64;
    r->values = cb_reallocarray(r->values, r->alloc_values, sizeof *r->values);
  }
  cb_run_value *x = &r->values[r->n_values++];
  snprintf(x->class_name, sizeof x->class_name, "%s", class_name);
  x->metric = m;
  x->value = v;
}

void cb_run_data_add_samples(cb_run_data *r, const char *class_name, const char *name,
                             double *values, size_t n) {
  if (r->n_samples == r->alloc_samples) {
    r->alloc_samples = r->alloc_samples ? 2 * r->alloc_samples : 16;
    r->samples = cb_reallocarray(r->samples, r->alloc_samples, sizeof *r->samples);
  }
  cb_run_samples *s = &r->samples[r->n_samples++];
  snprintf(s->class_name, sizeof s->class_name, "%s", class_name);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->values = values;
  s->n = n;
}

double cb_run_data_value(const cb_run_data *r, const char *metric, const char *class_name) {
  const char *c = class_name ? class_name : "";
  for (size_t i = 0; i < r->n_values; i++)
    if (!strcmp(r->values[i].metric->name, metric) && !strcmp(r->values[i].class_name, c))
      return r->values[i].value;
  return NAN;
}

const cb_run_samples *cb_run_data_samples(const cb_run_data *r, const char *name,
                                          const char *class_name) {
  const char *c = class_name ? class_name : "";
  for (size_t i = 0; i < r->n_samples; i++)
    if (!strcmp(r->samples[i].name, name) && !strcmp(r->samples[i].class_name, c))
      return &r->samples[i];
  return NULL;
}

size_t cb_run_data_classes(const cb_run_data *r, const char **names, size_t max) {
  size_t n = 0;
  if (max) names[n++] = "";
  for (size_t i = 0; i < r->n_values && n < max; i++) {
    const char *c = r->values[i].class_name;
    if (!c[0]) continue;
    size_t k = 1;
    while (k < n && strcmp(names[k], c)) k++;
    if (k == n) names[n++] = c;
  }
  return n;
}
