/*
 * base64.h - RFC 4648 base64 (the standard alphabet, padded): decoding, as tiktoken's
 * rank files and OpenAI's base64 embeddings write it; encoding, for data: URLs.
 */
#ifndef CALIBENCH_UTIL_BASE64_H
#define CALIBENCH_UTIL_BASE64_H

#include <stddef.h>

#include "calibench/buf.h"

/* Decodes s[0..n) (trailing '=' padding optional) into out, *out_n bytes; -1 on a
 * character outside the alphabet or a length no encoding gives (4k+1 characters), as
 * Python's base64.b64decode refuses them. out has room for 3 * (n / 4 + 1) bytes. */
int cb__base64_decode(const char *s, size_t n, unsigned char *out, size_t *out_n);

/* Appends the padded encoding of b[0..n) to out (4 * ceil(n / 3) characters). */
void cb__base64_encode(const unsigned char *b, size_t n, cb_buf *out);

#endif
