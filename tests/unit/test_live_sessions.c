/*
 * test_live_sessions.c - run --sessions through the public API: the sessions file
 * (its errors at FILE:LINE), the think time distributions, and conversations run as
 * live sessions against the built-in simulator, in a closed loop (users) and an open
 * one (--rate starts sessions): each turn after the reply before it plus the think
 * time the seed draws, with the real replies in its messages; and the simulator's
 * prefix cache taking the conversation so far on later turns.
 */
#define _XOPEN_SOURCE 700
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/alloc.h"
#include "calibench/live_sessions.h"
#include "calibench/sim_run.h"

#define TEST_TMPDIR_PREFIX "cb-live-sessions"
#include "test_tmpdir.h"

/* ---- the sessions file ------------------------------------------------------------- */

static void test_parse(void **state) {
  (void)state;
  const char *text = "{\"id\": \"c1\", \"turns\": [\"hi\", {\"content\": \"more\", \"max_tokens\": 7, "
                     "\"think_time\": \"250ms\"}]}\r\n"
                     "\n"
                     "{\"turns\": [\"only\"]}\n";
  cb_conversations c;
  cb_error err;
  assert_int_equal(cb_conversations_parse(text, strlen(text), "s.jsonl", &c, &err), CB_OK);
  assert_int_equal(c.count, 2);
  assert_string_equal(c.items[0].id, "c1");
  assert_null(c.items[0].system);
  assert_int_equal(c.items[0].n_turns, 2);
  assert_string_equal(c.items[0].turns[0].content, "hi");
  assert_int_equal(c.items[0].turns[0].max_tokens, -1);
  assert_int_equal(c.items[0].turns[0].think_ns, -1);
  assert_string_equal(c.items[0].turns[1].content, "more");
  assert_int_equal(c.items[0].turns[1].max_tokens, 7);
  assert_int_equal(c.items[0].turns[1].think_ns, 250000000);
  assert_string_equal(c.items[1].id, "line 3");
  assert_string_equal(c.source, "s.jsonl");
  cb_conversations_free(&c);
}

static void test_bad_files(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"{\"turns\":[\"a\"]}\n{\"turns\":[\"a\",", "s.jsonl:2:"},
      {"{\"turns\":[\"a\"]}\n[1]\n", "s.jsonl:2: expected a JSON object per line"},
      {"\n{\"turns\":[]}\n", "s.jsonl:2: field 'turns': expected a non-empty array"},
      {"{\"id\":\"x\"}\n", "s.jsonl:1: field 'turns': expected a non-empty array of user turns, got nothing"},
      {"{\"turns\":[\"a\",3]}\n", "s.jsonl:1: field 'turns[1]': expected a non-empty string"},
      {"{\"turns\":[\"a\",{\"content\":\"\"}]}\n", "s.jsonl:1: field 'turns[1].content': expected a non-empty string"},
      {"{\"turns\":[\"a\",{\"content\":\"b\",\"max_tokens\":0}]}\n",
       "s.jsonl:1: field 'turns[1].max_tokens': expected an integer in [1, 16777216], got 0"},
      {"{\"turns\":[\"a\",{\"content\":\"b\",\"think_time\":\"soon\"}]}\n",
       "s.jsonl:1: field 'turns[1].think_time': expected a duration"},
      {"{\"turns\":[{\"content\":\"a\",\"think_time\":\"1s\"}]}\n",
       "s.jsonl:1: field 'turns[0].think_time': expected none on the first turn"},
      {"{\"turns\":[{\"content\":\"a\",\"role\":\"user\"}]}\n",
       "s.jsonl:1: field 'turns[0].role': expected one of content, max_tokens, think_time"},
      {"{\"turns\":[\"a\"],\"messages\":[]}\n", "s.jsonl:1: field 'messages': expected id, system or turns"},
      {"{\"id\":5,\"turns\":[\"a\"]}\n", "s.jsonl:1: field 'id': expected a string, got 5"},
      {"{\"system\":\"\",\"turns\":[\"a\"]}\n", "s.jsonl:1: field 'system': expected a non-empty string"},
      {"\n\n", "s.jsonl: no conversations"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cb_conversations c;
    cb_error err;
    cb_error_clear(&err);
    assert_int_equal(cb_conversations_parse(cases[i].text, strlen(cases[i].text), "s.jsonl", &c, &err),
                     CB_ERR_PARSE);
    if (strncmp(err.msg, cases[i].want, strlen(cases[i].want)))
      fail_msg("case %zu: got '%s', want '%s...'", i, err.msg, cases[i].want);
    assert_null(c.items);
  }
  cb_conversations c;
  cb_error err;
  assert_int_equal(cb_conversations_load("/nonexistent/cb-sessions.jsonl", &c, &err), CB_ERR_IO);
  assert_non_null(strstr(err.msg, "/nonexistent/cb-sessions.jsonl"));
}

/* ---- ShareGPT conversations as sessions (--sharegpt-mode live) ----------------------- */

static void write_file(const char *name, const char *text, char *path, size_t size) {
  snprintf(path, size, "%s/%s", tmp, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* cb_conversations_load_sharegpt or cb_conversations_load_chat. */
typedef cb_status (*conv_loader)(const char *path, const cb_token_counter *counter,
                                 uint32_t output_len_override, cb_conversations *out,
                                 size_t *skipped, cb_error *err);

/* Write text to tmp/name (path is where) and load it: three conversations, one skipped. */
static void load_three(conv_loader load, const char *name, const char *text, char *path,
                       size_t size, cb_conversations *c) {
  write_file(name, text, path, size);
  cb_error err;
  size_t skipped = 99;
  cb_status st = load(path, NULL, 0, c, &skipped, &err);
  if (st != CB_OK) fail_msg("%s: status %d: %s", name, st, err.msg);
  assert_int_equal(skipped, 1);
  assert_int_equal(c->count, 3);
  assert_string_equal(c->source, path);
}

/* Loading path must fail with status want, a message that starts with prefix and holds
 * part (NULL: anything), and no conversations. */
static void load_fails(conv_loader load, const char *path, cb_status want, const char *prefix,
                       const char *part) {
  cb_conversations c;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = load(path, NULL, 0, &c, NULL, &err);
  if (st != want || strncmp(err.msg, prefix, strlen(prefix)) || (part && !strstr(err.msg, part)))
    fail_msg("%s: got status %d '%s', want %d '%s...%s'", path, st, err.msg, want, prefix,
             part ? part : "");
  assert_null(c.items);
}

/* A file (tmp/name) whose one conversation the loader skips is refused, saying want;
 * a file that is not there is an I/O error. */
static void refuses_empty_and_missing(conv_loader load, const char *name, const char *text,
                                      const char *want) {
  char path[512];
  write_file(name, text, path, sizeof path);
  load_fails(load, path, CB_ERR_PARSE, "", want);
  load_fails(load, "/nonexistent/cb-conversations.json", CB_ERR_IO, "", NULL);
}

/* The user turns in order; the reply after each sizes it; a system turn first is the
 * system message; leading replies and turns without a reply have no max_tokens of
 * their own; a conversation with no user turn is skipped. */
static void test_sharegpt(void **state) {
  (void)state;
  char path[512];
  cb_conversations c;
  load_three(cb_conversations_load_sharegpt, "sg.json",
             "[{\"id\": \"a\", \"conversations\": [{\"from\": \"system\", \"value\": \"Be brief.\"},\n"
             "  {\"from\": \"human\", \"value\": \"Hi there\"}, {\"from\": \"gpt\", \"value\": \"Hello! How can I help?\"},\n"
             "  {\"from\": \"human\", \"value\": \"Tell a joke\"}, {\"from\": \"gpt\", \"value\": \"\"}]},\n"
             " {\"conversations\": [{\"from\": \"gpt\", \"value\": \"Welcome.\"}, {\"from\": \"user\", \"value\": \"Thanks\"}]},\n"
             " {\"id\": \"none\", \"conversations\": [{\"from\": \"gpt\", \"value\": \"alone\"}]},\n"
             " {\"id\": \"d\", \"conversations\": [{\"from\": \"human\", \"value\": \"one\"},\n"
             "  {\"from\": \"human\", \"value\": \"two\"}, {\"from\": \"bard\", \"value\": \"three four\"}]}]\n",
             path, sizeof path, &c);
  const cb_conversation *a = &c.items[0], *b = &c.items[1], *d = &c.items[2];
  assert_string_equal(a->id, "a");
  assert_string_equal(a->system, "Be brief.");
  assert_int_equal(a->n_turns, 2);
  assert_string_equal(a->turns[0].content, "Hi there");
  assert_int_equal(a->turns[0].max_tokens,
                   (int64_t)cb_workload_approx_count(NULL, "Hello! How can I help?", 22));
  assert_true(a->turns[0].max_tokens > 1);
  assert_int_equal(a->turns[1].max_tokens, 1); /* an empty reply: one token */
  assert_int_equal(a->turns[0].think_ns, -1);
  assert_string_equal(b->id, "conversation 1");
  assert_null(b->system);
  assert_int_equal(b->n_turns, 1);
  assert_string_equal(b->turns[0].content, "Thanks");
  assert_int_equal(b->turns[0].max_tokens, -1); /* no reply recorded: the run's */
  assert_int_equal(d->n_turns, 2);
  assert_int_equal(d->turns[0].max_tokens, -1);
  assert_int_equal(d->turns[1].max_tokens, (int64_t)cb_workload_approx_count(NULL, "three four", 10));
  cb_conversations_free(&c);
  /* output_len_override asks every answered turn for that many */
  cb_error err;
  assert_int_equal(cb_conversations_load_sharegpt(path, NULL, 7, &c, NULL, &err), CB_OK);
  assert_int_equal(c.items[0].turns[0].max_tokens, 7);
  assert_int_equal(c.items[0].turns[1].max_tokens, 7);
  assert_int_equal(c.items[1].turns[0].max_tokens, -1);
  cb_conversations_free(&c);

  /* Bad input: the ShareGPT dataset's messages, FILE:LINE; a file with no user turn. */
  write_file("sg-bad.json",
             "[{\"conversations\": [{\"from\": \"human\", \"value\": \"x\"}]},\n"
             " {\"id\": \"q\", \"conversations\": [{\"from\": \"human\", \"value\": \"x\"},\n"
             "   {\"from\": \"robot\", \"value\": \"y\"}]}]\n",
             path, sizeof path);
  char want[600];
  snprintf(want, sizeof want, "%s:2: conversation 1 (id 'q'): field 'conversations[1].from': "
                              "expected human, user, gpt", path);
  load_fails(cb_conversations_load_sharegpt, path, CB_ERR_PARSE, want, NULL);
  refuses_empty_and_missing(cb_conversations_load_sharegpt, "sg-none.json",
                            "[{\"conversations\": [{\"from\": \"gpt\", \"value\": \"y\"}]}]\n",
                            "no conversation with a user turn (1 skipped)");
}

/* On the FastChat sample (40 conversations cut from ../shared/data's): 80 user turns,
 * each asking for its recorded reply's length, the same lengths as the dataset's turns
 * mode gives its items, in the same order, under the same counter. */
static void test_sharegpt_sample(void **state) {
  (void)state;
  const char *dir = getenv("CB_DATA_DIR");
  assert_non_null(dir);
  char path[512], spec[600];
  snprintf(path, sizeof path, "%s/workload/sharegpt_fastchat_first40.json", dir);
  snprintf(spec, sizeof spec, "sharegpt:%s", path);
  cb_conversations c;
  cb_error err;
  size_t skipped;
  assert_int_equal(cb_conversations_load_sharegpt(path, NULL, 0, &c, &skipped, &err), CB_OK);
  assert_int_equal(c.count, 40);
  assert_int_equal(skipped, 0);
  cb_dataset_params p;
  cb_dataset_default_params(&p);
  p.sharegpt_mode = CB_SHAREGPT_TURNS;
  cb_dataset *ds;
  assert_int_equal(cb_dataset_open(spec, &p, NULL, 1, &ds, &err), CB_OK);
  size_t k = 0;
  for (size_t i = 0; i < c.count; i++) {
    char id[32];
    snprintf(id, sizeof id, "identity_%zu", i);
    assert_string_equal(c.items[i].id, id);
    for (size_t t = 0; t < c.items[i].n_turns; t++, k++) {
      cb_dataset_item it;
      assert_int_equal(cb_dataset_get_item(ds, k, &it, &err), CB_OK);
      assert_int_equal(c.items[i].turns[t].max_tokens, it.output_len);
    }
  }
  assert_int_equal(k, 80);
  assert_int_equal(cb_dataset_size(ds), 80);
  cb_dataset_free(ds);
  cb_conversations_free(&c);
}

/* A chat: dataset: one line per session (the C strings join without newlines until
 * "\n"); line 3 has no user message. */
static const char CHAT[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
    "{\"role\": \"user\", \"content\": \"Hi there\"}, "
    "{\"role\": \"assistant\", \"content\": \"Hello! How can I help?\"}, "
    "{\"role\": \"user\", \"content\": \"Tell a joke\"}], \"max_tokens\": 12}\n"
    "\r\n"
    "{\"messages\": [{\"role\": \"system\", \"content\": \"only\"}]}\n"
    "{\"messages\": [{\"role\": \"assistant\", \"content\": \"Welcome.\"}, "
    "{\"role\": \"user\", \"content\": \"one\"}, "
    "{\"role\": \"user\", \"content\": \"two\"}, "
    "{\"role\": \"assistant\", "
    "\"content\": [{\"type\": \"text\", \"text\": \"three four\"}]}, "
    "{\"role\": \"system\", \"content\": \"late\"}, "
    "{\"role\": \"user\", \"content\": \"five\"}, "
    "{\"role\": \"assistant\", \"content\": \"\"}, "
    "{\"role\": \"user\", \"content\": \"six\"}], "
    "\"max_completion_tokens\": 5}\n"
    "{\"messages\": [{\"role\": \"user\", \"content\": \"last\"}]}\n";

/* A chat: dataset's lines as sessions: the user messages in order, the system message
 * first, the assistant message after each user turn sizing it (not sent), the line's
 * max_tokens for the last user turn without a reply; a line without a user message is
 * skipped; bad lines stop the load at FILE:LINE. */
static void test_chat(void **state) {
  (void)state;
  char path[512];
  cb_conversations c;
  load_three(cb_conversations_load_chat, "chat.jsonl", CHAT, path, sizeof path, &c);
  const cb_conversation *a = &c.items[0], *b = &c.items[1], *d = &c.items[2];
  assert_string_equal(a->id, "line 1");
  assert_string_equal(a->system, "Be brief.");
  assert_int_equal(a->n_turns, 2);
  assert_string_equal(a->turns[0].content, "Hi there");
  assert_string_equal(a->turns[1].content, "Tell a joke");
  assert_int_equal(a->turns[0].max_tokens,
                   (int64_t)cb_workload_approx_count(NULL, "Hello! How can I help?", 22));
  assert_true(a->turns[0].max_tokens > 1);
  assert_int_equal(a->turns[1].max_tokens, 12); /* the line's, for its unanswered last turn */
  assert_int_equal(a->turns[0].think_ns, -1);
  assert_string_equal(b->id, "line 4");
  assert_null(b->system); /* a system message after a user turn is not sent */
  assert_int_equal(b->n_turns, 4);
  const char *want[] = {"one", "two", "five", "six"};
  for (size_t k = 0; k < 4; k++) assert_string_equal(b->turns[k].content, want[k]);
  assert_int_equal(b->turns[0].max_tokens, -1); /* followed by a user turn: the run's */
  assert_int_equal(b->turns[1].max_tokens,
                   (int64_t)cb_workload_approx_count(NULL, "three four", 10));
  assert_int_equal(b->turns[2].max_tokens, 1); /* an empty reply: one token */
  assert_int_equal(b->turns[3].max_tokens, 5); /* max_completion_tokens */
  assert_string_equal(d->id, "line 5");
  assert_int_equal(d->n_turns, 1);
  assert_int_equal(d->turns[0].max_tokens, -1); /* no reply, no max_tokens: the run's */
  cb_conversations_free(&c);
  /* output_len_override asks every answered turn, and the last, for that many */
  cb_error err;
  assert_int_equal(cb_conversations_load_chat(path, NULL, 7, &c, NULL, &err), CB_OK);
  assert_int_equal(c.items[0].turns[0].max_tokens, 7);
  assert_int_equal(c.items[1].turns[0].max_tokens, -1);
  assert_int_equal(c.items[1].turns[2].max_tokens, 7);
  assert_int_equal(c.items[2].turns[0].max_tokens, 7);
  cb_conversations_free(&c);

  /* Bad lines: the chat: dataset's messages, FILE:LINE; a text turn for the parts the
   * live session cannot send; no line with a user message. */
  static const struct {
    const char *line2, *want;
  } bad[] = {
      {"{\"messages\": []}", "field 'messages': expected a non-empty array"},
      {"{\"messages\": [{\"role\": \"user\"}]}", "field 'messages[0].content': expected a string"},
      {"{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": 0}",
       "field 'max_tokens': expected a whole number >= 1"},
      {"{\"messages\": [{\"role\": \"user\", "
       "\"content\": [{\"type\": \"text\", \"text\": \"x\"}]}]}",
       "field 'messages[0].content': expected a non-empty string (live sessions send text turns)"},
      {"{\"messages\": [{\"role\": \"system\", \"content\": \"\"}, "
       "{\"role\": \"user\", \"content\": \"x\"}]}",
       "field 'messages[0].content': expected a non-empty string"},
      {"[1]", "expected a JSON object per line, got an array"},
      {"{\"messages\": ", "invalid JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char file[512], msg[600];
    snprintf(file, sizeof file, "{\"messages\": [{\"role\": \"user\", \"content\": \"ok\"}]}\n%s\n",
             bad[i].line2);
    write_file("chat-bad.jsonl", file, path, sizeof path);
    snprintf(msg, sizeof msg, "%s:2:", path);
    load_fails(cb_conversations_load_chat, path, CB_ERR_PARSE, msg, bad[i].want);
  }
  refuses_empty_and_missing(cb_conversations_load_chat, "chat-none.jsonl",
                            "{\"messages\": [{\"role\": \"system\", \"content\": \"y\"}]}\n",
                            "no line with a user message (1 skipped)");
}

/* ---- think times -------------------------------------------------------------------- */

static void test_think(void **state) {
  (void)state;
  cb_think t;
  cb_error err;
  char text[64];
  assert_int_equal(cb_think_parse("none", &t, &err), CB_OK);
  assert_int_equal(cb_think_draw(&t, NULL), 0);
  assert_int_equal(cb_think_parse("const:1.5s", &t, &err), CB_OK);
  assert_int_equal(cb_think_draw(&t, NULL), 1500000000);
  cb_think_describe(&t, text, sizeof text);
  assert_string_equal(text, "const:1.5s");
  assert_int_equal(cb_think_parse("uniform:100ms,300ms", &t, &err), CB_OK);
  cb_think_describe(&t, text, sizeof text);
  assert_string_equal(text, "uniform:0.1s,0.3s");
  cb_rng rng;
  cb_rng_init(&rng, 9);
  for (int i = 0; i < 1000; i++) {
    uint64_t d = cb_think_draw(&t, &rng);
    assert_true(d >= 100000000 && d <= 300000000);
  }
  /* exp and lognormal: the mean they are given (20000 draws: sd of the mean 0.7%
   * and, for sigma 0.5, 0.38%) */
  const char *means[] = {"exp:2s", "lognormal:2s,0.5"};
  for (int k = 0; k < 2; k++) {
    assert_int_equal(cb_think_parse(means[k], &t, &err), CB_OK);
    double sum = 0;
    for (int i = 0; i < 20000; i++) sum += (double)cb_think_draw(&t, &rng);
    assert_true(fabs(sum / 20000 / 2e9 - 1) < 0.03);
  }
  const char *bad[] = {"exp", "exp:", "exp:-1s", "uniform:2s", "uniform:2s,1s", "lognormal:1s,x",
                       "lognormal:1s,11", "gauss:1s", "const:1s,2s", ""};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    cb_error_clear(&err);
    assert_int_equal(cb_think_parse(bad[i], &t, &err), CB_ERR_PARSE);
    assert_non_null(strstr(err.msg, "expected const:D, exp:MEAN"));
  }
}

/* ---- sessions run live ----------------------------------------------------------------- */

#define MAX_REQ 64

/* What went out (the live source's requests, seen through a spy) and what came back. */
typedef struct seen {
  cb_live_sessions *ls;
  cb_session_live_fn inner;
  void *inner_ctx;
  struct {
    uint64_t session, at_ns;
    uint32_t turn;
    char *messages;
  } req[MAX_REQ];
  size_t n_req;
  cb_record rec[MAX_REQ]; /* by index; output_text copied */
  int have[MAX_REQ];
  size_t n_rec, in_flight, max_in_flight;
} seen;

static int spy_next(void *ctx, cb_session_live_request *out) {
  seen *s = ctx;
  int got = s->inner(s->inner_ctx, out);
  if (got != 1) return got;
  assert_true(out->index < MAX_REQ);
  assert_true(out->has_session);
  s->req[out->index].session = out->session;
  s->req[out->index].turn = out->turn;
  s->req[out->index].at_ns = out->at_ns;
  s->req[out->index].messages = cb_strndup(out->messages_json, out->messages_json_len);
  s->n_req++;
  if (++s->in_flight > s->max_in_flight) s->max_in_flight = s->in_flight;
  return 1;
}

static void on_rec(void *ctx, const cb_record *r) {
  seen *s = ctx;
  assert_true(r->index < MAX_REQ);
  s->rec[r->index] = *r;
  s->rec[r->index].output_text = cb_strdup(r->output_text ? r->output_text : "");
  s->rec[r->index].chunk_ns = NULL;
  s->rec[r->index].attempts = NULL;
  s->have[r->index] = 1;
  s->n_rec++;
  s->in_flight--;
}

/* Three conversations of 2-4 turns; the second has a system message and its last turn
 * its own think time. */
static const char SESSIONS[] =
    "{\"id\":\"a\",\"turns\":[\"Tell me about cats.\",\"And dogs?\",\"Which is calmer?\",\"Thanks!\"]}\n"
    "{\"id\":\"b\",\"system\":\"Be brief.\",\"turns\":[\"What is 2+2?\",{\"content\":\"Why?\",\"think_time\":\"70ms\"}]}\n"
    "{\"id\":\"c\",\"turns\":[\"Name a color.\",\"Another one.\",\"And a third.\"]}\n";

/* SESSIONS, parsed as mem.jsonl. */
static void parse_sessions(cb_conversations *convs) {
  cb_error err;
  cb_status st = cb_conversations_parse(SESSIONS, strlen(SESSIONS), "mem.jsonl", convs, &err);
  if (st != CB_OK) fail_msg("SESSIONS: status %d: %s", st, err.msg);
}

static void config(cb_session_config *cfg, const char *dir) {
  cb_session_config_init(cfg);
  cfg->cls.data.input_len.mean = 64;
  cfg->cls.data.output_len.mean = 12;
  cfg->sim.time_scale = 0.05;
  cfg->no_report = 1;
  cfg->workload.seed = 42;
  snprintf(cfg->out_dir, sizeof cfg->out_dir, "%s/%s", tmp, dir);
}

/* Run the sessions; check turn order, think times, context threading; return what went
 * out and came back (seen_free frees it). */
static seen *run_sessions(cb_session_config *cfg, const cb_conversations *convs, const char *think) {
  seen *s = cb_calloc(1, sizeof *s);
  cb_error err;
  cb_live_sessions_params p = {.convs = convs, .seed = cfg->workload.seed,
                               .arrival = cfg->workload.arrival, .users = cfg->workload.concurrency,
                               .max_tokens = 12};
  assert_int_equal(cb_think_parse(think, &p.think, &err), CB_OK);
  assert_int_equal(cb_live_sessions_new(&p, &s->ls, &err), CB_OK);
  cfg->on_record = on_rec;
  cfg->record_ctx = s;
  cb_live_sessions_attach(s->ls, cfg);
  s->inner = cfg->live;
  s->inner_ctx = cfg->live_ctx;
  cfg->live = spy_next;
  cfg->live_ctx = s;
  cb_session *ses;
  assert_int_equal(cb_session_open(cfg, &ses, &err), CB_SESSION_OK);
  cb_session_result res;
  cb_session_outcome o = cb_session_run(ses, &res, &err);
  if (o != CB_SESSION_OK) fail_msg("run: %s", err.msg);
  size_t turns = 0;
  for (size_t i = 0; i < convs->count; i++) turns += convs->items[i].n_turns;
  assert_int_equal(s->n_req, turns);
  assert_int_equal(s->n_rec, turns);
  assert_int_equal(cb_live_sessions_turns_unsent(s->ls), 0);
  cb_session_result_free(&res);
  cb_session_close(ses);

  double lag_sum = 0, lags[MAX_REQ];
  size_t n_lag = 0;
  /* Per session: turns in order, each sent no sooner than the reply before it ended
   * plus the think time the seed draws (or the turn's own), and not much later; its
   * messages are the user turns with the real replies between them. */
  for (size_t c = 0; c < convs->count; c++) {
    cb_rng rng;
    cb_rng_init_stream(&rng, cfg->workload.seed, CB_LIVE_SESSIONS_STREAM, c);
    const cb_record *prev = NULL;
    const char *replies[8] = {0};
    for (uint32_t t = 0; t < convs->items[c].n_turns; t++) {
      size_t i = 0;
      while (i < MAX_REQ && !(s->have[i] && s->req[i].session == c && s->req[i].turn == t)) i++;
      if (i == MAX_REQ) fail_msg("session %zu turn %u: no record", c, t);
      const cb_record *r = &s->rec[i];
      assert_true(r->has_session);
      assert_int_equal(r->session, c);
      assert_int_equal(r->turn, t);
      assert_true(cb_record_ok(r));
      if (prev) {
        const cb_conv_turn *ct = &convs->items[c].turns[t];
        uint64_t think_ns = ct->think_ns >= 0 ? (uint64_t)ct->think_ns : cb_think_draw(&p.think, &rng);
        assert_int_equal(s->req[i].at_ns, prev->end_ns + think_ns);
        if (r->sent_ns < prev->end_ns + think_ns)
          fail_msg("session %zu turn %u: sent %llu before reply end %llu + think %llu", c, t,
                   (unsigned long long)r->sent_ns, (unsigned long long)prev->end_ns,
                   (unsigned long long)think_ns);
        lags[n_lag] = (double)(r->sent_ns - (prev->end_ns + think_ns));
        lag_sum += lags[n_lag++];
      }
      json_error_t je;
      json_t *msgs = json_loads(s->req[i].messages, 0, &je);
      assert_true(json_is_array(msgs));
      const char *system = convs->items[c].system;
      size_t first = system ? 1 : 0; /* the system message opens the conversation */
      assert_int_equal(json_array_size(msgs), first + 2 * t + 1);
      if (system) {
        json_t *m = json_array_get(msgs, 0);
        assert_string_equal(json_string_value(json_object_get(m, "role")), "system");
        assert_string_equal(json_string_value(json_object_get(m, "content")), system);
      }
      for (uint32_t k = 0; k <= t; k++) {
        json_t *u = json_array_get(msgs, first + 2 * k);
        assert_string_equal(json_string_value(json_object_get(u, "role")), "user");
        assert_string_equal(json_string_value(json_object_get(u, "content")),
                            convs->items[c].turns[k].content);
        if (k == t) break;
        json_t *a = json_array_get(msgs, first + 2 * k + 1);
        assert_string_equal(json_string_value(json_object_get(a, "role")), "assistant");
        assert_true(strlen(replies[k]) > 0);
        assert_string_equal(json_string_value(json_object_get(a, "content")), replies[k]);
      }
      json_decref(msgs);
      replies[t] = r->output_text;
      prev = r;
    }
  }
  /* The runner sends a turn when its think time is up (a timer at that time), not at
   * its next 20 ms tick: a median lag under 5 ms on a loaded machine (the tick alone
   * gives about 10). */
  if (n_lag) {
    /* the median: one turn held up 50 ms by a loaded machine (a parallel ctest) moves
     * the mean of six past 5 ms, and the tick would delay every turn */
    for (size_t i = 1; i < n_lag; i++)
      for (size_t j = i; j > 0 && lags[j - 1] > lags[j]; j--) {
        double t = lags[j];
        lags[j] = lags[j - 1];
        lags[j - 1] = t;
      }
    double median = n_lag % 2 ? lags[n_lag / 2] : (lags[n_lag / 2 - 1] + lags[n_lag / 2]) / 2;
    print_message("lag of %zu turns after their think time: mean %.3f ms, median %.3f ms%s\n",
                  n_lag, lag_sum / n_lag / 1e6, median / 1e6,
                  cfg->virtual_time ? " (virtual time)" : "");
    assert_true(median < 5e6);
    /* In virtual time a turn goes out at its time exactly. */
    if (cfg->virtual_time) assert_true(lag_sum == 0);
  }
  return s;
}

/* s (from cb_calloc) and all it holds. */
static void seen_free(seen *s) {
  for (size_t i = 0; i < MAX_REQ; i++) {
    cb_free(s->req[i].messages);
    if (s->have[i]) cb_free(s->rec[i].output_text);
  }
  cb_live_sessions_free(s->ls);
  cb_free(s);
}

/* Two users for three sessions: never more than two turns in flight, and two at once
 * at the start; the manifest names the sessions' source, think time and mode. */
static void test_closed(void **state) {
  (void)state;
  cb_conversations convs;
  parse_sessions(&convs);
  cb_session_config cfg;
  config(&cfg, "closed");
  cfg.workload.concurrency = 2;
  cfg.sessions_path = "mem.jsonl";
  cfg.think_time = "exp:0.03s";
  seen *s = run_sessions(&cfg, &convs, "exp:30ms");
  assert_int_equal(s->max_in_flight, 2);
  /* the third session starts only when a user is free: after a session ended */
  size_t first_c = 0;
  while (!(s->req[first_c].session == 2 && s->req[first_c].turn == 0)) first_c++;
  int ended = 0;
  for (size_t i = 0; i < MAX_REQ; i++)
    if (s->have[i] && s->req[i].turn + 1 == convs.items[s->req[i].session].n_turns &&
        s->rec[i].end_ns <= s->rec[first_c].sent_ns)
      ended = 1;
  assert_true(ended);
  char path[1400];
  snprintf(path, sizeof path, "%s/manifest.json", cfg.out_dir);
  json_error_t je;
  json_t *man = json_load_file(path, JSON_DECODE_INT_AS_REAL, &je); /* 64-bit seeds */
  assert_non_null(man);
  json_t *ses = json_object_get(man, "sessions");
  assert_string_equal(json_string_value(json_object_get(ses, "source")), "mem.jsonl");
  assert_string_equal(json_string_value(json_object_get(ses, "think_time")), "exp:0.03s");
  assert_string_equal(json_string_value(json_object_get(ses, "mode")), "closed");
  json_decref(man);
  /* records.jsonl carries each turn's session and index */
  snprintf(path, sizeof path, "%s/records.jsonl", cfg.out_dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[65536];
  size_t n = 0;
  while (fgets(line, sizeof line, f)) {
    json_t *o = json_loads(line, 0, &je);
    assert_true(json_is_integer(json_object_get(o, "session")));
    assert_true(json_is_integer(json_object_get(o, "turn")));
    json_decref(o);
    n++;
  }
  fclose(f);
  assert_int_equal(n, 9);
  seen_free(s);
  cb_session_config_free(&cfg);
  cb_conversations_free(&convs);
}

/* --rate starts sessions: each session's first turn is scheduled at the seed's
 * arrival times (Poisson at 20/s: the first at 0), whatever the other sessions do. */
static void test_open(void **state) {
  (void)state;
  cb_conversations convs;
  parse_sessions(&convs);
  cb_session_config cfg;
  config(&cfg, "open");
  cfg.workload.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 20, .burstiness = 1,
                                             .trace_speed = 1};
  cfg.workload.concurrency = 0;
  seen *s = run_sessions(&cfg, &convs, "uniform:10ms,40ms");
  cb_arrival_gen g;
  cb_arrival_gen_init(&g, &cfg.workload.arrival, cfg.workload.seed, CB_LIVE_SESSIONS_STREAM + 1, 0);
  for (size_t c = 0; c < convs.count; c++) {
    double t = cb_arrival_gen_next_s(&g);
    size_t i = 0;
    while (!(s->req[i].session == c && s->req[i].turn == 0)) i++;
    assert_int_equal(s->req[i].at_ns, (uint64_t)(t * 1e9));
    assert_int_equal(s->rec[i].scheduled_ns, (uint64_t)(t * 1e9));
    assert_true(s->rec[i].sent_ns >= s->rec[i].scheduled_ns);
    if (c == 0) assert_true(t == 0);
  }
  seen_free(s);
  cb_session_config_free(&cfg);
  cb_conversations_free(&convs);
}

/* sim run: the same sessions in virtual time, closed (two users) and open (--rate
 * starts sessions): run_sessions' checks hold, each later turn sent exactly at its
 * reply's end plus its think time; the first turns of an open loop at the arrival
 * times; and the same seed gives the same turns at the same times. */
static void test_virtual(void **state) {
  (void)state;
  cb_conversations convs;
  parse_sessions(&convs);
  uint64_t first_end[2] = {0, 0};
  for (int open = 0; open <= 1; open++)
    for (int again = 0; again <= 1; again++) {
      cb_session_config cfg;
      char dir[64];
      snprintf(dir, sizeof dir, "virtual-%s-%d", open ? "open" : "closed", again);
      config(&cfg, dir);
      cfg.virtual_time = 1;
      if (open) {
        cfg.workload.arrival = (cb_arrival_params){.kind = CB_ARRIVAL_POISSON, .rate = 20,
                                                   .burstiness = 1, .trace_speed = 1};
        cfg.workload.concurrency = 0;
      } else {
        cfg.workload.concurrency = 2;
      }
      seen *s = run_sessions(&cfg, &convs, "uniform:10ms,40ms");
      if (!open) assert_int_equal(s->max_in_flight, 2);
      uint64_t last = 0;
      for (size_t i = 0; i < MAX_REQ; i++)
        if (s->have[i] && s->rec[i].end_ns > last) last = s->rec[i].end_ns;
      if (!again) first_end[open] = last;
      else assert_int_equal(last, first_end[open]); /* the same seed: the same run */
      if (open) {
        cb_arrival_gen g;
        cb_arrival_gen_init(&g, &cfg.workload.arrival, cfg.workload.seed, CB_LIVE_SESSIONS_STREAM + 1, 0);
        for (size_t c = 0; c < convs.count; c++) {
          double t = cb_arrival_gen_next_s(&g);
          size_t i = 0;
          while (!(s->req[i].session == c && s->req[i].turn == 0)) i++;
          /* the live source's clock is the records' (sim run's records begin at
           * CB_SIM_VRUN_T0_NS, so the session at 0 goes then) */
          uint64_t at = (uint64_t)(t * 1e9);
          assert_int_equal(s->rec[i].sent_ns, at > CB_SIM_VRUN_T0_NS ? at : CB_SIM_VRUN_T0_NS);
        }
      }
      seen_free(s);
      cb_session_config_free(&cfg);
    }
  cb_conversations_free(&convs);
}


/* A chat: dataset's sessions run (virtual time, one user): each turn's messages are the
 * system message, the user turns and the simulator's real replies (run_sessions checks
 * them), never the recorded assistant messages; each turn asks for the max_tokens the
 * reader gave it (12, the run's, where none). */
static void test_chat_live(void **state) {
  (void)state;
  char path[512];
  write_file("chat-live.jsonl", CHAT, path, sizeof path);
  cb_conversations convs;
  cb_error err;
  assert_int_equal(cb_conversations_load_chat(path, NULL, 0, &convs, NULL, &err), CB_OK);
  cb_session_config cfg;
  config(&cfg, "chat-live");
  cfg.virtual_time = 1;
  cfg.workload.concurrency = 1;
  seen *s = run_sessions(&cfg, &convs, "none");
  assert_int_equal(s->n_req, 7);
  int at_max = 0;
  for (size_t i = 0; i < MAX_REQ; i++) {
    if (!s->have[i]) continue;
    assert_null(strstr(s->req[i].messages, "Hello! How can I help?"));
    assert_null(strstr(s->req[i].messages, "Welcome."));
    const cb_conv_turn *t = &convs.items[s->req[i].session].turns[s->req[i].turn];
    int64_t max_tokens = t->max_tokens >= 0 ? t->max_tokens : 12;
    /* the simulator stops at its drawn length or at max_tokens ("length") */
    assert_true(s->rec[i].output_tokens >= 1 && s->rec[i].output_tokens <= max_tokens);
    if (!strcmp(s->rec[i].finish_reason, "length"))
      assert_int_equal(s->rec[i].output_tokens, max_tokens);
    else
      assert_string_equal(s->rec[i].finish_reason, "stop");
    at_max += s->rec[i].output_tokens == max_tokens;
  }
  print_message("chat: %d of 7 turns stopped at their max_tokens\n", at_max);
  assert_true(at_max > 0);
  seen_free(s);
  cb_conversations_free(&convs);
}

/* The simulator's prefix cache: turn k+1's prompt starts with turn k's prompt and
 * reply token for token, so later turns find it cached and their TTFT drops; with
 * prefix caching off they find nothing and pay the whole prefill again. */
static void test_prefix_cache(void **state) {
  (void)state;
  /* a long first turn (~3000 tokens), short turns after it */
  cb_buf text;
  cb_buf_init(&text, 0);
  for (int c = 0; c < 2; c++) {
    cb_buf_append_str(&text, "{\"turns\":[\"");
    for (int w = 0; w < 600; w++) cb_buf_appendf(&text, "word%d item%d ", c, w);
    cb_buf_append_str(&text, "\",\"go on\",\"and then?\"]}\n");
  }
  cb_conversations convs;
  cb_error err;
  assert_int_equal(cb_conversations_parse(text.data, text.len, "mem.jsonl", &convs, &err), CB_OK);
  for (int virtual_time = 0; virtual_time <= 1; virtual_time++) {
  double later_ttft[2] = {0, 0};
  for (int caching = 0; caching <= 1; caching++) {
    cb_session_config cfg;
    char dir[64];
    snprintf(dir, sizeof dir, "cache-%s%s", caching ? "on" : "off", virtual_time ? "-virtual" : "");
    config(&cfg, dir);
    cfg.virtual_time = virtual_time;
    cfg.sim.time_scale = 1;
    cfg.sim.engine.enable_prefix_caching = caching;
    cfg.workload.concurrency = 1;
    seen *s = run_sessions(&cfg, &convs, "none");
    int n = 0;
    for (size_t i = 0; i < MAX_REQ; i++) {
      if (!s->have[i] || s->req[i].turn == 0) continue;
      const cb_record *r = &s->rec[i];
      const cb_record *before = NULL; /* the same session's turn before */
      for (size_t j = 0; j < MAX_REQ; j++)
        if (s->have[j] && s->req[j].session == s->req[i].session && s->req[j].turn + 1 == s->req[i].turn)
          before = &s->rec[j];
      assert_non_null(before);
      if (caching) /* all of the turn before, prompt and reply, but its last partial block */
        assert_true(r->cached_tokens >= before->prompt_tokens + before->output_tokens - 16);
      else
        assert_true(r->cached_tokens <= 0);
      later_ttft[caching] += (double)(r->first_content_ns - r->sent_ns);
      n++;
    }
    assert_int_equal(n, 4);
    later_ttft[caching] /= n;
    seen_free(s);
    cb_session_config_free(&cfg);
  }
  print_message("later turns' mean TTFT%s: %.2f ms with prefix caching, %.2f ms without\n",
                virtual_time ? " (sim run)" : "", later_ttft[1] / 1e6, later_ttft[0] / 1e6);
  assert_true(later_ttft[1] < 0.5 * later_ttft[0]);
  }
  cb_conversations_free(&convs);
  cb_buf_free(&text);
}

/* What the sessions cannot follow is refused with why. */
static void test_refused(void **state) {
  (void)state;
  cb_conversations convs;
  parse_sessions(&convs);
  cb_live_sessions *ls;
  cb_error err;
  cb_live_sessions_params p = {.convs = &convs, .arrival = {.kind = CB_ARRIVAL_TRACE}};
  assert_int_equal(cb_live_sessions_new(&p, &ls, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "not a trace's timestamps"));
  p.arrival.kind = CB_ARRIVAL_CLOSED;
  assert_int_equal(cb_live_sessions_new(&p, &ls, &err), CB_ERR_INVALID);
  assert_non_null(strstr(err.msg, "--concurrency >= 1"));
  cb_conversations_free(&convs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),       cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_think),       cmocka_unit_test(test_closed),
      cmocka_unit_test(test_open),        cmocka_unit_test(test_prefix_cache),
      cmocka_unit_test(test_virtual),     cmocka_unit_test(test_refused),
      cmocka_unit_test(test_sharegpt),    cmocka_unit_test(test_sharegpt_sample),
      cmocka_unit_test(test_chat),        cmocka_unit_test(test_chat_live),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
