/*
 * perf_fit_obs.c - the observations `calibrate fit` fits to, rebuilt from a run's
 * records alone (perf_fit_internal.h; the method is described in perf_fit.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib/perf_fit_internal.h"
#include "calibench/alloc.h"

void cb__fit_obs_free(cb__fit_obs *o) {
  cb_free(o->u);
  cb_free(o->first);
  cb_free(o->count);
  cb_free(o->y);
  memset(o, 0, sizeof *o);
}

static void obs_begin(cb__fit_obs *o, double y) {
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 256;
    o->first = cb_reallocarray(o->first, o->cap, sizeof *o->first);
    o->count = cb_reallocarray(o->count, o->cap, sizeof *o->count);
    o->y = cb_reallocarray(o->y, o->cap, sizeof *o->y);
  }
  o->first[o->n] = o->nu;
  o->count[o->n] = 0;
  o->y[o->n] = y;
  o->n++;
}

static void obs_step(cb__fit_obs *o, const cb__step_unit *u) {
  if (o->nu == o->cu) {
    o->cu = o->cu ? 2 * o->cu : 1024;
    o->u = cb_reallocarray(o->u, o->cu, sizeof *o->u);
  }
  o->u[o->nu++] = *u;
  o->count[o->n - 1]++;
}

/* The requests of one run that can be used, with sorted views for counting. */
typedef struct run_view {
  const cb_record **r;  /* successes, not warm-up, with a first token */
  size_t n;
  uint64_t *sent;       /* sorted send times */
  uint64_t *first;      /* sorted first-token times */
} run_view;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Number of v[0..n) < x (v sorted). */
static size_t count_lt(const uint64_t *v, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static size_t count_le(const uint64_t *v, size_t n, uint64_t x) {
  return x == UINT64_MAX ? n : count_lt(v, n, x + 1);
}

/* Requests whose send-to-first-token span meets (a, b]: sent < b and first > a. */
static size_t prefills_over(const run_view *v, uint64_t a, uint64_t b) {
  return count_lt(v->sent, v->n, b) - count_le(v->first, v->n, a);
}

static void view_init(run_view *v, const cb_record_set *set) {
  memset(v, 0, sizeof *v);
  v->r = cb_calloc(set->count ? set->count : 1, sizeof *v->r);
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (!cb_record_ok(r) || r->warmup || !r->first_content_ns || r->prompt_tokens < 1 ||
        r->n_chunks < 1 || r->first_content_ns < r->sent_ns)
      continue;
    v->r[v->n++] = r;
  }
  v->sent = cb_calloc(v->n ? v->n : 1, sizeof *v->sent);
  v->first = cb_calloc(v->n ? v->n : 1, sizeof *v->first);
  for (size_t i = 0; i < v->n; i++) {
    v->sent[i] = v->r[i]->sent_ns;
    v->first[i] = v->r[i]->first_content_ns;
  }
  if (v->n) {
    qsort(v->sent, v->n, sizeof *v->sent, cmp_u64);
    qsort(v->first, v->n, sizeof *v->first, cmp_u64);
  }
}

static void view_free(run_view *v) {
  cb_free(v->r);
  cb_free(v->sent);
  cb_free(v->first);
}

/* Tokens of r produced at or before t. */
static size_t tokens_by(const cb_record *r, uint64_t t) {
  return count_le(r->chunk_ns, r->n_chunks, t);
}

/* Requests decoding around a moving time: added in order of first token, dropped once
 * their last token is behind. Times only move forward. */
typedef struct active_set {
  const cb_record **byfirst; /* the run's requests by first-token time */
  size_t n, next;
  const cb_record **on;      /* added and not yet dropped */
  size_t len;
} active_set;

static int cmp_first(const void *x, const void *y) {
  const cb_record *p = *(const cb_record *const *)x, *q = *(const cb_record *const *)y;
  return p->first_content_ns < q->first_content_ns ? -1 : p->first_content_ns > q->first_content_ns;
}

static void active_init(active_set *a, const run_view *v) {
  memset(a, 0, sizeof *a);
  a->n = v->n;
  a->byfirst = cb_calloc(v->n ? v->n : 1, sizeof *a->byfirst);
  memcpy(a->byfirst, v->r, v->n * sizeof *a->byfirst);
  if (v->n) qsort(a->byfirst, v->n, sizeof *a->byfirst, cmp_first);
  a->on = cb_calloc(v->n ? v->n : 1, sizeof *a->on);
}

static void active_free(active_set *a) {
  cb_free(a->byfirst);
  cb_free(a->on);
}

/* Add the requests whose first token is at or before `upto`; drop those whose last
 * token is before `keep_from`. */
static void active_move(active_set *a, uint64_t upto, uint64_t keep_from) {
  while (a->next < a->n && a->byfirst[a->next]->first_content_ns <= upto)
    a->on[a->len++] = a->byfirst[a->next++];
  size_t w = 0;
  for (size_t i = 0; i < a->len; i++)
    if (a->on[i]->last_content_ns >= keep_from) a->on[w++] = a->on[i];
  a->len = w;
}

/* A gap candidate: request i's token k at b, previous at a. */
typedef struct gap {
  uint64_t a, b;
} gap;

static int cmp_gap(const void *x, const void *y) {
  const gap *p = x, *q = y;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  return p->a < q->a ? -1 : p->a > q->a;
}

/* Decode-step observations of one run. */
static void itl_obs(const cb_sim_params *p, const run_view *v, size_t max_obs, cb__fit_obs *out) {
  size_t ng = 0, cg = 0;
  gap *g = NULL;
  for (size_t i = 0; i < v->n; i++) {
    const cb_record *r = v->r[i];
    for (size_t k = 1; k < r->n_chunks; k++) {
      if (r->chunk_tokens && (r->chunk_tokens[k] != 1 || r->chunk_tokens[k - 1] != 1)) continue;
      uint64_t a = r->chunk_ns[k - 1], b = r->chunk_ns[k];
      if (b <= a || prefills_over(v, a, b)) continue;
      if (ng == cg) {
        cg = cg ? 2 * cg : 4096;
        g = cb_reallocarray(g, cg, sizeof *g);
      }
      g[ng++] = (gap){a, b};
    }
  }
  if (ng) qsort(g, ng, sizeof *g, cmp_gap);
  size_t nu = 0; /* unique steps */
  for (size_t i = 0; i < ng; i++)
    if (!nu || g[i].a != g[nu - 1].a || g[i].b != g[nu - 1].b) g[nu++] = g[i];
  size_t stride = nu > max_obs ? (nu + max_obs - 1) / max_obs : 1;
  cb_sim_batch_item *items = cb_calloc(v->n ? v->n : 1, sizeof *items);
  active_set act;
  active_init(&act, v);
  for (size_t s = 0; s < nu; s += stride) {
    uint64_t a = g[s].a, b = g[s].b;
    active_move(&act, b, b);
    size_t n = 0;
    for (size_t i = 0; i < act.len; i++) {
      const cb_record *r = act.on[i];
      if (r->first_content_ns > a) continue; /* its first token came in this step */
      size_t before = tokens_by(r, a);       /* the token made at b has this index */
      items[n++] = (cb_sim_batch_item){.new_tokens = 1,
                                       .context_tokens = r->prompt_tokens + (int64_t)before - 1,
                                       .samples = 1};
    }
    if (!n) continue;
    cb__step_unit u;
    cb__step_unit_of(p, items, n, &u);
    obs_begin(out, (double)(b - a));
    obs_step(out, &u);
  }
  active_free(&act);
  cb_free(items);
  cb_free(g);
}

static int cmp_sent(const void *x, const void *y) {
  const cb_record *p = *(const cb_record *const *)x, *q = *(const cb_record *const *)y;
  return p->sent_ns < q->sent_ns ? -1 : p->sent_ns > q->sent_ns;
}

/* Prefills that ran with no other prefill. */
static void ttft_obs(const cb_sim_params *p, const run_view *v, size_t max_obs, cb__fit_obs *out) {
  const cb_record **bysent = cb_calloc(v->n ? v->n : 1, sizeof *bysent);
  size_t alone = 0;
  for (size_t j = 0; j < v->n; j++)
    if (prefills_over(v, v->r[j]->sent_ns, v->r[j]->first_content_ns) == 1) bysent[alone++] = v->r[j];
  if (alone) qsort(bysent, alone, sizeof *bysent, cmp_sent);
  size_t stride = alone > max_obs ? (alone + max_obs - 1) / max_obs : 1;
  cb_sim_batch_item *items = cb_calloc(v->n + 1, sizeof *items);
  const cb_record **dec = cb_calloc(v->n + 1, sizeof *dec);
  active_set act;
  active_init(&act, v);
  for (size_t j = 0; j < alone; j += stride) {
    const cb_record *r = bysent[j];
    /* Requests decoding at the send (first token by then, last one after), and the
     * end of the step in flight then: the first token any of them made after it. */
    uint64_t t = r->sent_ns, start = UINT64_MAX;
    active_move(&act, t, t + 1);
    size_t nd = 0;
    for (size_t i = 0; i < act.len; i++) {
      const cb_record *d = act.on[i];
      if (d == r || d->first_content_ns > t || d->last_content_ns <= t) continue;
      size_t before = tokens_by(d, t);
      if (before < d->n_chunks && d->chunk_ns[before] < start) start = d->chunk_ns[before];
      dec[nd++] = d;
    }
    if (nd >= (size_t)p->max_num_seqs) continue; /* it would have queued */
    if (start == UINT64_MAX) start = t;
    if (start >= r->first_content_ns) continue;
    int64_t cached = r->cached_tokens > 0 ? r->cached_tokens : 0;
    int64_t todo = r->prompt_tokens - cached, done = cached;
    if (todo < 1) continue;
    obs_begin(out, (double)(r->first_content_ns - start));
    for (int64_t step = 0; todo > 0; step++) {
      /* The decoding requests with a token still to make in this step go first. */
      size_t n = 0;
      for (size_t i = 0; i < nd; i++) {
        int64_t next = (int64_t)tokens_by(dec[i], start) + step; /* its token's index */
        if (next >= (int64_t)dec[i]->n_chunks) continue;           /* finished by then */
        items[n++] = (cb_sim_batch_item){.new_tokens = 1,
                                         .context_tokens = dec[i]->prompt_tokens + next - 1,
                                         .samples = 1};
      }
      int64_t budget = p->max_num_batched_tokens - (int64_t)n;
      if (budget < 1) budget = 1;
      int64_t c = todo < budget ? todo : budget;
      if (p->long_prefill_token_threshold > 0 && c > p->long_prefill_token_threshold)
        c = p->long_prefill_token_threshold;
      items[n++] = (cb_sim_batch_item){.new_tokens = c, .context_tokens = done,
                                       .samples = c == todo};
      cb__step_unit u;
      cb__step_unit_of(p, items, n, &u);
      obs_step(out, &u);
      done += c;
      todo -= c;
    }
  }
  active_free(&act);
  cb_free(items);
  cb_free(dec);
  cb_free(bysent);
}

void cb__fit_obs_collect(const cb_sim_params *p, const cb_record_set *set, size_t max_itl,
                         size_t max_ttft, cb__fit_obs *itl, cb__fit_obs *ttft) {
  run_view v;
  view_init(&v, set);
  itl_obs(p, &v, max_itl, itl);
  ttft_obs(p, &v, max_ttft, ttft);
  view_free(&v);
}
