/*
 * perturb_unihan.c - Unihan's kMandarin readings (Unicode's Unihan database, file
 * Unihan_Readings.txt, as Debian's unicode-data ships it, bzip2-compressed), read
 * with libbz2 when a prompt first needs them. Lines are "U+4E00<TAB>kMandarin<TAB>yī"
 * (several readings: the first, the most common, is kept). Only the CJK Unified
 * Ideographs block U+4E00..U+9FFF is grouped: the extension blocks hold rare
 * characters a typist would not produce.
 */
#include <bzlib.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

#define FIRST 0x4E00u
#define LAST 0x9FFFu
#define SPAN (LAST - FIRST + 1)
#define READING_MAX 16

struct cb__unihan {
  char (*reading)[READING_MAX]; /* SPAN entries; "" when none */
  uint32_t *sorted;             /* characters with a reading, by reading then code point */
  size_t n_sorted;
  uint32_t *group_at;           /* SPAN: index in sorted of the first with cp's reading */
  uint32_t *group_len;          /* SPAN: how many share it */
};

typedef struct entry {
  char reading[READING_MAX];
  uint32_t cp;
} entry;

static int by_reading(const void *a, const void *b) {
  const entry *x = a, *y = b;
  int c = strcmp(x->reading, y->reading);
  return c ? c : (x->cp > y->cp) - (x->cp < y->cp);
}

/* The whole decompressed file into out. */
static cb_status read_bz2(const char *path, cb_buf *out, cb_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return cb_error_set(err, CB_ERR_IO,
                        "%s: cannot open (%s): the Chinese homophones need Unihan's readings "
                        "(Debian package unicode-data; --unihan FILE)",
                        path, strerror(errno));
  int bzerr;
  BZFILE *bz = BZ2_bzReadOpen(&bzerr, f, 0, 0, NULL, 0);
  cb_status st = CB_OK;
  char chunk[65536];
  while (bzerr == BZ_OK) {
    int n = BZ2_bzRead(&bzerr, bz, chunk, sizeof chunk);
    if ((bzerr == BZ_OK || bzerr == BZ_STREAM_END) && n > 0) cb_buf_append(out, chunk, (size_t)n);
  }
  if (bzerr != BZ_STREAM_END)
    st = cb_error_set(err, CB_ERR_PARSE, "%s: not a bzip2 file, or a damaged one (libbz2 error %d)",
                      path, bzerr);
  BZ2_bzReadClose(&bzerr, bz);
  fclose(f);
  return st;
}

cb_status cb__unihan_open(const char *path, cb__unihan **out, cb_error *err) {
  *out = NULL;
  cb_buf text;
  cb_buf_init(&text, 64u << 20);
  cb_status st = read_bz2(path, &text, err);
  if (st != CB_OK) {
    cb_buf_free(&text);
    return st;
  }
  cb__unihan *u = cb_calloc(1, sizeof *u);
  u->reading = cb_calloc(SPAN, sizeof *u->reading);
  u->sorted = cb_reallocarray(NULL, SPAN, sizeof *u->sorted);
  u->group_at = cb_calloc(SPAN, sizeof *u->group_at);
  u->group_len = cb_calloc(SPAN, sizeof *u->group_len);
  for (char *p = text.data, *end = text.data + text.len; p && p < end;) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    char *line = p;
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    p = nl ? nl + 1 : NULL;
    static const char key[] = "\tkMandarin\t";
    if (n < 2 || line[0] != 'U' || line[1] != '+') continue;
    char *tab = memchr(line, '\t', n);
    if (!tab || (size_t)(line + n - tab) <= sizeof key - 1 || memcmp(tab, key, sizeof key - 1)) continue;
    unsigned long cp = strtoul(line + 2, NULL, 16);
    if (cp < FIRST || cp > LAST) continue;
    const char *r = tab + sizeof key - 1;
    size_t rn = 0;
    while (r + rn < line + n && r[rn] != ' ' && r[rn] != '\r') rn++;
    if (!rn || rn >= READING_MAX) continue;
    memcpy(u->reading[cp - FIRST], r, rn);
    u->reading[cp - FIRST][rn] = '\0';
    u->sorted[u->n_sorted++] = (uint32_t)cp;
  }
  cb_buf_free(&text);
  if (!u->n_sorted) {
    cb__unihan_free(u);
    return cb_error_set(err, CB_ERR_PARSE, "%s: no kMandarin readings of U+4E00..U+9FFF in it", path);
  }
  entry *e = cb_reallocarray(NULL, u->n_sorted, sizeof *e);
  for (size_t i = 0; i < u->n_sorted; i++) {
    memcpy(e[i].reading, u->reading[u->sorted[i] - FIRST], READING_MAX);
    e[i].cp = u->sorted[i];
  }
  qsort(e, u->n_sorted, sizeof *e, by_reading);
  for (size_t i = 0; i < u->n_sorted; i++) u->sorted[i] = e[i].cp;
  cb_free(e);
  for (size_t i = 0; i < u->n_sorted;) {
    size_t j = i + 1;
    while (j < u->n_sorted && !strcmp(u->reading[u->sorted[j] - FIRST], u->reading[u->sorted[i] - FIRST])) j++;
    for (size_t k = i; k < j; k++) {
      u->group_at[u->sorted[k] - FIRST] = (uint32_t)i;
      u->group_len[u->sorted[k] - FIRST] = (uint32_t)(j - i);
    }
    i = j;
  }
  *out = u;
  return CB_OK;
}

void cb__unihan_free(cb__unihan *u) {
  if (!u) return;
  cb_free(u->reading);
  cb_free(u->sorted);
  cb_free(u->group_at);
  cb_free(u->group_len);
  cb_free(u);
}

const char *cb__unihan_reading(const cb__unihan *u, uint32_t cp, const uint32_t **same,
                               size_t *n_same) {
  *same = NULL;
  *n_same = 0;
  if (cp < FIRST || cp > LAST || !u->reading[cp - FIRST][0]) return "";
  *same = u->sorted + u->group_at[cp - FIRST];
  *n_same = u->group_len[cp - FIRST];
  return u->reading[cp - FIRST];
}
