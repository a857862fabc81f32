/*
 * bench_loopback_ceiling.c - the machine's own limit for `sim serve`: how many
 * 120-byte writev() calls per second one core can push into N loopback TCP sockets
 * while a reader drains them on another core, with no other work at all. Each SSE
 * token of each stream is one such write, so this is the ceiling against which
 * bench/sim_serve.sh's tokens/s is read.
 *
 * usage: bench_loopback_ceiling STREAMS SECONDS   (writer on CPU 0, reader on CPU 1)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "calibench/alloc.h"
#include "calibench/clock.h"

static int n_streams;
static int *write_fds, *read_fds;
static volatile int stop;

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static void *reader(void *arg) {
  (void)arg;
  pin(1);
  int ep = epoll_create1(0);
  for (int i = 0; i < n_streams; i++) {
    struct epoll_event e = {.events = EPOLLIN, .data.fd = read_fds[i]};
    epoll_ctl(ep, EPOLL_CTL_ADD, read_fds[i], &e);
  }
  struct epoll_event ev[256];
  static char buf[65536];
  while (!stop) {
    int n = epoll_wait(ep, ev, 256, 100);
    for (int i = 0; i < n; i++)
      while (read(ev[i].data.fd, buf, sizeof buf) == (ssize_t)sizeof buf) {}
  }
  close(ep);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s STREAMS SECONDS\n", argv[0]);
    return 2;
  }
  n_streams = atoi(argv[1]);
  double seconds = atof(argv[2]);
  write_fds = cb_calloc((size_t)n_streams, sizeof *write_fds);
  read_fds = cb_calloc((size_t)n_streams, sizeof *read_fds);
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof addr;
  if (bind(ls, (struct sockaddr *)&addr, sizeof addr) || listen(ls, 4096) ||
      getsockname(ls, (struct sockaddr *)&addr, &len)) {
    perror("listen");
    return 1;
  }
  for (int i = 0; i < n_streams; i++) {
    read_fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(read_fds[i], (struct sockaddr *)&addr, sizeof addr)) {
      perror("connect");
      return 1;
    }
    write_fds[i] = accept(ls, NULL, NULL);
    int one = 1;
    setsockopt(write_fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pin(0);
  char msg[120];
  memset(msg, 'x', sizeof msg);
  struct iovec iov = {msg, sizeof msg};
  uint64_t start = cb_clock_now_ns(), end = start + (uint64_t)(seconds * 1e9), writes = 0;
  while (cb_clock_now_ns() < end)
    for (int i = 0; i < n_streams; i++) writes += writev(write_fds[i], &iov, 1) == sizeof msg;
  double dt = (double)(cb_clock_now_ns() - start) / 1e9;
  stop = 1;
  pthread_join(t, NULL);
  printf("streams=%d writes_per_s=%.0f us_per_write=%.2f\n", n_streams, (double)writes / dt,
         dt / (double)writes * 1e6);
  for (int i = 0; i < n_streams; i++) {
    close(write_fds[i]);
    close(read_fds[i]);
  }
  close(ls);
  cb_free(write_fds);
  cb_free(read_fds);
  return 0;
}
