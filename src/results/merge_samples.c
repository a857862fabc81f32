/*
 * merge_samples.c - samples.json of a merged run (merge_internal.h). A run writes the
 * prompts of the requests its report shows (cb_record_set_samples: the first sent, the
 * median and the slowest success); merged, those are picked again from all records.
 * The first and the slowest are always their own shard's picks too, so a shard's
 * samples.json holds their prompts; the median of the union is a shard's median only
 * by chance, and the prompt of one no shard kept is left out (counted in *missing):
 * merge has the records but not the workload that rendered the prompts.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/json_file.h"
#include "calibench/limits.h"
#include "merge_internal.h"

/* DIR/samples.json, or NULL when the shard has none. */
static cb_status load(const char *dir, json_t **doc, cb_error *err) {
  char path[4200];
  snprintf(path, sizeof path, "%s/samples.json", dir);
  struct stat st;
  *doc = NULL;
  if (stat(path, &st) != 0) return CB_OK;
  cb_status s = cb_json_load_file(path, 0, CB_LIMIT_JSON_BYTES, doc, err);
  if (s == CB_OK && !json_is_array(json_object_get(*doc, "samples"))) {
    json_decref(*doc);
    *doc = NULL;
    s = cb_error_set(err, CB_ERR_PARSE, "%s: samples: expected an array", path);
  }
  return s;
}

/* The entry some shard kept for the request with this schedule index, or NULL. */
static json_t *find(json_t *const *docs, size_t n, uint64_t index) {
  for (size_t d = 0; d < n; d++) {
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(docs[d], "samples"), i, e) {
      json_t *x = json_object_get(e, "index");
      if (json_is_integer(x) && (uint64_t)json_integer_value(x) == index) return e;
    }
  }
  return NULL;
}

cb_status cb__results_merge_samples(const char *const *dirs, size_t n, const cb_record_set *all,
                                    cb_buf *out, size_t *missing, cb_error *err) {
  *missing = 0;
  json_t **docs = cb_calloc(n ? n : 1, sizeof *docs);
  json_t *kept = NULL; /* the first shard file, for prompt_bytes_max */
  cb_status st = CB_OK;
  for (size_t i = 0; i < n && st == CB_OK; i++)
    if ((st = load(dirs[i], &docs[i], err)) == CB_OK && docs[i] && !kept) kept = docs[i];
  cb_record_samples pick;
  cb_record_set_samples(all, &pick);
  if (st == CB_OK && kept && pick.first != SIZE_MAX) {
    const size_t pos[3] = {pick.first, pick.median, pick.slowest};
    json_t *list = json_array();
    for (size_t k = 0; k < 3; k++) {
      /* as a run does: each request once (the first may be the median, ...) */
      if (pos[k] == SIZE_MAX || (k && pos[k] == pos[0]) || (k == 2 && pos[2] == pos[1])) continue;
      json_t *e = find(docs, n, all->items[pos[k]].index);
      if (e) json_array_append_new(list, json_deep_copy(e));
      else (*missing)++;
    }
    json_t *max = json_object_get(kept, "prompt_bytes_max");
    json_t *doc = json_pack("{s:i, s:O, s:o}", "schema_version", 1, "prompt_bytes_max",
                            max ? max : json_null(), "samples", list);
    char *s = json_dumps(doc, JSON_INDENT(2));
    cb_buf_append_str(out, s);
    cb_buf_append_char(out, '\n');
    free(s);
    json_decref(doc);
  }
  for (size_t i = 0; i < n; i++) json_decref(docs[i]);
  cb_free(docs);
  return st;
}
