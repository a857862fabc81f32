/*
 * input.c - the corpus `eval score` scores: plain-text streams (sacrebleu's CLI:
 * sacrebleu.py reads each file line by line with newline="\n" and rstrip()s every
 * line) or JSONL records (jsonl_line.h's scanner, jansson for a line it leaves).
 * Every text is checked to be well-formed UTF-8 here, so the metrics never see
 * anything else.
 */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/eval.h"
#include "calibench/limits.h"
#include "calibench/utf8.h"
#include "eval_text.h"
#include "jsonl_line.h"

void cb_eval_corpus_free(cb_eval_corpus *c) {
  cb_free(c->segs);
  cb_free(c->ref_texts);
  for (size_t i = 0; i < c->nbufs; i++) cb_buf_free(&c->bufs[i]);
  cb_free(c->bufs);
  json_decref(c->json);
  memset(c, 0, sizeof *c);
}

const char *cb_eval_corpus_nrefs(const cb_eval_corpus *c, char buf[24]) {
  if (c->nrefs_min != c->nrefs_max) return "var";
  snprintf(buf, 24, "%zu", c->nrefs_min);
  return buf;
}

/* Offset of the first ill-formed byte of s[0..n), n when none. */
static size_t bad_utf8(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    if ((unsigned char)s[i] < 0x80) {
      i++;
      continue;
    }
    size_t l = cb_utf8_seq_len(s + i, n - i, NULL);
    if (!l) return i;
    i += l;
  }
  return n;
}

/* The file's lines as texts (newline and trailing whitespace dropped). */
static cb_status read_lines(cb_buf *buf, const char *path, cb_eval_text **lines, size_t *count,
                            cb_error *err) {
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, buf, err);
  if (st) return st;
  size_t n = 0, cap = 0;
  cb_eval_text *v = NULL;
  for (size_t pos = 0; pos < buf->len;) {
    const char *nl = memchr(buf->data + pos, '\n', buf->len - pos);
    size_t end = nl ? (size_t)(nl - buf->data) : buf->len;
    size_t bad = bad_utf8(buf->data + pos, end - pos);
    if (bad < end - pos) {
      cb_free(v);
      return cb_error_at(err, CB_ERR_PARSE, path, (long)n + 1, (long)bad + 1,
                         "invalid UTF-8 (byte 0x%02X)", (unsigned char)buf->data[pos + bad]);
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      v = cb_reallocarray(v, cap, sizeof *v);
    }
    v[n++] = (cb_eval_text){buf->data + pos, cb__eval_rstrip(buf->data + pos, end - pos)};
    pos = end + 1;
  }
  *lines = v;
  *count = n;
  return CB_OK;
}

cb_status cb_eval_read_text(cb_eval_corpus *c, const char *hyp_path, const char *const *ref_paths,
                            size_t nref, cb_error *err) {
  memset(c, 0, sizeof *c);
  c->nbufs = nref + 1;
  c->bufs = cb_calloc(c->nbufs, sizeof *c->bufs);
  cb_eval_text *hyps = NULL, **refs = cb_calloc(nref, sizeof *refs);
  size_t nhyp = 0;
  cb_status st = read_lines(&c->bufs[0], hyp_path, &hyps, &nhyp, err);
  if (!st && !nhyp)
    st = cb_error_at(err, CB_ERR_PARSE, hyp_path, 0, 0, "no segments: the file is empty");
  for (size_t r = 0; !st && r < nref; r++) {
    size_t cnt = 0;
    st = read_lines(&c->bufs[r + 1], ref_paths[r], &refs[r], &cnt, err);
    if (!st && cnt != nhyp)
      st = cb_error_at(err, CB_ERR_PARSE, ref_paths[r], 0, 0,
                       "%zu lines, but the hypotheses (%s) have %zu: every reference stream "
                       "needs one line per hypothesis",
                       cnt, hyp_path, nhyp);
  }
  if (!st) {
    c->n = nhyp;
    c->segs = cb_calloc(nhyp, sizeof *c->segs);
    c->ref_texts = cb_calloc(nhyp * nref, sizeof *c->ref_texts);
    for (size_t i = 0; i < nhyp; i++) {
      for (size_t r = 0; r < nref; r++) c->ref_texts[i * nref + r] = refs[r][i];
      c->segs[i] = (cb_eval_segment){hyps[i], c->ref_texts + i * nref, nref};
    }
    c->nrefs_min = c->nrefs_max = nref;
  }
  cb_free(hyps);
  for (size_t r = 0; r < nref; r++) cb_free(refs[r]);
  cb_free(refs);
  if (st) cb_eval_corpus_free(c);
  return st;
}

static cb_status json_text(json_t *v, const char *path, long line, const char *field,
                           cb_eval_text *out, cb_error *err) {
  if (!json_is_string(v))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "%s: expected a string", field);
  out->s = json_string_value(v);
  out->n = json_string_length(v);
  if (memchr(out->s, '\0', out->n))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "%s: a NUL character", field);
  return CB_OK;
}

/* A line the scanner left to jansson (jsonl_line.h): parsed into a record kept in
 * c->json, whose strings the texts point into, or the error that says what is wrong.
 * refs: this line's references, grown as needed. */
static cb_status jansson_line(cb_eval_corpus *c, const char *s, size_t len, const char *path,
                              long line, const char *field, const char *ref_field,
                              cb__eval_jsonl *j, cb_error *err) {
  json_error_t je;
  json_t *rec = json_loadb(s, len, JSON_DECODE_ANY, &je);
  if (!rec) return cb_error_at(err, CB_ERR_PARSE, path, line, je.column, "not JSON: %s", je.text);
  if (!c->json) c->json = json_array();
  json_array_append_new(c->json, rec);
  if (!json_is_object(rec)) return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected a JSON object");
  json_t *h = json_object_get(rec, field), *r = ref_field ? json_object_get(rec, ref_field) : NULL;
  if (!h || (ref_field && !r))
    return cb_error_at(err, CB_ERR_PARSE, path, line, 0, "no field '%s' (--%s)", !h ? field : ref_field,
                       !h ? "field" : "ref-field");
  cb_status st = json_text(h, path, line, field, &j->hyp, err);
  size_t nr = !r ? 0 : json_is_array(r) ? json_array_size(r) : 1;
  if (!st && json_is_array(r) && !nr)
    st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "%s: an empty list: a segment needs a reference",
                     ref_field);
  if (nr > j->refs_cap) {
    j->refs_cap = nr;
    j->refs = cb_reallocarray(j->refs, nr, sizeof *j->refs);
  }
  for (size_t k = 0; !st && k < nr; k++)
    st = json_text(json_is_array(r) ? json_array_get(r, k) : r, path, line, ref_field, &j->refs[k], err);
  j->nrefs = nr;
  return st;
}

/* Room for n more bytes in b, in transparent huge pages where the system gives them on
 * request: a buffer of megabytes filled once otherwise takes a page fault per 4 KiB
 * (the 8.7 MB ROUGE bench corpus' decoded strings: ~2,100 faults). Only a hint:
 * nothing changes where it is refused. */
static void reserve_huge(cb_buf *b, size_t n) {
  cb_buf_reserve(b, n); /* no cap: cannot fail */
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t from = ((uintptr_t)b->data + huge - 1) & ~(huge - 1);
  uintptr_t to = ((uintptr_t)b->data + b->alloc) & ~(huge - 1);
  if (to > from) madvise((void *)from, to - from, MADV_HUGEPAGE);
#endif
}

/* The JSONL file is read chunk by chunk (cb_file_each_chunk) and never kept whole: each
 * line's strings are decoded into c->bufs, the last of which has room for what is
 * still to come (the regular file's size, from the start), and a line cut by a chunk's
 * end waits in `cut`. A record's error is kept until the file has been read, so an
 * error of the file itself (a NUL byte, a line or the file over its cap), wherever it
 * is, is the one said, as when the file was read before any line was looked at. */
typedef struct {
  cb_eval_corpus *c;
  const char *path, *field, *ref_field;
  cb__eval_jsonl j;
  cb_buf cut;
  size_t left;   /* bytes of the file not yet decoded (a hint: 0 for a pipe) */
  long line;
  cb_status st;  /* the first record's error, in rec_err */
  cb_error rec_err;
  size_t cap, rcap, nref_total;
  size_t *ref_first; /* per segment: its first reference in ref_texts */
} jsonl_reader;

/* Room in the strings' buffer for a line of len bytes (decoding never grows a string):
 * when the last buffer is short, a new one, so the texts already in one stay put. */
static void room_for(jsonl_reader *rd, size_t len) {
  cb_eval_corpus *c = rd->c;
  cb_buf *b = &c->bufs[c->nbufs - 1];
  size_t used = rd->j.out_len;
  if (b->data && b->alloc - used > len) return;
  b->len = used;
  if (b->data) { /* a pipe, or a file that grew: a buffer more */
    c->bufs = cb_reallocarray(c->bufs, ++c->nbufs, sizeof *c->bufs);
    b = &c->bufs[c->nbufs - 1];
    cb_buf_init(b, 0);
  }
  size_t want = rd->left > len ? rd->left : len;
  reserve_huge(b, want < ((size_t)1 << 20) ? (size_t)1 << 20 : want);
  rd->j.out = b->data;
  rd->j.out_len = 0;
}

static void one_line(jsonl_reader *rd, const char *s, size_t len) {
  cb_eval_corpus *c = rd->c;
  cb__eval_jsonl *j = &rd->j;
  rd->line++;
  rd->left = rd->left > len + 1 ? rd->left - len - 1 : 0;
  if (rd->st || cb__eval_lstrip(s, len) == len) return; /* after an error; a blank line */
  room_for(rd, len);
  if (cb__eval_jsonl_line(j, s, len) != CB__EVAL_JSONL_OK)
    rd->st = jansson_line(c, s, len, rd->path, rd->line, rd->field, rd->ref_field, j, &rd->rec_err);
  if (rd->st) return;
  if (c->n == rd->cap) {
    rd->cap = rd->cap ? rd->cap * 2 : 1024;
    c->segs = cb_reallocarray(c->segs, rd->cap, sizeof *c->segs);
    rd->ref_first = cb_reallocarray(rd->ref_first, rd->cap, sizeof *rd->ref_first);
  }
  size_t nr = j->nrefs;
  if (rd->nref_total + nr > rd->rcap) {
    rd->rcap = (rd->nref_total + nr) * 2;
    c->ref_texts = cb_reallocarray(c->ref_texts, rd->rcap, sizeof *c->ref_texts);
  }
  if (nr) memcpy(c->ref_texts + rd->nref_total, j->refs, nr * sizeof *j->refs);
  c->segs[c->n] = (cb_eval_segment){j->hyp, NULL, nr};
  rd->ref_first[c->n] = rd->nref_total;
  rd->nref_total += nr;
  if (!c->n || nr < c->nrefs_min) c->nrefs_min = nr;
  if (nr > c->nrefs_max) c->nrefs_max = nr;
  c->n++;
}

static cb_status jsonl_chunk(void *arg, const char *data, size_t n, cb_error *err) {
  (void)err;
  jsonl_reader *rd = arg;
  while (n) {
    const char *nl = memchr(data, '\n', n);
    if (!nl) { /* the cap on a line's length has been checked (cb_file_each_chunk) */
      cb_buf_append(&rd->cut, data, n);
      break;
    }
    size_t part = (size_t)(nl - data);
    if (rd->cut.len) {
      cb_buf_append(&rd->cut, data, part);
      one_line(rd, rd->cut.data, rd->cut.len);
      cb_buf_reset(&rd->cut);
    } else {
      one_line(rd, data, part);
    }
    data += part + 1;
    n -= part + 1;
  }
  return CB_OK;
}

cb_status cb_eval_read_jsonl(cb_eval_corpus *c, const char *path, const char *field,
                             const char *ref_field, cb_error *err) {
  memset(c, 0, sizeof *c);
  c->nbufs = 1; /* the strings decoded from the file */
  c->bufs = cb_calloc(c->nbufs, sizeof *c->bufs);
  jsonl_reader rd = {.c = c, .path = path, .field = field, .ref_field = ref_field};
  rd.j = (cb__eval_jsonl){.field = field, .ref_field = ref_field};
  struct stat sb; /* a regular file's size: its strings' buffer in one piece from the start */
  if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size <= CB_LIMIT_DATASET_BYTES)
    rd.left = (size_t)sb.st_size;
  cb_status st = cb_file_each_chunk(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, jsonl_chunk,
                                    &rd, err);
  if (!st && rd.cut.len) one_line(&rd, rd.cut.data, rd.cut.len); /* no newline at the end */
  if (!st && rd.st) {
    st = rd.st;
    if (err) *err = rd.rec_err;
  }
  cb_buf *last = &c->bufs[c->nbufs - 1];
  if (last->data) {
    last->len = rd.j.out_len;
    last->data[last->len] = '\0';
  }
  cb_buf_free(&rd.cut);
  cb__eval_jsonl_free(&rd.j);
  if (!st && !c->n) st = cb_error_at(err, CB_ERR_PARSE, path, 0, 0, "no segments: no JSON records");
  if (!st)
    for (size_t i = 0; i < c->n; i++)
      c->segs[i].refs = c->ref_texts ? c->ref_texts + rd.ref_first[i] : NULL;
  cb_free(rd.ref_first);
  if (st) cb_eval_corpus_free(c);
  return st;
}
