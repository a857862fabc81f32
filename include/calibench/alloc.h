/*
 * alloc.h - the one allocation choke point.
 *
 * Out-of-memory policy: calibench does not try to continue without memory. These
 * wrappers print "calibench: out of memory (N bytes)" to stderr and abort(), so no
 * caller checks for NULL and no partial state is ever left half-built. Buffers fed
 * by the network have their own caps (a hostile peer gets an error, never all the
 * memory); this policy is for genuine exhaustion only.
 */
#ifndef CALIBENCH_ALLOC_H
#define CALIBENCH_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *cb_malloc(size_t size);
void *cb_calloc(size_t count, size_t size); /* zeroed; aborts on overflow too */
void *cb_realloc(void *ptr, size_t size);
/* realloc to count*size bytes, aborting on multiplication overflow. */
void *cb_reallocarray(void *ptr, size_t count, size_t size);
char *cb_strdup(const char *s);
char *cb_strndup(const char *s, size_t n);
void cb_free(void *ptr);
/* Zero n bytes so that the compiler cannot drop it as a dead store before a free
 * (explicit_bzero): for copies of secrets (API keys) before their memory is given back. */
void cb_wipe(void *ptr, size_t n);

#ifdef __cplusplus
}
#endif
#endif
