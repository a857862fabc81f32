/*
 * test_tok_resolve.c - cb_tok_resolve on fake Hugging Face hub caches built in a temp
 * dir as the hub lays them out (models--org--name/{blobs,refs/main,snapshots/<commit>/
 * tokenizer.json -> ../../blobs/<hash>}): refs/main chosen over a newer snapshot, the
 * newest snapshot when refs/main is missing or its snapshot has no tokenizer.json, a
 * dangling link ignored, the cache directory's precedence (HF_HUB_CACHE,
 * HUGGINGFACE_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME) one variable at a time, ~
 * expansion, the --model fallback, paths and names that are not repo ids, and the
 * message that lists where it looked.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "calibench/tok.h"
#include "tok/tok_internal.h"
#include "test_skip.h"

#define COMMIT_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define COMMIT_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define COMMIT_C "cccccccccccccccccccccccccccccccccccccccc"

/* A tokenizer.json with one merge: "ab" is one token. */
static const char TOKJSON[] =
    "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]}}";

static char root[256];

static void pathf(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, cap, fmt, ap);
  va_end(ap);
  assert_true(n > 0 && (size_t)n < cap);
}

static void mkdirs(const char *path) {
  char p[512];
  pathf(p, sizeof p, "%s", path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(p, 0755);
      *s = '/';
    }
  mkdir(p, 0755);
}

static void write_file(const char *path, const char *data) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(data, f);
  fclose(f);
}

/* A blob and a snapshot's link to it, as hf_hub_download leaves them; `age` seconds
 * in the past is the link's own mtime (when the file was downloaded). */
static void put_snapshot(const char *cache, const char *repo, const char *commit,
                         const char *blob, long age) {
  char p[512], link[512];
  pathf(p, sizeof p, "%s/%s/blobs", cache, repo);
  mkdirs(p);
  pathf(p, sizeof p, "%s/%s/blobs/%s", cache, repo, blob);
  write_file(p, TOKJSON);
  pathf(p, sizeof p, "%s/%s/snapshots/%s", cache, repo, commit);
  mkdirs(p);
  pathf(link, sizeof link, "%s/tokenizer.json", p);
  pathf(p, sizeof p, "../../blobs/%s", blob);
  assert_int_equal(symlink(p, link), 0);
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= age;
  ts[1] = ts[0];
  assert_int_equal(utimensat(AT_FDCWD, link, ts, AT_SYMLINK_NOFOLLOW), 0);
}

static void put_ref(const char *cache, const char *repo, const char *commit) {
  char p[512];
  pathf(p, sizeof p, "%s/%s/refs", cache, repo);
  mkdirs(p);
  pathf(p, sizeof p, "%s/%s/refs/main", cache, repo);
  write_file(p, commit); /* the hub writes the hash without a newline */
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

static const char *const VARS[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME",
                                   "XDG_CACHE_HOME", "CALIBENCH_TOKENIZER_PATH"};

static int setup(void **state) {
  (void)state;
  pathf(root, sizeof root, "%s/cb-hub.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  assert_non_null(mkdtemp(root));
  for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++) unsetenv(VARS[i]);
  setenv("HOME", root, 1); /* never the real ~/.cache */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  return 0;
}

/* Resolve spec (or model) and check the path ends with `tail` and how holds `why`. */
static void expect_found(const char *spec, const char *model, const char *tail,
                         const char *why) {
  cb_tok_source src;
  cb_error err;
  cb_error_clear(&err);
  cb_status st = cb_tok_resolve(spec, model, &src, &err);
  if (st != CB_OK) fail_msg("%s: %s", spec ? spec : model, err.msg);
  size_t n = strlen(src.path), t = strlen(tail);
  if (n < t || strcmp(src.path + n - t, tail)) fail_msg("path %s, expected .../%s", src.path, tail);
  if (!strstr(src.how, why)) fail_msg("how '%s' lacks '%s'", src.how, why);
  cb_tok_source_free(&src);
}

static void expect_missing(const char *spec, const char *model, cb_status code,
                           const char *msg_part) {
  cb_tok_source src;
  cb_error err;
  cb_error_clear(&err);
  assert_int_equal(cb_tok_resolve(spec, model, &src, &err), code);
  assert_null(src.path);
  if (!strstr(err.msg, msg_part)) fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
}

static void test_refs_main_wins(void **state) {
  (void)state;
  char hub[300];
  pathf(hub, sizeof hub, "%s/hub", root);
  put_snapshot(hub, "models--org--name", COMMIT_A, "blob1", 3600);
  put_snapshot(hub, "models--org--name", COMMIT_B, "blob2", 10); /* newer */
  put_ref(hub, "models--org--name", COMMIT_A);
  setenv("HF_HUB_CACHE", hub, 1);
  expect_found("org/name", NULL, "snapshots/" COMMIT_A "/tokenizer.json", "refs/main = " COMMIT_A);
  expect_found("org/name", NULL, "tokenizer.json", "(HF_HUB_CACHE)");
  /* the name loads: one merge, so "ab" is one token */
  cb_tok *tok;
  cb_error err;
  assert_int_equal(cb_tok_load("org/name", &tok, &err), CB_OK);
  cb_tok_ids ids = {0};
  assert_int_equal(cb_tok_encode(tok, "abab", 4, NULL, &ids, &err), CB_OK);
  assert_int_equal(ids.len, 2);
  assert_int_equal(ids.ids[0], 2);
  cb_tok_ids_free(&ids);
  cb_tok_free(tok);
  /* --model when there is no --tokenizer; a given --tokenizer wins over --model */
  expect_found(NULL, "org/name", "snapshots/" COMMIT_A "/tokenizer.json", "refs/main");
  expect_found("", "org/name", "snapshots/" COMMIT_A "/tokenizer.json", "refs/main");
  expect_missing("org/other", "org/name", CB_ERR_NOT_FOUND, "tokenizer 'org/other' not found");
  expect_missing(NULL, NULL, CB_ERR_INVALID, "no tokenizer given");
}

static void test_newest_snapshot(void **state) {
  (void)state;
  char hub[300], p[512];
  pathf(hub, sizeof hub, "%s/hub", root);
  setenv("HF_HUB_CACHE", hub, 1);
  /* no refs/main: the newest tokenizer.json link, whatever the names' order */
  put_snapshot(hub, "models--m", COMMIT_A, "blob1", 10);
  put_snapshot(hub, "models--m", COMMIT_B, "blob2", 3600);
  expect_found("m", NULL, "snapshots/" COMMIT_A "/tokenizer.json", "there is no refs/main");
  expect_found("m", NULL, "tokenizer.json", "newest tokenizer.json of 2 snapshots");
  put_snapshot(hub, "models--org--m2", COMMIT_A, "blob1", 3600);
  put_snapshot(hub, "models--org--m2", COMMIT_B, "blob2", 10);
  expect_found("org/m2", NULL, "snapshots/" COMMIT_B "/tokenizer.json", "no refs/main");
  /* refs/main names a snapshot without tokenizer.json (a config-only download) */
  pathf(p, sizeof p, "%s/models--org--m2/snapshots/%s", hub, COMMIT_C);
  mkdirs(p);
  put_ref(hub, "models--org--m2", COMMIT_C);
  expect_found("org/m2", NULL, "snapshots/" COMMIT_B "/tokenizer.json",
               "the snapshot of refs/main has none");
  /* a link whose blob is gone (an interrupted download) is no tokenizer.json */
  pathf(p, sizeof p, "%s/models--org--m2/blobs/blob2", hub);
  assert_int_equal(unlink(p), 0);
  expect_found("org/m2", NULL, "snapshots/" COMMIT_A "/tokenizer.json", "of 1 snapshot,");
  pathf(p, sizeof p, "%s/models--org--m2/blobs/blob1", hub);
  assert_int_equal(unlink(p), 0);
  expect_missing("org/m2", NULL, CB_ERR_NOT_FOUND, "models--org--m2/snapshots/*/tokenizer.json");
}

/* Each variable in turn is the one used while every one above it is unset. */
static void test_cache_dir_precedence(void **state) {
  (void)state;
  char d[5][300];
  pathf(d[0], sizeof d[0], "%s/c0", root);          /* HF_HUB_CACHE */
  pathf(d[1], sizeof d[1], "%s/c1", root);          /* HUGGINGFACE_HUB_CACHE */
  pathf(d[2], sizeof d[2], "%s/c2/hub", root);      /* HF_HOME=c2 */
  pathf(d[3], sizeof d[3], "%s/c3/huggingface/hub", root); /* XDG_CACHE_HOME=c3 */
  pathf(d[4], sizeof d[4], "%s/.cache/huggingface/hub", root); /* HOME */
  const char *commits[] = {COMMIT_A, COMMIT_B, COMMIT_C, "1234567", "89abcde"};
  for (int i = 0; i < 5; i++) {
    put_snapshot(d[i], "models--o--n", commits[i], "blob", 10);
    put_ref(d[i], "models--o--n", commits[i]);
  }
  char v[300];
  pathf(v, sizeof v, "%s/c0", root);
  setenv("HF_HUB_CACHE", v, 1);
  pathf(v, sizeof v, "%s/c1", root);
  setenv("HUGGINGFACE_HUB_CACHE", v, 1);
  pathf(v, sizeof v, "%s/c2", root);
  setenv("HF_HOME", v, 1);
  pathf(v, sizeof v, "%s/c3", root);
  setenv("XDG_CACHE_HOME", v, 1);
  const char *names[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME",
                         "the default"};
  char tail[300], why[300];
  for (int i = 0; i < 5; i++) {
    pathf(tail, sizeof tail, "%s/models--o--n/snapshots/%s/tokenizer.json", d[i], commits[i]);
    pathf(why, sizeof why, "(%s)", names[i]);
    expect_found("o/n", NULL, tail, why);
    if (i < 4) unsetenv(names[i]);
  }
  /* an empty variable counts as unset; ~ is the home directory */
  setenv("HF_HUB_CACHE", "", 1);
  expect_found("o/n", NULL, tail, "(the default)");
  setenv("HF_HOME", "~/c2", 1);
  pathf(tail, sizeof tail, "%s/models--o--n/snapshots/%s/tokenizer.json", d[2], commits[2]);
  expect_found("o/n", NULL, tail, "(HF_HOME)");
}

static void test_not_repo_ids(void **state) {
  (void)state;
  char hub[300], p[512];
  pathf(hub, sizeof hub, "%s/hub", root);
  setenv("HF_HUB_CACHE", hub, 1);
  assert_true(cb__hf_repo_id_ok("org/name"));
  assert_true(cb__hf_repo_id_ok("gpt2"));
  assert_true(cb__hf_repo_id_ok("Qwen/Qwen2.5-7B-Instruct"));
  const char *bad[] = {"", "../x", "./x", "a/b/c", "org--x/y", "-a/b", "a/.b", "a/b.", "a b/c",
                       "a/", "/a", "org/a..b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    if (cb__hf_repo_id_ok(bad[i])) fail_msg("'%s' taken as a repo id", bad[i]);
  expect_missing("../nope", NULL, CB_ERR_NOT_FOUND, "../nope: no such tokenizer file or directory");
  expect_missing("a/b/c", NULL, CB_ERR_NOT_FOUND, "no such tokenizer file or directory");
  /* a path given is itself, even when it looks like a repo id */
  pathf(p, sizeof p, "%s/tok.json", root);
  write_file(p, TOKJSON);
  expect_found(p, NULL, "/tok.json", "the path given");
  assert_int_equal(chdir(root), 0);
  expect_found("tok.json", NULL, "tok.json", "the path given");
  /* an encoding name is searched in CALIBENCH_TOKENIZER_PATH before the hub cache */
  pathf(p, sizeof p, "%s/encs/mytok", root);
  mkdirs(p);
  pathf(p, sizeof p, "%s/encs/mytok/tokenizer.json", root);
  write_file(p, TOKJSON);
  pathf(p, sizeof p, "%s/encs", root);
  setenv("CALIBENCH_TOKENIZER_PATH", p, 1);
  expect_found("mytok", NULL, "encs/mytok/tokenizer.json", "mytok/tokenizer.json in ");
  /* not found: every place looked is named */
  expect_missing("nothing", NULL, CB_ERR_NOT_FOUND, "no nothing.tiktoken, nothing.json or nothing/tokenizer.json in ");
  expect_missing("nothing", NULL, CB_ERR_NOT_FOUND, "/hub/models--nothing/snapshots/*/tokenizer.json (Hugging Face cache from HF_HUB_CACHE)");
  expect_missing(NULL, "org/none", CB_ERR_NOT_FOUND, "no tokenizer found for model 'org/none': not a file; ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_refs_main_wins, setup, teardown),
      cmocka_unit_test_setup_teardown(test_newest_snapshot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_dir_precedence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_repo_ids, setup, teardown),
  };
  return cb_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
