/*
 * embedded_sim.h - `calibench run` without --url: the built-in simulator on its own
 * thread (its own event loop, so its work never shares the runner's loop), bound to
 * 127.0.0.1 on a free port.
 */
#ifndef CALIBENCH_CLI_EMBEDDED_SIM_H
#define CALIBENCH_CLI_EMBEDDED_SIM_H

#include "calibench/sim_server.h"

typedef struct embedded_sim embedded_sim;

/* Start the server described by *p (port forced to 0, host to 127.0.0.1) on a new
 * thread and wait until it listens. *url gets "http://127.0.0.1:PORT/v1". */
cb_status embedded_sim_start(const cb_sim_server_params *p, embedded_sim **out, char *url,
                             size_t url_size, cb_error *err);
/* Stop the server, join its thread, free everything. NULL is a no-op. */
void embedded_sim_stop(embedded_sim *s);

#endif
