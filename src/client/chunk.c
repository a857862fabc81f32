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
  u->cached_tokens = u->reasoning_tokens = -1;
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

#define KEY_IS(lit) (klen == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)

/* Each walker notes the keys it interprets; a second one is jansson's business
 * (last one wins there). */
static int once(walk *w, unsigned *mask, unsigned bit) {
  if (*mask & bit) return cb__json_fail(&w->s, CB__JSON_FALLBACK, "duplicate key");
  *mask |= bit;
  return 0;
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

/* {"name": "...", "arguments": "..."} of a tool call or a legacy function_call. */
static int walk_function(walk *w, cb_client_choice *ch, int decode) {
  int first = 1, r;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    if (KEY_IS("name")) {
      if (once(w, &seen, 1) || append_span(w, &ch->tool, decode)) return -1;
    } else if (KEY_IS("arguments")) {
      if (once(w, &seen, 2) || append_span(w, &ch->tool, decode)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  return r;
}

static int walk_tool_calls(walk *w, cb_client_choice *ch, int decode) {
  int first = 1, r;
  if (cb__json_enter(&w->s, '[')) return -1;
  while ((r = cb__json_next(&w->s, ']', &first)) == 1) {
    ch->tool_calls++;
    if (cb__json_peek(&w->s) != '{') {
      if (cb__json_skip(&w->s)) return -1;
      continue;
    }
    int f2 = 1, r2;
    unsigned seen = 0;
    if (cb__json_enter(&w->s, '{')) return -1;
    while ((r2 = cb__json_next(&w->s, '}', &f2)) == 1) {
      const char *k;
      size_t klen;
      if (cb__json_key(&w->s, &k, &klen)) return -1;
      if (KEY_IS("function") && cb__json_peek(&w->s) == '{') {
        if (once(w, &seen, 1) || walk_function(w, ch, decode)) return -1;
      } else if (KEY_IS("function")) {
        if (once(w, &seen, 1) || cb__json_skip(&w->s)) return -1;
      } else if (cb__json_skip(&w->s)) {
        return -1;
      }
    }
    if (r2 < 0) return -1;
  }
  return r;
}

/* delta (chat chunks) and Ollama's message. */
static int walk_delta(walk *w, cb_client_choice *ch) {
  int first = 1, r, tool_locked = 0, has_fc = 0;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int c = cb__json_peek(&w->s);
    if (KEY_IS("content")) {
      if (once(w, &seen, 1) || first_nonempty(w, &ch->content)) return -1;
    } else if (KEY_IS("reasoning_content")) {
      if (once(w, &seen, 2) || first_nonempty(w, &ch->reasoning)) return -1;
    } else if (KEY_IS("reasoning")) {
      if (once(w, &seen, 4) || first_nonempty(w, &ch->reasoning)) return -1;
    } else if (KEY_IS("thinking")) {
      if (once(w, &seen, 8) || first_nonempty(w, &ch->reasoning)) return -1;
    } else if (KEY_IS("tool_calls")) {
      if (once(w, &seen, 16)) return -1;
      if (c == '[') {
        uint32_t before = ch->tool_calls;
        if (walk_tool_calls(w, ch, !tool_locked)) return -1;
        if (ch->tool_calls > before) tool_locked = 1;
      } else if (cb__json_skip(&w->s)) {
        return -1;
      }
    } else if (KEY_IS("function_call")) {
      if (once(w, &seen, 32)) return -1;
      if (c == '{') {
        if (walk_function(w, ch, !tool_locked)) return -1;
        tool_locked = 1;
        has_fc = 1;
      } else if (cb__json_skip(&w->s)) {
        return -1;
      }
    } else if (KEY_IS("role")) {
      if (once(w, &seen, 64)) return -1;
      if (c == '"') ch->has_role = 1;
      if (cb__json_skip(&w->s)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  if (has_fc) ch->has_content = 1;
  return r;
}

static void settle_choice(cb_client_choice *ch) {
  if (ch->content.len || ch->reasoning.len || ch->tool_calls) ch->has_content = 1;
}

static int walk_choice(walk *w, cb_client_choice *ch) {
  int first = 1, r;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int c = cb__json_peek(&w->s);
    if (KEY_IS("index")) {
      if (once(w, &seen, 1) || integer(w, &ch->index)) return -1;
    } else if (KEY_IS("delta")) {
      if (once(w, &seen, 2)) return -1;
      if (c == '{' ? walk_delta(w, ch) : cb__json_skip(&w->s)) return -1;
    } else if (KEY_IS("text")) {
      if (once(w, &seen, 4) || first_nonempty(w, &ch->content)) return -1;
    } else if (KEY_IS("finish_reason")) {
      if (once(w, &seen, 8) || string_to(w, &ch->finish_reason)) return -1;
    } else if (KEY_IS("logprobs")) {
      if (once(w, &seen, 16)) return -1;
      if (c != 'n') ch->has_logprobs = 1;
      if (cb__json_skip(&w->s)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  settle_choice(ch);
  return r;
}

static int walk_choices(walk *w) {
  cb_client_chunk *c = w->c;
  int first = 1, r;
  if (cb__json_enter(&w->s, '[')) return -1;
  while ((r = cb__json_next(&w->s, ']', &first)) == 1) {
    cb_client_choice spare, *ch = &spare;
    if (c->n_choices < CB_CLIENT_CHUNK_MAX_CHOICES) {
      ch = &c->choice[c->n_choices];
      c->n_detailed++;
    }
    cb__client_choice_clear(ch);
    c->n_choices++;
    if (cb__json_peek(&w->s) == '{') {
      if (walk_choice(w, ch)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
    c->content_choices += ch->has_content;
    c->has_logprobs |= ch->has_logprobs;
  }
  return r;
}

static int walk_details(walk *w, const char *want, size_t want_len, int64_t *dst) {
  int first = 1, r;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    if (klen == want_len && memcmp(k, want, klen) == 0) {
      if (once(w, &seen, 1) || integer(w, dst)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  return r;
}

static int walk_usage(walk *w) {
  cb_client_usage *u = &w->c->usage;
  int64_t details_cached = -1, hit = -1;
  int first = 1, r;
  unsigned seen = 0;
  w->c->has_usage = 1;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int c = cb__json_peek(&w->s);
    if (KEY_IS("prompt_tokens")) {
      if (once(w, &seen, 1) || integer(w, &u->prompt_tokens)) return -1;
    } else if (KEY_IS("completion_tokens")) {
      if (once(w, &seen, 2) || integer(w, &u->completion_tokens)) return -1;
    } else if (KEY_IS("total_tokens")) {
      if (once(w, &seen, 4) || integer(w, &u->total_tokens)) return -1;
    } else if (KEY_IS("prompt_tokens_details")) {
      if (once(w, &seen, 8)) return -1;
      if (c == '{' ? walk_details(w, "cached_tokens", 13, &details_cached)
                   : cb__json_skip(&w->s))
        return -1;
    } else if (KEY_IS("completion_tokens_details")) {
      if (once(w, &seen, 16)) return -1;
      if (c == '{' ? walk_details(w, "reasoning_tokens", 16, &u->reasoning_tokens)
                   : cb__json_skip(&w->s))
        return -1;
    } else if (KEY_IS("prompt_cache_hit_tokens")) {
      if (once(w, &seen, 32) || integer(w, &hit)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  if (details_cached >= 0 || hit >= 0)
    u->cached_tokens = details_cached >= 0 ? details_cached : hit;
  return r;
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

static int walk_error(walk *w, errinfo *e) {
  int c = cb__json_peek(&w->s);
  if (c == '"') {
    e->is_error = 1;
    e->has_msg = 1;
    return cb__json_string(&w->s, 1, &e->msg.ptr, &e->msg.len);
  }
  if (c != '{') return cb__json_skip(&w->s);
  e->is_error = 1;
  int first = 1, r;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    if (KEY_IS("message")) {
      if (once(w, &seen, 1)) return -1;
      if (cb__json_peek(&w->s) == '"') e->has_msg = 1;
      if (string_to(w, &e->msg)) return -1;
    } else if (KEY_IS("code")) {
      if (once(w, &seen, 2) || integer(w, &e->code)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  return r;
}

static void settle_error(cb_client_chunk *c, const errinfo *e) {
  if (!e->is_error && !e->obj_error) return;
  c->kind = CB_CLIENT_CHUNK_ERROR;
  if (e->has_msg) c->error_message = e->msg;
  else if (e->obj_error && e->has_top_msg) c->error_message = e->top_msg;
  c->error_code = e->is_error && e->code >= 0 ? e->code : e->top_code >= 0 ? e->top_code : 0;
}

static int walk_openai_top(walk *w) {
  errinfo e;
  errinfo_init(&e);
  int first = 1, r;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int c = cb__json_peek(&w->s);
    if (KEY_IS("choices")) {
      if (once(w, &seen, 1)) return -1;
      if (c == '[' ? walk_choices(w) : cb__json_skip(&w->s)) return -1;
    } else if (KEY_IS("usage")) {
      if (once(w, &seen, 2)) return -1;
      if (c == '{' ? walk_usage(w) : cb__json_skip(&w->s)) return -1;
    } else if (KEY_IS("error")) {
      if (once(w, &seen, 4) || walk_error(w, &e)) return -1;
    } else if (KEY_IS("object")) {
      if (once(w, &seen, 8)) return -1;
      cb_client_str v = {NULL, 0};
      size_t mark = w->s.out_len;
      if (string_to(w, &v)) return -1;
      if (v.len == 5 && memcmp(v.ptr, "error", 5) == 0) e.obj_error = 1;
      w->s.out_len = mark;
    } else if (KEY_IS("message")) {
      if (once(w, &seen, 16)) return -1;
      if (c == '"') e.has_top_msg = 1;
      if (string_to(w, &e.top_msg)) return -1;
    } else if (KEY_IS("code")) {
      if (once(w, &seen, 32) || integer(w, &e.top_code)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  if (r < 0) return -1;
  settle_error(w->c, &e);
  return 0;
}

static int walk_ollama_top(walk *w) {
  cb_client_chunk *c = w->c;
  cb_client_choice *ch = &c->choice[0];
  cb__client_choice_clear(ch);
  errinfo e;
  errinfo_init(&e);
  int first = 1, r, has_choice = 0;
  unsigned seen = 0;
  if (cb__json_enter(&w->s, '{')) return -1;
  while ((r = cb__json_next(&w->s, '}', &first)) == 1) {
    const char *k;
    size_t klen;
    if (cb__json_key(&w->s, &k, &klen)) return -1;
    int v = cb__json_peek(&w->s);
    if (KEY_IS("response")) {
      if (once(w, &seen, 1)) return -1;
      if (v == '"') has_choice = 1;
      if (first_nonempty(w, &ch->content)) return -1;
    } else if (KEY_IS("thinking")) {
      if (once(w, &seen, 2) || first_nonempty(w, &ch->reasoning)) return -1;
    } else if (KEY_IS("message")) {
      if (once(w, &seen, 4)) return -1;
      if (v == '{') has_choice = 1;
      if (v == '{' ? walk_delta(w, ch) : cb__json_skip(&w->s)) return -1;
    } else if (KEY_IS("done")) {
      if (once(w, &seen, 8)) return -1;
      if (v == 't') c->final = 1;
      if (cb__json_skip(&w->s)) return -1;
    } else if (KEY_IS("done_reason")) {
      if (once(w, &seen, 16) || string_to(w, &ch->finish_reason)) return -1;
    } else if (KEY_IS("prompt_eval_count")) {
      if (once(w, &seen, 32) || integer(w, &c->usage.prompt_tokens)) return -1;
    } else if (KEY_IS("eval_count")) {
      if (once(w, &seen, 64) || integer(w, &c->usage.completion_tokens)) return -1;
    } else if (KEY_IS("error")) {
      if (once(w, &seen, 128) || walk_error(w, &e)) return -1;
    } else if (cb__json_skip(&w->s)) {
      return -1;
    }
  }
  if (r < 0) return -1;
  c->has_usage = c->usage.prompt_tokens >= 0 || c->usage.completion_tokens >= 0;
  /* The object is its one choice unless it carries none of a choice's keys (an
   * error object). */
  if (has_choice || ch->reasoning.len || ch->finish_reason.len) {
    c->n_choices = c->n_detailed = 1;
    ch->index = 0;
    settle_choice(ch);
    c->content_choices = ch->has_content;
  }
  settle_error(c, &e);
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
