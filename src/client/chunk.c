/*
 * chunk.c - one event's data in the OpenAI stream dialect (and Ollama's), read by
 * the fast path: a single pass of the validating scanner (json_scan.h) that decodes
 * only the strings a measurement needs and skips the rest in place. Nothing is
 * allocated; a typical 250-byte vLLM chunk costs a few hundred ns instead of the
 * ~4 us of building a jansson tree. What the scanner will not decide (json_scan.h)
 * goes to the jansson reference in chunk_jansson.c, which follows the same rules.
 *
 * Rules (both implementations): keys are read in document order; a content-like
 * string fills its slot only while the slot is empty ("first non-empty wins"); tool
 * strings come from the first tool-bearing key only, so the tool span stays one
 * contiguous run of the output area.
 */
#include <stddef.h>
#include <string.h>

#include "client/chunk_internal.h"
#include "client/json_scan.h"

void cb__client_chunk_clear(cb_client_chunk *c) {
  /* choice[] is last and cleared entry by entry as choices are met: zeroing all of
   * it for every chunk would cost more than reading a typical chunk's keys. */
  memset(c, 0, offsetof(cb_client_chunk, choice));
  c->kind = CB_CLIENT_CHUNK_DATA;
  cb_client_usage_clear(&c->usage);
}

void cb__client_choice_clear(cb_client_choice *ch) {
  memset(ch, 0, sizeof *ch);
  ch->index = -1;
}

void cb_client_usage_clear(cb_client_usage *u) {
  u->prompt_tokens = u->completion_tokens = u->total_tokens = -1;
  u->cached_tokens = u->reasoning_tokens = u->image_tokens = -1;
}

void cb__client_choice_settle(cb_client_choice *ch) {
  if (ch->content.len || ch->reasoning.len || ch->tool_calls) ch->has_content = 1;
}

cb_client_choice *cb__client_chunk_add_choice(cb_client_chunk *c, cb_client_choice *spare) {
  cb_client_choice *ch = spare;
  if (c->n_choices < CB_CLIENT_CHUNK_MAX_CHOICES) {
    ch = &c->choice[c->n_choices];
    c->n_detailed++;
  }
  cb__client_choice_clear(ch);
  c->n_choices++;
  return ch;
}

void cb__client_chunk_count_choice(cb_client_chunk *c, const cb_client_choice *ch) {
  c->content_choices += ch->has_content;
  c->has_logprobs |= ch->has_logprobs;
}

void cb__client_ollama_settle(cb_client_chunk *c, int has_choice) {
  cb_client_choice *ch = &c->choice[0];
  c->has_usage = c->usage.prompt_tokens >= 0 || c->usage.completion_tokens >= 0;
  /* The object is its one choice unless it carries none of a choice's keys (an
   * error object). */
  if (has_choice || ch->reasoning.len || ch->finish_reason.len) {
    c->n_choices = c->n_detailed = 1;
    ch->index = 0;
    cb__client_choice_settle(ch);
    c->content_choices = ch->has_content;
  }
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

int cb__client_chunk_is_done(const char *data, size_t len) {
  while (len && is_blank(*data)) {
    data++;
    len--;
  }
  while (len && is_blank(data[len - 1])) len--;
  return len == 6 && memcmp(data, "[DONE]", 6) == 0;
}

/* ---- the walker ---------------------------------------------------------------- */

typedef struct walk {
  cb__json_scan s;
  cb_client_chunk *c;
} walk;

/* The keys one kind of object interprets, in a table read by walk_object. */
typedef struct key_name {
  const char *name;
  size_t len;
} key_name;

#define KEY(lit) {lit, sizeof(lit) - 1}

/* What a walker does with the value of its key number `key` (the index in its
 * table); `c` is the value's first byte. It consumes the value. */
typedef int (*key_fn)(walk *w, int key, int c, void *ctx);

/* One object: each member whose key is in keys[0..n) goes to on_key, any other
 * member's value is skipped. A key met twice is jansson's business (last one wins
 * there), so it sends the whole chunk to the fallback. */
static int walk_object(walk *w, const key_name *keys, int n, key_fn on_key, void *ctx) {
  int first = 1, r;
  uint32_t seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int i = 0;
    /* The first byte before memcmp: most keys differ there or in length. */
    while (i < n && !(keys[i].len == klen && keys[i].name[0] == k[0] &&
                      memcmp(keys[i].name, k, klen) == 0))
      i++;
    if (i == n) {
      if (cb__json_skip(&w->s)) return -1;
      continue;
    }
    if (seen & (UINT32_C(1) << i)) return cb__json_fail(&w->s, CB__JSON_FALLBACK, "duplicate key");
    seen |= UINT32_C(1) << i;
    if (on_key(w, i, cb__json_peek(&w->s), ctx)) return -1;
  }
  return r;
}

/* A string into *dst while dst is empty (an empty value leaves no trace); any other
 * value is skipped. */
static int first_nonempty(walk *w, cb_client_str *dst) {
  if (cb__json_peek(&w->s) != '"' || dst->len) return cb__json_skip(&w->s);
  size_t mark = w->s.out_len;
  const char *p;
  size_t n;
  if (cb__json_string(&w->s, 1, &p, &n)) return -1;
  if (n) {
    dst->ptr = p;
    dst->len = n;
  } else {
    w->s.out_len = mark;
  }
  return 0;
}

/* A string appended to a contiguous span (decode = 0: validated only). */
static int append_span(walk *w, cb_client_str *dst, int decode) {
  if (cb__json_peek(&w->s) != '"') return cb__json_skip(&w->s);
  if (!decode) return cb__json_string(&w->s, 0, NULL, NULL);
  const char *p;
  size_t n;
  if (cb__json_string(&w->s, 1, &p, &n)) return -1;
  if (!dst->ptr) dst->ptr = p;
  dst->len += n;
  return 0;
}

static int integer(walk *w, int64_t *dst) {
  int c = cb__json_peek(&w->s), is_int = 0;
  int64_t v;
  if (c != '-' && (c < '0' || c > '9')) return cb__json_skip(&w->s);
  if (cb__json_number(&w->s, &is_int, &v)) return -1;
  if (is_int) *dst = v;
  return 0;
}

/* A string value decoded to *dst (replacing it); other values skipped. */
static int string_to(walk *w, cb_client_str *dst) {
  if (cb__json_peek(&w->s) != '"') return cb__json_skip(&w->s);
  return cb__json_string(&w->s, 1, &dst->ptr, &dst->len);
}

/* Where tool strings go: decode = 0 once an earlier key has filled the span. */
typedef struct tool_dst {
  cb_client_choice *ch;
  int decode;
} tool_dst;

/* {"name": "...", "arguments": "..."} of a tool call or a legacy function_call. */
static const key_name function_keys[] = {KEY("name"), KEY("arguments")};

static int function_key(walk *w, int key, int c, void *ctx) {
  (void)key, (void)c;
  tool_dst *t = ctx;
  return append_span(w, &t->ch->tool, t->decode);
}

static int walk_function(walk *w, tool_dst *t) {
  return walk_object(w, function_keys, 2, function_key, t);
}

/* One entry of tool_calls: {"function": {...}, ...}. */
static const key_name tool_call_keys[] = {KEY("function")};

static int tool_call_key(walk *w, int key, int c, void *ctx) {
  (void)key;
  return c == '{' ? walk_function(w, ctx) : cb__json_skip(&w->s);
}

static int walk_tool_calls(walk *w, tool_dst *t) {
  int first = 1, r;
  if (cb__json_enter(&w->s, '[')) return -1;
  while ((r = cb__json_next(&w->s, ']', &first)) == 1) {
    t->ch->tool_calls++;
    if (cb__json_peek(&w->s) == '{' ? walk_object(w, tool_call_keys, 1, tool_call_key, t)
                                    : cb__json_skip(&w->s))
      return -1;
  }
  return r;
}

/* delta (chat chunks) and Ollama's message. */
typedef struct delta {
  cb_client_choice *ch;
  int tool_locked, has_fc;
} delta;

enum { D_CONTENT, D_REASONING_CONTENT, D_REASONING, D_THINKING, D_TOOL_CALLS, D_FUNCTION_CALL, D_ROLE };
static const key_name delta_keys[] = {KEY("content"),    KEY("reasoning_content"),
                                      KEY("reasoning"),  KEY("thinking"),
                                      KEY("tool_calls"), KEY("function_call"),
                                      KEY("role")};

static int delta_key(walk *w, int key, int c, void *ctx) {
  delta *d = ctx;
  cb_client_choice *ch = d->ch;
  tool_dst t = {ch, !d->tool_locked};
  switch (key) {
  case D_CONTENT:
    return first_nonempty(w, &ch->content);
  case D_REASONING_CONTENT:
  case D_REASONING:
  case D_THINKING:
    return first_nonempty(w, &ch->reasoning);
  case D_TOOL_CALLS: {
    if (c != '[') return cb__json_skip(&w->s);
    uint32_t before = ch->tool_calls;
    if (walk_tool_calls(w, &t)) return -1;
    if (ch->tool_calls > before) d->tool_locked = 1;
    return 0;
  }
  case D_FUNCTION_CALL:
    if (c != '{') return cb__json_skip(&w->s);
    d->tool_locked = d->has_fc = 1;
    return walk_function(w, &t);
  default: /* D_ROLE */
    if (c == '"') ch->has_role = 1;
    return cb__json_skip(&w->s);
  }
}

static int walk_delta(walk *w, cb_client_choice *ch) {
  delta d = {ch, 0, 0};
  if (walk_object(w, delta_keys, 7, delta_key, &d)) return -1;
  if (d.has_fc) ch->has_content = 1;
  return 0;
}

enum { C_INDEX, C_DELTA, C_TEXT, C_FINISH_REASON, C_LOGPROBS };
static const key_name choice_keys[] = {KEY("index"), KEY("delta"), KEY("text"),
                                       KEY("finish_reason"), KEY("logprobs")};

static int choice_key(walk *w, int key, int c, void *ctx) {
  cb_client_choice *ch = ctx;
  switch (key) {
  case C_INDEX:
    return integer(w, &ch->index);
  case C_DELTA:
    return c == '{' ? walk_delta(w, ch) : cb__json_skip(&w->s);
  case C_TEXT:
    return first_nonempty(w, &ch->content);
  case C_FINISH_REASON:
    return string_to(w, &ch->finish_reason);
  default: /* C_LOGPROBS */
    if (c != 'n') ch->has_logprobs = 1;
    return cb__json_skip(&w->s);
  }
}

static int walk_choice(walk *w, cb_client_choice *ch) {
  if (walk_object(w, choice_keys, 5, choice_key, ch)) return -1;
  cb__client_choice_settle(ch);
  return 0;
}

static int walk_choices(walk *w) {
  cb_client_chunk *c = w->c;
  int first = 1, r;
  if (cb__json_enter(&w->s, '[')) return -1;
  while ((r = cb__json_next(&w->s, ']', &first)) == 1) {
    cb_client_choice spare, *ch = cb__client_chunk_add_choice(c, &spare);
    if (cb__json_peek(&w->s) == '{' ? walk_choice(w, ch) : cb__json_skip(&w->s)) return -1;
    cb__client_chunk_count_choice(c, ch);
  }
  return r;
}

/* prompt_tokens_details: cached and image tokens; completion_tokens_details: one
 * integer. */
static const key_name prompt_detail_keys[] = {KEY("cached_tokens"), KEY("image_tokens")};
static const key_name reasoning_keys[] = {KEY("reasoning_tokens")};

static int details_key(walk *w, int key, int c, void *ctx) {
  (void)key, (void)c;
  return integer(w, ctx);
}

typedef struct usage_walk {
  cb_client_usage *u;
  int64_t details_cached, hit;
} usage_walk;

static int prompt_details_key(walk *w, int key, int c, void *ctx) {
  (void)c;
  usage_walk *uw = ctx;
  return integer(w, key == 0 ? &uw->details_cached : &uw->u->image_tokens);
}

enum { U_PROMPT, U_COMPLETION, U_TOTAL, U_PROMPT_DETAILS, U_COMPLETION_DETAILS, U_CACHE_HIT };
static const key_name usage_keys[] = {KEY("prompt_tokens"),         KEY("completion_tokens"),
                                      KEY("total_tokens"),          KEY("prompt_tokens_details"),
                                      KEY("completion_tokens_details"),
                                      KEY("prompt_cache_hit_tokens")};

static int usage_key(walk *w, int key, int c, void *ctx) {
  usage_walk *uw = ctx;
  switch (key) {
  case U_PROMPT:
    return integer(w, &uw->u->prompt_tokens);
  case U_COMPLETION:
    return integer(w, &uw->u->completion_tokens);
  case U_TOTAL:
    return integer(w, &uw->u->total_tokens);
  case U_PROMPT_DETAILS:
    return c == '{' ? walk_object(w, prompt_detail_keys, 2, prompt_details_key, uw)
                    : cb__json_skip(&w->s);
  case U_COMPLETION_DETAILS:
    return c == '{' ? walk_object(w, reasoning_keys, 1, details_key, &uw->u->reasoning_tokens)
                    : cb__json_skip(&w->s);
  default: /* U_CACHE_HIT */
    return integer(w, &uw->hit);
  }
}

static int walk_usage(walk *w) {
  usage_walk uw = {&w->c->usage, -1, -1};
  w->c->has_usage = 1;
  if (walk_object(w, usage_keys, 6, usage_key, &uw)) return -1;
  if (uw.details_cached >= 0 || uw.hit >= 0)
    uw.u->cached_tokens = uw.details_cached >= 0 ? uw.details_cached : uw.hit;
  return 0;
}

/* What the error-related keys said; resolved after the object is read. */
typedef struct errinfo {
  int is_error, obj_error;
  int has_msg, has_top_msg;
  cb_client_str msg, top_msg;
  int64_t code, top_code; /* -1 = not an integer / absent */
} errinfo;

static void errinfo_init(errinfo *e) {
  memset(e, 0, sizeof *e);
  e->code = e->top_code = -1;
}

enum { E_MESSAGE, E_CODE };
static const key_name error_keys[] = {KEY("message"), KEY("code")};

static int error_key(walk *w, int key, int c, void *ctx) {
  errinfo *e = ctx;
  if (key == E_CODE) return integer(w, &e->code);
  if (c == '"') e->has_msg = 1;
  return string_to(w, &e->msg);
}

static int walk_error(walk *w, errinfo *e) {
  int c = cb__json_peek(&w->s);
  if (c == '"') {
    e->is_error = 1;
    e->has_msg = 1;
    return cb__json_string(&w->s, 1, &e->msg.ptr, &e->msg.len);
  }
  if (c != '{') return cb__json_skip(&w->s);
  e->is_error = 1;
  return walk_object(w, error_keys, 2, error_key, e);
}

static void settle_error(cb_client_chunk *c, const errinfo *e) {
  if (!e->is_error && !e->obj_error) return;
  c->kind = CB_CLIENT_CHUNK_ERROR;
  if (e->has_msg) c->error_message = e->msg;
  else if (e->obj_error && e->has_top_msg) c->error_message = e->top_msg;
  c->error_code = e->is_error && e->code >= 0 ? e->code : e->top_code >= 0 ? e->top_code : 0;
}

enum { O_CHOICES, O_USAGE, O_ERROR, O_OBJECT, O_MESSAGE, O_CODE };
static const key_name openai_keys[] = {KEY("choices"), KEY("usage"),   KEY("error"),
                                       KEY("object"),  KEY("message"), KEY("code")};

static int openai_key(walk *w, int key, int c, void *ctx) {
  errinfo *e = ctx;
  switch (key) {
  case O_CHOICES:
    return c == '[' ? walk_choices(w) : cb__json_skip(&w->s);
  case O_USAGE:
    return c == '{' ? walk_usage(w) : cb__json_skip(&w->s);
  case O_ERROR:
    return walk_error(w, e);
  case O_OBJECT: {
    cb_client_str v = {NULL, 0};
    size_t mark = w->s.out_len;
    if (string_to(w, &v)) return -1;
    if (v.len == 5 && memcmp(v.ptr, "error", 5) == 0) e->obj_error = 1;
    w->s.out_len = mark;
    return 0;
  }
  case O_MESSAGE:
    if (c == '"') e->has_top_msg = 1;
    return string_to(w, &e->top_msg);
  default: /* O_CODE */
    return integer(w, &e->top_code);
  }
}

static int walk_openai_top(walk *w) {
  errinfo e;
  errinfo_init(&e);
  if (walk_object(w, openai_keys, 6, openai_key, &e)) return -1;
  settle_error(w->c, &e);
  return 0;
}

typedef struct ollama_walk {
  cb_client_choice *ch;
  errinfo e;
  int has_choice;
} ollama_walk;

enum { L_RESPONSE, L_THINKING, L_MESSAGE, L_DONE, L_DONE_REASON, L_PROMPT_EVAL, L_EVAL, L_ERROR };
static const key_name ollama_keys[] = {KEY("response"),    KEY("thinking"),
                                       KEY("message"),     KEY("done"),
                                       KEY("done_reason"), KEY("prompt_eval_count"),
                                       KEY("eval_count"),  KEY("error")};

static int ollama_key(walk *w, int key, int v, void *ctx) {
  ollama_walk *o = ctx;
  cb_client_chunk *c = w->c;
  switch (key) {
  case L_RESPONSE:
    if (v == '"') o->has_choice = 1;
    return first_nonempty(w, &o->ch->content);
  case L_THINKING:
    return first_nonempty(w, &o->ch->reasoning);
  case L_MESSAGE:
    if (v != '{') return cb__json_skip(&w->s);
    o->has_choice = 1;
    return walk_delta(w, o->ch);
  case L_DONE:
    if (v == 't') c->final = 1;
    return cb__json_skip(&w->s);
  case L_DONE_REASON:
    return string_to(w, &o->ch->finish_reason);
  case L_PROMPT_EVAL:
    return integer(w, &c->usage.prompt_tokens);
  case L_EVAL:
    return integer(w, &c->usage.completion_tokens);
  default: /* L_ERROR */
    return walk_error(w, &o->e);
  }
}

static int walk_ollama_top(walk *w) {
  cb_client_chunk *c = w->c;
  ollama_walk o = {&c->choice[0], {0}, 0};
  cb__client_choice_clear(o.ch);
  errinfo_init(&o.e);
  if (walk_object(w, ollama_keys, 8, ollama_key, &o)) return -1;
  cb__client_ollama_settle(c, o.has_choice);
  settle_error(c, &o.e);
  return 0;
}

int cb__client_chunk_scan(cb_client_api api, const char *data, size_t len, char *out_area,
                          cb_client_chunk *out) {
  walk w;
  memset(&w.s, 0, sizeof w.s);
  w.s.p = (const unsigned char *)data;
  w.s.end = w.s.p + len;
  w.s.out = out_area;
  w.c = out;
  cb__client_chunk_clear(out);
  int c = cb__json_peek(&w.s), rc;
  if (c == '{') {
    rc = api == CB_CLIENT_API_OLLAMA_GENERATE ? walk_ollama_top(&w) : walk_openai_top(&w);
    if (rc == 0) rc = cb__json_end(&w.s);
  } else {
    /* Not an object: still validate, so "not JSON" and "not an object" are told
     * apart exactly as jansson would. */
    rc = cb__json_skip(&w.s);
    if (rc == 0) rc = cb__json_end(&w.s);
    if (rc == 0) {
      cb__client_chunk_clear(out);
      out->kind = CB_CLIENT_CHUNK_INVALID_JSON;
      out->detail.ptr = "JSON value is not an object";
      out->detail.len = strlen(out->detail.ptr);
      return 1;
    }
  }
  if (rc == 0) return 1;
  if (w.s.status == CB__JSON_FALLBACK) return 0;
  cb__client_chunk_clear(out);
  out->kind = CB_CLIENT_CHUNK_INVALID_JSON;
  out->detail.ptr = w.s.why ? w.s.why : "invalid JSON";
  out->detail.len = strlen(out->detail.ptr);
  return 1;
}

cb_status cb_client_chunk_parse(cb_client_api api, const char *data, size_t len,
                                cb_buf *scratch, cb_client_chunk *out) {
  cb__client_chunk_clear(out);
  cb_buf_reset(scratch);
  if (cb_buf_reserve(scratch, len + CB__CLIENT_CHUNK_SLACK) != CB_OK) {
    out->kind = CB_CLIENT_CHUNK_INVALID_JSON;
    out->detail.ptr = "event larger than the scratch buffer's cap";
    out->detail.len = strlen(out->detail.ptr);
    return CB_ERR_CAPACITY;
  }
  if (cb__client_chunk_is_done(data, len)) {
    out->kind = CB_CLIENT_CHUNK_DONE;
    return CB_OK;
  }
  if (cb__client_chunk_scan(api, data, len, scratch->data, out)) return CB_OK;
  cb__client_chunk_jansson(api, data, len, scratch->data, out);
  out->via_fallback = 1;
  return CB_OK;
}
