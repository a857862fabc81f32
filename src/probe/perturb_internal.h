/*
 * perturb_internal.h - the pieces of `probe perturb` (docs/probe.md, "probe
 * perturb"), internal to the probe module: the perturbation families and the
 * lexical resources they read (WordNet, Unihan), the comparison of a clean and a
 * perturbed answer (agreement, first-token drift, refusal), and the per-family
 * summary.
 */
#ifndef CALIBENCH_PROBE_PERTURB_INTERNAL_H
#define CALIBENCH_PROBE_PERTURB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/rng.h"

/* ---- families ------------------------------------------------------------------- */

typedef enum {
  CB__PERTURB_TYPO = 0,   /* keyboard-neighbour substitutions, drops, swaps */
  CB__PERTURB_HOMOPHONE,  /* English homophone pairs; Chinese same-pinyin characters */
  CB__PERTURB_SYNONYM,    /* WordNet synonyms */
  CB__PERTURB_NOISE,      /* spacing, case, punctuation */
  CB__PERTURB_PARAPHRASE, /* templates around the prompt */
  CB__PERTURB_INDUCEMENT, /* a value-inducing suffix */
  CB__PERTURB_FAMILIES
} cb__perturb_family;

const char *cb__perturb_family_name(cb__perturb_family f);
/* "typo,homophone,..." -> a bit per family; "all" is every family. Errors name the
 * unknown family and list the known ones. */
cb_status cb__perturb_families_parse(const char *list, unsigned *mask, cb_error *err);

/* WordNet's database (Princeton WordNet 3.0, Debian wordnet-base): index files held
 * in memory, data files read at the synset's offset. */
typedef struct cb__wordnet cb__wordnet;
/* dir: the folder with index.noun, data.noun, ... (/usr/share/wordnet). A missing
 * file is an error naming it and the package. */
cb_status cb__wordnet_open(const char *dir, cb__wordnet **out, cb_error *err);
void cb__wordnet_free(cb__wordnet *wn);
/* Synonyms of a lowercase word from its most common sense (the first synset of the
 * first part of speech that has it: noun, verb, adjective, adverb), other than the
 * word itself, '_' as ' ', in WordNet's order; appended to out as NUL-separated
 * strings. Returns how many. */
size_t cb__wordnet_synonyms(cb__wordnet *wn, const char *word, cb_buf *out);

/* Unihan's kMandarin readings (Debian unicode-data's Unihan_Readings.txt.bz2): the
 * characters of the CJK Unified Ideographs block grouped by their first reading. */
typedef struct cb__unihan cb__unihan;
cb_status cb__unihan_open(const char *path, cb__unihan **out, cb_error *err);
void cb__unihan_free(cb__unihan *u);
/* The reading of code point cp ("" when it has none), and the characters with
 * exactly that reading (tone included), cp among them, in *same, *n_same (borrowed). */
const char *cb__unihan_reading(const cb__unihan *u, uint32_t cp, const uint32_t **same,
                               size_t *n_same);

/* What the families need; resources are opened on first use and kept. */
typedef struct cb__perturber {
  double rate;                 /* per character (typo, noise) or per word (homophone, synonym) */
  const char *wordnet_dir;     /* NULL: /usr/share/wordnet */
  const char *unihan_path;     /* NULL: /usr/share/unicode/Unihan_Readings.txt.bz2 */
  const char *const *inducements; /* NULL: the built-in list */
  size_t n_inducements;
  cb__wordnet *wn;             /* owned, opened on first use */
  cb__unihan *uh;              /* owned, opened on first use */
} cb__perturber;

void cb__perturber_free(cb__perturber *p);

/*
 * The prompt `text` perturbed by `family`, seeded by rng, appended to out. At least
 * one edit is made where the family can make one; *edits says how many (0: the
 * family found nothing to change, out equals text). Errors only for a resource that
 * cannot be read (WordNet, Unihan).
 */
cb_status cb__perturb_apply(cb__perturber *p, cb__perturb_family family, const char *text,
                            size_t len, cb_rng *rng, cb_buf *out, size_t *edits, cb_error *err);

/* The families' edit functions (perturb_*.c), each with perturb_apply's contract. */
size_t cb__perturb_typo(double rate, const char *text, size_t len, cb_rng *rng, cb_buf *out);
size_t cb__perturb_noise(double rate, const char *text, size_t len, cb_rng *rng, cb_buf *out);
size_t cb__perturb_paraphrase(const char *text, size_t len, cb_rng *rng, cb_buf *out);
size_t cb__perturb_english_homophones(double rate, const char *text, size_t len, cb_rng *rng,
                                      cb_buf *out);
size_t cb__perturb_chinese_homophones(const cb__unihan *u, double rate, const char *text,
                                      size_t len, cb_rng *rng, cb_buf *out);
size_t cb__perturb_synonyms(cb__wordnet *wn, double rate, const char *text, size_t len,
                            cb_rng *rng, cb_buf *out);

/* ---- words ---------------------------------------------------------------------- */

/* The next run of ASCII letters (and inner apostrophes) at or after *pos: its start
 * and length, *pos moved past it; 0 when none is left. */
int cb__perturb_next_word(const char *text, size_t len, size_t *pos, size_t *start, size_t *n);
/* Copy `repl` into out with the case pattern of `orig` (capitalised or all capitals). */
void cb__perturb_append_cased(cb_buf *out, const char *orig, size_t orig_n, const char *repl);
/* Pick `want` positions out of n marked candidates so that at least one is chosen
 * when any exists: each is chosen with probability rate, then one at random if
 * none was. chosen[] gets 0/1. Returns how many were chosen. */
size_t cb__perturb_choose(size_t n, double rate, cb_rng *rng, unsigned char *chosen);

#endif
