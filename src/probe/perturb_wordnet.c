/*
 * perturb_wordnet.c - synonyms from Princeton WordNet 3.0's database files, as Debian's
 * wordnet-base installs them (/usr/share/wordnet), read at run time. Format
 * (wndb(5WN)): index.POS lines "lemma pos synset_cnt p_cnt [ptr...] sense_cnt
 * tagsense_cnt offset...", sorted bytewise by lemma, after a licence header whose lines
 * start with two spaces; data.POS lines start at their byte offset with "offset
 * lex_filenum ss_type w_cnt(2 hex digits) word lex_id [word lex_id ...] ...".
 *
 * A word's most common sense: among the parts of speech that have it, the one whose
 * senses were tagged most often in WordNet's semantic concordance (tagsense_cnt; ties
 * in the order noun, verb, adjective, adverb), and its first synset (the senses are
 * listed by frequency).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "probe/perturb_internal.h"

#define N_POS 4
static const char *const pos_names[N_POS] = {"noun", "verb", "adj", "adv"};

typedef struct pos_db {
  cb_buf index;    /* index.POS, whole */
  size_t *lines;   /* starts of the lemma lines */
  size_t n_lines;
  FILE *data;      /* data.POS */
} pos_db;

struct cb__wordnet {
  pos_db pos[N_POS];
};

void cb__wordnet_free(cb__wordnet *wn) {
  if (!wn) return;
  for (int i = 0; i < N_POS; i++) {
    cb_buf_free(&wn->pos[i].index);
    cb_free(wn->pos[i].lines);
    if (wn->pos[i].data) fclose(wn->pos[i].data);
  }
  cb_free(wn);
}

static cb_status missing(cb_error *err, const char *path) {
  return cb_error_set(err, CB_ERR_IO,
                      "%s: cannot open (%s): the synonym family reads WordNet's database "
                      "(Debian package wordnet-base; --wordnet-dir DIR)",
                      path, strerror(errno));
}

cb_status cb__wordnet_open(const char *dir, cb__wordnet **out, cb_error *err) {
  *out = NULL;
  cb__wordnet *wn = cb_calloc(1, sizeof *wn);
  for (int i = 0; i < N_POS; i++) {
    pos_db *d = &wn->pos[i];
    char path[1200];
    snprintf(path, sizeof path, "%s/index.%s", dir, pos_names[i]);
    cb_buf_init(&d->index, 0);
    FILE *f = fopen(path, "rb");
    if (!f) {
      cb_status st = missing(err, path);
      cb__wordnet_free(wn);
      return st;
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) cb_buf_append(&d->index, chunk, n);
    fclose(f);
    size_t cap = 1024;
    d->lines = cb_reallocarray(NULL, cap, sizeof *d->lines);
    for (size_t at = 0; at < d->index.len;) {
      const char *nl = memchr(d->index.data + at, '\n', d->index.len - at);
      size_t end = nl ? (size_t)(nl - d->index.data) : d->index.len;
      if (d->index.data[at] != ' ') {
        if (d->n_lines == cap) d->lines = cb_reallocarray(d->lines, cap *= 2, sizeof *d->lines);
        d->lines[d->n_lines++] = at;
      }
      at = end + 1;
    }
    snprintf(path, sizeof path, "%s/data.%s", dir, pos_names[i]);
    d->data = fopen(path, "rb");
    if (!d->data) {
      cb_status st = missing(err, path);
      cb__wordnet_free(wn);
      return st;
    }
  }
  *out = wn;
  return CB_OK;
}

/* Compare the lemma at `line` (ended by a space) with word. */
static int cmp_lemma(const char *line, const char *word) {
  size_t i = 0;
  for (; line[i] != ' ' && line[i] != '\n' && word[i]; i++)
    if (line[i] != word[i]) return (unsigned char)line[i] < (unsigned char)word[i] ? -1 : 1;
  int line_done = line[i] == ' ' || line[i] == '\n';
  if (line_done && !word[i]) return 0;
  return line_done ? -1 : 1;
}

/* The index line of word in d, or NULL. */
static const char *find(const pos_db *d, const char *word) {
  size_t lo = 0, hi = d->n_lines;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = cmp_lemma(d->index.data + d->lines[mid], word);
    if (!c) return d->index.data + d->lines[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

/* Past the next space-separated field of a line; NULL at the line's end. */
static const char *skip_field(const char *p) {
  while (*p == ' ') p++;
  if (!*p || *p == '\n') return NULL;
  while (*p && *p != ' ' && *p != '\n') p++;
  return p;
}

/* A number field (base 10 or 16) at p, p moved past it; 0 when there is none. */
static int number(const char **p, int base, long *out) {
  char *end;
  if (!*p) return 0;
  *out = strtol(*p, &end, base);
  if (end == *p) return 0;
  *p = end;
  return 1;
}

/* From an index line: tagsense_cnt and the first synset offset (0 when malformed). */
static int parse_index(const char *line, long *tagsense, long *offset) {
  const char *p = skip_field(line); /* lemma */
  if (p) p = skip_field(p);         /* pos */
  long synsets, ptrs, senses;
  if (!number(&p, 10, &synsets) || !number(&p, 10, &ptrs) || synsets < 1 || ptrs < 0) return 0;
  for (long i = 0; i < ptrs && p; i++) p = skip_field(p);
  return number(&p, 10, &senses) && number(&p, 10, tagsense) && number(&p, 10, offset) &&
         *offset > 0;
}

size_t cb__wordnet_synonyms(cb__wordnet *wn, const char *word, cb_buf *out) {
  int best = -1;
  long best_tag = -1, best_off = 0;
  for (int i = 0; i < N_POS; i++) {
    const char *line = find(&wn->pos[i], word);
    long tag, off;
    if (line && parse_index(line, &tag, &off) && tag > best_tag) {
      best = i;
      best_tag = tag;
      best_off = off;
    }
  }
  if (best < 0) return 0;
  FILE *f = wn->pos[best].data;
  char line[8192];
  if (fseek(f, best_off, SEEK_SET) || !fgets(line, sizeof line, f)) return 0;
  const char *p = skip_field(line); /* offset */
  if (p) p = skip_field(p);         /* lex_filenum */
  if (p) p = skip_field(p);         /* ss_type */
  long words, lex_id;
  if (!number(&p, 16, &words)) return 0;
  size_t found = 0;
  for (long w = 0; w < words; w++) {
    while (*p == ' ') p++;
    const char *end = strchr(p, ' ');
    if (!end) break;
    size_t n = (size_t)(end - p);
    const char *paren = memchr(p, '(', n); /* an adjective's marker: "(a)", "(p)", "(ip)" */
    size_t wn_len = paren ? (size_t)(paren - p) : n;
    int proper = 0;
    for (size_t i = 0; i < wn_len; i++) proper |= p[i] >= 'A' && p[i] <= 'Z';
    if (!proper && !(wn_len == strlen(word) && !memcmp(p, word, wn_len))) {
      for (size_t i = 0; i < wn_len; i++) cb_buf_append_char(out, p[i] == '_' ? ' ' : p[i]);
      cb_buf_append_char(out, '\0');
      found++;
    }
    p = end + 1;
    if (!number(&p, 16, &lex_id)) break;
  }
  return found;
}
