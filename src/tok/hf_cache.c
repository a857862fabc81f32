/*
 * hf_cache.c - a model's tokenizer.json in the local Hugging Face hub cache, offline.
 *
 * The cache directory is the one huggingface_hub uses (src/huggingface_hub/constants.py):
 *   HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE (its legacy name), else HF_HOME/hub, where
 *   HF_HOME defaults to $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface;
 * each with a leading ~ expanded (expanduser). An empty variable counts as unset here
 * (the hub would use "" as a path). A model repo "org/name" lives in
 * CACHE/models--org--name/ (REPO_ID_SEPARATOR "--"): refs/main holds the commit that
 * `main` pointed to when last downloaded, snapshots/<commit>/ holds the files as
 * symlinks into blobs/. As the hub's try_to_load_from_cache does for revision "main",
 * refs/main's snapshot is used; when refs/main is missing, or its snapshot has no
 * tokenizer.json, the snapshot whose tokenizer.json entry is newest (its own mtime,
 * i.e. when it was downloaded; ties by the larger commit name) is used, and `how`
 * says so. Nothing is ever downloaded.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "tok_internal.h"

/* Hub repo ids: "name" or "org/name", each part [A-Za-z0-9][A-Za-z0-9_.-]*, no "--" or
 * ".." (the hub's own rules), at most 96 characters. Anything else is not looked up,
 * so a path-like spec such as "../x" never reaches the cache. */
int cb__hf_repo_id_ok(const char *s) {
  size_t n = strlen(s), parts = 1;
  if (n == 0 || n > 96 || strstr(s, "--") || strstr(s, "..")) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int start = i == 0 || s[i - 1] == '/';
    int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (c == '/') {
      if (i == 0 || ++parts > 2 || i + 1 == n) return 0;
    } else if (start ? !alnum : !(alnum || c == '_' || c == '.' || c == '-')) {
      return 0;
    }
  }
  return s[n - 1] != '.';
}

static void append_expanded(cb_buf *b, const char *v) {
  const char *home = getenv("HOME");
  if (v[0] == '~' && (v[1] == '/' || v[1] == 0) && home && *home) {
    cb_buf_append_str(b, home);
    v++;
  }
  cb_buf_append_str(b, v);
}

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static void cache_dir(cb_buf *dir, const char **from) {
  const char *v;
  cb_buf_reset(dir);
  if ((v = env("HF_HUB_CACHE"))) {
    append_expanded(dir, v);
    *from = "HF_HUB_CACHE";
  } else if ((v = env("HUGGINGFACE_HUB_CACHE"))) {
    append_expanded(dir, v);
    *from = "HUGGINGFACE_HUB_CACHE";
  } else if ((v = env("HF_HOME"))) {
    append_expanded(dir, v);
    cb_buf_append_str(dir, "/hub");
    *from = "HF_HOME";
  } else if ((v = env("XDG_CACHE_HOME"))) {
    append_expanded(dir, v);
    cb_buf_append_str(dir, "/huggingface/hub");
    *from = "XDG_CACHE_HOME";
  } else {
    append_expanded(dir, "~/.cache/huggingface/hub");
    *from = "the default";
  }
}

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode); /* follows the blob symlink */
}

/* The commit refs/main names, trimmed; 0 if there is none or it is not hex. */
static int read_ref_main(const char *repo_dir, char *commit, size_t cap) {
  cb_buf p, data;
  cb_buf_init(&p, 0);
  cb_buf_init(&data, 0);
  cb_buf_appendf(&p, "%s/refs/main", repo_dir);
  int ok = cb_file_read(p.data, 4096, &data, NULL) == CB_OK;
  size_t n = 0;
  if (ok) {
    while (n < data.len && n + 1 < cap &&
           ((data.data[n] >= '0' && data.data[n] <= '9') || (data.data[n] >= 'a' && data.data[n] <= 'f') ||
            (data.data[n] >= 'A' && data.data[n] <= 'F')))
      n++;
    for (size_t i = n; i < data.len; i++)
      if (data.data[i] != '\n' && data.data[i] != '\r' && data.data[i] != ' ') ok = 0;
    ok = ok && n >= 5; /* the hub's REGEX_COMMIT_OID: [A-Fa-f0-9]{5,40} */
  }
  memcpy(commit, data.data ? data.data : "", n);
  commit[n] = 0;
  cb_buf_free(&p);
  cb_buf_free(&data);
  return ok;
}

/* The snapshot whose tokenizer.json entry is newest; its name into best (empty: none). */
static size_t newest_snapshot(const char *repo_dir, cb_buf *best) {
  cb_buf p;
  cb_buf_init(&p, 0);
  cb_buf_appendf(&p, "%s/snapshots", repo_dir);
  DIR *d = opendir(p.data);
  size_t found = 0;
  struct timespec best_t = {0, 0};
  cb_buf_reset(best);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    cb_buf_reset(&p);
    cb_buf_appendf(&p, "%s/snapshots/%s/tokenizer.json", repo_dir, e->d_name);
    struct stat sb;
    if (!is_file(p.data) || lstat(p.data, &sb) != 0) continue;
    found++;
    int newer = !best->len || sb.st_mtim.tv_sec > best_t.tv_sec ||
                (sb.st_mtim.tv_sec == best_t.tv_sec &&
                 (sb.st_mtim.tv_nsec > best_t.tv_nsec ||
                  (sb.st_mtim.tv_nsec == best_t.tv_nsec && strcmp(e->d_name, best->data) > 0)));
    if (newer) {
      best_t = sb.st_mtim;
      cb_buf_reset(best);
      cb_buf_append_str(best, e->d_name);
    }
  }
  if (d) closedir(d);
  cb_buf_free(&p);
  return found;
}

int cb__hf_cache_find(const char *repo_id, char **path, char **how, cb_buf *looked) {
  cb_buf dir, repo, file, snap, msg;
  cb_buf_init(&dir, 0);
  cb_buf_init(&repo, 0);
  cb_buf_init(&file, 0);
  cb_buf_init(&snap, 0);
  cb_buf_init(&msg, 0);
  const char *from;
  cache_dir(&dir, &from);
  cb_buf_appendf(&repo, "%s/models--", dir.data);
  for (const char *c = repo_id; *c; c++)
    if (*c == '/') cb_buf_append_str(&repo, "--");
    else cb_buf_append_char(&repo, *c);

  char commit[48];
  int have_ref = read_ref_main(repo.data, commit, sizeof commit);
  int found = 0;
  if (have_ref) {
    cb_buf_appendf(&file, "%s/snapshots/%s/tokenizer.json", repo.data, commit);
    if (is_file(file.data)) {
      cb_buf_appendf(&msg, "Hugging Face cache %s (%s), %s at refs/main = %s", dir.data, from,
                     repo_id, commit);
      found = 1;
    }
  }
  if (!found) {
    size_t n = newest_snapshot(repo.data, &snap);
    if (n) {
      cb_buf_reset(&file);
      cb_buf_appendf(&file, "%s/snapshots/%s/tokenizer.json", repo.data, snap.data);
      cb_buf_appendf(&msg,
                     "Hugging Face cache %s (%s), %s snapshot %s: the newest tokenizer.json of "
                     "%zu snapshot%s, as %s",
                     dir.data, from, repo_id, snap.data, n, n == 1 ? "" : "s",
                     have_ref ? "the snapshot of refs/main has none" : "there is no refs/main");
      found = 1;
    }
  }
  if (found) {
    *path = cb_strdup(file.data);
    *how = cb_strdup(msg.data);
  } else {
    cb_buf_appendf(looked, "no %s/snapshots/*/tokenizer.json (Hugging Face cache from %s)",
                   repo.data, from);
  }
  cb_buf_free(&dir);
  cb_buf_free(&repo);
  cb_buf_free(&file);
  cb_buf_free(&snap);
  cb_buf_free(&msg);
  return found;
}
