/*
 * record_samples.c - which requests a report shows as samples (results.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/results.h"

typedef struct by_e2e {
  size_t pos;
  uint64_t e2e_ns;
} by_e2e;

static int cmp_e2e(const void *a, const void *b) {
  const by_e2e *x = a, *y = b;
  if (x->e2e_ns != y->e2e_ns) return x->e2e_ns < y->e2e_ns ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void cb_record_set_samples(const cb_record_set *set, cb_record_samples *out) {
  out->first = out->median = out->slowest = SIZE_MAX;
  if (!set->count) return;
  out->first = 0;
  for (size_t i = 1; i < set->count; i++)
    if (set->items[i].sent_ns < set->items[out->first].sent_ns) out->first = i;
  by_e2e *ok = cb_calloc(set->count, sizeof *ok);
  size_t n = 0;
  for (size_t i = 0; i < set->count; i++) {
    const cb_record *r = &set->items[i];
    if (r->warmup || !cb_record_ok(r) || cb_record_times_invalid(r)) continue;
    ok[n++] = (by_e2e){.pos = i, .e2e_ns = r->end_ns - r->sent_ns};
  }
  qsort(ok, n, sizeof *ok, cmp_e2e);
  if (n) {
    out->median = ok[(n - 1) / 2].pos;
    out->slowest = ok[n - 1].pos;
  }
  cb_free(ok);
}
