/*
 * cmd_gate_load.c - the inputs of `calibench gate`: the current run (or sweep) with its
 * per-request samples and tags, the baseline for each (a directory, a stored run id, or
 * the newest stored run of the same series), and the series' recent values for the
 * Tukey rules.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "gate_cli.h"

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void series_of(const cb_run_data *r, int drop_point, char *out, size_t n) {
  cb_tags s, t = r->tags;
  if (drop_point) {
    cb_tags keep = {0};
    for (size_t i = 0; i < t.count; i++)
      if (strcmp(t.items[i].key, "point")) keep.items[keep.count++] = t.items[i];
    t = keep;
  }
  cb_tags_series(&t, &s);
  cb_tags_format(&s, out, n);
}

/* The newest stored run of r's series other than r itself; "" when none. */
static int newest_of_series(cb_store *st, const cb_run_data *r, char *id, size_t n) {
  char series[CB_TAGS_TEXT_MAX];
  series_of(r, 0, series, sizeof series);
  cb_store_filter f = {.series = series, .exclude_run = r->run_id, .last = 1};
  cb_history h;
  cb_error err;
  cb_error_clear(&err);
  if (cb_store_history(st, NULL, 0, "", &f, &h, &err) != CB_OK) {
    fprintf(stderr, "calibench gate: %s\n", err.msg);
    return -1;
  }
  snprintf(id, n, "%s", h.count ? h.rows[h.count - 1].run_id : "");
  cb_history_free(&h);
  return 0;
}

int gate_cli_load(const gate_load_opts *o, cb_store *st, gate_inputs *in) {
  memset(in, 0, sizeof *in);
  cb_error err;
  cb_error_clear(&err);
  if (cb_run_data_load(o->current_dir, 1, &in->current, &err) != CB_OK) {
    fprintf(stderr, "calibench gate: --current: %s\n", err.msg);
    return 2;
  }
  size_t n = in->current.count;
  /* Tags: --tag wins; else the ones stored with the run, if it is in the registry. */
  for (size_t i = 0; i < n; i++) {
    cb_run_data *r = &in->current.items[i];
    if (!o->tags->count && st) {
      cb_run_data stored;
      if (cb_store_get(st, r->run_id, 0, &stored, NULL) == CB_OK) {
        r->tags = stored.tags;
        cb_run_data_free(&stored);
      }
    }
    for (size_t t = 0; t < o->tags->count; t++)
      if (cb_tags_set(&r->tags, o->tags->items[t].key, o->tags->items[t].value, &err) != CB_OK) {
        fprintf(stderr, "calibench gate: --tag: %s\n", err.msg);
        return 2;
      }
  }
  series_of(&in->current.items[0], 1, in->series, sizeof in->series);

  in->baselines = cb_calloc(n, sizeof *in->baselines);
  for (size_t i = 0; i < n; i++) cb_run_data_init(&in->baselines[i]);
  const char *b = o->baseline;
  if (!b) {
    snprintf(in->baseline_kind, sizeof in->baseline_kind, "none");
  } else if (is_dir(b)) {
    snprintf(in->baseline_kind, sizeof in->baseline_kind, "dir");
    cb_run_list l;
    if (cb_run_data_load(b, 1, &l, &err) != CB_OK) {
      fprintf(stderr, "calibench gate: --baseline: %s\n", err.msg);
      return 2;
    }
    snprintf(in->baseline_label, sizeof in->baseline_label, "%s", l.items[0].run_id);
    char *slash = strchr(in->baseline_label, '/');
    if (slash && l.count > 1) *slash = '\0'; /* a sweep: its run id */
    for (size_t i = 0; i < n; i++) {
      const char *pt = in->current.items[i].point;
      for (size_t k = 0; k < l.count; k++)
        if (!strcmp(l.items[k].point, pt) || (n == 1 && l.count == 1)) {
          in->baselines[i] = l.items[k];
          cb_run_data_init(&l.items[k]);
          break;
        }
      if (!in->baselines[i].run_id[0])
        fprintf(stderr, "calibench gate: the baseline has no point '%s'\n", pt);
    }
    cb_run_list_free(&l);
  } else {
    int history = !strcmp(b, "history");
    snprintf(in->baseline_kind, sizeof in->baseline_kind, history ? "history" : "run");
    if (!st) {
      fprintf(stderr, "calibench gate: --baseline %s needs the registry\n", b);
      return 2;
    }
    for (size_t i = 0; i < n; i++) {
      const cb_run_data *cur = &in->current.items[i];
      char id[160];
      if (history) {
        if (newest_of_series(st, cur, id, sizeof id)) return 2;
        if (!id[0]) {
          char series[CB_TAGS_TEXT_MAX];
          series_of(cur, 0, series, sizeof series);
          fprintf(stderr, "calibench gate: no earlier run of the series '%s' in the registry: "
                          "rules that need a baseline are skipped\n", series);
          continue;
        }
      } else if (cur->point[0]) {
        snprintf(id, sizeof id, "%.120s/%.38s", b, cur->point);
      } else {
        snprintf(id, sizeof id, "%s", b);
      }
      if (cb_store_get(st, id, 1, &in->baselines[i], &err) != CB_OK) {
        fprintf(stderr, "calibench gate: --baseline: %s%s%s%s\n", err.msg,
                history ? "" : " (nor is '", history ? "" : b, history ? "" : "' a directory)");
        return 2;
      }
      if (!in->baseline_label[0]) snprintf(in->baseline_label, sizeof in->baseline_label, "%s", history ? id : b);
    }
  }

  /* Tukey histories. */
  const char *names[64], *classes[64];
  size_t windows[64];
  in->n_tukey = cb_gate_history_metrics(o->policy, names, classes, windows, 64);
  in->histories = cb_calloc(n * (in->n_tukey ? in->n_tukey : 1), sizeof *in->histories);
  if (in->n_tukey && !st) {
    fprintf(stderr, "calibench gate: the policy's tukey rules need the registry\n");
    return 2;
  }
  in->pairs = cb_calloc(n, sizeof *in->pairs);
  for (size_t i = 0; i < n; i++) {
    const cb_run_data *cur = &in->current.items[i];
    char series[CB_TAGS_TEXT_MAX];
    series_of(cur, 0, series, sizeof series);
    for (size_t k = 0; k < in->n_tukey; k++) {
      cb_store_filter f = {.series = series, .exclude_run = cur->run_id, .last = windows[k]};
      if (cb_store_history(st, &names[k], 1, classes[k], &f, &in->histories[i * in->n_tukey + k],
                           &err) != CB_OK) {
        fprintf(stderr, "calibench gate: %s\n", err.msg);
        return 2;
      }
    }
    in->pairs[i].current = cur;
    in->pairs[i].baseline = in->baselines[i].run_id[0] ? &in->baselines[i] : NULL;
    in->pairs[i].history = in->n_tukey ? &in->histories[i * in->n_tukey] : NULL;
    in->pairs[i].n_history = in->n_tukey;
    in->pairs[i].paired = gate_cli_paired;
  }
  return 0;
}

void gate_cli_inputs_free(gate_inputs *in) {
  size_t n = in->current.count;
  if (in->baselines)
    for (size_t i = 0; i < n; i++) cb_run_data_free(&in->baselines[i]);
  if (in->histories)
    for (size_t i = 0; i < n * in->n_tukey; i++) cb_history_free(&in->histories[i]);
  cb_free(in->baselines);
  cb_free(in->histories);
  cb_free(in->pairs);
  cb_run_list_free(&in->current);
  memset(in, 0, sizeof *in);
}
