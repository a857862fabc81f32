/*
 * sse.c - the resumable text/event-stream parser (WHATWG HTML, "Server-sent events",
 * event stream interpretation) and its NDJSON sibling, sharing one line splitter.
 *
 * Lines end in CR, LF or CRLF. A line that lies whole inside the caller's bytes is
 * processed in place (no copy); only a line split across feeds is gathered in
 * p->line. A CR at the end of a feed sets skip_lf so that a LF starting the next
 * feed is not taken for an empty line. Results are pulled one at a time, so a feed
 * with many events is consumed by calling feed again with the rest.
 *
 * Strictness beyond the spec, for measurement: an unknown field is reported
 * (MALFORMED) instead of silently ignored; an event with a type but no data is still
 * dispatched; lines and events are capped; finish() delivers an event that lacks its
 * blank line (the spec discards it; vLLM's client keeps it) marked unterminated.
 */
#include <stdio.h>
#include <string.h>

#include "calibench/client.h"

enum { S_BOM = 0, S_LINES, S_ERROR, S_FINISHED };

static const unsigned char BOM[3] = {0xEF, 0xBB, 0xBF};

void cb_client_sse_init(cb_client_sse *p, cb_client_format format, size_t max_line_bytes,
                        size_t max_event_bytes) {
  memset(p, 0, sizeof *p);
  p->format = format;
  p->max_line_bytes = max_line_bytes ? max_line_bytes : CB_CLIENT_DEFAULT_MAX_LINE_BYTES;
  p->max_event_bytes = max_event_bytes ? max_event_bytes : CB_CLIENT_DEFAULT_MAX_EVENT_BYTES;
  if (p->max_line_bytes < 64) p->max_line_bytes = 64;
  if (p->max_event_bytes < 64) p->max_event_bytes = 64;
  /* The buffers' own caps are a second fence; the checks below come first. */
  cb_buf_init(&p->line, p->max_line_bytes);
  cb_buf_init(&p->data, p->max_event_bytes);
  cb_buf_init(&p->type, p->max_line_bytes);
  cb_buf_init(&p->id, p->max_line_bytes);
  p->state = S_BOM;
}

void cb_client_sse_free(cb_client_sse *p) {
  cb_buf_free(&p->line);
  cb_buf_free(&p->data);
  cb_buf_free(&p->type);
  cb_buf_free(&p->id);
}

void cb_client_sse_reset(cb_client_sse *p) {
  p->line.len = 0;
  p->data.len = 0;
  p->type.len = 0;
  p->id.len = 0;
  p->state = S_BOM;
  p->bom_len = 0;
  p->skip_lf = 0;
  p->clear_event = 0;
  p->fin_step = 0;
  p->bytes = p->lines = p->events = p->comments = p->malformed = 0;
  p->retry_ms = 0;
  p->error_msg = NULL;
}

/* A cap was passed: say which, and how large it is. */
static cb_client_sse_result fail(cb_client_sse *p, const char *what, size_t limit) {
  p->state = S_ERROR;
  snprintf(p->error_text, sizeof p->error_text, "SSE %s than the limit of %zu bytes",
           what, limit);
  p->error_msg = p->error_text;
  return CB_CLIENT_SSE_ERROR;
}

/* First CR or LF in [p, end), or end. Eight bytes at a time: a byte of w is CR or LF
 * exactly when the same byte of w ^ 0x0d.. or w ^ 0x0a.. is zero. */
static const char *find_eol(const char *p, const char *end) {
  const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
  while (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t a = w ^ (ones * '\n'), b = w ^ (ones * '\r');
    if (((a - ones) & ~a & highs) | ((b - ones) & ~b & highs)) break;
    p += 8;
  }
  while (p < end && *p != '\n' && *p != '\r') p++;
  return p;
}

static void clear_item(cb_client_sse_item *it) {
  it->data = "";
  it->len = 0;
  it->event = "";
  it->event_len = 0;
  it->id = "";
  it->id_len = 0;
  it->has_data = 0;
  it->unterminated = 0;
}

static cb_client_sse_result dispatch(cb_client_sse *p, cb_client_sse_item *it) {
  if (p->data.len == 0 && p->type.len == 0) return CB_CLIENT_SSE_NEED_MORE;
  it->has_data = p->data.len > 0;
  it->data = p->data.len ? p->data.data : "";
  it->len = p->data.len ? p->data.len - 1 : 0; /* the last LF is not data */
  it->event = p->type.len ? p->type.data : "";
  it->event_len = p->type.len;
  it->id = p->id.len ? p->id.data : "";
  it->id_len = p->id.len;
  p->clear_event = 1;
  p->events++;
  return CB_CLIENT_SSE_EVENT;
}

static int field_is(const char *f, size_t n, const char *name, size_t name_len) {
  return n == name_len && memcmp(f, name, n) == 0;
}

/* One complete line (terminator excluded). Returns NEED_MORE when it produced no
 * result, else the result with *it filled. */
static cb_client_sse_result process_line(cb_client_sse *p, const char *line, size_t n,
                                         cb_client_sse_item *it) {
  p->lines++;
  if (p->format == CB_CLIENT_FORMAT_NDJSON) {
    if (n == 0) return CB_CLIENT_SSE_NEED_MORE;
    it->data = line;
    it->len = n;
    it->has_data = 1;
    p->events++;
    return CB_CLIENT_SSE_EVENT;
  }
  if (n == 0) return dispatch(p, it);
  if (line[0] == ':') {
    it->data = line + 1;
    it->len = n - 1;
    p->comments++;
    return CB_CLIENT_SSE_COMMENT;
  }
  const char *colon = memchr(line, ':', n);
  size_t flen = colon ? (size_t)(colon - line) : n;
  const char *value = colon ? colon + 1 : line + n;
  size_t vlen = (size_t)(line + n - value);
  if (vlen && *value == ' ') {
    value++;
    vlen--;
  }
  if (field_is(line, flen, "data", 4)) {
    if (p->data.len + vlen + 1 > p->max_event_bytes ||
        cb_buf_reserve(&p->data, vlen + 1) != CB_OK)
      return fail(p, "event larger", p->max_event_bytes);
    memcpy(p->data.data + p->data.len, value, vlen);
    p->data.len += vlen;
    p->data.data[p->data.len++] = '\n';
    p->data.data[p->data.len] = '\0';
  } else if (field_is(line, flen, "event", 5)) {
    p->type.len = 0;
    if (cb_buf_append(&p->type, value, vlen) != CB_OK)
      return fail(p, "line longer", p->max_line_bytes);
  } else if (field_is(line, flen, "id", 2)) {
    if (!memchr(value, '\0', vlen)) {
      p->id.len = 0;
      if (cb_buf_append(&p->id, value, vlen) != CB_OK)
        return fail(p, "line longer", p->max_line_bytes);
    }
  } else if (field_is(line, flen, "retry", 5)) {
    uint64_t v = 0;
    size_t i = 0;
    while (i < vlen && value[i] >= '0' && value[i] <= '9') {
      uint64_t d = (uint64_t)(value[i] - '0');
      v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
      i++;
    }
    if (vlen && i == vlen) p->retry_ms = v;
  } else {
    it->data = line;
    it->len = n;
    p->malformed++;
    return CB_CLIENT_SSE_MALFORMED;
  }
  return CB_CLIENT_SSE_NEED_MORE;
}

/* Drop what the previous result pointed at (the event just dispatched). */
static void clear_dispatched(cb_client_sse *p) {
  if (!p->clear_event) return;
  p->clear_event = 0;
  p->data.len = 0;
  p->type.len = 0;
}

cb_client_sse_result cb_client_sse_feed(cb_client_sse *p, const char *data, size_t len,
                                        size_t *consumed, cb_client_sse_item *item) {
  *consumed = 0;
  clear_item(item);
  if (p->state == S_ERROR) return CB_CLIENT_SSE_ERROR;
  if (p->state == S_FINISHED || p->fin_step) return CB_CLIENT_SSE_END;
  clear_dispatched(p);

  const char *pos = data, *end = data + len;
  cb_client_sse_result res = CB_CLIENT_SSE_NEED_MORE;
  while (p->state == S_BOM && pos < end) {
    if ((unsigned char)*pos == BOM[p->bom_len]) {
      pos++;
      if (++p->bom_len == 3) p->state = S_LINES;
    } else {
      /* Not a BOM after all: the bytes matched so far start the first line. */
      cb_buf_append(&p->line, BOM, p->bom_len); /* <= 2 bytes, cap >= 64 */
      p->state = S_LINES;
    }
  }
  while (pos < end) {
    if (p->skip_lf) {
      p->skip_lf = 0;
      if (*pos == '\n') {
        pos++;
        continue;
      }
    }
    const char *eol = find_eol(pos, end);
    size_t n = (size_t)(eol - pos);
    if (p->line.len + n > p->max_line_bytes) {
      res = fail(p, "line longer", p->max_line_bytes);
      pos = eol;
      break;
    }
    if (eol == end) { /* no terminator yet: keep the piece */
      cb_buf_append(&p->line, pos, n);
      pos = end;
      break;
    }
    const char *line = pos;
    if (p->line.len) {
      cb_buf_append(&p->line, pos, n);
      line = p->line.data;
      n = p->line.len;
      p->line.len = 0; /* the bytes stay readable until the next append */
    }
    if (*eol == '\r') p->skip_lf = 1;
    pos = eol + 1;
    res = process_line(p, line, n, item);
    if (res != CB_CLIENT_SSE_NEED_MORE) break;
  }
  *consumed = (size_t)(pos - data);
  p->bytes += *consumed;
  return res;
}

cb_client_sse_result cb_client_sse_finish(cb_client_sse *p, cb_client_sse_item *item) {
  clear_item(item);
  if (p->state == S_ERROR || p->state == S_FINISHED) {
    p->state = S_FINISHED;
    return CB_CLIENT_SSE_END;
  }
  clear_dispatched(p);
  if (p->state == S_BOM) {
    cb_buf_append(&p->line, BOM, p->bom_len);
    p->state = S_LINES;
  }
  cb_client_sse_result res;
  if (p->fin_step == 0) {
    p->fin_step = 1;
    if (p->line.len) {
      size_t n = p->line.len;
      p->line.len = 0;
      res = process_line(p, p->line.data, n, item);
      if (res != CB_CLIENT_SSE_NEED_MORE) {
        item->unterminated = 1;
        return res;
      }
    }
  }
  if (p->fin_step == 1) {
    p->fin_step = 2;
    if (p->format == CB_CLIENT_FORMAT_SSE) {
      res = dispatch(p, item);
      if (res != CB_CLIENT_SSE_NEED_MORE) {
        item->unterminated = 1;
        return res;
      }
    }
  }
  p->state = S_FINISHED;
  return CB_CLIENT_SSE_END;
}
