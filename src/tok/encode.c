/*
 * encode.c - text to ids: the pipeline around the merge loop.
 *
 *   bytes -> valid UTF-8 (invalid subsequences -> U+FFFD, as every reference sees text)
 *         -> split at special / added tokens (leftmost, longest first)
 *         -> each segment: [tokenizer.json: normalizers, normalized added tokens]
 *                          -> pre-tokenizer steps -> pieces -> BPE (bpe.c)
 *         -> [tokenizer.json with add_special_tokens: the template's BOS/EOS ids]
 *
 * tiktoken's one pre-tokenizer keeps only the regex matches (fancy-regex find_iter);
 * tokenizer.json's Split keeps the gaps between matches too. Each call owns its
 * scratch (PCRE2 match data, merge arrays, buffers), reused for every piece, so the
 * tokenizer stays immutable and shareable between threads.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

typedef struct enc {
  const cb_tok *tok;
  cb__scratch *s;
  cb_tok_ids *out;
  const unsigned char *enabled; /* per special: matched as its id */
  cb_status st;
  cb_error *err;
} enc;

/* ---- regex iteration ------------------------------------------------------------ */

typedef void (*piece_fn)(enc *e, void *ctx, const char *p, size_t n, size_t offset);

static int regex_next(enc *e, const cb__regex *re, const char *s, size_t n, size_t pos,
                      size_t *a, size_t *b) {
  int rc = re->jit ? pcre2_jit_match(re->code, (PCRE2_SPTR)s, n, pos, 0, e->s->md, NULL)
                   : pcre2_match(re->code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, e->s->md, NULL);
  if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) /* e.g. JIT stack: the interpreter has no such limit */
    rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, e->s->md, NULL);
  if (rc == PCRE2_ERROR_NOMATCH) return 0;
  if (rc < 0) {
    PCRE2_UCHAR msg[160];
    pcre2_get_error_message(rc, msg, sizeof msg);
    if (e->st == CB_OK)
      e->st = cb_error_set(e->err, CB_ERR_CAPACITY, "%s: pre-tokenizer regex failed: %s",
                           e->tok->name, (const char *)msg);
    return 0;
  }
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(e->s->md);
  *a = ov[0];
  *b = ov[1];
  return 1;
}

/* Call fn for each match (and, with keep_gaps, each non-empty gap) in order. With
 * keep_matches 0 only the gaps are passed (Split behavior Removed). */
static void regex_pieces(enc *e, const cb__regex *re, const char *s, size_t n, int keep_gaps,
                         int keep_matches, piece_fn fn, void *ctx) {
  size_t pos = 0, gap = 0, a, b;
  while (pos < n && regex_next(e, re, s, n, pos, &a, &b)) {
    if (b == a) { /* empty match: step over one character, it stays in the gap */
      size_t clen = 1;
      cb__utf8_decode((const unsigned char *)s + a, &clen);
      pos = a + clen;
      continue;
    }
    if (keep_gaps && a > gap) fn(e, ctx, s + gap, a - gap, gap);
    if (keep_matches) fn(e, ctx, s + a, b - a, a);
    pos = gap = b;
  }
  if (keep_gaps && gap < n) fn(e, ctx, s + gap, n - gap, gap);
}

/* ---- tiktoken ------------------------------------------------------------------- */

static void tiktoken_piece(enc *e, void *ctx, const char *p, size_t n, size_t offset) {
  (void)ctx;
  (void)offset;
  cb__bpe_tiktoken(&e->tok->vocab, (const unsigned char *)p, n, e->s, e->out);
}

/* ---- tokenizer.json pre-tokenizers ------------------------------------------------ */

typedef struct step_ctx {
  size_t step;
  int at_start; /* the piece begins the whole input (Metaspace prepend_scheme "first") */
} step_ctx;

static void hf_pretok(enc *e, size_t step, const char *s, size_t n, int at_start);

static void next_step(enc *e, void *ctx, const char *p, size_t n, size_t offset) {
  step_ctx *c = ctx;
  hf_pretok(e, c->step + 1, p, n, c->at_start && offset == 0);
}

static void hf_pretok(enc *e, size_t step, const char *s, size_t n, int at_start) {
  const cb_tok *tok = e->tok;
  if (n == 0) return;
  if (step == tok->n_pretok) {
    if (tok->kind == CB_TOK_KIND_HF_WORDPIECE)
      cb__wordpiece(tok, (const unsigned char *)s, n, e->s, e->out);
    else if (tok->kind == CB_TOK_KIND_HF_UNIGRAM)
      cb__unigram(tok, (const unsigned char *)s, n, e->s, e->out);
    else
      cb__bpe_hf(tok, (const unsigned char *)s, n, e->s, e->out);
    return;
  }
  const cb__pretok *pt = &tok->pretok[step];
  step_ctx c = {step, at_start};
  cb_buf *buf = &e->s->level[step];
  switch (pt->kind) {
    case CB__PRETOK_REGEX_MATCHES:
      regex_pieces(e, &pt->re, s, n, 0, 1, next_step, &c);
      return;
    case CB__PRETOK_SPLIT:
      regex_pieces(e, &pt->re, s, n, 1, 1, next_step, &c);
      return;
    case CB__PRETOK_SPLIT_REMOVED:
      regex_pieces(e, &pt->re, s, n, 1, 0, next_step, &c);
      return;
    case CB__PRETOK_BYTELEVEL:
      if (pt->add_prefix_space && s[0] != ' ') {
        cb_buf_reset(buf);
        cb_buf_append_char(buf, ' ');
        cb_buf_append(buf, s, n);
        s = buf->data;
        n = buf->len;
      }
      if (pt->use_regex) regex_pieces(e, &pt->re, s, n, 1, 1, next_step, &c);
      else hf_pretok(e, step + 1, s, n, at_start);
      return;
    case CB__PRETOK_WHITESPACE_SPLIT:
    case CB__PRETOK_BERT: { /* split at whitespace (dropped) and [BERT] punctuation (kept alone) */
      size_t from = 0;
      for (size_t i = 0; i < n;) {
        size_t len;
        uint32_t cp = cb__utf8_decode((const unsigned char *)s + i, &len);
        int ws = cb__is_white_space(cp);
        if (ws || (pt->kind == CB__PRETOK_BERT && cb__bert_is_punct(cp))) {
          hf_pretok(e, step + 1, s + from, i - from, at_start && from == 0);
          if (!ws) hf_pretok(e, step + 1, s + i, len, at_start && i == 0);
          from = i + len;
        }
        i += len;
      }
      hf_pretok(e, step + 1, s + from, n - from, at_start && from == 0);
      return;
    }
    case CB__PRETOK_METASPACE: {
      const char *rep = pt->replacement;
      size_t rl = strlen(rep);
      cb_buf_reset(buf);
      for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') cb_buf_append(buf, rep, rl);
        else cb_buf_append_char(buf, s[i]);
      }
      int starts = buf->len >= rl && !memcmp(buf->data, rep, rl);
      if (!starts && (pt->prepend == 1 || (pt->prepend == 2 && at_start))) {
        cb_buf tmp;
        cb_buf_init(&tmp, 0);
        cb_buf_append(&tmp, rep, rl);
        cb_buf_append(&tmp, buf->data, buf->len);
        cb_buf_free(buf);
        *buf = tmp;
      }
      if (!pt->use_regex) { /* split = false */
        hf_pretok(e, step + 1, buf->data, buf->len, at_start);
        return;
      }
      /* split: every replacement starts a new piece (MergedWithNext) */
      size_t from = 0;
      for (size_t i = rl; i + rl <= buf->len; i++)
        if (!memcmp(buf->data + i, rep, rl)) {
          hf_pretok(e, step + 1, buf->data + from, i - from, at_start && from == 0);
          from = i;
          i += rl - 1;
        }
      hf_pretok(e, step + 1, buf->data + from, buf->len - from, at_start && from == 0);
      return;
    }
  }
}

/* ---- special and added tokens --------------------------------------------------- */

/* Leftmost, then longest, special among those with flags[k] set and (want_norm < 0 or
 * normalized == want_norm), in s[from..n). Returns its index or -1; *at its start. */
static long find_special(const cb_tok *tok, const unsigned char *flags, int want_norm,
                         const char *s, size_t n, size_t from, size_t *at) {
  for (size_t i = from; i < n; i++) {
    if (!tok->special_first[(unsigned char)s[i]]) continue;
    for (size_t k = 0; k < tok->n_specials; k++) {
      const cb__special *sp = &tok->specials[k];
      if (!flags[k] || (want_norm >= 0 && sp->normalized != want_norm)) continue;
      if (sp->len && sp->len <= n - i && !memcmp(s + i, sp->text, sp->len)) {
        *at = i;
        return (long)k;
      }
    }
  }
  return -1;
}

static size_t ws_before(const char *s, size_t lo, size_t at) {
  while (at > lo) {
    size_t st = at - 1;
    while (st > lo && ((unsigned char)s[st] & 0xC0) == 0x80) st--;
    size_t len;
    if (!cb__is_white_space(cb__utf8_decode((const unsigned char *)s + st, &len))) break;
    at = st;
  }
  return at;
}

static size_t ws_after(const char *s, size_t n, size_t at) {
  while (at < n) {
    size_t len;
    if (!cb__is_white_space(cb__utf8_decode((const unsigned char *)s + at, &len))) break;
    at += len;
  }
  return at;
}

/* Normalize s into scratch (or return s unchanged). */
static const char *hf_normalize(enc *e, const char *s, size_t n, size_t *out_n) {
  const cb_tok *tok = e->tok;
  const char *cur = s;
  size_t cn = n;
  for (size_t i = 0; i < tok->n_norm; i++) {
    const cb__norm *nm = &tok->norm[i];
    cb_buf *dst = cur == e->s->norm.data ? &e->s->norm2 : &e->s->norm;
    cb_buf_reset(dst);
    switch (nm->kind) {
      case CB__NORM_NFC:
        if (cb__nfc_quick_yes(cur, cn)) continue;
        cb__nfc(cur, cn, dst);
        break;
      case CB__NORM_NFD:
        cb__nfd(cur, cn, dst);
        break;
      case CB__NORM_NFKC:
        cb__nfkc(cur, cn, dst);
        break;
      case CB__NORM_NFKD:
        cb__nfkd(cur, cn, dst);
        break;
      case CB__NORM_LOWERCASE:
        cb__lowercase(cur, cn, dst);
        break;
      case CB__NORM_STRIP_ACCENTS:
        cb__strip_accents(cur, cn, dst);
        break;
      case CB__NORM_STRIP:
        cb__strip(cur, cn, nm->flags & 1, nm->flags & 2, dst);
        break;
      case CB__NORM_NMT:
        cb__nmt(cur, cn, dst);
        break;
      case CB__NORM_PRECOMPILED:
        cb__precompiled(&nm->map, cur, cn, dst);
        break;
      case CB__NORM_PREPEND:
        if (cn == 0) continue;
        cb_buf_append_str(dst, nm->a);
        cb_buf_append(dst, cur, cn);
        break;
      case CB__NORM_BERT:
        cb__bert_normalize(nm->flags, cur, cn, dst, &e->s->tmp);
        break;
      case CB__NORM_REPLACE: {
        if (nm->re.code) { /* every match (none is empty) becomes the content */
          size_t pos = 0, a, b;
          while (pos < cn && regex_next(e, &nm->re, cur, cn, pos, &a, &b)) {
            cb_buf_append(dst, cur + pos, a - pos);
            cb_buf_append_str(dst, nm->b);
            pos = b;
          }
          cb_buf_append(dst, cur + pos, cn - pos);
          break;
        }
        size_t pl = strlen(nm->a);
        if (!pl) continue;
        for (size_t j = 0; j < cn;) {
          if (j + pl <= cn && !memcmp(cur + j, nm->a, pl)) {
            cb_buf_append_str(dst, nm->b);
            j += pl;
          } else {
            cb_buf_append_char(dst, cur[j++]);
          }
        }
        break;
      }
    }
    if (!dst->data) cb_buf_append(dst, "", 0);
    cur = dst->data;
    cn = dst->len;
  }
  *out_n = cn;
  return cur;
}

static void hf_segment(enc *e, const char *s, size_t n, int at_start) {
  const cb_tok *tok = e->tok;
  size_t nn;
  const char *ns = tok->n_norm ? hf_normalize(e, s, n, &nn) : (nn = n, s);
  if (!tok->has_normalized_added) {
    hf_pretok(e, 0, ns, nn, at_start);
    return;
  }
  size_t pos = 0, at;
  long k;
  while ((k = find_special(tok, e->enabled, 1, ns, nn, pos, &at)) >= 0) {
    const cb__special *sp = &tok->specials[k];
    size_t a = sp->lstrip ? ws_before(ns, pos, at) : at;
    size_t b = sp->rstrip ? ws_after(ns, nn, at + sp->len) : at + sp->len;
    hf_pretok(e, 0, ns + pos, a - pos, at_start && pos == 0);
    cb__ids_push(e->out, sp->id);
    pos = b;
  }
  hf_pretok(e, 0, ns + pos, nn - pos, at_start && pos == 0);
}

static void encode_segment(enc *e, const char *s, size_t n, int at_start) {
  if (n == 0) return;
  if (e->tok->kind == CB_TOK_KIND_TIKTOKEN)
    regex_pieces(e, &e->tok->pretok[0].re, s, n, 0, 1, tiktoken_piece, NULL);
  else
    hf_segment(e, s, n, at_start);
}

static int in_list(const char *const *list, const cb__special *sp) {
  for (size_t i = 0; list && list[i]; i++)
    if (strlen(list[i]) == sp->len && !memcmp(list[i], sp->text, sp->len)) return 1;
  return 0;
}

cb_status cb_tok_encode(const cb_tok *tok, const char *text, size_t len,
                        const cb_tok_encode_params *params, cb_tok_ids *out, cb_error *err) {
  cb_tok_encode_params defaults;
  if (!params) {
    cb_tok_default_encode_params(&defaults);
    params = &defaults;
  }
  int hf = tok->kind != CB_TOK_KIND_TIKTOKEN;
  cb_tok_special_mode mode = params->special;
  if (mode == CB_TOK_SPECIAL_DEFAULT) mode = hf ? CB_TOK_SPECIAL_ALLOW : CB_TOK_SPECIAL_REJECT;

  cb__scratch s;
  cb__scratch_init(&s);
  unsigned char small[64];
  unsigned char *enabled = tok->n_specials * 2 <= sizeof small ? small : cb_malloc(tok->n_specials * 2);
  unsigned char *rejected = enabled + tok->n_specials;
  int any_rejected = 0;
  for (size_t k = 0; k < tok->n_specials; k++) {
    const cb__special *sp = &tok->specials[k];
    int allowed = in_list(params->allowed_special, sp);
    enabled[k] = allowed || mode == CB_TOK_SPECIAL_ALLOW || !sp->special;
    rejected[k] = !enabled[k] && mode == CB_TOK_SPECIAL_REJECT;
    any_rejected |= rejected[k];
  }

  const char *t = text;
  if (cb__utf8_valid_prefix(text, len) != len) {
    cb__utf8_sanitize(text, len, &s.clean);
    t = s.clean.data;
    len = s.clean.len;
  }
  size_t old_len = out->len;
  if (out->cap - out->len < len / 4 + 16) { /* about one token per 4 bytes: grow once */
    out->cap = out->len + len / 4 + 16;
    out->ids = cb_reallocarray(out->ids, out->cap, sizeof *out->ids);
  }
  enc e = {tok, &s, out, enabled, CB_OK, err};
  size_t at;
  long k;
  if (any_rejected && (k = find_special(tok, rejected, -1, t, len, 0, &at)) >= 0) {
    e.st = cb_error_set(err, CB_ERR_INVALID,
                        "%s: the text contains the special token '%s' at byte %zu, which is "
                        "not allowed (allow it, or encode it as ordinary text)",
                        tok->name, tok->specials[k].text, at);
    goto done;
  }
  if (hf && params->add_special_tokens)
    for (size_t i = 0; i < tok->n_bos; i++) cb__ids_push(out, tok->bos_ids[i]);
  size_t pos = 0;
  while ((k = find_special(tok, enabled, hf ? 0 : -1, t, len, pos, &at)) >= 0) {
    const cb__special *sp = &tok->specials[k];
    size_t a = sp->lstrip ? ws_before(t, pos, at) : at;
    size_t b = sp->rstrip ? ws_after(t, len, at + sp->len) : at + sp->len;
    encode_segment(&e, t + pos, a - pos, pos == 0);
    cb__ids_push(out, sp->id);
    pos = b;
  }
  encode_segment(&e, t + pos, len - pos, pos == 0);
  if (hf && params->add_special_tokens)
    for (size_t i = 0; i < tok->n_eos; i++) cb__ids_push(out, tok->eos_ids[i]);
done:
  if (e.st != CB_OK) out->len = old_len;
  if (enabled != small) cb_free(enabled);
  cb__scratch_free(&s);
  return e.st;
}

size_t cb_tok_count(void *ctx, const char *text, size_t len) {
  const cb_tok *tok = ctx;
  cb_tok_encode_params p;
  cb_tok_default_encode_params(&p);
  p.special = CB_TOK_SPECIAL_TEXT;
  cb_tok_ids ids = {0};
  cb_tok_encode(tok, text, len, &p, &ids, NULL);
  size_t n = ids.len;
  cb_tok_ids_free(&ids);
  return n;
}
