/*
 * behavior_dialog.c - the `dialog` section of a behaviour file: slot recall that
 * decays with the number of turns since the user stated the slot (docs/probe.md,
 * "dialog").
 *
 * How the simulator reads a chat conversation (the convention `probe dialog`
 * scenarios follow to be answerable by it; a real model needs none of it):
 *   a slot        "my NAME is VALUE" in a user message (NAME: one to three words of
 *                 letters, '_' or '-'; VALUE: up to the next ',', ';', '!', '?', a
 *                 newline, or a '.' that ends a sentence); a later statement of the
 *                 same NAME replaces it;
 *   a need        the last user message names the slot (NAME as a word);
 *   its depth     d = user messages between the one that stated the slot and the
 *                 last (0: the same message).
 * Each needed slot is recalled with probability recall * decay^d: the answer states
 * it ("Your NAME is VALUE."); forgotten, the answer asks back with probability
 * `clarify` ("Could you remind me of your NAME?") and otherwise states a wrong value
 * (its first number raised, or "not something I remember"). When the last message
 * asks for JSON the answer is one object: {"NAME": "VALUE", ...}, a forgotten and
 * asked-back slot as "question". A conversation without any slot statement is left
 * to the next section. Draws depend on the seeds, the last user message, the slot
 * and the request's own "seed" (probe dialog sends one per conversation), so
 * repeated conversations differ and a rerun repeats.
 *
 * thread_tag (a testing aid) ends every answer with "[turn N ref XXXXXXXX]": N the
 * user messages so far, XXXXXXXX the FNV-1a 32-bit hash of the previous assistant
 * message's content as received (00000000 when none), so a test can tell that the
 * client sent each real reply back.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "sim/behavior.h"

typedef struct dialog_behavior {
  double recall, decay, clarify;
  int thread_tag;
} dialog_behavior;

static const char *const KEYS[] = {"recall", "decay", "clarify", "thread_tag", NULL};

void cb__sim_behavior_dialog_free(void *section) { cb_free(section); }

static cb_status read_key(const cb__yaml_ctx *y, const yaml_node_t *v, const char *name,
                          const char *key, void *ctx) {
  dialog_behavior *d = ctx;
  if (!strcmp(name, "recall")) return cb__yaml_number(y->path, v, key, 0, 0, 1, &d->recall, y->err);
  if (!strcmp(name, "decay")) return cb__yaml_number(y->path, v, key, 0, 0, 1, &d->decay, y->err);
  if (!strcmp(name, "clarify"))
    return cb__yaml_number(y->path, v, key, 0, 0, 1, &d->clarify, y->err);
  return cb__yaml_bool(y->path, v, key, &d->thread_tag, y->err); /* thread_tag, KEYS' last */
}

cb_status cb__sim_behavior_dialog_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  dialog_behavior *d = cb_calloc(1, sizeof *d);
  *d = (dialog_behavior){.recall = 1, .decay = 1, .clarify = 0};
  *out = d; /* on failure too: the loader frees it (behavior.h) */
  return cb__yaml_section(y, map, "dialog", KEYS, read_key, d);
}

/* ---- reading the conversation -------------------------------------------------------- */

#define MAX_SLOTS 32
#define NAME_MAX_BYTES 40
#define VALUE_MAX_BYTES 80

typedef struct slot {
  char name[NAME_MAX_BYTES];   /* lowercase, single spaces */
  char value[VALUE_MAX_BYTES];
  size_t turn;                 /* the user message that stated it */
} slot;

static int word_byte(char c) { return isalnum((unsigned char)c) || c == '_' || c == '-'; }

/* "my NAME is VALUE" statements in one user message, into slots. */
static void read_statements(const char *s, size_t n, size_t turn, slot *slots, size_t *n_slots) {
  for (size_t i = 0; i + 3 <= n; i++) {
    if (tolower((unsigned char)s[i]) != 'm' || tolower((unsigned char)s[i + 1]) != 'y' || s[i + 2] != ' ' ||
        (i && word_byte(s[i - 1])))
      continue;
    /* NAME: one to three words, then " is " */
    size_t p = i + 3, nl = 0;
    int words = 0, found = 0;
    char name[NAME_MAX_BYTES];
    while (words < 3) {
      size_t w = p;
      while (p < n && word_byte(s[p])) p++;
      if (p == w || nl + (p - w) + 2 >= sizeof name) break;
      if (nl) name[nl++] = ' ';
      for (size_t k = w; k < p; k++) name[nl++] = (char)tolower((unsigned char)s[k]);
      words++;
      if (p + 4 <= n && !strncasecmp(s + p, " is ", 4)) {
        found = 1;
        p += 4;
        break;
      }
      if (p >= n || s[p] != ' ') break;
      p++;
    }
    if (!found) continue;
    name[nl] = '\0';
    /* VALUE: to the end of its clause */
    size_t v = p, e = v;
    while (e < n && !strchr(",;!?\n", s[e]) && !(s[e] == '.' && (e + 1 == n || isspace((unsigned char)s[e + 1]))))
      e++;
    while (e > v && isspace((unsigned char)s[e - 1])) e--;
    if (e == v || e - v >= VALUE_MAX_BYTES) continue;
    size_t k = 0;
    while (k < *n_slots && strcmp(slots[k].name, name)) k++;
    if (k == *n_slots) {
      if (*n_slots == MAX_SLOTS) continue;
      (*n_slots)++;
    }
    snprintf(slots[k].name, sizeof slots[k].name, "%s", name);
    snprintf(slots[k].value, sizeof slots[k].value, "%.*s", (int)(e - v), s + v);
    slots[k].turn = turn;
    i = e;
  }
}

/* NAME as words of their own in s, ignoring case. */
static int names(const char *s, size_t n, const char *name) {
  size_t m = strlen(name);
  for (size_t i = 0; i + m <= n; i++)
    if (!strncasecmp(s + i, name, m) && (i == 0 || !word_byte(s[i - 1])) && (i + m == n || !word_byte(s[i + m])))
      return 1;
  return 0;
}

static int asks_json(const char *s, size_t n) {
  for (size_t i = 0; i + 4 <= n; i++)
    if (!strncasecmp(s + i, "json", 4)) return 1;
  return 0;
}

static uint32_t fnv1a32(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 16777619u;
  }
  return h;
}

/* A value that is not the slot's: its first number raised by 1 to 9, else none. */
static void wrong_value(const char *value, double u, char *out, size_t size) {
  const char *d = value;
  while (*d && !isdigit((unsigned char)*d)) d++;
  if (!*d) {
    snprintf(out, size, "not something I remember");
    return;
  }
  size_t len = strspn(d, "0123456789");
  unsigned long long x = 0;
  for (size_t i = 0; i < len && i < 15; i++) x = x * 10 + (unsigned long long)(d[i] - '0');
  snprintf(out, size, "%.*s%llu%s", (int)(d - value), value, x + 1 + (unsigned long long)(u * 9), d + len);
}

static void json_key(cb_buf *b, const char *name, int *first) {
  cb_buf_append_str(b, *first ? "\"" : ", \"");
  *first = 0;
  for (const char *p = name; *p; p++) cb_buf_append_char(b, *p == ' ' ? '_' : *p);
  cb_buf_append_str(b, "\": ");
}

static void json_text(cb_buf *b, const char *s) {
  cb_buf_append_char(b, '"');
  cb_buf_append_json_string(b, s, strlen(s));
  cb_buf_append_char(b, '"');
}

int cb__sim_behavior_dialog_answer(const void *section, const cb__sim_behavior_request *rq,
                                   cb__sim_behavior_reply *reply) {
  const dialog_behavior *d = section;
  const cb__sim_api_request *req = rq->req;
  /* The user messages in order (without a parsed request: the one text). */
  slot slots[MAX_SLOTS];
  size_t n_slots = 0, users = 0;
  const char *prev_reply = NULL;
  size_t prev_len = 0;
  if (req && req->num_messages) {
    for (size_t i = 0; i < req->num_messages; i++) {
      const cb__sim_api_message *m = &req->messages[i];
      if (!strcmp(m->role, "user")) read_statements(m->content, m->content_len, users++, slots, &n_slots);
      else if (!strcmp(m->role, "assistant")) {
        prev_reply = m->content;
        prev_len = m->content_len;
      }
    }
  } else {
    read_statements(rq->text, rq->len, users++, slots, &n_slots);
  }
  if (!n_slots || !users) return 0;
  size_t last = users - 1;
  int json = asks_json(rq->text, rq->len);
  uint64_t conv_seed = req && req->has_seed ? req->seed : 0;
  cb_buf *b = &reply->text;
  int first = 1, any = 0;
  if (json) cb_buf_append_char(b, '{');
  for (size_t k = 0; k < n_slots; k++) {
    const slot *s = &slots[k];
    if (!names(rq->text, rq->len, s->name)) continue;
    any = 1;
    size_t depth = last - s->turn;
    uint64_t stream = cb_fnv1a64(s->name, strlen(s->name)) ^ (conv_seed * UINT64_C(0x9e3779b97f4a7c15));
    double p = d->recall * pow(d->decay, (double)depth);
    double u = cb__sim_behavior_uniform(rq, stream, 0);
    if (u < p) { /* recalled */
      if (json) {
        json_key(b, s->name, &first);
        json_text(b, s->value);
      } else {
        cb_buf_appendf(b, "%sYour %s is %s.", b->len ? " " : "", s->name, s->value);
      }
    } else if (cb__sim_behavior_uniform(rq, stream, 1) < d->clarify) { /* asks back */
      char q[NAME_MAX_BYTES + 40];
      snprintf(q, sizeof q, "Could you remind me of your %s?", s->name);
      if (json) {
        json_key(b, "question", &first);
        json_text(b, q);
      } else {
        cb_buf_appendf(b, "%s%s", b->len ? " " : "", q);
      }
    } else { /* a wrong value */
      char wrong[VALUE_MAX_BYTES + 32];
      wrong_value(s->value, cb__sim_behavior_uniform(rq, stream, 2), wrong, sizeof wrong);
      if (json) {
        json_key(b, s->name, &first);
        json_text(b, wrong);
      } else {
        cb_buf_appendf(b, "%sYour %s is %s.", b->len ? " " : "", s->name, wrong);
      }
    }
  }
  if (!json && !any) cb_buf_append_str(b, "Noted.");
  if (d->thread_tag) {
    uint32_t ref = prev_reply ? fnv1a32(prev_reply, prev_len) : 0;
    if (json) {
      json_key(b, "turn", &first);
      cb_buf_appendf(b, "%zu", users);
      json_key(b, "ref", &first);
      cb_buf_appendf(b, "\"%08x\"", ref);
    } else {
      cb_buf_appendf(b, " [turn %zu ref %08x]", users, ref);
    }
  }
  if (json) cb_buf_append_char(b, '}');
  return 1;
}
