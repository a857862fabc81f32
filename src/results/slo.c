/*
 * slo.c - metric names and the --slo specification "ttft=500ms,tpot=50ms@p95" (or
 * "e2e<=2s": METRIC<=BOUND is the same as METRIC=BOUND).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/results.h"
#include "calibench/workload.h"

static const char *const metric_names[CB_METRIC_COUNT_] = {
    "ttft", "tpot", "itl", "itl_token", "e2e", "e2e_sched", "ttft_sched", "lag"};

const char *cb_metric_name(cb_metric m) {
  return (unsigned)m < CB_METRIC_COUNT_ ? metric_names[m] : "unknown";
}

cb_status cb_metric_parse(const char *name, cb_metric *out, cb_error *err) {
  for (int m = 0; m < CB_METRIC_COUNT_; m++)
    if (!strcmp(name, metric_names[m])) {
      *out = (cb_metric)m;
      return CB_OK;
    }
  return cb_error_set(err, CB_ERR_NOT_FOUND,
                      "unknown metric '%s' (known: ttft, tpot, itl, itl_token, e2e, e2e_sched, "
                      "ttft_sched, lag)", name);
}

cb_status cb_slo_parse(const char *spec, cb_slo *out, size_t *n, cb_error *err) {
  char buf[512];
  if ((size_t)snprintf(buf, sizeof buf, "%s", spec) >= sizeof buf)
    return cb_error_set(err, CB_ERR_INVALID, "--slo: longer than %zu characters", sizeof buf - 1);
  *n = 0;
  char *save = NULL;
  for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    if (*n == CB_MAX_SLOS)
      return cb_error_set(err, CB_ERR_INVALID, "--slo: at most %d SLOs", CB_MAX_SLOS);
    char *eq = strchr(item, '=');
    if (!eq)
      return cb_error_set(err, CB_ERR_INVALID,
                          "--slo '%s': expected METRIC=BOUND, e.g. ttft=500ms", item);
    *eq = '\0';
    if (eq > item && eq[-1] == '<') eq[-1] = '\0'; /* "e2e<=2s" reads as "e2e=2s" */
    cb_slo *slo = &out[*n];
    slo->percentile = 99;
    cb_status st = cb_metric_parse(item, &slo->metric, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "--slo");
      return st; /* not wrap's value: that is CB_OK when err is NULL */
    }
    char *at = strchr(eq + 1, '@');
    if (at) {
      *at = '\0';
      char *end;
      double p = strtod(at + 1 + (at[1] == 'p'), &end);
      if (*end || !(p > 0 && p < 100))
        return cb_error_set(err, CB_ERR_INVALID,
                            "--slo %s: '@%s' is not a percentile such as @p99 or @p99.9", item,
                            at + 1);
      slo->percentile = p;
    }
    uint64_t bound_ns;
    st = cb_workload_parse_slo_bound(eq + 1, &bound_ns, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "--slo: %s=%s", item, eq + 1);
      return st;
    }
    slo->bound_ns = (double)bound_ns;
    (*n)++;
  }
  if (*n == 0) return cb_error_set(err, CB_ERR_INVALID, "--slo: no SLO given");
  return CB_OK;
}
