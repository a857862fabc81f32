/*
 * decode.c - ids back to bytes.
 *
 * tiktoken: the concatenated token bytes (special tokens give their text).
 * tokenizer.json: each id's token string (added tokens first, then the model vocab),
 * then the decoder chain over the list of strings, as tokenizers' decode_chain does:
 * Replace, ByteFallback, Fuse, Strip, Metaspace, ByteLevel (our byte-level vocab is
 * stored as raw bytes already, so ByteLevel is the identity here). With no decoder,
 * tokens are joined with a space, as tokenizers does. The result stays bytes: where
 * tokenizers would turn invalid UTF-8 into U+FFFD at the end, we keep the bytes.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

typedef struct tok_list {
  cb_buf bytes;
  size_t *off, *len;
  size_t n, cap;
} tok_list;

static void list_push(tok_list *l, const void *p, size_t n) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 64;
    l->off = cb_reallocarray(l->off, l->cap, sizeof *l->off);
    l->len = cb_reallocarray(l->len, l->cap, sizeof *l->len);
  }
  l->off[l->n] = l->bytes.len;
  l->len[l->n++] = n;
  cb_buf_append(&l->bytes, p, n);
}

static void list_free(tok_list *l) {
  cb_buf_free(&l->bytes);
  cb_free(l->off);
  cb_free(l->len);
  memset(l, 0, sizeof *l);
}

static const char *item(const tok_list *l, size_t i) { return l->bytes.data + l->off[i]; }

static void replace_into(cb_buf *dst, const char *s, size_t n, const char *pat, const char *rep) {
  size_t pl = strlen(pat);
  for (size_t j = 0; j < n;) {
    if (pl && j + pl <= n && !memcmp(s + j, pat, pl)) {
      cb_buf_append_str(dst, rep);
      j += pl;
    } else {
      cb_buf_append_char(dst, s[j++]);
    }
  }
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static int fallback_byte(const char *s, size_t n) {
  if (n != 6 || memcmp(s, "<0x", 3) || s[5] != '>') return -1;
  int h = hexval(s[3]), l = hexval(s[4]);
  return h < 0 || l < 0 ? -1 : h * 16 + l;
}

/* The WordPiece decoder's cleanup: each replacement in order over the whole token, as
 * str::replace does (decoders/wordpiece.rs). */
static void cleanup(cb_buf *t) {
  static const char *const pairs[][2] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  cb_buf r;
  cb_buf_init(&r, 0);
  for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
    cb_buf_reset(&r);
    replace_into(&r, t->data, t->len, pairs[k][0], pairs[k][1]);
    cb_buf_reset(t);
    cb_buf_append(t, r.data, r.len);
  }
  cb_buf_free(&r);
}

static void apply(const cb__dec *d, const tok_list *in, tok_list *out) {
  cb_buf tmp;
  cb_buf_init(&tmp, 0);
  switch (d->kind) {
    case CB__DEC_BYTELEVEL:
      for (size_t i = 0; i < in->n; i++) cb_buf_append(&tmp, item(in, i), in->len[i]);
      list_push(out, tmp.data ? tmp.data : "", tmp.len);
      break;
    case CB__DEC_FUSE:
      for (size_t i = 0; i < in->n; i++) cb_buf_append(&tmp, item(in, i), in->len[i]);
      list_push(out, tmp.data ? tmp.data : "", tmp.len);
      break;
    case CB__DEC_REPLACE:
    case CB__DEC_METASPACE:
      for (size_t i = 0; i < in->n; i++) {
        cb_buf_reset(&tmp);
        /* Metaspace: replacement -> ' ', except in the first token where tokenizers
         * drops every replacement when it prepends one (prepend_scheme != never) */
        const char *rep = d->kind == CB__DEC_REPLACE ? d->b : i == 0 && d->start ? "" : " ";
        replace_into(&tmp, item(in, i), in->len[i], d->a, rep);
        list_push(out, tmp.data ? tmp.data : "", tmp.len);
      }
      break;
    case CB__DEC_BYTEFALLBACK:
      for (size_t i = 0; i < in->n;) {
        int b = fallback_byte(item(in, i), in->len[i]);
        if (b < 0) {
          list_push(out, item(in, i), in->len[i]);
          i++;
          continue;
        }
        cb_buf_reset(&tmp);
        while (i < in->n && (b = fallback_byte(item(in, i), in->len[i])) >= 0) {
          cb_buf_append_char(&tmp, (char)b);
          i++;
        }
        list_push(out, tmp.data, tmp.len);
      }
      break;
    case CB__DEC_WORDPIECE: /* decoders/wordpiece.rs */
      for (size_t i = 0; i < in->n; i++) {
        const char *p = item(in, i);
        size_t n = in->len[i], pl = strlen(d->a);
        cb_buf_reset(&tmp);
        if (i && n >= pl && !memcmp(p, d->a, pl)) p += pl, n -= pl;
        else if (i) cb_buf_append_char(&tmp, ' ');
        cb_buf_append(&tmp, p, n);
        if (d->start) cleanup(&tmp);
        list_push(out, tmp.data ? tmp.data : "", tmp.len);
      }
      break;
    case CB__DEC_STRIP: {
      size_t cl = strlen(d->strip_char);
      for (size_t i = 0; i < in->n; i++) {
        const char *p = item(in, i);
        size_t n = in->len[i];
        for (int k = 0; k < d->start && cl && n >= cl && !memcmp(p, d->strip_char, cl); k++) p += cl, n -= cl;
        for (int k = 0; k < d->stop && cl && n >= cl && !memcmp(p + n - cl, d->strip_char, cl); k++) n -= cl;
        list_push(out, p, n);
      }
      break;
    }
  }
  cb_buf_free(&tmp);
}

cb_status cb_tok_decode(const cb_tok *tok, const cb_tok_id *ids, size_t n, cb_buf *out,
                        cb_error *err) {
  /* Check every id first so a failure leaves `out` unchanged. */
  for (size_t i = 0; i < n; i++) {
    cb_tok_id id = ids[i];
    int known = cb__vocab_has(&tok->vocab, id) || (id < tok->n_id_text && tok->id_text[id]);
    for (size_t k = 0; !known && k < tok->n_specials; k++) known = tok->specials[k].id == id;
    if (!known)
      return cb_error_set(err, CB_ERR_RANGE, "%s: token id %u (at position %zu) is not in the vocabulary",
                          tok->name, (unsigned)id, i);
  }
  tok_list a = {0}, b = {0};
  for (size_t i = 0; i < n; i++) {
    cb_tok_id id = ids[i];
    if (id < tok->n_id_text && tok->id_text[id]) {
      list_push(&a, tok->id_text[id], strlen(tok->id_text[id]));
    } else if (cb__vocab_has(&tok->vocab, id)) {
      list_push(&a, tok->vocab.bytes + tok->vocab.tok[id].off, tok->vocab.tok[id].len);
    } else {
      for (size_t k = 0; k < tok->n_specials; k++)
        if (tok->specials[k].id == id) {
          list_push(&a, tok->specials[k].text, tok->specials[k].len);
          break;
        }
    }
  }
  if (tok->kind != CB_TOK_KIND_TIKTOKEN && tok->n_dec == 0) {
    for (size_t i = 0; i < a.n; i++) {
      if (i) cb_buf_append_char(out, ' ');
      cb_buf_append(out, item(&a, i), a.len[i]);
    }
    list_free(&a);
    return CB_OK;
  }
  for (size_t d = 0; d < tok->n_dec; d++) {
    apply(&tok->dec[d], &a, &b);
    tok_list t = a;
    a = b;
    b = t;
    cb_buf_reset(&b.bytes);
    b.n = 0;
  }
  for (size_t i = 0; i < a.n; i++) cb_buf_append(out, item(&a, i), a.len[i]);
  if (!out->data) cb_buf_append(out, "", 0);
  list_free(&a);
  list_free(&b);
  return CB_OK;
}
