/*
 * crypto_api.h - OpenSSL libcrypto's functions, as calibench calls them: cb__crypto.
 * EVP_DigestInit_ex() for EVP_DigestInit_ex(), and so on, after cb__crypto_load()
 * (lazylib.h: libcrypto.so.3 is opened by the first SHA-256 of a file, the manifest's
 * dataset and behaviour fingerprints, not at every start: loading and relocating it
 * cost every command ~1.5 ms before main). Each pointer has the type of evp.h's own
 * prototype, so a call is checked as a direct call would be.
 */
#ifndef CB_UTIL_CRYPTO_API_H
#define CB_UTIL_CRYPTO_API_H

#include <openssl/evp.h>

#include "calibench/error.h"

/* Every libcrypto function calibench calls. */
#define CB__CRYPTO_FUNCTIONS(X)                                                            \
  X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_sha256) X(EVP_DigestInit_ex)                  \
  X(EVP_DigestUpdate) X(EVP_DigestFinal_ex)

typedef struct cb__crypto_api {
#define CB__CRYPTO_FIELD(f) __typeof__(f) *f;
  CB__CRYPTO_FUNCTIONS(CB__CRYPTO_FIELD)
#undef CB__CRYPTO_FIELD
} cb__crypto_api;

/* Filled by cb__crypto_load; all NULL before. */
extern cb__crypto_api cb__crypto;

/* Opens libcrypto once per process (thread-safe); every later call answers as the
 * first did. The error names the library and what it serves. */
cb_status cb__crypto_load(cb_error *err);

#endif
