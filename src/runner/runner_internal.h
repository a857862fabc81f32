/*
 * runner_internal.h - state shared by the runner's files: runner.c (the event loop,
 * libcurl multi, dispatch and completion) and stream.c (reading one response into
 * its record through the client module). Internal to the runner module.
 */
#ifndef CALIBENCH_RUNNER_INTERNAL_H
#define CALIBENCH_RUNNER_INTERNAL_H

#include <curl/curl.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/runner.h"

struct cb__runner_stream; /* stream.c */

/* One request in flight. */
typedef struct cb__runner_req {
  struct cb__runner *rn;
  CURL *easy;
  struct curl_slist *headers; /* owned */
  char *body;                 /* owned copy of the request body */
  size_t body_len;
  cb_record rec;              /* filled as the response arrives */
  struct cb__runner_stream *stream; /* response reader (stream.c) */
  int http_status;
  int attempts;               /* sends so far (1 + retries) */
  struct cb__runner_req *next; /* free list / queue link */
  struct cb__runner_req *live_prev, *live_next; /* in-flight list */
} cb__runner_req;

/* stream.c: read a response into req->rec. All times are absolute monotonic ns. */
void cb__runner_stream_begin(cb__runner_req *q, const cb_runner_params *p);
void cb__runner_stream_header(cb__runner_req *q, const char *line, size_t len, uint64_t now_ns);
void cb__runner_stream_body(cb__runner_req *q, const char *data, size_t len, uint64_t now_ns);
/* Finish the record: result is libcurl's (CURLE_ABORTED_BY_CALLBACK: cut off by the
 * runner at the drain deadline, class "interrupted"), origin the run start; the
 * record's times become relative to it. Sets error_class/message for every failure. */
void cb__runner_stream_end(cb__runner_req *q, CURLcode result, uint64_t now_ns,
                           uint64_t origin_ns);
/* 1 when the request failed in a way a retry may fix (connect, 429, 5xx). */
int cb__runner_stream_retryable(const cb__runner_req *q);
void cb__runner_stream_free(cb__runner_req *q);

#endif
