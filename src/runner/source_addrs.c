/*
 * source_addrs.c - the local addresses connections are spread over (--source-addrs).
 *
 * A TCP connection is one (source address, source port, destination address,
 * destination port) tuple; to one destination, one source address has only the
 * ephemeral port range (net.ipv4.ip_local_port_range, 32768-60999 by default:
 * 28,232 ports) to choose from. Every address of 127.0.0.0/8 is this host's, so
 * spreading loopback connections over several source addresses lifts that cap.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/runner.h"

/* One IP literal of len bytes into *out (port 0). */
static int parse_one(const char *s, size_t len, struct sockaddr_storage *out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (len == 0 || len >= sizeof buf) return 0;
  memcpy(buf, s, len);
  buf[len] = '\0';
  struct sockaddr_storage ss = {0};
  struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, buf, &in4->sin_addr) == 1) in4->sin_family = AF_INET;
  else if (inet_pton(AF_INET6, buf, &in6->sin6_addr) == 1) in6->sin6_family = AF_INET6;
  else return 0;
  *out = ss;
  return 1;
}

static uint32_t v4(const struct sockaddr_storage *ss) {
  return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
}

static cb_status add(struct sockaddr_storage *out, size_t *n, const struct sockaddr_storage *a,
                     const char *spec, cb_error *err) {
  if (*n == CB_RUNNER_MAX_SOURCE_ADDRS)
    return cb_error_set(err, CB_ERR_INVALID,
                        "--source-addrs: more than %d addresses in '%.200s'",
                        CB_RUNNER_MAX_SOURCE_ADDRS, spec);
  if (out) out[*n] = *a;
  (*n)++;
  return CB_OK;
}

cb_status cb_runner_source_addrs_parse(const char *spec, struct sockaddr_storage *out, size_t *n,
                                       cb_error *err) {
  *n = 0;
  const char *s = spec;
  for (;;) {
    size_t len = strcspn(s, ",");
    const char *dash = memchr(s, '-', len);
    struct sockaddr_storage lo, hi;
    if (!parse_one(s, dash ? (size_t)(dash - s) : len, &lo) ||
        (dash && !parse_one(dash + 1, len - (size_t)(dash + 1 - s), &hi)))
      return cb_error_set(err, CB_ERR_INVALID,
                          "--source-addrs: '%.*s': expected an IP address or an IPv4 range "
                          "A-B (e.g. 127.0.0.2-127.0.0.9)",
                          (int)(len > 100 ? 100 : len), s);
    if (!dash) {
      if (add(out, n, &lo, spec, err) != CB_OK) return err->code;
    } else {
      if (lo.ss_family != AF_INET || hi.ss_family != AF_INET || v4(&lo) > v4(&hi))
        return cb_error_set(err, CB_ERR_INVALID,
                            "--source-addrs: '%.*s': a range is two IPv4 addresses, the "
                            "first not above the second",
                            (int)(len > 100 ? 100 : len), s);
      for (uint64_t a = v4(&lo); a <= v4(&hi); a++) {
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
        in4->sin_family = AF_INET;
        in4->sin_addr.s_addr = htonl((uint32_t)a);
        if (add(out, n, &ss, spec, err) != CB_OK) return err->code;
      }
    }
    if (!s[len]) break;
    s += len + 1;
  }
  return CB_OK;
}
