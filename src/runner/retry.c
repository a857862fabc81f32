/*
 * retry.c - how long a failed request waits before its retry: the server's
 * Retry-After when it gave one, else a jittered exponential backoff. Both are capped
 * at CB__RETRY_WAIT_MAX_NS.
 */
#define _GNU_SOURCE /* strptime, timegm */
#include <ctype.h>
#include <string.h>
#include <time.h>

#include "runner/runner_internal.h"

/* RFC 9110 §10.2.3: Retry-After = HTTP-date / delay-seconds. An HTTP-date is the
 * IMF-fixdate, or (recipients must accept them, §5.6.7) the obsolete RFC 850 and
 * asctime forms; all are GMT. */
int cb__runner_retry_after_ns(const char *v, size_t len, uint64_t now_wall_ns, uint64_t *out_ns) {
  char s[64];
  if (len == 0 || len >= sizeof s) return 0;
  memcpy(s, v, len);
  s[len] = '\0';
  if (isdigit((unsigned char)s[0])) { /* delay-seconds = 1*DIGIT */
    uint64_t secs = 0;
    for (size_t i = 0; i < len; i++) {
      if (!isdigit((unsigned char)s[i])) return 0;
      if (secs < UINT64_C(1000000000)) secs = secs * 10 + (uint64_t)(s[i] - '0');
    }
    *out_ns = secs * UINT64_C(1000000000) < CB__RETRY_WAIT_MAX_NS ? secs * UINT64_C(1000000000)
                                                                  : CB__RETRY_WAIT_MAX_NS;
    return 1;
  }
  static const char *const forms[] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                                      "%a %b %e %H:%M:%S %Y"};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, forms[i], &tm);
    if (!end || *end) continue;
    time_t at = timegm(&tm);
    if (at == (time_t)-1) return 0;
    uint64_t at_ns = (uint64_t)(at < 0 ? 0 : at) * UINT64_C(1000000000);
    uint64_t d = at_ns > now_wall_ns ? at_ns - now_wall_ns : 0; /* a date past: now */
    *out_ns = d < CB__RETRY_WAIT_MAX_NS ? d : CB__RETRY_WAIT_MAX_NS;
    return 1;
  }
  return 0;
}

/* "Equal jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015): half
 * the exponential step, plus a uniform draw up to the other half, so retries of
 * requests that failed together spread out but never come back at once. */
uint64_t cb__runner_backoff_ns(cb_rng *rng, int retry) {
  double step = (double)CB__RETRY_BACKOFF_BASE_NS;
  for (int i = 1; i < retry && step < (double)CB__RETRY_WAIT_MAX_NS; i++) step *= 2;
  if (step > (double)CB__RETRY_WAIT_MAX_NS) step = (double)CB__RETRY_WAIT_MAX_NS;
  return (uint64_t)(step / 2 + cb_rng_uniform(rng) * step / 2);
}
