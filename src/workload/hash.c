/*
 * hash.c - XXH64, the workload's content and schedule hash.
 *
 * Implemented from Y. Collet's "xxHash fast digest algorithm" specification
 * (github.com/Cyan4973/xxHash, doc/xxhash_spec.md, XXH64 section): 64-bit output,
 * little-endian reads, streaming over any split of the input. Not cryptographic: it
 * tells runs of different workloads apart, it does not resist an adversary
 * (docs/internals/schedule.md). Checked against python3-xxhash in
 * tests/unit/test_workload_schedule.c.
 */
#include <string.h>

#include "workload_internal.h"

#define P1 UINT64_C(0x9E3779B185EBCA87)
#define P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define P3 UINT64_C(0x165667B19E3779F9)
#define P4 UINT64_C(0x85EBCA77C2B2AE63)
#define P5 UINT64_C(0x27D4EB2F165667C5)

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t read64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static uint32_t read32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t round64(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}

static uint64_t merge_round(uint64_t acc, uint64_t val) {
  acc ^= round64(0, val);
  return acc * P1 + P4;
}

void cb__xxh64_init(cb__xxh64_state *h, uint64_t seed) {
  memset(h, 0, sizeof *h);
  h->seed = seed;
  h->v[0] = seed + P1 + P2;
  h->v[1] = seed + P2;
  h->v[2] = seed;
  h->v[3] = seed - P1;
}

static void stripe(cb__xxh64_state *h, const unsigned char *p) {
  for (int i = 0; i < 4; i++) h->v[i] = round64(h->v[i], read64(p + 8 * i));
}

void cb__xxh64_update(cb__xxh64_state *h, const void *data, size_t len) {
  const unsigned char *p = data;
  h->total_len += len;
  if (h->buf_len + len < 32) {
    if (len) memcpy(h->buf + h->buf_len, p, len);
    h->buf_len += len;
    return;
  }
  if (h->buf_len) {
    size_t fill = 32 - h->buf_len;
    memcpy(h->buf + h->buf_len, p, fill);
    stripe(h, h->buf);
    p += fill;
    len -= fill;
    h->buf_len = 0;
  }
  while (len >= 32) {
    stripe(h, p);
    p += 32;
    len -= 32;
  }
  if (len) memcpy(h->buf, p, len);
  h->buf_len = len;
}

void cb__xxh64_u64(cb__xxh64_state *h, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  cb__xxh64_update(h, b, 8);
}

uint64_t cb__xxh64_digest(const cb__xxh64_state *h) {
  uint64_t acc;
  if (h->total_len >= 32) {
    acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) + rotl(h->v[3], 18);
    for (int i = 0; i < 4; i++) acc = merge_round(acc, h->v[i]);
  } else {
    acc = h->seed + P5;
  }
  acc += h->total_len;
  const unsigned char *p = h->buf;
  size_t n = h->buf_len;
  while (n >= 8) {
    acc ^= round64(0, read64(p));
    acc = rotl(acc, 27) * P1 + P4;
    p += 8;
    n -= 8;
  }
  if (n >= 4) {
    acc ^= (uint64_t)read32(p) * P1;
    acc = rotl(acc, 23) * P2 + P3;
    p += 4;
    n -= 4;
  }
  while (n > 0) {
    acc ^= (uint64_t)(*p) * P5;
    acc = rotl(acc, 11) * P1;
    p++;
    n--;
  }
  acc ^= acc >> 33;
  acc *= P2;
  acc ^= acc >> 29;
  acc *= P3;
  acc ^= acc >> 32;
  return acc;
}

uint64_t cb__xxh64(const void *data, size_t len, uint64_t seed) {
  cb__xxh64_state h;
  cb__xxh64_init(&h, seed);
  cb__xxh64_update(&h, data, len);
  return cb__xxh64_digest(&h);
}
