/*
 * metric.c - the metric catalog: every name a policy, `history` or the registry uses,
 * and the summary.json number it addresses (docs/gate.md, "Metric names").
 *
 *   <m>.<stat>           metrics.<m>.<stat>_ms  m: ttft tpot itl itl_token e2e ttft_sched
 *                                               e2e_sched lag; stat: mean std min p50 p90
 *                                               p95 p99 p99.9 max (ms); count, cv (plain)
 *   <m>.adjusted.<pP>    metrics.<m>.adjusted.<pP>_ms (ttft tpot e2e ttft_sched e2e_sched)
 *   throughput.<k>       throughput.<k>  (requests_per_s, output_tokens_per_s,
 *                                         total_tokens_per_s, goodput_requests_per_s)
 *   error_rate           failed / measured
 *   ... counts, rates, tokens, client and the server telemetry section (table below).
 *
 * The table is built once (pthread_once) from these rules.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "calibench/store.h"

#define CATALOG_MAX 192

static cb_store_metric catalog[CATALOG_MAX];
static size_t catalog_n;
static pthread_once_t catalog_once = PTHREAD_ONCE_INIT;

static void add(const char *name, const char *path, cb_store_unit unit, cb_store_better better,
                const char *sample, double q, int adjusted) {
  cb_store_metric *m = &catalog[catalog_n++];
  snprintf(m->name, sizeof m->name, "%.*s", (int)sizeof m->name - 1, name);
  snprintf(m->path, sizeof m->path, "%.*s", (int)sizeof m->path - 1, path);
  m->unit = unit;
  m->better = better;
  snprintf(m->sample, sizeof m->sample, "%.*s", (int)sizeof m->sample - 1, sample);
  m->quantile = q;
  m->adjusted = adjusted;
}

static void build(void) {
  static const char *const dists[] = {"ttft", "tpot", "itl", "itl_token", "e2e",
                                      "ttft_sched", "e2e_sched", "lag"};
  static const struct {
    const char *stat, *key;
    double q;
  } stats[] = {{"mean", "mean_ms", -1},  {"std", "std_ms", NAN}, {"min", "min_ms", 0},
               {"p50", "p50_ms", 0.5},   {"p90", "p90_ms", 0.9}, {"p95", "p95_ms", 0.95},
               {"p99", "p99_ms", 0.99},  {"p99.9", "p99.9_ms", 0.999},
               {"max", "max_ms", 1}};
  char name[64], path[96];
  for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
    const char *m = dists[d];
    int per_request = strcmp(m, "itl") && strcmp(m, "itl_token");
    const char *sample = per_request ? m : "";
    snprintf(name, sizeof name, "%s.count", m);
    snprintf(path, sizeof path, "metrics.%s.count", m);
    add(name, path, CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
    snprintf(name, sizeof name, "%s.cv", m);
    snprintf(path, sizeof path, "metrics.%s.cv", m);
    add(name, path, CB_UNIT_NUMBER, CB_BETTER_LOWER, "", NAN, 0);
    for (size_t s = 0; s < sizeof stats / sizeof stats[0]; s++) {
      snprintf(name, sizeof name, "%s.%s", m, stats[s].stat);
      snprintf(path, sizeof path, "metrics.%s.%s", m, stats[s].key);
      add(name, path, CB_UNIT_MS, CB_BETTER_LOWER, isnan(stats[s].q) ? "" : sample,
          stats[s].q, 0);
    }
    int adjusted = !strcmp(m, "ttft") || !strcmp(m, "tpot") || !strcmp(m, "e2e") ||
                   !strcmp(m, "ttft_sched") || !strcmp(m, "e2e_sched");
    if (!adjusted) continue;
    for (size_t s = 3; s < sizeof stats / sizeof stats[0]; s++) { /* p50 .. max */
      snprintf(name, sizeof name, "%s.adjusted.%s", m, stats[s].stat);
      snprintf(path, sizeof path, "metrics.%s.adjusted.%s", m, stats[s].key);
      add(name, path, CB_UNIT_MS, CB_BETTER_LOWER, m, stats[s].q, 1);
    }
  }
  add("throughput.requests_per_s", "throughput.requests_per_s", CB_UNIT_PER_S,
      CB_BETTER_HIGHER, "throughput.requests_per_s", -1, 0);
  add("throughput.output_tokens_per_s", "throughput.output_tokens_per_s", CB_UNIT_PER_S,
      CB_BETTER_HIGHER, "throughput.output_tokens_per_s", -1, 0);
  add("throughput.total_tokens_per_s", "throughput.total_tokens_per_s", CB_UNIT_PER_S,
      CB_BETTER_HIGHER, "throughput.total_tokens_per_s", -1, 0);
  add("throughput.goodput_requests_per_s", "throughput.goodput_requests_per_s", CB_UNIT_PER_S,
      CB_BETTER_HIGHER, "", NAN, 0);
  add("error_rate", "failed/measured", CB_UNIT_FRACTION, CB_BETTER_LOWER, "error", -1, 0);
  add("joint_attainment", "joint_attainment", CB_UNIT_FRACTION, CB_BETTER_HIGHER, "", NAN, 0);
  add("achieved_rate", "achieved_rate", CB_UNIT_PER_S, CB_BETTER_NONE, "", NAN, 0);
  add("scheduled_rate", "scheduled_rate", CB_UNIT_PER_S, CB_BETTER_NONE, "", NAN, 0);
  add("requested_rate", "requested_rate", CB_UNIT_PER_S, CB_BETTER_NONE, "", NAN, 0);
  add("requests", "requests", CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
  add("warmup", "warmup", CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
  add("measured", "measured", CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
  add("succeeded", "succeeded", CB_UNIT_COUNT, CB_BETTER_HIGHER, "", NAN, 0);
  add("failed", "failed", CB_UNIT_COUNT, CB_BETTER_LOWER, "", NAN, 0);
  add("tokens.prompt", "tokens.prompt", CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
  add("tokens.output", "tokens.output", CB_UNIT_COUNT, CB_BETTER_NONE, "", NAN, 0);
  add("window.seconds", "window.seconds", CB_UNIT_NUMBER, CB_BETTER_NONE, "", NAN, 0);
  add("client.lag_p99", "client.lag_p99_ms", CB_UNIT_MS, CB_BETTER_LOWER, "", NAN, 0);
  add("client.cpu_s", "client.cpu_s", CB_UNIT_NUMBER, CB_BETTER_LOWER, "", NAN, 0);
  add("server.running.mean", "server.gauges.running.mean", CB_UNIT_NUMBER, CB_BETTER_NONE, "", NAN, 0);
  add("server.running.max", "server.gauges.running.max", CB_UNIT_NUMBER, CB_BETTER_NONE, "", NAN, 0);
  add("server.waiting.mean", "server.gauges.waiting.mean", CB_UNIT_NUMBER, CB_BETTER_LOWER, "", NAN, 0);
  add("server.waiting.max", "server.gauges.waiting.max", CB_UNIT_NUMBER, CB_BETTER_LOWER, "", NAN, 0);
  add("server.kv_usage.mean", "server.gauges.kv_usage.mean", CB_UNIT_FRACTION, CB_BETTER_LOWER, "", NAN, 0);
  add("server.kv_usage.max", "server.gauges.kv_usage.max", CB_UNIT_FRACTION, CB_BETTER_LOWER, "", NAN, 0);
  add("server.prefix_hit_rate", "server.window_deltas.prefix_hit_rate", CB_UNIT_FRACTION,
      CB_BETTER_HIGHER, "", NAN, 0);
  add("server.preemptions", "server.window_deltas.preemptions", CB_UNIT_COUNT, CB_BETTER_LOWER,
      "", NAN, 0);
  /* Quality (eval run): eval.json's metrics.<m>.score, 0-100 but ROUGE's 0-1
   * (cb_store_quality_point). The names are the eval metric table's; TER is an error
   * rate. */
  static const char *const quality[] = {"bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2",
                                        "rougeL", "rougeLsum", "exact", "f1"};
  for (size_t q = 0; q < sizeof quality / sizeof quality[0]; q++) {
    snprintf(name, sizeof name, "quality.%s", quality[q]);
    add(name, name, CB_UNIT_NUMBER, strcmp(quality[q], "ter") ? CB_BETTER_HIGHER : CB_BETTER_LOWER,
        CB_SAMPLE_EVAL_ITEMS, NAN, 0);
  }
  add("quality.wrong_rate", "quality.wrong_rate", CB_UNIT_FRACTION, CB_BETTER_LOWER, "", NAN, 0);
}

double cb_store_quality_point(const char *metric) {
  if (!strncmp(metric, "judge:", 6)) return 0.25;
  return strncmp(metric, "rouge", 5) ? 1.0 : 0.01;
}

size_t cb_store_metric_count(void) {
  pthread_once(&catalog_once, build);
  return catalog_n;
}

const cb_store_metric *cb_store_metric_at(size_t i) {
  return i < cb_store_metric_count() ? &catalog[i] : NULL;
}

/* Names no table can list, entered on first use:
 *   quality.judge:NAME (eval run's judge:RUBRIC, NAME from the rubric's file name): the
 *     mean grade on the rubric's scale, higher better; its sample is eval.json's items,
 *     whose grades the paired test resamples (cb_eval_run_paired), as for the table's
 *     quality metrics.
 *   probe.<probe>.<metric> (probe.json's metrics, docs/probe.md): its direction is the
 *     file's higher_is_better, set when a run's probe.json is read
 *     (cb_store_probe_metric); a name met first in a policy or a query has none until
 *     then. */
#define JUDGE_PREFIX "quality.judge:"
#define PROBE_PREFIX "probe."
#define DYNAMIC_MAX 128

static cb_store_metric dynamic[DYNAMIC_MAX];
static size_t dynamic_n;
static pthread_mutex_t dynamic_lock = PTHREAD_MUTEX_INITIALIZER;

/* A probe metric's name: probe.<probe>.<metric>, both parts [a-z0-9_]+. */
static int probe_name(const char *name) {
  size_t pre = sizeof PROBE_PREFIX - 1;
  if (strncmp(name, PROBE_PREFIX, pre)) return 0;
  const char *p = name + pre, *dot = strchr(p, '.');
  if (!dot || dot == p || !dot[1]) return 0;
  for (const char *c = p; *c; c++)
    if (c != dot && !((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
  return 1;
}

static const cb_store_metric *dynamic_metric(const char *name, int set_better, cb_store_better better) {
  size_t len = strlen(name), pre = sizeof JUDGE_PREFIX - 1;
  int judge = len > pre && !strncmp(name, JUDGE_PREFIX, pre);
  if (len >= sizeof dynamic[0].name || (!judge && !probe_name(name))) return NULL;
  cb_store_metric *m = NULL;
  pthread_mutex_lock(&dynamic_lock);
  for (size_t i = 0; i < dynamic_n && !m; i++)
    if (!strcmp(dynamic[i].name, name)) m = &dynamic[i];
  if (!m && dynamic_n < DYNAMIC_MAX) {
    m = &dynamic[dynamic_n++];
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->path, sizeof m->path, "%s", name);
    m->unit = CB_UNIT_NUMBER;
    m->better = judge ? CB_BETTER_HIGHER : CB_BETTER_NONE;
    if (judge) snprintf(m->sample, sizeof m->sample, "%s", CB_SAMPLE_EVAL_ITEMS);
    m->quantile = NAN;
  }
  if (m && !judge && set_better) m->better = better;
  pthread_mutex_unlock(&dynamic_lock);
  return m;
}

const cb_store_metric *cb_store_probe_metric(const char *name, cb_store_better better) {
  return probe_name(name) ? dynamic_metric(name, 1, better) : NULL;
}

const cb_store_metric *cb_store_metric_find(const char *name) {
  size_t n = cb_store_metric_count();
  for (size_t i = 0; i < n; i++)
    if (!strcmp(catalog[i].name, name)) return &catalog[i];
  return dynamic_metric(name, 0, CB_BETTER_NONE);
}

cb_status cb_store_metric_lookup(const char *name, const cb_store_metric **out, cb_error *err) {
  const cb_store_metric *m = cb_store_metric_find(name);
  if (m) {
    *out = m;
    return CB_OK;
  }
  /* Suggest the names sharing the part before the first dot, else the groups. */
  char hint[400] = "";
  size_t off = 0, plen = strcspn(name, ".");
  size_t n = cb_store_metric_count();
  for (size_t i = 0; i < n && off < sizeof hint - 1; i++) {
    const char *c = catalog[i].name;
    if (strncmp(c, name, plen) || (c[plen] != '.' && c[plen] != '\0')) continue;
    int w = snprintf(hint + off, sizeof hint - off, "%s%s", off ? ", " : "", c);
    if (w < 0) break;
    off += (size_t)w;
  }
  if (!off)
    snprintf(hint, sizeof hint,
             "ttft|tpot|itl|itl_token|e2e|ttft_sched|e2e_sched|lag.<mean|p50|p90|p95|p99|"
             "p99.9|max|...>, <m>.adjusted.<pP>, throughput.<requests_per_s|"
             "output_tokens_per_s|...>, error_rate, joint_attainment, server.<...>, "
             "quality.<m>, probe.<probe>.<metric>; "
             "docs/gate.md lists them all");
  return cb_error_set(err, CB_ERR_NOT_FOUND, "unknown metric '%s' (known: %s)", name, hint);
}

const char *cb_store_unit_name(cb_store_unit u) {
  switch (u) {
    case CB_UNIT_MS: return "ms";
    case CB_UNIT_PER_S: return "/s";
    case CB_UNIT_FRACTION: return "fraction";
    case CB_UNIT_COUNT: return "count";
    default: return "";
  }
}
