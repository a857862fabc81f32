/*
 * test_runner.c - the runner's failure paths, through both transports (calibench's
 * own HTTP/1.1 reader and libcurl): a refused connection, a server that accepts but
 * never answers (request timeout, and the drain deadline cutting requests as
 * "interrupted", also when the last request took the last slot of a closed loop; and
 * a body too large to leave at once) and the choice of client (a proxy in the
 * environment means libcurl). And receive times are the kernel's arrival times: a
 * client busy in a callback while tokens arrive still times them when they came. A
 * failure after the last send is still retried.
 * Every request must come back exactly once with its class; nothing may hang.
 */
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/clock.h"
#include "calibench/runner.h"
#include "runner/runner_internal.h"
#include "test_listen.h"

typedef struct source {
  uint64_t next, n;
  const char *body; /* NULL: a small one */
  size_t body_len;
  const char *const *headers; /* the class's own headers, or NULL */
  size_t n_headers;
} source;

static int next_item(void *ctx, cb_runner_item *out) {
  source *s = ctx;
  if (s->next == s->n) return 0;
  static const char body[] = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
  *out = (cb_runner_item){.index = s->next++, .body = s->body ? s->body : body,
                          .body_len = s->body ? s->body_len : sizeof body - 1,
                          .prompt_tokens = -1, .headers = s->headers, .n_headers = s->n_headers};
  return 1;
}

typedef struct sink {
  int n;
  int seen[8];
  char classes[8][32];
} sink;

static void on_record(void *ctx, cb_record *r) {
  sink *k = ctx;
  assert_true(r->index < 8);
  k->seen[r->index]++;
  snprintf(k->classes[r->index], sizeof k->classes[0], "%s", r->error_class);
  k->n++;
}

/* The defaults, aimed at url through libcurl (1) or calibench's own client (0). */
static cb_runner_params params_for(const char *url, int libcurl, int concurrency) {
  cb_runner_params p;
  cb_runner_default_params(&p);
  p.url = url;
  p.use_libcurl = libcurl;
  p.concurrency = concurrency;
  return p;
}

/* Which client serves: libcurl when asked, else calibench's own unless a proxy is set. */
static const char *want_client = NULL;

static void run_body(const char *url, int libcurl, double request_timeout, double drain, int n,
                     const char *body, size_t body_len, sink *k, cb_runner_stats *st) {
  cb_runner_params p = params_for(url, libcurl, 2);
  p.request_timeout_s = request_timeout;
  p.drain_timeout_s = drain;
  p.connect_timeout_s = 5;
  source s = {.n = (uint64_t)n, .body = body, .body_len = body_len};
  memset(k, 0, sizeof *k);
  cb_error err = {0};
  assert_int_equal(cb_runner_run(&p, next_item, &s, on_record, k, st, &err), CB_OK);
  assert_string_equal(st->http_client, want_client ? want_client : libcurl ? "libcurl" : "calibench");
  assert_int_equal(k->n, n);
  for (int i = 0; i < n; i++) assert_int_equal(k->seen[i], 1);
}

static void run(const char *url, int libcurl, double request_timeout, double drain, int n,
                sink *k, cb_runner_stats *st) {
  run_body(url, libcurl, request_timeout, drain, n, NULL, 0, k, st);
}

static void test_refused(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    sink k;
    cb_runner_stats st;
    run("http://127.0.0.1:1/v1/chat/completions", libcurl, 0, 5, 3, &k, &st);
    for (int i = 0; i < 3; i++) assert_string_equal(k.classes[i], "connect");
    assert_int_equal(st.failed, 3);
  }
  /* A proxy in the environment: libcurl serves (and fails to reach the proxy). */
  setenv("http_proxy", "http://127.0.0.1:1", 1);
  want_client = "libcurl";
  sink k;
  cb_runner_stats st;
  run("http://127.0.0.1:2/v1/chat/completions", 0, 0, 5, 1, &k, &st);
  assert_string_equal(k.classes[0], "connect");
  want_client = NULL;
  unsetenv("http_proxy");
}

static void test_timeout_and_drain(void **state) {
  (void)state;
  char url[80];
  int fd = test_listen_chat(16, url, sizeof url); /* nobody accepts: never answered */
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    sink k;
    cb_runner_stats st;
    run(url, libcurl, 0.2, 30, 4, &k, &st);
    for (int i = 0; i < 4; i++) assert_string_equal(k.classes[i], "timeout");
    /* No request timeout: the drain deadline after the last send cuts them. */
    run(url, libcurl, 0, 0.2, 2, &k, &st);
    for (int i = 0; i < 2; i++) assert_string_equal(k.classes[i], "interrupted");
    assert_int_equal(st.aborted, 2);
    /* A body larger than the socket buffers of a peer that never reads: the send
     * waits for room, and the timeout still ends it. */
    size_t big = (size_t)64 << 20;
    char *body = malloc(big);
    memset(body, ' ', big);
    run_body(url, libcurl, 0.3, 30, 1, body, big, &k, &st);
    assert_string_equal(k.classes[0], "timeout");
    free(body);
  }
  close(fd);
}

/* ---- receive times are arrival times ------------------------------------------- */

typedef struct slow_server {
  int listen_fd;
  uint64_t last_sent_ns; /* when the second response's last byte was written */
} slow_server;

static void read_request(int fd) {
  char buf[4096];
  size_t got = 0;
  for (;;) { /* the head, then the small body: enough to see "}" */
    ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
    if (n <= 0) return;
    got += (size_t)n;
    buf[got] = '\0';
    if (strstr(buf, "\r\n\r\n") && strchr(strstr(buf, "\r\n\r\n"), '}')) return;
  }
}

static void send_str(int fd, const char *s) {
  size_t n = strlen(s);
  assert_int_equal(write(fd, s, n), (ssize_t)n);
}

static const char HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                           "Transfer-Encoding: chunked\r\n\r\n";
static const char TOKEN[] = "39\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n\r\n";
static const char END[] = "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";

/* Request A gets its whole answer at once; request B's two tokens and end come over
 * the next 60 ms - while the client sits in A's record callback. */
static void *slow_server_main(void *arg) {
  slow_server *s = arg;
  int a = accept(s->listen_fd, NULL, NULL), b = accept(s->listen_fd, NULL, NULL);
  read_request(a);
  read_request(b);
  char all[512];
  snprintf(all, sizeof all, "%s%s%s", HEAD, TOKEN, END);
  send_str(a, all);
  struct timespec d = {0, 20 * 1000000};
  send_str(b, HEAD);
  nanosleep(&d, NULL);
  send_str(b, TOKEN);
  nanosleep(&d, NULL);
  send_str(b, TOKEN);
  nanosleep(&d, NULL);
  send_str(b, END);
  s->last_sent_ns = cb_clock_now_ns();
  struct timespec linger = {2, 0};
  nanosleep(&linger, NULL);
  close(a);
  close(b);
  return NULL;
}

typedef struct busy_sink {
  int n;
  uint64_t origin_guess;
  uint64_t busy_until_ns; /* monotonic, when the first callback returned */
  cb_record rec[2];
} busy_sink;

static void on_record_busy(void *ctx, cb_record *r) {
  busy_sink *k = ctx;
  assert_true(k->n < 2);
  k->rec[k->n] = *r; /* take ownership of the arrays */
  memset(r, 0, sizeof *r);
  if (k->n++ == 0) { /* a client busy for 1 s */
    struct timespec d = {1, 0};
    nanosleep(&d, NULL);
    k->busy_until_ns = cb_clock_now_ns();
  }
}

/* Run fn on a new listening socket in a thread; url says where to reach it. */
static pthread_t serve(slow_server *srv, void *(*fn)(void *), char *url, size_t url_size) {
  *srv = (slow_server){.listen_fd = test_listen_chat(16, url, url_size)};
  pthread_t th;
  pthread_create(&th, NULL, fn, srv);
  return th;
}

static void test_kernel_receive_times(void **state) {
  (void)state;
  slow_server srv;
  char url[80];
  pthread_t th = serve(&srv, slow_server_main, url, sizeof url);
  cb_runner_params p = params_for(url, 0, 2);
  source s = {.n = 2};
  busy_sink k = {0};
  cb_runner_stats st;
  cb_error err = {0};
  assert_int_equal(cb_runner_run(&p, next_item, &s, on_record_busy, &k, &st, &err), CB_OK);
  pthread_join(th, NULL);
  close(srv.listen_fd);
  assert_int_equal(k.n, 2);
  assert_true(st.reads > 0);
  /* The kernel turns stamping on shortly after the first socket asks (deferred work),
   * so A's immediate answer may come unstamped; B's read, a second later, may not:
   * the times below prove it was stamped. */
  assert_true(st.kernel_stamped_reads >= 1 && st.kernel_stamped_reads <= st.reads);
  /* B was read after the client's 1 s in A's callback, but its times are when its
   * bytes arrived: on loopback inside the server's last write. */
  const cb_record *b = &k.rec[1];
  assert_string_equal(b->error_class, "");
  assert_int_equal(b->n_chunks, 2);
  uint64_t last = st.origin_ns + b->chunk_ns[1];
  assert_true(last <= srv.last_sent_ns);
  assert_true(last + 300 * 1000000 >= srv.last_sent_ns); /* the thread may pause after its write */
  assert_true(last + 500 * 1000000 < k.busy_until_ns);
  /* Both tokens and the end waited in the socket and came in one read: they share
   * the stamp of its last segment (the end's), the most a read can tell. */
  assert_true(b->chunk_ns[0] <= b->chunk_ns[1]);
  for (int i = 0; i < 2; i++) cb_record_free(&k.rec[i]);
}

/* ---- a scripted server: answers and what it received ------------------------------- */

#define SCRIPT_MAX 8

/* Answers n requests in order with resp[i], on whichever connection each comes; closes
 * the connection after resp[i] when close_after[i]. Keeps each request's head and when
 * it arrived, and counts connections. */
typedef struct script {
  int listen_fd;
  int n;
  const char *resp[SCRIPT_MAX];
  int close_after[SCRIPT_MAX];
  char head[SCRIPT_MAX][4096];
  uint64_t at_ns[SCRIPT_MAX];
  int conns;
  int delay_ms; /* held before each answer (the runner's ticks come meanwhile) */
} script;

static void *script_main(void *arg) {
  script *s = arg;
  struct pollfd fds[1 + 8];
  char buf[8][4096];
  size_t got[8] = {0};
  int nfd = 1, answered = 0;
  fds[0] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
  while (answered < s->n) {
    if (poll(fds, (nfds_t)nfd, 10000) <= 0) break; /* the test fails on what is missing */
    if ((fds[0].revents & POLLIN) && nfd < 9) {
      fds[nfd] = (struct pollfd){.fd = accept(s->listen_fd, NULL, NULL), .events = POLLIN};
      got[nfd - 1] = 0;
      nfd++;
      s->conns++;
    }
    for (int i = 1; i < nfd && answered < s->n; i++) {
      if (!(fds[i].revents & (POLLIN | POLLHUP)) || fds[i].fd < 0) continue;
      char *b = buf[i - 1];
      ssize_t r = read(fds[i].fd, b + got[i - 1], sizeof buf[0] - 1 - got[i - 1]);
      if (r <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        continue;
      }
      got[i - 1] += (size_t)r;
      b[got[i - 1]] = '\0';
      char *end = strstr(b, "\r\n\r\n");
      if (!end || !strchr(end, '}')) continue; /* the head, then the small body */
      snprintf(s->head[answered], sizeof s->head[0], "%.*s", (int)(end - b), b);
      if (s->delay_ms) nanosleep(&(struct timespec){0, s->delay_ms * 1000000L}, NULL);
      s->at_ns[answered] = cb_clock_now_ns();
      send_str(fds[i].fd, s->resp[answered]);
      got[i - 1] = 0;
      if (s->close_after[answered]) {
        close(fds[i].fd);
        fds[i].fd = -1;
      }
      answered++;
    }
  }
  struct timespec linger = {0, 300 * 1000000};
  nanosleep(&linger, NULL);
  for (int i = 1; i < nfd; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  return NULL;
}

static pthread_t script_start(script *s, char *url, size_t url_size) {
  s->listen_fd = test_listen_chat(16, url, url_size);
  pthread_t th;
  pthread_create(&th, NULL, script_main, s);
  return th;
}

static char ok_stream[512];

static const char *ok_answer(void) {
  snprintf(ok_stream, sizeof ok_stream, "%s%s%s", HEAD, TOKEN, END);
  return ok_stream;
}

/* Lines of head whose name is `name` (case-insensitive). */
static int count_header(const char *head, const char *name) {
  int n = 0;
  size_t len = strlen(name);
  for (const char *l = head; l; l = strstr(l, "\r\n")) {
    if (l[0] == '\r') l += 2;
    if (!strncasecmp(l, name, len) && l[len] == ':') n++;
  }
  return n;
}

/* ---- one Authorization header ----------------------------------------------------- */

static void test_authorization(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    for (int given = 0; given <= 2; given++) { /* none; on every request; a class's own */
      script s = {.n = 1, .resp = {ok_answer()}, .close_after = {1}};
      char url[80];
      pthread_t th = script_start(&s, url, sizeof url);
      const char *headers[] = {"X-Tenant: a", "authorization: Bearer user-token"};
      cb_runner_params p = params_for(url, libcurl, 1);
      p.api_key = "sk-env-key";
      p.headers = headers;
      p.n_headers = given == 1 ? 2 : 1;
      const char *class_headers[] = {"Authorization: Bearer class-token"};
      source src = {.n = 1, .headers = given == 2 ? class_headers : NULL, .n_headers = given == 2};
      sink k = {0};
      cb_runner_stats st;
      cb_error err = {0};
      assert_int_equal(cb_runner_run(&p, next_item, &src, on_record, &k, &st, &err), CB_OK);
      pthread_join(th, NULL);
      close(s.listen_fd);
      assert_string_equal(k.classes[0], "");
      /* Exactly one, and the user's when given. */
      assert_int_equal(count_header(s.head[0], "authorization"), 1);
      assert_non_null(strstr(s.head[0], given == 2 ? "Bearer class-token"
                                        : given ? "Bearer user-token" : "Bearer sk-env-key"));
      if (given) assert_null(strstr(s.head[0], "sk-env-key"));
    }
  }
  assert_true(cb_runner_has_header((const char *[]){"AUTHORIZATION : x"}, 1, "Authorization"));
  assert_false(cb_runner_has_header((const char *[]){"Authorization-Extra: x"}, 1, "Authorization"));
}

/* ---- retries ----------------------------------------------------------------------- */

typedef struct keep_sink {
  int n;
  cb_record rec;
} keep_sink;

static void on_record_keep(void *ctx, cb_record *r) {
  keep_sink *k = ctx;
  assert_int_equal(k->n, 0);
  k->n++;
  k->rec = *r; /* take ownership of the arrays */
  cb_record_init(r);
}

/* One request against s, retries allowed; its record in *k. Returns the run's wall time. */
static double run_script(script *s, int libcurl, int retries, double drain, keep_sink *k,
                         cb_runner_stats *st) {
  char url[80];
  pthread_t th = script_start(s, url, sizeof url);
  cb_runner_params p = params_for(url, libcurl, 1);
  p.retries = retries;
  p.drain_timeout_s = drain;
  p.seed = 7;
  source src = {.n = 1};
  memset(k, 0, sizeof *k);
  cb_error err = {0};
  uint64_t t0 = cb_clock_now_ns();
  assert_int_equal(cb_runner_run(&p, next_item, &src, on_record_keep, k, st, &err), CB_OK);
  double took = (double)(cb_clock_now_ns() - t0) / 1e9;
  pthread_join(th, NULL);
  close(s->listen_fd);
  assert_int_equal(k->n, 1);
  return took;
}

static double gap_s(const script *s, int i) { return (double)(s->at_ns[i] - s->at_ns[i - 1]) / 1e9; }

/* The only request: a 503 after 100 ms (the runner's 20 ms tick has long seen that
 * nothing is left to send), then a streamed answer to the retry. */
static void test_retry_during_drain(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    script s = {.n = 2, .resp = {"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}",
                                 ok_answer()}};
    keep_sink k;
    cb_runner_stats st;
    run_script(&s, libcurl, 1, 30, &k, &st);
    assert_string_equal(k.rec.error_class, "");
    assert_int_equal(st.retried, 1);
    cb_record_free(&k.rec);
  }
}

/* A 429 with Retry-After, the connection closed under it: the retry waits what the
 * server asked, goes on a new connection, succeeds, and the record keeps the 429. */
static void test_retry_after(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    script s = {.n = 2, .close_after = {1, 1},
                .resp = {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\n"
                         "Content-Length: 2\r\n\r\n{}", ok_answer()}};
    keep_sink k;
    cb_runner_stats st;
    run_script(&s, libcurl, 2, 30, &k, &st);
    assert_string_equal(k.rec.error_class, "");
    assert_int_equal(k.rec.http_status, 200);
    assert_int_equal(k.rec.retries, 1);
    assert_int_equal(k.rec.n_attempts, 1);
    assert_int_equal(k.rec.attempts[0].http_status, 429);
    assert_string_equal(k.rec.attempts[0].error_class, "http_status");
    assert_int_equal(k.rec.attempts[0].wait_ns, UINT64_C(1000000000));
    assert_int_equal(s.conns, 2);
    assert_true(gap_s(&s, 1) >= 0.99 && gap_s(&s, 1) < 2.0);
    cb_record_free(&k.rec);
  }
}

/* Without Retry-After: a seeded, jittered backoff that doubles, each attempt's status
 * kept; and a keep-alive connection the server left open is still not reused. */
static void test_retry_backoff(void **state) {
  (void)state;
  static const char E503[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}";
  static const char E500[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\n{}";
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    script s = {.n = 3, .resp = {E503, E500, E503}};
    keep_sink k;
    cb_runner_stats st;
    run_script(&s, libcurl, 2, 30, &k, &st);
    /* Retries spent: the last failure is the record, the two before are attempts. */
    assert_string_equal(k.rec.error_class, "http_status");
    assert_int_equal(k.rec.http_status, 503);
    assert_int_equal(k.rec.retries, 2);
    assert_int_equal(k.rec.n_attempts, 2);
    assert_int_equal(k.rec.attempts[0].http_status, 503);
    assert_int_equal(k.rec.attempts[1].http_status, 500);
    assert_int_equal(s.conns, 3);
    /* Equal jitter: retry 1 waits 125-250 ms, retry 2 250-500 ms. */
    uint64_t w1 = k.rec.attempts[0].wait_ns, w2 = k.rec.attempts[1].wait_ns;
    assert_true(w1 >= 125000000 && w1 <= 250000000);
    assert_true(w2 >= 250000000 && w2 <= 500000000);
    assert_true(gap_s(&s, 1) >= (double)w1 / 1e9 && gap_s(&s, 1) < (double)w1 / 1e9 + 0.5);
    assert_true(gap_s(&s, 2) >= (double)w2 / 1e9 && gap_s(&s, 2) < (double)w2 / 1e9 + 0.5);
    cb_record_free(&k.rec);
  }
  /* The same seed, the same waits. */
  cb_rng a, b;
  cb_rng_init(&a, 7);
  cb_rng_init(&b, 7);
  for (int r = 1; r <= 12; r++) {
    uint64_t w = cb__runner_backoff_ns(&a, r);
    assert_int_equal(w, cb__runner_backoff_ns(&b, r));
    assert_true(w <= CB__RETRY_WAIT_MAX_NS);
  }
}

/* A Retry-After that would outlast the drain deadline: no retry, the 429 stands, and
 * the run ends on time instead of waiting. */
static void test_retry_after_past_deadline(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    script s = {.n = 1, .close_after = {1},
                .resp = {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\n"
                         "Content-Length: 2\r\n\r\n{}"}};
    keep_sink k;
    cb_runner_stats st;
    double took = run_script(&s, libcurl, 3, 1.0, &k, &st);
    assert_string_equal(k.rec.error_class, "http_status");
    assert_int_equal(k.rec.http_status, 429);
    assert_int_equal(k.rec.retries, 0);
    assert_true(took < 3.0);
    cb_record_free(&k.rec);
  }
}

/* A request waiting for its retry when the duration runs out: no retries after a stop,
 * so it ends then with its 429 (no attempt kept for a retry never made), and the run
 * does not sit out the wait or the drain timeout. */
static void test_retry_wait_cut_by_duration(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    script s = {.n = 1, .close_after = {1},
                .resp = {"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 20\r\n"
                         "Content-Length: 2\r\n\r\n{}"}};
    char url[80];
    pthread_t th = script_start(&s, url, sizeof url);
    cb_runner_params p = params_for(url, libcurl, 1);
    p.retries = 3;
    p.duration_s = 0.4;
    source src = {.n = 5};
    keep_sink k = {0};
    cb_runner_stats st;
    cb_error err = {0};
    uint64_t t0 = cb_clock_now_ns();
    assert_int_equal(cb_runner_run(&p, next_item, &src, on_record_keep, &k, &st, &err), CB_OK);
    double took = (double)(cb_clock_now_ns() - t0) / 1e9;
    pthread_join(th, NULL);
    close(s.listen_fd);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.rec.http_status, 429);
    assert_int_equal(k.rec.retries, 0);
    assert_int_equal(k.rec.n_attempts, 0);
    assert_int_equal(st.not_sent, 4);
    assert_true(took >= 0.39 && took < 3.0);
    cb_record_free(&k.rec);
  }
}

/* RFC 9110 §10.2.3: delay-seconds or an HTTP-date (the three forms of §5.6.7). */
static void test_retry_after_parse(void **state) {
  (void)state;
  uint64_t ns = 0;
  /* Sun, 06 Nov 1994 08:49:37 GMT is 784111777 s after the epoch. */
  uint64_t now = UINT64_C(784111777) * 1000000000 - UINT64_C(5000000000);
  assert_true(cb__runner_retry_after_ns("3", 1, now, &ns));
  assert_int_equal(ns, UINT64_C(3000000000));
  const char *dates[] = {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                         "Sun Nov  6 08:49:37 1994"};
  for (size_t i = 0; i < 3; i++) {
    ns = 0;
    assert_true(cb__runner_retry_after_ns(dates[i], strlen(dates[i]), now, &ns));
    assert_int_equal(ns, UINT64_C(5000000000));
  }
  /* A date already past: retry now. Capped at a minute, however far. */
  assert_true(cb__runner_retry_after_ns(dates[0], strlen(dates[0]), now + UINT64_C(9000000000), &ns));
  assert_int_equal(ns, 0);
  assert_true(cb__runner_retry_after_ns("86400", 5, now, &ns));
  assert_int_equal(ns, CB__RETRY_WAIT_MAX_NS);
  assert_true(cb__runner_retry_after_ns("99999999999999999999999", 23, now, &ns));
  assert_int_equal(ns, CB__RETRY_WAIT_MAX_NS);
  const char *bad[] = {"", "-1", "1.5", "soon", "3 s", "Sun, 06 Nov 1994 08:49:37"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(cb__runner_retry_after_ns(bad[i], strlen(bad[i]), now, &ns));
}

/* ---- a live source ------------------------------------------------------------------ */

/* Conversations of `turns` requests each: turn t of conversation c (index c*turns+t)
 * is ready only once the record of turn t-1 has come back; until then the source
 * waits (CB_RUNNER_SOURCE_WAIT). */
typedef struct live_src {
  int convs, turns;
  int given[4];    /* turns handed to the runner, per conversation */
  int answered[4]; /* records back, per conversation */
  int records;
  int given_total, max_unanswered; /* turns handed out, most handed out and not back */
} live_src;

static int live_next(void *ctx, cb_runner_item *out) {
  live_src *l = ctx;
  static const char body[] = "{\"model\":\"m\",\"messages\":[],\"stream\":true}";
  int open = 0;
  for (int c = 0; c < l->convs; c++) {
    if (l->given[c] == l->turns) continue;
    open = 1;
    if (l->answered[c] < l->given[c]) continue; /* its last turn is still in flight */
    *out = (cb_runner_item){.index = (uint64_t)(c * l->turns + l->given[c]++), .body = body,
                            .body_len = sizeof body - 1, .prompt_tokens = -1};
    if (++l->given_total - l->records > l->max_unanswered) l->max_unanswered = l->given_total - l->records;
    return 1;
  }
  return open ? CB_RUNNER_SOURCE_WAIT : 0;
}

static void on_live_record(void *ctx, cb_record *r) {
  live_src *l = ctx;
  int c = (int)r->index / l->turns, t = (int)r->index % l->turns;
  assert_string_equal(r->error_class, "");
  assert_int_equal(t, l->answered[c]); /* each turn once, in order */
  l->answered[c]++;
  l->records++;
}

/* Each turn is sent only after the answer before it, the run ends when every
 * conversation has, in a closed loop and an open one, through both clients. */
static void test_live_source(void **state) {
  (void)state;
  for (int libcurl = 0; libcurl <= 1; libcurl++) {
    for (int closed = 0; closed <= 1; closed++) {
      script s = {.n = 6, .delay_ms = 60};
      for (int i = 0; i < 6; i++) s.resp[i] = ok_answer();
      char url[80];
      pthread_t th = script_start(&s, url, sizeof url);
      cb_runner_params p = params_for(url, libcurl, closed ? 2 : 0);
      p.drain_timeout_s = 5;
      p.source_live = 1;
      live_src l = {.convs = 3, .turns = 2}; /* more conversations than slots */
      cb_runner_stats st;
      cb_error err = {0};
      assert_int_equal(cb_runner_run(&p, live_next, &l, on_live_record, &l, &st, &err), CB_OK);
      pthread_join(th, NULL);
      close(s.listen_fd);
      assert_int_equal(l.records, 6);
      assert_int_equal(st.sent, 6);
      assert_int_equal(st.not_sent, 0);
      /* A closed loop asks the source only for a request that can go out: never more
       * turns handed out and unanswered than the concurrency (ticks came while the
       * server held each answer). */
      if (closed) assert_int_equal(l.max_unanswered, 2);
      /* The server saw each conversation's turns in order. */
      int seen[3] = {0, 0, 0};
      for (int i = 0; i < 6; i++) {
        const char *id = strstr(s.head[i], "X-Request-Id: run-");
        assert_non_null(id);
        int idx = atoi(id + strlen("X-Request-Id: run-"));
        assert_int_equal(idx % l.turns, seen[idx / l.turns]++);
      }
    }
  }
  /* A source that waits with nothing in flight has nothing to wait for: the run ends. */
  cb_runner_params p = params_for("http://127.0.0.1:9/v1/chat/completions", 0, 1);
  live_src l = {.convs = 1, .turns = 1, .given = {0}, .answered = {-1}};
  cb_runner_stats st;
  cb_error err = {0};
  assert_int_equal(cb_runner_run(&p, live_next, &l, on_live_record, &l, &st, &err), CB_OK);
  assert_int_equal(st.sent, 0);
  assert_int_equal(l.records, 0);
}

/* ---- raw events for the caller ----------------------------------------------------- */

/* A caller that asks for the raw events (max_choice_events, probe perturb) gets the
 * first events with choices in the record, with the run's secrets redacted as in
 * the answer's text; without asking, none. Both HTTP clients. */
static void test_choice_events(void **state) {
  (void)state;
  static char stream[1024];
  const char *ev = "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"no, sk-SECRET-0451\"}}]}\n\n";
  snprintf(stream, sizeof stream, "%s%zx\r\n%s\r\n%s%s", HEAD, strlen(ev), ev, TOKEN, END);
  for (int libcurl = 0; libcurl <= 1; libcurl++)
    for (size_t keep = 0; keep <= 4096; keep += 4096) {
      script s = {.n = 1, .resp = {stream}, .close_after = {1}};
      char url[80];
      pthread_t th = script_start(&s, url, sizeof url);
      cb_runner_params p = params_for(url, libcurl, 1);
      p.api_key = "sk-SECRET-0451";
      p.max_choice_events = keep;
      source src = {.n = 1};
      keep_sink k;
      memset(&k, 0, sizeof k);
      cb_runner_stats st;
      cb_error err = {0};
      assert_int_equal(cb_runner_run(&p, next_item, &src, on_record_keep, &k, &st, &err), CB_OK);
      pthread_join(th, NULL);
      close(s.listen_fd);
      assert_int_equal(k.n, 1);
      if (!keep) {
        assert_null(k.rec.choice_events);
      } else {
        assert_non_null(k.rec.choice_events);
        assert_non_null(strstr(k.rec.choice_events, "\"refusal\":\"no, [REDACTED]\"}}]}\n"));
        assert_non_null(strstr(k.rec.choice_events, "\"content\":\"x\""));
        assert_null(strstr(k.rec.choice_events, "sk-SECRET"));
      }
      cb_record_free(&k.rec);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_timeout_and_drain),
      cmocka_unit_test(test_kernel_receive_times),
      cmocka_unit_test(test_retry_during_drain),
      cmocka_unit_test(test_authorization),
      cmocka_unit_test(test_choice_events),
      cmocka_unit_test(test_live_source),
      cmocka_unit_test(test_retry_after),
      cmocka_unit_test(test_retry_backoff),
      cmocka_unit_test(test_retry_after_past_deadline),
      cmocka_unit_test(test_retry_wait_cut_by_duration),
      cmocka_unit_test(test_retry_after_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
