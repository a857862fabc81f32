/*
 * tok.c - a tokenizer's life: creation, special-token registry, facts, freeing, and
 * the per-call scratch.
 */
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

cb_tok *cb__tok_new(cb_tok_kind kind, const char *name) {
  cb_tok *tok = cb_calloc(1, sizeof *tok);
  tok->kind = kind;
  tok->name = cb_strdup(name ? name : "");
  tok->unk_id = CB__TOK_NONE;
  for (int i = 0; i < 256; i++) tok->fallback_id[i] = CB__TOK_NONE;
  return tok;
}

void cb__tok_add_special(cb_tok *tok, const char *text, size_t len, uint32_t id, int special,
                         int normalized, int lstrip, int rstrip) {
  tok->specials = cb_reallocarray(tok->specials, tok->n_specials + 1, sizeof *tok->specials);
  cb__special *s = &tok->specials[tok->n_specials++];
  s->text = cb_strndup(text, len);
  s->len = len;
  s->id = id;
  s->special = special;
  s->normalized = normalized;
  s->lstrip = lstrip;
  s->rstrip = rstrip;
  if (id + 1 > tok->vocab_size) tok->vocab_size = id + 1;
}

static int by_length_desc(const void *a, const void *b) {
  const cb__special *x = a, *y = b;
  if (x->len != y->len) return x->len > y->len ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

void cb__tok_finish_specials(cb_tok *tok) {
  if (tok->n_specials) qsort(tok->specials, tok->n_specials, sizeof *tok->specials, by_length_desc);
  memset(tok->special_first, 0, sizeof tok->special_first);
  tok->has_normalized_added = 0;
  for (size_t i = 0; i < tok->n_specials; i++) {
    if (tok->specials[i].len) tok->special_first[(unsigned char)tok->specials[i].text[0]] = 1;
    if (tok->specials[i].normalized) tok->has_normalized_added = 1;
  }
  if (tok->vocab.n_ids > tok->vocab_size) tok->vocab_size = tok->vocab.n_ids;
}

void cb_tok_free(cb_tok *tok) {
  if (!tok) return;
  cb_free(tok->name);
  cb_free(tok->wp_prefix);
  cb_free(tok->scores);
  cb__vocab_free(&tok->vocab);
  cb__pairmap_free(&tok->pairs);
  for (size_t i = 0; i < tok->n_pretok; i++) {
    cb__regex_free(&tok->pretok[i].re);
    cb_free(tok->pretok[i].replacement);
  }
  for (size_t i = 0; i < tok->n_norm; i++) {
    cb_free(tok->norm[i].a);
    cb_free(tok->norm[i].b);
    cb__regex_free(&tok->norm[i].re);
    cb__charsmap_free(&tok->norm[i].map);
  }
  for (size_t i = 0; i < tok->n_dec; i++) {
    cb_free(tok->dec[i].a);
    cb_free(tok->dec[i].b);
  }
  for (size_t i = 0; i < tok->n_specials; i++) cb_free(tok->specials[i].text);
  cb_free(tok->specials);
  for (uint32_t i = 0; i < tok->n_id_text; i++) cb_free(tok->id_text[i]);
  cb_free(tok->id_text);
  cb_free(tok->bos_ids);
  cb_free(tok->eos_ids);
  cb_free(tok);
}

const char *cb_tok_name(const cb_tok *tok) { return tok->name; }
cb_tok_kind cb_tok_kind_of(const cb_tok *tok) { return tok->kind; }
size_t cb_tok_vocab_size(const cb_tok *tok) { return tok->vocab_size; }

size_t cb_tok_memory_bytes(const cb_tok *tok) {
  size_t n = sizeof *tok + cb__vocab_memory(&tok->vocab) + tok->extra_bytes;
  n += (tok->pairs.slots ? tok->pairs.mask + 1 : 0) * sizeof *tok->pairs.slots;
  for (size_t i = 0; i < tok->n_specials; i++) n += sizeof *tok->specials + tok->specials[i].len + 1;
  for (size_t i = 0; i < tok->n_pretok; i++) {
    if (!tok->pretok[i].re.code) continue;
    size_t sz = 0;
    pcre2_pattern_info(tok->pretok[i].re.code, PCRE2_INFO_SIZE, &sz);
    n += sz + tok->pretok[i].re.jit_bytes;
  }
  n += tok->n_id_text * sizeof *tok->id_text;
  for (uint32_t i = 0; i < tok->n_id_text; i++)
    if (tok->id_text[i]) n += strlen(tok->id_text[i]) + 1;
  return n;
}

cb_status cb_tok_special_id(const cb_tok *tok, const char *text, cb_tok_id *id) {
  size_t len = strlen(text);
  for (size_t i = 0; i < tok->n_specials; i++)
    if (tok->specials[i].len == len && !memcmp(tok->specials[i].text, text, len)) {
      *id = tok->specials[i].id;
      return CB_OK;
    }
  return CB_ERR_NOT_FOUND;
}

void cb_tok_default_encode_params(cb_tok_encode_params *p) { memset(p, 0, sizeof *p); }

void cb_tok_ids_free(cb_tok_ids *ids) {
  cb_free(ids->ids);
  memset(ids, 0, sizeof *ids);
}

void cb__scratch_init(cb__scratch *s) {
  memset(s, 0, sizeof *s);
  s->md = pcre2_match_data_create(1, cb__pcre2_context()); /* allocates via cb_malloc */
}

void cb__scratch_free(cb__scratch *s) {
  pcre2_match_data_free(s->md);
  cb_free(s->parts);
  cb_free(s->heap);
  cb_buf_free(&s->clean);
  cb_buf_free(&s->norm);
  cb_buf_free(&s->norm2);
  cb_buf_free(&s->tmp);
  cb_buf_free(&s->word);
  cb_free(s->nodes);
  cb_tok_ids_free(&s->path);
  for (int i = 0; i < CB__TOK_MAX_STEPS; i++) cb_buf_free(&s->level[i]);
  memset(s, 0, sizeof *s);
}
