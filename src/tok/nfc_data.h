/*
 * nfc_data.h - the Unicode tables nfc.c needs (generated into nfc_data.c by
 * scripts/gen_nfc_data.py): canonical combining classes, one-level canonical decompositions,
 * primary compositions, one-level compatibility mappings (NFKD, NFKC), and in one table
 * the characters that can change under NFC and the combining marks.
 */
#ifndef CALIBENCH_TOK_NFC_DATA_H
#define CALIBENCH_TOK_NFC_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "cp_range.h"

typedef struct cb__nfc_decomp {
  uint32_t cp, a, b; /* cp -> a b (b == 0: a singleton) */
} cb__nfc_decomp;    /* sorted by cp */

typedef struct cb__nfc_comp {
  uint32_t a, b, cp; /* a b -> cp */
} cb__nfc_comp;      /* sorted by (a, b) */

typedef struct cb__nfc_compat {
  uint32_t cp;       /* has a compatibility mapping (UnicodeData's "<tag> ..."): */
  uint16_t off, len; /* cb__nfc_compat_cps[off .. off + len), one level */
} cb__nfc_compat;    /* sorted by cp */

extern const cb__cp_range cb__nfc_ccc[];
extern const size_t cb__nfc_ccc_len;
extern const cb__nfc_decomp cb__nfc_decomps[];
extern const size_t cb__nfc_decomps_len;
extern const cb__nfc_comp cb__nfc_comps[];
extern const size_t cb__nfc_comps_len;
extern const uint32_t cb__nfc_compat_cps[];
extern const cb__nfc_compat cb__nfc_compats[];
extern const size_t cb__nfc_compats_len;
/* cb__nfc_flags' values: bits of these */
enum {
  CB__NFC_UNSAFE = 1, /* NFC can change text holding it (a combining mark, NFC_QC No or Maybe) */
  CB__NFC_MARK = 2    /* General_Category M (Mn, Mc, Me) */
};
extern const cb__cp_range cb__nfc_flags[];
extern const size_t cb__nfc_flags_len;

#endif
