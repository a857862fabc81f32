/*
 * stop_signal.c - SIGINT/SIGTERM during a measurement: counted, so the session stops
 * sending, drains and writes what it measured (a stopped run exits 130).
 */
#include <stddef.h>

#include "cli.h"

volatile sig_atomic_t cli_stop_signals;

static void on_stop_signal(int sig) {
  (void)sig;
  cli_stop_signals++;
}

void cli_stop_catch(cli_stop_handlers *h) {
  struct sigaction sa = {.sa_handler = on_stop_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &h->old_int);
  sigaction(SIGTERM, &sa, &h->old_term);
}

void cli_stop_release(const cli_stop_handlers *h) {
  sigaction(SIGINT, &h->old_int, NULL);
  sigaction(SIGTERM, &h->old_term, NULL);
}
