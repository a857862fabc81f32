/*
 * render.c - a request's prompt, produced on demand from (dataset, item, seed).
 *
 * Files: the item's stored prompt text or messages array, copied. Synthetic: the
 * shared prefix (generated once at open) then a body drawn from the corpus by the
 * request's seed. Trace: one block of block_tokens tokens per hash id, each block's
 * text generated from the dataset seed and that id alone, so two requests whose
 * hash_ids agree on a prefix get byte-identical text for those blocks (the prefix
 * cache sees what the trace's cache saw); the tokens past the last full block come
 * from the next hash id's block cut short, or from the request's seed when the ids
 * run out.
 *
 * Every part after the first starts with a space, so under space-splitting
 * tokenizers the parts' counts add up and each part is measured alone (O(length)).
 * The whole prompt is measured once at the end; if a counter merges tokens across a
 * boundary the last part is regenerated against the whole prompt's count, so the
 * result always measures exactly input_len (textgen.c).
 *
 * With images_per_request > 0 the text becomes the first part of one user message and
 * each image an image_url part with a data URL; image k's pixels come from the
 * request's seed and k alone (cb_hash3_u64(seed, "imag", k)), so a seed gives the same
 * bytes on every run and shard.
 */
#include <string.h>

#include "util/base64.h"
#include "workload_internal.h"

static void reset(cb_workload_prompt *out) {
  cb_buf_reset(&out->text);
  cb_buf_reset(&out->messages);
  if (!out->text.data) cb_buf_append(&out->text, "", 0);
  if (!out->messages.data) cb_buf_append(&out->messages, "", 0);
}

/* The last part starts at last_start: if the whole text does not measure goal, redo
 * that part against the whole count. */
static cb_status fix_total(const cb_dataset *ds, cb_workload_prompt *out, size_t last_start,
                           uint32_t goal, uint64_t last_seed, int lead_space, cb_error *err) {
  cb_buf *t = &out->text;
  if (cb__count(&ds->tm.counter, t->data, t->len) == goal) return CB_OK;
  t->len = last_start;
  t->data[last_start] = '\0';
  return cb__synth(&ds->tm, t, goal, last_seed, lead_space, 0, out, err);
}

static cb_status render_synthetic(const cb_dataset *ds, uint32_t input_len, uint64_t seed,
                                  uint32_t prefix_id, cb_workload_prompt *out, cb_error *err) {
  cb_buf *t = &out->text;
  if (prefix_id == CB_NO_PREFIX || ds->params.prefix_count == 0)
    return cb__synth(&ds->tm, t, input_len, seed, 0, 1, out, err);
  if (prefix_id >= ds->params.prefix_count)
    return cb_error_set(err, CB_ERR_RANGE, "prefix %u: the dataset has %u shared prefixes",
                        prefix_id, ds->params.prefix_count);
  uint32_t plen = ds->params.prefix_len;
  if (input_len <= plen)
    return cb_error_set(err, CB_ERR_RANGE,
                        "input length %u must exceed the shared prefix's %u tokens", input_len,
                        plen);
  uint64_t a = ds->prefix_off[prefix_id], b = ds->prefix_off[prefix_id + 1];
  cb_buf_append(t, ds->arena.data + a, (size_t)(b - a));
  size_t body = t->len;
  cb_status st = cb__synth(&ds->tm, t, input_len - plen, seed, 1, 1, out, err);
  if (st != CB_OK) return st;
  return fix_total(ds, out, body, input_len, seed, 1, err);
}

static cb_status render_trace(const cb_dataset *ds, const cb__item *it, uint32_t input_len,
                              uint64_t seed, cb_workload_prompt *out, cb_error *err) {
  cb_buf *t = &out->text;
  const int64_t *ids = it->hash_count ? ds->hash_ids + it->hash_off : NULL;
  uint32_t bt = ds->params.block_tokens;
  uint32_t full = input_len / bt;
  if (full > it->hash_count) full = it->hash_count;
  size_t last_start = 0;
  uint64_t last_seed = seed;
  int last_lead = it->hash_count > 0;
  for (uint32_t b = 0; b < full; b++) {
    last_start = t->len;
    last_seed = cb_hash3_u64(ds->seed, CB__WL_STREAM_BLOCK, (uint64_t)ids[b]);
    cb_status st = cb__synth(&ds->tm, t, bt, last_seed, 1, 1, out, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "trace block %lld", (long long)ids[b]);
      return st;
    }
  }
  uint32_t rest = input_len - full * bt;
  if (rest > 0) {
    last_start = t->len;
    last_seed = full < it->hash_count
                    ? cb_hash3_u64(ds->seed, CB__WL_STREAM_BLOCK, (uint64_t)ids[full])
                    : seed;
    /* Without hash ids the prompt is one part and starts without a space. */
    cb_status st = cb__synth(&ds->tm, t, rest, last_seed, it->hash_count > 0, 1, out, err);
    if (st != CB_OK) return st;
  }
  return fix_total(ds, out, last_start, input_len, last_seed, last_lead, err);
}

#define CB__WL_STREAM_IMAGE UINT64_C(0x696d6167) /* "imag" */

/* The rendered text as a user message's text part; image parts follow, then
 * end_message closes it. */
static void begin_message(cb_workload_prompt *out) {
  cb_buf *m = &out->messages;
  cb_buf_append_str(m, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"");
  cb_buf_append_json_string(m, out->text.data, out->text.len);
  cb_buf_append_str(m, "\"}");
}

static void end_message(cb_workload_prompt *out) {
  cb_buf_append_str(&out->messages, "]}]");
  cb_buf_reset(&out->text);
}

/* A jsonl item's own image files, read at load (ds_images.c). */
static void add_dataset_images(const cb_dataset *ds, const cb__image_set *set,
                               cb_workload_prompt *out) {
  begin_message(out);
  cb_buf_append(&out->messages, ds->arena.data + set->parts_off, set->parts_len);
  out->num_images = set->count;
  out->image_bytes = set->bytes;
  end_message(out);
}

/* Moves the rendered text into a user message with the request's images after it. */
static cb_status add_images(const cb_dataset *ds, uint64_t seed, cb_workload_prompt *out,
                            cb_error *err) {
  const cb_dataset_params *p = &ds->params;
  const char *mime = p->image_format == CB_IMAGE_JPEG ? "image/jpeg" : "image/png";
  cb_buf *m = &out->messages, img;
  cb_buf_init(&img, 0);
  begin_message(out);
  cb_status st = CB_OK;
  for (uint32_t k = 0; k < p->images_per_request && st == CB_OK; k++) {
    cb_buf_reset(&img);
    st = cb_image_synth(p->image_width, p->image_height, p->image_format,
                        cb_hash3_u64(seed, CB__WL_STREAM_IMAGE, k), &img, err);
    if (st != CB_OK) break;
    cb_buf_appendf(m, ",{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:%s;base64,", mime);
    cb__base64_encode((const unsigned char *)img.data, img.len, m);
    cb_buf_append_str(m, "\"}}");
    out->num_images++;
    out->image_bytes += img.len;
  }
  end_message(out);
  cb_buf_free(&img);
  return st;
}

static cb_status render_text(const cb_dataset *ds, uint64_t item, uint32_t input_len,
                             uint64_t seed, uint32_t prefix_id, cb_workload_prompt *out,
                             cb_error *err);

cb_status cb_dataset_render(const cb_dataset *ds, uint64_t item, uint32_t input_len,
                            uint32_t output_len, uint64_t seed, uint32_t prefix_id,
                            cb_workload_prompt *out, cb_error *err) {
  reset(out);
  out->input_len = input_len;
  out->output_len = output_len;
  out->num_images = 0;
  out->image_bytes = 0;
  cb_status st = render_text(ds, item, input_len, seed, prefix_id, out, err);
  if (st == CB_OK && ds->kind == CB_DATASET_JSONL && ds->items[item].images)
    add_dataset_images(ds, &ds->image_sets[ds->items[item].images - 1], out);
  else if (st == CB_OK && ds->params.images_per_request > 0 && out->messages.len == 0)
    st = add_images(ds, seed, out, err);
  return st;
}

static cb_status render_text(const cb_dataset *ds, uint64_t item, uint32_t input_len,
                             uint64_t seed, uint32_t prefix_id, cb_workload_prompt *out,
                             cb_error *err) {
  if (ds->kind == CB_DATASET_SYNTHETIC) {
    if (input_len < 1) return cb_error_set(err, CB_ERR_RANGE, "input length must be >= 1");
    return render_synthetic(ds, input_len, seed, prefix_id, out, err);
  }
  if (item >= ds->num_items)
    return cb_error_set(err, CB_ERR_RANGE, "item %llu: the dataset has %zu items",
                        (unsigned long long)item, ds->num_items);
  const cb__item *it = &ds->items[item];
  if (ds->kind == CB_DATASET_TRACE) {
    if (input_len < 1) return cb_error_set(err, CB_ERR_RANGE, "input length must be >= 1");
    return render_trace(ds, it, input_len, seed, out, err);
  }
  const char *src = ds->arena.data + it->text_off;
  if (it->is_messages) {
    cb_buf_append(&out->messages, src, it->text_len);
    if (it->is_messages == 2) cb_buf_append(&out->messages, "]", 1);
  } else {
    cb_buf_append(&out->text, src, it->text_len);
  }
  return CB_OK;
}
