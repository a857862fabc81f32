/*
 * parse.c - the small value syntaxes the workload's users type: durations with units,
 * --warmup (a count or a duration), --slo lists and --shard i/N. Shared by the CLI and
 * the scenario loader so both accept exactly the same spellings.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/workload.h"

static const struct {
  const char *suffix;
  double ns;
} units[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
             {"min", 60e9}, {"m", 60e9}, {"h", 3600e9}};

cb_status cb_workload_parse_duration(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns,
                                     cb_error *err) {
  if (!s || !*s) return cb_error_set(err, CB_ERR_PARSE, "expected a duration, got ''");
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || errno == ERANGE || !isfinite(x))
    return cb_error_set(err, CB_ERR_PARSE, "expected a duration such as 500ms or 2.5s, got '%s'",
                        s);
  double unit = 0;
  if (*end == '\0') {
    if (!bare_unit_ns)
      return cb_error_set(err, CB_ERR_PARSE,
                          "expected a duration with a unit (ns, us, ms, s, m, h), got '%s'", s);
    unit = (double)bare_unit_ns;
  } else {
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(end, units[i].suffix) == 0) unit = units[i].ns;
    if (unit == 0)
      return cb_error_set(err, CB_ERR_PARSE,
                          "unknown unit '%s' in '%s' (known: ns, us, ms, s, m, min, h)", end, s);
  }
  double ns = x * unit;
  if (!(ns >= 0.0) || ns >= 1.8e19)
    return cb_error_set(err, CB_ERR_RANGE, "duration '%s' is out of range (0 .. ~584 years)", s);
  *out_ns = (uint64_t)(ns + 0.5);
  return CB_OK;
}

cb_status cb_workload_parse_run_duration(const char *s, uint64_t *out_ns, cb_error *err) {
  cb_status st = cb_workload_parse_duration(s, UINT64_C(1000000000), out_ns, err);
  if (st == CB_OK && *out_ns == 0)
    return cb_error_set(err, CB_ERR_RANGE,
                        "a run's duration must be > 0, got '%s' (it is not 'no limit': to "
                        "stop by count, leave the duration out)", s);
  return st;
}

cb_status cb_workload_parse_warmup(const char *s, uint64_t *requests, uint64_t *ns,
                                   cb_error *err) {
  if (!s || !*s) return cb_error_set(err, CB_ERR_PARSE, "expected a warm-up, got ''");
  size_t i = 0;
  while (s[i] >= '0' && s[i] <= '9') i++;
  if (i > 0 && s[i] == '\0') {
    errno = 0;
    unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE) return cb_error_set(err, CB_ERR_RANGE, "warm-up '%s' is too large", s);
    *requests = (uint64_t)v;
    *ns = 0;
    return CB_OK;
  }
  cb_status st = cb_workload_parse_duration(s, 0, ns, err);
  if (st != CB_OK)
    return cb_error_set(err, st,
                        "expected a warm-up as a request count (100) or a duration (30s), "
                        "got '%s'",
                        s);
  *requests = 0;
  return CB_OK;
}

cb_status cb_workload_parse_slo(const char *s, cb_workload_slo *out, cb_error *err) {
  if (!s) return cb_error_set(err, CB_ERR_PARSE, "expected SLOs, got nothing");
  cb_workload_slo v = *out;
  const char *p = s;
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    char item[96];
    if (n == 0 || n >= sizeof item)
      return cb_error_set(err, CB_ERR_PARSE, "SLO list '%s': empty or too long item", s);
    memcpy(item, p, n);
    item[n] = '\0';
    char *eq = strchr(item, '=');
    if (!eq)
      return cb_error_set(err, CB_ERR_PARSE, "SLO '%s': expected KEY=DURATION (e.g. ttft=500ms)",
                          item);
    *eq = '\0';
    uint64_t *dst = NULL;
    if (strcmp(item, "ttft") == 0) dst = &v.ttft_ns;
    else if (strcmp(item, "tpot") == 0) dst = &v.tpot_ns;
    else if (strcmp(item, "itl") == 0) dst = &v.itl_ns;
    else if (strcmp(item, "e2e") == 0 || strcmp(item, "e2el") == 0) dst = &v.e2e_ns;
    if (!dst)
      return cb_error_set(err, CB_ERR_PARSE, "unknown SLO '%s' (known: ttft, tpot, itl, e2e)",
                          item);
    cb_status st = cb_workload_parse_duration(eq + 1, 0, dst, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "SLO '%s'", item);
      return st;
    }
    if (*dst == 0) return cb_error_set(err, CB_ERR_RANGE, "SLO '%s' must be > 0", item);
    p += n;
    if (*p == ',') p++;
  }
  *out = v;
  return CB_OK;
}

cb_status cb_workload_parse_shard(const char *s, uint32_t *index, uint32_t *count,
                                  cb_error *err) {
  unsigned long i = 0, n = 0;
  char *end;
  if (!s || !(*s >= '0' && *s <= '9')) goto bad;
  errno = 0;
  i = strtoul(s, &end, 10);
  if (*end != '/' || !(end[1] >= '0' && end[1] <= '9') || errno) goto bad;
  n = strtoul(end + 1, &end, 10);
  if (*end != '\0' || errno) goto bad;
  if (n < 1 || n > 65535 || i >= n)
    return cb_error_set(err, CB_ERR_RANGE, "shard '%s': need 0 <= i < N <= 65535", s);
  *index = (uint32_t)i;
  *count = (uint32_t)n;
  return CB_OK;
bad:
  return cb_error_set(err, CB_ERR_PARSE, "expected a shard as i/N (e.g. 0/4), got '%s'",
                      s ? s : "");
}
