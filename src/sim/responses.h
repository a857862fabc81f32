/*
 * responses.h - scripted answers for `sim serve --responses FILE` (internal).
 *
 * The file is JSONL, one {"prompt": "...", "response": "..."} object per line.
 * A completions request matches on its prompt text, a chat request on the content
 * of its last user message; a match is answered with the scripted response,
 * streamed token by token under the approximate tokenizer.
 */
#ifndef CALIBENCH_SIM_RESPONSES_H
#define CALIBENCH_SIM_RESPONSES_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/error.h"

typedef struct cb__sim_response {
  char *prompt;     /* owned */
  size_t prompt_len;
  char *text;       /* owned: the response */
  size_t text_len;
  uint32_t *ids;    /* owned: token ids of text */
  size_t *ends;     /* owned: end offset of each token in text */
  size_t num_tokens;
} cb__sim_response;

typedef struct cb__sim_responses cb__sim_responses;

/* Load a responses file. Errors name the file, the line and what is wrong (not
 * JSON, missing or non-string field, duplicate prompt). *out is NULL on failure. */
cb_status cb__sim_responses_load(const char *path, uint32_t vocab, cb__sim_responses **out,
                                 cb_error *err);
void cb__sim_responses_free(cb__sim_responses *r);
/* The scripted response for a prompt, or NULL. */
const cb__sim_response *cb__sim_responses_find(const cb__sim_responses *r, const char *prompt,
                                               size_t len);
size_t cb__sim_responses_count(const cb__sim_responses *r);

/* One answer made for one request (a behaviour's, behavior.h): text split into tokens
 * under the approximate tokenizer over `vocab` ids. Free it with cb__sim_response_free. */
cb__sim_response *cb__sim_response_new(const char *text, size_t len, uint32_t vocab);
void cb__sim_response_free(cb__sim_response *r);

#endif
