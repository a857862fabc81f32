/*
 * tok_internal.h - what the files of the tok module share: the tokenizer struct, the
 * vocabulary hash map, the merge-pair map, the BPE engine, the pre-tokenizer steps,
 * normalizers, decoders and the per-call scratch. Invariants: docs/internals/bpe.md.
 */
#ifndef CALIBENCH_TOK_INTERNAL_H
#define CALIBENCH_TOK_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"
#include "calibench/tok.h"

#define CB__TOK_NONE UINT32_MAX
/* Largest id a file may use: real vocabularies are far below; a hostile file cannot
 * make the id-indexed arrays huge. */
#define CB__TOK_MAX_ID ((1 << 24) - 1)

/* ---- vocabulary: token bytes <-> id (vocab.c) ----------------------------------- */

typedef struct cb__vocab_tok {
  uint32_t off; /* into bytes */
  uint32_t len; /* CB__TOK_NONE: no token has this id */
} cb__vocab_tok;

typedef struct cb__vocab_slot {
  uint64_t head; /* the key's first 8 bytes, zero-padded: most keys compare here */
  uint32_t id;   /* CB__TOK_NONE: empty */
  uint32_t len;  /* key length */
} cb__vocab_slot;

typedef struct cb__vocab {
  char *bytes; /* owned arena: every token's bytes, back to back */
  size_t bytes_len, bytes_cap;
  cb__vocab_tok *tok; /* owned, [n_ids] */
  uint32_t n_ids;     /* one more than the largest id */
  size_t tok_cap;
  cb__vocab_slot *slots; /* owned open-addressing table, power-of-two size */
  size_t mask, count;
  uint32_t byte_id[256]; /* id of each single-byte token, CB__TOK_NONE if none */
  uint32_t *pair_id;     /* owned, [65536] or NULL: id of each two-byte token, indexed
                            by first << 8 | second (cb__vocab_index_pairs) */
} cb__vocab;

void cb__vocab_init(cb__vocab *v, size_t expected);
void cb__vocab_free(cb__vocab *v);
/* 0 added; 1 these bytes are already a token (kept the first); 2 id already used. */
int cb__vocab_add(cb__vocab *v, const void *bytes, size_t len, uint32_t id);
uint32_t cb__vocab_find(const cb__vocab *v, const void *bytes, size_t len);
size_t cb__vocab_memory(const cb__vocab *v);
/* Build pair_id: the merge loop's first pass looks up every adjacent byte pair. */
void cb__vocab_index_pairs(cb__vocab *v);
uint32_t cb__hash_bytes(const void *p, size_t n);
/* The first min(n, 8) bytes of p packed into one word, zero-padded (same bytes and n,
 * same word: slots compare it with the length). */
uint64_t cb__key_head(const unsigned char *p, size_t n);

static inline int cb__vocab_has(const cb__vocab *v, uint32_t id) {
  return id < v->n_ids && v->tok[id].len != CB__TOK_NONE;
}

/* ---- merge pairs (left id, right id) -> (rank, merged id) (vocab.c) -------------- */

typedef struct cb__pair_slot {
  uint64_t key; /* left << 32 | right; UINT64_MAX: empty */
  uint32_t rank, id;
} cb__pair_slot;

typedef struct cb__pairmap {
  cb__pair_slot *slots; /* owned */
  size_t mask, count;
} cb__pairmap;

void cb__pairmap_init(cb__pairmap *m, size_t expected);
void cb__pairmap_free(cb__pairmap *m);
/* 0 added, 1 pair already present (kept the first, lower rank). */
int cb__pairmap_add(cb__pairmap *m, uint32_t left, uint32_t right, uint32_t rank, uint32_t id);

static inline uint64_t cb__pair_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return k;
}

static inline const cb__pair_slot *cb__pairmap_find(const cb__pairmap *m, uint32_t l,
                                                    uint32_t r) {
  uint64_t key = (uint64_t)l << 32 | r;
  size_t i = (size_t)cb__pair_hash(key) & m->mask;
  for (;;) {
    const cb__pair_slot *s = &m->slots[i];
    if (s->key == key) return s;
    if (s->key == UINT64_MAX) return NULL;
    i = (i + 1) & m->mask;
  }
}

/* ---- special and added tokens (special.c) ---------------------------------------- */

typedef struct cb__special {
  char *text; /* owned */
  size_t len;
  uint32_t id;
  int special;    /* tokenizer.json "special" (tiktoken: always 1) */
  int normalized; /* tokenizer.json: matched on normalized text */
  int lstrip, rstrip;
} cb__special;

/* ---- pre-tokenizer steps --------------------------------------------------------- */

typedef enum cb__pretok_kind {
  CB__PRETOK_REGEX_MATCHES, /* tiktoken: the matches are the pieces, gaps dropped */
  CB__PRETOK_SPLIT,         /* tokenizer.json Split: matches and gaps are pieces */
  CB__PRETOK_SPLIT_REMOVED, /* tokenizer.json Split, behavior Removed: gaps only */
  CB__PRETOK_BYTELEVEL,     /* tokenizer.json ByteLevel: optional prefix space, GPT-2 regex */
  CB__PRETOK_METASPACE,     /* tokenizer.json Metaspace: ' ' -> replacement, prefix */
  CB__PRETOK_BERT,          /* BertPreTokenizer: whitespace removed, punctuation isolated */
  CB__PRETOK_WHITESPACE_SPLIT, /* WhitespaceSplit: whitespace removed (T5, XLM-R) */
} cb__pretok_kind;

typedef struct cb__regex {
  pcre2_code *code; /* owned */
  int jit;          /* JIT-compiled: use pcre2_jit_match */
  size_t jit_bytes;
} cb__regex;

typedef struct cb__pretok {
  cb__pretok_kind kind;
  cb__regex re;         /* REGEX_MATCHES, SPLIT*, BYTELEVEL with use_regex */
  int use_regex;        /* BYTELEVEL: split with the GPT-2 regex; METASPACE: split
                           before each replacement ("split": true) */
  int add_prefix_space; /* BYTELEVEL */
  char *replacement;    /* METASPACE, owned UTF-8 */
  int prepend;          /* METASPACE: 0 never, 1 always, 2 first */
} cb__pretok;

/* Compile a pattern in tiktoken/Rust/Oniguruma syntax, rewriting \s and \S to Unicode
 * White_Space (PCRE2's \s with UCP would also take U+180E). */
cb_status cb__regex_compile(cb__regex *re, const char *pattern, const char *what,
                            cb_error *err);
void cb__regex_free(cb__regex *re);
/* PCRE2's allocations routed through alloc.h (created once, shared, read-only). */
pcre2_general_context *cb__pcre2_context(void);

/* ---- normalizers (tokenizer.json) ---------------------------------------------- */

typedef enum cb__norm_kind {
  CB__NORM_NFC,
  CB__NORM_NFD,
  CB__NORM_NFKC,
  CB__NORM_NFKD,
  CB__NORM_PREPEND,
  CB__NORM_REPLACE,
  CB__NORM_BERT,
  CB__NORM_LOWERCASE,
  CB__NORM_STRIP_ACCENTS,
  CB__NORM_STRIP,
  CB__NORM_PRECOMPILED,
  CB__NORM_NMT,
} cb__norm_kind;

/* A SentencePiece precompiled_charsmap (precompiled.c): the double-array trie and the
 * NUL-separated replacement strings it points into. */
typedef struct cb__charsmap {
  uint32_t *units; /* owned, [n_units] */
  size_t n_units;
  char *norm; /* owned, norm_len bytes and a NUL */
  size_t norm_len;
} cb__charsmap;

/* BertNormalizer steps (cb__norm.flags) */
enum { CB__BERT_CLEAN = 1, CB__BERT_CHINESE = 2, CB__BERT_STRIP = 4, CB__BERT_LOWER = 8 };

typedef struct cb__norm {
  cb__norm_kind kind;
  char *a; /* PREPEND: text; REPLACE: pattern (owned; NULL for a Regex pattern) */
  char *b; /* REPLACE: content (owned) */
  int flags; /* BERT: CB__BERT_*; STRIP: 1 left, 2 right */
  cb__regex re; /* REPLACE with a Regex pattern (T5's " {2,}" -> " ") */
  cb__charsmap map; /* PRECOMPILED */
} cb__norm;

/* Decode a tokenizer.json precompiled_charsmap (base64) into m; an error names `name`. */
cb_status cb__charsmap_load(cb__charsmap *m, const char *b64, const char *name, cb_error *err);
void cb__charsmap_free(cb__charsmap *m);
size_t cb__charsmap_memory(const cb__charsmap *m);
/* The Precompiled normalizer over valid UTF-8 s, appended to out (precompiled.c). */
void cb__precompiled(const cb__charsmap *m, const char *s, size_t n, cb_buf *out);
/* Lowercase (Rust's char::to_lowercase of each character), StripAccents (drop
 * combining marks) and Strip (White_Space at the left and/or right end) over valid
 * UTF-8 s, appended to out (normalize.c). */
void cb__lowercase(const char *s, size_t n, cb_buf *out);
void cb__strip_accents(const char *s, size_t n, cb_buf *out);
void cb__strip(const char *s, size_t n, int left, int right, cb_buf *out);
/* Nmt: SentencePiece's NMT cleanup of controls and space-like characters (normalize.c). */
void cb__nmt(const char *s, size_t n, cb_buf *out);

/* NFC of valid UTF-8 `s` appended to out (nfc.c). */
void cb__nfc(const char *s, size_t n, cb_buf *out);
/* NFD (canonical decomposition, canonically ordered) of valid UTF-8 `s` (nfc.c). */
void cb__nfd(const char *s, size_t n, cb_buf *out);
/* NFKC and NFKD: the same with compatibility mappings followed too (nfc.c). */
void cb__nfkc(const char *s, size_t n, cb_buf *out);
void cb__nfkd(const char *s, size_t n, cb_buf *out);
/* General_Category Mark (Mn, Mc, Me) in the tables' Unicode version (nfc.c). */
int cb__is_combining_mark(uint32_t cp);

/* 1 when `s` is certainly already NFC (a fast scan that fails on any character that
 * could change). */
int cb__nfc_quick_yes(const char *s, size_t n);

/* End of the extended grapheme cluster (UAX #29) that starts at byte `at` (< n) of
 * valid UTF-8 s (grapheme.c). */
size_t cb__grapheme_end(const char *s, size_t n, size_t at);

/* ---- decoders (tokenizer.json) ---------------------------------------------------- */

typedef enum cb__dec_kind {
  CB__DEC_BYTELEVEL, /* tokens are raw bytes already */
  CB__DEC_REPLACE,
  CB__DEC_BYTEFALLBACK,
  CB__DEC_FUSE,
  CB__DEC_STRIP,
  CB__DEC_METASPACE,
  CB__DEC_WORDPIECE, /* prefix a; start = cleanup */
} cb__dec_kind;

typedef struct cb__dec {
  cb__dec_kind kind;
  char *a, *b;        /* REPLACE pattern/content; METASPACE replacement (owned) */
  int start, stop;    /* STRIP: copies to strip at each end; METASPACE: start = 1
                         when a prefix is prepended (prepend_scheme not "never") */
  char strip_char[8]; /* STRIP content (UTF-8) */
} cb__dec;

/* ---- the tokenizer ---------------------------------------------------------------- */

#define CB__TOK_MAX_STEPS 8

struct cb_tok {
  cb_tok_kind kind;
  char *name; /* owned */

  cb__vocab vocab; /* tiktoken: rank == id; HF: model vocab (byte-level decoded) */
  cb__pairmap pairs; /* HF merges */
  int byte_level;    /* HF: vocab strings were byte-level encoded; symbols are bytes */
  int ignore_merges; /* HF: a piece that is a token is that token */
  int byte_fallback; /* HF: unknown chars become <0xXX> tokens */
  uint32_t fallback_id[256];
  uint32_t unk_id; /* CB__TOK_NONE if none */
  char *wp_prefix;       /* WordPiece continuing_subword_prefix (owned) */
  size_t wp_max_chars;   /* WordPiece max_input_chars_per_word */
  size_t max_token_len;  /* bytes of the longest vocab entry */
  double *scores;        /* Unigram: each id's log probability (owned) */
  double min_score;      /* Unigram: the lowest of them */
  int fuse_unk;

  cb__pretok pretok[CB__TOK_MAX_STEPS];
  size_t n_pretok;
  cb__norm norm[CB__TOK_MAX_STEPS];
  size_t n_norm;
  cb__dec dec[CB__TOK_MAX_STEPS];
  size_t n_dec;

  cb__special *specials; /* owned; sorted by text length, longest first */
  size_t n_specials;
  uint8_t special_first[256]; /* 1 when some special text starts with this byte */
  int has_normalized_added;
  char **id_text; /* HF: decode text of added tokens by id (owned, sparse) */
  uint32_t n_id_text;

  cb_tok_id *bos_ids, *eos_ids; /* HF TemplateProcessing around $A (owned) */
  size_t n_bos, n_eos;

  size_t vocab_size;
  size_t extra_bytes; /* memory held outside the structures above (regex JIT) */
};

cb_tok *cb__tok_new(cb_tok_kind kind, const char *name);
/* Register a special/added token; sorts and indexes in cb__tok_finish_specials. */
void cb__tok_add_special(cb_tok *tok, const char *text, size_t len, uint32_t id, int special,
                         int normalized, int lstrip, int rstrip);
void cb__tok_finish_specials(cb_tok *tok);

/* ---- per-call scratch (encode.c, bpe.c) ----------------------------------------- */

typedef struct cb__part {
  uint32_t start, end; /* byte range of this symbol in the piece */
  uint32_t id;
  uint32_t rank;     /* rank of merging with the next symbol, CB__TOK_NONE if none */
  uint32_t merge_id; /* the merged id for that */
  int32_t prev, next;
  uint32_t gen;
} cb__part;

typedef struct cb__heap_entry {
  uint64_t key; /* rank << 32 | start: lowest rank, then leftmost */
  uint32_t part, gen;
} cb__heap_entry;

typedef struct cb__uni_node {
  double score;  /* best path score to here */
  int64_t start; /* where its last piece starts; -1: unreached */
  uint32_t id;   /* that piece */
} cb__uni_node;

typedef struct cb__scratch {
  pcre2_match_data *md;
  cb__part *parts;
  size_t parts_cap;
  cb__heap_entry *heap;
  size_t heap_cap;
  cb_buf clean;  /* input with invalid UTF-8 replaced */
  cb_buf norm;   /* a normalized segment */
  cb_buf norm2;  /* normalizer ping-pong */
  cb_buf level[CB__TOK_MAX_STEPS]; /* per pre-tokenizer step: rewritten piece */
  cb_buf tmp;    /* a normalizer's own intermediate steps */
  cb_buf word;   /* WordPiece: the candidate piece with its prefix */
  struct cb__uni_node *nodes; /* Unigram: the lattice's best path to each byte */
  size_t nodes_cap;
  cb_tok_ids path; /* Unigram: the best path's piece ends, last first */
} cb__scratch;

void cb__scratch_init(cb__scratch *s);
void cb__scratch_free(cb__scratch *s);

/* BPE one piece of bytes with tiktoken's rule (bpe.c). */
void cb__bpe_tiktoken(const cb__vocab *v, const unsigned char *p, size_t n, cb__scratch *s,
                      cb_tok_ids *out);
/* BPE one pre-tokenized piece of a tokenizer.json model (bpe.c). */
void cb__bpe_hf(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                cb_tok_ids *out);
/* ---- BERT (bert.c) ------------------------------------------------------------------ */

/* BertNormalizer with CB__BERT_* flags: valid UTF-8 s -> out (tmp: scratch). */
void cb__bert_normalize(int flags, const char *s, size_t n, cb_buf *out, cb_buf *tmp);
/* BertPreTokenizer's punctuation: ASCII punctuation or Unicode P*. */
int cb__bert_is_punct(uint32_t cp);
/* WordPiece one pre-tokenized word (bert.c). */
void cb__wordpiece(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                   cb_tok_ids *out);

/* Unigram one pre-tokenized piece: Viterbi over the vocab's scores (unigram.c). */
void cb__unigram(const cb_tok *tok, const unsigned char *p, size_t n, cb__scratch *s,
                 cb_tok_ids *out);

/* For tests: force the heap algorithm for pieces longer than `n` symbols. */
extern size_t cb__bpe_small_max;

void cb__ids_grow(cb_tok_ids *ids);
static inline void cb__ids_push(cb_tok_ids *ids, cb_tok_id id) {
  if (ids->len == ids->cap) cb__ids_grow(ids);
  ids->ids[ids->len++] = id;
}

/* ---- UTF-8 (utf8.c) ---------------------------------------------------------------- */

/* Bytes of the longest valid prefix of s. */
size_t cb__utf8_valid_prefix(const char *s, size_t n);
/* Append s to out with each maximal invalid subsequence replaced by U+FFFD (WHATWG). */
void cb__utf8_sanitize(const char *s, size_t n, cb_buf *out);
/* Decode one code point of valid UTF-8 at s (n > 0); sets *len. */
uint32_t cb__utf8_decode(const unsigned char *s, size_t *len);
/* Encode cp; returns bytes written (1-4) into out[4]. */
size_t cb__utf8_encode(uint32_t cp, char *out);
/* Unicode White_Space (as Rust's char::is_whitespace). */
int cb__is_white_space(uint32_t cp);

/* The GPT-2 byte-to-unicode map: byte -> code point, and back (-1 if none). */
uint32_t cb__byte_to_unicode(uint8_t b);
int cb__unicode_to_byte(uint32_t cp);

/* ---- loaders (load_tiktoken.c, load_hf.c, load.c) ------------------------------- */

struct json_t;
/* "cl100k_base, o200k_base, ..." for messages. */
const char *cb__tiktoken_known_names(void);
/* A .tiktoken rank file whose base name is a known encoding. */
cb_status cb__tok_load_tiktoken_file(const char *path, const char *data, size_t len,
                                     cb_tok **out, cb_error *err);
/* The tiktoken npm package's encoders/NAME.json, parsed. */
cb_status cb__tok_load_tiktoken_json(const char *path, struct json_t *root, cb_tok **out,
                                     cb_error *err);
/* A parsed tokenizer.json. */
cb_status cb__tok_load_hf_json(const char *name, struct json_t *root, cb_tok **out,
                               cb_error *err);

/* ---- the Hugging Face hub cache (hf_cache.c) --------------------------------------- */

/* A hub repo id ("name" or "org/name") that may be looked up in the cache. */
int cb__hf_repo_id_ok(const char *s);
/* 1 and the owned path of repo_id's tokenizer.json with how it was chosen; 0 and a
 * note of where it looked appended to `looked`. */
int cb__hf_cache_find(const char *repo_id, char **path, char **how, cb_buf *looked);

#endif
