/*
 * http_parse.c - resumable HTTP/1.x request parser for the simulator's server.
 *
 * A byte-driven state machine in the style of nginx's ngx_http_parse.c: the parser
 * keeps its position in `state` and consumes whatever it is given (1 byte or a whole
 * read), so the server never re-scans input. Runs of ordinary bytes (method, target,
 * names, values, body data) are scanned and copied a span at a time.
 *
 * What it stores, all in buffers capped by the limits (memory is bounded by them):
 *   head  "METHOD\0target\0name\0value\0name\0value\0..." (names lowercased, values
 *         trimmed); never larger than the raw head, so capped at max_header_bytes;
 *   hdrs  an index of offsets into head, at most max_headers entries;
 *   body  the decoded body, capped at max_body_bytes.
 *
 * Rules (RFC 9112 unless noted), each with the status the server answers:
 *   - request-line "method SP target SP HTTP/d.d" with single spaces; major version
 *     other than 1 -> 505; anything else malformed -> 400. Empty lines before the
 *     request line are skipped (counted against max_header_bytes).
 *   - a line ends in CRLF; a bare LF is accepted in the head and trailer (2.2), never
 *     inside chunked framing; a bare CR anywhere -> 400.
 *   - field names are tokens; whitespace before ':' or a line starting with
 *     whitespace (obs-fold) -> 400; values may not hold CTLs other than HTAB -> 400.
 *   - more than max_header_bytes of head, or more than max_headers fields -> 431.
 *   - Content-Length: 1*DIGIT, a list or repeats of one value allowed, differing
 *     values or junk -> 400; more than max_body_bytes -> 413 at once.
 *   - Transfer-Encoding with Content-Length, in HTTP/1.0, chunked not last, or
 *     chunked twice -> 400; any other coding -> 501.
 *   - HTTP/1.1 without exactly one Host, or any request with two -> 400.
 *   - Expect: "100-continue" is noted (HTTP/1.1 only, ignored in 1.0); any other
 *     expectation in HTTP/1.1 -> 417.
 *   - chunk-size hex; extensions after ';' skipped (no CTLs); a chunk line longer
 *     than 4 KiB -> 400; decoded body beyond max_body_bytes -> 413 as soon as the
 *     chunk size says so; trailer fields are checked like header fields, counted
 *     against max_header_bytes and dropped.
 * Keep-alive: HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with
 * "Connection: keep-alive" and without close.
 */
#include "sim/http.h"

#include <string.h>

#include "calibench/alloc.h"

enum {
  S_START = 0,     /* before the request line (skipping empty lines) */
  S_START_LF,      /* CR of an empty line seen */
  S_METHOD,
  S_TARGET,
  S_VERSION,       /* collecting the 8 bytes "HTTP/x.y" */
  S_REQLINE_END,   /* after the version: CR or LF */
  S_REQLINE_LF,
  S_HDR_START,     /* start of a field line or of the empty line ending the head */
  S_HDR_NAME,
  S_HDR_OWS,       /* whitespace after ':' */
  S_HDR_VALUE,
  S_HDR_LF,
  S_HEAD_END_LF,
  /* ---- last head state; the body states follow ---- */
  S_BODY,          /* Content-Length body */
  S_CHUNK_SIZE,
  S_CHUNK_BWS,     /* whitespace after the size, before ';' */
  S_CHUNK_EXT,
  S_CHUNK_SIZE_LF,
  S_CHUNK_DATA,
  S_CHUNK_DATA_CR,
  S_CHUNK_DATA_LF,
  /* ---- trailer states count against max_header_bytes again ---- */
  S_TRAILER_START,
  S_TRAILER_NAME,
  S_TRAILER_VALUE,
  S_TRAILER_LF,
  S_TRAILER_END_LF,
  S_DONE,
  S_ERROR
};

#define KEEP_BUFFER_BYTES 4096 /* reset keeps buffers up to this size */
#define KEEP_HDRS 32           /* reset keeps an index of up to this many entries */
#define MAX_CHUNK_LINE 4096    /* chunk-size line incl. extensions, bytes */
#define MAX_HEADER_BYTES_CLAMP ((size_t)1 << 30)

/* Character classes. */
#define C_TOKEN 1  /* tchar (RFC 9110 5.6.2) */
#define C_TARGET 2 /* VCHAR 0x21..0x7E */
#define C_VALUE 4  /* field-vchar, SP, HTAB, obs-text */
#define C_HEX 8

static unsigned char char_class[256];
static int char_class_ready;

static void init_char_class(void) {
  if (char_class_ready) return;
  for (int c = 0; c < 256; c++) {
    unsigned char k = 0;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c && strchr("!#$%&'*+-.^_`|~", c)))
      k |= C_TOKEN;
    if (c >= 0x21 && c <= 0x7E) k |= C_TARGET;
    if (c == '\t' || (c >= 0x20 && c != 0x7F)) k |= C_VALUE;
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
      k |= C_HEX;
    char_class[c] = k;
  }
  char_class_ready = 1;
}

static int is_class(unsigned char c, unsigned char k) { return (char_class[c] & k) != 0; }

static unsigned char ascii_lower(unsigned char c) {
  return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Case-insensitive equality of s[0..n) with the NUL-terminated lowercase `lit`. */
static int equals_ci(const char *s, size_t n, const char *lit) {
  size_t m = strlen(lit);
  if (n != m) return 0;
  for (size_t i = 0; i < n; i++)
    if (ascii_lower((unsigned char)s[i]) != (unsigned char)lit[i]) return 0;
  return 1;
}

void cb__sim_http_default_limits(cb__sim_http_limits *l) {
  l->max_header_bytes = 64 * 1024;
  l->max_headers = 100;
  l->max_body_bytes = 16 * 1024 * 1024;
}

static void clear_request(cb__sim_http_parser *p) {
  memset(&p->req, 0, sizeof p->req);
  p->req.method = "";
  p->req.target = "";
  p->req.body = "";
  p->req.version_minor = 1;
}

void cb__sim_http_parser_init(cb__sim_http_parser *p, const cb__sim_http_limits *limits) {
  init_char_class();
  memset(p, 0, sizeof *p);
  if (limits)
    p->limits = *limits;
  else
    cb__sim_http_default_limits(&p->limits);
  if (p->limits.max_header_bytes > MAX_HEADER_BYTES_CLAMP)
    p->limits.max_header_bytes = MAX_HEADER_BYTES_CLAMP;
  if (p->limits.max_headers < 1) p->limits.max_headers = 1;
  cb_buf_init(&p->head, p->limits.max_header_bytes);
  cb_buf_init(&p->body, p->limits.max_body_bytes ? p->limits.max_body_bytes : 1);
  p->state = S_START;
  clear_request(p);
}

void cb__sim_http_parser_free(cb__sim_http_parser *p) {
  cb_buf_free(&p->head);
  cb_buf_free(&p->body);
  cb_free(p->hdrs);
  p->hdrs = NULL;
  p->hdrs_alloc = 0;
}

void cb__sim_http_parser_reset(cb__sim_http_parser *p) {
  if (p->head.alloc > KEEP_BUFFER_BYTES)
    cb_buf_free(&p->head);
  else
    cb_buf_reset(&p->head);
  if (p->body.alloc > KEEP_BUFFER_BYTES)
    cb_buf_free(&p->body);
  else
    cb_buf_reset(&p->body);
  if (p->hdrs_alloc > KEEP_HDRS) {
    cb_free(p->hdrs);
    p->hdrs = NULL;
    p->hdrs_alloc = 0;
  }
  p->state = S_START;
  p->head_bytes = 0;
  p->line_bytes = 0;
  p->remaining = 0;
  p->cur_off = p->cur_name_off = p->cur_name_len = 0;
  p->version_len = 0;
  p->chunk_digits = 0;
  p->error_status = 0;
  p->error_msg = NULL;
  clear_request(p);
}

const cb__sim_http_request *cb__sim_http_parser_request(const cb__sim_http_parser *p) {
  return &p->req;
}

const char *cb__sim_http_parser_header(const cb__sim_http_parser *p, const char *name,
                                       size_t *value_len) {
  size_t n = strlen(name);
  for (size_t i = 0; i < p->req.header_count; i++) {
    const cb__sim_http_hdr_ *h = &p->hdrs[i];
    if (h->name_len != n) continue;
    const char *hn = p->head.data + h->name_off;
    size_t k = 0;
    while (k < n && (unsigned char)hn[k] == ascii_lower((unsigned char)name[k])) k++;
    if (k == n) {
      if (value_len) *value_len = h->value_len;
      return p->head.data + h->value_off;
    }
  }
  return NULL;
}

void cb__sim_http_parser_header_at(const cb__sim_http_parser *p, size_t i,
                                   const char **name, const char **value,
                                   size_t *value_len) {
  const cb__sim_http_hdr_ *h = &p->hdrs[i];
  if (name) *name = p->head.data + h->name_off;
  if (value) *value = p->head.data + h->value_off;
  if (value_len) *value_len = h->value_len;
}

const char *cb__sim_http_reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

/* ---- Head analysis -------------------------------------------------------------- */

/* Call fn(ctx, element, len) for each non-empty element of a comma-separated list,
 * OWS trimmed. Returns the first non-zero fn result, else 0. */
static int for_each_list_element(const char *v, size_t n,
                                 int (*fn)(void *ctx, const char *e, size_t len),
                                 void *ctx) {
  size_t i = 0;
  while (i <= n) {
    size_t j = i;
    while (j < n && v[j] != ',') j++;
    size_t a = i, b = j;
    while (a < b && (v[a] == ' ' || v[a] == '\t')) a++;
    while (b > a && (v[b - 1] == ' ' || v[b - 1] == '\t')) b--;
    if (b > a) {
      int r = fn(ctx, v + a, b - a);
      if (r) return r;
    }
    i = j + 1;
  }
  return 0;
}

typedef struct head_facts {
  int has_cl;
  uint64_t cl;
  int cl_bad;
  int te_count;        /* Transfer-Encoding field lines */
  int te_chunked_seen; /* chunked appeared */
  int te_last_chunked; /* the final coding is chunked */
  int te_twice;        /* chunked appeared twice */
  int te_other;        /* a coding other than chunked appeared */
  int conn_close;
  int conn_keep_alive;
  int expect_continue;
  int expect_other;
  int host_count;
} head_facts;

static int on_cl_element(void *ctx, const char *e, size_t n) {
  head_facts *f = ctx;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (e[i] < '0' || e[i] > '9') return f->cl_bad = 1;
    unsigned d = (unsigned)(e[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return f->cl_bad = 1;
    v = v * 10 + d;
  }
  if (f->has_cl && v != f->cl) return f->cl_bad = 1;
  f->has_cl = 1;
  f->cl = v;
  return 0;
}

static int on_te_element(void *ctx, const char *e, size_t n) {
  head_facts *f = ctx;
  if (equals_ci(e, n, "chunked")) {
    if (f->te_chunked_seen) f->te_twice = 1;
    f->te_chunked_seen = 1;
    f->te_last_chunked = 1;
  } else {
    f->te_other = 1;
    f->te_last_chunked = 0;
  }
  return 0;
}

static int on_connection_element(void *ctx, const char *e, size_t n) {
  head_facts *f = ctx;
  if (equals_ci(e, n, "close")) f->conn_close = 1;
  if (equals_ci(e, n, "keep-alive")) f->conn_keep_alive = 1;
  return 0;
}

static int on_expect_element(void *ctx, const char *e, size_t n) {
  head_facts *f = ctx;
  if (equals_ci(e, n, "100-continue"))
    f->expect_continue = 1;
  else
    f->expect_other = 1;
  return 0;
}

/* ---- The state machine ------------------------------------------------------------ */

static cb__sim_http_parse_result fail(cb__sim_http_parser *p, int status, const char *msg) {
  p->state = S_ERROR;
  p->error_status = status;
  p->error_msg = msg;
  return CB__SIM_HTTP_PARSE_ERROR;
}

static const char *const MSG_HEAD_TOO_LARGE = "request header block too large";

/* Append to head storage; the storage is never larger than the raw head, so a
 * capacity failure can only mean the head is over the limit. */
static int head_put(cb__sim_http_parser *p, const void *d, size_t n) {
  return cb_buf_append(&p->head, d, n) == CB_OK;
}

static int add_header(cb__sim_http_parser *p) {
  /* Trim trailing whitespace of the value, then terminate it. */
  size_t vend = p->head.len;
  while (vend > p->cur_off && (p->head.data[vend - 1] == ' ' || p->head.data[vend - 1] == '\t'))
    vend--;
  p->head.len = vend;
  if (!head_put(p, "", 1)) return 0;
  size_t n = p->req.header_count;
  if (n == p->hdrs_alloc) {
    size_t want = p->hdrs_alloc ? p->hdrs_alloc * 2 : 16;
    if (want > p->limits.max_headers) want = p->limits.max_headers;
    p->hdrs = cb_reallocarray(p->hdrs, want, sizeof *p->hdrs);
    p->hdrs_alloc = want;
  }
  cb__sim_http_hdr_ *h = &p->hdrs[n];
  h->name_off = p->cur_name_off;
  h->name_len = p->cur_name_len;
  h->value_off = p->cur_off;
  h->value_len = (uint32_t)(vend - p->cur_off);
  p->req.header_count = n + 1;
  return 1;
}

static void begin_chunk(cb__sim_http_parser *p) {
  p->state = S_CHUNK_SIZE;
  p->remaining = 0;
  p->chunk_digits = 0;
  p->line_bytes = 0;
}

/* The head is complete: check framing, fill p->req and choose the body state. */
static cb__sim_http_parse_result finish_head(cb__sim_http_parser *p) {
  cb__sim_http_request *r = &p->req;
  head_facts f;
  memset(&f, 0, sizeof f);
  for (size_t i = 0; i < r->header_count; i++) {
    const cb__sim_http_hdr_ *h = &p->hdrs[i];
    const char *name = p->head.data + h->name_off;
    const char *val = p->head.data + h->value_off;
    if (!strcmp(name, "content-length")) {
      if (h->value_len == 0) f.cl_bad = 1;
      for_each_list_element(val, h->value_len, on_cl_element, &f);
      if (!f.has_cl) f.cl_bad = 1;
    } else if (!strcmp(name, "transfer-encoding")) {
      f.te_count++;
      for_each_list_element(val, h->value_len, on_te_element, &f);
    } else if (!strcmp(name, "connection")) {
      for_each_list_element(val, h->value_len, on_connection_element, &f);
    } else if (!strcmp(name, "expect")) {
      for_each_list_element(val, h->value_len, on_expect_element, &f);
    } else if (!strcmp(name, "host")) {
      f.host_count++;
    }
  }
  r->method = p->head.data;
  r->target = p->head.data + r->method_len + 1;
  const char *q = memchr(r->target, '?', r->target_len);
  r->path_len = q ? (size_t)(q - r->target) : r->target_len;

  if (f.cl_bad) return fail(p, 400, "invalid or conflicting Content-Length");
  if (f.te_count) {
    if (r->version_minor == 0)
      return fail(p, 400, "Transfer-Encoding in an HTTP/1.0 request");
    if (f.has_cl) return fail(p, 400, "both Transfer-Encoding and Content-Length");
    if (!f.te_last_chunked)
      return fail(p, 400, "Transfer-Encoding does not end with chunked");
    if (f.te_twice) return fail(p, 400, "chunked transfer coding applied twice");
    if (f.te_other) return fail(p, 501, "unsupported transfer coding");
  }
  if (f.host_count > 1 || (r->version_minor == 1 && f.host_count == 0))
    return fail(p, 400, f.host_count ? "more than one Host header" : "missing Host header");
  if (r->version_minor == 1 && f.expect_other)
    return fail(p, 417, "unsupported expectation");
  if (f.has_cl && f.cl > (uint64_t)p->limits.max_body_bytes)
    return fail(p, 413, "request body too large");

  r->chunked = f.te_count > 0;
  r->has_content_length = f.has_cl;
  r->content_length = f.cl;
  r->keep_alive = r->version_minor == 1 ? !f.conn_close : (f.conn_keep_alive && !f.conn_close);
  int has_body = r->chunked || (f.has_cl && f.cl > 0);
  r->expect_continue = r->version_minor == 1 && f.expect_continue && has_body;

  if (r->chunked) {
    begin_chunk(p);
  } else if (has_body) {
    p->state = S_BODY;
    p->remaining = f.cl;
    size_t want = f.cl < 65536 ? (size_t)f.cl : 65536;
    (void)cb_buf_reserve(&p->body, want);
  } else {
    p->state = S_DONE;
    r->body = "";
    r->body_len = 0;
  }
  return CB__SIM_HTTP_PARSE_HEAD;
}

static cb__sim_http_parse_result finish_body(cb__sim_http_parser *p) {
  p->state = S_DONE;
  p->req.body = p->body.data ? p->body.data : "";
  p->req.body_len = p->body.len;
  return CB__SIM_HTTP_PARSE_DONE;
}

static cb__sim_http_parse_result head_full(cb__sim_http_parser *p) {
  return fail(p, 431, MSG_HEAD_TOO_LARGE);
}

static int counts_as_head(int state) {
  return state <= S_HEAD_END_LF || (state >= S_TRAILER_START && state <= S_TRAILER_END_LF);
}

/* Appends the run of class-`k` bytes at *pos (up to lim) to the head and
   moves *pos past it; 0 when the head is full (*pos left where it was). */
static int head_take_run(cb__sim_http_parser *p, const unsigned char **pos,
                         const unsigned char *lim, unsigned char k) {
  const unsigned char *q = *pos;
  while (q < lim && is_class(*q, k)) q++;
  if (q > *pos && !head_put(p, *pos, (size_t)(q - *pos))) return 0;
  *pos = q;
  return 1;
}

/* The request line's method or target: a run of class-`k` bytes ending in one SP. It
   is stored NUL-terminated from p->cur_off, its length goes to *len, and the parser
   moves on to `next`. */
static cb__sim_http_parse_result reqline_word(cb__sim_http_parser *p, const unsigned char **pos,
                                              const unsigned char *lim, unsigned char k,
                                              size_t *len, const char *malformed, int next) {
  if (!head_take_run(p, pos, lim, k)) return head_full(p);
  if (*pos == lim) return CB__SIM_HTTP_PARSE_NEED_MORE;
  if (**pos != ' ' || p->head.len == p->cur_off) return fail(p, 400, malformed);
  *len = p->head.len - p->cur_off;
  if (!head_put(p, "", 1)) return head_full(p);
  (*pos)++;
  p->cur_off = (uint32_t)p->head.len;
  p->state = next;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* Appends up to p->remaining body bytes from [*pos, end) and moves *pos past
   them; 0 when the body buffer cannot grow. */
static int body_take(cb__sim_http_parser *p, const unsigned char **pos,
                     const unsigned char *end) {
  size_t n = (size_t)(end - *pos);
  if (n > p->remaining) n = (size_t)p->remaining;
  if (cb_buf_append(&p->body, *pos, n) != CB_OK) return 0;
  *pos += n;
  p->remaining -= n;
  return 1;
}

/* Counts the chunk-size line's bytes up to q against MAX_CHUNK_LINE and moves *pos
   there; 0 when the line is too long. */
static int chunk_line_take(cb__sim_http_parser *p, const unsigned char **pos,
                           const unsigned char *q) {
  p->line_bytes += (size_t)(q - *pos);
  *pos = q;
  return p->line_bytes <= MAX_CHUNK_LINE;
}

/* The hex digits of a chunk size at *pos, then what ends them. */
static cb__sim_http_parse_result chunk_size(cb__sim_http_parser *p, const unsigned char **pos,
                                            const unsigned char *end) {
  const unsigned char *q = *pos;
  size_t budget = p->limits.max_body_bytes - p->body.len;
  for (; q < end && is_class(*q, C_HEX); q++) {
    unsigned d = *q <= '9' ? (unsigned)(*q - '0') : (unsigned)(ascii_lower(*q) - 'a' + 10);
    if (p->remaining > (UINT64_MAX >> 4)) return fail(p, 400, "chunk size too large");
    p->remaining = (p->remaining << 4) | d;
    if (p->remaining > (uint64_t)budget) return fail(p, 413, "request body too large");
    if (p->chunk_digits < 255) p->chunk_digits++;
  }
  if (!chunk_line_take(p, pos, q)) return fail(p, 400, "chunk size line too long");
  if (*pos == end) return CB__SIM_HTTP_PARSE_NEED_MORE;
  if (p->chunk_digits == 0) return fail(p, 400, "malformed chunk size");
  unsigned char c = **pos;
  if (c == ';')
    p->state = S_CHUNK_EXT;
  else if (c == ' ' || c == '\t')
    p->state = S_CHUNK_BWS;
  else if (c == '\r')
    p->state = S_CHUNK_SIZE_LF;
  else
    return fail(p, 400, "malformed chunk size");
  (*pos)++;
  p->line_bytes++;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* Whitespace after a chunk size (S_CHUNK_BWS) or its extensions (S_CHUNK_EXT). */
static cb__sim_http_parse_result chunk_ext(cb__sim_http_parser *p, const unsigned char **pos,
                                           const unsigned char *end) {
  const unsigned char *q = *pos;
  if (p->state == S_CHUNK_BWS)
    while (q < end && (*q == ' ' || *q == '\t')) q++;
  else
    while (q < end && is_class(*q, C_VALUE)) q++;
  if (!chunk_line_take(p, pos, q)) return fail(p, 400, "chunk size line too long");
  if (*pos == end) return CB__SIM_HTTP_PARSE_NEED_MORE;
  if (**pos == '\r')
    p->state = S_CHUNK_SIZE_LF;
  else if (**pos == ';' && p->state == S_CHUNK_BWS)
    p->state = S_CHUNK_EXT;
  else
    return fail(p, 400, "malformed chunk extension");
  (*pos)++;
  p->line_bytes++;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* The HTTP-version of the request line, 8 bytes "HTTP/d.d" gathered across feeds. */
static cb__sim_http_parse_result reqline_version(cb__sim_http_parser *p,
                                                 const unsigned char **pos,
                                                 const unsigned char *lim) {
  while (*pos < lim && p->version_len < sizeof p->version)
    p->version[p->version_len++] = (char)*(*pos)++;
  if (p->version_len < sizeof p->version) return CB__SIM_HTTP_PARSE_NEED_MORE;
  const char *v = p->version;
  if (memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' ||
      v[7] > '9')
    return fail(p, 400, "malformed HTTP version");
  if (v[5] != '1') return fail(p, 505, "HTTP version not supported");
  p->req.version_minor = v[7] == '0' ? 0 : 1;
  p->state = S_REQLINE_END;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* The LF that ends a line of the head or the trailer, after its CR. */
static cb__sim_http_parse_result line_lf(cb__sim_http_parser *p, unsigned char c) {
  if (c != '\n')
    return fail(p, 400, p->state >= S_TRAILER_START ? "bare CR in trailer" : "bare CR in request head");
  switch (p->state) {
    case S_HDR_LF:
      if (!add_header(p)) return head_full(p);
      p->state = S_HDR_START;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_REQLINE_LF: p->state = S_HDR_START; return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_TRAILER_LF: p->state = S_TRAILER_START; return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_HEAD_END_LF: return finish_head(p);
    default: return finish_body(p); /* S_TRAILER_END_LF */
  }
}

/* The start of a header field line, or the empty line that ends the head. */
static cb__sim_http_parse_result header_start(cb__sim_http_parser *p, unsigned char c) {
  if (c == '\n') return finish_head(p);
  if (c == '\r') {
    p->state = S_HEAD_END_LF;
  } else if (is_class(c, C_TOKEN)) {
    if (p->req.header_count >= p->limits.max_headers) return fail(p, 431, "too many header fields");
    p->cur_name_off = (uint32_t)p->head.len;
    p->state = S_HDR_NAME;
  } else {
    return fail(p, 400, c == ' ' || c == '\t'
                            ? "obsolete line folding or leading whitespace in header"
                            : "invalid character in header field name");
  }
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* A header field name, stored lowercased and NUL-terminated, up to its ':'. */
static cb__sim_http_parse_result header_name(cb__sim_http_parser *p, const unsigned char **pos,
                                             const unsigned char *lim) {
  size_t from = p->head.len;
  if (!head_take_run(p, pos, lim, C_TOKEN)) return head_full(p);
  for (size_t i = from; i < p->head.len; i++)
    p->head.data[i] = (char)ascii_lower((unsigned char)p->head.data[i]);
  if (*pos == lim) return CB__SIM_HTTP_PARSE_NEED_MORE;
  if (**pos != ':')
    return fail(p, 400, **pos == ' ' || **pos == '\t'
                            ? "whitespace between header field name and colon"
                            : "invalid character in header field name");
  p->cur_name_len = (uint32_t)(p->head.len - p->cur_name_off);
  if (!head_put(p, "", 1)) return head_full(p);
  (*pos)++;
  p->state = S_HDR_OWS;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* A header field value up to the end of its line; stored when the line ends in a bare
   LF, else after the LF of its CRLF (S_HDR_LF). */
static cb__sim_http_parse_result header_value(cb__sim_http_parser *p, const unsigned char **pos,
                                              const unsigned char *lim) {
  if (!head_take_run(p, pos, lim, C_VALUE)) return head_full(p);
  if (*pos == lim) return CB__SIM_HTTP_PARSE_NEED_MORE;
  unsigned char c = **pos;
  if (c != '\r' && c != '\n') return fail(p, 400, "invalid character in header field value");
  (*pos)++;
  if (c == '\r') {
    p->state = S_HDR_LF;
    return CB__SIM_HTTP_PARSE_NEED_MORE;
  }
  if (!add_header(p)) return head_full(p);
  p->state = S_HDR_START;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* The start of a trailer field line, or the empty line that ends the request. */
static cb__sim_http_parse_result trailer_start(cb__sim_http_parser *p, unsigned char c) {
  if (c == '\n') return finish_body(p);
  if (c == '\r')
    p->state = S_TRAILER_END_LF;
  else if (is_class(c, C_TOKEN))
    p->state = S_TRAILER_NAME;
  else
    return fail(p, 400, "malformed trailer field");
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* A trailer field (checked, not stored): the name up to ':' (S_TRAILER_NAME) or the
   value up to the end of its line (S_TRAILER_VALUE). */
static cb__sim_http_parse_result trailer_field(cb__sim_http_parser *p, const unsigned char **pos,
                                              const unsigned char *lim) {
  int name = p->state == S_TRAILER_NAME;
  const unsigned char *q = *pos;
  while (q < lim && is_class(*q, name ? C_TOKEN : C_VALUE)) q++;
  *pos = q;
  if (q == lim) return CB__SIM_HTTP_PARSE_NEED_MORE;
  if (name && *q == ':')
    p->state = S_TRAILER_VALUE;
  else if (!name && *q == '\r')
    p->state = S_TRAILER_LF;
  else if (!name && *q == '\n')
    p->state = S_TRAILER_START;
  else
    return fail(p, 400, name ? "malformed trailer field" : "invalid character in trailer field");
  (*pos)++;
  return CB__SIM_HTTP_PARSE_NEED_MORE;
}

/* One step of the state machine from *pos: consumes what the current state takes
   (class runs up to lim, which the head limit may set below end) and moves *pos past
   it. Returns NEED_MORE to go on, or the result that ends this feed. */
static cb__sim_http_parse_result step(cb__sim_http_parser *p, const unsigned char **pos,
                                      const unsigned char *lim, const unsigned char *end) {
  unsigned char c = **pos;
  switch (p->state) {
    case S_START:
      if (c == '\r' || c == '\n') {
        (*pos)++;
        if (c == '\r') p->state = S_START_LF;
        return CB__SIM_HTTP_PARSE_NEED_MORE;
      }
      if (!is_class(c, C_TOKEN)) return fail(p, 400, "malformed request line");
      p->state = S_METHOD;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_START_LF:
      if (c != '\n') return fail(p, 400, "bare CR in request");
      (*pos)++;
      p->state = S_START;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_METHOD:
      return reqline_word(p, pos, lim, C_TOKEN, &p->req.method_len, "malformed request line",
                          S_TARGET);
    case S_TARGET:
      return reqline_word(p, pos, lim, C_TARGET, &p->req.target_len, "malformed request target",
                          S_VERSION);
    case S_VERSION: return reqline_version(p, pos, lim);
    case S_REQLINE_END:
      if (c != '\r' && c != '\n') return fail(p, 400, "malformed request line");
      (*pos)++;
      p->state = c == '\r' ? S_REQLINE_LF : S_HDR_START;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_REQLINE_LF:
    case S_HDR_LF:
    case S_HEAD_END_LF:
    case S_TRAILER_LF:
    case S_TRAILER_END_LF:
      if (c == '\n') (*pos)++;
      return line_lf(p, c);
    case S_HDR_START:
      if (c == '\r' || c == '\n') (*pos)++;
      return header_start(p, c);
    case S_HDR_NAME: return header_name(p, pos, lim);
    case S_HDR_OWS:
      while (*pos < lim && (**pos == ' ' || **pos == '\t')) (*pos)++;
      if (*pos == lim) return CB__SIM_HTTP_PARSE_NEED_MORE;
      p->cur_off = (uint32_t)p->head.len;
      p->state = S_HDR_VALUE;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_HDR_VALUE: return header_value(p, pos, lim);
    case S_BODY:
      if (!body_take(p, pos, end)) /* unreachable: CL was checked */
        return fail(p, 413, "request body too large");
      return p->remaining ? CB__SIM_HTTP_PARSE_NEED_MORE : finish_body(p);
    case S_CHUNK_SIZE: return chunk_size(p, pos, end);
    case S_CHUNK_BWS:
    case S_CHUNK_EXT: return chunk_ext(p, pos, end);
    case S_CHUNK_SIZE_LF:
      if (c != '\n') return fail(p, 400, "malformed chunk line ending");
      (*pos)++;
      p->state = p->remaining ? S_CHUNK_DATA : S_TRAILER_START;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_CHUNK_DATA:
      if (!body_take(p, pos, end)) /* unreachable: size was checked */
        return fail(p, 413, "request body too large");
      if (p->remaining == 0) p->state = S_CHUNK_DATA_CR;
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_CHUNK_DATA_CR:
    case S_CHUNK_DATA_LF:
      if (c != (p->state == S_CHUNK_DATA_CR ? '\r' : '\n'))
        return fail(p, 400, "chunk data not followed by CRLF");
      (*pos)++;
      if (p->state == S_CHUNK_DATA_CR)
        p->state = S_CHUNK_DATA_LF;
      else
        begin_chunk(p);
      return CB__SIM_HTTP_PARSE_NEED_MORE;
    case S_TRAILER_START:
      if (c == '\r' || c == '\n') (*pos)++;
      return trailer_start(p, c);
    case S_TRAILER_NAME:
    case S_TRAILER_VALUE: return trailer_field(p, pos, lim);
    default: /* S_DONE / S_ERROR are handled before the loop */
      return fail(p, 400, "parser in an invalid state");
  }
}

cb__sim_http_parse_result cb__sim_http_parser_feed(cb__sim_http_parser *p,
                                                   const char *data, size_t len,
                                                   size_t *consumed) {
  const unsigned char *base = (const unsigned char *)data;
  const unsigned char *pos = base, *end = base + len;
  cb__sim_http_parse_result res = CB__SIM_HTTP_PARSE_NEED_MORE;

  if (p->state == S_DONE || p->state == S_ERROR) {
    *consumed = 0;
    return p->state == S_DONE ? CB__SIM_HTTP_PARSE_DONE : CB__SIM_HTTP_PARSE_ERROR;
  }
  while (pos < end && res == CB__SIM_HTTP_PARSE_NEED_MORE) {
    const unsigned char *lim = end, *start = pos;
    int head = counts_as_head(p->state); /* this step counts against max_header_bytes */
    if (head) {
      if (p->head_bytes >= p->limits.max_header_bytes) {
        res = head_full(p);
        break;
      }
      size_t room = p->limits.max_header_bytes - p->head_bytes;
      if ((size_t)(end - pos) > room) lim = pos + room;
    }
    res = step(p, &pos, lim, end);
    if (head) p->head_bytes += (size_t)(pos - start);
  }
  *consumed = (size_t)(pos - base);
  return res;
}
