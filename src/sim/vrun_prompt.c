/*
 * vrun_prompt.c - prompt token ids straight from a workload's schedule entries, for
 * `sim run`'s fast path (sim_run.h, "Prompts straight from a workload").
 *
 * The engine looks at prompt ids only through their count and through the hashes of
 * full KV blocks (prefix caching), so what must match the rendered text is its length
 * and which requests share which leading tokens. Each part of a rendered prompt is
 * generated from one key (render.c): a shared prefix from (class, prefix id), a trace
 * block from (class, hash id), the rest from the request's seed. Here each part's ids
 * come from the same key: id k of a part = mix(key, k) reduced to [0, vocab). Equal
 * keys give equal ids, distinct keys (almost surely) distinct ones, exactly as equal
 * and distinct texts do; a trace block cut short is a prefix of the whole block.
 *
 * Chat: the template the server applies (api_request.c) wraps the content; its ids
 * are the approximate tokenizer's own, tokenized once here.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/sim.h"
#include "calibench/sim_run.h"
#include "calibench/tok.h"

#define TEMPLATE_MAX 32

struct cb_sim_prompt_ids {
  const cb_workload *wl;
  const cb_workload_params *wp;
  uint64_t data_seed;
  uint32_t vocab;
  uint32_t head[TEMPLATE_MAX], tail[TEMPLATE_MAX]; /* chat template around the content */
  size_t n_head, n_tail;
  uint32_t *ids;                                   /* the last prompt */
  size_t cap;
};

/* Keys of the parts (stream tags in ASCII). */
#define TAG_CLASS UINT64_C(0x636c6173)  /* "clas" */
#define TAG_PREFIX UINT64_C(0x70726566) /* "pref" */
#define TAG_BLOCK UINT64_C(0x626c636b)  /* "blck" */
#define TAG_BODY UINT64_C(0x626f6479)   /* "body" */

/* Id k of the part keyed by `key`: a SplitMix64 finaliser of (key, k), reduced to
 * [0, vocab) by a multiply-shift (no division). */
static inline uint32_t part_id(uint64_t key, uint64_t k, uint32_t vocab) {
  uint64_t x = key + (k + 1) * UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return (uint32_t)(((x >> 32) * (uint64_t)vocab) >> 32);
}

static void fill(uint32_t *out, size_t n, uint64_t key, uint32_t vocab) {
  for (size_t k = 0; k < n; k++) out[k] = part_id(key, k, vocab);
}

int cb_sim_prompt_ids_supported(const cb_workload *wl, const cb_workload_params *wp) {
  if (wp->counter.count) return 0; /* a real tokenizer: ids need the text */
  for (size_t i = 0; i < cb_workload_num_classes(wl); i++) {
    cb_dataset_kind k = cb_dataset_get_kind(cb_workload_get_class(wl, i)->dataset);
    if (k != CB_DATASET_SYNTHETIC && k != CB_DATASET_TRACE) return 0;
    /* Images are charged from the request body (api_request.c), as sim serve does. */
    if (cb_dataset_images_per_request(cb_workload_get_class(wl, i)->dataset)) return 0;
  }
  return 1;
}

cb_status cb_sim_prompt_ids_new(const cb_workload *wl, const cb_workload_params *wp, int chat,
                                uint32_t vocab, cb_sim_prompt_ids **out, cb_error *err) {
  *out = NULL;
  if (!cb_sim_prompt_ids_supported(wl, wp))
    return cb_error_set(err, CB_ERR_UNSUPPORTED,
                        "prompt ids without text need synthetic or trace datasets and the "
                        "approximate tokenizer");
  if (vocab < 1) return cb_error_set(err, CB_ERR_INVALID, "vocabulary must be >= 1");
  cb_sim_prompt_ids *p = cb_calloc(1, sizeof *p);
  p->wl = wl;
  p->wp = wp;
  p->vocab = vocab;
  cb_workload_seeds seeds;
  cb_workload_get_seeds(wl, &seeds);
  p->data_seed = seeds.data;
  if (chat) {
    /* The server's generic template for one user message (api_request.c). */
    static const char head[] = "<|user|>\n", tail[] = "<|end|>\n<|assistant|>\n";
    p->n_head = cb_tok_approx_tokenize(head, sizeof head - 1, vocab, p->head, TEMPLATE_MAX);
    p->n_tail = cb_tok_approx_tokenize(tail, sizeof tail - 1, vocab, p->tail, TEMPLATE_MAX);
  }
  *out = p;
  return CB_OK;
}

void cb_sim_prompt_ids_free(cb_sim_prompt_ids *p) {
  if (!p) return;
  cb_free(p->ids);
  cb_free(p);
}

cb_status cb_sim_prompt_ids_of(cb_sim_prompt_ids *p, const cb_schedule_entry *e,
                               const uint32_t **ids, size_t *n, cb_error *err) {
  if (e->class_id >= cb_workload_num_classes(p->wl) || e->class_id >= p->wp->num_classes)
    return cb_error_set(err, CB_ERR_RANGE, "request %llu: class %u out of range",
                        (unsigned long long)e->index, e->class_id);
  if (e->input_len < 1) return cb_error_set(err, CB_ERR_RANGE, "input length must be >= 1");
  const cb_workload_class *cls = cb_workload_get_class(p->wl, e->class_id);
  const cb_dataset_params *dp = &p->wp->classes[e->class_id].data;
  uint64_t class_key = cb_hash3_u64(p->data_seed, TAG_CLASS, e->class_id);
  size_t total = p->n_head + (size_t)e->input_len + p->n_tail;
  if (total > p->cap) {
    p->cap = total + total / 2;
    p->ids = cb_reallocarray(p->ids, p->cap, sizeof *p->ids);
  }
  uint32_t *out = p->ids;
  memcpy(out, p->head, p->n_head * sizeof *out);
  uint32_t *c = out + p->n_head; /* the content: input_len ids */
  uint32_t done = 0;
  uint64_t body_key = cb_hash3_u64(e->seed, TAG_BODY, 0);
  if (cb_dataset_get_kind(cls->dataset) == CB_DATASET_SYNTHETIC) {
    if (e->prefix_id != CB_NO_PREFIX && dp->prefix_count > 0) {
      if (e->prefix_id >= dp->prefix_count)
        return cb_error_set(err, CB_ERR_RANGE, "prefix %u: the dataset has %u shared prefixes",
                            e->prefix_id, dp->prefix_count);
      if (e->input_len <= dp->prefix_len)
        return cb_error_set(err, CB_ERR_RANGE,
                            "input length %u must exceed the shared prefix's %u tokens",
                            e->input_len, dp->prefix_len);
      fill(c, dp->prefix_len, cb_hash3_u64(class_key, TAG_PREFIX, e->prefix_id), p->vocab);
      done = dp->prefix_len;
    }
  } else {
    cb_dataset_item item;
    cb_status st = cb_dataset_get_item(cls->dataset, (size_t)e->item, &item, err);
    if (st != CB_OK) return st;
    uint32_t bt = dp->block_tokens ? dp->block_tokens : 512;
    size_t full = e->input_len / bt;
    if (full > item.num_hash_ids) full = item.num_hash_ids;
    for (size_t b = 0; b < full; b++, done += bt)
      fill(c + done, bt, cb_hash3_u64(class_key, TAG_BLOCK, (uint64_t)item.hash_ids[b]), p->vocab);
    /* Past the last full block: the next hash id's block cut short. */
    if (full < item.num_hash_ids && done < e->input_len) {
      fill(c + done, e->input_len - done,
           cb_hash3_u64(class_key, TAG_BLOCK, (uint64_t)item.hash_ids[full]), p->vocab);
      done = e->input_len;
    }
  }
  fill(c + done, e->input_len - done, body_key, p->vocab);
  memcpy(c + e->input_len, p->tail, p->n_tail * sizeof *out);
  *ids = out;
  *n = total;
  return CB_OK;
}
