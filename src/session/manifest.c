/*
 * manifest.c - manifest.json of a run: who measured what, how, with which data
 * and seeds, so a reader can reproduce it. Header values are not written (they may
 * carry credentials), only their names; the API key never appears.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "calibench/secret.h"
#include "calibench/clock.h"
#include "session_internal.h"

static void str(cb_buf *out, const char *key, const char *v) {
  cb_buf_appendf(out, ",\"%s\":", key);
  if (!v) {
    cb_buf_append_str(out, "null");
    return;
  }
  cb_buf_append_char(out, '"');
  cb_buf_append_json_string(out, v, strlen(v));
  cb_buf_append_char(out, '"');
}

/* `"sha256": HEX`, or null for no file and null with `"sha256_error"` saying why a file
 * has none (a FIFO read once, a file removed since it was loaded). */
static void sha256_members(cb_buf *out, const char *path) {
  char hex[65];
  cb_error err;
  cb_error_clear(&err);
  if (path && cb_results_sha256_file(path, hex, &err) == CB_OK) {
    str(out, "sha256", hex);
    return;
  }
  str(out, "sha256", NULL);
  if (path) str(out, "sha256_error", err.msg);
}

static void dataset_entries(const cb_workload *wl, cb_buf *out) {
  cb_buf_append_str(out, ",\"datasets\":[");
  for (size_t i = 0; i < cb_workload_num_classes(wl); i++) {
    const cb_workload_class *c = cb_workload_get_class(wl, i);
    const char *path = cb_dataset_path(c->dataset);
    cb_buf_appendf(out, "%s{\"class\":\"", i ? "," : "");
    cb_buf_append_json_string(out, c->name, strlen(c->name));
    cb_buf_append_char(out, '"');
    str(out, "spec", c->dataset_spec);
    str(out, "path", path);
    sha256_members(out, path);
    cb_buf_appendf(out, ",\"content_xxh64\":\"%016llx\",\"bytes\":%llu,\"items\":%zu,\"skipped\":%zu}",
                   (unsigned long long)cb_dataset_content_hash(c->dataset),
                   (unsigned long long)cb_dataset_file_bytes(c->dataset),
                   cb_dataset_size(c->dataset), cb_dataset_skipped(c->dataset));
  }
  cb_buf_append_char(out, ']');
}

static void workload_part(const cb_session_config *cfg, const cb_workload *wl, const cb_schedule *sched,
                          cb_buf *out) {
  cb_workload_seeds seeds;
  cb_workload_get_seeds(wl, &seeds);
  cb_buf_appendf(out,
                 ",\"seeds\":{\"seed\":%llu,\"data\":%llu,\"arrival\":%llu,\"sampling\":%llu}",
                 (unsigned long long)seeds.seed, (unsigned long long)seeds.data,
                 (unsigned long long)seeds.arrival, (unsigned long long)seeds.sampling);
  dataset_entries(wl, out);
  if (sched)
    cb_buf_appendf(out, ",\"workload_hash\":\"%016llx\",\"scheduled\":%zu,\"scheduled_total\":%llu",
                   (unsigned long long)sched->hash, sched->count,
                   (unsigned long long)sched->total_count);
  else
    cb_buf_appendf(out, ",\"workload_hash\":\"%016llx\",\"scheduled\":null",
                   (unsigned long long)cb_workload_hash(wl));
  if (cfg->live) cb_buf_append_str(out, ",\"live\":true"); /* requests built from answers */
  if (cfg->sessions_path) { /* run --sessions: conversations sent as live sessions */
    cb_buf_append_str(out, ",\"sessions\":{\"source\":\"");
    cb_buf_append_json_string(out, cfg->sessions_path, strlen(cfg->sessions_path));
    cb_buf_appendf(out, "\",\"format\":\"%s\"",
                   cfg->sessions_format ? cfg->sessions_format : "sessions");
    cb_buf_append_str(out, ",\"think_time\":\"");
    const char *tt = cfg->think_time ? cfg->think_time : "const:0s";
    cb_buf_append_json_string(out, tt, strlen(tt));
    cb_buf_appendf(out, "\",\"mode\":\"%s\"}",
                   cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED ? "closed" : "open");
  }
  cb_buf_appendf(out, ",\"shard\":\"%u/%u\"", cfg->workload.shard_index, cfg->workload.shard_count);
  const cb_arrival_params *a = &cfg->workload.arrival;
  if (a->ramp != CB_RAMP_NONE) /* the common process's ramp (the description has it too) */
    cb_buf_appendf(out, ",\"ramp\":{\"kind\":\"%s\",\"start_rate\":%.9g,\"end_rate\":%.9g,"
                   "\"duration_s\":%.9g}",
                   cb_ramp_kind_name(a->ramp), a->ramp_start, a->rate, a->ramp_duration_s);
  /* The canonical description the hash covers, one "key=value" per element. */
  cb_buf desc;
  cb_buf_init(&desc, 0);
  cb_workload_describe(wl, &desc);
  cb_buf_append_str(out, ",\"workload\":[");
  size_t k = 0;
  for (char *p = desc.data, *end = desc.data + desc.len; p && p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (len) {
      cb_buf_append_str(out, k++ ? ",\"" : "\"");
      cb_buf_append_json_string(out, p, len);
      cb_buf_append_char(out, '"');
    }
    p = nl ? nl + 1 : end;
  }
  cb_buf_append_char(out, ']');
  cb_buf_free(&desc);
}

static void config_part(const cb_session_config *cfg, cb_buf *out) {
  cb_buf_append_str(out, ",\"config\":{\"url\":");
  if (cfg->url) {
    char masked[2048];
    cb_secret_mask_url(cfg->url, masked, sizeof masked);
    cb_buf_append_char(out, '"');
    cb_buf_append_json_string(out, masked, strlen(masked));
    cb_buf_append_char(out, '"');
  } else {
    cb_buf_append_str(out, "null");
  }
  str(out, "api", cfg->chat ? "chat" : "completions");
  str(out, "model", cfg->model);
  cb_buf_append_str(out, ",\"header_names\":[");
  for (size_t i = 0; i < cfg->n_headers; i++) {
    const char *colon = strchr(cfg->headers[i], ':');
    cb_buf_append_str(out, i ? ",\"" : "\"");
    cb_buf_append_json_string(out, cfg->headers[i], (size_t)(colon - cfg->headers[i]));
    cb_buf_append_char(out, '"');
  }
  cb_buf_append_char(out, ']');
  str(out, "api_key_env", cfg->api_key_env);
  /* Which credential was sent, never the credential. */
  cb_buf_appendf(out, ",\"api_key_set\":%s,\"authorization\":\"%s\","
                 "\"verify_tls\":%s,\"http2\":%s,\"libcurl\":%s",
                 cfg->api_key ? "true" : "false",
                 cfg->auth_header ? "header" : cfg->api_key ? "api_key_env" : "none",
                 cfg->verify_tls ? "true" : "false", cfg->http2 ? "true" : "false",
                 cfg->libcurl ? "true" : "false");
  cb_buf_appendf(out, ",\"request_timeout_s\":%g,\"retries\":%d,\"drain_timeout_s\":%g",
                 cfg->request_timeout_s, cfg->retries, cfg->drain_timeout_s);
  str(out, "source_addrs", cfg->source_addrs);
  str(out, "extra_body", cfg->extra_body);
  cb_buf_appendf(out, ",\"ignore_eos\":%s,\"max_concurrency\":%d,\"requested_rate\":%g",
                 cfg->ignore_eos ? "true" : "false", cfg->max_concurrency, cfg->requested_rate);
  str(out, "scenario", cfg->scenario_path);
  str(out, "tokenizer", cfg->tok ? cb_tok_name(cfg->tok) : NULL);
  str(out, "tokenizer_source", cfg->tok_source.how);
  cb_buf_append_str(out, ",\"slos\":[");
  for (size_t i = 0; i < cfg->n_slos; i++)
    cb_buf_appendf(out, "%s{\"metric\":\"%s\",\"bound_ms\":%g,\"percentile\":%g}", i ? "," : "",
                   cb_metric_name(cfg->slos[i].metric), cfg->slos[i].bound_ns / 1e6,
                   cfg->slos[i].percentile);
  cb_buf_appendf(out, "],\"confidence\":%g", cfg->confidence);
  str(out, "out", cfg->out_dir);
  str(out, "vllm_json", cfg->vllm_json);
  str(out, "label", cfg->label);
  cb_buf_append_char(out, '}');
}

void cb__session_behavior_json(const cb_session_config *cfg, cb_buf *out) {
  const char *path = cfg->sim.behavior_path;
  if (!path) {
    cb_buf_append_str(out, ",\"behavior\":null");
    return;
  }
  cb_buf_append_str(out, ",\"behavior\":{\"path\":\"");
  cb_buf_append_json_string(out, path, strlen(path));
  cb_buf_append_char(out, '"');
  sha256_members(out, path);
  cb_buf_append_char(out, '}');
}

static void server_part(const cb_session_config *cfg, const char *url, const cb_buf *models, cb_buf *out) {
  cb_buf_append_str(out, ",\"server\":{");
  char masked[2048];
  cb_secret_mask_url(url, masked, sizeof masked);
  cb_buf_append_str(out, "\"url\":\"");
  cb_buf_append_json_string(out, masked, strlen(masked));
  cb_buf_append_str(out, "\",\"models\":");
  /* The model list is server text: the run's secrets are redacted from it. */
  cb_secrets sec;
  cb_secrets_init(&sec);
  if (cfg->api_key) cb_secrets_add(&sec, cfg->api_key, strlen(cfg->api_key));
  for (size_t i = 0; i < cfg->n_headers; i++) cb_secrets_add_header(&sec, cfg->headers[i]);
  cb_secrets_add_url(&sec, url);
  cb_buf text;
  cb_buf_init(&text, 0);
  cb_secrets_redact(&sec, models->data ? models->data : "", models->len, &text);
  cb_secrets_free(&sec);
  json_error_t je;
  json_t *m = json_loadb(text.data ? text.data : "", text.len, 0, &je);
  cb_buf_free(&text);
  if (m) {
    char *dump = json_dumps(m, JSON_COMPACT);
    cb_buf_append_str(out, dump);
    free(dump);
    json_decref(m);
  } else {
    cb_buf_append_str(out, "null");
  }
  if (!cfg->url) {
    const cb_sim_params *p = &cfg->sim.engine;
    cb_buf_appendf(out,
                   ",\"embedded_simulator\":{\"model\":\"%s\",\"gpu\":\"%s\",\"tp\":%d,"
                   "\"weights\":\"%s\",\"kv\":\"%s\",\"mfu\":%g,\"mbu\":%g,"
                   "\"step_overhead_us\":%g,\"max_num_seqs\":%d,\"max_num_batched_tokens\":%d,"
                   "\"prefix_caching\":%s,\"time_scale\":%g,\"profile\":",
                   p->model.name, p->gpu.name, p->tp, cb_sim_dtype_name(p->weight_dtype),
                   cb_sim_dtype_name(p->kv_dtype), p->mfu, p->mbu,
                   (double)p->step_overhead_ns / 1e3, p->max_num_seqs, p->max_num_batched_tokens,
                   p->enable_prefix_caching ? "true" : "false", cfg->sim.time_scale);
    cb_sim_params_write_json(p, out); /* the whole engine, as sim run's manifest has it */
    cb__session_behavior_json(cfg, out);
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_char(out, '}');
}

void cb__session_manifest(const cb_session_config *cfg, const cb_workload *wl,
                               const cb_schedule *schedule, const cb_runner_stats *stats,
                               const cb_clock_anchor *start_at, const cb_clock_anchor *end_at,
                               const char *model,
                               const char *url, const cb_buf *models, const char *error,
                               cb_buf *out) {
  char start[32], end[32];
  cb_clock_format_utc(start_at->wall_ns, start, sizeof start);
  cb_clock_format_utc(end_at->wall_ns, end, sizeof end);
  cb_buf_appendf(out, "{\"schema_version\":%d,\"run_id\":\"%s\",", CB_RESULTS_SCHEMA_VERSION,
                 cfg->run_id);
  cb_results_manifest_host(out);
  cb_buf_appendf(out, ",\"start_utc\":\"%s\",\"end_utc\":\"%s\",\"origin_mono_ns\":%llu", start,
                 end, (unsigned long long)stats->origin_ns);
  /* Paired (wall, monotonic) readings: `calibench merge` places each shard's origin on
   * the wall clock through them (docs/merge.md). */
  cb_buf_append_str(out, ",\"clock_anchors\":{");
  for (int i = 0; i < 2; i++) {
    const cb_clock_anchor *a = i ? end_at : start_at;
    cb_buf_appendf(out, "%s\"%s\":{\"wall_ns\":%llu,\"mono_ns\":%llu,\"read_gap_ns\":%llu}",
                   i ? "," : "", i ? "end" : "start", (unsigned long long)a->wall_ns,
                   (unsigned long long)a->mono_ns, (unsigned long long)a->read_gap_ns);
  }
  cb_buf_append_char(out, '}');
  cb_buf_appendf(out, ",\"interrupted\":%s", stats->interrupted ? "true" : "false");
  if (error) str(out, "error", error); /* the point failed: what ran is what is recorded */
  str(out, "model", model);
  cb_buf_appendf(out,
                 ",\"runner\":{\"sent\":%llu,\"completed\":%llu,\"failed\":%llu,\"retried\":%llu,"
                 "\"not_sent\":%llu,\"aborted\":%llu,\"cpu_s\":%.3f",
                 (unsigned long long)stats->sent, (unsigned long long)stats->completed,
                 (unsigned long long)stats->failed, (unsigned long long)stats->retried,
                 (unsigned long long)stats->not_sent, (unsigned long long)stats->aborted,
                 stats->cpu_s);
  if (stats->http_client) cb_buf_appendf(out, ",\"http_client\":\"%s\"", stats->http_client);
  if (stats->reads)
    cb_buf_appendf(out, ",\"reads\":%llu,\"kernel_stamped_reads\":%llu",
                   (unsigned long long)stats->reads, (unsigned long long)stats->kernel_stamped_reads);
  if (stats->peak_connections)
    cb_buf_appendf(out, ",\"peak_connections\":%llu", (unsigned long long)stats->peak_connections);
  cb_buf_appendf(out, ",\"fd_exhausted\":%llu", (unsigned long long)stats->fd_exhausted);
  const cb_fdlimit *fl = &cfg->fd_limit;
  if (fl->soft) { /* RLIMIT_NOFILE as the caller left it, and what it was before */
    cb_buf_appendf(out, ",\"nofile\":{\"soft\":%llu,\"raised_from\":%llu,\"hard\":",
                   (unsigned long long)fl->soft, (unsigned long long)fl->before);
    if (fl->hard == UINT64_MAX) cb_buf_append_str(out, "null");
    else cb_buf_appendf(out, "%llu", (unsigned long long)fl->hard);
    cb_buf_append_char(out, '}');
  }
  cb_buf_append_char(out, '}');
  config_part(cfg, out);
  workload_part(cfg, wl, schedule, out);
  server_part(cfg, url, models, out);
  if (cfg->virtual_time) cb__session_virtual_manifest(cfg, out); /* "predicted": true, the engine */
  cb_buf_append_str(out, "}\n");
}
