/*
 * cps.h - a growing array of Unicode code points, for the normalizers that work on
 * code points rather than UTF-8 bytes (tok's NFC, eval's SQuAD answer normalizer).
 */
#ifndef CALIBENCH_UTIL_CPS_H
#define CALIBENCH_UTIL_CPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cb__cps {
  uint32_t *v;
  size_t n, cap;
} cb__cps; /* {0} is empty */

/* Append cp, growing the array (doubling) as needed. */
void cb__cps_push(cb__cps *c, uint32_t cp);
/* Release the array and leave c empty. */
void cb__cps_free(cb__cps *c);

#endif
