/*
 * load_tiktoken.c - tiktoken encodings: the built-in facts of each named encoding
 * (regex, special tokens, vocabulary size) and the two rank formats.
 *
 *   .tiktoken (tiktoken's own files)     "BASE64 RANK\n" per token
 *   tiktoken npm encoders/NAME.json      {"pat_str", "special_tokens", "bpe_ranks",
 *                                         "explicit_n_vocab"?}; bpe_ranks packs runs of
 *                                         consecutive ranks as "! OFFSET B64 B64 ...\n"
 *
 * The rank of a token is its id. Rank data is checked as tiktoken checks it: every
 * single byte must be a token, and with explicit_n_vocab the ranks plus the special
 * tokens must number exactly that many.
 */
#include <jansson.h>
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"
#include "util/base64.h"

#define PAT_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define PAT_CL100K                                                                     \
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "         \
  "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
#define PAT_O200K                                                                        \
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" \
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+" \
  "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| "              \
  "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

typedef struct known_encoding {
  const char *name;
  const char *pattern;
  cb_tok_special_def specials[6];
  size_t num_specials;
  size_t n_vocab; /* 0: not checked */
} known_encoding;

static const known_encoding known[] = {
    {"gpt2", PAT_GPT2, {{"<|endoftext|>", 50256}}, 1, 50257},
    {"r50k_base", PAT_GPT2, {{"<|endoftext|>", 50256}}, 1, 50257},
    {"p50k_base", PAT_GPT2, {{"<|endoftext|>", 50256}}, 1, 50281},
    {"p50k_edit", PAT_GPT2,
     {{"<|endoftext|>", 50256}, {"<|fim_prefix|>", 50281}, {"<|fim_middle|>", 50282},
      {"<|fim_suffix|>", 50283}},
     4, 0},
    {"cl100k_base", PAT_CL100K,
     {{"<|endoftext|>", 100257}, {"<|fim_prefix|>", 100258}, {"<|fim_middle|>", 100259},
      {"<|fim_suffix|>", 100260}, {"<|endofprompt|>", 100276}},
     5, 0},
    {"o200k_base", PAT_O200K, {{"<|endoftext|>", 199999}, {"<|endofprompt|>", 200018}}, 2, 0},
};

const char *cb__tiktoken_known_names(void) {
  return "cl100k_base, o200k_base, p50k_base, p50k_edit, r50k_base, gpt2";
}

static const known_encoding *find_known(const char *name) {
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(known[i].name, name)) return &known[i];
  return NULL;
}

static cb_status add_rank(cb_tok *tok, const char *name, long line, const char *b64, size_t n,
                          unsigned long rank, cb_error *err) {
  unsigned char small[512];
  unsigned char *buf = n / 4 * 3 + 3 <= sizeof small ? small : cb_malloc(n / 4 * 3 + 3);
  size_t len;
  cb_status st = CB_OK;
  if (cb__base64_decode(b64, n, buf, &len))
    st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "bad base64 token '%.*s'", (int)(n > 40 ? 40 : n), b64);
  else if (rank > CB__TOK_MAX_ID)
    st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "rank %lu is larger than %d", rank, CB__TOK_MAX_ID);
  else {
    int r = cb__vocab_add(&tok->vocab, buf, len, (uint32_t)rank);
    if (r == 1)
      st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "token '%.*s' appears twice", (int)n, b64);
    else if (r == 2)
      st = cb_error_at(err, CB_ERR_PARSE, name, line, 0, "rank %lu appears twice", rank);
  }
  if (buf != small) cb_free(buf);
  return st;
}

static int parse_ulong(const char *s, size_t n, unsigned long *out) {
  if (!n || n > 10) return -1;
  unsigned long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  *out = v;
  return 0;
}

/* Parse either rank format into tok->vocab. */
static cb_status parse_ranks(cb_tok *tok, const char *name, const char *s, size_t n,
                             cb_error *err) {
  size_t lines = 1;
  for (size_t i = 0; i < n; i++) lines += s[i] == '\n' || s[i] == ' ';
  cb__vocab_init(&tok->vocab, lines);
  long line = 0;
  for (size_t i = 0; i < n;) {
    line++;
    const char *eol = memchr(s + i, '\n', n - i);
    size_t end = eol ? (size_t)(eol - s) : n;
    size_t lend = end;
    if (lend > i && s[lend - 1] == '\r') lend--;
    if (lend > i && s[i] == '!' && i + 1 < lend && s[i + 1] == ' ') {
      /* packed: "! OFFSET tok tok ..." */
      size_t p = i + 2, q = p;
      while (q < lend && s[q] != ' ') q++;
      unsigned long rank;
      if (parse_ulong(s + p, q - p, &rank))
        return cb_error_at(err, CB_ERR_PARSE, name, line, 0, "expected '! OFFSET TOKENS...'");
      while (q < lend) {
        p = q + 1;
        q = p;
        while (q < lend && s[q] != ' ') q++;
        if (q == p) continue;
        cb_status st = add_rank(tok, name, line, s + p, q - p, rank++, err);
        if (st != CB_OK) return st;
      }
    } else if (lend > i) {
      const char *sp = memchr(s + i, ' ', lend - i);
      unsigned long rank;
      if (!sp || parse_ulong(sp + 1, (size_t)(s + lend - sp - 1), &rank))
        return cb_error_at(err, CB_ERR_PARSE, name, line, 0,
                           "expected 'BASE64 RANK', got '%.*s'", (int)(lend - i > 60 ? 60 : lend - i), s + i);
      cb_status st = add_rank(tok, name, line, s + i, (size_t)(sp - (s + i)), rank, err);
      if (st != CB_OK) return st;
    }
    i = end + 1;
  }
  for (int b = 0; b < 256; b++)
    if (tok->vocab.byte_id[b] == CB__TOK_NONE)
      return cb_error_at(err, CB_ERR_PARSE, name, 0, 0,
                         "the single byte 0x%02X is not a token: not a byte-level BPE rank file", b);
  return CB_OK;
}

static cb_status finish(cb_tok *tok, const char *name, const char *pattern,
                        const cb_tok_special_def *specials, size_t num_specials,
                        size_t n_vocab, cb_error *err) {
  for (size_t i = 0; i < num_specials; i++) {
    if (cb__vocab_has(&tok->vocab, specials[i].id))
      return cb_error_at(err, CB_ERR_PARSE, name, 0, 0,
                         "special token %s has id %u, which is also a rank", specials[i].text,
                         (unsigned)specials[i].id);
    cb__tok_add_special(tok, specials[i].text, strlen(specials[i].text), specials[i].id, 1, 0, 0, 0);
  }
  cb__tok_finish_specials(tok);
  cb__vocab_index_pairs(&tok->vocab);
  if (n_vocab && tok->vocab.count + num_specials != n_vocab)
    return cb_error_at(err, CB_ERR_PARSE, name, 0, 0,
                       "%zu ranks + %zu special tokens != the encoding's %zu tokens: wrong file?",
                       tok->vocab.count, num_specials, n_vocab);
  tok->pretok[0].kind = CB__PRETOK_REGEX_MATCHES;
  cb_status st = cb__regex_compile(&tok->pretok[0].re, pattern, name, err);
  if (st != CB_OK) return st;
  tok->n_pretok = 1;
  return CB_OK;
}

cb_status cb_tok_load_tiktoken_mem(const char *name, const char *ranks, size_t ranks_len,
                                   const char *pattern, const cb_tok_special_def *specials,
                                   size_t num_specials, cb_tok **out, cb_error *err) {
  *out = NULL;
  cb_tok *tok = cb__tok_new(CB_TOK_KIND_TIKTOKEN, name);
  cb_status st = parse_ranks(tok, name, ranks, ranks_len, err);
  if (st == CB_OK) st = finish(tok, name, pattern, specials, num_specials, 0, err);
  if (st != CB_OK) {
    cb_tok_free(tok);
    return st;
  }
  *out = tok;
  return CB_OK;
}

/* The encoding name a path stands for: its base name without the extension. */
static void base_name(const char *path, char *out, size_t cap) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t n = strcspn(b, ".");
  if (n >= cap) n = cap - 1;
  memcpy(out, b, n);
  out[n] = '\0';
}

cb_status cb__tok_load_tiktoken_file(const char *path, const char *data, size_t len,
                                     cb_tok **out, cb_error *err) {
  char enc[128];
  base_name(path, enc, sizeof enc);
  const known_encoding *k = find_known(enc);
  if (!k)
    return cb_error_at(err, CB_ERR_UNSUPPORTED, path, 0, 0,
                       "a .tiktoken file holds only ranks; its name must say the encoding "
                       "(%s) to give the regex and special tokens, or use the tiktoken npm "
                       "package's JSON encoder",
                       cb__tiktoken_known_names());
  *out = NULL;
  cb_tok *tok = cb__tok_new(CB_TOK_KIND_TIKTOKEN, k->name);
  cb_status st = parse_ranks(tok, path, data, len, err);
  if (st == CB_OK) st = finish(tok, path, k->pattern, k->specials, k->num_specials, k->n_vocab, err);
  if (st != CB_OK) {
    cb_tok_free(tok);
    return st;
  }
  *out = tok;
  return CB_OK;
}

/* The tiktoken npm package's encoders/NAME.json, already parsed. */
cb_status cb__tok_load_tiktoken_json(const char *path, json_t *root, cb_tok **out,
                                     cb_error *err) {
  *out = NULL;
  json_t *pat = json_object_get(root, "pat_str");
  json_t *ranks = json_object_get(root, "bpe_ranks");
  json_t *specials = json_object_get(root, "special_tokens");
  json_t *nv = json_object_get(root, "explicit_n_vocab");
  if (!json_is_string(pat) || !json_is_string(ranks))
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                       "tiktoken encoder JSON needs string fields 'pat_str' and 'bpe_ranks'");
  if (specials && !json_is_object(specials))
    return cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "'special_tokens' must be an object");
  size_t ns = specials ? json_object_size(specials) : 0;
  cb_tok_special_def *defs = cb_calloc(ns ? ns : 1, sizeof *defs);
  size_t i = 0;
  const char *key;
  json_t *val;
  cb_status st = CB_OK;
  if (specials) json_object_foreach(specials, key, val) {
      if (!json_is_integer(val) || json_integer_value(val) < 0 ||
          json_integer_value(val) > CB__TOK_MAX_ID) {
        st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0,
                         "special_tokens['%s'] must be a token id", key);
        break;
      }
      defs[i].text = key;
      defs[i++].id = (cb_tok_id)json_integer_value(val);
    }
  char enc[128];
  base_name(path, enc, sizeof enc);
  const known_encoding *k = find_known(enc);
  cb_tok *tok = NULL;
  if (st == CB_OK) {
    tok = cb__tok_new(CB_TOK_KIND_TIKTOKEN, k ? k->name : path);
    st = parse_ranks(tok, path, json_string_value(ranks), json_string_length(ranks), err);
  }
  if (st == CB_OK)
    st = finish(tok, path, json_string_value(pat), defs, ns,
                json_is_integer(nv) ? (size_t)json_integer_value(nv) : 0, err);
  cb_free(defs);
  if (st != CB_OK) {
    cb_tok_free(tok);
    return st;
  }
  *out = tok;
  return CB_OK;
}
