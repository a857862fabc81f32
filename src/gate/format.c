/*
 * format.c - numbers for people in the gate's outputs: values in their unit with four
 * significant digits, changes with a sign, p-values.
 */
#include <math.h>
#include <stdio.h>

#include "gate_internal.h"

static void sig(double v, char *out, size_t n) {
  double a = fabs(v);
  if (a >= 10000 || a == 0) snprintf(out, n, "%.0f", v);
  else snprintf(out, n, "%.4g", v);
}

void cb__gate_fmt_value(const cb_store_metric *m, double v, char *out, size_t n) {
  if (!isfinite(v)) {
    snprintf(out, n, "-");
    return;
  }
  char num[48];
  switch (m->unit) {
    case CB_UNIT_MS: sig(v, num, sizeof num); snprintf(out, n, "%s ms", num); break;
    case CB_UNIT_PER_S: sig(v, num, sizeof num); snprintf(out, n, "%s /s", num); break;
    case CB_UNIT_FRACTION: sig(100 * v, num, sizeof num); snprintf(out, n, "%s%%", num); break;
    default: sig(v, num, sizeof num); snprintf(out, n, "%s", num); break;
  }
}

void cb__gate_fmt_change(const cb_store_metric *m, double v, char *out, size_t n) {
  if (!isfinite(v)) {
    snprintf(out, n, "-");
    return;
  }
  char num[48];
  if (m->unit == CB_UNIT_FRACTION) {
    sig(100 * v, num, sizeof num);
    snprintf(out, n, "%s%s pp", v >= 0 ? "+" : "", num);
    return;
  }
  sig(v, num, sizeof num);
  const char *unit = m->unit == CB_UNIT_MS ? " ms" : m->unit == CB_UNIT_PER_S ? " /s" : "";
  snprintf(out, n, "%s%s%s", v >= 0 ? "+" : "", num, unit);
}

void cb__gate_fmt_pct(double frac, char *out, size_t n) {
  if (!isfinite(frac)) snprintf(out, n, "-");
  else snprintf(out, n, "%+.1f%%", 100 * frac);
}

void cb__gate_fmt_p(double p, char *out, size_t n) {
  if (!isfinite(p)) snprintf(out, n, "-");
  else if (p < 1e-12) snprintf(out, n, "<1e-12");
  else if (p < 0.001) snprintf(out, n, "%.1e", p);
  else snprintf(out, n, "%.4f", p);
}
