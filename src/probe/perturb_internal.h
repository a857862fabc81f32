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

#include <jansson.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/probe_perturb.h"
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
/* A family that swaps whole words (English homophones, synonyms): find says whether
 * the word (n bytes) can change, keeping in *tag what replace needs; replace gives
 * the chosen word's replacement, valid until its next call. */
typedef struct cb__perturb_words {
  int (*find)(void *ctx, const char *word, size_t n, size_t *tag);
  const char *(*replace)(void *ctx, const char *word, size_t n, size_t tag, cb_rng *rng);
  void *ctx;
} cb__perturb_words;
/* text into out with the words w->find accepts chosen as cb__perturb_choose chooses at
 * rate, each replaced (in its own case pattern) by w->replace. Returns the edits. */
size_t cb__perturb_replace_words(const cb__perturb_words *w, double rate, const char *text,
                                 size_t len, cb_rng *rng, cb_buf *out);


/* ---- comparing a clean and a perturbed answer (perturb_compare.c) ---------------- */

/* The first generated token's distribution as the API returned it (top_logprobs). */
typedef struct cb__token_dist {
  size_t n;
  char **tok;   /* owned */
  double *p;    /* owned: exp(logprob) */
} cb__token_dist;

void cb__token_dist_free(cb__token_dist *d);

/* From a record's choice_events (one JSON event a line): the first token's
 * top_logprobs (chat: choices[0].logprobs.content[0].top_logprobs, a list of
 * {token, logprob}; completions: choices[0].logprobs.top_logprobs[0], an object
 * token -> logprob) into *dist (n 0 when absent), and the text of OpenAI's refusal
 * field (delta.refusal pieces, or message.refusal) into *refusal (owned, NULL when
 * none). Lines that are not JSON are skipped. */
void cb__perturb_read_events(const char *events, cb__token_dist *dist, char **refusal);

/*
 * Drift of the perturbed first-token distribution q from the clean one p, over the
 * union U of their tokens plus one bucket for everything else. A side's missing mass
 * (1 - its returned probabilities) is spread evenly over the union's tokens it did
 * not return, each capped at its smallest returned probability (a token outside the
 * top k cannot be likelier than the k-th), the rest in the bucket; every probability
 * is floored at 1e-6 and the vectors renormalised. *cos: cosine similarity of the two
 * vectors; *kl: KL(p || q) in nats. Returns 1 - cos + KL; NAN when either is empty.
 */
double cb__perturb_drift(const cb__token_dist *p, const cb__token_dist *q, double *cos, double *kl);

/* How an answer was detected as a refusal. */
typedef enum {
  CB__REFUSAL_NONE = 0,
  CB__REFUSAL_FIELD,          /* OpenAI's refusal field was set */
  CB__REFUSAL_CONTENT_FILTER, /* finish_reason content_filter */
  CB__REFUSAL_PATTERN,        /* the text matches a refusal pattern */
  CB__REFUSAL_JUDGE           /* the refusal judge said so */
} cb__refusal_kind;

const char *cb__refusal_kind_name(cb__refusal_kind k);
/* The built-in refusal patterns (case-insensitive substrings), *n of them. */
const char *const *cb__perturb_refusal_patterns(size_t *n);
cb__refusal_kind cb__perturb_refusal(const char *text, const char *refusal_field,
                                     const char *finish_reason, const char *const *patterns,
                                     size_t n_patterns);

/* Normalised exact match: lowercase (ASCII), punctuation dropped, whitespace runs as
 * one space, trimmed. */
int cb__perturb_same_answer(const char *a, const char *b);

/* ---- one probe run (perturb_run.c, perturb_score.c, perturb_json.c) ------------- */

/* One prompt sent: line k + 1 of DIR/prompts.jsonl is prompts[k]. */
typedef struct cb__perturb_prompt {
  char id[128];         /* the dataset item's id */
  int family;           /* a cb__perturb_family, or -1 for the clean prompt */
  int variant;
  size_t clean;         /* index of its clean prompt */
  size_t edits;
  char *text;           /* owned */
} cb__perturb_prompt;

/* One answer, as on_record saw it. */
typedef struct cb__perturb_answer {
  int seen;
  int ok;               /* the request succeeded */
  char *text;           /* owned, may be NULL */
  char finish_reason[32];
  char error[64];
  cb__token_dist dist;
  char *refusal;        /* owned: the refusal field's text, or NULL */
} cb__perturb_answer;

/* One perturbed prompt against its clean prompt. */
typedef struct cb__perturb_pair {
  size_t clean, pert;   /* prompt indexes */
  int failed;           /* either request failed: in no mean */
  double agreement;     /* 0/1 for exact; the metric's score otherwise */
  double similarity;
  double drift, cos, kl; /* NAN without top_logprobs on both */
  cb__refusal_kind clean_refusal, pert_refusal;
} cb__perturb_pair;

struct cb_probe_perturb {
  cb_probe_perturb_params p;
  char dir[1024];
  char spec[1200];             /* "jsonl:DIR/prompts.jsonl" */
  char *extra_body;            /* owned: what the session sends besides the prompt */
  cb__perturb_prompt *prompts;
  size_t n_prompts;
  size_t n_clean;
  size_t unchanged[CB__PERTURB_FAMILIES]; /* prompts a family could not perturb (not sent) */
  char **patterns;             /* owned, lowercase; NULL: the built-in list */
  size_t n_patterns;
  char **inducements;          /* owned; NULL: the built-in list */
  size_t n_inducements;
  cb__perturb_answer *by_index; /* answers by the records' schedule index */
  size_t n_index;
  cb__perturb_answer *answers;  /* by prompt, after the run (borrowed from by_index) */
  signed char *judged;          /* by prompt: the refusal judge's 1 refused, 0 complied,
                                   -1 no verdict; NULL without a judge */
  json_t *judge_summary;        /* owned: what the judge run counted, or NULL */
  cb__perturb_pair *pairs;
  size_t n_pairs;
};

/* Create the --agreement and --similarity metrics with the options given, to refuse a
 * wrong name or option before the run; each option must be one of theirs. */
cb_status cb__perturb_check_metrics(cb_probe_perturb *pp, cb_error *err);
/* Ask the judge of every answered prompt whether its answer refuses (perturb_judge.c). */
cb_status cb__perturb_judge(cb_probe_perturb *pp, const char *dir, cb_error *err);
/* Compare every pair and summarise into the probe.json document (perturb_score.c). */
cb_status cb__perturb_score(cb_probe_perturb *pp, json_t **doc, cb_error *err);

#endif
