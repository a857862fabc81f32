/*
 * chunk_internal.h - the two implementations behind cb_client_chunk_parse, exposed
 * to the tests and the fuzzer so that they can be compared (internal to client).
 *
 * Both fill a cb_client_chunk by the same rules (docs/internals/client-stream.md,
 * "What a chunk says"): the fast one walks the bytes with json_scan.h, the reference
 * one walks a jansson tree. Strings are written into out_area, which must hold
 * len + CB__CLIENT_CHUNK_SLACK bytes.
 */
#ifndef CALIBENCH_CLIENT_CHUNK_INTERNAL_H
#define CALIBENCH_CLIENT_CHUNK_INTERNAL_H

#include "calibench/client.h"

/* Room beyond len that out_area needs: jansson's error text (JSON_ERROR_TEXT_LENGTH
 * is 160) and a NUL. */
#define CB__CLIENT_CHUNK_SLACK 161

/* Every field before choice[] empty: kind DATA, counts 0, usage all -1. */
void cb__client_chunk_clear(cb_client_chunk *c);
/* A choice before use: all empty, index -1. */
void cb__client_choice_clear(cb_client_choice *ch);

/* The slot for the chunk's next choice, cleared: choice[n] while there is room, else
 * *spare (read, counted, not kept). Counts it in n_choices (and n_detailed). */
cb_client_choice *cb__client_chunk_add_choice(cb_client_chunk *c, cb_client_choice *spare);
/* A choice's part in the chunk's totals once its keys are read. */
void cb__client_chunk_count_choice(cb_client_chunk *c, const cb_client_choice *ch);
/* A choice's has_content once its keys are read: text, reasoning or a tool call. */
void cb__client_choice_settle(cb_client_choice *ch);
/* An Ollama object once its keys are read: usage from the eval counts, and the object
 * as choice[0] when has_choice (a response or message was seen) or it said anything
 * a choice says. */
void cb__client_ollama_settle(cb_client_chunk *c, int has_choice);

/* 1 when data, blanks trimmed, is exactly "[DONE]". */
int cb__client_chunk_is_done(const char *data, size_t len);

/* The fast scanner. Returns 1 with *out filled (DATA, ERROR or INVALID_JSON), or 0:
 * the scanner left this document to jansson (*out is then unspecified). */
int cb__client_chunk_scan(cb_client_api api, const char *data, size_t len, char *out_area,
                          cb_client_chunk *out);

/* The reference: jansson. Always fills *out (DATA, ERROR or INVALID_JSON). */
void cb__client_chunk_jansson(cb_client_api api, const char *data, size_t len,
                              char *out_area, cb_client_chunk *out);

/* Read a jansson `usage` object (OpenAI field names, DeepSeek's cache hits) into
 * *out, whose fields not given are left as they are. */
struct json_t;
void cb__client_usage_from_json(struct json_t *usage, cb_client_usage *out);

#endif
