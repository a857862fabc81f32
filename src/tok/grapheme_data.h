/*
 * grapheme_data.h - the Unicode properties grapheme.c needs (generated into
 * grapheme_data.c by scripts/gen_grapheme_data.py): Grapheme_Cluster_Break and
 * Extended_Pictographic.
 */
#ifndef CALIBENCH_TOK_GRAPHEME_DATA_H
#define CALIBENCH_TOK_GRAPHEME_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "cp_range.h"

/* Grapheme_Cluster_Break values, in the generator's VALUES order. */
enum {
  CB__GCB_OTHER, CB__GCB_CR, CB__GCB_LF, CB__GCB_CONTROL, CB__GCB_EXTEND, CB__GCB_ZWJ,
  CB__GCB_RI, CB__GCB_PREPEND, CB__GCB_SPACINGMARK, CB__GCB_L, CB__GCB_V, CB__GCB_T,
  CB__GCB_LV, CB__GCB_LVT
};
#define CB__GCB_EXT_PICT 16 /* or-ed in: Extended_Pictographic */

/* Values CB__GCB_* | CB__GCB_EXT_PICT; code points in no range are Other. */
extern const cb__cp_range cb__gcb_ranges[];
extern const size_t cb__gcb_ranges_len;

#endif
