/*
 * perturb_typo.c - character typos: each letter, with probability `rate`, is replaced
 * by a neighbour on a QWERTY keyboard, dropped, or swapped with the letter after it
 * (one of the three at random); at least one letter is edited when there is one.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "probe/perturb_internal.h"

/* The keys around each letter on a US QWERTY keyboard (rows offset as on the keys). */
static const char *const neighbours[26] = {
    "qwsz",   /* a */ "vghn",   /* b */ "xdfv",   /* c */ "serfcx", /* d */ "wsdr",   /* e */
    "drtgvc", /* f */ "ftyhbv", /* g */ "gyujnb", /* h */ "ujko",   /* i */ "huikmn", /* j */
    "jiolm",  /* k */ "kop",    /* l */ "njk",    /* m */ "bhjm",   /* n */ "iklp",   /* o */
    "ol",     /* p */ "wa",     /* q */ "edft",   /* r */ "awedxz", /* s */ "rfgy",   /* t */
    "yhji",   /* u */ "cfgb",   /* v */ "qase",   /* w */ "zsdc",   /* x */ "tghu",   /* y */
    "asx",    /* z */
};

static int letter_index(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return c - 'A';
  return -1;
}

size_t cb__perturb_typo(double rate, const char *text, size_t len, cb_rng *rng, cb_buf *out) {
  size_t letters = 0;
  for (size_t i = 0; i < len; i++) letters += letter_index(text[i]) >= 0;
  unsigned char *chosen = letters ? cb_calloc(letters, 1) : NULL;
  size_t edits = cb__perturb_choose(letters, rate, rng, chosen);
  size_t li = 0;
  for (size_t i = 0; i < len; i++) {
    int k = letter_index(text[i]);
    if (k < 0 || !chosen[li++]) {
      cb_buf_append_char(out, text[i]);
      continue;
    }
    switch (cb_rng_below(rng, 3)) {
      case 0: { /* a neighbour, in the letter's case */
        const char *nb = neighbours[k];
        char c = nb[cb_rng_below(rng, strlen(nb))];
        cb_buf_append_char(out, text[i] >= 'A' && text[i] <= 'Z' ? (char)(c - 32) : c);
        break;
      }
      case 1: /* dropped */
        break;
      default: /* swapped with the next character; dropped when that changes nothing */
        if (i + 1 < len && text[i + 1] != text[i]) {
          cb_buf_append_char(out, text[i + 1]);
          cb_buf_append_char(out, text[i]);
          if (letter_index(text[i + 1]) >= 0) li++;
          i++;
        }
        break;
    }
  }
  cb_free(chosen);
  return edits;
}
