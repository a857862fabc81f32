/*
 * curl_api.h - libcurl's functions, as calibench calls them: cb__curl.easy_init() for
 * curl_easy_init(), and so on, after cb__curl_load() (lazylib.h: libcurl.so.4 is
 * opened by the first command that sends HTTP through it, not at every start). Each
 * pointer has the type of curl.h's own prototype, so a call is checked as a direct
 * call would be; only the gcc-only checks of curl_easy_setopt's value argument
 * (curl/typecheck-gcc.h, a macro on the function's name) no longer apply.
 */
#ifndef CB_UTIL_CURL_API_H
#define CB_UTIL_CURL_API_H

#include <curl/curl.h>

#include "calibench/error.h"

/* Every libcurl function calibench calls, without its curl_ prefix. */
#define CB__CURL_FUNCTIONS(X)                                                              \
  X(global_init) X(easy_init) X(easy_reset) X(easy_setopt) X(easy_perform) X(easy_getinfo) \
  X(easy_strerror) X(easy_cleanup) X(multi_init) X(multi_setopt) X(multi_add_handle)        \
  X(multi_remove_handle) X(multi_assign) X(multi_socket_action) X(multi_info_read)          \
  X(multi_cleanup) X(slist_append) X(slist_free_all)

typedef struct cb__curl_api {
#define CB__CURL_FIELD(f) __typeof__(curl_##f) *f;
  CB__CURL_FUNCTIONS(CB__CURL_FIELD)
#undef CB__CURL_FIELD
} cb__curl_api;

/* Filled by cb__curl_load; all NULL before. */
extern cb__curl_api cb__curl;

/* Opens libcurl once per process (thread-safe); every later call answers as the
 * first did. The error names the library and what it serves. */
cb_status cb__curl_load(cb_error *err);

#endif
