/*
 * word_hash.h - hashing and comparing a word (a token's bytes) for the vocabularies
 * (ngram.c's, BLEU's and chrF++'s; rouge_tokenize.c's). Every byte of s[0..n) is read
 * by in-bounds loads, whole words where they fit: a word of 1-16 bytes (nearly all)
 * takes two loads, not a loop over its bytes. The loads of the tail overlap, which
 * keeps the hash a function of the text (equal texts hash alike); that is all it
 * needs, since a hit is still compared in full.
 */
#ifndef CALIBENCH_EVAL_WORD_HASH_H
#define CALIBENCH_EVAL_WORD_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t cb__eval_load64(const char *s) {
  uint64_t w;
  memcpy(&w, s, 8);
  return w;
}

static inline uint64_t cb__eval_load32(const char *s) {
  uint32_t w;
  memcpy(&w, s, 4);
  return w;
}

/* The hash, and in *last the eight bytes it takes in last: for a word of up to 8
 * bytes these hold all of it (given n, equal *last means equal words), for a longer
 * one its last eight bytes. For a word of 9-16 bytes, given n and *last the hash is a
 * bijection of its first eight bytes (xor, multiplication by an odd constant and
 * h ^= h >> 32 are each invertible on 64 bits), so equal n, *last and hash mean equal
 * words: rouge_tokenize.c's vocabulary relies on it. */
static inline uint64_t cb__eval_word_hash_last_plain(const char *s, size_t n,
                                                     uint64_t *last) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w = 0;
  if (n >= 8) {
    for (; n > 8; s += 8, n -= 8) {
      h = (h ^ cb__eval_load64(s)) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    w = cb__eval_load64(s + n - 8); /* the last eight bytes */
  } else if (n >= 4) {
    w = cb__eval_load32(s) | cb__eval_load32(s + n - 4) << 32;
  } else if (n) {
    w = (uint64_t)(unsigned char)s[0] | (uint64_t)(unsigned char)s[n / 2] << 8 |
        (uint64_t)(unsigned char)s[n - 1] << 16;
  }
  *last = w;
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 32;
  return h;
}

/* cb__eval_word_hash_last_plain's hash and *last (equal on a little-endian machine,
 * which test_word_hash_same checks), with no branch on a length of 4-16 bytes: there it
 * reads four 4-byte words at offsets chosen by selects, where the plain form branches
 * three ways and loops; the length of the next word is random, so those branches are
 * mispredicted often, which costs more than the hash itself. Every vocabulary hashes
 * with this one. */
static inline __attribute__((always_inline)) uint64_t cb__eval_word_hash_last(const char *s,
                                                                              size_t n,
                                                                              uint64_t *last) {
  if (n - 4 > 12) return cb__eval_word_hash_last_plain(s, n, last); /* 1-3 or over 16 bytes */
  /* selects by masks (gcc makes branches of the conditional operator here) */
  size_t wide = 0 - (size_t)(n >= 8), o1 = n - 4 - ((n - 8) & wide), o2 = (n - 8) & wide;
  /* 8-16 bytes: the first eight and the last eight; 4-7: the first four and the last
   * four, twice */
  uint64_t head = cb__eval_load32(s) | cb__eval_load32(s + o1) << 32;
  uint64_t w = cb__eval_load32(s + o2) | cb__eval_load32(s + n - 4) << 32;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n, m = (h ^ head) * 0xFF51AFD7ED558CCDull;
  m ^= m >> 32;
  uint64_t more = 0 - (uint64_t)(n > 8); /* the first eight mixed in only when more follow */
  h = (m & more) | (h & ~more);
  *last = w;
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 32;
  return h;
}

static inline uint64_t cb__eval_word_hash(const char *s, size_t n) {
  uint64_t last;
  return cb__eval_word_hash_last(s, n, &last);
}

/* a[0..n) == b[0..n), by the same overlapping loads. */
static inline int cb__eval_word_eq(const char *a, const char *b, size_t n) {
  if (n > 16) return memcmp(a, b, n) == 0;
  if (n >= 8)
    return cb__eval_load64(a) == cb__eval_load64(b) && cb__eval_load64(a + n - 8) == cb__eval_load64(b + n - 8);
  if (n >= 4)
    return cb__eval_load32(a) == cb__eval_load32(b) && cb__eval_load32(a + n - 4) == cb__eval_load32(b + n - 4);
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

#endif
