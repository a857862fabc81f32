/*
 * workload.c - a workload: its parameters checked, its seeds derived, its classes'
 * datasets opened, and the canonical description that the workload hash covers.
 *
 * Classes come in two kinds: share classes split one common arrival process by a
 * seeded categorical draw per request (weights normalised to 1), own-process classes
 * bring their own process; the schedule (schedule.c) superposes the processes. A
 * closed-loop workload has only share classes. Each class's dataset gets its own
 * seed (data seed, "dset", class index) so two tenants never share prefix text by
 * accident.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "workload_internal.h"

void cb_workload_default_class(cb_workload_class_params *c) {
  memset(c, 0, sizeof *c);
  c->name = "default";
  c->dataset = "synthetic";
  cb_dataset_default_params(&c->data);
  c->share = 1.0;
  c->arrival = (cb_arrival_params){
      .kind = CB_ARRIVAL_POISSON, .rate = 1.0, .burstiness = 1.0, .trace_speed = 1.0};
}

void cb_workload_default_params(cb_workload_params *p) {
  memset(p, 0, sizeof *p);
  p->arrival = (cb_arrival_params){
      .kind = CB_ARRIVAL_CLOSED, .rate = 1.0, .burstiness = 1.0, .trace_speed = 1.0};
  p->concurrency = 1;
  p->shard_index = 0;
  p->shard_count = 1;
  p->class_filter = -1;
}

void cb_workload_derive_seeds(uint64_t seed, cb_workload_seeds *out) {
  out->seed = seed;
  out->data = cb_hash3_u64(seed, CB__WL_STREAM_DATA, 0);
  out->arrival = cb_hash3_u64(seed, CB__WL_STREAM_ARRIVAL, 0);
  out->sampling = cb_hash3_u64(seed, CB__WL_STREAM_SAMPLING, 0);
}

/* ---- validation ------------------------------------------------------------------------ */

static int printable(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
  return 1;
}

/* "Name: value": a token name (RFC 9110 tchar), a colon, no CR/LF anywhere. */
static int header_ok(const char *h) {
  static const char tchar[] = "!#$%&'*+-.^_`|~";
  size_t i = 0;
  while (h[i] && h[i] != ':') {
    char c = h[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          strchr(tchar, c)))
      return 0;
    i++;
  }
  if (i == 0 || h[i] != ':') return 0;
  for (; h[i]; i++)
    if (h[i] == '\r' || h[i] == '\n' || h[i] == '\0') return 0;
  return 1;
}

static cb_status check_params(const cb_workload_params *p, cb_error *err) {
  if (!p->classes || p->num_classes == 0)
    return cb_error_set(err, CB_ERR_INVALID, "a workload needs at least one class");
  if (p->num_classes > 65535)
    return cb_error_set(err, CB_ERR_INVALID, "at most 65535 classes, got %zu", p->num_classes);
  if (p->shard_count < 1 || p->shard_index >= p->shard_count)
    return cb_error_set(err, CB_ERR_INVALID, "shard %u/%u: need 0 <= i < N", p->shard_index,
                        p->shard_count);
  if (p->class_filter >= 0 && (size_t)p->class_filter >= p->num_classes)
    return cb_error_set(err, CB_ERR_INVALID, "class filter %d: there are %zu classes",
                        p->class_filter, p->num_classes);
  int closed = p->arrival.kind == CB_ARRIVAL_CLOSED;
  size_t nshare = 0;
  for (size_t i = 0; i < p->num_classes; i++) {
    const cb_workload_class_params *c = &p->classes[i];
    const char *name = c->name ? c->name : "";
    if (!c->name || !*c->name || !printable(c->name) || strlen(c->name) > 200)
      return cb_error_set(err, CB_ERR_INVALID,
                          "classes[%zu]: a name is required (1..200 printable characters)", i);
    for (size_t j = 0; j < i; j++)
      if (strcmp(p->classes[j].name, c->name) == 0)
        return cb_error_set(err, CB_ERR_INVALID, "classes[%zu]: the name '%s' is used twice", i,
                            name);
    if (!(c->share >= 0.0 && isfinite(c->share)))
      return cb_error_set(err, CB_ERR_INVALID, "classes[%zu] '%s': share must be >= 0, got %g",
                          i, name, c->share);
    if (c->share > 0) {
      nshare++;
    } else {
      if (closed)
        return cb_error_set(err, CB_ERR_INVALID,
                            "classes[%zu] '%s': in a closed-loop workload every class needs a "
                            "share > 0 (own rates need an open loop)",
                            i, name);
      if (c->arrival.kind == CB_ARRIVAL_CLOSED)
        return cb_error_set(err, CB_ERR_INVALID,
                            "classes[%zu] '%s': a class's own process must be open (constant, "
                            "poisson, gamma or trace)",
                            i, name);
      cb_status st = cb_arrival_validate(&c->arrival, err);
      if (st != CB_OK) {
        cb_error_wrap(err, "classes[%zu] '%s'", i, name);
        return st;
      }
    }
    for (size_t h = 0; h < c->num_headers; h++)
      if (!c->headers || !c->headers[h] || !header_ok(c->headers[h]))
        return cb_error_set(err, CB_ERR_INVALID,
                            "classes[%zu] '%s': header %zu must be 'Name: value' with a token "
                            "name and no line breaks",
                            i, name, h);
  }
  if (nshare == 0 && p->arrival.ramp != CB_RAMP_NONE)
    return cb_error_set(err, CB_ERR_INVALID,
                        "the ramp is on the common arrival process, and no class takes a share "
                        "of it (every class has its own process): it would ramp nothing");
  if (nshare > 0) {
    cb_status st = cb_arrival_validate(&p->arrival, err);
    if (st != CB_OK) return st;
    if (p->arrival.kind == CB_ARRIVAL_TRACE && nshare > 1)
      return cb_error_set(err, CB_ERR_INVALID,
                          "trace arrivals replay one trace: give each trace class its own "
                          "process (share 0, arrival trace) instead of shares");
  }
  return CB_OK;
}

/* ---- description ---------------------------------------------------------------------- */

static void describe_len(cb_buf *b, size_t c, const char *what, const cb_dataset_len *d) {
  cb_buf_appendf(b, "class.%zu.%s=%s mean=%.17g spread=%.17g min=%u max=%u\n", c, what,
                 cb_dataset_len_kind_name(d->kind), d->mean, d->spread, d->min, d->max);
}

static void describe_arrival(cb_buf *b, const char *key, const cb_arrival_params *a) {
  cb_buf_appendf(b, "%s=%s", key, cb_arrival_kind_name(a->kind));
  if (a->kind == CB_ARRIVAL_CONSTANT || a->kind == CB_ARRIVAL_POISSON)
    cb_buf_appendf(b, " rate=%.17g", a->rate);
  else if (a->kind == CB_ARRIVAL_GAMMA)
    cb_buf_appendf(b, " rate=%.17g burstiness=%.17g", a->rate, a->burstiness);
  else if (a->kind == CB_ARRIVAL_TRACE)
    cb_buf_appendf(b, " trace_speed=%.17g", a->trace_speed);
  if (a->ramp != CB_RAMP_NONE) /* absent without a ramp: older workloads hash as before */
    cb_buf_appendf(b, " ramp=%s ramp_start=%.17g ramp_duration_s=%.17g",
                   cb_ramp_kind_name(a->ramp), a->ramp_start, a->ramp_duration_s);
  cb_buf_append_char(b, '\n');
}

static void build_description(cb_workload *w) {
  static const char *const orders[] = {"auto", "sequential", "shuffle", "random"};
  const cb_workload_params *p = &w->params;
  cb_buf *b = &w->desc;
  cb_buf_append_str(b, "calibench-workload 1\n");
  cb_buf_appendf(b, "seed=%llu\ndata_seed=%llu\narrival_seed=%llu\nsampling_seed=%llu\n",
                 (unsigned long long)w->seeds.seed, (unsigned long long)w->seeds.data,
                 (unsigned long long)w->seeds.arrival, (unsigned long long)w->seeds.sampling);
  if (w->num_share) describe_arrival(b, "arrival", &p->arrival);
  if (w->closed) cb_buf_appendf(b, "concurrency=%u\n", p->concurrency);
  cb_buf_appendf(b, "num_requests=%llu\nduration_ns=%llu\nwarmup_requests=%llu\nwarmup_ns=%llu\n",
                 (unsigned long long)p->num_requests, (unsigned long long)p->duration_ns,
                 (unsigned long long)p->warmup_requests, (unsigned long long)p->warmup_ns);
  cb_buf_appendf(b, "counter=%s\nclasses=%zu\n", w->counter.name, w->num_classes);
  for (size_t c = 0; c < w->num_classes; c++) {
    const cb__class *k = &w->classes[c];
    const cb_dataset *ds = k->ds;
    const cb_dataset_params *d = &ds->params;
    cb_buf_appendf(b, "class.%zu.name=%s\n", c, k->name);
    if (k->view.share > 0)
      cb_buf_appendf(b, "class.%zu.share=%.17g\n", c, k->view.share);
    else {
      char key[48];
      snprintf(key, sizeof key, "class.%zu.arrival", c);
      describe_arrival(b, key, &k->view.arrival);
    }
    cb_buf_appendf(b, "class.%zu.dataset=%s xxh64=%016llx bytes=%llu items=%zu skipped=%zu\n", c,
                   cb_dataset_kind_name(ds->kind), (unsigned long long)ds->content_hash,
                   (unsigned long long)ds->file_bytes, ds->num_items, ds->skipped);
    switch (ds->kind) {
    case CB_DATASET_SYNTHETIC:
      describe_len(b, c, "input_len", &d->input_len);
      describe_len(b, c, "output_len", &d->output_len);
      cb_buf_appendf(b, "class.%zu.prefix=%ux%u\n", c, d->prefix_count, d->prefix_len);
      break;
    case CB_DATASET_TRACE:
      cb_buf_appendf(b, "class.%zu.block_tokens=%u\n", c, d->block_tokens);
      break;
    case CB_DATASET_JSONL:
      cb_buf_appendf(b, "class.%zu.fields=%s,%s\n", c, d->prompt_field,
                     d->output_field ? d->output_field : "output_len|max_tokens");
      break;
    case CB_DATASET_SHAREGPT:
      cb_buf_appendf(b, "class.%zu.sharegpt=%s filters=%u,%u,%u,%u\n", c,
                     d->sharegpt_mode == CB_SHAREGPT_TURNS ? "turns" : "first_turn",
                     d->min_prompt_len, d->min_output_len, d->max_prompt_len, d->max_total_len);
      break;
    default:
      break;
    }
    if (d->images_per_request > 0)
      cb_buf_appendf(b, "class.%zu.images=%u x %ux%u %s\n", c, d->images_per_request,
                     d->image_width, d->image_height, cb_image_format_name(d->image_format));
    if (ds->kind != CB_DATASET_SYNTHETIC)
      cb_buf_appendf(b, "class.%zu.order=%s output_len_override=%u\n", c, orders[d->order],
                     d->output_len_override);
    for (size_t h = 0; h < k->view.num_headers; h++)
      cb_buf_appendf(b, "class.%zu.header=%s\n", c, k->headers[h]);
  }
  w->desc_hash = cb__xxh64(b->data, b->len, 0);
}

/* ---- open / free ----------------------------------------------------------------------- */

void cb_workload_free(cb_workload *w) {
  if (!w) return;
  for (size_t c = 0; c < w->num_classes; c++) {
    cb__class *k = &w->classes[c];
    cb_free(k->name);
    cb_free(k->dataset_spec);
    cb_dataset_free(k->ds);
    for (size_t h = 0; h < k->view.num_headers; h++) cb_free(k->headers[h]);
    cb_free(k->headers);
  }
  cb_free(w->classes);
  cb_free(w->share_classes);
  cb_free(w->share_cum);
  cb_free(w->counter_name);
  cb_buf_free(&w->desc);
  cb_free(w);
}

cb_status cb_workload_open(const cb_workload_params *p, cb_workload **out, cb_error *err) {
  *out = NULL;
  cb_status st = check_params(p, err);
  if (st != CB_OK) return st;
  cb_workload *w = cb_calloc(1, sizeof *w);
  w->params = *p;
  w->params.classes = NULL;
  w->closed = p->arrival.kind == CB_ARRIVAL_CLOSED;
  cb_token_counter resolved;
  cb__counter_resolve(&p->counter, &resolved);
  w->counter_name = cb_strdup(resolved.name);
  w->counter = resolved;
  w->counter.name = w->counter_name;
  w->params.counter = w->counter;
  cb_workload_derive_seeds(p->seed, &w->seeds);
  if (p->has_data_seed) w->seeds.data = p->data_seed;
  if (p->has_arrival_seed) w->seeds.arrival = p->arrival_seed;
  if (p->has_sampling_seed) w->seeds.sampling = p->sampling_seed;
  cb_buf_init(&w->desc, 0);

  w->num_classes = p->num_classes;
  w->classes = cb_calloc(p->num_classes, sizeof *w->classes);
  w->share_classes = cb_calloc(p->num_classes, sizeof *w->share_classes);
  w->share_cum = cb_calloc(p->num_classes, sizeof *w->share_cum);
  double total_share = 0;
  for (size_t c = 0; c < p->num_classes; c++) total_share += p->classes[c].share;

  for (size_t c = 0; c < p->num_classes && st == CB_OK; c++) {
    const cb_workload_class_params *cp = &p->classes[c];
    cb__class *k = &w->classes[c];
    k->name = cb_strdup(cp->name);
    k->dataset_spec = cb_strdup(cp->dataset ? cp->dataset : "synthetic");
    k->headers = cb_calloc(cp->num_headers ? cp->num_headers : 1, sizeof *k->headers);
    for (size_t h = 0; h < cp->num_headers; h++) k->headers[h] = cb_strdup(cp->headers[h]);
    k->view.num_headers = cp->num_headers;
    uint64_t ds_seed = cb_hash3_u64(w->seeds.data, CB__WL_STREAM_DATASET, c);
    st = cb_dataset_open(k->dataset_spec, &cp->data, &w->counter, ds_seed, &k->ds, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "classes[%zu] '%s'", c, cp->name);
      break;
    }
    if (cp->share > 0) {
      k->process = CB__WL_COMMON_PROCESS;
      k->view.share = cp->share / total_share;
      k->view.arrival = p->arrival;
      w->share_classes[w->num_share] = (uint32_t)c;
      w->share_cum[w->num_share] =
          (w->num_share ? w->share_cum[w->num_share - 1] : 0.0) + cp->share / total_share;
      w->num_share++;
    } else {
      k->process = (uint32_t)(1 + c);
      k->view.share = 0;
      k->view.arrival = cp->arrival;
    }
    const cb_arrival_params *a = &k->view.arrival;
    if (a->kind == CB_ARRIVAL_TRACE && k->ds->kind != CB_DATASET_TRACE)
      st = cb_error_set(err, CB_ERR_INVALID,
                        "classes[%zu] '%s': trace arrivals need a trace dataset (trace:PATH), "
                        "got '%s'",
                        c, cp->name, k->dataset_spec);
    k->view.name = k->name;
    k->view.dataset_spec = k->dataset_spec;
    k->view.dataset = k->ds;
    k->view.slo = cp->slo;
    k->view.headers = (const char *const *)k->headers;
  }
  if (w->num_share) w->share_cum[w->num_share - 1] = 1.0; /* exact end despite rounding */
  if (st != CB_OK) {
    cb_workload_free(w);
    return st;
  }
  build_description(w);
  *out = w;
  return CB_OK;
}

/* ---- accessors -------------------------------------------------------------------------- */

size_t cb_workload_num_classes(const cb_workload *w) { return w->num_classes; }

const cb_workload_class *cb_workload_get_class(const cb_workload *w, size_t i) {
  return i < w->num_classes ? &w->classes[i].view : NULL;
}

void cb_workload_get_seeds(const cb_workload *w, cb_workload_seeds *out) { *out = w->seeds; }

int cb_workload_is_closed_loop(const cb_workload *w) { return w->closed; }

uint64_t cb_workload_sampling_seed(const cb_workload *w, uint64_t index) {
  return cb_hash3_u64(w->seeds.sampling, CB__WL_STREAM_SAMPLING, index);
}

cb_status cb_workload_describe(const cb_workload *w, cb_buf *out) {
  return cb_buf_append(out, w->desc.data, w->desc.len);
}

uint64_t cb_workload_hash(const cb_workload *w) { return w->desc_hash; }

int cb_workload_ramps(const cb_workload *w) {
  if (w->num_share && w->params.arrival.ramp != CB_RAMP_NONE) return 1;
  for (size_t c = 0; c < w->num_classes; c++)
    if (w->classes[c].process != CB__WL_COMMON_PROCESS &&
        w->classes[c].view.arrival.ramp != CB_RAMP_NONE)
      return 1;
  return 0;
}

double cb_workload_offered_rate(const cb_workload *w, uint64_t offset_ns) {
  double t = (double)offset_ns / 1e9, sum = 0;
  if (w->closed) return NAN;
  if (w->num_share && w->params.arrival.kind != CB_ARRIVAL_TRACE)
    sum += cb_arrival_rate_at(&w->params.arrival, t);
  for (size_t c = 0; c < w->num_classes; c++) {
    const cb_arrival_params *a = &w->classes[c].view.arrival;
    if (w->classes[c].process != CB__WL_COMMON_PROCESS && a->kind != CB_ARRIVAL_TRACE)
      sum += cb_arrival_rate_at(a, t);
  }
  return sum;
}

cb_status cb_workload_render(const cb_workload *w, const cb_schedule_entry *e,
                             cb_workload_prompt *out, cb_error *err) {
  if (e->class_id >= w->num_classes)
    return cb_error_set(err, CB_ERR_RANGE, "entry %llu: class %u does not exist",
                        (unsigned long long)e->index, e->class_id);
  return cb_dataset_render(w->classes[e->class_id].ds, e->item, e->input_len, e->output_len,
                           e->seed, e->prefix_id, out, err);
}
