/*
 * tok.h - BPE, WordPiece and Unigram tokenizers with the exact ids of their references.
 *
 * Token counts are the unit of every LLM benchmark, so calibench tokenizes the way
 * the model's own tokenizer does, not approximately:
 *
 *  - tiktoken encodings (cl100k_base, o200k_base, p50k_base, p50k_edit, r50k_base,
 *    gpt2) from `.tiktoken` rank files or the tiktoken npm package's JSON encoders:
 *    the pre-tokenization regex (PCRE2 with Unicode properties and JIT), merge by
 *    rank, special tokens allowed or rejected as tiktoken does. Ids are identical to
 *    tiktoken's (tests/integration/test_tokenize.sh compares every encoding).
 *  - Hugging Face `tokenizer.json` BPE models: ByteLevel and Split-regex
 *    pre-tokenizers (GPT-2, Llama 3, Qwen2 families), added and special tokens, the
 *    NFC / Prepend / Replace normalizers those families use, SentencePiece-style BPE
 *    with byte fallback (Llama 2, Mistral), TemplateProcessing (BOS) and the decoders
 *    they use; WordPiece models with BERT's normalizer, pre-tokenizer,
 *    BertProcessing and WordPiece decoder; Unigram (SentencePiece) models with
 *    WhitespaceSplit and Metaspace and the normalizers SentencePiece conversions use
 *    (Precompiled charsmaps, NFKC, NFKD, NFD, Lowercase, StripAccents, Strip, Nmt).
 *    Anything else fails to load with CB_ERR_UNSUPPORTED naming the component
 *    ("tokenizer.json: pre_tokenizer type 'Digits' is not supported").
 *
 * Input text is bytes. Invalid UTF-8 is first replaced the way every reference's
 * string conversion does (the WHATWG decoder: each maximal invalid subsequence becomes
 * U+FFFD), so `calibench tokenize FILE` equals tiktoken/tokenizers applied to
 * `fs.readFileSync(FILE, "utf8")`. decode() returns bytes; decode(encode(x)) == x for
 * valid UTF-8 x whenever the tokenizer itself round-trips (tiktoken always does).
 *
 * Ownership: cb_tok_load* return a handle freed with cb_tok_free; a failed load
 * leaves nothing to free. A loaded tokenizer is immutable: any number of threads may
 * encode, count and decode with one handle at once (each call uses its own scratch).
 * Internals, algorithms and the invariants they keep: docs/internals/bpe.md. Formats,
 * names and the search path: docs/tokenizers.md.
 */
#ifndef CALIBENCH_TOK_H
#define CALIBENCH_TOK_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t cb_tok_id;
typedef struct cb_tok cb_tok; /* opaque, immutable once loaded */

typedef enum cb_tok_kind {
  CB_TOK_KIND_TIKTOKEN, /* rank = id, merge any adjacent pair whose bytes are a token */
  CB_TOK_KIND_HF_BPE,   /* tokenizer.json model "BPE": merge listed pairs by merge rank */
  CB_TOK_KIND_HF_WORDPIECE, /* tokenizer.json model "WordPiece" (BERT): greedy longest match */
  CB_TOK_KIND_HF_UNIGRAM,   /* tokenizer.json model "Unigram" (SentencePiece): Viterbi */
} cb_tok_kind;

/* ---- loading ------------------------------------------------------------------- */

/*
 * Where a tokenizer spec leads, without loading it (cb_tok_resolve):
 *  1. a path to an existing file or directory: itself;
 *  2. an encoding name (cl100k_base, o200k_base, p50k_base, p50k_edit, r50k_base,
 *     gpt2, or any NAME), searched as NAME.tiktoken, NAME.json and NAME/tokenizer.json
 *     in each directory of $CALIBENCH_TOKENIZER_PATH (colon-separated), then
 *     ./node_modules/tiktoken/encoders;
 *  3. a Hugging Face model id ("org/name" or "name"): its tokenizer.json in the local
 *     hub cache (HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else
 *     $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub, as huggingface_hub
 *     resolves it), the snapshot refs/main names, else the newest snapshot holding one.
 *     Never downloads.
 */
typedef struct cb_tok_source {
  char *path; /* owned: the file (or directory) to load with cb_tok_load */
  char *how;  /* owned: one line saying how it was found, for the manifest */
  int hub;    /* 1: found in the Hugging Face cache */
} cb_tok_source;

/*
 * Resolve `spec` (the --tokenizer value), or `model` (the --model name) when spec is
 * NULL or empty. CB_ERR_NOT_FOUND when it leads nowhere: err says every place looked,
 * which is the reason to record when falling back to an approximate count;
 * CB_ERR_INVALID when both are NULL/empty. On success free `out` with
 * cb_tok_source_free; on failure it holds nothing.
 */
cb_status cb_tok_resolve(const char *spec, const char *model, cb_tok_source *out,
                         cb_error *err);
void cb_tok_source_free(cb_tok_source *src);

/*
 * Load the tokenizer `spec` leads to (cb_tok_resolve): a tokenizer.json, a tiktoken
 * npm JSON encoder (`encoders/NAME.json`), a `.tiktoken` rank file (named after its
 * encoding, e.g. cl100k_base.tiktoken, which gives its regex and special tokens), or a
 * directory holding tokenizer.json.
 * Errors: CB_ERR_NOT_FOUND (names every place looked), CB_ERR_IO, CB_ERR_PARSE (file
 * and line or JSON position), CB_ERR_UNSUPPORTED (names the component).
 */
cb_status cb_tok_load(const char *spec, cb_tok **out, cb_error *err);

/* One special token of a tiktoken encoding: its text and id. */
typedef struct cb_tok_special_def {
  const char *text;
  cb_tok_id id;
} cb_tok_special_def;

/*
 * Build a tiktoken-style tokenizer from rank data in memory: `.tiktoken` lines
 * ("BASE64 RANK\n") or the npm package's packed form ("! OFFSET B64 B64 ...\n").
 * `pattern` is the pre-tokenization regex in tiktoken's syntax (\p{..}, (?i:..),
 * lookahead; \s and \S mean Unicode White_Space as in Rust's regex). `name` labels
 * errors and cb_tok_name. Every byte 0..255 must be a token of its own.
 */
cb_status cb_tok_load_tiktoken_mem(const char *name, const char *ranks, size_t ranks_len,
                                   const char *pattern, const cb_tok_special_def *specials,
                                   size_t num_specials, cb_tok **out, cb_error *err);

/* Parse a Hugging Face tokenizer.json held in memory; `name` labels errors. */
cb_status cb_tok_load_hf_json_mem(const char *name, const char *json, size_t len,
                                  cb_tok **out, cb_error *err);

void cb_tok_free(cb_tok *tok);

/* ---- facts ----------------------------------------------------------------------- */

/* The encoding name or the file it came from; valid while tok lives. */
const char *cb_tok_name(const cb_tok *tok);
cb_tok_kind cb_tok_kind_of(const cb_tok *tok);
/* One more than the largest id, special and added tokens included. */
size_t cb_tok_vocab_size(const cb_tok *tok);
/* Bytes of heap the loaded tokenizer holds (tables, arena, compiled regexes). */
size_t cb_tok_memory_bytes(const cb_tok *tok);
/* The id of the special or added token with this exact text; CB_ERR_NOT_FOUND. */
cb_status cb_tok_special_id(const cb_tok *tok, const char *text, cb_tok_id *id);

/* ---- encoding -------------------------------------------------------------------- */

/* What to do with special-token text (tiktoken's allowed_special/disallowed_special;
 * for tokenizer.json, its added tokens). */
typedef enum cb_tok_special_mode {
  CB_TOK_SPECIAL_DEFAULT = 0, /* as the reference does by default: tiktoken REJECT,
                                 tokenizer.json ALLOW */
  CB_TOK_SPECIAL_ALLOW,       /* the text becomes the special id ("all") */
  CB_TOK_SPECIAL_REJECT,      /* CB_ERR_INVALID naming the token and its byte offset */
  CB_TOK_SPECIAL_TEXT,        /* encoded as ordinary text (encode_ordinary;
                                 split_special_tokens for tokenizer.json) */
} cb_tok_special_mode;

typedef struct cb_tok_encode_params {
  cb_tok_special_mode special;
  /* NULL-terminated special-token texts always encoded as their id whatever the mode
   * (tiktoken's allowed_special = {...}); NULL for none. */
  const char *const *allowed_special;
  /* tokenizer.json: apply its post-processor template (e.g. Llama's BOS), as
   * `encode(text, add_special_tokens=True)`. Ignored for tiktoken. Default 0. */
  int add_special_tokens;
} cb_tok_encode_params;

void cb_tok_default_encode_params(cb_tok_encode_params *p);

/* A growable id array; a zeroed struct is an empty one. */
typedef struct cb_tok_ids {
  cb_tok_id *ids; /* owned */
  size_t len;
  size_t cap;
} cb_tok_ids;

void cb_tok_ids_free(cb_tok_ids *ids);

/*
 * Encode `len` bytes of `text` (need not be NUL-terminated) and append the ids to
 * `out`. `params` NULL means the defaults. On error (CB_ERR_INVALID for rejected
 * special text) `out` keeps its old length.
 */
cb_status cb_tok_encode(const cb_tok *tok, const char *text, size_t len,
                        const cb_tok_encode_params *params, cb_tok_ids *out, cb_error *err);

/*
 * The token-count callback for other modules (the workload's synthetic prompts, the
 * runner's output count when a server gives no usage): `ctx` is a `cb_tok *`.
 * Special-token text counts as ordinary text and no post-processor tokens are added,
 * so it never fails.
 */
typedef size_t (*cb_tok_count_fn)(void *ctx, const char *text, size_t len);
size_t cb_tok_count(void *ctx, const char *text, size_t len);

/*
 * Append the bytes of `ids` to `out` (tiktoken: the tokens' bytes; tokenizer.json:
 * its decoder chain, special tokens included, without the final lossy UTF-8
 * conversion). CB_ERR_RANGE naming the first unknown id; `out` is then unchanged.
 */
cb_status cb_tok_decode(const cb_tok *tok, const cb_tok_id *ids, size_t n, cb_buf *out,
                        cb_error *err);

/* ---- exact-length text ------------------------------------------------------------ */

/*
 * Append to `out` text that `count` (e.g. cb_tok_count with a tokenizer) measures at
 * exactly `n_tokens`: a run of the corpus's own words (split at ASCII whitespace,
 * joined by single spaces, wrapping around) from a word drawn with `seed`, cut to the
 * exact length, so prompts are natural and differ by seed. Invalid UTF-8 in the
 * corpus is replaced first; the text is valid UTF-8 and always verified by `count`.
 * CB_ERR_INVALID for an empty or whitespace-only corpus; CB_ERR_RANGE if no exact
 * length could be found (not seen with real tokenizers: the last resort adds
 * single-token words).
 */
cb_status cb_tok_synth(cb_tok_count_fn count, void *ctx, const char *corpus,
                       size_t corpus_len, size_t n_tokens, uint64_t seed, cb_buf *out,
                       cb_error *err);

/* ---- The approximate tokenizer -------------------------------------------------- */

/*
 * The documented approximation used for token counts and ids until a real tokenizer
 * is given (docs/simulator.md, "The approximate tokenizer"): split text into pieces
 * shaped like cl100k's, hash each piece to an id in [0, vocab). Writes up to max_ids
 * ids (ids may be NULL to only count) and returns the number of tokens in the whole
 * text.
 */
size_t cb_tok_approx_tokenize(const char *text, size_t len, uint32_t vocab, uint32_t *ids,
                              size_t max_ids);

/* As cb_tok_approx_tokenize, also giving each token's end offset in `text` (bytes),
 * so text can be streamed token by token. ids and ends may each be NULL. */
size_t cb_tok_approx_split(const char *text, size_t len, uint32_t vocab, uint32_t *ids,
                           size_t *ends, size_t max_tokens);

/* The id of one piece (the bytes of exactly one approximate token). */
uint32_t cb_tok_approx_id(const char *piece, size_t len, uint32_t vocab);

#ifdef __cplusplus
}
#endif
#endif
