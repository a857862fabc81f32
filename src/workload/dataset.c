/*
 * dataset.c - opening a dataset from its spec, its accessors, and the item order.
 *
 * A dataset is read once: the loaders (ds_*.c) parse the file into items whose
 * prompt text or messages sit back to back in one arena, with lengths measured by
 * the workload's counter; the file's bytes are hashed (XXH64) and dropped. Synthetic
 * datasets have no items, only the text model and their shared prefixes, generated
 * here once (prefix p from the dataset seed and p alone).
 *
 * Item order (cb__order_item): which item the k-th request of a class uses:
 * sequential (k mod n), shuffle (a seeded bijection of [0, n) per pass over the data,
 * a Feistel network with cycle walking, so it needs no per-item memory and any k can
 * be asked directly), or random (a seeded uniform pick per k).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "workload_internal.h"


static const char *const kind_names[] = {"synthetic", "jsonl", "sharegpt", "chat", "trace"};

const char *cb_dataset_kind_name(cb_dataset_kind kind) {
  return (unsigned)kind < 5 ? kind_names[kind] : "unknown";
}

void cb_dataset_default_params(cb_dataset_params *p) {
  memset(p, 0, sizeof *p);
  p->input_len = (cb_dataset_len){CB_LEN_FIXED, 1024.0, 0.0, 0, 0};
  p->output_len = (cb_dataset_len){CB_LEN_FIXED, 128.0, 0.0, 0, 0};
  p->order = CB_ORDER_AUTO;
  p->prompt_field = "prompt";
  p->output_field = NULL;
  p->sharegpt_mode = CB_SHAREGPT_FIRST_TURN;
  p->block_tokens = 512;
  p->max_file_bytes = CB_LIMIT_DATASET_BYTES;
  p->image_format = CB_IMAGE_PNG;
  p->image_width = p->image_height = 512;
}

void cb_dataset_params_vllm_filter(cb_dataset_params *p) {
  p->min_prompt_len = 4;
  p->min_output_len = 4;
  p->max_prompt_len = 1024;
  p->max_total_len = 2048;
}

/* ---- building ------------------------------------------------------------------------- */

cb__item *cb__dataset_push_item(cb_dataset *ds) {
  if (ds->num_items == ds->cap_items) {
    ds->cap_items = ds->cap_items ? 2 * ds->cap_items : 256;
    ds->items = cb_reallocarray(ds->items, ds->cap_items, sizeof *ds->items);
  }
  cb__item *it = &ds->items[ds->num_items++];
  memset(it, 0, sizeof *it);
  return it;
}

uint64_t cb__dataset_push_text(cb_dataset *ds, const char *text, size_t len) {
  uint64_t off = ds->arena.len;
  cb_buf_append(&ds->arena, text, len); /* no cap: cannot fail */
  return off;
}

int cb__json_whole(const json_t *v, int64_t lo, int64_t hi, int64_t *out) {
  if (json_is_integer(v)) {
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) return 0;
    *out = (int64_t)x;
    return 1;
  }
  if (json_is_real(v)) {
    double x = json_real_value(v);
    if (!(x >= (double)lo && x <= (double)hi) || x != (double)(int64_t)x) return 0;
    *out = (int64_t)x;
    return 1;
  }
  return 0;
}

/* ---- item order ----------------------------------------------------------------------- */

uint64_t cb__permute(uint64_t x, uint64_t n, uint64_t key) {
  if (n <= 1) return 0;
  unsigned bits = 0;
  while (bits < 62 && (UINT64_C(1) << bits) < n) bits++;
  if (bits % 2) bits++;
  unsigned half = bits / 2;
  uint64_t mask = (UINT64_C(1) << half) - 1;
  /* Cycle walking: the Feistel network permutes [0, 2^bits); applying it until the
   * value lands in [0, n) permutes [0, n). */
  do {
    uint64_t l = x >> half, r = x & mask;
    for (uint64_t round = 0; round < 4; round++) {
      uint64_t f = cb_hash3_u64(key, round, r) & mask;
      uint64_t nl = r;
      r = l ^ f;
      l = nl;
    }
    x = (l << half) | r;
  } while (x >= n);
  return x;
}

uint64_t cb__order_item(cb_dataset_order order, uint64_t data_seed, uint32_t class_id,
                        uint64_t k, uint64_t n) {
  if (n == 0) return k;
  uint64_t cls = (uint64_t)class_id << 32;
  switch (order) {
  case CB_ORDER_SHUFFLE: {
    uint64_t key = cb_hash3_u64(data_seed, CB__WL_STREAM_ORDER + cls, k / n);
    return cb__permute(k % n, n, key);
  }
  case CB_ORDER_RANDOM: {
    cb_rng rng;
    cb_rng_init_stream(&rng, data_seed, CB__WL_STREAM_PICK + cls, k);
    return cb_rng_below(&rng, n);
  }
  case CB_ORDER_SEQUENTIAL:
  case CB_ORDER_AUTO:
  default:
    return k % n;
  }
}

/* ---- open ----------------------------------------------------------------------------- */

static cb_status parse_spec(const char *spec, cb_dataset_kind *kind, const char **path,
                            cb_error *err) {
  if (!spec || !*spec) spec = "synthetic";
  if (strcmp(spec, "synthetic") == 0) {
    *kind = CB_DATASET_SYNTHETIC;
    *path = NULL;
    return CB_OK;
  }
  const char *colon = strchr(spec, ':');
  if (colon) {
    for (int k = 1; k < 5; k++) {
      size_t n = strlen(kind_names[k]);
      if ((size_t)(colon - spec) == n && strncmp(spec, kind_names[k], n) == 0) {
        if (!colon[1])
          return cb_error_set(err, CB_ERR_INVALID, "dataset '%s': the path after '%s:' is empty",
                              spec, kind_names[k]);
        *kind = (cb_dataset_kind)k;
        *path = colon + 1;
        return CB_OK;
      }
    }
  }
  return cb_error_set(err, CB_ERR_INVALID,
                      "unknown dataset '%s' (expected synthetic, jsonl:PATH, sharegpt:PATH, "
                      "chat:PATH or trace:PATH)",
                      spec);
}

static cb_status validate(const cb_dataset_params *p, cb_dataset_kind kind, cb_error *err) {
  if (kind == CB_DATASET_SYNTHETIC) {
    cb_status st = cb_dataset_len_validate(&p->input_len, "input_len", err);
    if (st == CB_OK) st = cb_dataset_len_validate(&p->output_len, "output_len", err);
    if (st != CB_OK) return st;
    if ((p->prefix_count > 0) != (p->prefix_len > 0))
      return cb_error_set(err, CB_ERR_INVALID,
                          "shared prefixes need both prefix_count and prefix_len > 0 (got %u "
                          "and %u)",
                          p->prefix_count, p->prefix_len);
    if ((double)p->prefix_count * (double)p->prefix_len > 1e8)
      return cb_error_set(err, CB_ERR_INVALID,
                          "prefix_count x prefix_len is %.0f tokens; at most 1e8 are kept",
                          (double)p->prefix_count * (double)p->prefix_len);
  }
  if (p->block_tokens < 1)
    return cb_error_set(err, CB_ERR_INVALID, "block_tokens must be >= 1");
  if ((unsigned)p->order > CB_ORDER_RANDOM)
    return cb_error_set(err, CB_ERR_INVALID, "unknown item order %d", (int)p->order);
  if ((unsigned)p->sharegpt_mode > CB_SHAREGPT_TURNS)
    return cb_error_set(err, CB_ERR_INVALID, "unknown ShareGPT mode %d", (int)p->sharegpt_mode);
  if (p->images_per_request > CB_IMAGE_MAX_PER_REQUEST)
    return cb_error_set(err, CB_ERR_INVALID, "images_per_request %u: at most %d",
                        p->images_per_request, CB_IMAGE_MAX_PER_REQUEST);
  if (p->images_per_request > 0) {
    if (p->image_width < 1 || p->image_height < 1 || p->image_width > CB_IMAGE_MAX_SIDE ||
        p->image_height > CB_IMAGE_MAX_SIDE)
      return cb_error_set(err, CB_ERR_INVALID, "image size %ux%u: each side must be in [1, %d]",
                          p->image_width, p->image_height, CB_IMAGE_MAX_SIDE);
    if (p->image_format != CB_IMAGE_PNG && p->image_format != CB_IMAGE_JPEG)
      return cb_error_set(err, CB_ERR_INVALID, "image format %d: expected png or jpeg",
                          (int)p->image_format);
    if (kind == CB_DATASET_SHAREGPT || kind == CB_DATASET_CHAT)
      return cb_error_set(err, CB_ERR_INVALID,
                          "synthetic images go with text prompts (synthetic, jsonl, trace), "
                          "not with a %s dataset's messages",
                          kind == CB_DATASET_CHAT ? "chat" : "sharegpt");
  }
  if (kind == CB_DATASET_JSONL && (!p->prompt_field || !*p->prompt_field))
    return cb_error_set(err, CB_ERR_INVALID, "jsonl: the prompt field name is empty");
  return CB_OK;
}

uint32_t cb_dataset_images_per_request(const cb_dataset *ds) {
  return ds->params.images_per_request;
}

static int cmp_item_time(const void *a, const void *b) {
  const cb__item *x = a, *y = b;
  if (x->ts_ns != y->ts_ns) return x->ts_ns < y->ts_ns ? -1 : 1;
  return x->line < y->line ? -1 : x->line > y->line; /* stable: file order */
}

/* Trace rows: times relative to the earliest row, rows in time order. */
static void finish_trace(cb_dataset *ds) {
  int sorted = 1;
  uint64_t min = UINT64_MAX;
  for (size_t i = 0; i < ds->num_items; i++) {
    if (ds->items[i].ts_ns < min) min = ds->items[i].ts_ns;
    if (i && ds->items[i].ts_ns < ds->items[i - 1].ts_ns) sorted = 0;
  }
  if (!sorted) qsort(ds->items, ds->num_items, sizeof *ds->items, cmp_item_time);
  for (size_t i = 0; i < ds->num_items; i++) ds->items[i].ts_ns -= min;
}

static cb_status make_prefixes(cb_dataset *ds, cb_error *err) {
  uint32_t n = ds->params.prefix_count;
  if (n == 0) return CB_OK;
  ds->prefix_off = cb_calloc((size_t)n + 1, sizeof *ds->prefix_off);
  cb_workload_prompt scratch;
  cb_workload_prompt_init(&scratch);
  cb_status st = CB_OK;
  for (uint32_t p = 0; p < n && st == CB_OK; p++) {
    ds->prefix_off[p] = ds->arena.len;
    uint64_t seed = cb_hash3_u64(ds->seed, CB__WL_STREAM_PREFIX_TEXT, p);
    st = cb__synth(&ds->tm, &scratch.text, ds->params.prefix_len, seed, 0, 1, &scratch, err);
    if (st == CB_OK) cb__dataset_push_text(ds, scratch.text.data, scratch.text.len);
    cb_buf_reset(&scratch.text);
  }
  ds->prefix_off[n] = ds->arena.len;
  cb_workload_prompt_free(&scratch);
  if (st != CB_OK) cb_error_wrap(err, "shared prefix");
  return st;
}

cb_status cb_dataset_open(const char *spec, const cb_dataset_params *p,
                          const cb_token_counter *counter, uint64_t seed, cb_dataset **out,
                          cb_error *err) {
  *out = NULL;
  cb_dataset_params defaults;
  if (!p) {
    cb_dataset_default_params(&defaults);
    p = &defaults;
  }
  cb_dataset_kind kind = CB_DATASET_SYNTHETIC;
  const char *path = NULL;
  cb_status st = parse_spec(spec, &kind, &path, err);
  if (st == CB_OK) st = validate(p, kind, err);
  if (st != CB_OK) return st;

  cb_dataset *ds = cb_calloc(1, sizeof *ds);
  ds->kind = kind;
  ds->params = *p;
  if (!ds->params.max_file_bytes) ds->params.max_file_bytes = CB_LIMIT_DATASET_BYTES;
  if (ds->params.order == CB_ORDER_AUTO)
    ds->params.order = kind == CB_DATASET_TRACE ? CB_ORDER_SEQUENTIAL : CB_ORDER_SHUFFLE;
  ds->prompt_field = cb_strdup(p->prompt_field ? p->prompt_field : "prompt");
  ds->output_field = p->output_field ? cb_strdup(p->output_field) : NULL;
  ds->params.prompt_field = ds->prompt_field;
  ds->params.output_field = ds->output_field;
  ds->seed = seed;
  cb_buf_init(&ds->arena, 0);
  cb__textmodel_init(&ds->tm, counter);

  if (kind == CB_DATASET_SYNTHETIC) {
    ds->content_hash = cb__corpus_hash();
    st = make_prefixes(ds, err);
  } else {
    ds->path = cb_strdup(path);
    cb_buf file;
    cb_buf_init(&file, 0);
    /* ShareGPT is one JSON document; the others are read a line at a time. */
    size_t max_line = kind == CB_DATASET_SHAREGPT ? 0 : CB_LIMIT_LINE_BYTES;
    /* A command reads its dataset more than once (checked before anything starts, then
     * each point): a pipe or FIFO would be empty, or wait for a writer, the second time. */
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
      st = cb_error_at(err, CB_ERR_INVALID, path, 0, 0,
                       "%s, not a regular file: a dataset is read more than once (checked "
                       "first, then for each point), so it must be a file",
                       S_ISDIR(sb.st_mode)    ? "a directory"
                       : S_ISFIFO(sb.st_mode) ? "a pipe or FIFO"
                                              : "a device or socket");
    else
      st = cb_file_read_lines(path, ds->params.max_file_bytes, max_line, &file, err);
    if (st == CB_OK) {
      ds->file_bytes = file.len;
      ds->content_hash = cb__xxh64(file.data, file.len, 0);
      switch (kind) {
      case CB_DATASET_JSONL: st = cb__load_jsonl(ds, file.data, file.len, err); break;
      case CB_DATASET_CHAT: st = cb__load_chat(ds, file.data, file.len, err); break;
      case CB_DATASET_SHAREGPT: st = cb__load_sharegpt(ds, file.data, file.len, err); break;
      default: st = cb__load_trace(ds, file.data, file.len, err); break;
      }
    }
    cb_buf_free(&file);
    if (st == CB_OK && ds->num_items == 0)
      st = cb_error_at(err, CB_ERR_NOT_FOUND, path, 0, 0,
                       "no usable %s items (%zu skipped by the rules in docs/workload.md)",
                       kind_names[kind], ds->skipped);
    if (st == CB_OK && kind == CB_DATASET_TRACE) finish_trace(ds);
  }
  if (st != CB_OK) {
    cb_dataset_free(ds);
    return st;
  }
  *out = ds;
  return CB_OK;
}

void cb_dataset_free(cb_dataset *ds) {
  if (!ds) return;
  cb_free(ds->path);
  cb_free(ds->prompt_field);
  cb_free(ds->output_field);
  cb__textmodel_free(&ds->tm);
  cb_buf_free(&ds->arena);
  cb_free(ds->items);
  cb_free(ds->hash_ids);
  cb_free(ds->image_sets);
  cb_free(ds->prefix_off);
  cb_free(ds);
}

/* ---- accessors ------------------------------------------------------------------------ */

cb_dataset_kind cb_dataset_get_kind(const cb_dataset *ds) { return ds->kind; }
size_t cb_dataset_size(const cb_dataset *ds) { return ds->num_items; }
size_t cb_dataset_skipped(const cb_dataset *ds) { return ds->skipped; }
int cb_dataset_has_timestamps(const cb_dataset *ds) { return ds->kind == CB_DATASET_TRACE; }
const char *cb_dataset_path(const cb_dataset *ds) { return ds->path; }
uint64_t cb_dataset_content_hash(const cb_dataset *ds) { return ds->content_hash; }
uint64_t cb_dataset_file_bytes(const cb_dataset *ds) { return ds->file_bytes; }

cb_status cb_dataset_get_item(const cb_dataset *ds, size_t i, cb_dataset_item *out,
                              cb_error *err) {
  if (i >= ds->num_items)
    return cb_error_set(err, CB_ERR_RANGE, "item %zu: the dataset has %zu items", i,
                        ds->num_items);
  const cb__item *it = &ds->items[i];
  out->input_len = it->input_len;
  out->output_len = it->output_len;
  out->timestamp_ns = it->ts_ns;
  out->hash_ids = it->hash_count ? ds->hash_ids + it->hash_off : NULL;
  out->num_hash_ids = it->hash_count;
  out->line = it->line;
  return CB_OK;
}
