/*
 * gate_internal.h - helpers the gate's files share: formatting a metric's value for
 * people in its unit.
 */
#ifndef CALIBENCH_GATE_INTERNAL_H
#define CALIBENCH_GATE_INTERNAL_H

#include <stddef.h>

#include "calibench/gate.h"

/* "812.3 ms", "17193 /s", "1.2%" (fractions), "300"; "-" for NaN. */
void cb__gate_fmt_value(const cb_store_metric *m, double v, char *out, size_t n);
/* A change: "+12.3 ms", "-4.1%" (fractions in percentage points: "+1.2 pp"). */
void cb__gate_fmt_change(const cb_store_metric *m, double v, char *out, size_t n);
/* A relative change: "+12.3%"; "-" for NaN. */
void cb__gate_fmt_pct(double frac, char *out, size_t n);
/* A p-value: "0.0004", "<1e-12", "-" for NaN. */
void cb__gate_fmt_p(double p, char *out, size_t n);

#endif
