/*
 * perturb_family.c - the perturbation families by name, and one prompt perturbed by
 * one of them (perturb_internal.h); WordNet and Unihan are opened when a family first
 * needs them.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/workload.h"
#include "probe/perturb_internal.h"

#define WORDNET_DIR "/usr/share/wordnet"
#define UNIHAN_PATH "/usr/share/unicode/Unihan_Readings.txt.bz2"

static const char *const names[CB__PERTURB_FAMILIES] = {"typo",  "homophone",  "synonym",
                                                        "noise", "paraphrase", "inducement"};

const char *cb__perturb_family_name(cb__perturb_family f) {
  return (unsigned)f < CB__PERTURB_FAMILIES ? names[f] : "?";
}

cb_status cb__perturb_families_parse(const char *list, unsigned *mask, cb_error *err) {
  *mask = 0;
  for (const char *p = list; *p;) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    int found = -1;
    if (n == 3 && !memcmp(p, "all", 3)) {
      *mask = (1u << CB__PERTURB_FAMILIES) - 1;
      found = 0;
    }
    for (int f = 0; f < CB__PERTURB_FAMILIES && found < 0; f++)
      if (strlen(names[f]) == n && !memcmp(p, names[f], n)) {
        *mask |= 1u << f;
        found = f;
      }
    if (found < 0)
      return cb_error_set(err, CB_ERR_INVALID,
                          "--families: unknown family '%.*s' (expected typo, homophone, synonym, "
                          "noise, paraphrase, inducement or all, comma-separated)",
                          (int)n, p);
    p += n + (comma != NULL);
  }
  if (!*mask) return cb_error_set(err, CB_ERR_INVALID, "--families: expected at least one family");
  return CB_OK;
}

void cb__perturber_free(cb__perturber *p) {
  cb__wordnet_free(p->wn);
  cb__unihan_free(p->uh);
  p->wn = NULL;
  p->uh = NULL;
}

static int has_han(const char *text, size_t len) {
  for (size_t i = 0; i + 2 < len; i++) {
    unsigned char a = (unsigned char)text[i];
    if (a >= 0xE4 && a <= 0xE9) return 1; /* U+4000..U+9FFF lead bytes */
  }
  return 0;
}

cb_status cb__perturb_apply(cb__perturber *p, cb__perturb_family family, const char *text,
                            size_t len, cb_rng *rng, cb_buf *out, size_t *edits, cb_error *err) {
  cb_status st;
  switch (family) {
    case CB__PERTURB_TYPO:
      *edits = cb__perturb_typo(p->rate, text, len, rng, out);
      return CB_OK;
    case CB__PERTURB_NOISE:
      *edits = cb__perturb_noise(p->rate, text, len, rng, out);
      return CB_OK;
    case CB__PERTURB_PARAPHRASE:
      *edits = cb__perturb_paraphrase(text, len, rng, out);
      return CB_OK;
    case CB__PERTURB_HOMOPHONE:
      if (has_han(text, len)) {
        if (!p->uh &&
            (st = cb__unihan_open(p->unihan_path ? p->unihan_path : UNIHAN_PATH, &p->uh, err)) != CB_OK)
          return st;
        *edits = cb__perturb_chinese_homophones(p->uh, p->rate, text, len, rng, out);
        if (*edits) return CB_OK;
        cb_buf_reset(out); /* no Chinese homophone: try English words */
      }
      *edits = cb__perturb_english_homophones(p->rate, text, len, rng, out);
      return CB_OK;
    case CB__PERTURB_SYNONYM:
      if (!p->wn && (st = cb__wordnet_open(p->wordnet_dir ? p->wordnet_dir : WORDNET_DIR, &p->wn,
                                           err)) != CB_OK)
        return st;
      *edits = cb__perturb_synonyms(p->wn, p->rate, text, len, rng, out);
      return CB_OK;
    case CB__PERTURB_INDUCEMENT: {
      size_t n = p->n_inducements;
      const char *const *list = p->inducements;
      if (!list) list = cb_workload_inducements(&n);
      cb_buf_append(out, text, len);
      if (len && text[len - 1] != ' ' && text[len - 1] != '\n') cb_buf_append_char(out, ' ');
      cb_buf_append_str(out, list[cb_rng_below(rng, n)]);
      *edits = 1;
      return CB_OK;
    }
    default:
      return cb_error_set(err, CB_ERR_INVALID, "unknown perturbation family %d", (int)family);
  }
}
