/*
 * fault.c - parse fault-injection specs and decide which request each one hits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/clock.h"
#include "calibench/duration.h"
#include "calibench/rng.h"
#include "calibench/sim_server.h"

static const char *const kind_names[] = {"429", "500", "503", "cut",
                                         "malformed-sse", "invalid-json", "stall"};

const char *cb_sim_fault_kind_name(cb_sim_fault_kind kind) {
  if ((unsigned)kind >= sizeof kind_names / sizeof kind_names[0]) return "unknown";
  return kind_names[kind];
}

static cb_status parse_number(const char *spec, const char *key, const char *val, double lo,
                              double hi, double *out, cb_error *err) {
  char *end;
  errno = 0;
  double x = strtod(val, &end);
  if (end == val || *end || errno || x < lo || x > hi)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--fault '%s': %s=%s is not a number in [%g, %g]", spec, key, val, lo, hi);
  *out = x;
  return CB_OK;
}

/* A duration in the one syntax (docs/durations.md); a bare number is in `unit_ns`, the
 * unit the key names, and the value must be a whole number of those units (the stall
 * timer counts ms, Retry-After whole seconds), at most max_units. */
static cb_status parse_duration(const char *spec, const char *key, const char *val,
                                uint64_t unit_ns, uint64_t max_units, uint64_t *out,
                                cb_error *err) {
  uint64_t ns;
  cb_status st = cb_duration_parse(val, unit_ns, &ns, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "--fault '%s': %s=%s", spec, key, val);
    return st; /* not wrap's value: that is CB_OK when err is NULL */
  }
  if (ns % unit_ns || ns / unit_ns > max_units)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--fault '%s': %s=%s is not a whole number of %s in [0, %llu]", spec,
                        key, val, unit_ns == CB_NS_PER_MS ? "ms" : "s",
                        (unsigned long long)max_units);
  *out = ns / unit_ns;
  return CB_OK;
}

cb_status cb_sim_fault_parse(const char *spec, cb_sim_fault *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  out->index = -1;
  out->stall_ms = 1000;
  out->retry_after_s = 1;
  const char *colon = strchr(spec, ':');
  size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
  size_t nkinds = sizeof kind_names / sizeof kind_names[0];
  size_t k = 0;
  while (k < nkinds && !(strlen(kind_names[k]) == klen && !strncmp(spec, kind_names[k], klen))) k++;
  if (k == nkinds)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--fault '%s': unknown kind '%.*s' (expected 429, 500, 503, cut, "
                        "malformed-sse, invalid-json or stall)",
                        spec, (int)klen, spec);
  out->kind = (cb_sim_fault_kind)k;
  int have_trigger = 0;
  char opts[256];
  if ((size_t)snprintf(opts, sizeof opts, "%s", colon ? colon + 1 : "") >= sizeof opts)
    return cb_error_set(err, CB_ERR_INVALID, "--fault '%.64s...': longer than %zu characters",
                        spec, sizeof opts - 1);
  char *save = NULL;
  for (char *kv = strtok_r(opts, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq)
      return cb_error_set(err, CB_ERR_INVALID, "--fault '%s': '%s' is not key=value", spec, kv);
    *eq = '\0';
    const char *key = kv, *val = eq + 1;
    double x = 0;
    uint64_t u = 0;
    cb_status st;
    if (!strcmp(key, "p")) {
      st = parse_number(spec, key, val, 0, 1, &x, err);
      out->probability = x;
      have_trigger = 1;
    } else if (!strcmp(key, "index")) {
      st = parse_number(spec, key, val, 0, 1e15, &x, err);
      out->index = (int64_t)x;
      have_trigger = 1;
    } else if (!strcmp(key, "every")) {
      st = parse_number(spec, key, val, 1, 1e15, &x, err);
      out->every = (int64_t)x;
      have_trigger = 1;
    } else if (!strcmp(key, "after")) {
      st = parse_number(spec, key, val, 0, 1e12, &x, err);
      out->after_tokens = (int64_t)x;
    } else if (!strcmp(key, "ms")) {
      st = parse_duration(spec, key, val, CB_NS_PER_MS, 3600000, &u, err);
      out->stall_ms = u;
    } else if (!strcmp(key, "retry-after")) {
      st = parse_duration(spec, key, val, CB_NS_PER_S, 86400, &u, err);
      out->retry_after_s = (int)u;
    } else {
      return cb_error_set(err, CB_ERR_INVALID,
                          "--fault '%s': unknown key '%s' (expected p, index, every, after, ms, "
                          "retry-after)", spec, key);
    }
    if (st != CB_OK) return st;
  }
  if (!have_trigger)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--fault '%s': say which requests it hits with p=, index= or every=", spec);
  return CB_OK;
}

#define FAULT_STREAM UINT64_C(0x6661756c74) /* "fault" */

const cb_sim_fault *cb_sim_fault_pick(const cb_sim_fault *faults, size_t n, uint64_t seed,
                                      uint64_t index) {
  for (size_t i = 0; i < n; i++) {
    const cb_sim_fault *f = &faults[i];
    if (f->index >= 0 && (uint64_t)f->index == index) return f;
    if (f->every > 0 && index % (uint64_t)f->every == (uint64_t)f->every - 1) return f;
    if (f->probability > 0) {
      cb_rng rng;
      cb_rng_init_stream(&rng, seed, FAULT_STREAM + i, index);
      if (cb_rng_uniform(&rng) < f->probability) return f;
    }
  }
  return NULL;
}
