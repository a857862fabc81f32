/*
 * pq_api.h - libpq's functions, as the registry's PostgreSQL driver calls them:
 * cb__pq.PQconnectdb() for PQconnectdb(), and so on, after cb__pq_load() (lazylib.h:
 * libpq.so.5 is opened by the first command that connects to PostgreSQL, not at every
 * start). Each pointer has the type of libpq-fe.h's own prototype, so a call is
 * checked as a direct call would be.
 */
#ifndef CB_UTIL_PQ_API_H
#define CB_UTIL_PQ_API_H

#include <libpq-fe.h>

#include "calibench/error.h"

/* Every libpq function calibench calls. */
#define CB__PQ_FUNCTIONS(X)                                                                \
  X(PQconnectdb) X(PQstatus) X(PQerrorMessage) X(PQsetNoticeProcessor) X(PQexecParams)     \
  X(PQresultStatus) X(PQresultErrorMessage) X(PQntuples) X(PQnfields) X(PQgetisnull)        \
  X(PQgetvalue) X(PQclear) X(PQfinish)

typedef struct cb__pq_api {
#define CB__PQ_FIELD(f) __typeof__(f) *f;
  CB__PQ_FUNCTIONS(CB__PQ_FIELD)
#undef CB__PQ_FIELD
} cb__pq_api;

/* Filled by cb__pq_load; all NULL before. */
extern cb__pq_api cb__pq;

/* Opens libpq once per process (thread-safe); every later call answers as the first
 * did. The error names the library and what it serves. */
cb_status cb__pq_load(cb_error *err);

#endif
