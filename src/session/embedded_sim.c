/*
 * embedded_sim.c - the built-in simulator on a thread of its own. Start-up is reported back
 * through a mutex and condition variable; stopping writes a byte to a pipe whose
 * read end is an event in the server's loop (libevent needs no thread support).
 */
#include "session_internal.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calibench/alloc.h"

struct cb__session_sim {
  cb_sim_server_params params;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t ready_cv;
  int ready;          /* 1 listening, -1 failed */
  int port;
  cb_error err;
  int stop_pipe[2];
};

static void on_stop(evutil_socket_t fd, short what, void *arg) {
  (void)fd;
  (void)what;
  event_base_loopbreak(arg);
}

static void *sim_thread(void *arg) {
  cb__session_sim *s = arg;
  struct event_base *base = cb_sim_server_event_base_new();
  cb_sim_server *srv = NULL;
  cb_status st = cb_sim_server_start(base, &s->params, &srv, &s->err);
  pthread_mutex_lock(&s->lock);
  s->ready = st == CB_OK ? 1 : -1;
  if (st == CB_OK) s->port = cb_sim_server_port(srv);
  pthread_cond_signal(&s->ready_cv);
  pthread_mutex_unlock(&s->lock);
  if (st == CB_OK) {
    struct event *stop = event_new(base, s->stop_pipe[0], EV_READ, on_stop, base);
    event_add(stop, NULL);
    event_base_dispatch(base);
    event_free(stop);
    cb_sim_server_free(srv);
  }
  event_base_free(base);
  return NULL;
}

cb_status cb__session_sim_start(const cb_sim_server_params *p, cb__session_sim **out, char *url,
                             size_t url_size, cb_error *err) {
  *out = NULL;
  cb__session_sim *s = cb_calloc(1, sizeof *s);
  s->params = *p;
  s->params.host = "127.0.0.1";
  s->params.port = 0;
  s->params.quiet = 1;
  if (pipe(s->stop_pipe)) {
    cb_free(s);
    return cb_error_set(err, CB_ERR_IO, "pipe: %s", strerror(errno));
  }
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->ready_cv, NULL);
  if (pthread_create(&s->thread, NULL, sim_thread, s)) {
    close(s->stop_pipe[0]);
    close(s->stop_pipe[1]);
    cb_free(s);
    return cb_error_set(err, CB_ERR_IO, "cannot start the simulator thread");
  }
  pthread_mutex_lock(&s->lock);
  while (!s->ready) pthread_cond_wait(&s->ready_cv, &s->lock);
  pthread_mutex_unlock(&s->lock);
  if (s->ready < 0) {
    if (err) *err = s->err;
    pthread_join(s->thread, NULL);
    close(s->stop_pipe[0]);
    close(s->stop_pipe[1]);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->ready_cv);
    cb_status st = s->err.code ? s->err.code : CB_ERR_NETWORK;
    cb_free(s);
    return st;
  }
  snprintf(url, url_size, "http://127.0.0.1:%d/v1", s->port);
  *out = s;
  return CB_OK;
}

void cb__session_sim_stop(cb__session_sim *s) {
  if (!s) return;
  char b = 1;
  if (write(s->stop_pipe[1], &b, 1) != 1) perror("calibench: stopping the simulator");
  pthread_join(s->thread, NULL);
  close(s->stop_pipe[0]);
  close(s->stop_pipe[1]);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->ready_cv);
  cb_free(s);
}
