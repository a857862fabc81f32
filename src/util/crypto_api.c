/*
 * crypto_api.c - crypto_api.h's table, filled from libcrypto.so.3 (the soname of
 * OpenSSL 3's ABI: Debian 12's libssl3 package).
 */
#include "util/crypto_api.h"

#include "util/lazylib.h"

cb__crypto_api cb__crypto;

static const char *const names[] = {
#define CB__CRYPTO_NAME(f) #f,
    CB__CRYPTO_FUNCTIONS(CB__CRYPTO_NAME)
#undef CB__CRYPTO_NAME
};
_Static_assert(sizeof cb__crypto == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__crypto_api holds one function pointer per name");

static cb__lazylib lib = {
    .soname = "libcrypto.so.3",
    .needed_for = "the SHA-256 fingerprints of a run's dataset and behaviour files",
    .names = names, .fns = &cb__crypto, .n = sizeof names / sizeof names[0],
    .lock = PTHREAD_MUTEX_INITIALIZER};

cb_status cb__crypto_load(cb_error *err) { return cb__lazylib_load(&lib, err); }
