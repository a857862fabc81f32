/*
 * sim_server.h - `calibench sim serve`: the simulator engine behind an
 * OpenAI-compatible HTTP server, in real time (wall clock × time scale).
 *
 * The server runs on a libevent event_base the caller owns and drives; it binds
 * 127.0.0.1 by default. Endpoints: GET /health, GET /v1/models, GET /metrics,
 * POST /v1/completions, POST /v1/chat/completions, POST /v1/embeddings
 * (docs/simulator.md, "HTTP API").
 */
#ifndef CALIBENCH_SIM_SERVER_H
#define CALIBENCH_SIM_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"
#include "calibench/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct event_base;

/* ---- Fault injection ----------------------------------------------------------- */

typedef enum {
  CB_SIM_FAULT_HTTP_429 = 0, /* 429 rate_limit_exceeded with Retry-After */
  CB_SIM_FAULT_HTTP_500,     /* 500 server_error */
  CB_SIM_FAULT_HTTP_503,     /* 503 with Retry-After */
  CB_SIM_FAULT_CUT,          /* connection closed after `after` tokens */
  CB_SIM_FAULT_MALFORMED_SSE,/* a line that is not SSE after `after` tokens */
  CB_SIM_FAULT_INVALID_JSON, /* a data: event with broken JSON after `after` tokens */
  CB_SIM_FAULT_STALL         /* no bytes for `stall_ms` after `after` tokens */
} cb_sim_fault_kind;

typedef struct cb_sim_fault {
  cb_sim_fault_kind kind;
  double probability;   /* per request, seeded; 0 when chosen by index/every */
  int64_t index;        /* the 0-based generation request it hits; -1 = none */
  int64_t every;        /* hits requests every-1, 2*every-1, ...; 0 = none */
  int64_t after_tokens; /* tokens sent before a stream fault strikes */
  uint64_t stall_ms;    /* stall length, wall-clock milliseconds */
  int retry_after_s;    /* Retry-After for 429/503 */
} cb_sim_fault;

/*
 * Parse "KIND[:key=value,...]". KIND: 429, 500, 503, cut, malformed-sse,
 * invalid-json, stall. Keys: p (probability 0..1), index (0-based request), every
 * (N), after (tokens), ms (stall length), retry-after (seconds). One of p, index or
 * every is required. Errors name the spec and the bad part.
 */
cb_status cb_sim_fault_parse(const char *spec, cb_sim_fault *out, cb_error *err);
const char *cb_sim_fault_kind_name(cb_sim_fault_kind kind);

/* The fault (first match in order) that hits generation request `index`, or NULL.
 * Deterministic in (seed, index). */
const cb_sim_fault *cb_sim_fault_pick(const cb_sim_fault *faults, size_t n, uint64_t seed,
                                      uint64_t index);

/* ---- Server ---------------------------------------------------------------------- */

typedef struct cb_sim_server_params {
  cb_sim_params engine;       /* the model, GPU and scheduler to simulate */
  const char *host;           /* "127.0.0.1" */
  int port;                   /* 0 = any free port */
  int reuse_port;             /* 1: SO_REUSEPORT, so that several servers (processes) share
                                 the port and the kernel spreads connections over them (0) */
  double time_scale;          /* wall seconds per simulated second (0.1 = 10× faster) */
  int replicas;               /* data-parallel engines behind the one endpoint (1) */
  size_t max_body_bytes;      /* larger request bodies get 413 (1 MiB) */
  uint64_t header_timeout_ms; /* a request must arrive whole within this long of its
                                 first byte, else 408 and close (10000; 0 = none) */
  uint64_t idle_timeout_ms;   /* close a connection silent this long between requests,
                                 or not taking output (60000; 0 = none) */
  int embedding_dim;          /* /v1/embeddings vector size (1024) */
  const char *responses_path; /* JSONL {"prompt","response"} scripted answers, or NULL */
  const char *behavior_path;  /* YAML planted behaviour (sim_behavior.h), or NULL; not
                                 kept after start (loaded there) */
  const char *trace_out_path; /* JSONL ground truth per finished request, or NULL */
  const char *tokenizer;      /* tiktoken encoding or tokenizer.json for prompt token
                                 counts and ids; NULL: the approximate tokenizer */
  const cb_sim_fault *faults; /* not owned; must outlive the server */
  size_t num_faults;
  uint64_t seed;              /* output text, EOS and faults */
  int quiet;                  /* 1 = no log lines on stderr */
} cb_sim_server_params;

void cb_sim_server_default_params(cb_sim_server_params *p);

typedef struct cb_sim_server cb_sim_server;

/*
 * A libevent base suited to the server: precise timers (timerfd, sub-millisecond)
 * and no cached loop time. libevent 2.1 computes the next timeout from the time it
 * cached when the loop last woke, so every callback's work made the next timer fire
 * that much late (measured: 2.5 ms late after a 250-token step). Free it with
 * event_base_free.
 */
struct event_base *cb_sim_server_event_base_new(void);

/*
 * Build the engine(s), load the responses file, open the trace file and listen on
 * `base` (best created with cb_sim_server_event_base_new).
 * On failure nothing is left allocated and *out is NULL.
 */
cb_status cb_sim_server_start(struct event_base *base, const cb_sim_server_params *p,
                              cb_sim_server **out, cb_error *err);
/* The port actually bound (useful with port 0). */
int cb_sim_server_port(const cb_sim_server *s);
/* Stop listening, cut open connections, flush and close the trace, free everything. */
void cb_sim_server_free(cb_sim_server *s);

#ifdef __cplusplus
}
#endif
#endif
