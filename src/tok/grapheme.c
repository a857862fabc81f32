/*
 * grapheme.c - extended grapheme clusters (UAX #29, "Grapheme Cluster Boundary
 * Rules"), for the Precompiled normalizer, which Hugging Face tokenizers applies one
 * cluster at a time (the unicode-segmentation crate's graphemes(true)).
 *
 * Rules GB3-GB13 over Grapheme_Cluster_Break and Extended_Pictographic
 * (grapheme_data.c): CR LF stays together; controls stand alone; Hangul syllable
 * sequences join; Extend, ZWJ and SpacingMark join what precedes them, Prepend what
 * follows; an emoji ZWJ emoji sequence joins; regional indicators pair up. The tables
 * are Unicode 15.0's (Debian 12's UCD); GB9c (Indic conjuncts, 15.1) needs a property
 * that UCD lacks and is not applied (docs/tokenizers.md says why that does not change
 * what Precompiled gives).
 */
#include "grapheme_data.h"
#include "tok_internal.h"

static uint32_t gcb(uint32_t cp) {
  return cb__cp_range_value(cb__gcb_ranges, cb__gcb_ranges_len, cp);
}

static int is_control(uint32_t v) {
  return v == CB__GCB_CONTROL || v == CB__GCB_CR || v == CB__GCB_LF;
}

/* 1 when there is no boundary between a character of class `a` and one of `b`;
 * `pict_zwj`: the text before b ends in ExtPict Extend* ZWJ (GB11); `ri_odd`: an odd
 * number of regional indicators runs up to b (GB12, GB13). */
static int joins(uint32_t a, uint32_t b, int pict_zwj, int ri_odd) {
  uint32_t pa = a & ~(uint32_t)CB__GCB_EXT_PICT, pb = b & ~(uint32_t)CB__GCB_EXT_PICT;
  /* GB3: CR x LF; GB4, GB5: breaks around controls */
  if (pa == CB__GCB_CR && pb == CB__GCB_LF) return 1;
  if (is_control(pa) || is_control(pb)) return 0;
  /* GB6-GB8: Hangul syllable sequences */
  if (pa == CB__GCB_L &&
      (pb == CB__GCB_L || pb == CB__GCB_V || pb == CB__GCB_LV || pb == CB__GCB_LVT))
    return 1;
  if ((pa == CB__GCB_LV || pa == CB__GCB_V) && (pb == CB__GCB_V || pb == CB__GCB_T)) return 1;
  if ((pa == CB__GCB_LVT || pa == CB__GCB_T) && pb == CB__GCB_T) return 1;
  /* GB9, GB9a: x (Extend | ZWJ | SpacingMark); GB9b: Prepend x */
  if (pb == CB__GCB_EXTEND || pb == CB__GCB_ZWJ || pb == CB__GCB_SPACINGMARK) return 1;
  if (pa == CB__GCB_PREPEND) return 1;
  /* GB11: ExtPict Extend* ZWJ x ExtPict; GB12, GB13: regional indicators in pairs */
  if (pict_zwj && (b & CB__GCB_EXT_PICT)) return 1;
  if (pa == CB__GCB_RI && pb == CB__GCB_RI && ri_odd) return 1;
  return 0; /* GB999 */
}

size_t cb__grapheme_end(const char *str, size_t n, size_t at) {
  const unsigned char *s = (const unsigned char *)str;
  size_t len;
  uint32_t prev = gcb(cb__utf8_decode(s + at, &len));
  size_t i = at + len;
  /* GB11's state: 1 after ExtPict Extend*, 2 after ExtPict Extend* ZWJ */
  int pict = prev & CB__GCB_EXT_PICT ? 1 : 0;
  int ri = (prev & ~(uint32_t)CB__GCB_EXT_PICT) == CB__GCB_RI;
  while (i < n) {
    uint32_t cur = gcb(cb__utf8_decode(s + i, &len));
    if (!joins(prev, cur, pict == 2, ri % 2 == 1)) break;
    uint32_t pc = cur & ~(uint32_t)CB__GCB_EXT_PICT;
    if (cur & CB__GCB_EXT_PICT) pict = 1;
    else if (pict == 1 && pc == CB__GCB_EXTEND) pict = 1;
    else if (pict == 1 && pc == CB__GCB_ZWJ) pict = 2;
    else pict = 0;
    ri = pc == CB__GCB_RI ? ri + 1 : 0;
    prev = cur;
    i += len;
  }
  return i;
}
