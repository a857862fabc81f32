/*
 * seg_refs.h - a segment's references as the two arrays (texts, lengths) that the
 * ROUGE and SQuAD scorers take: on the stack for up to 16 (every usual corpus), else
 * allocated. Header-only.
 */
#ifndef CALIBENCH_EVAL_SEG_REFS_H
#define CALIBENCH_EVAL_SEG_REFS_H

#include "calibench/alloc.h"
#include "calibench/eval.h"

typedef struct cb__seg_refs {
  const char *s_local[16];
  size_t n_local[16];
  const char **s; /* seg->refs[k].s */
  size_t *n;      /* seg->refs[k].n */
} cb__seg_refs;

static inline void cb__seg_refs_of(const cb_eval_segment *seg, cb__seg_refs *r) {
  int local = seg->nrefs <= 16;
  r->s = local ? r->s_local : cb_calloc(seg->nrefs, sizeof *r->s);
  r->n = local ? r->n_local : cb_calloc(seg->nrefs, sizeof *r->n);
  for (size_t k = 0; k < seg->nrefs; k++) {
    r->s[k] = seg->refs[k].s;
    r->n[k] = seg->refs[k].n;
  }
}

static inline void cb__seg_refs_free(cb__seg_refs *r) {
  if (r->s != r->s_local) cb_free(r->s);
  if (r->n != r->n_local) cb_free(r->n);
}

#endif
