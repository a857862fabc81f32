/*
 * jsonl_line.c - the scanner path of jsonl_line.h. A line is the object jansson would
 * build, read member by member: the two wanted fields' strings decoded into j->out,
 * every other value validated and skipped (a line jansson rejects must never be
 * accepted here). A wanted key seen twice is left to jansson (it keeps the last), as
 * is a wanted value of another type than the reader takes.
 */
#include "jsonl_line.h"

#include <string.h>

#include "calibench/alloc.h"
#include "client/json_scan.h"

static int key_is(const char *k, size_t n, const char *want) {
  return want && strlen(want) == n && !memcmp(k, want, n);
}

static void push_ref(cb__eval_jsonl *j, cb_eval_text t) {
  if (j->nrefs == j->refs_cap) {
    j->refs_cap = j->refs_cap ? j->refs_cap * 2 : 8;
    j->refs = cb_reallocarray(j->refs, j->refs_cap, sizeof *j->refs);
  }
  j->refs[j->nrefs++] = t;
}

static int text(cb__json_scan *s, cb_eval_text *t) {
  if (cb__json_peek(s) != '"') return cb__json_fail(s, CB__JSON_FALLBACK, "not a string");
  return cb__json_string(s, 1, &t->s, &t->n);
}

/* The reference field's value: a string, or a non-empty list of strings. */
static int refs(cb__eval_jsonl *j, cb__json_scan *s) {
  cb_eval_text t;
  if (cb__json_peek(s) != '[') {
    if (text(s, &t)) return -1;
    push_ref(j, t);
    return 0;
  }
  int first = 1, r;
  if (cb__json_enter(s, '[')) return -1;
  while ((r = cb__json_next(s, ']', &first)) == 1) {
    if (text(s, &t)) return -1;
    push_ref(j, t);
  }
  if (r < 0) return -1;
  return j->nrefs ? 0 : cb__json_fail(s, CB__JSON_FALLBACK, "an empty list");
}

static int members(cb__eval_jsonl *j, cb__json_scan *s) {
  int first = 1, r, got_hyp = 0, got_ref = 0;
  if (cb__json_enter(s, '{')) return -1;
  while ((r = cb__json_next(s, '}', &first)) == 1) {
    const char *k;
    size_t kn;
    if (cb__json_key(s, &k, &kn)) return -1;
    int is_hyp = key_is(k, kn, j->field), is_ref = key_is(k, kn, j->ref_field);
    if (!is_hyp && !is_ref) {
      if (cb__json_skip(s)) return -1;
      continue;
    }
    if ((is_hyp && got_hyp) || (is_ref && got_ref))
      return cb__json_fail(s, CB__JSON_FALLBACK, "a wanted key twice");
    if (is_hyp) {
      if (text(s, &j->hyp)) return -1;
      if (is_ref) push_ref(j, j->hyp); /* --field and --ref-field name one key */
    } else if (refs(j, s)) {
      return -1;
    }
    got_hyp |= is_hyp;
    got_ref |= is_ref;
  }
  if (r < 0 || cb__json_end(s)) return -1;
  if (!got_hyp || (j->ref_field && !got_ref))
    return cb__json_fail(s, CB__JSON_FALLBACK, "a field missing");
  return 0;
}

int cb__eval_jsonl_line(cb__eval_jsonl *j, const char *line, size_t len) {
  /* A raw NUL byte: jansson's reading of one (it may end the text there) is its own,
   * so such a line is jansson's, errors and all. */
  if (memchr(line, '\0', len)) {
    j->nrefs = 0;
    memset(&j->hyp, 0, sizeof j->hyp);
    return CB__EVAL_JSONL_JANSSON;
  }
  cb__json_scan s;
  memset(&s, 0, sizeof s);
  s.p = (const unsigned char *)line;
  s.end = s.p + len;
  s.out = j->out;
  s.out_len = j->out_len;
  s.no_nul = 1;
  j->nrefs = 0;
  memset(&j->hyp, 0, sizeof j->hyp);
  if (cb__json_peek(&s) == '{') {
    members(j, &s);
  } else if (!cb__json_skip(&s) && !cb__json_end(&s)) {
    cb__json_fail(&s, CB__JSON_FALLBACK, "not an object");
  }
  if (s.status == CB__JSON_OK) {
    j->out_len = s.out_len;
    return CB__EVAL_JSONL_OK;
  }
  j->nrefs = 0;
  return s.status == CB__JSON_INVALID ? CB__EVAL_JSONL_NOT_JSON : CB__EVAL_JSONL_JANSSON;
}

void cb__eval_jsonl_free(cb__eval_jsonl *j) {
  cb_free(j->refs);
  j->refs = NULL;
  j->nrefs = j->refs_cap = 0;
}
