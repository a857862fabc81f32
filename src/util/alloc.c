/*
 * alloc.c - allocation wrappers implementing the abort-on-OOM policy of alloc.h.
 */
#define _DEFAULT_SOURCE /* explicit_bzero */
#include "calibench/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size) {
  fprintf(stderr, "calibench: out of memory (%zu bytes)\n", size);
  abort();
}

void *cb_malloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

void *cb_calloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) out_of_memory(count * size);
  return p;
}

void *cb_realloc(void *ptr, size_t size) {
  void *p = realloc(ptr, size ? size : 1);
  if (!p) out_of_memory(size);
  return p;
}

void *cb_reallocarray(void *ptr, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) out_of_memory(SIZE_MAX);
  return cb_realloc(ptr, count * size);
}

char *cb_strdup(const char *s) { return cb_strndup(s, strlen(s)); }

char *cb_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *p = cb_malloc(len + 1);
  memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

void cb_free(void *ptr) { free(ptr); }

void cb_wipe(void *ptr, size_t n) {
  if (ptr && n) explicit_bzero(ptr, n);
}
