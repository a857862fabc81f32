/*
 * record_drop.c - a record set that drops its records' chunk times once they have
 * been counted (cb_record_set_drop_chunk_times, results.h), and the per-token views
 * of any set: its ITL statistics and its output tokens over time.
 *
 * When may a success's times go? Summaries use them for ITL (gathered here at the
 * drop), ITL SLO verdicts (counted here per registered SLO) and the window's output
 * throughput: the tokens whose chunk lies in [first measured send, last measured
 * send] of the class. A record's chunks lie in [its first, its last content chunk],
 * so only a record whose content straddles the window's end needs its times then.
 * With a way to read times back (cb_record_set_reread) every success drops them at
 * once and a summary reads back the straddling few. Without one, a record is dropped
 * once a later measured send of its class is known (the watermark) and it ended
 * before it: then all its tokens are inside every window it will be judged in.
 * Records that end after the latest send so far wait in `pending` and are looked at
 * again when the pending list has doubled: the ones still waiting are those in flight
 * across a send, about the concurrency when the server keeps up (all that complete
 * after the last send when it does not).
 */
#include <math.h>
#include <string.h>

#include "calibench/alloc.h"
#include "record_drop.h"

/* ---- token bins ------------------------------------------------------------------------ */

/* Count `tokens` at time t, halving the resolution while t falls past the last bin:
 * the width depends only on the largest time, so bins built in any order agree. */
static void bins_add(cb_token_bins *b, uint64_t t, double tokens) {
  if (!b->width_ns) b->width_ns = 1000000;
  while (t / b->width_ns >= CB_TOKEN_BINS_MAX) {
    for (size_t j = 0; j < b->n; j++) {
      double v = b->tokens[j];
      b->tokens[j] = 0;
      b->tokens[j / 2] += v;
    }
    b->n = (b->n + 1) / 2;
    b->width_ns *= 2;
  }
  size_t j = (size_t)(t / b->width_ns);
  if (j >= b->n) {
    b->tokens = cb_reallocarray(b->tokens, j + 1, sizeof *b->tokens);
    memset(b->tokens + b->n, 0, (j + 1 - b->n) * sizeof *b->tokens);
    b->n = j + 1;
  }
  b->tokens[j] += tokens;
}

static void bins_add_record(cb_token_bins *b, const cb_record *r) {
  if (r->chunk_ns) {
    for (size_t c = 0; c < r->n_chunks; c++) bins_add(b, r->chunk_ns[c], cb_record_chunk_tokens(r, c));
  } else if (!r->n_chunks && r->output_tokens > 0) {
    bins_add(b, r->end_ns, (double)r->output_tokens);
  }
}

void cb_token_bins_free(cb_token_bins *b) {
  cb_free(b->tokens);
  memset(b, 0, sizeof *b);
}

void cb_record_set_token_bins(const cb_record_set *set, cb_token_bins *out) {
  memset(out, 0, sizeof *out);
  const struct cb__record_drop *d = set->drop;
  if (d && d->bins.n) {
    *out = d->bins;
    out->tokens = cb_reallocarray(NULL, d->bins.n, sizeof *out->tokens);
    memcpy(out->tokens, d->bins.tokens, d->bins.n * sizeof *out->tokens);
  }
  for (size_t i = 0; i < set->count; i++)
    if (cb_record_ok(&set->items[i])) bins_add_record(out, &set->items[i]);
}

/* ---- ITL statistics ------------------------------------------------------------------- */

static int measured_ok(const cb_record *r) {
  return !r->warmup && cb_record_ok(r) && !cb_record_times_invalid(r);
}

void cb_record_set_itl(const cb_record_set *set, const char *class_name, cb_itl_stats *out) {
  cb_itl_stats_init(out);
  const struct cb__record_drop *d = set->drop;
  for (size_t k = 0; d && k < d->n_classes; k++)
    if (!class_name || !strcmp(d->classes[k].name, class_name)) cb_itl_stats_merge(out, &d->classes[k].itl);
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->chunk_ns && (!class_name || !strcmp(r->class_name, class_name)) && measured_ok(r))
      cb_itl_stats_add(out, r);
  }
}

/* ---- dropping ------------------------------------------------------------------------- */

void cb_record_set_drop_chunk_times(cb_record_set *s, const cb_slo *slos, size_t n_slos) {
  struct cb__record_drop *d = s->drop;
  if (!d) {
    d = s->drop = cb_calloc(1, sizeof *d);
    d->prune_at = 64;
  }
  size_t before = d->n_slos;
  d->slos = cb_reallocarray(d->slos, before + n_slos + 1, sizeof *d->slos);
  for (size_t k = 0; k < n_slos; k++)
    if (slos[k].metric == CB_METRIC_ITL || slos[k].metric == CB_METRIC_ITL_TOKEN)
      d->slos[d->n_slos++] = slos[k];
  /* classes met already count the new SLOs from here on: register before pushing */
  for (size_t k = 0; k < d->n_classes; k++) {
    cb__drop_class *c = &d->classes[k];
    c->units = cb_reallocarray(c->units, d->n_slos + 1, sizeof *c->units);
    c->over = cb_reallocarray(c->over, d->n_slos + 1, sizeof *c->over);
    for (size_t j = before; j < d->n_slos; j++) c->units[j] = c->over[j] = 0;
  }
}

void cb__record_drop_free(struct cb__record_drop *d) {
  if (!d) return;
  for (size_t k = 0; k < d->n_classes; k++) {
    cb_itl_stats_free(&d->classes[k].itl);
    cb_free(d->classes[k].units);
    cb_free(d->classes[k].over);
  }
  cb_free(d->classes);
  cb_free(d->slos);
  cb_free(d->pending);
  cb_token_bins_free(&d->bins);
  cb_free(d);
}

static cb__drop_class *class_of(struct cb__record_drop *d, const char *name) {
  for (size_t k = 0; k < d->n_classes; k++)
    if (!strcmp(d->classes[k].name, name)) return &d->classes[k];
  d->classes = cb_reallocarray(d->classes, d->n_classes + 1, sizeof *d->classes);
  cb__drop_class *c = &d->classes[d->n_classes++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  cb_itl_stats_init(&c->itl);
  c->units = cb_calloc(d->n_slos ? d->n_slos : 1, sizeof *c->units);
  c->over = cb_calloc(d->n_slos ? d->n_slos : 1, sizeof *c->over);
  return c;
}

/* Count what the summary would read from r's chunk times, then free them. */
static void drop(struct cb__record_drop *d, cb_record *r) {
  cb__drop_class *c = class_of(d, r->class_name);
  bins_add_record(&d->bins, r);
  uint64_t max_gap = 0;
  for (size_t i = 1; i < r->n_chunks; i++) {
    uint64_t g = r->chunk_ns[i] - r->chunk_ns[i - 1];
    if (g > max_gap) max_gap = g;
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < r->n_chunks; i++) sum += cb_record_chunk_tokens(r, i);
  if (!r->warmup) {
    cb_itl_stats_add(&c->itl, r);
    /* as summary.c's compute_slos counts the gaps of one request */
    for (size_t k = 0; k < d->n_slos; k++) {
      int per_token = d->slos[k].metric == CB_METRIC_ITL_TOKEN;
      for (size_t i = 1; i < r->n_chunks; i++) {
        double g = (double)(r->chunk_ns[i] - r->chunk_ns[i - 1]);
        uint32_t tokens = cb_record_chunk_tokens(r, i);
        double per = per_token && tokens ? g / tokens : g;
        size_t w = per_token ? tokens : 1;
        c->units[k] += w;
        c->over[k] += per > d->slos[k].bound_ns ? w : 0;
      }
    }
  }
  r->max_gap_ns = max_gap;
  r->chunk_token_sum = sum;
  cb_free(r->chunk_ns);
  cb_free(r->chunk_tokens);
  r->chunk_ns = NULL;
  r->chunk_tokens = NULL;
}

/* Drop the pending records whose class has seen a send after their end. */
static void prune(cb_record_set *s) {
  struct cb__record_drop *d = s->drop;
  size_t kept = 0;
  for (size_t j = 0; j < d->n_pending; j++) {
    cb_record *r = &s->items[d->pending[j]];
    if (r->end_ns <= class_of(d, r->class_name)->watermark_ns) drop(d, r);
    else d->pending[kept++] = d->pending[j];
  }
  d->n_pending = kept;
  d->prune_at = 2 * kept > 64 ? 2 * kept : 64;
}

void cb__record_drop_pushed(cb_record_set *s, size_t i) {
  struct cb__record_drop *d = s->drop;
  cb_record *r = &s->items[i];
  if (cb_record_times_invalid(r)) return; /* kept whole: the summary names it */
  cb__drop_class *c = class_of(d, r->class_name);
  if (!r->warmup && r->sent_ns > c->watermark_ns) c->watermark_ns = r->sent_ns;
  /* Failures keep their times: they are few, and an ITL SLO counts their gaps. */
  if (!r->chunk_ns || !cb_record_ok(r)) return;
  if (d->reread || r->warmup || r->end_ns <= c->watermark_ns) {
    drop(d, r);
  } else {
    if (d->n_pending == d->alloc_pending) {
      d->alloc_pending = d->alloc_pending ? 2 * d->alloc_pending : 64;
      d->pending = cb_reallocarray(d->pending, d->alloc_pending, sizeof *d->pending);
    }
    d->pending[d->n_pending++] = i;
  }
  if (d->n_pending >= d->prune_at) prune(s);
}

/* ---- what the summary reads ---------------------------------------------------------- */

/* Gaps over the bound by the histogram, for an ITL SLO not registered: a bucket that
 * reaches past the bound counts as over, so the verdict is never too kind. */
static void estimate(const cb_itl_stats *itl, const cb_slo *slo, size_t *units, size_t *over) {
  const cb_hist *h = slo->metric == CB_METRIC_ITL_TOKEN && itl->per_token_own ? &itl->per_token : &itl->gap;
  cb_hist_iter it;
  cb_hist_iter_init(&it, h);
  while (cb_hist_iter_next(&it)) {
    *units += it.count;
    if ((double)it.highest > slo->bound_ns) *over += it.count;
  }
}

int cb__record_drop_slo_counts(const cb_record_set *s, const char *class_name, const cb_slo *slo,
                               size_t *units, size_t *over) {
  const struct cb__record_drop *d = s->drop;
  int any = 0;
  for (size_t k = 0; d && k < d->n_classes; k++) {
    const cb__drop_class *c = &d->classes[k];
    if (class_name && strcmp(c->name, class_name)) continue;
    size_t j = 0;
    while (j < d->n_slos && !(d->slos[j].metric == slo->metric && d->slos[j].bound_ns == slo->bound_ns)) j++;
    if (j < d->n_slos) {
      *units += c->units[j];
      *over += c->over[j];
    } else {
      estimate(&c->itl, slo, units, over);
    }
    any = 1;
  }
  return any;
}

void cb_record_set_reread(cb_record_set *s, cb_record_reread_fn fn, void *ctx) {
  if (!s->drop) cb_record_set_drop_chunk_times(s, NULL, 0);
  s->drop->reread = fn;
  s->drop->reread_ctx = ctx;
}

double cb__record_drop_tokens_by(const cb_record_set *s, size_t i, uint64_t b) {
  const cb_record *r = &s->items[i];
  if (r->last_content_ns <= b) return (double)r->chunk_token_sum;
  if (r->first_content_ns > b) return 0;
  const struct cb__record_drop *d = s->drop;
  cb_record back;
  cb_record_init(&back);
  cb_error err;
  if (d && d->reread && d->reread(d->reread_ctx, i, &back, &err) == CB_OK && back.n_chunks == r->n_chunks) {
    double t = 0;
    for (size_t c = 0; c < back.n_chunks && back.chunk_ns[c] <= b; c++) t += cb_record_chunk_tokens(&back, c);
    cb_record_free(&back);
    return t;
  }
  cb_record_free(&back);
  /* not readable: spread evenly between the first and the last content chunk */
  return floor((double)r->chunk_token_sum * (double)(b - r->first_content_ns) /
               (double)(r->last_content_ns - r->first_content_ns));
}
