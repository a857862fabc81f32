/*
 * rouge_lcs.c - longest common subsequences of token id sequences, as
 * rouge_scorer.py's _lcs_table / _backtrack_norec compute them.
 *
 * The length needs two rows of the table. Which LCS the backtrack reads out
 * matters for rougeLsum (its union over candidate sentences, then the clipped
 * counts), so the readout follows _backtrack_norec exactly: on equal tokens go
 * diagonally, else left when table[i][j-1] > table[i-1][j], else up. That choice
 * is all the backtrack needs from the table, so it is kept as one bit per cell.
 */
#include <string.h>

#include "rouge_internal.h"

size_t cb__rouge_lcs_len(const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                         uint32_t *row) {
  memset(row, 0, (nb + 1) * sizeof row[0]);
  for (size_t i = 0; i < na; i++) {
    uint32_t ai = a[i], diag = 0;
    for (size_t j = 1; j <= nb; j++) {
      uint32_t up = row[j];
      if (ai == b[j - 1]) row[j] = diag + 1;
      else if (row[j - 1] > up) row[j] = row[j - 1];
      diag = up;
    }
  }
  return row[nb];
}

void cb__rouge_lcs_mark(const uint32_t *ref, size_t nr, const uint32_t *can, size_t nc,
                        uint32_t *row, uint64_t *bits, unsigned char *hit) {
  uint32_t *prev = row, *cur = row + nc + 1;
  memset(prev, 0, (nc + 1) * sizeof prev[0]);
  cur[0] = 0;
  memset(bits, 0, ((nr * nc + 63) / 64) * sizeof bits[0]);
  for (size_t i = 1; i <= nr; i++) {
    uint32_t ri = ref[i - 1];
    size_t at = (i - 1) * nc;
    for (size_t j = 1; j <= nc; j++, at++) {
      if (ri == can[j - 1]) {
        cur[j] = prev[j - 1] + 1;
      } else if (cur[j - 1] > prev[j]) {
        cur[j] = cur[j - 1];
        bits[at >> 6] |= (uint64_t)1 << (at & 63); /* the backtrack goes left here */
      } else {
        cur[j] = prev[j];
      }
    }
    uint32_t *t = prev;
    prev = cur;
    cur = t;
    cur[0] = 0;
  }
  size_t i = nr, j = nc;
  while (i > 0 && j > 0) {
    if (ref[i - 1] == can[j - 1]) {
      hit[i - 1] = 1;
      i--;
      j--;
    } else {
      size_t at = (i - 1) * nc + (j - 1);
      if (bits[at >> 6] >> (at & 63) & 1) j--;
      else i--;
    }
  }
}
