/*
 * rouge_lcs.c - longest common subsequences of token id sequences, as
 * rouge_scorer.py's _lcs_table / _backtrack_norec compute them, 64 cells at a time.
 *
 * Bit-parallel LCS (L. Allison and T. I. Dix, 1986; H. Hyyrö, "Bit-parallel
 * LCS-length computation revisited", 2004): with the columns' match masks PM[s]
 * (bit j set when column token j is s), row i of the table is a bit vector V_i
 * whose bit j is 0 where table[i][j+1] = table[i][j] + 1; V_0 is all ones and
 * V_i = (V + (V & PM[a_i])) | (V & ~PM[a_i]), so table[i][x] = x - popcount(V_i's
 * bits below x) and the LCS length is the number of 0 bits among the m columns.
 *
 * Which LCS the backtrack reads out matters for rougeLsum (its union over candidate
 * sentences, then the clipped counts), so the readout follows _backtrack_norec: on
 * equal tokens go diagonally, else left when table[i][j-1] > table[i-1][j], else up;
 * the cells come from the stored rows.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "rouge_internal.h"

static void *grow(void *p, size_t *cap, size_t want, size_t size) {
  if (want <= *cap) return p;
  size_t c = *cap ? *cap : 64;
  while (c < want) c *= 2;
  *cap = c;
  return cb_reallocarray(p, c, size);
}

void cb__rouge_lcs_free(cb__rouge_lcs *l) {
  cb_free(l->slot);
  cb_free(l->pm);
  cb_free(l->rows);
  cb_free(l->at);
  memset(l, 0, sizeof *l);
}

void cb__rouge_lcs_cols(cb__rouge_lcs *l, const uint32_t *b, size_t nb, size_t vocab) {
  if (vocab > l->slot_cap) {
    size_t old = l->slot_cap;
    l->slot = grow(l->slot, &l->slot_cap, vocab, sizeof l->slot[0]);
    memset(l->slot + old, 0, (l->slot_cap - old) * sizeof l->slot[0]);
  }
  size_t k = (nb + 63) / 64, distinct = 0;
  l->cols = b;
  l->m = nb;
  l->k = k;
  /* Room for mask 0, all zero (the mask of every token that is no column: a row
   * stepped with it stays as it was, so the rows need no branch on it), and a mask per
   * column (no more distinct tokens than columns); then locals: stores to the masks
   * could otherwise be taken to change l's fields. */
  l->pm = grow(l->pm, &l->pm_cap, (nb + 1) * k, sizeof l->pm[0]);
  uint64_t *pm = l->pm;
  uint32_t *slot = l->slot;
  if (k == 1) { /* up to 64 columns (nearly every sentence): one word per mask */
    pm[0] = 0;
    for (size_t j = 0; j < nb; j++) {
      uint32_t *s = &slot[b[j]];
      if (!*s) {
        *s = (uint32_t)++distinct;
        pm[distinct] = (uint64_t)1 << j;
      } else {
        pm[*s] |= (uint64_t)1 << j;
      }
    }
    return;
  }
  memset(pm, 0, k * sizeof pm[0]);
  for (size_t j = 0; j < nb; j++) {
    uint32_t *s = &slot[b[j]];
    if (!*s) {
      *s = (uint32_t)++distinct;
      memset(pm + distinct * k, 0, k * sizeof pm[0]);
    }
    pm[*s * k + j / 64] |= (uint64_t)1 << (j % 64);
  }
}

void cb__rouge_lcs_cols_done(cb__rouge_lcs *l) {
  for (size_t j = 0; j < l->m; j++) l->slot[l->cols[j]] = 0;
  l->m = 0;
}

/* V = (V + (V & pm)) | (V & ~pm), with the carry across words */
static void next_row(uint64_t *v, const uint64_t *pm, size_t k) {
  uint64_t carry = 0;
  for (size_t w = 0; w < k; w++) {
    uint64_t x = v[w], u = x & pm[w], s = x + u, t = s + carry;
    carry = (s < x) | (t < s);
    v[w] = t | (x & ~pm[w]);
  }
}

/* The two functions that count bits are built twice, for x86-64 with and without the
 * POPCNT instruction, and the loader picks one by the CPU (an ifunc): the build targets
 * plain x86-64, where a popcount is otherwise a call into libgcc. Not under
 * ThreadSanitizer: the loader runs the ifunc's resolver before TSan's runtime is up,
 * and its instrumented code crashes there (every TSan binary failed at start). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__SANITIZE_THREAD__)
#define POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define POPCNT_CLONES
#endif

/* One row of one word: (V + U) | (V & ~PM) with U = V & PM, where V & ~PM = V - U. */
static inline uint64_t step(uint64_t v, uint64_t pm) {
  uint64_t u = v & pm;
  return (v + u) | (v - u);
}

/* The bits below x, 1 <= x <= 64. */
static inline uint64_t low_bits(size_t x) { return ~(uint64_t)0 >> (64 - x); }

/* Sentences of up to 64 tokens (nearly all): cb__rouge_lcs_mark with each row one word,
 * kept in a register while the rows are built. Only the rows of reference tokens that
 * are columns are stored (in l->rows, their indices in l->at): the row of any other
 * token equals the row above it, and there the backtrack always goes up (no match; its
 * cell above equals its own, which is cur, so never left), so the walk jumps straight
 * to the next stored row. Most tokens of a sentence are not in the other sentence. */
static inline __attribute__((always_inline)) void mark_one_word(cb__rouge_lcs *l, const uint32_t *ref, size_t nr,
                                 unsigned char *hit) {
  uint64_t *rows = l->rows, v = ~(uint64_t)0;
  uint32_t *at = l->at;
  const uint64_t *pm = l->pm;
  const uint32_t *slot = l->slot, *cols = l->cols;
  size_t q = 0;
  for (size_t i = 0; i < nr; i++) { /* no branch: whether a token is a column is random */
    uint32_t s = slot[ref[i]];
    v = step(v, pm[s]);
    rows[q] = v;
    at[q] = (uint32_t)i;
    q += s != 0;
  }
  if (!q) return;
  /* t: the stored rows still above the walk; row t - 1 is table row at[t - 1] + 1 */
  size_t t = q, j = l->m, cur = j - (size_t)__builtin_popcountll(v & low_bits(j));
  while (t > 0 && j > 0) { /* as in cb__rouge_lcs_mark */
    size_t i = at[t - 1];
    if (ref[i] == cols[j - 1]) {
      hit[i] = 1;
      t--;
      j--;
      cur--;
    } else if (!(rows[t - 1] >> (j - 1) & 1)) {
      t--;
    } else if (j - (size_t)__builtin_popcountll((t > 1 ? rows[t - 2] : ~(uint64_t)0) & low_bits(j)) <
               cur) {
      j--;
    } else {
      t--;
    }
  }
}

/* table[i][x] from row V_i: x minus the 1 bits below x */
static inline size_t cell(const uint64_t *v, size_t x) {
  size_t ones = 0, w = 0;
  for (; w < x / 64; w++) ones += (size_t)__builtin_popcountll(v[w]);
  if (x % 64) ones += (size_t)__builtin_popcountll(v[w] & (((uint64_t)1 << (x % 64)) - 1));
  return x - ones;
}

POPCNT_CLONES size_t cb__rouge_lcs_len(cb__rouge_lcs *l, const uint32_t *a, size_t na) {
  size_t k = l->k;
  if (!k) return 0;
  if (k == 1) { /* up to 64 columns: the row in a register */
    uint64_t v = ~(uint64_t)0;
    for (size_t i = 0; i < na; i++) v = step(v, l->pm[l->slot[a[i]]]); /* no branch */
    return l->m - (size_t)__builtin_popcountll(v & low_bits(l->m));
  }
  l->rows = grow(l->rows, &l->rows_cap, k, sizeof l->rows[0]);
  uint64_t *v = l->rows;
  memset(v, 0xFF, k * sizeof v[0]);
  for (size_t i = 0; i < na; i++) {
    uint32_t s = l->slot[a[i]];
    if (s) next_row(v, l->pm + (size_t)s * k, k);
  }
  return cell(v, l->m);
}

POPCNT_CLONES void cb__rouge_lcs_mark(cb__rouge_lcs *l, const uint32_t *ref, size_t nr, unsigned char *hit) {
  size_t k = l->k, m = l->m;
  if (!k || !nr) return;
  l->rows = grow(l->rows, &l->rows_cap, (nr + 1) * k, sizeof l->rows[0]);
  if (k == 1) {
    l->at = grow(l->at, &l->at_cap, nr, sizeof l->at[0]);
    mark_one_word(l, ref, nr, hit);
    return;
  }
  uint64_t *rows = l->rows; /* rows[i * k ..] = V_i */
  for (size_t w = 0; w < k; w++) rows[w] = ~(uint64_t)0;
  int any = 0;
  for (size_t i = 1; i <= nr; i++) {
    uint64_t *v = rows + i * k;
    memcpy(v, v - k, k * sizeof v[0]);
    uint32_t s = l->slot[ref[i - 1]];
    if (s) {
      next_row(v, l->pm + (size_t)s * k, k);
      any = 1;
    }
  }
  if (!any) return; /* no token in common: the LCS is empty */
  /* cur = table[i][j] along the path; h = table[i][j] - table[i][j-1] is row i's bit
   * j-1. Off a match, table[i][j] = max(left, up): when h is 1 the left cell is
   * smaller, so up equals cur and the path goes up; when h is 0, left = cur and the
   * path goes left only if up < cur, the one case that needs row i-1's cell. */
  size_t i = nr, j = m, cur = cell(rows + nr * k, m);
  while (i > 0 && j > 0) {
    if (ref[i - 1] == l->cols[j - 1]) {
      hit[i - 1] = 1;
      i--;
      j--;
      cur--;
    } else if (!(rows[i * k + (j - 1) / 64] >> ((j - 1) % 64) & 1)) { /* h = 1 */
      i--;
    } else if (cell(rows + (i - 1) * k, j) < cur) {
      j--;
    } else {
      i--;
    }
  }
}
