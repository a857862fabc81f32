/*
 * point.c - one load point: workload -> schedule -> runner -> result directory.
 */
#include "session_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <stdlib.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "calibench/clock.h"
#include "calibench/report.h"

/* ---- the request source: schedule entries -> request bodies ----------------------- */

typedef struct source_ctx {
  const cb_session_config *cfg;
  const cb_workload *wl;
  const cb_schedule *schedule;   /* bounded runs */
  cb_workload_iter *iter;        /* unbounded closed-loop runs */
  size_t next;
  cb_workload_prompt prompt;
  cb_buf body;
  const char *model;
  int failed;                    /* a render error stops the point */
  cb_error err;
  cb_sim_prompt_ids *ids;        /* sim run's fast path: no body, ids from the entry */
  cb_schedule_entry entry;       /* ... of the item just given */
  const cb_runner_stats *stats;  /* live: the run's origin, for the source's clock */
  int virtual_clock;             /* live in sim run: the clock is vnow, not the wall's */
  uint64_t vnow;                 /* ... virtual ns, set by the virtual runner */
} source_ctx;

static int next_entry(source_ctx *s, cb_schedule_entry *e) {
  if (s->iter) return cb_workload_iter_next(s->iter, e);
  if (s->next >= s->schedule->count) return 0;
  *e = s->schedule->entries[s->next++];
  return 1;
}

/* A ramped run's items carry the rate offered at their send time. */
static void set_target_rate(const cb_workload *wl, const cb_schedule_entry *e, cb_runner_item *out) {
  out->has_target_rate = cb_workload_ramps(wl);
  if (out->has_target_rate) out->target_rate = cb_workload_offered_rate(wl, e->offset_ns);
}

static int source_next(void *ctx, cb_runner_item *out) {
  source_ctx *s = ctx;
  cb_schedule_entry e;
  if (s->failed || !next_entry(s, &e)) return 0;
  const cb_workload_class *cls = cb_workload_get_class(s->wl, e.class_id);
  if (s->ids) { /* sim run: fast_prompt() gives the prompt's ids, no body is rendered */
    s->entry = e;
    *out = (cb_runner_item){.index = e.index, .at_ns = e.offset_ns, .warmup = e.warmup,
                            .class_name = cb_workload_num_classes(s->wl) > 1 ? cls->name : "",
                            .prompt_tokens = e.input_len, .prompt_source = CB_TOKENS_DATASET};
    set_target_rate(s->wl, &e, out);
    return 1;
  }
  if (cb_workload_render(s->wl, &e, &s->prompt, &s->err) != CB_OK) {
    s->failed = 1;
    return 0;
  }
  cb_client_request rq;
  cb_client_request_init(&rq);
  rq.api = s->cfg->chat ? CB_CLIENT_API_CHAT : CB_CLIENT_API_COMPLETIONS;
  rq.model = s->model;
  if (s->prompt.messages.len) {
    if (!s->cfg->chat) {
      cb_error_set(&s->err, CB_ERR_INVALID,
                   s->prompt.num_images
                       ? "images are sent as chat image_url parts: use --api chat, not completions"
                       : "the dataset gives chat messages: use --api chat, not completions");
      s->failed = 1;
      return 0;
    }
    rq.messages_json = s->prompt.messages.data;
    rq.messages_json_len = s->prompt.messages.len;
  } else {
    rq.prompt = s->prompt.text.data ? s->prompt.text.data : "";
    rq.prompt_len = s->prompt.text.len;
  }
  rq.max_tokens = s->prompt.output_len ? (int64_t)s->prompt.output_len : -1;
  rq.ignore_eos = s->cfg->ignore_eos;
  rq.extra_json = s->cfg->extra_body;
  rq.extra_json_len = s->cfg->extra_body ? strlen(s->cfg->extra_body) : 0;
  cb_buf_reset(&s->body);
  if (cb_client_request_encode(&rq, &s->body, &s->err) != CB_OK) {
    s->failed = 1;
    return 0;
  }
  *out = (cb_runner_item){.index = e.index, .at_ns = e.offset_ns, .warmup = e.warmup,
                          .class_name = cb_workload_num_classes(s->wl) > 1 ? cls->name : "",
                          .body = s->body.data, .body_len = s->body.len,
                          .prompt_tokens = e.input_len, .prompt_source = CB_TOKENS_DATASET,
                          .image_bytes = s->prompt.image_bytes, .headers = cls->headers,
                          .n_headers = cls->num_headers};
  set_target_rate(s->wl, &e, out);
  return 1;
}

/* cfg->extra_body's members over the live request's own (NULL when neither has any):
 * a new string to free. */
static char *live_extra(const cb_session_config *cfg, const cb_session_live_request *lr,
                        cb_error *err) {
  if (!lr->extra_json || !lr->extra_json_len) return cfg->extra_body ? cb_strdup(cfg->extra_body) : NULL;
  json_error_t jerr;
  json_t *mine = json_loadb(lr->extra_json, lr->extra_json_len, 0, &jerr);
  if (!json_is_object(mine)) {
    json_decref(mine);
    cb_error_set(err, CB_ERR_INVALID, "live request %llu: extra_json: expected a JSON object",
                 (unsigned long long)lr->index);
    return NULL;
  }
  json_t *given = cfg->extra_body ? json_loads(cfg->extra_body, 0, &jerr) : NULL;
  if (json_is_object(given)) json_object_update(mine, given);
  json_decref(given);
  char *text = json_dumps(mine, JSON_COMPACT);
  json_decref(mine);
  char *out = cb_strdup(text);
  free(text);
  return out;
}

/* The live source's times count from the run start as the records' do; sim run's
 * records are CB_SIM_VRUN_T0_NS after its items' virtual times. */
static uint64_t live_now(const source_ctx *s) {
  if (s->virtual_clock) return CB_SIM_VRUN_T0_NS + s->vnow;
  uint64_t now = cb_clock_now_ns(), origin = s->stats->origin_ns;
  return now > origin ? now - origin : 0;
}

static uint64_t live_item_at(const source_ctx *s, uint64_t at_ns) {
  if (!s->virtual_clock) return at_ns;
  return at_ns > CB_SIM_VRUN_T0_NS ? at_ns - CB_SIM_VRUN_T0_NS : 0;
}

/* A live source's next request (cfg->live), its body encoded as source_next's. */
static int live_next(void *ctx, cb_runner_item *out) {
  source_ctx *s = ctx;
  if (s->failed) return 0;
  cb_session_live_request lr = {.max_tokens = -1, .now_ns = live_now(s)};
  int got = s->cfg->live(s->cfg->live_ctx, &lr);
  if (got == CB_SESSION_LIVE_LATER) {
    out->at_ns = live_item_at(s, lr.at_ns);
    return CB_RUNNER_SOURCE_LATER;
  }
  if (got != 1) return got == CB_SESSION_LIVE_WAIT ? CB_RUNNER_SOURCE_WAIT : 0;
  cb_client_request rq;
  cb_client_request_init(&rq);
  rq.api = s->cfg->chat ? CB_CLIENT_API_CHAT : CB_CLIENT_API_COMPLETIONS;
  rq.model = s->model;
  if (lr.messages_json && !s->cfg->chat) {
    cb_error_set(&s->err, CB_ERR_INVALID, "live requests give chat messages: use --api chat, not completions");
    s->failed = 1;
    return 0;
  }
  rq.messages_json = lr.messages_json;
  rq.messages_json_len = lr.messages_json_len;
  rq.prompt = lr.prompt;
  rq.prompt_len = lr.prompt_len;
  rq.max_tokens = lr.max_tokens;
  rq.ignore_eos = s->cfg->ignore_eos;
  char *extra = NULL;
  if ((lr.extra_json || s->cfg->extra_body) && !(extra = live_extra(s->cfg, &lr, &s->err))) {
    s->failed = 1;
    return 0;
  }
  rq.extra_json = extra;
  rq.extra_json_len = extra ? strlen(extra) : 0;
  cb_buf_reset(&s->body);
  cb_status st = cb_client_request_encode(&rq, &s->body, &s->err);
  cb_free(extra);
  if (st != CB_OK) {
    s->failed = 1;
    return 0;
  }
  *out = (cb_runner_item){.index = lr.index, .at_ns = live_item_at(s, lr.at_ns), .class_name = "",
                          .body = s->body.data, .body_len = s->body.len, .prompt_tokens = -1,
                          .prompt_source = CB_TOKENS_UNKNOWN, .has_session = lr.has_session,
                          .session = lr.session, .turn = lr.turn};
  return 1;
}

/* sim run: the request of the item just given, without its body (vrun_prompt.c). */
static cb_status fast_prompt(void *ctx, const cb_runner_item *item, cb_sim_vrun_request *out,
                             cb_error *err) {
  (void)item;
  source_ctx *s = ctx;
  cb_status st = cb_sim_prompt_ids_of(s->ids, &s->entry, &out->prompt_ids, &out->prompt_len, err);
  out->max_tokens = s->entry.output_len ? (int64_t)s->entry.output_len : -1;
  out->ignore_eos = s->cfg->ignore_eos;
  if (st != CB_OK) { /* as a render error: what ran is written, the point fails */
    s->failed = 1;
    s->err = *err;
  }
  return st;
}

/* ---- records as they complete --------------------------------------------------------- */

/* The records are kept for the summary and the report, but not their output text once
 * it is in records.jsonl: only the report's three sample requests show it, and those
 * are read back (restore_sample_texts). For sim run's 256-token outputs the text was
 * a fifth of the memory. */
#define TEXT_KEPT UINT64_MAX

typedef struct sink_ctx {
  const cb_session_config *cfg;
  cb__live_metrics *live;  /* the session's tally, or NULL */
  cb_results_dir *dir;
  cb_record_set set;
  uint64_t *text_at;   /* per kept record: its line's offset in records.jsonl, or TEXT_KEPT */
  size_t text_alloc;
  int write_failed;
  cb_error err;
} sink_ctx;

static void on_record(void *ctx, cb_record *r) {
  sink_ctx *k = ctx;
  uint64_t at = TEXT_KEPT;
  int written = 0;
  uint64_t line = 0;
  if (!k->write_failed) {
    line = cb_results_dir_records_bytes(k->dir);
    if (cb_results_dir_append(k->dir, r, &k->err) == CB_OK) {
      written = 1;
    } else {
      k->write_failed = 1;
      cb__session_warn(k->cfg, "calibench: %s (records are no longer being written)\n", k->err.msg);
    }
  }
  if (k->live) cb__live_metrics_record(k->live, r); /* with its chunk times, as written */
  if (k->cfg->on_record) k->cfg->on_record(k->cfg->record_ctx, r); /* with its output text */
  cb_free(r->choice_events); /* for on_record only: the set keeps no raw events */
  r->choice_events = NULL;
  if (written) { /* in records.jsonl now: the set keeps only what statistics need */
    cb_free(r->tool_calls);
    r->tool_calls = NULL;
  }
  if (written && r->output_text) {
    cb_free(r->output_text);
    r->output_text = NULL;
    at = line;
  }
  if (k->set.count == k->text_alloc) {
    k->text_alloc = k->set.alloc > k->set.count ? k->set.alloc : 2 * k->set.count + 64;
    k->text_at = cb_reallocarray(k->text_at, k->text_alloc, sizeof *k->text_at);
  }
  k->text_at[k->set.count] = at;
  cb_record_set_push(&k->set, r);
}

/* The output text of the requests the report shows (cb_record_set_samples), from
 * records.jsonl. */
static cb_status restore_sample_texts(sink_ctx *k, cb_error *err) {
  cb_record_samples pick;
  cb_record_set_samples(&k->set, &pick);
  size_t pos[3] = {pick.first, pick.median, pick.slowest};
  for (size_t i = 0; i < 3; i++) {
    if (pos[i] == SIZE_MAX || k->text_at[pos[i]] == TEXT_KEPT) continue;
    cb_record *r = &k->set.items[pos[i]];
    if (r->output_text) continue; /* restored already (first = median, ...) */
    cb_status st = cb_results_dir_output_text(k->dir, k->text_at[pos[i]], &r->output_text, err);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

typedef struct progress_ctx {
  char total[32];
  FILE *log;
  cb__live_metrics *live;
  cb__live_totals start;  /* the tally when the point began: a sweep's earlier points */
} progress_ctx;

/* The progress line: the runner's clock and queue, every count from the live tally
 * (the figures --metrics-listen serves), this point's share of it. */
static void on_progress(void *ctx, const cb_runner_progress *p) {
  const progress_ctx *pc = ctx;
  cb__live_totals t;
  cb__live_metrics_totals(pc->live, &t);
  const cb__live_totals *a = &pc->start;
  uint64_t done = t.ok + t.failed - a->ok - a->failed, failed = t.failed - a->failed;
  uint64_t in_flight = t.sent - t.ok - t.failed - (a->sent - a->ok - a->failed);
  uint64_t ttft_n = t.ttft_count - a->ttft_count, judged = t.judged - a->judged;
  char ttft[32] = "-", slos[256] = "";
  if (ttft_n)
    snprintf(ttft, sizeof ttft, "%.1f ms", (t.ttft_sum_s - a->ttft_sum_s) / (double)ttft_n * 1e3);
  size_t used = 0;
  for (size_t k = 0; k < t.n_slos && used < sizeof slos; k++) {
    int n = judged ? snprintf(slos + used, sizeof slos - used, ", %s %.1f%%", t.slo_names[k],
                              100 * (double)(t.met[k] - a->met[k]) / (double)judged)
                   : snprintf(slos + used, sizeof slos - used, ", %s -", t.slo_names[k]);
    used += n > 0 ? (size_t)n : 0;
  }
  double secs = (double)p->elapsed_ns / 1e9;
  fprintf(pc->log, "\r[%6.1fs] %llu/%s done, %llu failed, %.1f req/s, in flight %llu%s, "
          "TTFT mean %s%s   ", secs, (unsigned long long)done, pc->total,
          (unsigned long long)failed, secs > 0 ? (double)done / secs : 0.0,
          (unsigned long long)in_flight, p->queued ? " (+queued)" : "", ttft, slos);
  fflush(pc->log);
}

/* The first Ctrl-C: say what the wait is for and how to cut it short. */
static void on_drain(void *ctx, uint64_t in_flight, double drain_timeout_s) {
  FILE *log = ctx;
  fprintf(log, "\ncalibench: stopping: draining %llu request%s in flight, up to %g s; "
          "a second Ctrl-C stops now\n", (unsigned long long)in_flight, in_flight == 1 ? "" : "s",
          drain_timeout_s);
  fflush(log);
}

/* ---- summaries ---------------------------------------------------------------------------- */

static void summarize(const cb_session_config *cfg, const cb_workload *wl, double requested_rate,
                      const cb_record_set *set, const cb_runner_stats *stats, cb_session_result *out) {
  cb_summary_params sp;
  cb_summary_default_params(&sp);
  memcpy(sp.slos, cfg->slos, sizeof cfg->slos);
  sp.n_slos = cfg->n_slos;
  sp.confidence = cfg->confidence;
  sp.requested_rate = requested_rate;
  cb_summary_compute(set, &sp, &out->all);
  out->all.interrupted = stats->interrupted;
  out->all.client_cpu_s = stats->cpu_s;
  size_t n = cb_workload_num_classes(wl);
  if (n < 2) return;
  out->classes = cb_calloc(n, sizeof *out->classes);
  out->n_classes = n;
  for (size_t i = 0; i < n; i++) {
    const cb_workload_class *c = cb_workload_get_class(wl, i);
    cb_summary_params cp = sp;
    cp.class_name = c->name;
    cp.requested_rate = 0;
    cb__session_class_slos(cfg, c, cp.slos, &cp.n_slos);
    cb_summary_compute(set, &cp, &out->classes[i]);
    out->classes[i].interrupted = stats->interrupted;
  }
}

/* summary.json and manifest.json; error: what ended the point early, or NULL. */
static cb_status write_core(const cb_session_config *cfg, const cb_workload *wl, const cb_schedule *schedule,
                            const cb_runner_stats *stats, const cb_clock_anchor *start_at,
                            const cb_clock_anchor *end_at,
                            const cb__session_target *target, cb_session_result *out, const char *error,
                            cb_results_dir *dir, cb_buf *text, cb_error *err) {
  out->all.predicted = cfg->virtual_time;
  for (size_t i = 0; i < out->n_classes; i++) out->classes[i].predicted = cfg->virtual_time;
  cb_buf_reset(text);
  cb__session_summary_json(out, text);
  cb_status st = cb_results_dir_write(dir, "summary.json", text->data, text->len, err);
  if (st != CB_OK) return st;
  cb_buf_reset(text);
  cb__session_manifest(cfg, wl, schedule, stats, start_at, end_at, target->model,
                            target->url, &target->models, error, text);
  return cb_results_dir_write(dir, "manifest.json", text->data, text->len, err);
}

/* ---- one point ---------------------------------------------------------------------------- */

void cb__session_point_default(const cb_session_config *cfg, cb__session_point *out) {
  *out = (cb__session_point){.out_dir = cfg->out_dir, .arrival = cfg->workload.arrival.kind,
                             .concurrency = cfg->workload.concurrency,
                             .rate = cfg->workload.arrival.rate, .class_filter = -1, .plain = 1};
}

/* Without a url every point measures a simulator of its own, started cold, so no
 * point inherits another's prefix cache (a solo baseline replays the mix's very
 * prompts; sweep points replay the same schedule). */
static cb_status start_embedded(const cb_session_config *cfg, cb__session_sim **sim,
                                cb__session_target *t, cb_error *err) {
  cb_status st = cb__session_sim_start(&cfg->sim, sim, t->url, sizeof t->url, err);
  if (st != CB_OK) return st;
  cb__session_note(cfg, "calibench run: no --url: measuring the built-in simulator (%s on %d x %s) at %s\n",
                   cfg->sim.engine.model.name, cfg->sim.engine.tp, cfg->sim.engine.gpu.name, t->url);
  return cb__session_target_check(t->url, NULL, 0, NULL, 1, 0, cfg->model, t->model,
                                  sizeof t->model, &t->models, err);
}

cb_session_outcome cb__session_point_run(const cb_session *s, const cb__session_point *spec,
                                         cb_session_result *out, cb_error *err) {
  const cb_session_config *cfg = s->cfg;
  const cb__session_target *target = &s->target;
  memset(out, 0, sizeof *out);
  snprintf(out->dir, sizeof out->dir, "%s", spec->out_dir);
  out->arrival = spec->arrival;
  out->concurrency = spec->concurrency;
  out->rate = spec->rate;
  cb__session_sim *sim = NULL;
  cb__session_target own = {0};
  cb_buf_init(&own.models, 0);
  if (cfg->virtual_time) { /* sim run: the engine profile is the target */
    cb__session_virtual_target(cfg, &own);
    target = &own;
  } else if (!cfg->url) {
    if (start_embedded(cfg, &sim, &own, err) != CB_OK) {
      cb__session_sim_stop(sim);
      cb_buf_free(&own.models);
      return CB_SESSION_FAILED;
    }
    target = &own;
  }
  cb_workload_params wp = cfg->workload;
  wp.arrival.kind = spec->arrival;
  wp.concurrency = spec->concurrency;
  wp.arrival.rate = spec->rate;
  wp.class_filter = spec->class_filter;
  cb_workload *wl = NULL;
  cb_schedule schedule = {0};
  cb_results_dir *dir = NULL;
  source_ctx src = {0};
  sink_ctx sink = {.cfg = cfg, .live = cfg->virtual_time ? NULL : s->live};
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_record_set_init(&sink.set);
  cb_workload_prompt_init(&src.prompt);
  cb_buf_init(&src.body, 0);
  cb_session_outcome rc = CB_SESSION_BAD_INPUT;
  /* Zero until the runner fills them: a failure before it still writes a manifest. */
  cb_runner_stats stats;
  memset(&stats, 0, sizeof stats);
  cb_clock_anchor start_at = cb_clock_anchor_take(), end_at = {0};
  int summarized = 0, core_tried = 0;
  double requested = spec->arrival == CB_ARRIVAL_CLOSED || spec->arrival == CB_ARRIVAL_TRACE ? 0 : spec->rate;

  if (cb_workload_open(&wp, &wl, err) != CB_OK) goto fail;
  /* Without a schedule: a closed loop bounded by time, or live requests (the
   * workload is then only described). */
  int live = cfg->live != NULL;
  int unbounded = !live && cb_workload_is_closed_loop(wl) && !wp.num_requests;
  if (unbounded ? cb_workload_iter_new(wl, &src.iter, err) != CB_OK
                : !live && cb_workload_schedule(wl, &schedule, err) != CB_OK)
    goto fail;
  const cb_schedule *sched = unbounded || live ? NULL : &schedule;
  if (cb_results_dir_create(spec->out_dir, &dir, err) != CB_OK) {
    /* an out_dir already used is bad input */
    rc = err->code == CB_ERR_STATE ? CB_SESSION_BAD_INPUT : CB_SESSION_FAILED;
    goto fail;
  }
  sink.dir = dir;
  if (sched && schedule.count) { /* one allocation for every record (100k: ~80 MB) */
    sink.set.items = cb_reallocarray(NULL, schedule.count, sizeof *sink.set.items);
    sink.set.alloc = schedule.count;
  }
  if (!cfg->vllm_json) { /* records drop their chunk times once counted: memory by requests */
    cb_record_set_drop_chunk_times(&sink.set, cfg->slos, cfg->n_slos);
    cb_record_set_reread(&sink.set, cb_results_dir_record_times, dir);
    for (size_t i = 0; i < cb_workload_num_classes(wl); i++) {
      cb_slo cs[CB_MAX_SLOS];
      size_t n;
      cb__session_class_slos(cfg, cb_workload_get_class(wl, i), cs, &n);
      cb_record_set_drop_chunk_times(&sink.set, cs, n);
    }
  }
  src.cfg = cfg;
  src.wl = wl;
  src.schedule = &schedule;
  src.model = target->model;
  src.stats = &stats;

  char endpoint[2100];
  snprintf(endpoint, sizeof endpoint, "%s/%s", target->url, cfg->chat ? "chat/completions" : "completions");
  cb_runner_params rp;
  cb__session_runner_params(cfg, endpoint, &rp);
  rp.concurrency = spec->arrival == CB_ARRIVAL_CLOSED ? (int)spec->concurrency : 0;
  rp.source_live = live;
  rp.max_concurrency = spec->arrival == CB_ARRIVAL_CLOSED ? 0 : cfg->max_concurrency;
  rp.source_endless = unbounded;
  if (cfg->log && !cfg->quiet) {
    rp.on_drain = on_drain;
    rp.drain_ctx = cfg->log;
  }
  if (sink.live) {
    rp.on_request = cb__live_metrics_request;
    rp.request_ctx = sink.live;
  }
  progress_ctx pc = {.log = cfg->log, .live = s->live};
  snprintf(pc.total, sizeof pc.total, sched ? "%zu" : "?", schedule.count);
  int tty = cb__session_progress_shown(cfg);
  if (tty) {
    cb__live_metrics_totals(s->live, &pc.start);
    rp.progress = on_progress;
    rp.progress_ctx = &pc;
  }
  /* Server telemetry: the explicit URL must answer; the default only if it does. */
  cb__session_scrape *scrape = NULL;
  if (!cfg->no_server_metrics && !cfg->virtual_time) {
    char murl[2100], jsonl[1200];
    if (cfg->server_metrics) {
      snprintf(murl, sizeof murl, "%s", cfg->server_metrics);
    } else {
      size_t n = strlen(target->url);
      if (n >= 3 && !strcmp(target->url + n - 3, "/v1")) n -= 3;
      snprintf(murl, sizeof murl, "%.*s/metrics", (int)n, target->url);
    }
    snprintf(jsonl, sizeof jsonl, "%s/server_metrics.jsonl", spec->out_dir);
    rc = CB_SESSION_FAILED;
    if (cb__session_scrape_start(murl, cfg->scrape_interval_s, jsonl, &scrape, err) != CB_OK &&
        cfg->server_metrics)
      goto fail;
  }
  start_at = cb_clock_anchor_take();
  rc = CB_SESSION_FAILED;
  cb_status st;
  if (cfg->virtual_time) {
    if (!live && cb__session_virtual_fast_ok(cfg, wl, &wp) &&
        cb_sim_prompt_ids_new(wl, &wp, cfg->chat, (uint32_t)cfg->sim.engine.model.vocab_size,
                              &src.ids, err) != CB_OK)
      goto fail;
    src.virtual_clock = live;
    st = cb__session_virtual_run(cfg, &rp, src.ids ? fast_prompt : NULL, &src,
                                 live ? live_next : source_next, &src, on_record, &sink,
                                 live ? &src.vnow : NULL, &stats, err);
    if (src.failed) st = CB_OK; /* reported below, after the results are written */
  } else {
    st = cb_runner_run(&rp, live ? live_next : source_next, &src, on_record, &sink, &stats, err);
  }
  cb__session_scrape_stop(scrape);
  if (tty) { /* the last line shows the final figures, not those of the last tick */
    uint64_t now = cb_clock_now_ns();
    cb_runner_progress last = {.elapsed_ns = now > stats.origin_ns ? now - stats.origin_ns : 0};
    if (stats.origin_ns) on_progress(&pc, &last);
    fputc('\n', cfg->log);
  }
  if (st != CB_OK) {
    cb__session_scrape_free(scrape);
    goto fail;
  }
  end_at = cb_clock_anchor_take();
  if (stats.fd_exhausted)
    cb__session_warn(cfg,
                     "calibench: WARNING: %llu connections could not be opened: no file "
                     "descriptor left (RLIMIT_NOFILE); their requests failed as connect errors. "
                     "Lower the load, raise the hard limit, or split it over processes "
                     "(docs/run.md, \"Scale\")\n",
                     (unsigned long long)stats.fd_exhausted);

  summarize(cfg, wl, requested, &sink.set, &stats, out);
  summarized = 1;
  if (scrape) {
    uint64_t a = stats.origin_ns + out->all.window_start_ns, b = stats.origin_ns + out->all.window_end_ns;
    uint64_t done = b; /* the last measured reply */
    for (size_t i = 0; i < sink.set.count; i++)
      if (!sink.set.items[i].warmup && stats.origin_ns + sink.set.items[i].end_ns > done)
        done = stats.origin_ns + sink.set.items[i].end_ns;
    cb__session_scrape_window_json(scrape, a, b, done, out->all.sessions.sessions ? &sink.set : NULL,
                                   stats.origin_ns, &out->server_json);
    cb__session_scrape_describe(scrape, a, b, done, out->server_line, sizeof out->server_line);
    cb__session_scrape_free(scrape);
  }
  core_tried = 1;
  if (write_core(cfg, wl, sched, &stats, &start_at, &end_at, target, out, NULL, dir, &text,
                 err) != CB_OK)
    goto fail;
  if (sched) { /* without a schedule there are no prompts to render again */
    cb_buf_reset(&text);
    if (cb__session_samples_json(wl, &schedule, &sink.set, &text, err) != CB_OK) goto fail;
    if (text.len && cb_results_dir_write(dir, "samples.json", text.data, text.len, err) != CB_OK) goto fail;
  }
  if (cfg->vllm_json && spec->plain) {
    cb_buf_reset(&text);
    cb_vllm_export_params vp = {.backend = cfg->chat ? "openai-chat" : "openai",
                                .model_id = target->model, .label = cfg->label,
                                .request_rate = requested, .burstiness = wp.arrival.burstiness,
                                .ramp_up_strategy = wp.arrival.ramp != CB_RAMP_NONE
                                                        ? cb_ramp_kind_name(wp.arrival.ramp) : NULL,
                                .ramp_up_start_rps = wp.arrival.ramp_start,
                                .ramp_up_end_rps = wp.arrival.rate,
                                .max_concurrency = rp.max_concurrency ? rp.max_concurrency : rp.concurrency,
                                .start_wall_ns = start_at.wall_ns,
                                .duration_s = (double)stats.last_end_ns / 1e9};
    cb_results_write_vllm_json(&sink.set, &out->all, &vp, &text);
    if (cb_results_write_file(cfg->vllm_json, text.data, text.len, err) != CB_OK) goto fail;
  }
  if (!cfg->no_report) {
    /* report.html from the records in memory and the files just written; a failure
     * only warns. The records are handed over: nothing below uses them. */
    cb_error rerr;
    cb_error_clear(&rerr);
    if (restore_sample_texts(&sink, &rerr) != CB_OK ||
        cb_report_write_html_file(spec->out_dir, NULL, &sink.set, &rerr) != CB_OK)
      cb__session_warn(cfg, "calibench: report.html not written: %s\n", rerr.msg);
  }
  rc = CB_SESSION_OK;
  out->ran = 1;
  if (src.failed) {
    /* A request could not be prepared: what was measured is written, the point fails. */
    *err = src.err;
    rc = CB_SESSION_BAD_INPUT;
    out->ran = 0;
    goto fail;
  }
  goto done;
fail:
  if (dir && !core_tried) {
    /* A failure after the directory was made: it still gets its summary (of what was
     * recorded, maybe nothing) and a manifest that says what went wrong. */
    if (!summarized) summarize(cfg, wl, requested, &sink.set, &stats, out);
    cb_error werr;
    cb_error_clear(&werr);
    if (!end_at.wall_ns) end_at = cb_clock_anchor_take();
    if (write_core(cfg, wl, cfg->live || (cb_workload_is_closed_loop(wl) && !wp.num_requests) ? NULL : &schedule,
                   &stats, &start_at, &end_at, target, out, err->msg, dir, &text, &werr) != CB_OK)
      cb__session_warn(cfg, "calibench: %s\n", werr.msg);
  }
done:
  cb_results_dir_close(dir);
  cb_record_set_free(&sink.set);
  cb_free(sink.text_at);
  cb_workload_prompt_free(&src.prompt);
  cb_buf_free(&src.body);
  if (src.iter) cb_workload_iter_free(src.iter);
  cb_sim_prompt_ids_free(src.ids);
  cb_schedule_free(&schedule);
  cb_workload_free(wl);
  cb_buf_free(&text);
  cb__session_sim_stop(sim);
  cb_buf_free(&own.models);
  return rc;
}
