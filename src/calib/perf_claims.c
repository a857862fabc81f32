/*
 * perf_claims.c - `calibrate perf`: a paper's throughput and latency claims against a
 * result directory (calib.h, "perf").
 *
 * For each claimed metric measured by the run: factor = measured / paper (below 1 for
 * throughput and above 1 for latency when production falls short of the paper), and the
 * production figure to plan with = measured x margin (throughput) or measured / margin
 * (latency): what is left after the safety margin. A claim the run does not measure is
 * projected with the geometric mean factor of the measured claims of its kind
 * (throughput or latency), with the margin, and marked so.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/clock.h"
#include "calibench/duration.h"
#include "calib/cstat_internal.h"
#include "calib/perf_internal.h"

static const char *const tput_keys[] = {"requests_per_s", "output_tokens_per_s",
                                        "total_tokens_per_s", "goodput_requests_per_s"};
static const char *const lat_metrics[] = {"ttft", "tpot", "itl", "e2e"};
static const char *const lat_stats[] = {"mean", "p50", "p90", "p95", "p99"};
#define N(a) (sizeof(a) / sizeof((a)[0]))

int cb_calib_metric_key(const char *key, int *higher_better) {
  for (size_t i = 0; i < N(tput_keys); i++)
    if (!strcmp(key, tput_keys[i])) return *higher_better = 1, 1;
  for (size_t m = 0; m < N(lat_metrics); m++)
    for (size_t s = 0; s < N(lat_stats); s++) {
      char k[48];
      snprintf(k, sizeof k, "%s_%s_ms", lat_metrics[m], lat_stats[s]);
      if (!strcmp(key, k)) return *higher_better = 0, 1;
    }
  return 0;
}

static const char known_keys[] =
    "requests_per_s, output_tokens_per_s, total_tokens_per_s, goodput_requests_per_s, "
    "<ttft|tpot|itl|e2e>_<mean|p50|p90|p95|p99>_ms";

/* A claim's value: a number, or for a latency (a key ending in _ms) a duration in the
 * one syntax of docs/durations.md, a bare number in ms as the key says. 0: not one. */
static int claim_value(const char *metric, const char *s, double *out, cb_error *err) {
  size_t n = strlen(metric);
  if (n > 3 && !strcmp(metric + n - 3, "_ms")) {
    uint64_t ns;
    if (cb_duration_parse(s, CB_NS_PER_MS, &ns, err) != CB_OK) return 0;
    *out = (double)ns / 1e6;
    return 1;
  }
  if (cb__cstat_parse_double(s, out)) return 1;
  cb_error_set(err, CB_ERR_PARSE, "expected a number, got '%s'", s);
  return 0;
}

/* Add or replace one claim. */
static cb_status put_claim(cb_calib_claims *c, const char *metric, double v, const char *path,
                           long line, cb_error *err) {
  int hb;
  if (!cb_calib_metric_key(metric, &hb))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "unknown metric key '%s' (known: %s)",
                       metric, known_keys);
  if (!(v > 0) || !isfinite(v))
    return cb_error_at(err, CB_ERR_RANGE, path, line, 0,
                       "key '%s': expected a positive number, got %g", metric, v);
  for (size_t i = 0; i < c->n; i++) {
    if (strcmp(c->items[i].metric, metric)) continue;
    if (path && c->items[i].line && line)
      return cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                         "key '%s' is claimed twice (first on line %ld)", metric, c->items[i].line);
    c->items[i].paper = v;
    c->items[i].line = line;
    return CB_OK;
  }
  if (c->n == CB_CALIB_MAX_CLAIMS)
    return cb_error_at(err, CB_ERR_CAPACITY, path, line, 0, "at most %d claims",
                       CB_CALIB_MAX_CLAIMS);
  cb_calib_claim *k = &c->items[c->n++];
  snprintf(k->metric, sizeof k->metric, "%s", metric);
  k->paper = v;
  k->line = line;
  return CB_OK;
}

cb_status cb_calib_claims_load(const char *path, cb_calib_claims *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  cb__cstat_node root;
  cb_status st = cb__cstat_yaml_load(path, CB_CALIB_MAX_FILE_BYTES, &root, err);
  if (st != CB_OK) return st;
  if (root.kind != CB__CSTAT_MAP) {
    st = cb_error_at(err, CB_ERR_PARSE, path, root.line, 0,
                     "expected a mapping with 'claims' (and optionally 'source'), got %s",
                     cb__cstat_node_what(&root));
    goto done;
  }
  for (size_t i = 0; i < root.len && st == CB_OK; i++) {
    const cb__cstat_node *k = &root.items[2 * i], *v = &root.items[2 * i + 1];
    if (!strcmp(k->value, "source")) {
      if (v->kind != CB__CSTAT_SCALAR)
        st = cb_error_at(err, CB_ERR_PARSE, path, v->line, 0, "key 'source': expected text, got %s",
                         cb__cstat_node_what(v));
      else
        snprintf(out->source, sizeof out->source, "%s", v->value);
    } else if (!strcmp(k->value, "claims")) {
      if (v->kind != CB__CSTAT_MAP) {
        st = cb_error_at(err, CB_ERR_PARSE, path, v->line, 0,
                         "key 'claims': expected a mapping {metric: value}, got %s",
                         cb__cstat_node_what(v));
        break;
      }
      for (size_t j = 0; j < v->len && st == CB_OK; j++) {
        const cb__cstat_node *mk = &v->items[2 * j], *mv = &v->items[2 * j + 1];
        double x;
        cb_error e;
        cb_error_clear(&e);
        if (mv->kind != CB__CSTAT_SCALAR || mv->quoted)
          st = cb_error_at(err, CB_ERR_PARSE, path, mv->line, 0,
                           "key 'claims.%s': expected a number, got %s%s%s", mk->value,
                           mv->kind == CB__CSTAT_SCALAR ? "'" : cb__cstat_node_what(mv),
                           mv->kind == CB__CSTAT_SCALAR ? mv->value : "",
                           mv->kind == CB__CSTAT_SCALAR ? "'" : "");
        else if (!claim_value(mk->value, mv->value, &x, &e))
          st = cb_error_at(err, e.code, path, mv->line, 0, "key 'claims.%s': %s", mk->value,
                           e.msg);
        else
          st = put_claim(out, mk->value, x, path, mk->line, err);
      }
    } else {
      st = cb_error_at(err, CB_ERR_PARSE, path, k->line, 0,
                       "unknown key '%s' (known: source, claims)", k->value);
    }
  }
  if (st == CB_OK && out->n == 0)
    st = cb_error_at(err, CB_ERR_INVALID, path, root.line, 0,
                     "no claims: give 'claims: {metric: value, ...}'");
done:
  cb__cstat_node_free(&root);
  return st;
}

cb_status cb_calib_claims_add(cb_calib_claims *c, const char *spec, cb_error *err) {
  const char *eq = strchr(spec, '=');
  double v;
  if (!eq || eq == spec)
    return cb_error_set(err, CB_ERR_PARSE, "--claim: expected METRIC=VALUE, got '%s'", spec);
  char metric[48];
  if ((size_t)(eq - spec) >= sizeof metric)
    return cb_error_set(err, CB_ERR_PARSE, "--claim: metric name too long in '%s'", spec);
  snprintf(metric, sizeof metric, "%.*s", (int)(eq - spec), spec);
  if (!claim_value(metric, eq + 1, &v, err)) {
    cb_error_wrap(err, "--claim '%s'", spec);
    return CB_ERR_PARSE; /* not wrap's value: that is CB_OK when err is NULL */
  }
  cb_status st = put_claim(c, metric, v, NULL, 0, err);
  if (st != CB_OK) cb_error_wrap(err, "--claim '%s'", spec);
  return st;
}

cb_status cb_calib_perf_compute(const cb_calib_claims *c, const char *dir, double margin,
                                cb_calib_perf_result *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  if (!(margin > 0 && margin <= 1))
    return cb_error_set(err, CB_ERR_RANGE, "margin must be in (0, 1], got %g", margin);
  if (!c->n) return cb_error_set(err, CB_ERR_INVALID, "no claims to compare");
  cb__perf_summary s;
  cb_status st = cb__perf_summary_load(dir, &s, err);
  if (st != CB_OK) return st;
  if (s.succeeded < 1) {
    st = cb_error_at(err, CB_ERR_INVALID, s.path, 0, 0,
                     "the run has no successful request (measured %ld, failed %ld): nothing to "
                     "calibrate against", s.measured, s.failed);
    cb__perf_summary_free(&s);
    return st;
  }
  snprintf(out->dir, sizeof out->dir, "%s", dir);
  snprintf(out->claims_source, sizeof out->claims_source, "%s", c->source);
  out->predicted = s.predicted;
  out->margin = margin;
  double logsum[2] = {0, 0};
  int count[2] = {0, 0};
  for (size_t i = 0; i < c->n; i++) {
    cb_calib_perf_row *r = &out->rows[out->n++];
    snprintf(r->metric, sizeof r->metric, "%s", c->items[i].metric);
    cb_calib_metric_key(r->metric, &r->higher_better);
    r->paper = c->items[i].paper;
    r->measured = cb__perf_summary_metric(&s, r->metric);
    if (isfinite(r->measured) && r->measured > 0) {
      r->factor = r->measured / r->paper;
      r->production = r->higher_better ? r->measured * margin : r->measured / margin;
      r->source = s.predicted ? CB_CALIB_FROM_SIMULATED : CB_CALIB_FROM_MEASURED;
      logsum[r->higher_better] += log(r->factor);
      count[r->higher_better]++;
    } else {
      r->measured = r->factor = NAN;
      r->source = CB_CALIB_FROM_DEFAULT;
    }
  }
  out->throughput_factor = count[1] ? exp(logsum[1] / count[1]) : NAN;
  out->latency_factor = count[0] ? exp(logsum[0] / count[0]) : NAN;
  for (size_t i = 0; i < out->n; i++) {
    cb_calib_perf_row *r = &out->rows[i];
    if (r->source != CB_CALIB_FROM_DEFAULT) continue;
    double f = r->higher_better ? out->throughput_factor : out->latency_factor;
    r->production = isfinite(f) ? (r->higher_better ? r->paper * f * margin : r->paper * f / margin)
                                : NAN;
  }
  cb__perf_summary_free(&s);
  return CB_OK;
}

void cb_calib_perf_write_json(const cb_calib_perf_result *r, cb_buf *out) {
  cb__jw w;
  cb__jw_begin_result(&w, out, "calibrate.perf");
  cb__jw_str(&w, "results", r->dir);
  cb__jw_bool(&w, "predicted", r->predicted);
  cb__jw_str(&w, "claims_source", r->claims_source[0] ? r->claims_source : NULL);
  cb__jw_num(&w, "margin", r->margin);
  cb__jw_num(&w, "throughput_factor", r->throughput_factor);
  cb__jw_num(&w, "latency_factor", r->latency_factor);
  cb__jw_arr(&w, "metrics");
  for (size_t i = 0; i < r->n; i++) {
    const cb_calib_perf_row *x = &r->rows[i];
    cb__jw_obj(&w, NULL);
    cb__jw_str(&w, "metric", x->metric);
    cb__jw_str(&w, "better", x->higher_better ? "higher" : "lower");
    cb__jw_num(&w, "paper", x->paper);
    cb__jw_num(&w, "measured", x->measured);
    cb__jw_num(&w, "factor", x->factor);
    cb__jw_num(&w, "production", x->production);
    cb__jw_str(&w, "source", x->source == CB_CALIB_FROM_DEFAULT ? "projected"
                             : cb_calib_source_name(x->source));
    cb__jw_end(&w, '}');
  }
  cb__jw_end(&w, ']');
  cb__jw_end(&w, '}');
  cb__jw_finish(&w);
}

static void fmt(char *o, size_t n, double v, const char *unit) {
  if (!isfinite(v)) snprintf(o, n, "-");
  else snprintf(o, n, "%.4g%s", v, unit);
}

void cb_calib_perf_format(const cb_calib_perf_result *r, cb_buf *out) {
  cb_buf_appendf(out, "calibrate perf: paper claims%s%s vs %s%s; margin %.0f%%\n\n",
                 r->claims_source[0] ? " of " : "", r->claims_source, r->dir,
                 r->predicted ? " (PREDICTED by sim run)" : " (measured)", 100 * (1 - r->margin));
  cb__table t;
  cb__table_init(&t, 6);
  const char *h[] = {"metric", "paper", "measured", "factor", "production", "from"};
  cb__table_row(&t, h);
  for (size_t i = 0; i < r->n; i++) {
    const cb_calib_perf_row *x = &r->rows[i];
    char a[32], b[32], c[32], d[32];
    fmt(a, sizeof a, x->paper, "");
    fmt(b, sizeof b, x->measured, "");
    fmt(c, sizeof c, x->factor, "x");
    fmt(d, sizeof d, x->production, "");
    const char *row[] = {x->metric, a, b, c, d,
                         x->source == CB_CALIB_FROM_DEFAULT ? "projected"
                                                            : cb_calib_source_name(x->source)};
    cb__table_row(&t, row);
  }
  cb__table_render(&t, "  ", out);
  cb__table_free(&t);
  cb_buf_appendf(out,
                 "\n  factor = measured / paper; production = measured %s margin (throughput x "
                 "%.2f, latency / %.2f);\n  an unmeasured claim is projected with its kind's mean "
                 "factor (throughput %.3gx, latency %.3gx)\n",
                 "with the", r->margin, r->margin, r->throughput_factor, r->latency_factor);
}
