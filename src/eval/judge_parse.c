/*
 * judge_parse.c - reading a judge's answer. Two forms are accepted:
 *  - the whole answer (blank space around it aside) is a JSON object:
 *    {"score": n, "reason": "..."} for one answer, {"verdict": "A"|"B"|"C", ...} for a
 *    pair;
 *  - MT-Bench's markers anywhere in the text: "[[n]]" (FastChat's one_score_pattern,
 *    \[\[(\d+\.?\d*)\]\]) for one answer, "[[A]]", "[[B]]", "[[C]]" for a pair.
 * FastChat takes the first marker; here an answer with two different ones is a parse
 * failure (the judge said two things), as is one with none, a score off the rubric's
 * scale or a fractional score on its whole-number scale. Nothing becomes a silent 0.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/eval_judge.h"

static cb_judge_answer failed(const char *why) {
  return (cb_judge_answer){.ok = 0, .score = NAN, .verdict = 0, .why = why};
}

/* The answer as a JSON object when it is one, else NULL. */
static json_t *as_json(const char *text, size_t len) {
  size_t a = 0, b = len;
  while (a < b && isspace((unsigned char)text[a])) a++;
  while (b > a && isspace((unsigned char)text[b - 1])) b--;
  if (b - a < 2 || text[a] != '{' || text[b - 1] != '}') return NULL;
  json_t *j = json_loadb(text + a, b - a, JSON_REJECT_DUPLICATES, NULL);
  if (j && !json_is_object(j)) {
    json_decref(j);
    j = NULL;
  }
  return j;
}

static cb_judge_answer check_scale(const cb_judge_rubric *r, double s) {
  if (!(s >= r->scale_min && s <= r->scale_max)) return failed("score off the scale");
  if (s != floor(s)) return failed("score not a whole number");
  return (cb_judge_answer){.ok = 1, .score = s};
}

/* "[[" digits ["." digits] "]]" at p: its length, the value in *v; 0 if none. */
static size_t rating_at(const char *p, const char *end, double *v) {
  if (end - p < 5 || p[0] != '[' || p[1] != '[') return 0;
  const char *q = p + 2;
  const char *digits = q;
  while (q < end && isdigit((unsigned char)*q)) q++;
  if (q == digits) return 0;
  if (q < end && *q == '.') {
    q++;
    while (q < end && isdigit((unsigned char)*q)) q++;
  }
  if (end - q < 2 || q[0] != ']' || q[1] != ']') return 0;
  char num[64];
  size_t n = (size_t)(q - digits);
  if (n >= sizeof num) return 0;
  memcpy(num, digits, n);
  num[n] = '\0';
  *v = strtod(num, NULL);
  return (size_t)(q + 2 - p);
}

cb_judge_answer cb_judge_parse_single(const cb_judge_rubric *r, const char *text, size_t len) {
  json_t *j = as_json(text, len);
  if (j) {
    json_t *s = json_object_get(j, "score");
    cb_judge_answer a = json_is_number(s) ? check_scale(r, json_number_value(s))
                                          : failed("JSON without a numeric \"score\"");
    json_decref(j);
    return a;
  }
  const char *end = text + len;
  int found = 0;
  double first = NAN;
  for (const char *p = text; p < end; p++) {
    double v;
    size_t n = rating_at(p, end, &v);
    if (!n) continue;
    if (found && v != first) return failed("two different [[rating]] markers");
    first = v;
    found = 1;
    p += n - 1;
  }
  if (!found) return failed("no JSON score and no [[rating]]");
  return check_scale(r, first);
}

static char verdict_of(const char *s) {
  if (!strcmp(s, "A") || !strcmp(s, "B") || !strcmp(s, "C")) return s[0];
  if (!strcmp(s, "tie")) return 'C';
  return 0;
}

cb_judge_answer cb_judge_parse_pair(const char *text, size_t len) {
  json_t *j = as_json(text, len);
  if (j) {
    json_t *v = json_object_get(j, "verdict");
    char c = json_is_string(v) ? verdict_of(json_string_value(v)) : 0;
    json_decref(j);
    if (!c) return failed("JSON without a \"verdict\" of A, B, C or tie");
    return (cb_judge_answer){.ok = 1, .score = NAN, .verdict = c};
  }
  char seen = 0;
  for (size_t i = 0; i + 5 <= len; i++) {
    if (memcmp(text + i, "[[", 2) || memcmp(text + i + 3, "]]", 2)) continue;
    char c = text[i + 2];
    if (c != 'A' && c != 'B' && c != 'C') continue;
    if (seen && seen != c) return failed("two different verdicts");
    seen = c;
  }
  if (!seen) return failed("no JSON verdict and no [[A]], [[B]] or [[C]]");
  return (cb_judge_answer){.ok = 1, .score = NAN, .verdict = seen};
}
