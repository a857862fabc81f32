/*
 * behavior_context.c - the `context` section of a behaviour file: needle recall as a
 * function of the prompt's length and the needle's depth (docs/probe.md, "context").
 *
 * How the simulator reads a prompt (the formats are RULER's needle-in-a-haystack
 * templates, Hsieh et al. 2024, github.com/NVIDIA/RULER, scripts/data/synthetic/niah.py):
 *   the question  the last "special magic numbers for KEY mentioned in the provided
 *                 text?" in the text;
 *   a needle      each "special magic numbers for KEY is: VALUE." before it, with the
 *                 question's KEY (VALUE: up to 64 bytes without '.', ' ' or a newline);
 *   its depth     its offset over the question's offset (0 = the start of the text,
 *                 1 = just before the question).
 * Each needle's value is recalled with probability
 *   p = recall                                              L <= breakpoint_tokens
 *       recall / (1 + exp((L - breakpoint - width/2) / (width/10)))   beyond it
 * times (1 - middle_dip * 4 d (1 - d)) (the dip is whole at 50% depth and fades to 0 at
 * 0 and 100%), times (1 - distractor_penalty) for each needle of another key within
 * distractor_window_tokens of it (pressure injection). L is the prompt's length in
 * tokens as the server counts them. The answer lists each value: recalled, or a
 * wrong 7-digit number in its place. A prompt without the question is left to the
 * next section (or the synthetic text).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibench/alloc.h"
#include "sim/behavior.h"

typedef struct context_behavior {
  double breakpoint_tokens, width_tokens, recall, middle_dip;
  double distractor_penalty, distractor_window_tokens;
} context_behavior;

static const char *const KEYS[] = {"breakpoint_tokens", "width_tokens", "recall", "middle_dip",
                                   "distractor_penalty", "distractor_window_tokens", NULL};

void cb__sim_behavior_context_free(void *section) { cb_free(section); }

static cb_status read_key(const cb__yaml_ctx *y, const yaml_node_t *v, const char *name,
                          const char *key, void *ctx) {
  context_behavior *c = ctx;
  if (!strcmp(name, "breakpoint_tokens"))
    return cb__yaml_number(y->path, v, key, 1, 0, 1e9, &c->breakpoint_tokens, y->err);
  if (!strcmp(name, "width_tokens"))
    return cb__yaml_number(y->path, v, key, 0, 1, 1e9, &c->width_tokens, y->err);
  if (!strcmp(name, "recall")) return cb__yaml_number(y->path, v, key, 0, 0, 1, &c->recall, y->err);
  if (!strcmp(name, "middle_dip"))
    return cb__yaml_number(y->path, v, key, 0, 0, 1, &c->middle_dip, y->err);
  if (!strcmp(name, "distractor_penalty"))
    return cb__yaml_number(y->path, v, key, 0, 0, 1, &c->distractor_penalty, y->err);
  /* distractor_window_tokens, the last of KEYS */
  return cb__yaml_number(y->path, v, key, 0, 1, 1e9, &c->distractor_window_tokens, y->err);
}

cb_status cb__sim_behavior_context_parse(const cb__yaml_ctx *y, const yaml_node_t *map,
                                         void **out) {
  context_behavior *c = cb_calloc(1, sizeof *c);
  *c = (context_behavior){.breakpoint_tokens = -1, .width_tokens = 1, .recall = 1,
                          .distractor_window_tokens = 256};
  *out = c; /* on failure too: the loader frees it (behavior.h) */
  cb_status st = cb__yaml_section(y, map, "context", KEYS, read_key, c);
  if (st == CB_OK && c->breakpoint_tokens < 0)
    st = cb__yaml_at(y, map, CB_ERR_PARSE, "section 'context': key 'breakpoint_tokens' is required");
  return st;
}

#define NEEDLE_MARK "special magic numbers for "
#define QUESTION_TAIL " mentioned in the provided text?"
#define VALUE_MAX 64

/* The last occurrence of `pat` in text[0..n), or NULL. */
static const char *last_of(const char *text, size_t n, const char *pat) {
  size_t m = strlen(pat);
  for (size_t i = n >= m ? n - m + 1 : 0; i-- > 0;)
    if (!memcmp(text + i, pat, m)) return text + i;
  return NULL;
}

static const char *find(const char *text, const char *end, const char *pat) {
  size_t m = strlen(pat);
  for (const char *p = text; p + m <= end; p++) {
    p = memchr(p, pat[0], (size_t)(end - p));
    if (!p || p + m > end) return NULL;
    if (!memcmp(p, pat, m)) return p;
  }
  return NULL;
}

typedef struct needle {
  const char *at;    /* where its sentence's mark starts */
  const char *value;
  size_t value_len;
  int same_key;      /* the question's key */
} needle;

/* Every needle before `end`: "special magic numbers for K is: V." (*out owned, n of
 * them; as many as the prompt holds: a pressure run injects hundreds). */
static size_t needles(const char *text, const char *end, const char *key, size_t key_len,
                      needle **out) {
  size_t n = 0, cap = 0;
  *out = NULL;
  size_t mark = strlen(NEEDLE_MARK);
  for (const char *p = text; (p = find(p, end, NEEDLE_MARK)) != NULL; p += mark) {
    const char *k = p + mark, *is = find(k, end, " is: ");
    if (!is || is - k > 128 || memchr(k, '\n', (size_t)(is - k))) continue;
    const char *v = is + 5, *ve = v;
    while (ve < end && ve - v <= VALUE_MAX && *ve != '.' && *ve != ' ' && *ve != '\n') ve++;
    if (ve == v || ve - v > VALUE_MAX) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      *out = cb_reallocarray(*out, cap, sizeof **out);
    }
    (*out)[n++] = (needle){p, v, (size_t)(ve - v),
                           (size_t)(is - k) == key_len && !memcmp(k, key, key_len)};
  }
  return n;
}

static double length_recall(const context_behavior *c, double L) {
  if (L <= c->breakpoint_tokens) return c->recall;
  double x = (L - c->breakpoint_tokens - c->width_tokens / 2) / (c->width_tokens / 10);
  return c->recall / (1 + exp(x));
}

int cb__sim_behavior_context_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply) {
  const context_behavior *c = section;
  const char *text = rq->text;
  const char *tail = last_of(text, rq->len, QUESTION_TAIL);
  if (!tail) return 0;
  /* the question's key: between the last NEEDLE_MARK before the tail and the tail */
  const char *q = last_of(text, (size_t)(tail - text), NEEDLE_MARK);
  if (!q || tail - (q + strlen(NEEDLE_MARK)) > 128) return 0;
  const char *key = q + strlen(NEEDLE_MARK);
  size_t key_len = (size_t)(tail - key);
  needle *nd;
  size_t n = needles(text, q, key, key_len, &nd);
  double L = (double)rq->prompt_tokens;
  double tokens_per_byte = rq->len ? L / (double)rq->len : 0;
  double base = length_recall(c, L);
  cb_buf *out = &reply->text;
  cb_buf_appendf(out, "The special magic numbers for %.*s mentioned in the provided text are: ",
                 (int)key_len, key);
  size_t listed = 0;
  for (size_t i = 0; i < n; i++) {
    if (!nd[i].same_key) continue;
    double d = q > text ? (double)(nd[i].at - text) / (double)(q - text) : 0;
    double p = base * (1 - c->middle_dip * 4 * d * (1 - d));
    for (size_t j = 0; j < n && c->distractor_penalty > 0 && p > 0; j++) {
      double dist = fabs((double)(nd[j].at - nd[i].at)) * tokens_per_byte;
      if (!nd[j].same_key && dist <= c->distractor_window_tokens) p *= 1 - c->distractor_penalty;
    }
    double u = cb__sim_behavior_uniform(rq, UINT64_C(0x6e6565646c65), i); /* "needle" */
    if (listed++) cb_buf_append_str(out, ", ");
    if (u < p) {
      cb_buf_append(out, nd[i].value, nd[i].value_len);
    } else {
      /* a wrong number in its place: 7 digits, never a substring match of the value */
      uint64_t w = 1000000 + (uint64_t)(cb__sim_behavior_uniform(rq, UINT64_C(0x77726f6e67), i) * 9e6);
      char buf[16];
      snprintf(buf, sizeof buf, "%07llu", (unsigned long long)w);
      if (nd[i].value_len == 7 && !memcmp(buf, nd[i].value, 7)) buf[6] = buf[6] == '9' ? '0' : (char)(buf[6] + 1);
      cb_buf_append_str(out, buf);
    }
  }
  if (!listed) { /* no needle for the key: a made-up number, as a model would */
    uint64_t w = 1000000 + (uint64_t)(cb__sim_behavior_uniform(rq, UINT64_C(0x6e6f6e65), 0) * 9e6);
    cb_buf_appendf(out, "%07llu", (unsigned long long)w);
  }
  cb_buf_append_char(out, '.');
  cb_free(nd);
  return 1;
}
