/*
 * axis.c - tick positions for chart axes: "nice" numbers (1, 2, 5 times a power of
 * ten, Heckbert's "Nice numbers for graph labels", Graphics Gems 1990) on linear axes
 * and powers of ten on log axes.
 *
 * The contract is that an axis always comes out usable: a run with one request, with
 * every value equal, with nothing but zeros, with NaN statistics or with values near
 * the limits of a double still gets lo < hi, finite, with 2..CB__REP_MAX_TICKS
 * distinct ticks. Degenerate ranges are widened, never reported as errors.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "report_internal.h"

/* Beyond this, differences of ends overflow or ticks stop being distinct. */
#define AXIS_LIMIT 1e300

double cb__rep_nice(double x, int round) {
  if (!(x > 0) || !isfinite(x)) return 1;
  double e = floor(log10(x));
  double p = pow(10, e);
  double f = x / p, nf;
  if (round) nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
  else nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  double r = nf * p;
  return isfinite(r) && r > 0 ? r : x;
}

static double clamp(double v) { return v > AXIS_LIMIT ? AXIS_LIMIT : v < -AXIS_LIMIT ? -AXIS_LIMIT : v; }

void cb__rep_axis_ticks(double lo, double hi, int target, cb__rep_ticks *out) {
  memset(out, 0, sizeof *out);
  if (target < 2) target = 2;
  if (target > 20) target = 20;
  if (isnan(lo) && isnan(hi)) lo = 0, hi = 1;
  else if (isnan(lo)) lo = hi;
  else if (isnan(hi)) hi = lo;
  lo = clamp(lo);
  hi = clamp(hi);
  if (lo > hi) {
    double t = lo;
    lo = hi;
    hi = t;
  }
  double mag = fmax(fabs(lo), fabs(hi));
  if (lo == hi) {
    if (lo == 0) {
      hi = 1;
    } else {
      lo -= mag * 0.1;
      hi += mag * 0.1;
    }
  } else if (hi - lo < mag * 1e-9) {
    /* too narrow for the double's precision to give distinct ticks */
    double c = lo / 2 + hi / 2;
    lo = c - mag * 1e-6;
    hi = c + mag * 1e-6;
  }
  double range = cb__rep_nice(hi - lo, 0);
  double step = cb__rep_nice(range / target, 1);
  double nlo, nhi;
  size_t n;
  for (;;) {
    nlo = floor(lo / step) * step;
    nhi = ceil(hi / step) * step;
    double count = (nhi - nlo) / step;
    if (count + 1 <= CB__REP_MAX_TICKS) {
      n = (size_t)llround(count) + 1;
      break;
    }
    step = cb__rep_nice(step * 2, 0);
  }
  if (n < 2) {
    n = 2;
    nhi = nlo + step;
  }
  for (size_t i = 0; i < n; i++) {
    double v = nlo + (double)i * step;
    if (fabs(v) < step * 1e-9) v = 0; /* no "-0" or 1e-17 for zero */
    out->v[i] = v;
  }
  out->lo = nlo;
  out->hi = out->v[n - 1] > nhi ? out->v[n - 1] : nhi;
  out->step = step;
  out->n = n;
  double d = -floor(log10(step) + 1e-9);
  out->decimals = d > 0 ? (int)(d > 15 ? 15 : d) : 0;
}

void cb__rep_axis_log_ticks(double lo, double hi, cb__rep_ticks *out) {
  memset(out, 0, sizeof *out);
  out->log = 1;
  int lo_ok = lo > 0 && isfinite(lo), hi_ok = hi > 0 && isfinite(hi);
  if (!lo_ok && !hi_ok) lo = 1, hi = 10;
  else if (!lo_ok) lo = hi / 10;
  else if (!hi_ok) hi = lo * 10;
  if (lo > hi) {
    double t = lo;
    lo = hi;
    hi = t;
  }
  if (lo < 1e-300) lo = 1e-300;
  if (hi > AXIS_LIMIT) hi = AXIS_LIMIT;
  if (!(lo > 0)) lo = 1e-300;
  int a = (int)floor(log10(lo)), b = (int)ceil(log10(hi));
  if (b <= a) b = a + 1;
  int decades = b - a;
  size_t n = 0;
  if (decades <= 3) {
    static const double mult[] = {1, 2, 5};
    for (int e = a; e < b; e++)
      for (size_t k = 0; k < 3; k++) out->v[n++] = mult[k] * pow(10, e);
    out->v[n++] = pow(10, b);
  } else {
    int every = (decades + CB__REP_MAX_TICKS - 2) / (CB__REP_MAX_TICKS - 1);
    if (every < 1) every = 1;
    b = a + ((decades + every - 1) / every) * every;
    for (int e = a; e <= b && n < CB__REP_MAX_TICKS; e += every) {
      double v = pow(10, e);
      if (!isfinite(v) || v > DBL_MAX / 10) break;
      out->v[n++] = v;
    }
    if (n < 2) out->v[n++] = out->v[0] * 10;
  }
  out->n = n;
  out->lo = out->v[0];
  out->hi = out->v[n - 1];
  out->decimals = a < 0 ? -a : 0;
  if (out->decimals > 15) out->decimals = 15;
}
