/*
 * duration.h - the one duration syntax every flag and file accepts (docs/durations.md).
 *
 *   100ns  250us  500ms  1.5s  2m (or 2min)  1h      spaces between number and unit
 *                                                    are allowed ("800 ms")
 *
 * A bare number is in the unit the value's name or documentation states, which the
 * caller passes as `bare_unit_ns`: SLO bounds and gate thresholds are in ms, a run's
 * length, timeouts and intervals in s, fields named *_us in us. Callers state for
 * themselves whether 0 is allowed.
 */
#ifndef CALIBENCH_DURATION_H
#define CALIBENCH_DURATION_H

#include <stdint.h>

#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `bare_unit_ns` for a value with no bare meaning: a number without a unit is refused. */
#define CB_DURATION_UNIT_REQUIRED UINT64_C(0)

/*
 * Parse `s` into nanoseconds (rounded to the nearest). The number is decimal digits
 * with an optional fraction and exponent ("1.5s", "2e3ms"); no sign, hex, inf or nan.
 * CB_ERR_PARSE ("expected a duration such as 500ms, 2s or 1m, got 'abc'") or
 * CB_ERR_RANGE (negative, or over ~584 years). The message names neither flag nor
 * key: the caller adds where the value came from.
 */
cb_status cb_duration_parse(const char *s, uint64_t bare_unit_ns, uint64_t *out_ns,
                            cb_error *err);

#ifdef __cplusplus
}
#endif
#endif
