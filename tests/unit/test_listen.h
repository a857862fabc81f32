/*
 * test_listen.h - a stand-in server's socket: test_listen_chat listens on 127.0.0.1 at
 * a port the kernel picks and gives the chat completions URL there. The kernel
 * completes the handshakes of up to `backlog` connections whether or not the test
 * accepts them, so a socket nobody accepts from is a server that never answers.
 * Header-only; include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_LISTEN_H
#define CALIBENCH_TEST_LISTEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

/* Returns the listening socket; url becomes http://127.0.0.1:PORT/v1/chat/completions. */
static int test_listen_chat(int backlog, char *url, size_t url_size) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(fd, backlog), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  snprintf(url, url_size, "http://127.0.0.1:%d/v1/chat/completions", ntohs(a.sin_port));
  return fd;
}

#endif
