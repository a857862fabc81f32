/*
 * schedule.c - the one schedule: processes superposed, requests numbered, classes,
 * items, lengths and seeds drawn, warm-up flagged, shards sliced, all of it hashed.
 *
 * The generator walks the whole (unsharded) schedule in index order. Each process
 * (0 = the common one, 1 + c = class c's own) knows its next arrival; the earliest
 * goes next (ties to the lower process id). Everything about request `index` except
 * its time comes from streams keyed by `index` (or by the class's request ordinal for
 * the item order), so it does not depend on how far other streams have been read.
 * Each request is then given to exactly one shard:
 *  - constant and closed-loop processes: round robin over the process's own arrivals
 *    ((ordinal + process id) mod N), so each shard sees a constant process at rate/N;
 *  - Poisson, gamma and trace processes: an independent seeded draw per request, so
 *    each shard sees an independent thinning (for Poisson, a Poisson process at
 *    rate/N: the union is Poisson even if the shards start a little apart).
 * Every shard computes the same sequence and keeps its own part, so the union of the
 * shards is the unsharded schedule entry for entry (docs/internals/schedule.md).
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "workload_internal.h"

_Static_assert(sizeof(cb_schedule_entry) == 48, "a schedule entry is 48 bytes");

/* Stop a process whose times would overflow uint64 ns (~292 years). */
#define MAX_OFFSET_S 9.2e9

typedef struct it_proc {
  uint32_t id;
  cb_arrival_kind kind;
  cb_arrival_gen gen;         /* constant, poisson, gamma */
  const cb_dataset *trace;    /* trace: its rows */
  double speed;
  uint32_t single_class;      /* the class of an own process, UINT32_MAX for shared */
  uint64_t ordinal;           /* arrivals produced */
  uint64_t next_ns;
  int done;
} it_proc;

struct cb_workload_iter {
  const cb_workload *w;
  it_proc *procs;
  size_t nprocs;
  uint64_t *class_ordinal;
  uint64_t index;
  int ended;
};

static void advance(it_proc *p) {
  if (p->kind == CB_ARRIVAL_CLOSED) {
    p->next_ns = 0;
    return;
  }
  if (p->kind == CB_ARRIVAL_TRACE) {
    if (p->ordinal >= p->trace->num_items) {
      p->done = 1;
      return;
    }
    uint64_t ts = p->trace->items[p->ordinal].ts_ns;
    p->next_ns = p->speed == 1.0 ? ts : (uint64_t)llround((double)ts / p->speed);
    return;
  }
  double t = cb_arrival_gen_next_s(&p->gen);
  if (!(t < MAX_OFFSET_S)) {
    p->done = 1;
    return;
  }
  p->next_ns = (uint64_t)llround(t * 1e9);
}

static void init_proc(const cb_workload *w, it_proc *p, uint32_t id,
                      const cb_arrival_params *a, uint32_t single_class) {
  memset(p, 0, sizeof *p);
  p->id = id;
  p->kind = a->kind;
  p->single_class = single_class;
  p->speed = a->trace_speed;
  if (a->kind == CB_ARRIVAL_TRACE) {
    p->trace = w->classes[single_class].ds;
  } else if (a->kind != CB_ARRIVAL_CLOSED) {
    cb_arrival_gen_init(&p->gen, a, w->seeds.arrival, CB__WL_STREAM_GAPS, id);
  }
  advance(p);
}

cb_status cb_workload_iter_new(const cb_workload *w, cb_workload_iter **out, cb_error *err) {
  (void)err;
  cb_workload_iter *it = cb_calloc(1, sizeof *it);
  it->w = w;
  it->procs = cb_calloc(w->num_classes + 1, sizeof *it->procs);
  it->class_ordinal = cb_calloc(w->num_classes, sizeof *it->class_ordinal);
  if (w->num_share) {
    uint32_t single = w->num_share == 1 ? w->share_classes[0] : UINT32_MAX;
    init_proc(w, &it->procs[it->nprocs++], CB__WL_COMMON_PROCESS, &w->params.arrival, single);
  }
  for (size_t c = 0; c < w->num_classes; c++)
    if (w->classes[c].process != CB__WL_COMMON_PROCESS)
      init_proc(w, &it->procs[it->nprocs++], w->classes[c].process, &w->classes[c].view.arrival,
                (uint32_t)c);
  *out = it;
  return CB_OK;
}

void cb_workload_iter_free(cb_workload_iter *it) {
  if (!it) return;
  cb_free(it->procs);
  cb_free(it->class_ordinal);
  cb_free(it);
}

/* The categorical draw of a share class for request `index`. */
static uint32_t draw_class(const cb_workload *w, uint64_t index) {
  cb_rng rng;
  cb_rng_init_stream(&rng, w->seeds.data, CB__WL_STREAM_CLASS, index);
  double u = cb_rng_uniform(&rng);
  for (size_t i = 0; i + 1 < w->num_share; i++)
    if (u < w->share_cum[i]) return w->share_classes[i];
  return w->share_classes[w->num_share - 1];
}

static uint32_t add_u32(uint64_t a, uint64_t b) {
  uint64_t s = a + b;
  return s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* The next entry of the whole schedule; *shard gets its shard. 0 at the end. */
static int next_raw(cb_workload_iter *it, cb_schedule_entry *e, uint32_t *shard) {
  const cb_workload *w = it->w;
  const cb_workload_params *prm = &w->params;
  if (it->ended) return 0;
  if (prm->num_requests && it->index >= prm->num_requests) return it->ended = 1, 0;
  it_proc *p = NULL;
  for (size_t i = 0; i < it->nprocs; i++) {
    it_proc *q = &it->procs[i];
    if (!q->done && (!p || q->next_ns < p->next_ns)) p = q; /* ids ascend: ties keep the first */
  }
  if (!p) return it->ended = 1, 0;
  if (!w->closed && prm->duration_ns && p->next_ns >= prm->duration_ns) return it->ended = 1, 0;

  uint64_t index = it->index++;
  uint32_t cls = p->single_class != UINT32_MAX ? p->single_class : draw_class(w, index);
  const cb_dataset *ds = w->classes[cls].ds;
  uint64_t ordinal = it->class_ordinal[cls]++;
  memset(e, 0, sizeof *e);
  e->index = index;
  e->offset_ns = w->closed ? 0 : p->next_ns;
  e->class_id = (uint16_t)cls;
  e->seed = cb_hash3_u64(w->seeds.data, CB__WL_STREAM_PROMPT, index);
  e->prefix_id = CB_NO_PREFIX;
  if (ds->kind == CB_DATASET_SYNTHETIC) {
    const cb_dataset_params *d = &ds->params;
    cb_rng rng;
    cb_rng_init_stream(&rng, w->seeds.data, CB__WL_STREAM_INLEN, index);
    uint32_t body = cb_dataset_len_sample(&d->input_len, &rng);
    cb_rng_init_stream(&rng, w->seeds.data, CB__WL_STREAM_OUTLEN, index);
    e->output_len = cb_dataset_len_sample(&d->output_len, &rng);
    if (d->prefix_count) {
      cb_rng_init_stream(&rng, w->seeds.data, CB__WL_STREAM_PREFIX, index);
      e->prefix_id = (uint32_t)cb_rng_below(&rng, d->prefix_count);
      e->input_len = add_u32(d->prefix_len, body);
    } else {
      e->input_len = body;
    }
    e->item = ordinal;
  } else {
    e->item = p->kind == CB_ARRIVAL_TRACE
                  ? p->ordinal
                  : cb__order_item(ds->params.order, w->seeds.data, cls, ordinal, ds->num_items);
    const cb__item *item = &ds->items[e->item];
    e->input_len = item->input_len;
    e->output_len = item->output_len;
  }
  e->warmup = index < prm->warmup_requests || (!w->closed && e->offset_ns < prm->warmup_ns);

  uint32_t n = prm->shard_count;
  if (n <= 1)
    *shard = 0;
  else if (p->kind == CB_ARRIVAL_CONSTANT || p->kind == CB_ARRIVAL_CLOSED)
    *shard = (uint32_t)((p->ordinal + p->id) % n);
  else
    *shard = (uint32_t)(cb_hash3_u64(w->seeds.arrival, CB__WL_STREAM_SHARD, index) % n);

  p->ordinal++;
  advance(p);
  return 1;
}

static int kept(const cb_workload *w, const cb_schedule_entry *e, uint32_t shard) {
  return shard == w->params.shard_index &&
         (w->params.class_filter < 0 || e->class_id == (uint32_t)w->params.class_filter);
}

int cb_workload_iter_next(cb_workload_iter *it, cb_schedule_entry *out) {
  uint32_t shard;
  while (next_raw(it, out, &shard))
    if (kept(it->w, out, shard)) return 1;
  return 0;
}

/* ---- the whole schedule ---------------------------------------------------------------- */

static void hash_entry(cb__xxh64_state *h, const cb_schedule_entry *e) {
  cb__xxh64_u64(h, e->index);
  cb__xxh64_u64(h, e->offset_ns);
  cb__xxh64_u64(h, e->seed);
  cb__xxh64_u64(h, e->item);
  cb__xxh64_u64(h, (uint64_t)e->input_len | (uint64_t)e->output_len << 32);
  cb__xxh64_u64(h, (uint64_t)e->prefix_id | (uint64_t)e->class_id << 32 |
                       (uint64_t)e->warmup << 48);
}

static int bounded(const cb_workload *w) {
  if (w->params.num_requests) return 1;
  if (!w->closed && w->params.duration_ns) return 1;
  for (size_t c = 0; c < w->num_classes; c++)
    if (w->classes[c].view.arrival.kind != CB_ARRIVAL_TRACE) return 0;
  return 1; /* every process replays a finite trace */
}

cb_status cb_workload_schedule(const cb_workload *w, cb_schedule *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  if (!bounded(w))
    return cb_error_set(err, CB_ERR_INVALID,
                        "the schedule has no end: set num_requests (or, open loop, a "
                        "duration), or iterate it with cb_workload_iter_next");
  cb_workload_iter *it;
  cb_status st = cb_workload_iter_new(w, &it, err);
  if (st != CB_OK) return st;
  cb__xxh64_state h;
  cb__xxh64_init(&h, 0);
  cb__xxh64_u64(&h, w->desc_hash);
  size_t cap = 0;
  cb_schedule_entry e;
  uint32_t shard;
  while (next_raw(it, &e, &shard)) {
    hash_entry(&h, &e);
    if (!kept(w, &e, shard)) continue;
    if (out->count == cap) {
      cap = cap ? 2 * cap : 1024;
      out->entries = cb_reallocarray(out->entries, cap, sizeof *out->entries);
    }
    out->entries[out->count++] = e;
    out->warmup_count += e.warmup;
  }
  out->total_count = it->index;
  out->hash = cb__xxh64_digest(&h);
  cb_workload_iter_free(it);
  if (out->count && out->count < cap)
    out->entries = cb_reallocarray(out->entries, out->count, sizeof *out->entries);
  return CB_OK;
}

void cb_schedule_free(cb_schedule *s) {
  cb_free(s->entries);
  memset(s, 0, sizeof *s);
}
