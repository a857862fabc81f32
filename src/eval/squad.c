/*
 * squad.c - exact match and F1 as SQuAD v1.1's official evaluation script
 * (evaluate-v1.1.py; huggingface/evaluate metrics/squad/compute_score.py carries it
 * unchanged).
 *
 * normalize_answer(s) = white_space_fix(remove_articles(remove_punc(lower(s)))):
 *   lower: Python's str.lower: the one-to-one mappings (util/unicode_lower.h, equal
 *     to Python's), U+0130 -> "i" U+0307, and capital sigma -> final sigma at the
 *     end of a word (Final_Sigma, with the cased and case-ignorable sets of
 *     eval_text.h that sacrebleu's lowercasing uses too);
 *   remove_punc: drops the 32 ASCII characters of string.punctuation;
 *   remove_articles: re.sub(r"\b(a|an|the)\b", " "): \b sits between a word
 *     character ([\p{L}\p{N}_] for a Python 3 str, checked equal over Unicode 14)
 *     and anything else, so this replaces each maximal run of word characters that
 *     is exactly a, an or the;
 *   white_space_fix: " ".join(s.split()), split at Python's str.isspace characters.
 * f1_score: tokens are the normalised answer split at spaces; common = the multiset
 * intersection; 0 when it is empty, else 2PR/(P+R).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/utf8.h"
#include "rouge_internal.h"
#include "eval_text.h"
#include "util/cps.h"
#include "util/unicode_lower.h"

/* string.punctuation */
static int is_punct(uint32_t c) {
  return c < 0x80 && c > 0x20 && c != 0x7F && !(c >= '0' && c <= '9') &&
         !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z');
}

/* str.isspace (Py_UNICODE_ISSPACE), Python 3.11 */
static int is_space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

/* 2 case-ignorable, else 1 cased, else 0 (what Final_Sigma skips, then what it needs) */
static int case_class(uint32_t c) {
  if (cb__eval_in(cb__eval_sigma_ignorable, cb__eval_sigma_ignorable_len, c)) return 2;
  return cb__eval_in(cb__eval_sigma_cased, cb__eval_sigma_cased_len, c);
}

/* unicodeobject.c handle_capital_sigma: final when a cased character precedes and
 * none follows, case-ignorable characters skipped both ways. */
static int final_sigma(const uint32_t *cp, size_t n, size_t i) {
  size_t j = i;
  while (j > 0 && case_class(cp[j - 1]) == 2) j--;
  if (j == 0 || case_class(cp[j - 1]) != 1) return 0;
  for (j = i + 1; j < n && case_class(cp[j]) == 2; j++) {}
  return j == n || case_class(cp[j]) != 1;
}

static int is_article(const uint32_t *w, size_t n) {
  if (n == 1) return w[0] == 'a';
  if (n == 2) return w[0] == 'a' && w[1] == 'n';
  return n == 3 && w[0] == 't' && w[1] == 'h' && w[2] == 'e';
}

/* Python 3's \w: compiled once for the process; each call brings its match data. */
static cb__eval_re word_re;
static cb_status word_re_status;
static cb_error word_re_error;
static pthread_once_t word_re_once = PTHREAD_ONCE_INIT;

static void compile_word_re(void) {
  word_re_status = cb__eval_re_init(&word_re, "[\\p{L}\\p{N}_]+", &word_re_error);
}

static cb_status normalize(const char *text, size_t len, cb_buf *out, cb_error *err) {
  cb__cps in = {0}, low = {0};
  cb__eval_re re = {0};
  cb_buf low8 = {0};
  cb_status st = CB_OK;
  for (size_t i = 0; i < len;) {
    uint32_t c;
    size_t k = cb__eval_utf8_next(text + i, len - i, &c);
    if (!k) {
      st = cb_error_set(err, CB_ERR_PARSE, "squad: byte %zu: invalid UTF-8", i);
      goto done;
    }
    cb__cps_push(&in, c);
    i += k;
  }
  /* lower, then remove_punc */
  for (size_t i = 0; i < in.n; i++) {
    uint32_t c = in.v[i];
    if (c == 0x130) {
      cb__cps_push(&low, 'i');
      cb__cps_push(&low, 0x307);
      continue;
    }
    c = c == 0x3A3 ? (final_sigma(in.v, in.n, i) ? 0x3C2 : 0x3C3) : cb__unicode_lower(c);
    if (!is_punct(c)) cb__cps_push(&low, c);
  }
  for (size_t i = 0; i < low.n; i++) cb__eval_encode(&low8, low.v[i]);
  pthread_once(&word_re_once, compile_word_re);
  if (word_re_status != CB_OK) {
    st = cb_error_set(err, word_re_status, "%s", word_re_error.msg);
    goto done;
  }
  re.re = word_re.re;
  re.md = pcre2_match_data_create(1, cb__pcre2_context());
  /* remove_articles: mark the code points of each article run as a space */
  size_t pos = 0, a, b, cp_at = 0, byte_at = 0;
  int rc;
  const char *s = low8.data ? low8.data : "";
  while ((rc = cb__eval_re_next(&re, s, low8.len, pos, &a, &b, err)) > 0) {
    /* advance the code point index to byte a, then count the run's code points */
    for (; byte_at < a; cp_at++) byte_at += cb_utf8_seq_len(s + byte_at, low8.len - byte_at, NULL);
    size_t first = cp_at;
    for (; byte_at < b; cp_at++) byte_at += cb_utf8_seq_len(s + byte_at, low8.len - byte_at, NULL);
    if (is_article(low.v + first, cp_at - first))
      for (size_t i = first; i < cp_at; i++) low.v[i] = ' ';
    pos = b;
  }
  if (rc < 0) {
    st = CB_ERR_CAPACITY;
    goto done;
  }
  /* white_space_fix */
  int pending = 0, any = 0;
  for (size_t i = 0; i < low.n; i++) {
    if (is_space(low.v[i])) {
      pending = any;
      continue;
    }
    if (pending) cb_buf_append_char(out, ' ');
    pending = 0;
    any = 1;
    cb__eval_encode(out, low.v[i]);
  }
done:
  if (re.md) pcre2_match_data_free(re.md);
  cb__cps_free(&in);
  cb__cps_free(&low);
  cb_buf_free(&low8);
  return st;
}

cb_status cb_eval_squad_normalize(const char *text, size_t len, cb_buf *out, cb_error *err) {
  return normalize(text, len, out, err);
}

typedef struct {
  const char *s;
  size_t n;
} piece;

static int cmp_piece(const void *a, const void *b) {
  const piece *x = a, *y = b;
  size_t n = x->n < y->n ? x->n : y->n;
  int c = memcmp(x->s, y->s, n);
  return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The tokens of a normalised answer (single spaces between them), sorted. */
static piece *split_sorted(const cb_buf *b, size_t *n_out) {
  size_t n = 0, cap = 8;
  piece *p = cb_reallocarray(NULL, cap, sizeof *p);
  for (size_t i = 0; i < b->len;) {
    const char *sp = memchr(b->data + i, ' ', b->len - i);
    size_t end = sp ? (size_t)(sp - b->data) : b->len;
    if (n == cap) p = cb_reallocarray(p, cap *= 2, sizeof *p);
    p[n++] = (piece){b->data + i, end - i};
    i = end + 1;
  }
  qsort(p, n, sizeof *p, cmp_piece);
  *n_out = n;
  return p;
}

/* f1_score of two normalised answers */
static double f1_of(const cb_buf *hyp, const cb_buf *ref) {
  size_t nh, nr, same = 0;
  piece *h = split_sorted(hyp, &nh), *r = split_sorted(ref, &nr);
  for (size_t i = 0, j = 0; i < nh && j < nr;) { /* Counter & Counter, summed */
    int c = cmp_piece(&h[i], &r[j]);
    if (c == 0) {
      same++;
      i++;
      j++;
    } else if (c < 0) {
      i++;
    } else {
      j++;
    }
  }
  cb_free(h);
  cb_free(r);
  if (!same) return 0;
  double p = 1.0 * (double)same / (double)nh, rc = 1.0 * (double)same / (double)nr;
  return (2 * p * rc) / (p + rc);
}

cb_status cb_eval_squad_score(const char *hyp, size_t hyp_len, const char *const *refs,
                              const size_t *ref_lens, size_t n_refs, cb_eval_squad *out,
                              cb_error *err) {
  if (!n_refs) return cb_error_set(err, CB_ERR_INVALID, "squad: no reference given");
  cb_buf h = {0}, r = {0};
  cb_status st = normalize(hyp, hyp_len, &h, err);
  if (st != CB_OK) {
    cb_error_wrap(err, "hypothesis");
    goto done;
  }
  out->exact = 0;
  out->f1 = 0;
  for (size_t k = 0; k < n_refs; k++) {
    cb_buf_reset(&r);
    st = normalize(refs[k], ref_lens[k], &r, err);
    if (st != CB_OK) {
      cb_error_wrap(err, "reference %zu", k + 1);
      goto done;
    }
    if (h.len == r.len && memcmp(h.data ? h.data : "", r.data ? r.data : "", h.len) == 0)
      out->exact = 1;
    double f1 = f1_of(&h, &r);
    if (f1 > out->f1) out->f1 = f1;
  }
done:
  cb_buf_free(&h);
  cb_buf_free(&r);
  return st;
}

cb_eval_squad cb_eval_squad_corpus(const cb_eval_squad *seg, size_t n) {
  cb_eval_squad c = {0, 0};
  for (size_t i = 0; i < n; i++) { /* compute_score: summed in order */
    c.exact += seg[i].exact;
    c.f1 += seg[i].f1;
  }
  if (n) {
    c.exact = 100.0 * c.exact / (double)n;
    c.f1 = 100.0 * c.f1 / (double)n;
  }
  return c;
}
