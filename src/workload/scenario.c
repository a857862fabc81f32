/*
 * scenario.c - scenario files: several request classes (tenants) in one YAML file,
 * parsed (libyaml) into a cb_workload_params.
 *
 *   seed: 42                     # optional top level: seed, arrival, rate, burstiness,
 *   rate: 20                     #   trace_speed, concurrency, num_requests, duration,
 *   arrival: poisson             #   warmup, ramp_up, ramp_start, ramp_duration
 *   duration: 120s
 *   classes:
 *     - name: chat               # required, unique
 *       share: 3                 # a share of the common process (weights, normalised)
 *       dataset: sharegpt:sg.json
 *       slo: {ttft: 500ms, tpot: 50ms}
 *       headers: {X-Tenant: chat}
 *     - name: batch
 *       rate: 2                  # its own process instead of a share
 *       arrival: constant
 *       dataset: synthetic
 *       input_len: {dist: lognormal, mean: 2000, sigma: 0.5}
 *
 * The full key list is in docs/workload.md. Every error names the file, the line and
 * the key path ("key 'classes[1].slo.ttft': expected a duration such as 500ms, 2s or
 * 1m, got 'soon'"). Relative dataset paths are resolved against the scenario file's directory.
 * All strings the params point to are owned by the cb_scenario.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "calibench/alloc.h"
#include "util/yaml_doc.h"
#include "workload_internal.h"

struct cb_scenario {
  cb_workload_params params;
  cb_workload_class_params *classes;
  void **owned; /* every allocation the params point into */
  size_t num_owned, cap_owned;
  unsigned keys_set;
};

typedef struct yctx {
  cb__yaml_ctx yaml; /* the file's name (path), document and error */
  const char *base_dir;
  cb_scenario *sc;
} yctx;

static void *own(cb_scenario *sc, void *p) {
  if (sc->num_owned == sc->cap_owned) {
    sc->cap_owned = sc->cap_owned ? 2 * sc->cap_owned : 32;
    sc->owned = cb_reallocarray(sc->owned, sc->cap_owned, sizeof *sc->owned);
  }
  sc->owned[sc->num_owned++] = p;
  return p;
}

static const char *sval(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

/* ---- scalar values ---------------------------------------------------------------- */

static cb_status want_scalar(const yctx *y, const yaml_node_t *v, const char *key) {
  const char *s;
  return cb__yaml_scalar(y->yaml.path, v, key, &s, y->yaml.err);
}

static cb_status get_double(const yctx *y, const yaml_node_t *v, const char *key, double lo,
                            int lo_open, double hi, double *out) {
  return cb__yaml_number(y->yaml.path, v, key, lo, lo_open, hi, out, y->yaml.err);
}

static cb_status get_u64(const yctx *y, const yaml_node_t *v, const char *key, uint64_t lo,
                         uint64_t hi, uint64_t *out) {
  cb_status st = want_scalar(y, v, key);
  if (st != CB_OK) return st;
  const char *s = sval(v);
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (!(s[0] >= '0' && s[0] <= '9') || *end || errno)
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, key, "expected a whole number, got '%s'", s);
  if (x < lo || x > hi)
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_RANGE, key, "must be in [%llu, %llu], got %s",
                           (unsigned long long)lo, (unsigned long long)hi, s);
  *out = (uint64_t)x;
  return CB_OK;
}

static cb_status get_u32(const yctx *y, const yaml_node_t *v, const char *key, uint32_t lo,
                         uint32_t hi, uint32_t *out) {
  uint64_t x;
  cb_status st = get_u64(y, v, key, lo, hi, &x);
  if (st == CB_OK) *out = (uint32_t)x;
  return st;
}

static cb_status get_bool(const yctx *y, const yaml_node_t *v, const char *key, int *out) {
  return cb__yaml_bool(y->yaml.path, v, key, out, y->yaml.err);
}

static cb_status get_string(const yctx *y, const yaml_node_t *v, const char *key,
                            const char **out) {
  cb_status st = want_scalar(y, v, key);
  if (st != CB_OK) return st;
  if (!*sval(v))
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, key, "expected a non-empty string");
  *out = own(y->sc, cb_strdup(sval(v)));
  return CB_OK;
}

/* Pass a parse helper's message through with the file, line and key. */
static cb_status helper(const yctx *y, const yaml_node_t *v, const char *key, cb_status st,
                        const cb_error *e) {
  return st == CB_OK ? CB_OK : cb__yaml_key_at(&y->yaml, v, st, key, "%s", e->msg);
}

/* ---- mappings ------------------------------------------------------------------------ */

typedef cb_status (*pair_fn)(const yctx *y, const char *key, const char *path,
                             const yaml_node_t *k, const yaml_node_t *v, void *target);

/* Call fn for each key of a mapping; `known` lists the keys for the unknown-key error. */
static cb_status each_pair(const yctx *y, const yaml_node_t *map, const char *prefix,
                           const char *known, pair_fn fn, void *target) {
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(&y->yaml, map, CB_ERR_PARSE, prefix[0] ? prefix : "(top level)",
                           "expected a mapping of keys");
  for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
       pr++) {
    yaml_node_t *k = yaml_document_get_node(y->yaml.doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(y->yaml.doc, pr->value);
    if (k->type != YAML_SCALAR_NODE)
      return cb__yaml_key_at(&y->yaml, k, CB_ERR_PARSE, prefix[0] ? prefix : "(top level)",
                             "keys must be plain names");
    char path[256];
    if ((size_t)snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", sval(k)) >=
        sizeof path)
      return cb__yaml_key_at(&y->yaml, k, CB_ERR_PARSE, prefix[0] ? prefix : "(top level)",
                             "key path too long");
    cb_status st = fn(y, sval(k), path, k, v, target);
    if (st == CB_ERR_NOT_FOUND)
      return cb__yaml_key_at(&y->yaml, k, CB_ERR_PARSE, path, "unknown key (known: %s)", known);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

/* ---- lengths, SLOs, headers ------------------------------------------------------------ */

typedef struct len_target {
  cb_dataset_len *len;
  int has_spread;
} len_target;

static cb_status len_pair(const yctx *y, const char *key, const char *path,
                          const yaml_node_t *k, const yaml_node_t *v, void *target) {
  (void)k;
  len_target *t = target;
  cb_dataset_len *d = t->len;
  if (!strcmp(key, "dist")) {
    cb_status st = want_scalar(y, v, path);
    if (st != CB_OK) return st;
    cb_error e;
    cb_error_clear(&e);
    return helper(y, v, path, cb_dataset_len_kind_parse(sval(v), &d->kind, &e), &e);
  }
  if (!strcmp(key, "mean")) return get_double(y, v, path, 1, 0, 4294967295.0, &d->mean);
  if (!strcmp(key, "range_ratio") || !strcmp(key, "std") || !strcmp(key, "sigma") ||
      !strcmp(key, "spread")) {
    t->has_spread = 1;
    return get_double(y, v, path, 0, 0, 1e12, &d->spread);
  }
  if (!strcmp(key, "min")) return get_u32(y, v, path, 0, CB_LIMIT_TOKENS, &d->min);
  if (!strcmp(key, "max")) return get_u32(y, v, path, 0, CB_LIMIT_TOKENS, &d->max);
  return CB_ERR_NOT_FOUND;
}

static cb_status get_len(const yctx *y, const yaml_node_t *v, const char *path,
                         cb_dataset_len *d) {
  if (v->type == YAML_SCALAR_NODE) {
    *d = (cb_dataset_len){CB_LEN_FIXED, 0, 0, 0, 0};
    return get_double(y, v, path, 1, 0, CB_LIMIT_TOKENS, &d->mean);
  }
  *d = (cb_dataset_len){CB_LEN_FIXED, 0, 0, 0, 0};
  len_target t = {d, 0};
  cb_status st =
      each_pair(y, v, path, "dist, mean, range_ratio, std, sigma, min, max", len_pair, &t);
  if (st != CB_OK) return st;
  if (d->mean < 1) return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path, "'mean' is required");
  if (d->kind != CB_LEN_FIXED && !t.has_spread) {
    const char *spread = d->kind == CB_LEN_UNIFORM  ? "range_ratio"
                         : d->kind == CB_LEN_NORMAL ? "std"
                                                    : "sigma";
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path, "%s needs its spread (%s)",
                           cb_dataset_len_kind_name(d->kind), spread);
  }
  cb_error e;
  cb_error_clear(&e);
  return helper(y, v, path, cb_dataset_len_validate(d, path, &e), &e);
}

static cb_status slo_pair(const yctx *y, const char *key, const char *path,
                          const yaml_node_t *k, const yaml_node_t *v, void *target) {
  (void)k;
  cb_workload_slo *s = target;
  uint64_t *dst = !strcmp(key, "ttft") ? &s->ttft_ns
                  : !strcmp(key, "tpot") ? &s->tpot_ns
                  : !strcmp(key, "itl") ? &s->itl_ns
                  : (!strcmp(key, "e2e") || !strcmp(key, "e2el")) ? &s->e2e_ns
                                                                   : NULL;
  if (!dst) return CB_ERR_NOT_FOUND;
  cb_status st = want_scalar(y, v, path);
  if (st != CB_OK) return st;
  cb_error e;
  cb_error_clear(&e);
  return helper(y, v, path, cb_workload_parse_slo_bound(sval(v), dst, &e), &e);
}

typedef struct header_list {
  char **lines;
  size_t n;
} header_list;

static cb_status header_pair(const yctx *y, const char *key, const char *path,
                             const yaml_node_t *k, const yaml_node_t *v, void *target) {
  header_list *h = target;
  cb_status st = want_scalar(y, v, path);
  if (st != CB_OK) return st;
  cb_buf line;
  cb_buf_init(&line, 0);
  cb_buf_appendf(&line, "%s: %s", key, sval(v));
  if (strpbrk(line.data, "\r\n") || strchr(key, ':') || strchr(key, ' ') || !*key) {
    cb_buf_free(&line);
    return cb__yaml_key_at(
        &y->yaml, k, CB_ERR_PARSE, path,
        "a header needs a name without spaces or ':' and a value without line breaks");
  }
  h->lines[h->n++] = own(y->sc, line.data);
  return CB_OK;
}

/* ---- a class ------------------------------------------------------------------------- */

typedef struct class_target {
  cb_workload_class_params *c;
  int own_process;         /* rate/arrival/burstiness/trace_speed given */
  int rate_given;
  int share_given;
  int vllm_filter;
  const yaml_node_t *share_node, *own_node;
} class_target;

static cb_status resolve_dataset(const yctx *y, const yaml_node_t *v, const char *path,
                                 const char **out) {
  const char *spec;
  cb_status st = get_string(y, v, path, &spec);
  if (st != CB_OK) return st;
  const char *colon = strchr(spec, ':');
  if (!colon || !y->base_dir || colon[1] == '/' || colon[1] == '\0') {
    *out = spec;
    return CB_OK;
  }
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_buf_appendf(&b, "%.*s%s/%s", (int)(colon - spec + 1), spec, y->base_dir, colon + 1);
  *out = own(y->sc, b.data);
  return CB_OK;
}

static cb_status class_pair(const yctx *y, const char *key, const char *path,
                            const yaml_node_t *k, const yaml_node_t *v, void *target) {
  (void)k;
  class_target *t = target;
  cb_workload_class_params *c = t->c;
  cb_dataset_params *d = &c->data;
  cb_error e;
  cb_error_clear(&e);
  if (!strcmp(key, "name")) return get_string(y, v, path, &c->name);
  if (!strcmp(key, "dataset")) return resolve_dataset(y, v, path, &c->dataset);
  if (!strcmp(key, "share")) {
    t->share_given = 1;
    t->share_node = v;
    return get_double(y, v, path, 0, 1, 1e12, &c->share);
  }
  if (!strcmp(key, "rate") || !strcmp(key, "arrival") || !strcmp(key, "burstiness") ||
      !strcmp(key, "trace_speed")) {
    t->own_process = 1;
    t->own_node = v;
    if (!strcmp(key, "rate")) {
      t->rate_given = 1;
      return get_double(y, v, path, 0, 1, 1e9, &c->arrival.rate);
    }
    if (!strcmp(key, "burstiness"))
      return get_double(y, v, path, 0, 1, 1e6, &c->arrival.burstiness);
    if (!strcmp(key, "trace_speed"))
      return get_double(y, v, path, 0, 1, 1e9, &c->arrival.trace_speed);
    cb_status st = want_scalar(y, v, path);
    if (st != CB_OK) return st;
    st = helper(y, v, path, cb_arrival_kind_parse(sval(v), &c->arrival.kind, &e), &e);
    if (st == CB_OK && c->arrival.kind == CB_ARRIVAL_CLOSED)
      return cb__yaml_key_at(
          &y->yaml, v, CB_ERR_PARSE, path,
          "a class's own process must be open; closed loop is set at the top level");
    return st;
  }
  if (!strcmp(key, "slo")) return each_pair(y, v, path, "ttft, tpot, itl, e2e", slo_pair, &c->slo);
  if (!strcmp(key, "headers")) {
    if (v->type != YAML_MAPPING_NODE)
      return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path,
                             "expected a mapping of header names to values");
    size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
    header_list h = {own(y->sc, cb_calloc(n ? n : 1, sizeof(char *))), 0};
    cb_status st = each_pair(y, v, path, "any header name", header_pair, &h);
    c->headers = (const char *const *)h.lines;
    c->num_headers = h.n;
    return st;
  }
  if (!strcmp(key, "input_len")) return get_len(y, v, path, &d->input_len);
  if (!strcmp(key, "output_len")) return get_len(y, v, path, &d->output_len);
  if (!strcmp(key, "prefix_count")) return get_u32(y, v, path, 0, UINT32_MAX, &d->prefix_count);
  if (!strcmp(key, "prefix_len")) return get_u32(y, v, path, 0, CB_LIMIT_TOKENS, &d->prefix_len);
  if (!strcmp(key, "order")) {
    static const char *const names[] = {"auto", "sequential", "shuffle", "random"};
    cb_status st = want_scalar(y, v, path);
    if (st != CB_OK) return st;
    for (int i = 0; i < 4; i++)
      if (!strcasecmp(sval(v), names[i])) return d->order = (cb_dataset_order)i, CB_OK;
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path,
                           "expected auto, sequential, shuffle or random, got '%s'", sval(v));
  }
  if (!strcmp(key, "prompt_field")) return get_string(y, v, path, &d->prompt_field);
  if (!strcmp(key, "output_field")) return get_string(y, v, path, &d->output_field);
  if (!strcmp(key, "output_len_override"))
    return get_u32(y, v, path, 0, CB_LIMIT_TOKENS, &d->output_len_override);
  if (!strcmp(key, "sharegpt_mode")) {
    cb_status st = want_scalar(y, v, path);
    if (st != CB_OK) return st;
    if (!strcasecmp(sval(v), "first_turn")) return d->sharegpt_mode = CB_SHAREGPT_FIRST_TURN, CB_OK;
    if (!strcasecmp(sval(v), "turns")) return d->sharegpt_mode = CB_SHAREGPT_TURNS, CB_OK;
    return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path,
                           "expected first_turn or turns, got '%s'", sval(v));
  }
  if (!strcmp(key, "vllm_filter")) return get_bool(y, v, path, &t->vllm_filter);
  if (!strcmp(key, "min_prompt_len")) return get_u32(y, v, path, 0, UINT32_MAX, &d->min_prompt_len);
  if (!strcmp(key, "min_output_len")) return get_u32(y, v, path, 0, UINT32_MAX, &d->min_output_len);
  if (!strcmp(key, "max_prompt_len")) return get_u32(y, v, path, 0, UINT32_MAX, &d->max_prompt_len);
  if (!strcmp(key, "max_total_len")) return get_u32(y, v, path, 0, UINT32_MAX, &d->max_total_len);
  if (!strcmp(key, "block_tokens")) return get_u32(y, v, path, 1, UINT32_MAX, &d->block_tokens);
  return CB_ERR_NOT_FOUND;
}

#define CLASS_KEYS                                                                            \
  "name, dataset, share, rate, arrival, burstiness, trace_speed, slo, headers, input_len, "  \
  "output_len, prefix_count, prefix_len, order, prompt_field, output_field, "                \
  "output_len_override, sharegpt_mode, vllm_filter, min_prompt_len, min_output_len, "        \
  "max_prompt_len, max_total_len, block_tokens"

static cb_status load_class(const yctx *y, const yaml_node_t *v, size_t i,
                            cb_workload_class_params *c) {
  char path[32];
  snprintf(path, sizeof path, "classes[%zu]", i);
  cb_workload_default_class(c);
  c->name = NULL;
  class_target t = {c, 0, 0, 0, 0, NULL, NULL};
  cb_status st = each_pair(y, v, path, CLASS_KEYS, class_pair, &t);
  if (st != CB_OK) return st;
  if (t.vllm_filter) { /* vLLM's values, except where the class gives its own */
    cb_dataset_params explicit_ = c->data;
    cb_dataset_params_vllm_filter(&c->data);
    if (explicit_.min_prompt_len) c->data.min_prompt_len = explicit_.min_prompt_len;
    if (explicit_.min_output_len) c->data.min_output_len = explicit_.min_output_len;
    if (explicit_.max_prompt_len) c->data.max_prompt_len = explicit_.max_prompt_len;
    if (explicit_.max_total_len) c->data.max_total_len = explicit_.max_total_len;
  }
  if (!c->name) return cb__yaml_key_at(&y->yaml, v, CB_ERR_PARSE, path, "'name' is required");
  if (t.own_process && t.share_given)
    return cb__yaml_key_at(
        &y->yaml, t.share_node, CB_ERR_PARSE, path,
        "'share' and an own process (rate, arrival, burstiness, trace_speed) are "
        "exclusive");
  if (t.own_process) {
    c->share = 0;
    /* An own process defaults to Poisson; a rate-less one must be a trace. */
    int kind_given = 0;
    for (yaml_node_pair_t *pr = v->data.mapping.pairs.start; pr < v->data.mapping.pairs.top;
         pr++)
      if (!strcmp(sval(yaml_document_get_node(y->yaml.doc, pr->key)), "arrival")) kind_given = 1;
    if (!kind_given) c->arrival.kind = CB_ARRIVAL_POISSON;
    if (c->arrival.kind != CB_ARRIVAL_TRACE && !t.rate_given)
      return cb__yaml_key_at(&y->yaml, t.own_node, CB_ERR_PARSE, path, "%s arrivals need a 'rate'",
                             cb_arrival_kind_name(c->arrival.kind));
    cb_error e;
    cb_error_clear(&e);
    st = cb_arrival_validate(&c->arrival, &e);
    if (st != CB_OK) return cb__yaml_key_at(&y->yaml, t.own_node, st, path, "%s", e.msg);
  }
  return CB_OK;
}

/* ---- top level -------------------------------------------------------------------------- */

typedef struct top_target {
  const yaml_node_t *classes;
  const yaml_node_t *concurrency_node;
  const yaml_node_t *ramp_node;      /* ramp_up, where its errors point */
  int arrival_given, rate_given;
} top_target;

static cb_status top_pair(const yctx *y, const char *key, const char *path,
                          const yaml_node_t *k, const yaml_node_t *v, void *target) {
  (void)k;
  top_target *t = target;
  cb_scenario *sc = y->sc;
  cb_workload_params *p = &sc->params;
  cb_error e;
  cb_error_clear(&e);
  cb_status st;
  if (!strcmp(key, "classes")) {
    t->classes = v;
    return CB_OK;
  }
  if (!strcmp(key, "seed")) {
    sc->keys_set |= CB_SCENARIO_SET_SEED;
    return get_u64(y, v, path, 0, UINT64_MAX, &p->seed);
  }
  if (!strcmp(key, "arrival")) {
    sc->keys_set |= CB_SCENARIO_SET_ARRIVAL;
    t->arrival_given = 1;
    if ((st = want_scalar(y, v, path)) != CB_OK) return st;
    return helper(y, v, path, cb_arrival_kind_parse(sval(v), &p->arrival.kind, &e), &e);
  }
  if (!strcmp(key, "rate")) {
    sc->keys_set |= CB_SCENARIO_SET_RATE;
    t->rate_given = 1;
    return get_double(y, v, path, 0, 1, 1e9, &p->arrival.rate);
  }
  if (!strcmp(key, "burstiness")) {
    sc->keys_set |= CB_SCENARIO_SET_BURSTINESS;
    return get_double(y, v, path, 0, 1, 1e6, &p->arrival.burstiness);
  }
  if (!strcmp(key, "trace_speed")) {
    sc->keys_set |= CB_SCENARIO_SET_TRACE_SPEED;
    return get_double(y, v, path, 0, 1, 1e9, &p->arrival.trace_speed);
  }
  if (!strcmp(key, "concurrency")) {
    sc->keys_set |= CB_SCENARIO_SET_CONCURRENCY;
    t->concurrency_node = v;
    return get_u32(y, v, path, 1, UINT32_MAX, &p->concurrency);
  }
  if (!strcmp(key, "num_requests")) {
    sc->keys_set |= CB_SCENARIO_SET_NUM_REQUESTS;
    return get_u64(y, v, path, 1, UINT64_MAX, &p->num_requests);
  }
  if (!strcmp(key, "duration")) {
    sc->keys_set |= CB_SCENARIO_SET_DURATION;
    if ((st = want_scalar(y, v, path)) != CB_OK) return st;
    return helper(y, v, path, cb_workload_parse_run_duration(sval(v), &p->duration_ns, &e), &e);
  }
  if (!strcmp(key, "ramp_up")) { /* the common process's ramp (docs/workload.md) */
    sc->keys_set |= CB_SCENARIO_SET_RAMP;
    t->ramp_node = v;
    if ((st = want_scalar(y, v, path)) != CB_OK) return st;
    return helper(y, v, path, cb_ramp_kind_parse(sval(v), &p->arrival.ramp, &e), &e);
  }
  if (!strcmp(key, "ramp_start")) {
    sc->keys_set |= CB_SCENARIO_SET_RAMP;
    return get_double(y, v, path, 0, 0, 1e9, &p->arrival.ramp_start);
  }
  if (!strcmp(key, "ramp_duration")) {
    sc->keys_set |= CB_SCENARIO_SET_RAMP;
    uint64_t ns = 0;
    if ((st = want_scalar(y, v, path)) != CB_OK) return st;
    st = helper(y, v, path, cb_workload_parse_run_duration(sval(v), &ns, &e), &e);
    p->arrival.ramp_duration_s = (double)ns / 1e9;
    return st;
  }
  if (!strcmp(key, "warmup")) {
    sc->keys_set |= CB_SCENARIO_SET_WARMUP;
    if ((st = want_scalar(y, v, path)) != CB_OK) return st;
    return helper(y, v, path,
                  cb_workload_parse_warmup(sval(v), &p->warmup_requests, &p->warmup_ns, &e), &e);
  }
  return CB_ERR_NOT_FOUND;
}

#define TOP_KEYS                                                                              \
  "seed, arrival, rate, burstiness, trace_speed, concurrency, num_requests, duration, "      \
  "warmup, ramp_up, ramp_start, ramp_duration, classes"

static cb_status load_root(const yctx *y, const yaml_node_t *root) {
  cb_scenario *sc = y->sc;
  cb_workload_params *p = &sc->params;
  top_target t = {NULL, NULL, NULL, 0, 0};
  cb_status st = each_pair(y, root, "", TOP_KEYS, top_pair, &t);
  if (st != CB_OK) return st;
  if (!t.classes)
    return cb__yaml_key_at(&y->yaml, root, CB_ERR_PARSE, "classes", "required: a list of classes");
  if (t.classes->type != YAML_SEQUENCE_NODE)
    return cb__yaml_key_at(&y->yaml, t.classes, CB_ERR_PARSE, "classes",
                           "expected a list of classes");
  size_t n = (size_t)(t.classes->data.sequence.items.top - t.classes->data.sequence.items.start);
  if (n == 0 || n > 65535)
    return cb__yaml_key_at(&y->yaml, t.classes, CB_ERR_PARSE, "classes",
                           "expected 1 to 65535 classes, got %zu", n);
  sc->classes = own(sc, cb_calloc(n, sizeof *sc->classes));
  int any_share = 0;
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *cv = yaml_document_get_node(y->yaml.doc, t.classes->data.sequence.items.start[i]);
    st = load_class(y, cv, i, &sc->classes[i]);
    if (st != CB_OK) return st;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(sc->classes[j].name, sc->classes[i].name)) {
        char path[40];
        snprintf(path, sizeof path, "classes[%zu].name", i);
        return cb__yaml_key_at(&y->yaml, cv, CB_ERR_PARSE, path,
                               "'%s' is already the name of classes[%zu]", sc->classes[i].name, j);
      }
    any_share |= sc->classes[i].share > 0;
  }
  p->classes = sc->classes;
  p->num_classes = n;

  /* The common process: closed loop with `concurrency`, open with `rate`. */
  if (t.concurrency_node && t.arrival_given && p->arrival.kind != CB_ARRIVAL_CLOSED)
    return cb__yaml_key_at(
        &y->yaml, t.concurrency_node, CB_ERR_PARSE, "concurrency",
        "sets a closed loop, but arrival is '%s' (for an open loop with a cap, use the "
        "run's --max-concurrency)",
        cb_arrival_kind_name(p->arrival.kind));
  if (!t.arrival_given) {
    if (t.rate_given) p->arrival.kind = CB_ARRIVAL_POISSON;
    else if (t.concurrency_node || any_share) p->arrival.kind = CB_ARRIVAL_CLOSED;
    else p->arrival.kind = CB_ARRIVAL_POISSON; /* only own processes: unused, open loop */
  }
  if (any_share && p->arrival.kind != CB_ARRIVAL_CLOSED && p->arrival.kind != CB_ARRIVAL_TRACE &&
      !t.rate_given)
    return cb__yaml_key_at(&y->yaml, root, CB_ERR_PARSE, "rate",
                           "classes with a share need a top-level rate for %s arrivals",
                           cb_arrival_kind_name(p->arrival.kind));
  if ((sc->keys_set & CB_SCENARIO_SET_RAMP) && !t.ramp_node)
    return cb__yaml_key_at(&y->yaml, root, CB_ERR_PARSE, "ramp_up",
                           "ramp_start and ramp_duration shape a ramp: give ramp_up "
                           "(linear or exponential) too");
  if (t.ramp_node) { /* the bounds, at the ramp_up line (the run's flags may still change them) */
    cb_error e;
    cb_error_clear(&e);
    if (cb_arrival_validate(&p->arrival, &e) != CB_OK)
      return cb__yaml_key_at(&y->yaml, t.ramp_node, CB_ERR_PARSE, "ramp_up", "%s", e.msg);
  }
  return CB_OK;
}

cb_status cb_scenario_parse(const char *text, size_t len, const char *name,
                            const char *base_dir, cb_scenario **out, cb_error *err) {
  *out = NULL;
  if (!name) name = "scenario";
  yaml_document_t doc;
  cb_status st = cb__yaml_load(text, len, name, &doc, err);
  if (st != CB_OK) return st;
  cb_scenario *sc = cb_calloc(1, sizeof *sc);
  cb_workload_default_params(&sc->params);
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  yctx y = {{name, &doc, err}, base_dir, sc};
  if (!root)
    st = cb_error_at(err, CB_ERR_PARSE, name, 1, 0, "the scenario is empty (it needs classes)");
  else
    st = load_root(&y, root);
  yaml_document_delete(&doc);
  if (st != CB_OK) {
    cb_scenario_free(sc);
    return st;
  }
  *out = sc;
  return CB_OK;
}

cb_status cb_scenario_load(const char *path, cb_scenario **out, cb_error *err) {
  *out = NULL;
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_status st = cb_file_read(path, CB_LIMIT_YAML_BYTES, &text, err);
  if (st == CB_OK) {
    char *dir = cb_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    st = cb_scenario_parse(text.data, text.len, path, slash ? dir : ".", out, err);
    cb_free(dir);
  }
  cb_buf_free(&text);
  return st;
}

void cb_scenario_free(cb_scenario *sc) {
  if (!sc) return;
  for (size_t i = 0; i < sc->num_owned; i++) cb_free(sc->owned[i]);
  cb_free(sc->owned);
  cb_free(sc);
}

const cb_workload_params *cb_scenario_params(const cb_scenario *sc) { return &sc->params; }

unsigned cb_scenario_keys_set(const cb_scenario *sc) { return sc->keys_set; }
