/*
 * test_client_common.h - helpers shared by the client tests (test_client_*.c):
 * loading the recorded streams from tests/data/sse/ and feeding bytes in pieces.
 * Header-only (each test is its own executable); include after <cmocka.h>.
 */
#ifndef CALIBENCH_TEST_CLIENT_COMMON_H
#define CALIBENCH_TEST_CLIENT_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "calibench/buf.h"
#include "calibench/rng.h"

/* Every recorded stream in tests/data/sse/ (see SOURCES.md there). */
static const char *const tc_recordings[] = {
    "deepseek_api_chat_completions__reasoning_content_with_usage.sse",
    "llamacpp_completion__pr10720_4events_final_stop_event_missing.sse",
    "llamacpp_v1_completions__b6351_first5events_partial.sse",
    "ollama_api_generate__dolphin3_8b_local.ndjson",
    "openai_v1_chat_completions__2026_text_obfuscation_usage_null.sse",
    "openai_v1_chat_completions__finish_length.sse",
    "openai_v1_chat_completions__json_structured_output.sse",
    "openai_v1_chat_completions__logprobs_content.sse",
    "openai_v1_chat_completions__n3_multiple_choices.sse",
    "openai_v1_chat_completions__plain_text_with_usage.sse",
    "openai_v1_chat_completions__tool_call_single.sse",
    "openrouter_v1_chat_completions__comment_keepalives_and_error_chunk.sse",
    "sglang_gateway_grpc_v1_chat_completions__pr19895_3events_partial.sse",
    "tgi_generate_stream__opea_genaiinfra_docs_partial_4events.sse",
    "tgi_v1_chat_completions__RECONSTRUCTED_from_snapshot_stream_usage.sse",
    "vllm_v1_chat_completions__crusoe_cloud_llama33_usage.sse",
};
#define TC_N_RECORDINGS (sizeof tc_recordings / sizeof tc_recordings[0])

/* Read tests/data/sse/<name> ($CB_DATA_DIR, set by ctest, else ./tests/data). */
static inline void tc_load(const char *name, cb_buf *out) {
  const char *dir = getenv("CB_DATA_DIR");
  char path[1024];
  snprintf(path, sizeof path, "%s/sse/%s", dir ? dir : "tests/data", name);
  cb_error err;
  cb_error_clear(&err);
  cb_buf_init(out, 0);
  if (cb_file_read(path, 0, out, &err) != CB_OK) fail_msg("%s", err.msg);
}

/* Piece sizes for splitting a stream: mode 0 = all at once, 1 = one byte at a time,
 * 2 = 7 bytes, >= 3 = seeded random sizes 1..64 (seed = mode). */
typedef struct tc_splitter {
  int mode;
  cb_rng rng;
} tc_splitter;

static inline void tc_split_init(tc_splitter *sp, int mode) {
  sp->mode = mode;
  cb_rng_init(&sp->rng, (uint64_t)mode);
}

static inline size_t tc_split_next(tc_splitter *sp, size_t left) {
  size_t n = sp->mode == 0 ? left : sp->mode == 1 ? 1 : sp->mode == 2 ? 7
                                                   : 1 + (size_t)cb_rng_below(&sp->rng, 64);
  return n < left ? n : left;
}

#define TC_SPLIT_MODES 6

#endif
