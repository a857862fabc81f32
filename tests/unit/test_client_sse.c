/*
 * test_client_sse.c - the event-stream parser (src/client/sse.c): WHATWG line and
 * field rules, comments, the measurement-strict extras (malformed lines, caps,
 * unterminated last event), NDJSON, and resumability.
 *
 * Every case is written as a transcript - one line per result ("E[type][id]:data",
 * "C:comment", "M:line", "X:error"; "~" marks an unterminated one) - and checked
 * for feeds of the whole input, 1 byte, 7 bytes and seeded random pieces: all must
 * give the same transcript.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/client.h"
#include "test_client_common.h"

static void put_escaped(cb_buf *t, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '\n') cb_buf_append_str(t, "\\n");
    else if (p[i] == '\r') cb_buf_append_str(t, "\\r");
    else if (p[i] == '\0') cb_buf_append_str(t, "\\0");
    else cb_buf_append_char(t, p[i]);
  }
}

static void record(cb_buf *t, cb_client_sse_result r, const cb_client_sse_item *it,
                   const cb_client_sse *p) {
  switch (r) {
    case CB_CLIENT_SSE_EVENT:
      cb_buf_append_str(t, "E[");
      put_escaped(t, it->event, it->event_len);
      cb_buf_append_str(t, "][");
      put_escaped(t, it->id, it->id_len);
      cb_buf_append_str(t, it->has_data ? "]" : "]nodata");
      break;
    case CB_CLIENT_SSE_COMMENT: cb_buf_append_str(t, "C"); break;
    case CB_CLIENT_SSE_MALFORMED: cb_buf_append_str(t, "M"); break;
    case CB_CLIENT_SSE_ERROR:
      cb_buf_appendf(t, "X:%s\n", p->error_msg);
      return;
    default: cb_buf_appendf(t, "?%d\n", (int)r); return;
  }
  cb_buf_append_str(t, it->unterminated ? "~:" : ":");
  put_escaped(t, it->data, it->len);
  cb_buf_append_char(t, '\n');
}

/* Parse `in` fed in pieces (tc_splitter mode) and return the transcript (caller
 * frees). max_line / max_event 0 = defaults. Also checks the feed contract. */
static char *transcript(cb_client_format fmt, const char *in, size_t len, int mode,
                        size_t max_line, size_t max_event, cb_client_sse *stats) {
  cb_client_sse p;
  cb_client_sse_init(&p, fmt, max_line, max_event);
  cb_buf t;
  cb_buf_init(&t, 0);
  cb_buf_append_str(&t, "");
  tc_splitter sp;
  tc_split_init(&sp, mode);
  size_t off = 0;
  int failed = 0;
  while (off < len && !failed) {
    size_t piece = tc_split_next(&sp, len - off), used_all = 0;
    while (used_all < piece) {
      size_t used = 99;
      cb_client_sse_item it;
      cb_client_sse_result r = cb_client_sse_feed(&p, in + off + used_all, piece - used_all,
                                                  &used, &it);
      assert_true(used <= piece - used_all);
      used_all += used;
      if (r == CB_CLIENT_SSE_NEED_MORE) {
        assert_int_equal(used_all, piece);
        break;
      }
      record(&t, r, &it, &p);
      if (r == CB_CLIENT_SSE_ERROR) {
        failed = 1;
        size_t u2 = 1;
        assert_int_equal(cb_client_sse_feed(&p, "x", 1, &u2, &it), CB_CLIENT_SSE_ERROR);
        assert_int_equal(u2, 0); /* sticky, consumes nothing */
        break;
      }
    }
    off += piece;
  }
  cb_client_sse_item it;
  cb_client_sse_result r;
  while ((r = cb_client_sse_finish(&p, &it)) != CB_CLIENT_SSE_END) record(&t, r, &it, &p);
  size_t u3 = 1;
  assert_int_equal(cb_client_sse_feed(&p, "data: x\n\n", 9, &u3, &it), CB_CLIENT_SSE_END);
  assert_int_equal(cb_client_sse_finish(&p, &it), CB_CLIENT_SSE_END);
  if (stats) *stats = p; /* the caller frees the buffers through the copy */
  else cb_client_sse_free(&p);
  return t.data;
}

/* All split modes agree; the transcript equals `want` (when not NULL). */
static void check_all(cb_client_format fmt, const char *in, size_t len, size_t max_line,
                      size_t max_event, const char *want) {
  char *first = transcript(fmt, in, len, 0, max_line, max_event, NULL);
  if (want && strcmp(first, want) != 0)
    fail_msg("transcript differs\n--- got:\n%s--- want:\n%s", first, want);
  for (int mode = 1; mode < TC_SPLIT_MODES; mode++) {
    char *other = transcript(fmt, in, len, mode, max_line, max_event, NULL);
    if (strcmp(first, other) != 0)
      fail_msg("split mode %d differs\n--- whole:\n%s--- split:\n%s", mode, first, other);
    cb_free(other);
  }
  cb_free(first);
}

#define CHECK_SSE(in, want) check_all(CB_CLIENT_FORMAT_SSE, in, sizeof(in) - 1, 0, 0, want)

/* Recordings: the event and comment counts were read off the files by hand (a blank
 * line ends each event; OpenRouter's 17 ": OPENROUTER PROCESSING" lines are
 * comments). Every file ends its last event with a blank line. */
static void test_recordings(void **state) {
  (void)state;
  static const struct {
    const char *file;
    unsigned events, comments;
  } want[] = {
      {"deepseek_api_chat_completions__reasoning_content_with_usage.sse", 212, 0},
      {"llamacpp_completion__pr10720_4events_final_stop_event_missing.sse", 4, 0},
      {"llamacpp_v1_completions__b6351_first5events_partial.sse", 5, 0},
      {"openai_v1_chat_completions__2026_text_obfuscation_usage_null.sse", 12, 0},
      {"openai_v1_chat_completions__finish_length.sse", 5, 0},
      {"openai_v1_chat_completions__json_structured_output.sse", 18, 0},
      {"openai_v1_chat_completions__logprobs_content.sse", 6, 0},
      {"openai_v1_chat_completions__n3_multiple_choices.sse", 50, 0},
      {"openai_v1_chat_completions__plain_text_with_usage.sse", 34, 0},
      {"openai_v1_chat_completions__tool_call_single.sse", 11, 0},
      {"openrouter_v1_chat_completions__comment_keepalives_and_error_chunk.sse", 5, 17},
      {"sglang_gateway_grpc_v1_chat_completions__pr19895_3events_partial.sse", 3, 0},
      {"tgi_generate_stream__opea_genaiinfra_docs_partial_4events.sse", 4, 0},
      {"tgi_v1_chat_completions__RECONSTRUCTED_from_snapshot_stream_usage.sse", 12, 0},
      {"vllm_v1_chat_completions__crusoe_cloud_llama33_usage.sse", 17, 0},
      {"ollama_api_generate__dolphin3_8b_local.ndjson", 32, 0},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cb_buf b;
    tc_load(want[i].file, &b);
    cb_client_format fmt = strstr(want[i].file, ".ndjson") ? CB_CLIENT_FORMAT_NDJSON
                                                           : CB_CLIENT_FORMAT_SSE;
    check_all(fmt, b.data, b.len, 0, 0, NULL);
    cb_client_sse p;
    char *t = transcript(fmt, b.data, b.len, 1, 0, 0, &p);
    if (p.events != want[i].events || p.comments != want[i].comments)
      fail_msg("%s: %llu events, %llu comments; want %u, %u", want[i].file,
               (unsigned long long)p.events, (unsigned long long)p.comments, want[i].events,
               want[i].comments);
    assert_int_equal(p.malformed, 0);
    assert_int_equal(p.bytes, b.len);
    assert_null(strstr(t, "~")); /* nothing left unterminated */
    cb_client_sse_free(&p);
    cb_free(t);
    cb_buf_free(&b);
  }
}

static void test_line_endings(void **state) {
  (void)state;
  /* CR-only, LF-only, CRLF, and mixed; a CR LF pair is one terminator. */
  CHECK_SSE("data: a\r\rdata: b\n\ndata: c\r\n\r\ndata: d\r\n\ndata: e\n\r\n",
            "E[][]:a\nE[][]:b\nE[][]:c\nE[][]:d\nE[][]:e\n");
  /* CRLF is one terminator: two CRLF-ended data lines make one event. */
  CHECK_SSE("data: a\r\ndata: b\r\n\r\n", "E[][]:a\\nb\n");
  /* CR then LF then CR: the LF after CR does not make an extra blank line. */
  CHECK_SSE("data: x\r\n\r", "E[][]:x\n");
  /* Two CRs: the second is a blank line. */
  CHECK_SSE("data: x\r\r", "E[][]:x\n");
}

static void test_crlf_split_across_feeds(void **state) {
  (void)state;
  cb_client_sse p;
  cb_client_sse_init(&p, CB_CLIENT_FORMAT_SSE, 0, 0);
  cb_client_sse_item it;
  size_t used;
  assert_int_equal(cb_client_sse_feed(&p, "data: x\r", 8, &used, &it), CB_CLIENT_SSE_NEED_MORE);
  assert_int_equal(used, 8);
  /* The LF belongs to the CR of the last feed: no blank line, no event yet. */
  assert_int_equal(cb_client_sse_feed(&p, "\n", 1, &used, &it), CB_CLIENT_SSE_NEED_MORE);
  assert_int_equal(cb_client_sse_feed(&p, "\r", 1, &used, &it), CB_CLIENT_SSE_EVENT);
  assert_int_equal(it.len, 1);
  assert_memory_equal(it.data, "x", 1);
  assert_int_equal(cb_client_sse_feed(&p, "\n", 1, &used, &it), CB_CLIENT_SSE_NEED_MORE);
  assert_int_equal(used, 1);
  assert_int_equal(p.events, 1);
  assert_int_equal(p.lines, 2);
  cb_client_sse_free(&p);
}

static void test_bom(void **state) {
  (void)state;
  CHECK_SSE("\xEF\xBB\xBF" "data: x\n\n", "E[][]:x\n");
  /* Only the first BOM is skipped; a second one is part of the field name. */
  CHECK_SSE("\xEF\xBB\xBF\xEF\xBB\xBF" "data: x\n\n", "M:\xEF\xBB\xBF" "data: x\n");
  /* A BOM prefix that is not a BOM stays in the line. */
  CHECK_SSE("\xEF\xBB" "data: x\n\n", "M:\xEF\xBB" "data: x\n");
  CHECK_SSE("\xEF\n\n", "M:\xEF\n");
  /* A stream of just a partial BOM: finish() hands it over as a line. */
  CHECK_SSE("\xEF\xBB", "M~:\xEF\xBB\n");
  CHECK_SSE("\xEF\xBB\xBF", "");
}

static void test_fields(void **state) {
  (void)state;
  /* Multi-line data joined by LF; one leading space dropped, not two; a field
   * without a colon has an empty value. */
  CHECK_SSE("data: a\ndata:b\ndata:  c\ndata\n\n", "E[][]:a\\nb\\n c\\n\n");
  /* event type for one event only; id kept across events; retry digits only. */
  CHECK_SSE("event: error\nid: 7\nretry: 3000\ndata: {}\n\ndata: 2\n\nid\ndata: 3\n\n",
            "E[error][7]:{}\nE[][7]:2\nE[][]:3\n");
  /* Field names are case-sensitive; unknown ones are MALFORMED and parsing goes on. */
  CHECK_SSE("Data: x\n{\"error\":1}\ndata: y\n\n", "M:Data: x\nM:{\"error\":1}\nE[][]:y\n");
  /* A typed event without data is reported; blank lines alone are not events. */
  CHECK_SSE("\n\n\nevent: error\n\n\n", "E[error][]nodata:\n");
  /* Colon in the value is kept. */
  CHECK_SSE("data: a:b: c\n\n", "E[][]:a:b: c\n");
}

static void test_retry_and_id(void **state) {
  (void)state;
  const char in[] = "retry: 1500\nretry: 12x\nid: a\0b\ndata: 1\n\n";
  cb_client_sse p;
  char *t = transcript(CB_CLIENT_FORMAT_SSE, in, sizeof in - 1, 1, 0, 0, &p);
  assert_string_equal(t, "E[][]:1\n"); /* the id with a NUL is ignored */
  assert_int_equal(p.retry_ms, 1500);   /* "12x" is ignored */
  cb_client_sse_free(&p);
  cb_free(t);
}

static void test_comments(void **state) {
  (void)state;
  CHECK_SSE(": ping\n:\n\n: keep-alive\ndata: x\n\n", "C: ping\nC:\nC: keep-alive\nE[][]:x\n");
}

static void test_empty_data_event(void **state) {
  (void)state;
  /* "data:" alone is an event whose data is empty (the spec dispatches it). */
  CHECK_SSE("data:\n\ndata\n\n", "E[][]:\nE[][]:\n");
}

static void test_line_cap(void **state) {
  (void)state;
  char in[200];
  /* 64 bytes is allowed (the minimum cap), 65 is not. */
  memset(in, 'a', sizeof in);
  memcpy(in, "data: ", 6);
  in[64] = '\n';
  in[65] = '\n';
  check_all(CB_CLIENT_FORMAT_SSE, in, 66, 64, 0, NULL);
  char *t = transcript(CB_CLIENT_FORMAT_SSE, in, 66, 0, 64, 0, NULL);
  assert_int_equal(strncmp(t, "E[][]:aaaa", 10), 0);
  cb_free(t);
  /* A comment before a 65-byte line is still delivered, then the error. */
  memset(in, 'a', sizeof in);
  memcpy(in, ": x\n", 4);
  in[4 + 65] = '\n';
  check_all(CB_CLIENT_FORMAT_SSE, in, 4 + 66, 64, 0, "C: x\nX:SSE line longer than the limit of 64 bytes\n");
  /* A long line without any terminator, too. */
  memset(in, 'a', sizeof in);
  check_all(CB_CLIENT_FORMAT_SSE, in, sizeof in, 64, 0, "X:SSE line longer than the limit of 64 bytes\n");
  /* Default cap: 1 MiB. */
  size_t big = CB_CLIENT_DEFAULT_MAX_LINE_BYTES + 10;
  char *huge = cb_malloc(big);
  memset(huge, 'b', big);
  memcpy(huge, "data: ", 6);
  t = transcript(CB_CLIENT_FORMAT_SSE, huge, big, 0, 0, 0, NULL);
  assert_string_equal(t, "X:SSE line longer than the limit of 1048576 bytes\n");
  cb_free(t);
  cb_free(huge);
}

static void test_event_cap(void **state) {
  (void)state;
  const char in[] = "data: 0123456789012345678901234567890\n"
                    "data: 0123456789012345678901234567890\n"
                    "data: 0123456789012345678901234567890\n\n";
  check_all(CB_CLIENT_FORMAT_SSE, in, sizeof in - 1, 0, 64,
            "X:SSE event larger than the limit of 64 bytes\n");
}

static void test_finish_delivers_unterminated(void **state) {
  (void)state;
  CHECK_SSE("data: x", "E[][]~:x\n");          /* no line terminator */
  CHECK_SSE("data: x\n", "E[][]~:x\n");        /* no blank line */
  CHECK_SSE("data: x\r\n", "E[][]~:x\n");
  CHECK_SSE("data: a\n: c", "C~: c\nE[][]~:a\n"); /* the comment first, then the event */
  CHECK_SSE("data: a\nbogus", "M~:bogus\nE[][]~:a\n");
  CHECK_SSE("data: a\n\n", "E[][]:a\n");        /* nothing left over */
}

static void test_ndjson(void **state) {
  (void)state;
  const char in[] = "{\"a\":1}\n\r\n{\"b\":2}\r\n\n{\"c\":3}";
  check_all(CB_CLIENT_FORMAT_NDJSON, in, sizeof in - 1, 0, 0,
            "E[][]:{\"a\":1}\nE[][]:{\"b\":2}\nE[][]~:{\"c\":3}\n");
  /* No SSE meaning in NDJSON: a ':' line is just a line. */
  const char in2[] = ": x\ndata: y\n";
  check_all(CB_CLIENT_FORMAT_NDJSON, in2, sizeof in2 - 1, 0, 0, "E[][]:: x\nE[][]:data: y\n");
}

static void test_reset_and_empty_feed(void **state) {
  (void)state;
  cb_client_sse p;
  cb_client_sse_init(&p, CB_CLIENT_FORMAT_SSE, 0, 0);
  cb_client_sse_item it;
  size_t used = 5;
  assert_int_equal(cb_client_sse_feed(&p, NULL, 0, &used, &it), CB_CLIENT_SSE_NEED_MORE);
  assert_int_equal(used, 0);
  assert_int_equal(cb_client_sse_feed(&p, "data: partial", 13, &used, &it),
                   CB_CLIENT_SSE_NEED_MORE);
  cb_client_sse_reset(&p); /* a new response: the partial line is gone */
  assert_int_equal(cb_client_sse_feed(&p, "\xEF\xBB\xBF" "data: y\n\n", 12, &used, &it),
                   CB_CLIENT_SSE_EVENT);
  assert_int_equal(it.len, 1);
  assert_memory_equal(it.data, "y", 1);
  assert_int_equal(p.events, 1);
  cb_client_sse_free(&p);
}

/* Several events in one feed come out one per call, with `consumed` pointing just
 * after the line that produced each. */
static void test_pull_positions(void **state) {
  (void)state;
  const char in[] = "data: 1\n\ndata: 2\n\n: c\n";
  cb_client_sse p;
  cb_client_sse_init(&p, CB_CLIENT_FORMAT_SSE, 0, 0);
  cb_client_sse_item it;
  size_t used, off = 0;
  assert_int_equal(cb_client_sse_feed(&p, in, sizeof in - 1, &used, &it), CB_CLIENT_SSE_EVENT);
  assert_int_equal(used, 9);
  off += used;
  assert_int_equal(cb_client_sse_feed(&p, in + off, sizeof in - 1 - off, &used, &it),
                   CB_CLIENT_SSE_EVENT);
  assert_memory_equal(it.data, "2", 1);
  off += used;
  assert_int_equal(off, 18);
  assert_int_equal(cb_client_sse_feed(&p, in + off, sizeof in - 1 - off, &used, &it),
                   CB_CLIENT_SSE_COMMENT);
  off += used;
  assert_int_equal(off, sizeof in - 1);
  cb_client_sse_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_recordings),
      cmocka_unit_test(test_line_endings),
      cmocka_unit_test(test_crlf_split_across_feeds),
      cmocka_unit_test(test_bom),
      cmocka_unit_test(test_fields),
      cmocka_unit_test(test_retry_and_id),
      cmocka_unit_test(test_comments),
      cmocka_unit_test(test_empty_data_event),
      cmocka_unit_test(test_line_cap),
      cmocka_unit_test(test_event_cap),
      cmocka_unit_test(test_finish_delivers_unterminated),
      cmocka_unit_test(test_ndjson),
      cmocka_unit_test(test_reset_and_empty_feed),
      cmocka_unit_test(test_pull_positions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
