/*
 * think.c - the think time between a session's reply and its next user turn
 * (--think-time): const, exp(onential), uniform, lognormal. Lognormal takes its
 * arithmetic mean and sigma (the std of the log): mu = ln(mean) - sigma^2 / 2, as the
 * length distributions do (lendist.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/conversations.h"
#include "calibench/duration.h"

#define NS_PER_S 1000000000ull

static cb_status expected(cb_error *err, const char *s) {
  return cb_error_set(err, CB_ERR_PARSE,
                      "expected const:D, exp:MEAN, uniform:LO,HI, lognormal:MEAN,SIGMA or none "
                      "(durations such as 500ms or 2s), got '%s'",
                      s);
}

/* A duration in `s` up to `end` (a bare number is seconds). */
static cb_status dur(const char *s, const char *end, uint64_t *out, cb_error *err) {
  char tmp[64];
  size_t n = (size_t)(end - s);
  if (n == 0 || n >= sizeof tmp) return CB_ERR_PARSE;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  return cb_duration_parse(tmp, NS_PER_S, out, err);
}

cb_status cb_think_parse(const char *s, cb_think *out, cb_error *err) {
  *out = (cb_think){.kind = CB_THINK_CONST};
  if (!s) return expected(err, "");
  if (!strcmp(s, "none") || !strcmp(s, "0")) return CB_OK;
  static const char *const names[] = {"const:", "exp:", "uniform:", "lognormal:"};
  for (int k = 0; k < 4; k++) {
    size_t n = strlen(names[k]);
    if (strncmp(s, names[k], n)) continue;
    const char *arg = s + n, *comma = strchr(arg, ','), *end = arg + strlen(arg);
    out->kind = (cb_think_kind)k;
    int two = out->kind == CB_THINK_UNIFORM || out->kind == CB_THINK_LOGNORMAL;
    if (two != (comma != NULL)) return expected(err, s);
    if (dur(arg, two ? comma : end, &out->a_ns, err) != CB_OK) return expected(err, s);
    if (out->kind == CB_THINK_UNIFORM) {
      if (dur(comma + 1, end, &out->b_ns, err) != CB_OK || out->b_ns < out->a_ns)
        return expected(err, s);
    } else if (out->kind == CB_THINK_LOGNORMAL) {
      char *e;
      out->sigma = strtod(comma + 1, &e);
      if (e == comma + 1 || *e || !(out->sigma >= 0 && out->sigma <= 10)) return expected(err, s);
    }
    return CB_OK;
  }
  return expected(err, s);
}

void cb_think_describe(const cb_think *t, char *buf, size_t size) {
  double a = (double)t->a_ns / NS_PER_S, b = (double)t->b_ns / NS_PER_S;
  switch (t->kind) {
    case CB_THINK_EXP: snprintf(buf, size, "exp:%gs", a); break;
    case CB_THINK_UNIFORM: snprintf(buf, size, "uniform:%gs,%gs", a, b); break;
    case CB_THINK_LOGNORMAL: snprintf(buf, size, "lognormal:%gs,%g", a, t->sigma); break;
    default: snprintf(buf, size, "const:%gs", a); break;
  }
}

uint64_t cb_think_draw(const cb_think *t, cb_rng *rng) {
  double mean = (double)t->a_ns, ns;
  switch (t->kind) {
    case CB_THINK_EXP: ns = mean > 0 ? cb_rng_exponential(rng, 1.0 / mean) : 0; break;
    case CB_THINK_UNIFORM: ns = mean + cb_rng_uniform(rng) * (double)(t->b_ns - t->a_ns); break;
    case CB_THINK_LOGNORMAL:
      ns = mean > 0 ? cb_rng_lognormal(rng, log(mean) - t->sigma * t->sigma / 2, t->sigma) : 0;
      break;
    default: return t->a_ns;
  }
  return ns > 0 && ns < 1e18 ? (uint64_t)llround(ns) : 0;
}
