/*
 * parse.c - the small value syntaxes the workload's users type: a run's length,
 * --warmup (a count or a duration), an SLO bound and --shard i/N. Shared by the CLI and
 * the scenario loader so both accept exactly the same spellings; every duration goes
 * through cb_duration_parse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/clock.h"
#include "calibench/duration.h"
#include "calibench/workload.h"

cb_status cb_workload_parse_run_duration(const char *s, uint64_t *out_ns, cb_error *err) {
  cb_status st = cb_duration_parse(s, CB_NS_PER_S, out_ns, err);
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
  cb_status st = cb_duration_parse(s, CB_DURATION_UNIT_REQUIRED, ns, err);
  if (st != CB_OK)
    return cb_error_set(err, st,
                        "expected a warm-up as a request count (100) or a duration (30s), "
                        "got '%s'",
                        s);
  *requests = 0;
  return CB_OK;
}

cb_status cb_workload_parse_slo_bound(const char *s, uint64_t *out_ns, cb_error *err) {
  uint64_t ns;
  cb_status st = cb_duration_parse(s, CB_NS_PER_MS, &ns, err);
  if (st != CB_OK) return st;
  /* 0 would be a bound no request can meet: a typo, not a target */
  if (ns == 0) return cb_error_set(err, CB_ERR_RANGE, "an SLO bound must be > 0, got '%s'", s);
  *out_ns = ns;
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
