/*
 * json_scan.h - a validating, non-allocating JSON scanner (the client's, and eval's
 * JSONL reader: src/eval/jsonl_line.c).
 *
 * It walks a document in place: the caller asks for the next token of the shape it
 * expects and skips the values it does not care about; strings it wants are decoded
 * into an output area the caller reserved (decoding never grows a string, so the
 * input length is enough for all of them). It accepts exactly the documents that
 * jansson's json_loadb(JSON_DECODE_ANY | JSON_ALLOW_NUL) accepts - same whitespace,
 * string escapes, surrogate and UTF-8 rules, number grammar - except where it cannot
 * cheaply be sure, and then it says FALLBACK instead of guessing:
 *   - an integer of 19 or more digits (jansson: "too big integer" beyond int64)
 *   - a real whose magnitude could overflow a double (jansson: "real number overflow")
 *   - nesting deeper than CB__JSON_MAX_DEPTH (jansson allows 2048)
 *   - an escaped object key, or a key the caller sees twice (jansson: last one wins)
 * The caller then parses the same bytes with jansson. tests/unit/test_client_openai.c
 * and tests/fuzz/fuzz_client_sse.c check the agreement. One deliberate difference: a
 * raw NUL byte is never accepted here, while jansson 2.14 drops one that follows a
 * number or literal; chunk_jansson.c rejects such input before calling jansson.
 * With no_nul set it stands for jansson without JSON_ALLOW_NUL instead: an escaped
 * \u0000 anywhere is FALLBACK (jansson rejects it there).
 */
#ifndef CALIBENCH_CLIENT_JSON_SCAN_H
#define CALIBENCH_CLIENT_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#define CB__JSON_MAX_DEPTH 64

enum { CB__JSON_OK = 0, CB__JSON_INVALID, CB__JSON_FALLBACK };

typedef struct cb__json_scan {
  const unsigned char *p;   /* next byte */
  const unsigned char *end; /* one past the last byte */
  int depth;                /* objects/arrays open */
  int status;               /* CB__JSON_*; sticky once not OK */
  const char *why;          /* INVALID / FALLBACK: static text */
  char *out;                /* decoded strings go to out[out_len..] */
  size_t out_len;
  int no_nul;               /* 1: \u0000 is FALLBACK (jansson without JSON_ALLOW_NUL) */
} cb__json_scan;

/* Mark the scan failed; returns -1 so callers can `return cb__json_fail(...)`. */
int cb__json_fail(cb__json_scan *s, int status, const char *why);

/* Whitespace skipped; returns the next byte or -1 at the end. */
static inline int cb__json_peek(cb__json_scan *s) {
  const unsigned char *p = s->p, *end = s->end;
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
  s->p = p;
  return p < end ? *p : -1;
}

/* Consume byte c (after whitespace) or fail INVALID. Returns 0 on success. */
static inline int cb__json_expect(cb__json_scan *s, int c) {
  if (cb__json_peek(s) != c) return cb__json_fail(s, CB__JSON_INVALID, "unexpected character");
  s->p++;
  return 0;
}

/*
 * A string at s->p (after whitespace). decode = 1: its value is written at
 * s->out + s->out_len, *out_ptr / *out_len (may be NULL) get where and how long,
 * and out_len advances. decode = 0: validated and skipped. Returns 0 or fails.
 */
int cb__json_string(cb__json_scan *s, int decode, const char **out_ptr, size_t *out_len);

/*
 * An object key and its ':' (after whitespace). The key is returned in place
 * (*key, *key_len), undecoded: a key with a backslash is FALLBACK.
 */
int cb__json_key(cb__json_scan *s, const char **key, size_t *key_len);

/*
 * A number. *is_int = 1 and *value set when it is an integer (no fraction or
 * exponent) of at most 18 digits; otherwise *is_int = 0. Returns 0 or fails.
 */
int cb__json_number(cb__json_scan *s, int *is_int, int64_t *value);

/* Any value, validated and skipped. */
int cb__json_skip(cb__json_scan *s);

/*
 * Object / array iteration. After cb__json_expect(s, '{'), call
 * cb__json_next(s, '}', &first) before each member: 1 = a member follows, 0 = the
 * container closed (the closing byte is consumed), -1 = failed.
 */
int cb__json_next(cb__json_scan *s, int close, int *first);

/* Open a container (checks the depth) / note that one was closed. */
int cb__json_enter(cb__json_scan *s, int open);
void cb__json_leave(cb__json_scan *s);

/* The literals: which = 't', 'f' or 'n'. Returns 0 or fails. */
int cb__json_literal(cb__json_scan *s);

/* Only whitespace is left (the end of the document), else INVALID. */
int cb__json_end(cb__json_scan *s);

#endif
