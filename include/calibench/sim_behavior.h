/*
 * sim_behavior.h - planted truth for the probes: `--behavior FILE` on `sim serve`,
 * `sim run` and the built-in simulator of `run` and `probe` (docs/probe.md,
 * "Simulator behaviour"). A behaviour changes what the simulator answers (content,
 * and as sections add them top_logprobs, refusals, tool calls), never its timing
 * model: the engine sees the same prompt and the same output length either way
 * (the answer's tokens replace the synthetic ones).
 *
 * The file is YAML, one mapping whose keys are sections, each parsed by its own
 * reader (src/sim/behavior_<section>.c):
 *
 *   seed: 7                  # optional: mixed into every draw (with the server's --seed)
 *   context:                 # needle recall (behavior_context.c)
 *     breakpoint_tokens: 24000
 *     width_tokens: 2000
 *     recall: 0.98
 *     middle_dip: 0.15
 *   refusal: ...  perturb: ...  dialog: ...  agent: ...  embed: ...  lm: ...
 *
 * An unknown key, a bad value or a section given twice is an error "FILE:LINE: key
 * 'K': ...". Every draw is a hash of (server seed, behaviour seed, the request's
 * text, what is drawn): the same request gets the same answer whatever the order or
 * concurrency of the run.
 */
#ifndef CALIBENCH_SIM_BEHAVIOR_H
#define CALIBENCH_SIM_BEHAVIOR_H

#include <stddef.h>
#include <stdint.h>

#include "calibench/buf.h"
#include "calibench/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cb_sim_behavior cb_sim_behavior;

/* Load and check a behaviour file; *out is NULL on failure (err: "FILE:LINE: ..."). */
cb_status cb_sim_behavior_load(const char *path, cb_sim_behavior **out, cb_error *err);
void cb_sim_behavior_free(cb_sim_behavior *b);

/*
 * What the behaviour answers to a prompt (a completions prompt, or a chat request's
 * last user message) of `prompt_tokens` tokens, under server seed `seed`: 1 and the
 * answer's text appended to *out when a section decides the answer, 0 when none does
 * (the simulator then answers its synthetic text). The servers call this for every
 * generation request; tests call it to check a section without HTTP.
 */
int cb_sim_behavior_answer(const cb_sim_behavior *b, const char *prompt, size_t len,
                           int64_t prompt_tokens, uint64_t seed, cb_buf *out);

#ifdef __cplusplus
}
#endif
#endif
