/*
 * config.c - a session's configuration (session.h): the defaults `calibench run`
 * starts from, the check a library caller gets instead of the CLI's flag checks, and
 * the runner parameters and SLOs it turns into.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"
#include "calibench/rng.h"
#include "session_internal.h"

void cb_session_config_default_out_dir(cb_session_config *cfg) {
  char stamp[32];
  time_t now = (time_t)(cb_clock_wall_ns() / CB_NS_PER_S);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "results/%s-%s", stamp, cfg->run_id);
}

void cb_session_config_init(cb_session_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->chat = 1;
  cfg->verify_tls = 1;
  cfg->api_key_env = "OPENAI_API_KEY";
  cfg->confidence = 0.95;
  cfg->drain_timeout_s = 30;
  cfg->max_output_text = CB_SESSION_OUTPUT_TEXT_MAX;
  cfg->sweep_points = 5;
  cfg->sweep_max_concurrency = 64;
  cfg->slo_attainment = 0.99;
  cfg->scrape_interval_s = 1;
  cb_workload_default_params(&cfg->workload);
  cb_workload_default_class(&cfg->cls);
  cfg->workload.arrival.kind = CB_ARRIVAL_CLOSED;
  cfg->workload.arrival.burstiness = 1;
  cfg->workload.arrival.trace_speed = 1;
  cfg->workload.concurrency = 1;
  cfg->workload.num_requests = 100;
  cfg->workload.classes = &cfg->cls;
  cfg->workload.num_classes = 1;
  cb_sim_server_default_params(&cfg->sim);
  /* Run id: 8 hex digits from the time and the pid, unique enough to tell runs apart. */
  snprintf(cfg->run_id, sizeof cfg->run_id, "%08llx",
           (unsigned long long)(cb_hash3_u64(cb_clock_wall_ns(), (uint64_t)getpid(), 0) & 0xffffffffu));
  cb_session_config_default_out_dir(cfg);
}

void cb_session_config_free(cb_session_config *cfg) {
  if (cfg->api_key) {
    memset(cfg->api_key, 0, strlen(cfg->api_key));
    cb_free(cfg->api_key);
  }
  cb_free((char *)cfg->url);
  if (cfg->scenario) cb_scenario_free(cfg->scenario);
  cb_tok_free(cfg->tok);
  cb_tok_source_free(&cfg->tok_source);
  memset(cfg, 0, sizeof *cfg);
}

static int http_url(const char *u) { return !strncmp(u, "http://", 7) || !strncmp(u, "https://", 8); }

static cb_status bad(cb_error *err, const char *field, const char *expected, double got) {
  return cb_error_set(err, CB_ERR_INVALID, "session: %s: expected %s, got %g", field, expected, got);
}

cb_status cb_session_config_check(const cb_session_config *cfg, cb_error *err) {
  const cb_workload_params *w = &cfg->workload;
  if (cfg->url && !http_url(cfg->url))
    return cb_error_set(err, CB_ERR_INVALID, "session: url: expected http://HOST[:PORT]/v1 or https://...");
  if (cfg->url && cfg->virtual_time)
    return cb_error_set(err, CB_ERR_INVALID, "session: url: the engine in virtual time has no target: "
                        "expected NULL with virtual_time");
  if (cfg->n_headers > CB_SESSION_MAX_HEADERS)
    return bad(err, "n_headers", "at most 64", (double)cfg->n_headers);
  for (size_t i = 0; i < cfg->n_headers; i++) {
    const char *h = cfg->headers[i];
    if (!h || !strchr(h, ':') || h[0] == ':' || strpbrk(h, "\r\n"))
      return cb_error_set(err, CB_ERR_INVALID, "session: headers[%zu]: expected 'Name: value' on one line", i);
  }
  size_t n_src;
  if (cfg->source_addrs && cb_runner_source_addrs_parse(cfg->source_addrs, NULL, &n_src, err) != CB_OK)
    return err->code;
  if (cfg->source_addrs && cfg->virtual_time)
    return cb_error_set(err, CB_ERR_INVALID, "session: source_addrs: the engine in virtual time opens "
                        "no connections: expected NULL with virtual_time");
  if (!(cfg->request_timeout_s >= 0)) return bad(err, "request_timeout_s", ">= 0 (0: none)", cfg->request_timeout_s);
  if (!(cfg->drain_timeout_s >= 0)) return bad(err, "drain_timeout_s", ">= 0", cfg->drain_timeout_s);
  if (cfg->retries < 0 || cfg->retries > 100) return bad(err, "retries", "0 to 100", cfg->retries);
  if (!w->classes && !cfg->scenario)
    return cb_error_set(err, CB_ERR_INVALID, "session: workload.classes: expected the class(es) to run, got NULL");
  if (w->arrival.kind == CB_ARRIVAL_CLOSED && cfg->sweep != CB_SESSION_SWEEP_AUTO &&
      cfg->sweep != CB_SESSION_SWEEP_CONCURRENCY && w->concurrency < 1)
    return bad(err, "workload.concurrency", ">= 1 for a closed loop", w->concurrency);
  if (w->arrival.kind == CB_ARRIVAL_CLOSED && cfg->max_concurrency)
    return cb_error_set(err, CB_ERR_INVALID, "session: max_concurrency: applies to open-loop runs; "
                        "a closed loop uses workload.concurrency");
  if (cfg->max_concurrency < 0) return bad(err, "max_concurrency", ">= 0 (0: none)", cfg->max_concurrency);
  switch (cfg->sweep) {
    case CB_SESSION_SWEEP_NONE: break;
    case CB_SESSION_SWEEP_CONCURRENCY:
    case CB_SESSION_SWEEP_RATE:
      if (cfg->n_sweep < 1 || cfg->n_sweep > CB_SESSION_MAX_SWEEP)
        return bad(err, "n_sweep", "1 to 64 values", (double)cfg->n_sweep);
      for (size_t i = 0; i < cfg->n_sweep; i++) {
        double v = cfg->sweep_values[i];
        if (!(v > 0) || !isfinite(v) || (i && v <= cfg->sweep_values[i - 1]))
          return cb_error_set(err, CB_ERR_INVALID, "session: sweep_values[%zu]: expected a positive "
                              "value above the one before, got %g", i, v);
      }
      break;
    case CB_SESSION_SWEEP_AUTO:
      if (cfg->sweep_points < 1 || cfg->sweep_points > 50)
        return bad(err, "sweep_points", "1 to 50", cfg->sweep_points);
      if (cfg->sweep_max_concurrency < 1)
        return bad(err, "sweep_max_concurrency", ">= 1", cfg->sweep_max_concurrency);
      break;
    default:
      return bad(err, "sweep", "a cb_session_sweep_kind", cfg->sweep);
  }
  if (cfg->live && cfg->sweep)
    return cb_error_set(err, CB_ERR_INVALID, "session: live: runs one point: expected no sweep");
  if (cfg->sweep && cfg->vllm_json)
    return cb_error_set(err, CB_ERR_INVALID, "session: vllm_json: writes one run; a sweep's points "
                        "each have their summary");
  if (!(cfg->slo_attainment > 0 && cfg->slo_attainment <= 1))
    return bad(err, "slo_attainment", "a share in (0, 1]", cfg->slo_attainment);
  if (!(cfg->confidence >= 0.5 && cfg->confidence < 1))
    return bad(err, "confidence", "0.5 <= C < 1", cfg->confidence);
  if (cfg->n_slos > CB_MAX_SLOS) return bad(err, "n_slos", "at most CB_MAX_SLOS", (double)cfg->n_slos);
  if (cfg->server_metrics && !http_url(cfg->server_metrics))
    return cb_error_set(err, CB_ERR_INVALID, "session: server_metrics: expected an http(s):// URL");
  if (!cfg->no_server_metrics && !cfg->virtual_time && !(cfg->scrape_interval_s >= 0.01))
    return bad(err, "scrape_interval_s", ">= 0.01", cfg->scrape_interval_s);
  if (cfg->metrics_listen) {
    char host[64];
    uint16_t port;
    cb_error perr;
    if (cfg->virtual_time)
      return cb_error_set(err, CB_ERR_INVALID, "session: metrics_listen: a run in virtual time "
                          "has no live metrics: expected NULL with virtual_time");
    if (cb_session_listen_parse(cfg->metrics_listen, host, &port, &perr) != CB_OK)
      return cb_error_set(err, CB_ERR_INVALID, "session: metrics_listen: %s", perr.msg);
  }
  if (!(cfg->metrics_linger_s >= 0 && cfg->metrics_linger_s <= 86400))
    return bad(err, "metrics_linger_s", "0 to 86400 s", cfg->metrics_linger_s);
  if (!cfg->out_dir[0])
    return cb_error_set(err, CB_ERR_INVALID, "session: out_dir: expected a directory, got \"\"");
  return CB_OK;
}

void cb__session_runner_params(const cb_session_config *cfg, const char *endpoint,
                               cb_runner_params *out) {
  cb_runner_default_params(out);
  out->url = endpoint;
  out->chat = cfg->chat;
  out->run_id = cfg->run_id;
  out->api_key = cfg->api_key;
  out->headers = cfg->headers;
  out->n_headers = cfg->n_headers;
  out->verify_tls = cfg->verify_tls;
  out->http2 = cfg->http2;
  out->use_libcurl = cfg->libcurl;
  out->request_timeout_s = cfg->request_timeout_s;
  out->source_addrs = cfg->source_addrs;
  out->retries = cfg->retries;
  out->seed = cfg->workload.seed;
  out->drain_timeout_s = cfg->drain_timeout_s;
  out->stop = cfg->stop;
  out->max_output_text = cfg->max_output_text;
  out->max_choice_events = cfg->max_choice_events;
  if (cfg->tok) {
    out->count_tokens = cb_tok_count;
    out->count_ctx = cfg->tok;
  }
  if (cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED) out->concurrency = (int)cfg->workload.concurrency;
  else out->max_concurrency = cfg->max_concurrency;
  /* A closed-loop run bounded only by time stops sending when the time is up. */
  if (cfg->workload.duration_ns && cfg->workload.arrival.kind == CB_ARRIVAL_CLOSED)
    out->duration_s = (double)cfg->workload.duration_ns / 1e9;
}

void cb__session_class_slos(const cb_session_config *cfg, const cb_workload_class *c, cb_slo *out,
                            size_t *n) {
  const uint64_t v[] = {c->slo.ttft_ns, c->slo.tpot_ns, c->slo.itl_ns, c->slo.e2e_ns};
  const cb_metric m[] = {CB_METRIC_TTFT, CB_METRIC_TPOT, CB_METRIC_ITL, CB_METRIC_E2E};
  *n = 0;
  for (size_t i = 0; i < 4; i++)
    if (v[i]) out[(*n)++] = (cb_slo){.metric = m[i], .bound_ns = (double)v[i], .percentile = 99};
  if (*n == 0) {
    memcpy(out, cfg->slos, sizeof cfg->slos);
    *n = cfg->n_slos;
  }
}
