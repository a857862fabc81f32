/*
 * args.c - option value parsing shared by the subcommands.
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "calibench/calib.h"
#include "calibench/clock.h"
#include "calibench/duration.h"

int cli_parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) {
    fprintf(stderr, "calibench: %s: expected an integer in [%lld, %lld], got '%s'\n", opt, lo,
            hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi) {
    fprintf(stderr, "calibench: %s: expected a number in [%g, %g], got '%s'\n", opt, lo, hi, s);
    return -1;
  }
  *out = v;
  return 0;
}

int cli_parse_price(const char *opt, const char *s, double *out) {
  if (cb_calib_price_parse(s, out)) return 0;
  fprintf(stderr,
          "calibench: %s: expected a price per 1,000 tokens, a number in [0, %g] (as calibrate "
          "cost's price_input_per_1k), got '%s'\n",
          opt, CB_CALIB_PRICE_MAX, s);
  return -1;
}

int cli_parse_duration(const char *opt, const char *s, int zero_ok, uint64_t min_ns,
                       uint64_t *out_ns) {
  uint64_t ns;
  cb_error err;
  cb_error_clear(&err);
  if (cb_duration_parse(s, CB_NS_PER_S, &ns, &err) != CB_OK) {
    fprintf(stderr, "calibench: %s: %s\n", opt, err.msg);
    return -1;
  }
  if (ns == 0 ? !zero_ok : ns < min_ns) {
    fprintf(stderr, "calibench: %s: expected %sat least %gms, got '%s'\n", opt,
            zero_ok ? "0 or " : "", (double)min_ns / 1e6, s);
    return -1;
  }
  *out_ns = ns;
  return 0;
}

int cli_parse_bytes(const char *opt, const char *s, size_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned long long mult = 1;
  if (end != s && (*end == 'K' || *end == 'k')) mult = 1ULL << 10, end++;
  else if (end != s && (*end == 'M' || *end == 'm')) mult = 1ULL << 20, end++;
  else if (end != s && (*end == 'G' || *end == 'g')) mult = 1ULL << 30, end++;
  if (end == s || *end || errno || s[0] == '-' || v > (1ULL << 40) / mult) {
    fprintf(stderr, "calibench: %s: expected a size such as 1048576, 512K or 4M, got '%s'\n",
            opt, s);
    return -1;
  }
  *out = (size_t)(v * mult);
  return 0;
}
