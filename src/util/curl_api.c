/*
 * curl_api.c - curl_api.h's table, filled from libcurl.so.4 (the soname of libcurl's
 * ABI 4, since 7.16: every Debian release's libcurl4 package).
 */
#include "util/curl_api.h"

#include "util/lazylib.h"

cb__curl_api cb__curl;

static const char *const names[] = {
#define CB__CURL_NAME(f) "curl_" #f,
    CB__CURL_FUNCTIONS(CB__CURL_NAME)
#undef CB__CURL_NAME
};
_Static_assert(sizeof cb__curl == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__curl_api holds one function pointer per name");

static cb__lazylib lib = {
    .soname = "libcurl.so.4",
    .needed_for = "HTTP through libcurl (https:// and --libcurl loads, the target's "
                  "/models check, metric scrapes, embedding, judge and --notify POSTs)",
    .names = names, .fns = &cb__curl, .n = sizeof names / sizeof names[0],
    .lock = PTHREAD_MUTEX_INITIALIZER};

cb_status cb__curl_load(cb_error *err) { return cb__lazylib_load(&lib, err); }
