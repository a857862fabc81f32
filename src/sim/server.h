/*
 * server.h - internals of `sim serve` shared by server.c (setup, routing, clocks,
 * replicas) and server_gen.c (generation requests: streams, engine events, faults,
 * trace lines). Internal to the sim module.
 */
#ifndef CALIBENCH_SIM_SERVER_INTERNAL_H
#define CALIBENCH_SIM_SERVER_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "calibench/buf.h"
#include "calibench/sim.h"
#include "calibench/sim_behavior.h"
#include "calibench/sim_server.h"
#include "sim/api.h"
#include "sim/http.h"
#include "sim/metrics.h"
#include "sim/responses.h"

struct event;

/* One data-parallel replica: an engine, its timer and its request metrics. */
typedef struct cb__sim_replica {
  struct cb_sim_server *srv;
  int index;
  cb_sim_engine *engine;
  struct event *timer;       /* fires when the engine's next step ends */
  cb__sim_metrics metrics;
  int64_t live;              /* requests held by this replica (routing load) */
} cb__sim_replica;

struct cb_sim_server {
  struct event_base *base;
  cb_sim_server_params p;    /* copy; string fields point at the copies below */
  char *host;
  char *responses_path;
  char *trace_out_path;
  cb_tok *tok;               /* owned, or NULL */
  cb__sim_tokens tokens;     /* how prompts are tokenized */
  cb_sim_fault *faults;      /* copy */
  const char *model;         /* served model id (p.engine.model.name) */
  int max_model_len;
  cb__sim_http_server *http;
  cb__sim_replica *replicas;
  cb__sim_responses *responses; /* NULL without --responses */
  cb_sim_behavior *behavior; /* NULL without --behavior */
  FILE *trace;               /* NULL without --trace-out */
  uint64_t origin_ns;        /* monotonic ns at virtual time 0 */
  uint64_t requests;         /* generation requests seen (fault index) */
  uint64_t ids;              /* for generated request ids */
  cb_buf scratch;            /* rendering buffer reused for every chunk */
  /* Emission lateness: when a token was handed to its connection minus when its
   * step ended. Shows whether the simulator kept up (served on /metrics). */
  cb_prom_hist lateness;
};

/* Clocks: virtual engine time <-> monotonic wall time (time_scale wall s per sim s). */
uint64_t cb__sim_server_virtual_now(const struct cb_sim_server *s);
uint64_t cb__sim_server_wall_of(const struct cb_sim_server *s, uint64_t virtual_ns);

/* Re-arm a replica's timer for its engine's next event. */
void cb__sim_server_arm(cb__sim_replica *r);

/* Send an OpenAI error body with the given status (and x-request-id). */
void cb__sim_server_send_error(cb__sim_http_exchange *ex, const char *request_id,
                               const cb__sim_api_error *e, const cb__sim_http_field *extra,
                               size_t n_extra);

/* Handle POST /v1/completions and /v1/chat/completions (server_gen.c). */
void cb__sim_server_generate(struct cb_sim_server *s, cb__sim_http_exchange *ex,
                             cb__sim_api_kind kind, const char *request_id);

/* Engine event callback for a replica (server_gen.c). ctx is the replica. */
void cb__sim_server_on_engine_event(void *ctx, const cb_sim_event *ev);

#endif
