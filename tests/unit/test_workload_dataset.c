/*
 * test_workload_dataset.c - every dataset format on its real public sample (Mooncake,
 * Azure, ShareGPT) and on small hand-written files, with values read off the files
 * (and re-checked with Python where noted); bad files give FILE:LINE errors that say
 * which field and what was expected.
 *
 * Token counts below are under the approximate tokenizer (docs/simulator.md), counted
 * by hand: e.g. "I am Vicuna, a language model trained by researchers from Large Model
 * Systems Organization (LMSYS)." is I|am|Vicuna|,|a|langua ge|model|traine d|by|resear
 * chers|from|Large|Model|System s|Organi zation| (|LMSYS|). = 23.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calibench/workload.h"
#include "test_workload_common.h"

static cb_dataset *open_ok(const char *kind, const char *file, const cb_dataset_params *p) {
  char spec[1200];
  snprintf(spec, sizeof spec, "%s:%s", kind, fixture(file));
  cb_dataset *ds;
  cb_error err;
  cb_error_clear(&err);
  if (cb_dataset_open(spec, p, NULL, 1, &ds, &err) != CB_OK) fail_msg("%s: %s", spec, err.msg);
  return ds;
}

static cb_dataset_item item(const cb_dataset *ds, size_t i) {
  cb_dataset_item it;
  assert_int_equal(cb_dataset_get_item(ds, i, &it, NULL), CB_OK);
  return it;
}

/* Open must fail with `code`; the message must hold "FILE:LINE:" and `about`. */
static void open_fails(const char *kind, const char *file, const cb_dataset_params *p,
                       cb_status code, long line, const char *about) {
  char spec[1200];
  snprintf(spec, sizeof spec, "%s:%s", kind, fixture(file));
  cb_dataset *ds = (cb_dataset *)1;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_dataset_open(spec, p, NULL, 1, &ds, &err);
  if (st != code)
    fail_msg("%s: status %s, want %s (%s)", file, cb_status_name(st), cb_status_name(code),
             err.msg);
  assert_null(ds);
  char where[1200];
  snprintf(where, sizeof where, "%s:%ld:", fixture(file), line);
  if (line && (strncmp(err.msg, where, strlen(where)) != 0 || err.line != line))
    fail_msg("%s: message '%s' (line %ld), want it to start with '%s'", file, err.msg, err.line,
             where);
  if (!strstr(err.msg, about)) fail_msg("%s: message '%s' lacks '%s'", file, err.msg, about);
}

/* ---- real samples ------------------------------------------------------------------------ */

/* mooncake_conversation_first200.jsonl: 200 rows in time order; values read off the file
 * and checked with Python (json): row 0 t=0 6758/500 with hash_ids 0..13; row 199 at
 * 72,000 ms, 19978/448, 40 ids starting 0, 5176, 5177; sums 2782179 input, 71379 output
 * tokens. */
static void test_mooncake(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("trace", "mooncake_conversation_first200.jsonl", NULL);
  assert_int_equal(cb_dataset_get_kind(ds), CB_DATASET_TRACE);
  assert_int_equal(cb_dataset_size(ds), 200);
  assert_true(cb_dataset_has_timestamps(ds));
  assert_int_equal(cb_dataset_content_hash(ds), UINT64_C(0x296ea37657fc5b52)); /* xxhash 3.2 */
  cb_dataset_item a = item(ds, 0), z = item(ds, 199);
  assert_int_equal(a.timestamp_ns, 0);
  assert_int_equal(a.input_len, 6758);
  assert_int_equal(a.output_len, 500);
  assert_int_equal(a.num_hash_ids, 14);
  for (int i = 0; i < 14; i++) assert_int_equal(a.hash_ids[i], i);
  assert_int_equal(a.line, 1);
  assert_int_equal(z.timestamp_ns, UINT64_C(72000000000));
  assert_int_equal(z.input_len, 19978);
  assert_int_equal(z.output_len, 448);
  assert_int_equal(z.num_hash_ids, 40);
  assert_int_equal(z.hash_ids[0], 0);
  assert_int_equal(z.hash_ids[1], 5176);
  assert_int_equal(z.hash_ids[2], 5177);
  assert_int_equal(z.line, 200);
  uint64_t in = 0, out = 0;
  for (size_t i = 0; i < 200; i++) {
    cb_dataset_item it = item(ds, i);
    in += it.input_len;
    out += it.output_len;
    assert_int_equal(it.num_hash_ids, (it.input_len + 511) / 512); /* the trace's rule */
  }
  assert_int_equal(in, 2782179);
  assert_int_equal(out, 71379);
  cb_dataset_free(ds);
}

/* azure_code_2023_first200.csv (CRLF): 200 rows; times relative to the first row
 * (2023-11-16 18:17:03.9799600), checked with Python datetime: row 1 +52,000,000 ns,
 * row 9 +1,299,337,000, row 10 +1,398,922,000, row 199 +199,089,585,000 (18:20:23.0695450);
 * sums 414215 context and 4907 generated tokens. */
static void test_azure(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("trace", "azure_code_2023_first200.csv", NULL);
  assert_int_equal(cb_dataset_size(ds), 200);
  assert_int_equal(cb_dataset_content_hash(ds), UINT64_C(0x43633dad33815f7f));
  static const struct {
    size_t row;
    uint64_t t_ns;
    uint32_t in, out;
  } rows[] = {{0, 0, 4808, 10},
              {1, 52000000, 3180, 8},
              {9, 1299337000, 201, 24},
              {10, 1398922000, 137, 9},
              {199, UINT64_C(199089585000), 65, 10}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cb_dataset_item it = item(ds, rows[i].row);
    assert_int_equal(it.timestamp_ns, rows[i].t_ns);
    assert_int_equal(it.input_len, rows[i].in);
    assert_int_equal(it.output_len, rows[i].out);
    assert_int_equal(it.num_hash_ids, 0);
    assert_int_equal(it.line, rows[i].row + 2); /* after the header */
  }
  uint64_t in = 0, out = 0;
  for (size_t i = 0; i < 200; i++) {
    in += item(ds, i).input_len;
    out += item(ds, i).output_len;
  }
  assert_int_equal(in, 414215);
  assert_int_equal(out, 4907);
  cb_dataset_free(ds);
}

static void render(const cb_dataset *ds, size_t i, cb_workload_prompt *pr) {
  cb_dataset_item it = item(ds, i);
  cb_error err;
  cb_error_clear(&err);
  if (cb_dataset_render(ds, i, it.input_len, it.output_len, 0, CB_NO_PREFIX, pr, &err) != CB_OK)
    fail_msg("render %zu: %s", i, err.msg);
}

/* sharegpt_fastchat_first40.json: 40 conversations of 2, 4 or 6 human/gpt turns (80
 * answered user turns, counted with Python); conversation 1 starts on line 23. */
static void test_sharegpt_first_turn(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("sharegpt", "sharegpt_fastchat_first40.json", NULL);
  assert_int_equal(cb_dataset_get_kind(ds), CB_DATASET_SHAREGPT);
  assert_int_equal(cb_dataset_size(ds), 40);
  assert_int_equal(cb_dataset_skipped(ds), 0);
  assert_int_equal(cb_dataset_content_hash(ds), UINT64_C(0x4faaeea83d155d3d));
  cb_dataset_item a = item(ds, 0);
  assert_int_equal(a.input_len, 4);   /* Who|are|you|? */
  assert_int_equal(a.output_len, 23); /* see the file comment */
  assert_int_equal(a.line, 2);
  assert_int_equal(item(ds, 1).line, 23);
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  render(ds, 0, &pr);
  assert_string_equal(pr.text.data, "Who are you?");
  assert_int_equal(pr.messages.len, 0);
  assert_int_equal(pr.output_len, 23);
  render(ds, 2, &pr);
  assert_string_equal(pr.text.data, "What is up?");
  cb_workload_prompt_free(&pr);
  cb_dataset_free(ds);
}

static void test_sharegpt_turns(void **state) {
  (void)state;
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.sharegpt_mode = CB_SHAREGPT_TURNS;
  cb_dataset *ds = open_ok("sharegpt", "sharegpt_fastchat_first40.json", &p);
  assert_int_equal(cb_dataset_size(ds), 80);
  /* Items 3, 4, 5 are conversation 2's three replies; item 5 sends its first 5 turns. */
  cb_dataset_item it = item(ds, 5);
  /* What|is|up|? + Hello|!|How|can|I|help|you|today|? + Who|are|you|? + 29 + Goodby e */
  assert_int_equal(it.input_len, 4 + 9 + 4 + 29 + 2);
  /* Goodby e|!|If|you|have|any|more|questi ons|in|the|future|,|don|'|t|hesita te|to|ask|. */
  assert_int_equal(it.output_len, 22);
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  render(ds, 5, &pr);
  assert_int_equal(pr.text.len, 0);
  assert_string_equal(
      pr.messages.data,
      "[{\"role\":\"user\",\"content\":\"What is up?\"},"
      "{\"role\":\"assistant\",\"content\":\"Hello! How can I help you today?\"},"
      "{\"role\":\"user\",\"content\":\"Who are you?\"},"
      "{\"role\":\"assistant\",\"content\":\"You can call me Vicuna, and I was trained by Large "
      "Model Systems Organization (LMSYS) researchers as a language model.\"},"
      "{\"role\":\"user\",\"content\":\"Goodbye\"}]");
  render(ds, 3, &pr);
  assert_string_equal(pr.messages.data, "[{\"role\":\"user\",\"content\":\"What is up?\"}]");
  cb_workload_prompt_free(&pr);
  cb_dataset_free(ds);
}

/* Roles other than human/gpt, a conversation opened by the assistant, a one-turn and an
 * unanswered conversation (skipped), an empty reply (asks 1 token); vLLM's filters. */
static void test_sharegpt_mixed_and_filters(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("sharegpt", "sharegpt_mixed.json", NULL);
  assert_int_equal(cb_dataset_size(ds), 2);
  assert_int_equal(cb_dataset_skipped(ds), 2);
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  render(ds, 0, &pr);
  assert_string_equal(pr.text.data, "Thanks. What is a river?");
  assert_int_equal(item(ds, 0).input_len, 7);  /* Thanks|.|What|is|a|river|? */
  assert_int_equal(item(ds, 0).output_len, 10); /* A|river|is|a|natura l|stream|of|water|. */
  assert_int_equal(item(ds, 1).input_len, 1);
  assert_int_equal(item(ds, 1).output_len, 1);
  cb_dataset_free(ds);

  cb_dataset_params p;
  cb_dataset_default_params(&p);
  cb_dataset_params_vllm_filter(&p);
  ds = open_ok("sharegpt", "sharegpt_mixed.json", &p);
  assert_int_equal(cb_dataset_size(ds), 1); /* "Hi" is shorter than 4 tokens */
  assert_int_equal(cb_dataset_skipped(ds), 3);
  cb_dataset_free(ds);

  cb_dataset_default_params(&p);
  p.output_len_override = 100;
  ds = open_ok("sharegpt", "sharegpt_mixed.json", &p);
  assert_int_equal(item(ds, 0).output_len, 100);
  cb_workload_prompt_free(&pr);
  cb_dataset_free(ds);
}

/* ---- hand-written formats ---------------------------------------------------------------- */

static void test_jsonl(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("jsonl", "prompts_good.jsonl", NULL);
  assert_int_equal(cb_dataset_size(ds), 5); /* the blank line 2 is skipped */
  static const struct {
    uint32_t line, in, out;
    const char *text;
  } want[] = {{1, 6, 32, "Write a haiku about rivers."}, /* numbers: number|s */
              {3, 13, 64, "Summarize the plot of a short story in two sentences."},
              {4, 1, 0, "Hello"},
              {5, 6, 0, "Name three prime numbers."},
              {6, 2, 5, "CRLF line"}};
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  for (size_t i = 0; i < 5; i++) {
    cb_dataset_item it = item(ds, i);
    assert_int_equal(it.line, want[i].line);
    assert_int_equal(it.input_len, want[i].in);
    assert_int_equal(it.output_len, want[i].out);
    render(ds, i, &pr);
    assert_string_equal(pr.text.data, want[i].text);
  }
  cb_dataset_free(ds);

  /* Configurable fields. */
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.prompt_field = "question";
  open_fails("jsonl", "prompts_good.jsonl", &p, CB_ERR_PARSE, 1,
             "field 'question': expected a non-empty string (the prompt), got nothing");
  cb_dataset_default_params(&p);
  p.output_field = "max_tokens";
  ds = open_ok("jsonl", "prompts_good.jsonl", &p);
  assert_int_equal(item(ds, 0).output_len, 0); /* output_len is no longer read */
  assert_int_equal(item(ds, 1).output_len, 64);
  cb_workload_prompt_free(&pr);
  cb_dataset_free(ds);
}

static void test_chat(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("chat", "chat_good.jsonl", NULL);
  assert_int_equal(cb_dataset_size(ds), 3);
  assert_int_equal(item(ds, 0).input_len, 6);   /* You|are|terse|. + Hi|there */
  assert_int_equal(item(ds, 0).output_len, 16);
  assert_int_equal(item(ds, 1).input_len, 12);  /* 5 + Rivers|flow|. + More|,|please|. */
  assert_int_equal(item(ds, 1).output_len, 0);
  assert_int_equal(item(ds, 2).input_len, 6);   /* Descri be|a|stone|bridge|. (the text part) */
  assert_int_equal(item(ds, 2).output_len, 40); /* max_completion_tokens */
  cb_workload_prompt pr;
  cb_workload_prompt_init(&pr);
  render(ds, 0, &pr);
  assert_string_equal(pr.messages.data,
                      "[{\"role\":\"system\",\"content\":\"You are terse.\"},"
                      "{\"role\":\"user\",\"content\":\"Hi there\"}]");
  assert_int_equal(pr.text.len, 0);
  render(ds, 2, &pr);
  assert_string_equal(pr.messages.data,
                      "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Describe "
                      "a stone bridge.\"}]}]");
  cb_workload_prompt_free(&pr);
  cb_dataset_free(ds);
}

static void test_trace_generic_csv_sorted(void **state) {
  (void)state;
  cb_dataset *ds = open_ok("trace", "trace_generic_unsorted.csv", NULL);
  assert_int_equal(cb_dataset_size(ds), 3);
  /* Rows by time, ties in file order: lines 4 and 5 at 1000.5 ms, then line 2. */
  cb_dataset_item a = item(ds, 0), b = item(ds, 1), c = item(ds, 2);
  assert_int_equal(a.line, 4);
  assert_int_equal(a.input_len, 1200);
  assert_int_equal(a.output_len, 3);
  assert_int_equal(a.timestamp_ns, 0);
  assert_int_equal(b.line, 5);
  assert_int_equal(b.timestamp_ns, 0);
  assert_int_equal(c.line, 2);
  assert_int_equal(c.timestamp_ns, 1499500000);
  assert_int_equal(c.input_len, 300);
  cb_dataset_free(ds);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors_name_file_and_line(void **state) {
  (void)state;
  open_fails("jsonl", "prompts_bad_json.jsonl", NULL, CB_ERR_PARSE, 3, "invalid JSON");
  open_fails("jsonl", "prompts_bad_output.jsonl", NULL, CB_ERR_PARSE, 2,
             "field 'output_len': expected a whole number >= 1, got -3");
  open_fails("jsonl", "prompts_bad_missing.jsonl", NULL, CB_ERR_PARSE, 4,
             "field 'prompt': expected a non-empty string (the prompt), got nothing");
  open_fails("chat", "chat_bad_role.jsonl", NULL, CB_ERR_PARSE, 2,
             "field 'messages[0].role': expected a non-empty string, got nothing");
  open_fails("chat", "prompts_good.jsonl", NULL, CB_ERR_PARSE, 1,
             "field 'messages': expected a non-empty array of {role, content}, got nothing");
  open_fails("sharegpt", "sharegpt_bad_role.json", NULL, CB_ERR_PARSE, 9,
             "conversation 1 (id 'odd_1'): field 'conversations[1].from': expected human, user, "
             "gpt, assistant, chatgpt, bing, bard, model or system, got 'narrator'");
  open_fails("sharegpt", "sharegpt_bad_syntax.json", NULL, CB_ERR_PARSE, 5,
             "conversation 1: invalid JSON");
  open_fails("sharegpt", "prompts_good.jsonl", NULL, CB_ERR_PARSE, 1,
             "expected a JSON array of conversations");
  open_fails("trace", "trace_bad_time.csv", NULL, CB_ERR_PARSE, 3,
             "field 'TIMESTAMP': expected a time 'YYYY-MM-DD HH:MM:SS.fffffff' or milliseconds, "
             "got '2023-11-16 18:17:0x.0319600'");
  open_fails("trace", "trace_bad_length.jsonl", NULL, CB_ERR_PARSE, 2,
             "field 'input_length': expected a whole number of tokens >= 0, got \"abc\"");
  open_fails("trace", "trace_bad_header.csv", NULL, CB_ERR_PARSE, 1,
             "CSV header: expected columns TIMESTAMP, ContextTokens, GeneratedTokens");
  open_fails("jsonl", "no_such_file.jsonl", NULL, CB_ERR_IO, 0, "cannot open");
  /* The file cap (docs/limits.md), here made small: every kind stops at it. */
  cb_dataset_params small;
  cb_dataset_default_params(&small);
  small.max_file_bytes = 1000;
  open_fails("sharegpt", "sharegpt_fastchat_first40.json", &small, CB_ERR_CAPACITY, 0,
             "the file is over the limit of 1000 bytes");
  open_fails("trace", "mooncake_conversation_first200.jsonl", &small, CB_ERR_CAPACITY, 0,
             "the file is over the limit of 1000 bytes");

  cb_dataset *ds;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_dataset_open("csv:x.csv", NULL, NULL, 0, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "unknown dataset 'csv:x.csv'"));
  assert_int_equal(cb_dataset_open("jsonl:", NULL, NULL, 0, &ds, &err), CB_ERR_INVALID);
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.input_len.kind = CB_LEN_UNIFORM;
  p.input_len.spread = 1.5;
  assert_int_equal(cb_dataset_open("synthetic", &p, NULL, 0, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "input_len: uniform range ratio must be in [0, 1), got 1.5"));
  cb_dataset_default_params(&p);
  p.input_len.mean = 99999999; /* over the token cap */
  assert_int_equal(cb_dataset_open("synthetic", &p, NULL, 0, &ds, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "input_len: mean must be in [1, 16777216] tokens"));
  cb_dataset_default_params(&p);
  p.prefix_count = 3;
  assert_int_equal(cb_dataset_open("synthetic", &p, NULL, 0, &ds, &err), CB_ERR_INVALID);
  assert_null(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mooncake),
      cmocka_unit_test(test_azure),
      cmocka_unit_test(test_sharegpt_first_turn),
      cmocka_unit_test(test_sharegpt_turns),
      cmocka_unit_test(test_sharegpt_mixed_and_filters),
      cmocka_unit_test(test_jsonl),
      cmocka_unit_test(test_chat),
      cmocka_unit_test(test_trace_generic_csv_sorted),
      cmocka_unit_test(test_errors_name_file_and_line),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
