/*
 * secret.h - keeping secrets out of what calibench prints and writes.
 *
 * A URL's password (user:PASSWORD@host, ?password=...) is masked wherever the URL is
 * shown: result files, the registry, messages. The secrets of a run (the API key, the
 * values of --header, the URL's password) are replaced by [REDACTED] in every text a
 * server sent that calibench keeps (error messages, output samples): a server that
 * echoes the Authorization header in a 401 body must not put the key in a report.
 */
#ifndef CALIBENCH_SECRET_H
#define CALIBENCH_SECRET_H

#include <stddef.h>

#include "calibench/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CB_SECRETS_MAX 40
/* Shorter values are not redacted: replacing every "ab" would wreck the text and hide
 * nothing a guess would not find. */
#define CB_SECRET_MIN_LEN 4
#define CB_SECRET_MARK "[REDACTED]"

/* `url` with the password of its userinfo and every password=... query value
 * replaced by ***; written to out (n bytes, truncated, NUL-terminated). */
void cb_secret_mask_url(const char *url, char *out, size_t n);
/* The password of a URL's userinfo (user:PASSWORD@), or NULL; *len its length. */
const char *cb_secret_url_password(const char *url, size_t *len);

typedef struct cb_secrets {
  char *items[CB_SECRETS_MAX]; /* owned copies, wiped when freed */
  size_t lens[CB_SECRETS_MAX];
  size_t n;
} cb_secrets;

void cb_secrets_init(cb_secrets *s);
/* Add a secret (copied). Values shorter than CB_SECRET_MIN_LEN, duplicates, and
 * secrets past CB_SECRETS_MAX are ignored. */
void cb_secrets_add(cb_secrets *s, const char *value, size_t len);
/* The value of a "Name: value" header line, trimmed, as a secret. */
void cb_secrets_add_header(cb_secrets *s, const char *line);
/* The password of a URL's userinfo, if any, as a secret; and the Basic credentials
 * made of it (base64 of "user:password", percent-decoded, RFC 7617), which both HTTP
 * clients send and a server may echo. */
void cb_secrets_add_url(cb_secrets *s, const char *url);
/* Wipe and free every copy. */
void cb_secrets_free(cb_secrets *s);
/* in[0..len) with every occurrence of a secret replaced by CB_SECRET_MARK, appended
 * to out. */
void cb_secrets_redact(const cb_secrets *s, const char *in, size_t len, cb_buf *out);
/* The same in place, in a NUL-terminated string of `size` bytes (cut to fit). */
void cb_secrets_redact_str(const cb_secrets *s, char *text, size_t size);
/* Untrusted text[0..len) (what a server said, or a message quoting it) fit for a
 * message: secrets redacted, control characters replaced (cb_utf8_clean), cut at a
 * character boundary to fit out[out_size]. */
void cb_secrets_quote(const cb_secrets *s, const char *text, size_t len, char *out,
                      size_t out_size);

#ifdef __cplusplus
}
#endif
#endif
