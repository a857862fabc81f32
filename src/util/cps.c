/*
 * cps.c - a growing array of code points (cps.h).
 */
#include "util/cps.h"

#include "calibench/alloc.h"

void cb__cps_push(cb__cps *c, uint32_t cp) {
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->v = cb_reallocarray(c->v, c->cap, sizeof *c->v);
  }
  c->v[c->n++] = cp;
}

void cb__cps_free(cb__cps *c) {
  cb_free(c->v);
  *c = (cb__cps){0};
}
