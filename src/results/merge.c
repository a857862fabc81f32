/*
 * merge.c - shard result directories of one schedule into the directory one run
 * would have written (docs/merge.md): checks that the shards belong together, places
 * their origins on one timeline through each manifest's (wall, monotonic) anchors,
 * writes the records in schedule order, recomputes the summary and picks the sample
 * requests again (merge_samples.c).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "merge_internal.h"

/* Manifests hold uint64 seeds above INT64_MAX, which jansson refuses as integers;
 * monotonic and wall ns stay within a microsecond as doubles. */
#define JSON_FLAGS JSON_DECODE_INT_AS_REAL

typedef struct shard_in {
  json_t *manifest, *summary;
  double origin_wall_ns; /* the shard's origin on its host's wall clock */
  cb_record_set records;
} shard_in;

static const json_t *get(const json_t *o, const char *a, const char *b) {
  const json_t *v = json_object_get(o, a);
  return b ? json_object_get(v, b) : v;
}

static double num(const json_t *o, const char *a, const char *b) {
  const json_t *v = get(o, a, b);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const json_t *o, const char *a, const char *b) {
  const json_t *v = get(o, a, b);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static cb_status load_json(const char *dir, const char *name, json_t **out, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return cb_json_load_file(path, JSON_FLAGS, CB_LIMIT_JSON_BYTES, out, err);
}

/* The shard's origin on the wall clock, and how far that can be trusted. */
static cb_status place_origin(const char *dir, const json_t *m, shard_in *s, cb_results_merge_shard *info,
                              cb_error *err) {
  double sw = num(get(m, "clock_anchors", "start"), "wall_ns", NULL),
         sm = num(get(m, "clock_anchors", "start"), "mono_ns", NULL),
         gap = num(get(m, "clock_anchors", "start"), "read_gap_ns", NULL),
         ew = num(get(m, "clock_anchors", "end"), "wall_ns", NULL),
         em = num(get(m, "clock_anchors", "end"), "mono_ns", NULL),
         origin = num(m, "origin_mono_ns", NULL);
  if (!isfinite(sw) || !isfinite(sm) || !isfinite(gap) || !isfinite(origin))
    return cb_error_set(err, CB_ERR_INVALID,
                        "%s/manifest.json: clock_anchors.start: expected {wall_ns, mono_ns, "
                        "read_gap_ns} and origin_mono_ns (a run by calibench before merge support?)",
                        dir);
  const char *clock = str(m, "clock", NULL);
  if (clock && !strcmp(clock, "virtual")) { /* a prediction: every shard's times start at 0 */
    s->origin_wall_ns = 0;
    info->uncertainty_ns = 0;
    return CB_OK;
  }
  s->origin_wall_ns = sw + (origin - sm);
  /* Wall time slewed or stepped against the monotonic clock during the run. */
  double drift = isfinite(ew) && isfinite(em) ? fabs((ew - sw) - (em - sm)) : 0;
  info->uncertainty_ns = gap + drift;
  return CB_OK;
}

static void shift(uint64_t *t, uint64_t by, int zero_is_unset) {
  if (zero_is_unset && !*t) return;
  *t += by;
}

/* Every time of r by `by` ns: latencies, differences within the record, are unchanged. */
static void shift_record(cb_record *r, uint64_t by) {
  shift(&r->scheduled_ns, by, 0);
  shift(&r->sent_ns, by, 0);
  shift(&r->end_ns, by, 0);
  shift(&r->first_byte_ns, by, 1);
  shift(&r->first_chunk_ns, by, 1);
  shift(&r->first_choices_ns, by, 1);
  shift(&r->first_content_ns, by, 1);
  shift(&r->last_content_ns, by, 1);
  for (size_t i = 0; r->chunk_ns && i < r->n_chunks; i++) shift(&r->chunk_ns[i], by, 0);
}

/* Refuse shards that are not parts of one schedule measured by one calibench. */
static cb_status check_same(const char *const *dirs, size_t n, shard_in *in, cb_error *err) {
  const char *keys[][2] = {{"workload_hash", NULL}, {"calibench", "version"}};
  const char *what[] = {"workloads (workload_hash)", "calibench versions"};
  for (size_t k = 0; k < 2; k++)
    for (size_t i = 1; i < n; i++) {
      const char *a = str(in[0].manifest, keys[k][0], keys[k][1]),
                 *b = str(in[i].manifest, keys[k][0], keys[k][1]);
      if (!a || !b || strcmp(a, b))
        return cb_error_set(err, CB_ERR_INVALID, "%s and %s are shards of different %s: %s vs %s",
                            dirs[0], dirs[i], what[k], a ? a : "(none)", b ? b : "(none)");
    }
  return CB_OK;
}

static cb_status read_shard(const char *dir, shard_in *s, cb_results_merge_shard *info, cb_error *err) {
  cb_record_set_init(&s->records);
  cb_status st = load_json(dir, "manifest.json", &s->manifest, err);
  if (st == CB_OK) st = load_json(dir, "summary.json", &s->summary, err);
  if (st != CB_OK) return st;
  const char *shard = str(s->manifest, "shard", NULL);
  char tail;
  if (!shard || sscanf(shard, "%u/%u%c", &info->index, &info->count, &tail) != 2 ||
      info->index >= info->count)
    return cb_error_set(err, CB_ERR_INVALID, "%s/manifest.json: shard: expected \"i/N\", got %s",
                        dir, shard ? shard : "none");
  info->dir = dir;
  snprintf(info->hostname, sizeof info->hostname, "%s",
           str(s->manifest, "host", "hostname") ? str(s->manifest, "host", "hostname") : "");
  if ((st = place_origin(dir, s->manifest, s, info, err)) != CB_OK) return st;
  char path[4200];
  snprintf(path, sizeof path, "%s/records.jsonl", dir);
  size_t torn = 0;
  if ((st = cb_record_set_load(&s->records, path, &torn, err)) != CB_OK) return st;
  if (torn)
    return cb_error_set(err, CB_ERR_INVALID, "%s: ends mid-line: the shard was cut off", path);
  info->records = s->records.count;
  return CB_OK;
}

/* Every shard index once, all of them unless allow_partial. */
static cb_status check_indices(const char *const *dirs, cb_results_merge_result *out, int allow_partial,
                               cb_error *err) {
  unsigned n = out->shard_count = out->shards[0].count;
  const char **seen = cb_calloc(n, sizeof *seen);
  cb_status st = CB_OK;
  for (size_t i = 0; i < out->n_shards && st == CB_OK; i++) {
    const cb_results_merge_shard *s = &out->shards[i];
    if (s->count != n)
      st = cb_error_set(err, CB_ERR_INVALID, "%s is shard %u/%u but %s is of %u shards", dirs[i],
                        s->index, s->count, dirs[0], n);
    else if (seen[s->index])
      st = cb_error_set(err, CB_ERR_INVALID, "%s and %s are both shard %u/%u", seen[s->index],
                        dirs[i], s->index, n);
    else
      seen[s->index] = dirs[i];
  }
  for (unsigned i = 0; i < n && st == CB_OK; i++) out->missing += !seen[i];
  for (unsigned i = 0; i < n && st == CB_OK && out->missing && !allow_partial; i++)
    if (!seen[i])
      st = cb_error_set(err, CB_ERR_INVALID, "shard %u/%u is missing (%zu of %u missing; "
                        "--allow-partial merges what is there and marks the result partial)",
                        i, n, out->missing, n);
  cb_free(seen);
  return st;
}

static int by_index(const void *a, const void *b) {
  const cb_record *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The records of every shard on the earliest origin's timeline, in schedule order. */
static void gather(shard_in *in, cb_results_merge_result *out, cb_record_set *all) {
  double first = INFINITY;
  for (size_t i = 0; i < out->n_shards; i++) first = fmin(first, in[i].origin_wall_ns);
  for (size_t i = 0; i < out->n_shards; i++) {
    out->shards[i].offset_ns = (double)llround(in[i].origin_wall_ns - first); /* whole ns */
    for (size_t k = 0; k < in[i].records.count; k++) {
      shift_record(&in[i].records.items[k], (uint64_t)out->shards[i].offset_ns);
      cb_record_set_push(all, &in[i].records.items[k]);
    }
    in[i].records.count = 0;
  }
  qsort(all->items, all->count, sizeof *all->items, by_index);
  out->records = all->count;
}

static void summary_file(const cb_summary *all, const cb_summary *classes, size_t n, cb_buf *t) {
  cb_buf_appendf(t, "{\"schema_version\":%d,\"summary\":", CB_RESULTS_SCHEMA_VERSION);
  cb_summary_write_json(all, t);
  if (n) {
    cb_buf_append_str(t, ",\"classes\":[");
    for (size_t i = 0; i < n; i++) {
      if (i) cb_buf_append_char(t, ',');
      cb_summary_write_json(&classes[i], t);
    }
    cb_buf_append_char(t, ']');
  }
  cb_buf_append_str(t, "}\n");
}

/* The first shard's manifest, made the merged run's: every shard, the clock offsets. */
static char *manifest_text(shard_in *in, const cb_results_merge_result *out) {
  json_t *m = json_deep_copy(in[0].manifest), *shards = json_array();
  double worst = 0;
  for (size_t i = 0; i < out->n_shards; i++) {
    const cb_results_merge_shard *s = &out->shards[i];
    worst = fmax(worst, s->uncertainty_ns);
    json_array_append_new(shards, json_pack("{s:s, s:s?, s:s?, s:s?, s:f, s:f, s:I}", "dir", s->dir,
        "shard", str(in[i].manifest, "shard", NULL), "hostname", s->hostname,
        "start_utc", str(in[i].manifest, "start_utc", NULL), "clock_offset_ms", s->offset_ns / 1e6,
        "clock_offset_uncertainty_ms", s->uncertainty_ns / 1e6, "records", (json_int_t)s->records));
  }
  json_t *merged = json_pack("{s:o, s:I, s:b, s:f, s:s}", "shards", shards, "shard_count",
                             (json_int_t)out->shard_count, "partial", out->missing > 0,
                             "clock_uncertainty_ms", 2 * worst / 1e6, "clock_assumption",
                             "wall clocks of the hosts agree (NTP): offsets are as good as their "
                             "synchronisation plus the uncertainty here");
  json_object_set_new(m, "merged", merged);
  json_object_set_new(m, "shard", json_string("merged"));
  json_object_set_new(m, "scheduled", json_integer((json_int_t)out->records));
  char *text = json_dumps(m, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(m);
  return text;
}

static cb_status write_out(const char *out_dir, shard_in *in, cb_results_merge_result *out,
                           cb_record_set *all, const cb_buf *samples, cb_error *err) {
  size_t n_classes = json_array_size(json_object_get(in[0].summary, "classes"));
  cb_summary_params p;
  char file[4200];
  snprintf(file, sizeof file, "%s/summary.json", out->shards[0].dir);
  cb_status st = cb_summary_params_from_json(json_object_get(in[0].summary, "summary"), file,
                                             "summary", &p, err);
  if (st != CB_OK) return st;
  cb_summary_compute(all, &p, &out->all);
  /* What the runs themselves add to their summaries: any shard interrupted, the CPU of
   * all of them, a prediction (`sim run` shards). */
  int interrupted = 0, predicted = 0;
  for (size_t i = 0; i < out->n_shards; i++) {
    interrupted |= json_is_true(json_object_get(in[i].manifest, "interrupted"));
    predicted |= json_is_true(json_object_get(in[i].manifest, "predicted"));
    double cpu = num(get(in[i].summary, "summary", "client"), "cpu_s", NULL);
    if (isfinite(cpu)) out->all.client_cpu_s += cpu;
  }
  out->all.interrupted = interrupted;
  out->all.predicted = predicted;
  cb_summary *classes = cb_calloc(n_classes ? n_classes : 1, sizeof *classes);
  for (size_t i = 0; i < n_classes && st == CB_OK; i++) {
    const json_t *c = json_array_get(json_object_get(in[0].summary, "classes"), i);
    cb_summary_params cp;
    char where[32];
    snprintf(where, sizeof where, "classes[%zu]", i);
    if ((st = cb_summary_params_from_json(c, file, where, &cp, err)) != CB_OK) break;
    cp.class_name = str(c, "class", NULL);
    cb_summary_compute(all, &cp, &classes[i]);
    classes[i].interrupted = interrupted;
    classes[i].predicted = predicted;
  }
  cb_results_dir *d = NULL;
  if (st == CB_OK) st = cb_results_dir_create(out_dir, &d, err);
  for (size_t i = 0; st == CB_OK && i < all->count; i++) st = cb_results_dir_append(d, &all->items[i], err);
  cb_buf t;
  cb_buf_init(&t, 0);
  if (st == CB_OK) {
    summary_file(&out->all, classes, n_classes, &t);
    st = cb_results_dir_write(d, "summary.json", t.data, t.len, err);
  }
  if (st == CB_OK && samples->len)
    st = cb_results_dir_write(d, "samples.json", samples->data, samples->len, err);
  if (st == CB_OK) {
    char *m = manifest_text(in, out);
    st = cb_results_dir_write(d, "manifest.json", m, strlen(m), err);
    free(m);
  }
  cb_buf_free(&t);
  cb_free(classes);
  if (d) cb_results_dir_close(d);
  return st;
}

cb_status cb_results_merge(const char *const *dirs, size_t n_dirs, const char *out_dir,
                           int allow_partial, cb_results_merge_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  if (!n_dirs) return cb_error_set(err, CB_ERR_INVALID, "no shard directories to merge");
  shard_in *in = cb_calloc(n_dirs, sizeof *in);
  out->shards = cb_calloc(n_dirs, sizeof *out->shards);
  out->n_shards = n_dirs;
  cb_record_set all;
  cb_record_set_init(&all);
  cb_status st = CB_OK;
  for (size_t i = 0; i < n_dirs && st == CB_OK; i++) st = read_shard(dirs[i], &in[i], &out->shards[i], err);
  if (st != CB_OK) err->code = st = CB_ERR_INVALID; /* a shard unreadable is bad input, not I/O */
  if (st == CB_OK) st = check_same(dirs, n_dirs, in, err);
  if (st == CB_OK) st = check_indices(dirs, out, allow_partial, err);
  cb_buf samples;
  cb_buf_init(&samples, 0);
  if (st == CB_OK) {
    gather(in, out, &all);
    /* before anything is written: a shard's samples.json that cannot be read is bad
     * input, refused as the rest */
    if ((st = cb__results_merge_samples(dirs, n_dirs, &all, &samples, &out->samples_missing, err)) != CB_OK)
      err->code = st = CB_ERR_INVALID;
  }
  if (st == CB_OK) st = write_out(out_dir, in, out, &all, &samples, err);
  cb_buf_free(&samples);
  for (size_t i = 0; i < n_dirs; i++) {
    json_decref(in[i].manifest);
    json_decref(in[i].summary);
    cb_record_set_free(&in[i].records);
  }
  cb_record_set_free(&all);
  cb_free(in);
  return st;
}

void cb_results_merge_free(cb_results_merge_result *r) {
  cb_free(r->shards);
  r->shards = NULL;
  r->n_shards = 0;
}
