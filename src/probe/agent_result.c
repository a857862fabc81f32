/*
 * agent_result.c - the probe directory as one result directory (docs/probe.md, "probe
 * agent"): every step's records on one timeline in DIR/records.jsonl, their summary in
 * DIR/summary.json and a manifest, so that `report`, `store` and `gate` read DIR as
 * they read any run, probe.json beside them.
 *
 * Each step is a session run of its own (DIR/steps/NN) whose record times count from
 * its own origin; a step's records move by the distance between its origin and the
 * first step's (manifest.json's origin_mono_ns, one clock for all steps) and are
 * numbered in order; in virtual time (`--virtual-time`) a step's records move to where
 * the step before ended. The steps' run ids differ, so request ids stay unique.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_internal.h"
#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/limits.h"
#include "calibench/results.h"

static void shift(uint64_t *t, uint64_t by) {
  if (*t) *t += by;
}

static void shift_record(cb_record *r, uint64_t by) {
  r->scheduled_ns += by;
  r->sent_ns += by;
  shift(&r->first_byte_ns, by);
  shift(&r->first_chunk_ns, by);
  shift(&r->first_choices_ns, by);
  shift(&r->first_content_ns, by);
  shift(&r->last_content_ns, by);
  shift(&r->end_ns, by);
  for (size_t i = 0; r->chunk_ns && i < r->n_chunks; i++) r->chunk_ns[i] += by;
}

/* A step's manifest.json as it is (its seeds are unsigned 64-bit: kept as text, not
 * read into JSON numbers) and its origin_mono_ns. */
static cb_status step_origin(const char *step_dir, cb_buf *manifest, uint64_t *origin, cb_error *err) {
  char path[1200];
  snprintf(path, sizeof path, "%s/manifest.json", step_dir);
  cb_buf_reset(manifest);
  cb_status st = cb_file_read(path, CB_LIMIT_JSON_BYTES, manifest, err);
  if (st != CB_OK) return st;
  cb_buf_append_char(manifest, '\0');
  manifest->len--;
  const char *key = strstr(manifest->data, "\"origin_mono_ns\":");
  unsigned long long v;
  if (!key || sscanf(key + strlen("\"origin_mono_ns\":"), " %llu", &v) != 1)
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "key 'origin_mono_ns': expected an integer");
  *origin = (uint64_t)v;
  return CB_OK;
}

cb_status cb__agent_combine(const char *dir, int n_steps, int virtual_time, cb_error *err) {
  cb_results_dir *out = NULL;
  cb_status st = cb_results_dir_create(dir, &out, err);
  if (st != CB_OK) return st;
  cb_record_set all;
  cb_record_set_init(&all);
  cb_buf manifest, first_manifest;
  cb_buf_init(&manifest, 0);
  cb_buf_init(&first_manifest, 0);
  uint64_t first_origin = 0, index = 0, virtual_end = 0;
  char step_dir[1100], path[1200];
  for (int k = 1; k <= n_steps && st == CB_OK; k++) {
    snprintf(step_dir, sizeof step_dir, "%s/steps/%02d", dir, k);
    uint64_t origin = 0;
    if ((st = step_origin(step_dir, &manifest, &origin, err)) != CB_OK) break;
    if (k == 1) {
      cb_buf_append(&first_manifest, manifest.data, manifest.len);
      first_origin = origin;
    }
    snprintf(path, sizeof path, "%s/records.jsonl", step_dir);
    cb_record_set set;
    cb_record_set_init(&set);
    size_t torn = 0;
    st = cb_record_set_load(&set, path, &torn, err);
    /* Virtual time starts at 0 in every step and its anchors are the wall clock's, which
     * says nothing of it: a step starts where the one before ended, as it does in real
     * time (the steps are synchronised; tool time is added to a run's e2e, not slept). */
    uint64_t by = virtual_time ? virtual_end : origin > first_origin ? origin - first_origin : 0;
    for (size_t i = 0; st == CB_OK && i < set.count; i++) {
      cb_record *r = &set.items[i];
      shift_record(r, by);
      if (r->end_ns > virtual_end) virtual_end = r->end_ns;
      r->index = index++;
      st = cb_results_dir_append(out, r, err);
      cb_record_set_push(&all, r);
    }
    cb_record_set_free(&set);
  }
  if (st == CB_OK) {
    cb_summary_params sp;
    cb_summary_default_params(&sp);
    cb_summary s;
    cb_summary_compute(&all, &sp, &s);
    cb_buf text;
    cb_buf_init(&text, 0);
    cb_buf_appendf(&text, "{\"schema_version\":%d,\"summary\":", CB_RESULTS_SCHEMA_VERSION);
    cb_summary_write_json(&s, &text);
    cb_buf_append_str(&text, "}\n");
    st = cb_results_dir_write(out, "summary.json", text.data, text.len, err);
    const char *open = first_manifest.len ? memchr(first_manifest.data, '{', first_manifest.len) : NULL;
    if (st == CB_OK && !open)
      st = cb_error_at(err, CB_ERR_PARSE, dir, 0, 0, "steps/01/manifest.json: expected a JSON object");
    if (st == CB_OK) { /* the first step's, saying what the whole holds */
      cb_buf m;
      cb_buf_init(&m, 0);
      size_t at = (size_t)(open - first_manifest.data) + 1;
      cb_buf_append(&m, first_manifest.data, at);
      cb_buf_appendf(&m, "\"probe\":{\"name\":\"agent\",\"steps\":%d,\"step_dirs\":\"steps/NN\"},", n_steps);
      cb_buf_append(&m, first_manifest.data + at, first_manifest.len - at);
      st = cb_results_dir_write(out, "manifest.json", m.data, m.len, err);
      cb_buf_free(&m);
    }
    cb_buf_free(&text);
  }
  cb_buf_free(&manifest);
  cb_buf_free(&first_manifest);
  cb_record_set_free(&all);
  cb_results_dir_close(out);
  return st;
}
