/*
 * load_hf.c - Hugging Face tokenizer.json (the `tokenizers` library's format).
 *
 * Supported, each as `tokenizers` defines it:
 *   model           BPE: vocab, merges ("a b" strings or [a, b] pairs), unk_token,
 *                   fuse_unk, byte_fallback, ignore_merges; dropout null/0;
 *                   continuing_subword_prefix / end_of_word_suffix null or "";
 *                   WordPiece: vocab, unk_token, continuing_subword_prefix,
 *                   max_input_chars_per_word (bert.c);
 *                   Unigram: vocab [[piece, score]], unk_id, byte_fallback (unigram.c)
 *   normalizer      NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Nmt, Precompiled
 *                   (SentencePiece's charsmap, precompiled.c), Prepend, Replace
 *                   (String, or a Regex that cannot match empty text), BertNormalizer,
 *                   Sequence
 *   pre_tokenizer   Split (Regex or String; Isolated or Removed; not inverted),
 *                   ByteLevel, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence
 *   post_processor  TemplateProcessing ($A with special tokens around it),
 *                   BertProcessing, ByteLevel, Sequence
 *   decoder         ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece,
 *                   Sequence
 *   added_tokens    special or not, normalized or not, lstrip/rstrip
 * Everything else fails with CB_ERR_UNSUPPORTED naming the component and its type.
 * truncation and padding are ignored: calibench counts whole texts.
 *
 * Byte-level vocabularies (those behind a ByteLevel pre-tokenizer) are stored as the
 * raw bytes their characters stand for (GPT-2's byte-to-unicode map), so the merge
 * loop works on bytes as for tiktoken and decoding is a concatenation.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

#define GPT2_PATTERN "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

typedef struct hf_ctx {
  cb_tok *tok;
  const char *name;
  cb_error *err;
} hf_ctx;

static cb_status unsupported(hf_ctx *c, const char *what, const char *type, const char *known) {
  return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                     "%s type '%s' is not supported (supported: %s)", what, type ? type : "?", known);
}

static cb_status bad(hf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static cb_status bad(hf_ctx *c, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cb_error_at(c->err, CB_ERR_PARSE, c->name, 0, 0, "%s", msg);
}

static const char *type_of(json_t *o) { return json_string_value(json_object_get(o, "type")); }

static int get_bool(json_t *o, const char *key, int dflt) {
  json_t *v = json_object_get(o, key);
  return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* A tokenizer.json string as the bytes our vocab uses: for byte-level models each
 * character is the byte it stands for, unless some character is not in the map (then
 * the UTF-8 as is, as tokenizers' ByteLevel decoder does). */
static void vocab_key(const cb_tok *tok, const char *s, size_t n, cb_buf *out) {
  cb_buf_reset(out);
  if (tok->byte_level) {
    for (size_t i = 0; i < n;) {
      size_t len;
      int b = cb__unicode_to_byte(cb__utf8_decode((const unsigned char *)s + i, &len));
      if (b < 0) {
        cb_buf_reset(out);
        break;
      }
      cb_buf_append_char(out, (char)b);
      i += len;
    }
    if (out->len || n == 0) {
      if (!out->data) cb_buf_append(out, "", 0);
      return;
    }
  }
  cb_buf_append(out, s, n);
}

/* ---- components ------------------------------------------------------------------- */

typedef cb_status (*hf_add_step)(hf_ctx *c, json_t *p);

/* A "Sequence" step: adds each member of its list `key` in order. */
static cb_status add_sequence(hf_ctx *c, json_t *p, const char *key, hf_add_step add) {
  json_t *list = json_object_get(p, key), *v;
  size_t i;
  json_array_foreach(list, i, v) {
    cb_status st = add(c, v);
    if (st != CB_OK) return st;
  }
  return CB_OK;
}

/* The pipeline holds at most CB__TOK_MAX_STEPS steps of each kind. */
static cb_status too_many_steps(hf_ctx *c, const char *what) {
  return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0, "more than %d %s", CB__TOK_MAX_STEPS, what);
}

static cb_status add_pretok(hf_ctx *c, json_t *p) {
  cb_tok *tok = c->tok;
  const char *type = type_of(p);
  if (type && !strcmp(type, "Sequence")) return add_sequence(c, p, "pretokenizers", add_pretok);
  if (tok->n_pretok >= CB__TOK_MAX_STEPS) return too_many_steps(c, "pre-tokenizers");
  cb__pretok *pt = &tok->pretok[tok->n_pretok];
  memset(pt, 0, sizeof *pt);
  if (type && !strcmp(type, "Split")) {
    json_t *pat = json_object_get(p, "pattern");
    const char *behavior = json_string_value(json_object_get(p, "behavior"));
    if (get_bool(p, "invert", 0))
      return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0, "pre_tokenizer Split with invert: true is not supported");
    if (behavior && !strcmp(behavior, "Isolated")) pt->kind = CB__PRETOK_SPLIT;
    else if (behavior && !strcmp(behavior, "Removed")) pt->kind = CB__PRETOK_SPLIT_REMOVED;
    else
      return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                         "pre_tokenizer Split behavior '%s' is not supported (supported: Isolated, Removed)",
                         behavior ? behavior : "?");
    const char *re = json_string_value(json_object_get(pat, "Regex"));
    const char *str = json_string_value(json_object_get(pat, "String"));
    cb_status st;
    if (re) {
      st = cb__regex_compile(&pt->re, re, c->name, c->err);
    } else if (str) {
      cb_buf q; /* the literal string: escape every ASCII punctuation character */
      cb_buf_init(&q, 0);
      for (const char *ch = str; *ch; ch++) {
        unsigned char u = (unsigned char)*ch;
        if (u < 0x80 && !(u >= '0' && u <= '9') && !(u >= 'a' && u <= 'z') && !(u >= 'A' && u <= 'Z'))
          cb_buf_append_char(&q, '\\');
        cb_buf_append_char(&q, *ch);
      }
      st = cb__regex_compile(&pt->re, q.data, c->name, c->err);
      cb_buf_free(&q);
    } else {
      return bad(c, "pre_tokenizer Split needs a pattern {\"Regex\": ...} or {\"String\": ...}");
    }
    if (st != CB_OK) return st;
  } else if (type && !strcmp(type, "ByteLevel")) {
    pt->kind = CB__PRETOK_BYTELEVEL;
    pt->add_prefix_space = get_bool(p, "add_prefix_space", 1);
    pt->use_regex = get_bool(p, "use_regex", 1);
    tok->byte_level = 1;
    if (pt->use_regex) {
      cb_status st = cb__regex_compile(&pt->re, GPT2_PATTERN, c->name, c->err);
      if (st != CB_OK) return st;
    }
  } else if (type && !strcmp(type, "Metaspace")) {
    pt->kind = CB__PRETOK_METASPACE;
    const char *rep = json_string_value(json_object_get(p, "replacement"));
    pt->replacement = cb_strdup(rep ? rep : "\xE2\x96\x81");
    const char *scheme = json_string_value(json_object_get(p, "prepend_scheme"));
    if (scheme) pt->prepend = !strcmp(scheme, "always") ? 1 : !strcmp(scheme, "first") ? 2 : 0;
    else pt->prepend = get_bool(p, "add_prefix_space", 1);
    pt->use_regex = get_bool(p, "split", 1); /* "split" reuses the flag */
  } else if (type && !strcmp(type, "BertPreTokenizer")) {
    pt->kind = CB__PRETOK_BERT;
  } else if (type && !strcmp(type, "WhitespaceSplit")) {
    pt->kind = CB__PRETOK_WHITESPACE_SPLIT;
  } else {
    return unsupported(c, "pre_tokenizer", type,
                       "Split, ByteLevel, Metaspace, BertPreTokenizer, WhitespaceSplit, Sequence");
  }
  tok->n_pretok++;
  return CB_OK;
}

static cb_status add_norm(hf_ctx *c, json_t *p) {
  cb_tok *tok = c->tok;
  const char *type = type_of(p);
  if (type && !strcmp(type, "Sequence")) return add_sequence(c, p, "normalizers", add_norm);
  if (tok->n_norm >= CB__TOK_MAX_STEPS) return too_many_steps(c, "normalizers");
  cb__norm *nm = &tok->norm[tok->n_norm];
  memset(nm, 0, sizeof *nm);
  static const struct {
    const char *type;
    cb__norm_kind kind;
  } plain[] = {{"NFC", CB__NORM_NFC},
               {"NFD", CB__NORM_NFD},
               {"NFKC", CB__NORM_NFKC},
               {"NFKD", CB__NORM_NFKD},
               {"Lowercase", CB__NORM_LOWERCASE},
               {"StripAccents", CB__NORM_STRIP_ACCENTS},
               {"Nmt", CB__NORM_NMT}};
  for (size_t i = 0; type && i < sizeof plain / sizeof plain[0]; i++)
    if (!strcmp(type, plain[i].type)) {
      nm->kind = plain[i].kind;
      tok->n_norm++;
      return CB_OK;
    }
  if (type && !strcmp(type, "Strip")) {
    json_t *l = json_object_get(p, "strip_left"), *r = json_object_get(p, "strip_right");
    if (!json_is_boolean(l) || !json_is_boolean(r))
      return bad(c, "normalizer Strip needs strip_left and strip_right (true or false)");
    nm->kind = CB__NORM_STRIP;
    nm->flags = (json_is_true(l) ? 1 : 0) | (json_is_true(r) ? 2 : 0);
  } else if (type && !strcmp(type, "Precompiled")) {
    const char *map = json_string_value(json_object_get(p, "precompiled_charsmap"));
    if (!map) return bad(c, "normalizer Precompiled needs 'precompiled_charsmap' (a base64 string)");
    cb_status st = cb__charsmap_load(&nm->map, map, c->name, c->err);
    if (st != CB_OK) return st;
    nm->kind = CB__NORM_PRECOMPILED;
    tok->extra_bytes += cb__charsmap_memory(&nm->map);
  } else if (type && !strcmp(type, "Prepend")) {
    const char *s = json_string_value(json_object_get(p, "prepend"));
    if (!s) return bad(c, "normalizer Prepend needs 'prepend'");
    nm->kind = CB__NORM_PREPEND;
    nm->a = cb_strdup(s);
  } else if (type && !strcmp(type, "Replace")) {
    json_t *pat = json_object_get(p, "pattern");
    const char *s = json_string_value(json_object_get(pat, "String"));
    const char *re = json_string_value(json_object_get(pat, "Regex"));
    const char *content = json_string_value(json_object_get(p, "content"));
    if (!s && !re) return bad(c, "normalizer Replace needs a pattern {\"String\": ...} or {\"Regex\": ...}");
    if (!content) return bad(c, "normalizer Replace needs 'content'");
    if (re) {
      cb_status st = cb__regex_compile(&nm->re, re, c->name, c->err);
      if (st != CB_OK) return st;
      uint32_t min = 0;
      pcre2_pattern_info(nm->re.code, PCRE2_INFO_MINLENGTH, &min);
      if (min == 0) { /* the reference would insert content at every empty match */
        cb__regex_free(&nm->re);
        return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                           "normalizer Replace: Regex '%s' can match empty text, which is not supported", re);
      }
      tok->extra_bytes += nm->re.jit_bytes;
    }
    nm->kind = CB__NORM_REPLACE;
    nm->a = s ? cb_strdup(s) : NULL;
    nm->b = cb_strdup(content);
  } else if (type && !strcmp(type, "BertNormalizer")) {
    nm->kind = CB__NORM_BERT;
    int lower = get_bool(p, "lowercase", 1);
    nm->flags = (get_bool(p, "clean_text", 1) ? CB__BERT_CLEAN : 0) |
                (get_bool(p, "handle_chinese_chars", 1) ? CB__BERT_CHINESE : 0) |
                (get_bool(p, "strip_accents", lower) ? CB__BERT_STRIP : 0) | /* null: as lowercase */
                (lower ? CB__BERT_LOWER : 0);
  } else {
    return unsupported(c, "normalizer", type,
                       "NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Strip, Nmt, "
                       "Precompiled, Prepend, Replace, BertNormalizer, Sequence");
  }
  tok->n_norm++;
  return CB_OK;
}

static cb_status add_dec(hf_ctx *c, json_t *p) {
  cb_tok *tok = c->tok;
  const char *type = type_of(p);
  if (type && !strcmp(type, "Sequence")) return add_sequence(c, p, "decoders", add_dec);
  if (tok->n_dec >= CB__TOK_MAX_STEPS) return too_many_steps(c, "decoders");
  cb__dec *d = &tok->dec[tok->n_dec];
  memset(d, 0, sizeof *d);
  if (type && !strcmp(type, "ByteLevel")) {
    d->kind = CB__DEC_BYTELEVEL;
  } else if (type && !strcmp(type, "ByteFallback")) {
    d->kind = CB__DEC_BYTEFALLBACK;
  } else if (type && !strcmp(type, "Fuse")) {
    d->kind = CB__DEC_FUSE;
  } else if (type && !strcmp(type, "Replace")) {
    const char *s = json_string_value(json_object_get(json_object_get(p, "pattern"), "String"));
    const char *content = json_string_value(json_object_get(p, "content"));
    if (!s || !content)
      return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                         "decoder Replace needs a String pattern and content");
    d->kind = CB__DEC_REPLACE;
    d->a = cb_strdup(s);
    d->b = cb_strdup(content);
  } else if (type && !strcmp(type, "Strip")) {
    const char *s = json_string_value(json_object_get(p, "content"));
    d->kind = CB__DEC_STRIP;
    snprintf(d->strip_char, sizeof d->strip_char, "%s", s ? s : " ");
    d->start = (int)json_integer_value(json_object_get(p, "start"));
    d->stop = (int)json_integer_value(json_object_get(p, "stop"));
  } else if (type && !strcmp(type, "Metaspace")) {
    const char *rep = json_string_value(json_object_get(p, "replacement"));
    const char *scheme = json_string_value(json_object_get(p, "prepend_scheme"));
    d->kind = CB__DEC_METASPACE;
    d->a = cb_strdup(rep ? rep : "\xE2\x96\x81");
    d->start = scheme ? strcmp(scheme, "never") != 0 : get_bool(p, "add_prefix_space", 1);
  } else if (type && !strcmp(type, "WordPiece")) {
    const char *prefix = json_string_value(json_object_get(p, "prefix"));
    d->kind = CB__DEC_WORDPIECE;
    d->a = cb_strdup(prefix ? prefix : "##");
    d->start = get_bool(p, "cleanup", 1);
  } else {
    return unsupported(c, "decoder", type, "ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece, Sequence");
  }
  tok->n_dec++;
  return CB_OK;
}

/* BertProcessing: [CLS] $A [SEP], each given as ["text", id]. */
static cb_status add_bert_post(hf_ctx *c, json_t *p) {
  cb_tok *tok = c->tok;
  json_t *cls = json_array_get(json_object_get(p, "cls"), 1);
  json_t *sep = json_array_get(json_object_get(p, "sep"), 1);
  if (!json_is_integer(cls) || !json_is_integer(sep) || json_integer_value(cls) < 0 ||
      json_integer_value(sep) < 0 || json_integer_value(cls) > CB__TOK_MAX_ID ||
      json_integer_value(sep) > CB__TOK_MAX_ID)
    return bad(c, "post_processor BertProcessing needs 'cls' and 'sep' as [\"text\", id]");
  tok->bos_ids = cb_reallocarray(tok->bos_ids, tok->n_bos + 1, sizeof *tok->bos_ids);
  tok->bos_ids[tok->n_bos++] = (cb_tok_id)json_integer_value(cls);
  tok->eos_ids = cb_reallocarray(tok->eos_ids, tok->n_eos + 1, sizeof *tok->eos_ids);
  tok->eos_ids[tok->n_eos++] = (cb_tok_id)json_integer_value(sep);
  return CB_OK;
}

static cb_status add_post(hf_ctx *c, json_t *p, json_t *root) {
  cb_tok *tok = c->tok;
  const char *type = type_of(p);
  if (type && !strcmp(type, "Sequence")) {
    json_t *list = json_object_get(p, "processors"), *v;
    size_t i;
    json_array_foreach(list, i, v) {
      cb_status st = add_post(c, v, root);
      if (st != CB_OK) return st;
    }
    return CB_OK;
  }
  if (type && !strcmp(type, "ByteLevel")) return CB_OK; /* offsets only */
  if (type && !strcmp(type, "BertProcessing")) return add_bert_post(c, p);
  if (!type || strcmp(type, "TemplateProcessing"))
    return unsupported(c, "post_processor", type, "TemplateProcessing, BertProcessing, ByteLevel, Sequence");
  json_t *single = json_object_get(p, "single"), *specials = json_object_get(p, "special_tokens"), *v;
  size_t i;
  int seen_a = 0;
  json_array_foreach(single, i, v) {
    if (json_object_get(v, "Sequence")) {
      seen_a = 1;
      continue;
    }
    const char *sid = json_string_value(json_object_get(json_object_get(v, "SpecialToken"), "id"));
    json_t *ids = json_object_get(json_object_get(specials, sid ? sid : ""), "ids"), *idv;
    if (!sid || !json_is_array(ids))
      return bad(c, "post_processor TemplateProcessing: special token '%s' has no ids", sid ? sid : "?");
    size_t j;
    json_array_foreach(ids, j, idv) {
      if (!json_is_integer(idv) || json_integer_value(idv) < 0 || json_integer_value(idv) > CB__TOK_MAX_ID)
        return bad(c, "post_processor TemplateProcessing: special token '%s' has a bad id", sid);
      cb_tok_id id = (cb_tok_id)json_integer_value(idv);
      if (seen_a) {
        tok->eos_ids = cb_reallocarray(tok->eos_ids, tok->n_eos + 1, sizeof *tok->eos_ids);
        tok->eos_ids[tok->n_eos++] = id;
      } else {
        tok->bos_ids = cb_reallocarray(tok->bos_ids, tok->n_bos + 1, sizeof *tok->bos_ids);
        tok->bos_ids[tok->n_bos++] = id;
      }
    }
  }
  return CB_OK;
}

/* ---- model ------------------------------------------------------------------------- */

/* A {"token": id} vocab object into tok->vocab; `key` is scratch. */
static cb_status load_vocab(hf_ctx *c, json_t *vocab, cb_buf *key) {
  cb_tok *tok = c->tok;
  cb__vocab_init(&tok->vocab, json_object_size(vocab));
  const char *k;
  json_t *v;
  json_object_foreach(vocab, k, v) {
    json_int_t id = json_integer_value(v);
    if (!json_is_integer(v) || id < 0 || id > CB__TOK_MAX_ID)
      return bad(c, "model vocab: '%s' needs an integer id in [0, %d]", k, CB__TOK_MAX_ID);
    vocab_key(tok, k, strlen(k), key);
    if (cb__vocab_add(&tok->vocab, key->data, key->len, (uint32_t)id) == 2)
      return bad(c, "model vocab: id of '%s' is used twice", k);
    if (key->len > tok->max_token_len) tok->max_token_len = key->len;
  }
  return CB_OK;
}

/* WordPiece (BERT): vocab, unk_token (must be in the vocab: every word that cannot be
 * split becomes it), continuing_subword_prefix, max_input_chars_per_word. */
static cb_status load_wordpiece(hf_ctx *c, json_t *m) {
  cb_tok *tok = c->tok;
  json_t *vocab = json_object_get(m, "vocab");
  if (!json_is_object(vocab)) return bad(c, "model WordPiece needs a 'vocab' object");
  tok->kind = CB_TOK_KIND_HF_WORDPIECE;
  const char *prefix = json_string_value(json_object_get(m, "continuing_subword_prefix"));
  tok->wp_prefix = cb_strdup(prefix ? prefix : "##");
  json_t *max = json_object_get(m, "max_input_chars_per_word");
  tok->wp_max_chars = json_is_integer(max) && json_integer_value(max) >= 0 ? (size_t)json_integer_value(max) : 100;
  cb_buf key;
  cb_buf_init(&key, 0);
  cb_status st = load_vocab(c, vocab, &key);
  cb_buf_free(&key);
  if (st != CB_OK) return st;
  const char *unk = json_string_value(json_object_get(m, "unk_token"));
  if (!unk) unk = "[UNK]";
  tok->unk_id = cb__vocab_find(&tok->vocab, unk, strlen(unk));
  if (tok->unk_id == CB__TOK_NONE)
    return bad(c, "model WordPiece: unk_token '%s' is not in the vocab", unk);
  return CB_OK;
}

/* Unigram (SentencePiece): vocab [[piece, score], ...] whose positions are the ids,
 * unk_id (required: the reference fails on text it cannot cover without one),
 * byte_fallback. */
static cb_status load_unigram(hf_ctx *c, json_t *m) {
  cb_tok *tok = c->tok;
  json_t *vocab = json_object_get(m, "vocab"), *unk = json_object_get(m, "unk_id");
  if (!json_is_array(vocab)) return bad(c, "model Unigram needs a 'vocab' array of [piece, score]");
  size_t n = json_array_size(vocab);
  if (n == 0 || n > (size_t)CB__TOK_MAX_ID + 1)
    return bad(c, "model Unigram: vocab needs 1 to %d pieces, has %zu", CB__TOK_MAX_ID + 1, n);
  if (!json_is_integer(unk) || json_integer_value(unk) < 0 || (size_t)json_integer_value(unk) >= n)
    return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                       "model Unigram needs an unk_id in [0, %zu) (one without is not supported)", n);
  tok->kind = CB_TOK_KIND_HF_UNIGRAM;
  tok->unk_id = (uint32_t)json_integer_value(unk);
  tok->byte_fallback = get_bool(m, "byte_fallback", 0);
  tok->scores = cb_reallocarray(NULL, n, sizeof *tok->scores);
  tok->min_score = 0;
  cb__vocab_init(&tok->vocab, n);
  cb_buf key;
  cb_buf_init(&key, 0);
  cb_status st = CB_OK;
  size_t i;
  json_t *e;
  json_array_foreach(vocab, i, e) {
    json_t *piece = json_array_get(e, 0), *score = json_array_get(e, 1);
    if (json_array_size(e) != 2 || !json_is_string(piece) || !json_is_number(score)) {
      st = bad(c, "model Unigram: vocab entry %zu is not [piece, score]", i);
      break;
    }
    vocab_key(tok, json_string_value(piece), json_string_length(piece), &key);
    if (cb__vocab_add(&tok->vocab, key.data, key.len, (uint32_t)i) != 0) {
      st = bad(c, "model Unigram: piece '%s' is listed twice", json_string_value(piece));
      break;
    }
    tok->scores[i] = json_number_value(score);
    if (i == 0 || tok->scores[i] < tok->min_score) tok->min_score = tok->scores[i];
    if (key.len > tok->max_token_len) tok->max_token_len = key.len;
  }
  cb_buf_free(&key);
  if (st == CB_OK && tok->byte_fallback)
    for (int b = 0; b < 256; b++) {
      char name[8];
      snprintf(name, sizeof name, "<0x%02X>", b);
      tok->fallback_id[b] = cb__vocab_find(&tok->vocab, name, 6);
    }
  return st;
}

static cb_status load_model(hf_ctx *c, json_t *m) {
  cb_tok *tok = c->tok;
  const char *type = type_of(m);
  json_t *vocab = json_object_get(m, "vocab"), *merges = json_object_get(m, "merges");
  if (type && !strcmp(type, "WordPiece")) return load_wordpiece(c, m);
  if (type && !strcmp(type, "Unigram")) return load_unigram(c, m);
  if (type && strcmp(type, "BPE"))
    return unsupported(c, "model", type, "BPE, WordPiece, Unigram");
  if (!type && !json_is_array(merges)) return unsupported(c, "model", "(none)", "BPE, WordPiece, Unigram");
  if (!json_is_object(vocab) || !json_is_array(merges))
    return bad(c, "model BPE needs a 'vocab' object and a 'merges' array");
  json_t *dropout = json_object_get(m, "dropout");
  if (json_is_number(dropout) && json_number_value(dropout) > 0)
    return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0, "model BPE with dropout is not supported (results would be random)");
  const char *affix[] = {"continuing_subword_prefix", "end_of_word_suffix"};
  for (int i = 0; i < 2; i++) {
    const char *s = json_string_value(json_object_get(m, affix[i]));
    if (s && *s)
      return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0, "model BPE %s '%s' is not supported", affix[i], s);
  }
  tok->byte_fallback = get_bool(m, "byte_fallback", 0);
  tok->fuse_unk = get_bool(m, "fuse_unk", 0);
  tok->ignore_merges = get_bool(m, "ignore_merges", 0);

  cb_buf key;
  cb_buf_init(&key, 0);
  cb_status st = load_vocab(c, vocab, &key);
  const char *unk = json_string_value(json_object_get(m, "unk_token"));
  if (st == CB_OK && unk) {
    vocab_key(tok, unk, strlen(unk), &key);
    tok->unk_id = cb__vocab_find(&tok->vocab, key.data, key.len);
  }
  if (st == CB_OK && tok->byte_fallback)
    for (int b = 0; b < 256; b++) {
      char name[8];
      snprintf(name, sizeof name, "<0x%02X>", b);
      tok->fallback_id[b] = cb__vocab_find(&tok->vocab, name, 6);
    }
  cb__pairmap_init(&tok->pairs, json_array_size(merges));
  size_t i;
  json_t *mg;
  cb_buf kb;
  cb_buf_init(&kb, 0);
  if (st == CB_OK) json_array_foreach(merges, i, mg) {
      const char *a, *b;
      size_t al, bl;
      if (json_is_string(mg)) {
        const char *s = json_string_value(mg);
        const char *sp = strchr(s, ' ');
        if (!sp || strchr(sp + 1, ' ')) {
          st = bad(c, "model merges: '%s' is not two tokens separated by one space", s);
          break;
        }
        a = s, al = (size_t)(sp - s), b = sp + 1, bl = strlen(sp + 1);
      } else if (json_is_array(mg) && json_array_size(mg) == 2 &&
                 json_is_string(json_array_get(mg, 0)) && json_is_string(json_array_get(mg, 1))) {
        a = json_string_value(json_array_get(mg, 0)), al = json_string_length(json_array_get(mg, 0));
        b = json_string_value(json_array_get(mg, 1)), bl = json_string_length(json_array_get(mg, 1));
      } else {
        st = bad(c, "model merges: entry is neither \"a b\" nor [a, b]");
        break;
      }
      vocab_key(tok, a, al, &key);
      uint32_t ia = cb__vocab_find(&tok->vocab, key.data, key.len);
      vocab_key(tok, b, bl, &kb);
      uint32_t ib = cb__vocab_find(&tok->vocab, kb.data, kb.len);
      cb_buf_append(&key, kb.data, kb.len);
      uint32_t im = cb__vocab_find(&tok->vocab, key.data, key.len);
      if (ia == CB__TOK_NONE || ib == CB__TOK_NONE || im == CB__TOK_NONE) {
        char what[160];
        snprintf(what, sizeof what, "%.*s %.*s", (int)(al > 60 ? 60 : al), a, (int)(bl > 60 ? 60 : bl), b);
        st = bad(c, "model merges: '%s' uses or makes a token missing from the vocab", what);
        break;
      }
      cb__pairmap_add(&tok->pairs, ia, ib, (uint32_t)i, im);
    }
  cb_buf_free(&key);
  cb_buf_free(&kb);
  return st;
}

static cb_status load_added(hf_ctx *c, json_t *added) {
  cb_tok *tok = c->tok;
  size_t i;
  json_t *a;
  cb_buf key;
  cb_buf_init(&key, 0);
  json_array_foreach(added, i, a) {
    const char *content = json_string_value(json_object_get(a, "content"));
    json_t *idv = json_object_get(a, "id");
    if (!content || !json_is_integer(idv) || json_integer_value(idv) < 0 ||
        json_integer_value(idv) > CB__TOK_MAX_ID) {
      cb_buf_free(&key);
      return bad(c, "added_tokens: entry needs 'content' and an integer 'id' in [0, %d]", CB__TOK_MAX_ID);
    }
    if (get_bool(a, "single_word", 0)) {
      cb_buf_free(&key);
      return cb_error_at(c->err, CB_ERR_UNSUPPORTED, c->name, 0, 0,
                         "added token '%s' has single_word: true, which is not supported", content);
    }
    uint32_t id = (uint32_t)json_integer_value(idv);
    cb__tok_add_special(tok, content, strlen(content), id, get_bool(a, "special", 0),
                        get_bool(a, "normalized", 0), get_bool(a, "lstrip", 0), get_bool(a, "rstrip", 0));
    if (id >= tok->n_id_text) {
      uint32_t n = id + 1;
      tok->id_text = cb_reallocarray(tok->id_text, n, sizeof *tok->id_text);
      memset(tok->id_text + tok->n_id_text, 0, (n - tok->n_id_text) * sizeof *tok->id_text);
      tok->n_id_text = n;
    }
    cb_free(tok->id_text[id]);
    vocab_key(tok, content, strlen(content), &key);
    tok->id_text[id] = cb_strndup(key.data, key.len);
  }
  cb_buf_free(&key);
  return CB_OK;
}

static cb_status load_root(hf_ctx *c, json_t *root) {
  json_t *model = json_object_get(root, "model");
  json_t *norm = json_object_get(root, "normalizer");
  json_t *pre = json_object_get(root, "pre_tokenizer");
  json_t *post = json_object_get(root, "post_processor");
  json_t *dec = json_object_get(root, "decoder");
  json_t *added = json_object_get(root, "added_tokens");
  if (!json_is_object(model)) return bad(c, "tokenizer.json has no 'model' object");
  cb_status st = CB_OK;
  /* pre-tokenizer first: it says whether the vocab is byte-level */
  if (json_is_object(pre)) st = add_pretok(c, pre);
  if (st == CB_OK) st = load_model(c, model);
  if (st == CB_OK && json_is_object(norm)) st = add_norm(c, norm);
  if (st == CB_OK && json_is_object(post)) st = add_post(c, post, root);
  if (st == CB_OK && json_is_object(dec)) st = add_dec(c, dec);
  if (st == CB_OK && json_is_array(added)) st = load_added(c, added);
  if (st == CB_OK) cb__tok_finish_specials(c->tok);
  return st;
}

cb_status cb__tok_load_hf_json(const char *name, json_t *root, cb_tok **out, cb_error *err) {
  *out = NULL;
  cb_tok *tok = cb__tok_new(CB_TOK_KIND_HF_BPE, name);
  hf_ctx c = {tok, name, err};
  cb_status st = load_root(&c, root);
  if (st != CB_OK) {
    cb_tok_free(tok);
    return st;
  }
  *out = tok;
  return CB_OK;
}

cb_status cb_tok_load_hf_json_mem(const char *name, const char *json, size_t len, cb_tok **out,
                                  cb_error *err) {
  *out = NULL;
  json_error_t je;
  json_t *root = json_loadb(json, len, 0, &je);
  if (!root) return cb_error_at(err, CB_ERR_PARSE, name, je.line, je.column, "%s", je.text);
  cb_status st = cb__tok_load_hf_json(name, root, out, err);
  json_decref(root);
  return st;
}
