/*
 * fmt.c - numbers for people: three significant digits, a unit chosen for the size
 * (812 µs, 12.3 ms, 1.23 s; 1.2k, 3.45M), percentages that never round up to 100%,
 * deltas that say whether the change is better or worse. NaN is "-" and infinity
 * "∞" everywhere, so a report of a run with nothing to measure still reads.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_internal.h"

/* x >= 0 with three significant digits, trailing zeros after the point trimmed. */
static void sig3(double x, char *out, size_t n) {
  if (x >= 99.95) snprintf(out, n, "%.0f", x);
  else if (x >= 9.995) snprintf(out, n, "%.1f", x);
  else if (x >= 0.9995 || x == 0) snprintf(out, n, "%.2f", x);
  else snprintf(out, n, "%.3g", x);
  if (strchr(out, '.') && !strchr(out, 'e')) {
    size_t len = strlen(out);
    while (len && out[len - 1] == '0') out[--len] = '\0';
    if (len && out[len - 1] == '.') out[--len] = '\0';
  }
}

static int not_number(double v, char *out, size_t n) {
  if (isnan(v)) {
    snprintf(out, n, "-");
    return 1;
  }
  if (isinf(v)) {
    snprintf(out, n, v > 0 ? "\xE2\x88\x9E" : "-\xE2\x88\x9E");
    return 1;
  }
  return 0;
}

char *cb__rep_fmt_ms(double ms, char *out, size_t n) {
  if (not_number(ms, out, n)) return out;
  const char *sign = ms < 0 ? "-" : "";
  double a = fabs(ms);
  char num[32];
  if (a == 0) {
    snprintf(out, n, "0 ms");
  } else if (a * 1000 < 999.5) {
    sig3(a * 1000, num, sizeof num);
    snprintf(out, n, "%s%s \xC2\xB5s", sign, num);
  } else if (a < 999.5) {
    sig3(a, num, sizeof num);
    snprintf(out, n, "%s%s ms", sign, num);
  } else if (a < 99950) {
    sig3(a / 1000, num, sizeof num);
    snprintf(out, n, "%s%s s", sign, num);
  } else {
    snprintf(out, n, "%s%.0f s", sign, a / 1000);
  }
  return out;
}

char *cb__rep_fmt_si(double v, char *out, size_t n) {
  if (not_number(v, out, n)) return out;
  static const char *const suffix[] = {"", "k", "M", "G", "T", "P"};
  const char *sign = v < 0 ? "-" : "";
  double a = fabs(v);
  size_t k = 0;
  while (a >= 999.5 && k + 1 < sizeof suffix / sizeof suffix[0]) {
    a /= 1000;
    k++;
  }
  char num[48];
  if (k == 0 && a == floor(a) && a < 1000) snprintf(num, sizeof num, "%.0f", a);
  else if (a >= 1e6) snprintf(num, sizeof num, "%.3g", a);
  else sig3(a, num, sizeof num);
  snprintf(out, n, "%s%s%s", sign, num, suffix[k]);
  return out;
}

char *cb__rep_fmt_rate(double v, const char *unit, char *out, size_t n) {
  char num[48];
  cb__rep_fmt_si(v, num, sizeof num);
  if (isnan(v)) snprintf(out, n, "-");
  else snprintf(out, n, "%s %s", num, unit);
  return out;
}

char *cb__rep_fmt_pct(double fraction, char *out, size_t n) {
  if (not_number(fraction, out, n)) return out;
  double p = fraction * 100;
  if (fraction < 1 && p >= 99.95) {
    double t = floor(p * 100) / 100; /* truncate: 99.999% is not 100% */
    if (t >= 100) snprintf(out, n, ">99.99%%");
    else snprintf(out, n, "%.2f%%", t);
    return out;
  }
  if (fraction > 0 && p < 0.05) {
    snprintf(out, n, "<0.1%%");
    return out;
  }
  char num[48];
  snprintf(num, sizeof num, "%.1f", p);
  size_t len = strlen(num);
  if (len > 2 && !strcmp(num + len - 2, ".0")) num[len - 2] = '\0';
  snprintf(out, n, "%s%%", num);
  return out;
}

char *cb__rep_fmt_count(size_t v, char *out, size_t n) {
  char digits[32];
  snprintf(digits, sizeof digits, "%zu", v);
  size_t len = strlen(digits), o = 0;
  char tmp[48];
  for (size_t i = 0; i < len; i++) {
    if (i && (len - i) % 3 == 0) tmp[o++] = ',';
    tmp[o++] = digits[i];
  }
  tmp[o] = '\0';
  snprintf(out, n, "%s", tmp);
  return out;
}

char *cb__rep_fmt_factor(double v, char *out, size_t n) {
  if (not_number(v, out, n)) return out;
  snprintf(out, n, v >= 100 ? "%.0fx" : v >= 10 ? "%.1fx" : "%.2fx", v);
  return out;
}

char *cb__rep_fmt_fixed(double v, int decimals, char *out, size_t n) {
  if (not_number(v, out, n)) return out;
  snprintf(out, n, "%.*f", decimals, v);
  return out;
}

char *cb__rep_fmt_unit(double v, const char *unit, char *out, size_t n) {
  if (!strcmp(unit, "ms")) return cb__rep_fmt_ms(v, out, n);
  if (!strcmp(unit, "fraction")) return cb__rep_fmt_pct(v, out, n);
  if (!strcmp(unit, "/s")) return cb__rep_fmt_rate(v, "/s", out, n);
  return cb__rep_fmt_si(v, out, n);
}

char *cb__rep_fmt_delta(double base, double v, int higher_better, cb__rep_tone *tone, char *out,
                        size_t n) {
  *tone = CB__REP_TONE_NONE;
  if (!isfinite(base) || !isfinite(v)) {
    snprintf(out, n, "-");
    return out;
  }
  if (base == 0) {
    snprintf(out, n, v == 0 ? "+0%%" : "-");
    return out;
  }
  double rel = (v - base) / fabs(base);
  if (fabs(rel) < 0.01) {
    snprintf(out, n, "%+.1f%%", 100 * rel);
    return out;
  }
  int better = higher_better ? rel > 0 : rel < 0;
  *tone = better ? CB__REP_TONE_GOOD : CB__REP_TONE_BAD;
  snprintf(out, n, "%+.1f%% %s", 100 * rel, better ? "better" : "worse");
  return out;
}
