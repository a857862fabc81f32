/*
 * curl_api.c - curl_api.h's table, filled from libcurl.so.4 (the soname of libcurl's
 * ABI 4, since 7.16: every Debian release's libcurl4 package).
 */
#include "util/curl_api.h"

#include <pthread.h>

#include "util/lazylib.h"

cb__curl_api cb__curl;

static const char *const names[] = {
#define CB__CURL_NAME(f) "curl_" #f,
    CB__CURL_FUNCTIONS(CB__CURL_NAME)
#undef CB__CURL_NAME
};
_Static_assert(sizeof cb__curl == sizeof names / sizeof names[0] * sizeof(void (*)(void)),
               "cb__curl_api holds one function pointer per name");

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cb_status loaded;
static cb_error load_err;

static void load(void) {
  loaded = cb__lazylib_open("libcurl.so.4",
                            "HTTP through libcurl (https:// and --libcurl loads, the target's "
                            "/models check, metric scrapes, embedding, judge and --notify POSTs)",
                            names, &cb__curl, sizeof names / sizeof names[0], &load_err);
}

cb_status cb__curl_load(cb_error *err) {
  pthread_once(&once, load);
  if (loaded != CB_OK && err) *err = load_err;
  return loaded;
}
