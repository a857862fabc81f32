/*
 * dialog_check.c - what `probe dialog` holds an answer to (dialog.h): a regular
 * expression, a JSON path into the answer's JSON, a slot's value stated, no other
 * value of the slot's kind stated, and whether the answer asks back.
 *
 * Values compare as the same when their texts are equal ignoring ASCII case and
 * surrounding spaces, or when both are numbers of equal value ("300" and "300.0").
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "probe/dialog.h"

const char *cb__probe_dialog_check_kind_name(cb__probe_dialog_check_kind k) {
  static const char *const names[] = {"regex", "json", "mentions", "not_contradicts"};
  return k < CB__PROBE_DIALOG_CHECK_KINDS ? names[k] : "?";
}

pcre2_code *cb__probe_dialog_compile(const char *pattern, int caseless, char **why) {
  uint32_t opts = PCRE2_UTF | PCRE2_UCP | (caseless ? PCRE2_CASELESS : 0);
#ifdef PCRE2_MATCH_INVALID_UTF
  opts |= PCRE2_MATCH_INVALID_UTF; /* a model's answer need not be valid UTF-8 */
#endif
  int code;
  PCRE2_SIZE at;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &code, &at, NULL);
  if (!re) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    size_t n = strlen((const char *)msg) + 64;
    *why = cb_malloc(n);
    snprintf(*why, n, "%s at offset %zu", (const char *)msg, (size_t)at);
  }
  return re;
}

/* The next match of re in s[from, len): 1 and its bounds (group 1 when the pattern
 * has one and it took part), 0 when there is none (or the subject cannot be read). */
static int next_match(const pcre2_code *re, const char *s, size_t len, size_t from, size_t *mstart,
                      size_t *mend, size_t *vstart, size_t *vend) {
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  int rc = pcre2_match(re, (PCRE2_SPTR)s, len, from, 0, md, NULL);
  int found = rc > 0;
  if (found) {
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *mstart = ov[0];
    *mend = ov[1];
    int g = rc > 1 && ov[2] != PCRE2_UNSET ? 1 : 0;
    *vstart = ov[2 * g];
    *vend = ov[2 * g + 1];
  }
  pcre2_match_data_free(md);
  return found;
}

static void trim(const char **s, size_t *n) {
  while (*n && isspace((unsigned char)**s)) (*s)++, (*n)--;
  while (*n && isspace((unsigned char)(*s)[*n - 1])) (*n)--;
}

/* A whole number text as a double, or NAN. */
static double number_of(const char *s, size_t n) {
  char buf[64];
  if (!n || n >= sizeof buf) return NAN;
  memcpy(buf, s, n);
  buf[n] = '\0';
  char *end;
  double x = strtod(buf, &end);
  return *end || !isfinite(x) ? NAN : x;
}

static int same_value(const char *a, size_t an, const char *b, size_t bn) {
  trim(&a, &an);
  trim(&b, &bn);
  double x = number_of(a, an), y = number_of(b, bn);
  if (!isnan(x) && !isnan(y)) return x == y;
  if (an != bn) return 0;
  for (size_t i = 0; i < an; i++)
    if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
  return 1;
}

static int word_char(char c) { return isalnum((unsigned char)c) || (unsigned char)c >= 0x80; }

/* The value stated as a word of its own, ignoring ASCII case ("300" is not in "3000"). */
static int mentions(const char *value, const char *s, size_t len) {
  size_t vn = strlen(value);
  trim(&value, &vn);
  if (!vn || vn > len) return 0;
  for (size_t i = 0; i + vn <= len; i++) {
    size_t k = 0;
    while (k < vn && tolower((unsigned char)s[i + k]) == tolower((unsigned char)value[k])) k++;
    if (k < vn) continue;
    int left = i == 0 || !word_char(s[i - 1]) || !word_char(value[0]);
    int right = i + vn == len || !word_char(s[i + vn]) || !word_char(value[vn - 1]);
    if (left && right) return 1;
  }
  return 0;
}

/* Every value of the slot's kind in the answer is the slot's. */
static int not_contradicts(const cb__probe_dialog_check *c, const char *s, size_t len) {
  size_t from = 0, ms, me, vs, ve;
  while (from <= len && next_match(c->re, s, len, from, &ms, &me, &vs, &ve)) {
    if (!same_value(s + vs, ve - vs, c->expected, strlen(c->expected))) return 0;
    from = me > ms ? me : me + 1;
  }
  return 1;
}

/* ---- JSON answers --------------------------------------------------------------------- */

/* The first pat in s[0..n), NULL when none (memmem is not POSIX). */
static const char *find(const char *s, size_t n, const char *pat) {
  size_t pl = strlen(pat);
  for (size_t i = 0; i + pl <= n; i++)
    if (!memcmp(s + i, pat, pl)) return s + i;
  return NULL;
}

static json_t *parse_json(const char *s, size_t n) {
  trim(&s, &n);
  if (!n || (*s != '{' && *s != '[')) return NULL;
  return json_loadb(s, n, JSON_DECODE_ANY, NULL);
}

json_t *cb__probe_dialog_answer_json(const char *answer, size_t len) {
  json_t *j = parse_json(answer, len);
  if (j) return j;
  /* a fenced block: ```json ... ``` */
  const char *fence = find(answer, len, "```");
  if (fence) {
    const char *body = memchr(fence, '\n', len - (size_t)(fence - answer));
    const char *close = body ? find(body, len - (size_t)(body - answer), "```") : NULL;
    if (close && (j = parse_json(body, (size_t)(close - body)))) return j;
  }
  /* the outermost braces */
  const char *open = memchr(answer, '{', len), *close = NULL;
  for (const char *p = answer + len; p > answer && !close; p--)
    if (p[-1] == '}') close = p;
  return open && close && close > open ? parse_json(open, (size_t)(close - open)) : NULL;
}

/* PATH: "$.a.b[0]", "a.b[0]" or "$": NULL when it leads nowhere. */
static json_t *json_at(json_t *root, const char *path) {
  const char *p = path;
  if (*p == '$') p++;
  json_t *cur = root;
  while (cur && *p) {
    if (*p == '.') {
      p++;
      size_t n = strcspn(p, ".[");
      char key[256];
      if (!n || n >= sizeof key) return NULL;
      memcpy(key, p, n);
      key[n] = '\0';
      cur = json_object_get(cur, key);
      p += n;
    } else if (*p == '[') {
      char *end;
      long i = strtol(p + 1, &end, 10);
      if (end == p + 1 || *end != ']' || i < 0) return NULL;
      cur = json_array_get(cur, (size_t)i);
      p = end + 1;
    } else { /* a first key without the leading dot */
      size_t n = strcspn(p, ".[");
      char key[256];
      if (n >= sizeof key) return NULL;
      memcpy(key, p, n);
      key[n] = '\0';
      cur = json_object_get(cur, key);
      p += n;
    }
  }
  return cur;
}

static int json_check(const cb__probe_dialog_check *c, const char *answer, size_t len) {
  json_t *root = cb__probe_dialog_answer_json(answer, len);
  json_t *v = root ? json_at(root, c->path) : NULL;
  int ok = v != NULL && !json_is_null(v);
  if (ok && c->expected) {
    char num[64];
    if (json_is_string(v)) {
      ok = same_value(json_string_value(v), json_string_length(v), c->expected, strlen(c->expected));
    } else if (json_is_number(v)) {
      snprintf(num, sizeof num, "%.17g", json_number_value(v));
      ok = same_value(num, strlen(num), c->expected, strlen(c->expected));
    } else if (json_is_boolean(v)) {
      const char *t = json_is_true(v) ? "true" : "false";
      ok = same_value(t, strlen(t), c->expected, strlen(c->expected));
    } else {
      ok = 0; /* an object or a list equals no text */
    }
  }
  json_decref(root);
  return ok;
}

int cb__probe_dialog_check_eval(const cb__probe_dialog_check *c, const char *answer, size_t len) {
  size_t a, b, vs, ve;
  switch (c->kind) {
    case CB__PROBE_DIALOG_REGEX: return next_match(c->re, answer, len, 0, &a, &b, &vs, &ve);
    case CB__PROBE_DIALOG_JSON: return json_check(c, answer, len);
    case CB__PROBE_DIALOG_MENTIONS: return mentions(c->expected, answer, len);
    case CB__PROBE_DIALOG_NOT_CONTRADICTS: return not_contradicts(c, answer, len);
    default: return 0;
  }
}

int cb__probe_dialog_is_clarification(const cb__probe_dialog_suite *s, const char *answer, size_t len) {
  if (!memchr(answer, '?', len)) return 0;
  size_t a, b, vs, ve;
  for (size_t i = 0; i < s->n_clarify; i++)
    if (next_match(s->clarify[i], answer, len, 0, &a, &b, &vs, &ve)) return 1;
  return 0;
}
