/*
 * duration.c - the one duration parser (include/calibench/duration.h): the CLI, the
 * scenario, gate-policy and SLO readers all come here so that they accept exactly the
 * same spellings.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/duration.h"

static const struct {
  const char *suffix;
  double ns;
} units[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
             {"min", 60e9}, {"m", 60e9}, {"h", 3600e9}};

#define EXAMPLES "such as 500ms, 2s or 1m"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The length of the decimal number at the start of s (digits, an optional fraction,
 * an optional exponent), 0 when there is none. strtod alone would also take a sign,
 * leading spaces, hex, "inf" and "nan". */
static size_t number_len(const char *s) {
  size_t i = 0, digits = 0;
  while (is_digit(s[i])) i++, digits++;
  if (s[i] == '.') {
    i++;
    while (is_digit(s[i])) i++, digits++;
  }
  if (!digits) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    size_t j = i + 1;
    if (s[j] == '+' || s[j] == '-') j++;
    if (is_digit(s[j])) {
      while (is_digit(s[j])) j++;
      i = j;
    }
  }
  return i;
}

cb_status cb_duration_parse(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns,
                            cb_error *err) {
  if (!s || !*s) return cb_error_set(err, CB_ERR_PARSE, "expected a duration " EXAMPLES ", got ''");
  if (*s == '-' && number_len(s + 1))
    return cb_error_set(err, CB_ERR_RANGE, "a duration must be >= 0, got '%s'", s);
  size_t n = number_len(s);
  if (!n) return cb_error_set(err, CB_ERR_PARSE, "expected a duration " EXAMPLES ", got '%s'", s);
  const char *unit_s = s + n;
  while (*unit_s == ' ') unit_s++;
  double unit = 0;
  if (*unit_s == '\0') {
    if (unit_s != s + n)
      return cb_error_set(err, CB_ERR_PARSE, "expected a duration " EXAMPLES ", got '%s'", s);
    if (bare_unit_ns == CB_DURATION_UNIT_REQUIRED)
      return cb_error_set(err, CB_ERR_PARSE,
                          "expected a duration with a unit (ns, us, ms, s, m, h), got '%s'", s);
    unit = (double)bare_unit_ns;
  } else {
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
      if (strcmp(unit_s, units[i].suffix) == 0) unit = units[i].ns;
    if (unit == 0)
      return cb_error_set(err, CB_ERR_PARSE,
                          "expected a duration " EXAMPLES ", got '%s' (unknown unit '%s'; known: "
                          "ns, us, ms, s, m, min, h)", s, unit_s);
  }
  errno = 0;
  double x = strtod(s, NULL); /* the validated prefix: stops where number_len did */
  double ns = x * unit;
  if (errno == ERANGE && x != 0.0) ns = INFINITY;
  if (!(ns < 1.8e19))
    return cb_error_set(err, CB_ERR_RANGE, "duration '%s' is out of range (0 .. ~584 years)", s);
  *out_ns = (uint64_t)(ns + 0.5);
  return CB_OK;
}
