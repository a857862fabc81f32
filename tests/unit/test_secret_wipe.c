/*
 * test_secret_wipe.c - copies of the API key are wiped before their memory is given
 * back: a cb_buf marked secret when it grows (the old block), resets, consumes and is
 * freed, and a whole run through both HTTP clients, whose per-request headers, request
 * heads and Authorization lines hold the key.
 *
 * How: this executable is linked with -Wl,--wrap=free (tests/CMakeLists.txt), so every
 * free() of calibench's code (cb_free) comes here first, and a block that still holds
 * the key's marker is counted. libcurl frees its own copies (its header lists, its
 * send buffer) with its own free, which this does not see: the runner wipes the header
 * lists it hands to libcurl (curl.c), and what libcurl copies is libcurl's business -
 * but left as it is, it comes back in blocks calibench allocates later and would be
 * counted against them, so here libcurl's memory functions wipe what libcurl frees.
 */
#define _GNU_SOURCE /* memmem, malloc_usable_size */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/runner.h"
#include "test_listen.h"

#define MARK "sk-WIPE-"

static int leaked; /* freed blocks that still held MARK */

void __real_free(void *p);
void __wrap_free(void *p);
void __wrap_free(void *p) {
  if (p && memmem(p, malloc_usable_size(p), MARK, sizeof MARK - 1)) leaked++;
  __real_free(p);
}

/* libcurl's memory functions: its own copies of the key wiped when it frees them. */
static void curl_free_wiped(void *p) {
  if (p) cb_wipe(p, malloc_usable_size(p));
  __real_free(p);
}
static void *curl_realloc_wiped(void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (q && p) {
    size_t old = malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    curl_free_wiped(p);
  }
  return q;
}
static char *curl_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  return d ? memcpy(d, s, n) : NULL;
}

/* ---- cb_buf ---------------------------------------------------------------------- */

static void test_buf(void **state) {
  (void)state;
  for (int secret = 0; secret <= 1; secret++) {
    leaked = 0;
    cb_buf b;
    cb_buf_init(&b, 0);
    b.secret = secret;
    cb_buf_append_str(&b, "Authorization: Bearer " MARK "0123456789\r\n");
    for (int i = 0; i < 200; i++) cb_buf_appendf(&b, "X-Pad-%d: %0100d\r\n", i, i); /* grows */
    cb_buf_free(&b);
    /* A plain buffer gives the key back as it is: the count is what it measures. */
    if (secret) assert_int_equal(leaked, 0);
    else assert_true(leaked > 0);
  }
  /* reset and consume leave no copy in the storage they keep */
  cb_buf b;
  cb_buf_init(&b, 0);
  b.secret = 1;
  cb_buf_append_str(&b, MARK "abc tail");
  cb_buf_consume(&b, 4);
  assert_null(memmem(b.data, b.alloc, "tail", 4) == b.data + b.len - 4 ? NULL : "moved copy");
  assert_null(memmem(b.data + b.len + 1, b.alloc - b.len - 1, "tail", 4));
  cb_buf_reset(&b);
  assert_null(memmem(b.data, b.alloc, "abc", 3));
  cb_buf_free(&b);
}

/* ---- a run ------------------------------------------------------------------------ */

/* Answers every request on every connection with one SSE token, until told to stop. */
typedef struct server {
  int fd;
  int answered;
} server;

static void *server_main(void *arg) {
  server *s = arg;
  static const char answer[] =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 71\r\n\r\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n";
  for (;;) {
    int c = accept(s->fd, NULL, NULL);
    if (c < 0) return NULL;
    char buf[8192];
    size_t got = 0;
    for (;;) {
      ssize_t n = read(c, buf + got, sizeof buf - 1 - got);
      if (n <= 0) break;
      got += (size_t)n;
      buf[got] = '\0';
      char *end = strstr(buf, "\r\n\r\n");
      if (!end || !strchr(end, '}')) continue;
      if (write(c, answer, sizeof answer - 1) != (ssize_t)(sizeof answer - 1)) break;
      s->answered++;
      got = 0;
    }
    close(c);
  }
}

static int next_item(void *ctx, cb_runner_item *out) {
  uint64_t *left = ctx;
  if (!*left) return 0;
  static const char body[] = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
  *out = (cb_runner_item){.index = 10 - *left, .body = body, .body_len = sizeof body - 1,
                          .prompt_tokens = -1};
  (*left)--;
  return 1;
}

static void on_record(void *ctx, cb_record *r) {
  int *failed = ctx;
  if (r->error_class[0]) (*failed)++;
}

static void test_run(void **state) {
  (void)state;
  char url[80];
  int fd = test_listen_chat(16, url, sizeof url);
  server srv = {.fd = fd};
  pthread_t th;
  pthread_create(&th, NULL, server_main, &srv);
  /* Keys of many lengths, so that the request headers and the request head grow past
   * their allocation both before and after the key is in them. */
  for (int libcurl = 0; libcurl <= 1; libcurl++)
    for (size_t len = 8; len < 400; len += 23) {
      char key[512];
      snprintf(key, sizeof key, "%s%0*d", MARK, (int)len, 7);
      const char *headers[] = {"X-Tenant: a"};
      cb_runner_params p;
      cb_runner_default_params(&p);
      p.url = url;
      p.use_libcurl = libcurl;
      p.concurrency = 1; /* the server answers one connection at a time */
      p.connect_timeout_s = 5;
      p.request_timeout_s = 10;
      p.api_key = key;
      p.headers = headers;
      p.n_headers = 1;
      uint64_t left = 10;
      int failed = 0;
      cb_runner_stats st;
      cb_error err = {0};
      leaked = 0;
      assert_int_equal(cb_runner_run(&p, next_item, &left, on_record, &failed, &st, &err), CB_OK);
      assert_int_equal(failed, 0);
      if (leaked)
        fail_msg("%s, key of %zu bytes: %d freed blocks still held the key", st.http_client,
                 strlen(key), leaked);
    }
  shutdown(fd, SHUT_RDWR); /* accept() returns: the server thread ends */
  pthread_join(th, NULL);
  close(fd);
  assert_int_equal(srv.answered, 2 * 18 * 10);
}

int main(void) {
  /* Before the runner's curl_global_init, which then keeps these. */
  if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, malloc, curl_free_wiped, curl_realloc_wiped,
                           curl_strdup, calloc) != CURLE_OK)
    return 1;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_buf), cmocka_unit_test(test_run)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
