/*
 * perturb_paraphrase.c - paraphrase templates: the prompt said again inside a frame
 * that asks the same thing in other words (a template chosen at random). Templates
 * keep the prompt's text, so the answer should not change: what moves is only what
 * the frame adds.
 */
#include <string.h>

#include "probe/perturb_internal.h"

/* "%s" is the prompt. */
static const char *const templates[] = {
    "Could you help me with this? %s",
    "%s Please answer briefly.",
    "I was wondering about the following. %s",
    "Here is my question: %s",
    "%s I would appreciate a clear answer.",
    "Quick question. %s",
    "Please consider this carefully. %s",
    "%s Thanks in advance.",
};

size_t cb__perturb_paraphrase(const char *text, size_t len, cb_rng *rng, cb_buf *out) {
  const char *t = templates[cb_rng_below(rng, sizeof templates / sizeof templates[0])];
  const char *at = strstr(t, "%s");
  cb_buf_append(out, t, (size_t)(at - t));
  cb_buf_append(out, text, len);
  cb_buf_append_str(out, at + 2);
  return 1;
}
