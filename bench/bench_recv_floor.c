/*
 * bench_recv_floor.c - the floor under the load generator's receive path: the least
 * client CPU time per streamed token that one core spends taking OpenAI-style SSE
 * streams from `calibench sim serve` off loopback TCP, with no SSE or JSON parsing
 * beyond counting events. Any real client (calibench run's runner included) pays at
 * least this much per token, so its own CPU per token is read against this figure;
 * and the two modes say whether io_uring lowers the floor below epoll. On loopback
 * the figure includes one thing a remote client would not pay: each recv() sends an
 * ACK, and the kernel processes it for the server's socket in the reader's own
 * context (about a third of the CPU per token on the 2-vCPU test VM, perf).
 *
 * Opens STREAMS keep-alive TCP connections (TCP_NODELAY) and sends on each, one
 * after another, REQUESTS_PER_STREAM streaming POST /v1/completions requests of
 * MAX_TOKENS tokens (ignore_eos). `sim serve` answers with chunked transfer coding,
 * one chunk per SSE event; a response ends with the last chunk "0\r\n\r\n", which
 * the server writes together with "data: [DONE]" and after which nothing more comes
 * until the next request, so a response is complete when the bytes received so far
 * on its connection end in "\r\n0\r\n\r\n". Tokens are counted as "data: {" events
 * (memmem over each buffer, plus the seam between two buffers) less one per
 * response (the finish event, whose text is empty).
 *
 * MODE epoll: level-triggered epoll, one recv() into a 64 KiB buffer per ready
 *   socket per wakeup and clock_gettime(CLOCK_MONOTONIC) after each recv, as the
 *   real client does; requests go out with send().
 * MODE uring[+OPT...]: liburing. By default one multishot recv per connection,
 *   armed once for the whole run, drawing from a provided buffer ring (re-armed
 *   only if the kernel ends it); completions reaped in batches
 *   (io_uring_peek_batch_cqe, io_uring_submit_and_wait when none are ready) with
 *   one timestamp per batch; requests go out as send SQEs. OPT, joined with '+':
 *     coop      IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG
 *     single    IORING_SETUP_SINGLE_ISSUER
 *     defer     IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
 *     oneshot   plain recv SQEs into a per-connection 64 KiB buffer, re-armed per CQE
 *     regfd     io_uring_register_ring_fd (no fd lookup per io_uring_enter)
 *     wait=N    wait for N completions (or 1 ms) instead of 1: fewer wakeups, but
 *               timestamps up to 1 ms late, so not what a measuring client may do
 *     bufs=N    provided buffers in the ring, a power of two [2 x STREAMS, >= 256]
 *     bufsz=N   bytes per provided buffer [4096]
 *   Only built when CMake finds liburing (CB_HAVE_LIBURING); otherwise uring
 *   modes exit with an error.
 *
 * CPU is getrusage(RUSAGE_SELF) over the receive phase: from the first request
 * sent to the last response complete (connecting is outside it). Pin it:
 *   taskset -c 1 calibench sim serve --port 0 --quiet --max-num-seqs 256 &
 *   taskset -c 0 bench_recv_floor 127.0.0.1:PORT 256 4 100 epoll
 *
 * usage: bench_recv_floor HOST:PORT STREAMS REQUESTS_PER_STREAM MAX_TOKENS MODE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef CB_HAVE_LIBURING
#include <liburing.h>
#include <sys/mman.h>
#endif

#define RECV_BUF 65536
#define PAT_LEN 7
static const char EVENT_PAT[PAT_LEN + 1] = "data: {";
static const char END_PAT[PAT_LEN + 1] = "\r\n0\r\n\r\n";

typedef struct conn {
  int fd;
  int left;       /* requests still to send after the one in flight */
  int at_start;   /* the next byte received starts a response */
  int tail_len;   /* last bytes received on this connection, up to PAT_LEN */
  char tail[PAT_LEN];
  uint64_t last_ns; /* when data last arrived (what a real client would record) */
  char *buf;        /* uring+oneshot only */
} conn;

static struct {
  uint64_t bytes, events, responses, recv_calls, waits, sends, cqes, rearms, batches;
  int done; /* streams with all their responses complete */
} st;

static conn *conns;
static int n_streams;
static char request[1024];
static size_t request_len;

static void die(const char *what) {
  perror(what);
  exit(1);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "bench_recv_floor: no completion within the time limit\n";
  ssize_t r = write(2, msg, sizeof msg - 1);
  (void)r;
  _exit(1);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double tv_us(struct timeval tv) { return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec; }

static uint64_t count_events(const char *p, size_t n) {
  uint64_t k = 0;
  const char *end = p + n, *q = p;
  while ((q = memmem(q, (size_t)(end - q), EVENT_PAT, PAT_LEN))) {
    k++;
    q += PAT_LEN;
  }
  return k;
}

/* Account n received bytes; returns 1 when they complete the connection's response. */
static int consume(conn *c, const char *p, size_t n) {
  st.bytes += n;
  if (c->at_start) {
    size_t m = n < 13 ? n : 13;
    if (memcmp(p, "HTTP/1.1 200 ", m)) {
      fprintf(stderr, "bench_recv_floor: unexpected response: %.*s\n", (int)(n < 80 ? n : 80), p);
      exit(1);
    }
    c->at_start = 0;
  }
  /* An event split between the previous buffer and this one: the window is at most
   * 6 + 6 bytes, so any match in it straddles the seam. */
  if (c->tail_len) {
    char seam[2 * (PAT_LEN - 1)];
    int a = c->tail_len < PAT_LEN - 1 ? c->tail_len : PAT_LEN - 1;
    size_t b = n < PAT_LEN - 1 ? n : PAT_LEN - 1;
    memcpy(seam, c->tail + c->tail_len - a, (size_t)a);
    memcpy(seam + a, p, b);
    st.events += count_events(seam, (size_t)a + b);
  }
  st.events += count_events(p, n);
  if (n >= PAT_LEN) {
    memcpy(c->tail, p + n - PAT_LEN, PAT_LEN);
    c->tail_len = PAT_LEN;
  } else {
    int keep = c->tail_len + (int)n > PAT_LEN ? PAT_LEN - (int)n : c->tail_len;
    memmove(c->tail, c->tail + c->tail_len - keep, (size_t)keep);
    memcpy(c->tail + keep, p, n);
    c->tail_len = keep + (int)n;
  }
  if (c->tail_len == PAT_LEN && !memcmp(c->tail, END_PAT, PAT_LEN)) {
    st.responses++;
    c->tail_len = 0;
    c->at_start = 1;
    return 1;
  }
  return 0;
}

static void send_request(conn *c) {
  ssize_t r = send(c->fd, request, request_len, MSG_NOSIGNAL);
  if (r != (ssize_t)request_len) die("send");
  st.sends++;
}

static void run_epoll(void) {
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  for (int i = 0; i < n_streams; i++) {
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &e)) die("epoll_ctl");
  }
  struct epoll_event *ev = calloc((unsigned)n_streams, sizeof *ev);
  static char buf[RECV_BUF];
  if (!ev) die("calloc");
  for (int i = 0; i < n_streams; i++) send_request(&conns[i]);
  while (st.done < n_streams) {
    int n = epoll_wait(ep, ev, n_streams, -1);
    st.waits++;
    if (n < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < n; i++) {
      conn *c = &conns[ev[i].data.u32];
      ssize_t r = recv(c->fd, buf, sizeof buf, 0);
      st.recv_calls++;
      c->last_ns = now_ns();
      if (r > 0) {
        if (consume(c, buf, (size_t)r)) {
          if (c->left > 0) {
            c->left--;
            send_request(c);
          } else {
            st.done++;
          }
        }
      } else if (r == 0) {
        fprintf(stderr, "bench_recv_floor: server closed a connection\n");
        exit(1);
      } else if (errno != EAGAIN && errno != EINTR) {
        die("recv");
      }
    }
  }
  free(ev);
  close(ep);
}

#ifdef CB_HAVE_LIBURING
#define BGID 0
#define CQE_BATCH 4096
#define OP_RECV 0u
#define OP_SEND 1u

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *br_bufs;
static int multishot = 1;
/* Provided buffers: count (0: the power of two >= 2 x STREAMS, at least 256) and bytes
 * each. Keep the pool small: every buffer's pages are touched once more, at a cost,
 * when first used in the measured phase (4096 x 16 KiB added ~10 ms on the test VM). */
static unsigned br_entries = 0, br_buf = 4096;

static struct io_uring_sqe *get_sqe(void) {
  struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
  if (!sqe) { /* SQ full: hand what is queued to the kernel */
    int r = io_uring_submit(&ring);
    st.waits++;
    if (r < 0) {
      fprintf(stderr, "io_uring_submit: %s\n", strerror(-r));
      exit(1);
    }
    sqe = io_uring_get_sqe(&ring);
    if (!sqe) {
      fprintf(stderr, "bench_recv_floor: no SQE\n");
      exit(1);
    }
  }
  return sqe;
}

static void arm_recv(int i) {
  struct io_uring_sqe *sqe = get_sqe();
  if (multishot) {
    io_uring_prep_recv_multishot(sqe, conns[i].fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
  } else {
    io_uring_prep_recv(sqe, conns[i].fd, conns[i].buf, RECV_BUF, 0);
  }
  io_uring_sqe_set_data64(sqe, (uint64_t)i << 1 | OP_RECV);
}

static void queue_send(int i) {
  struct io_uring_sqe *sqe = get_sqe();
  io_uring_prep_send(sqe, conns[i].fd, request, request_len, MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, (uint64_t)i << 1 | OP_SEND);
}

static unsigned wait_nr = 1;

/* Ring, buffers and the first SQEs (queued, not submitted): outside the measured phase. */
static int setup_uring(const char *opts) {
  unsigned flags = 0;
  int regfd = 0;
  char copy[256];
  snprintf(copy, sizeof copy, "%s", opts);
  char *save = NULL;
  for (char *o = strtok_r(copy, "+", &save); o; o = strtok_r(NULL, "+", &save)) {
    if (!strcmp(o, "coop")) flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    else if (!strcmp(o, "single")) flags |= IORING_SETUP_SINGLE_ISSUER;
    else if (!strcmp(o, "defer")) flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    else if (!strcmp(o, "oneshot")) multishot = 0;
    else if (!strcmp(o, "regfd")) regfd = 1;
    else if (!strncmp(o, "wait=", 5) && atoi(o + 5) > 0) wait_nr = (unsigned)atoi(o + 5);
    else if (!strncmp(o, "bufs=", 5) && atoi(o + 5) > 0 && atoi(o + 5) <= 32768 &&
             !(atoi(o + 5) & (atoi(o + 5) - 1)))
      br_entries = (unsigned)atoi(o + 5);
    else if (!strncmp(o, "bufsz=", 6) && atoi(o + 6) >= 256) br_buf = (unsigned)atoi(o + 6);
    else {
      fprintf(stderr, "bench_recv_floor: unknown uring option '%s'\n", o);
      return 2;
    }
  }
  unsigned sq = 256;
  while (sq < 2u * (unsigned)n_streams && sq < 32768) sq <<= 1;
  if (!br_entries) br_entries = sq;
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  p.flags = flags | IORING_SETUP_CQSIZE;
  p.cq_entries = 4 * sq;
  int r = io_uring_queue_init_params(sq, &ring, &p);
  if (r < 0) {
    fprintf(stderr, "io_uring_queue_init_params(flags=0x%x): %s\n", p.flags, strerror(-r));
    return 1;
  }
  if (regfd && (r = io_uring_register_ring_fd(&ring)) != 1) {
    fprintf(stderr, "io_uring_register_ring_fd: %s\n", strerror(r < 0 ? -r : EINVAL));
    return 1;
  }
  unsigned mask = (unsigned)io_uring_buf_ring_mask(br_entries);
  if (multishot) {
    size_t ring_bytes = (size_t)br_entries * sizeof(struct io_uring_buf);
    void *mem = mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    br_bufs = malloc((size_t)br_entries * br_buf);
    if (mem == MAP_FAILED || !br_bufs) die("buffer ring");
    memset(br_bufs, 1, (size_t)br_entries * br_buf); /* fault it in now, not while measuring */
    br = mem;
    io_uring_buf_ring_init(br);
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (uint64_t)(uintptr_t)br;
    reg.ring_entries = br_entries;
    reg.bgid = BGID;
    r = io_uring_register_buf_ring(&ring, &reg, 0);
    if (r) {
      fprintf(stderr, "bench_recv_floor: no provided buffer ring (%s); plain recv instead\n",
              strerror(-r));
      multishot = 0;
    } else {
      for (unsigned i = 0; i < br_entries; i++)
        io_uring_buf_ring_add(br, br_bufs + (size_t)i * br_buf, br_buf, (unsigned short)i,
                              (int)mask, (int)i);
      io_uring_buf_ring_advance(br, br_entries);
    }
  }
  if (!multishot)
    for (int i = 0; i < n_streams; i++) {
      if (!(conns[i].buf = malloc(RECV_BUF))) die("malloc");
      memset(conns[i].buf, 1, RECV_BUF);
    }
  for (int i = 0; i < n_streams; i++) {
    arm_recv(i);
    queue_send(i);
  }
  return 0;
}

static int run_uring(void) {
  int r;
  unsigned mask = (unsigned)io_uring_buf_ring_mask(br_entries);
  struct io_uring_cqe **cqes = calloc(CQE_BATCH, sizeof *cqes);
  if (!cqes) die("calloc");
  struct __kernel_timespec wait_ts = {.tv_sec = 0, .tv_nsec = 1000000};
  while (st.done < n_streams) {
    /* liburing enters the kernel itself here to run pending task work when the ring
     * says so (IORING_SETUP_TASKRUN_FLAG); count that enter too. */
    if (!io_uring_cq_ready(&ring) &&
        (IO_URING_READ_ONCE(*ring.sq.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)))
      st.waits++;
    unsigned n = io_uring_peek_batch_cqe(&ring, cqes, CQE_BATCH);
    if (!n) {
      struct io_uring_cqe *cqe;
      r = wait_nr > 1 ? io_uring_submit_and_wait_timeout(&ring, &cqe, wait_nr, &wait_ts, NULL)
                      : io_uring_submit_and_wait(&ring, 1);
      st.waits++;
      if (r < 0 && r != -EINTR && r != -ETIME) {
        fprintf(stderr, "io_uring_submit_and_wait: %s\n", strerror(-r));
        return 1;
      }
      continue;
    }
    uint64_t t = now_ns();
    st.batches++;
    int nbufs = 0;
    for (unsigned k = 0; k < n; k++) {
      struct io_uring_cqe *cqe = cqes[k];
      uint64_t ud = io_uring_cqe_get_data64(cqe);
      int i = (int)(ud >> 1);
      conn *c = &conns[i];
      st.cqes++;
      if ((ud & 1) == OP_SEND) {
        if (cqe->res != (int)request_len) {
          fprintf(stderr, "send: %s\n", cqe->res < 0 ? strerror(-cqe->res) : "short");
          return 1;
        }
        st.sends++;
        continue;
      }
      int more = multishot && (cqe->flags & IORING_CQE_F_MORE);
      if (cqe->res > 0) {
        char *data = c->buf;
        if (multishot) {
          unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
          data = br_bufs + (size_t)bid * br_buf;
        }
        st.recv_calls++;
        c->last_ns = t;
        int complete = consume(c, data, (size_t)cqe->res);
        if (multishot)
          io_uring_buf_ring_add(br, data, br_buf, (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT),
                                (int)mask, nbufs++);
        if (complete) {
          if (c->left > 0) {
            c->left--;
            queue_send(i);
          } else {
            st.done++;
          }
        }
      } else if (cqe->res == 0) {
        fprintf(stderr, "bench_recv_floor: server closed a connection\n");
        return 1;
      } else if (cqe->res != -ENOBUFS && cqe->res != -EINTR && cqe->res != -EAGAIN) {
        fprintf(stderr, "recv: %s\n", strerror(-cqe->res));
        return 1;
      }
      if (!more) {
        if (multishot) st.rearms++;
        arm_recv(i);
      }
    }
    if (nbufs) io_uring_buf_ring_advance(br, nbufs);
    io_uring_cq_advance(&ring, n);
    if (io_uring_sq_ready(&ring)) { /* sends and re-arms go out now, not at the next wait */
      io_uring_submit(&ring);
      st.waits++;
    }
  }
  free(cqes);
  io_uring_queue_exit(&ring);
  return 0;
}
#endif

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr,
            "usage: %s HOST:PORT STREAMS REQUESTS_PER_STREAM MAX_TOKENS MODE\n"
            "  MODE: epoll | uring[+coop][+single][+defer][+oneshot][+regfd][+wait=N][+bufs=N][+bufsz=N]\n",
            argv[0]);
    return 2;
  }
  const char *mode = argv[5];
  int uring = !strncmp(mode, "uring", 5) && (mode[5] == '\0' || mode[5] == '+');
  if (!uring && strcmp(mode, "epoll")) {
    fprintf(stderr, "bench_recv_floor: MODE must be epoll or uring[+OPT...]\n");
    return 2;
  }
#ifndef CB_HAVE_LIBURING
  if (uring) {
    fprintf(stderr, "bench_recv_floor: built without liburing, so MODE %s is not available "
                    "(install liburing-dev and reconfigure)\n", mode);
    return 2;
  }
#endif
  char host[256];
  snprintf(host, sizeof host, "%s", argv[1]);
  char *colon = strrchr(host, ':');
  n_streams = atoi(argv[2]);
  int per_stream = atoi(argv[3]), max_tokens = atoi(argv[4]);
  if (!colon || n_streams < 1 || per_stream < 1 || max_tokens < 1) {
    fprintf(stderr, "bench_recv_floor: bad arguments\n");
    return 2;
  }
  *colon = '\0';

  char prompt[512] = "";
  for (int i = 0; i < 32; i++) strcat(prompt, i ? " hello world" : "hello world");
  char body[768];
  int blen = snprintf(body, sizeof body,
                      "{\"model\":\"llama-3.1-8b\",\"prompt\":\"%s\",\"max_tokens\":%d,"
                      "\"ignore_eos\":true,\"stream\":true}",
                      prompt, max_tokens);
  request_len = (size_t)snprintf(request, sizeof request,
                                 "POST /v1/completions HTTP/1.1\r\nHost: %s\r\n"
                                 "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
                                 argv[1], blen, body);

  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
  int gai = getaddrinfo(host, colon + 1, &hints, &ai);
  if (gai) {
    fprintf(stderr, "bench_recv_floor: %s: %s\n", argv[1], gai_strerror(gai));
    return 1;
  }
  conns = calloc((size_t)n_streams, sizeof *conns);
  if (!conns) die("calloc");
  for (int i = 0; i < n_streams; i++) {
    conn *c = &conns[i];
    c->fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (c->fd < 0) die("socket");
    if (connect(c->fd, ai->ai_addr, ai->ai_addrlen)) die("connect");
    int one = 1;
    if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one)) die("TCP_NODELAY");
    if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK)) die("O_NONBLOCK");
    c->left = per_stream - 1;
    c->at_start = 1;
  }
  freeaddrinfo(ai);
  signal(SIGALRM, on_alarm);
  alarm(600);

#ifdef CB_HAVE_LIBURING
  if (uring) {
    int rc = setup_uring(mode + 5);
    if (rc) return rc;
  }
#endif

  struct rusage ru0, ru1;
  getrusage(RUSAGE_SELF, &ru0);
  uint64_t t0 = now_ns();
  if (uring) {
#ifdef CB_HAVE_LIBURING
    int rc = run_uring();
    if (rc) return rc;
#endif
  } else {
    run_epoll();
  }
  uint64_t t1 = now_ns();
  getrusage(RUSAGE_SELF, &ru1);
  alarm(0);

  uint64_t tokens = st.events - st.responses;
  uint64_t expect = (uint64_t)n_streams * (uint64_t)per_stream * (uint64_t)max_tokens;
  if (tokens != expect)
    fprintf(stderr, "bench_recv_floor: counted %llu tokens, expected %llu\n",
            (unsigned long long)tokens, (unsigned long long)expect);
  double wall = (double)(t1 - t0) / 1e9, tk = tokens ? (double)tokens : 1;
  double user = tv_us(ru1.ru_utime) - tv_us(ru0.ru_utime);
  double sys = tv_us(ru1.ru_stime) - tv_us(ru0.ru_stime);
  printf("mode=%s streams=%d requests=%llu tokens=%llu wall_s=%.3f tokens_per_s=%.0f "
         "user_us_per_token=%.3f sys_us_per_token=%.3f cpu_us_per_token=%.3f ",
         mode, n_streams, (unsigned long long)st.responses, (unsigned long long)tokens, wall,
         (double)tokens / wall, user / tk, sys / tk, (user + sys) / tk);
  if (uring)
    printf("cqes_per_token=%.3f recv_cqes_per_token=%.3f batches_per_token=%.3f "
           "enters_per_token=%.3f rearms=%llu",
           (double)st.cqes / tk, (double)st.recv_calls / tk, (double)st.batches / tk,
           (double)st.waits / tk, (unsigned long long)st.rearms);
  else
    printf("recv_calls_per_token=%.3f enters_per_token=%.3f syscalls_per_token=%.3f",
           (double)st.recv_calls / tk, (double)st.waits / tk,
           (double)(st.recv_calls + st.waits + st.sends) / tk);
  printf(" bytes_per_token=%.1f cpu_util=%.3f vcsw=%ld ivcsw=%ld\n", (double)st.bytes / tk,
         (user + sys) / 1e6 / wall, ru1.ru_nvcsw - ru0.ru_nvcsw, ru1.ru_nivcsw - ru0.ru_nivcsw);
  for (int i = 0; i < n_streams; i++) {
    close(conns[i].fd);
    free(conns[i].buf);
  }
  free(conns);
  return 0;
}
