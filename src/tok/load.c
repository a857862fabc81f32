/*
 * load.c - cb_tok_load: from a name or a path to a loaded tokenizer.
 *
 * cb_tok_resolve finds the file: an existing path as is; an encoding name as
 * NAME.tiktoken, NAME.json and NAME/tokenizer.json in each directory of
 * $CALIBENCH_TOKENIZER_PATH, then ./node_modules/tiktoken/encoders (the tiktoken npm
 * package's JSON encoders); a Hugging Face model id in the hub cache (hf_cache.c).
 * The format is told from the content:
 * JSON with "bpe_ranks" is a tiktoken encoder, JSON with "model" a tokenizer.json,
 * anything else a .tiktoken rank file.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibench/alloc.h"
#include "calibench/limits.h"
#include "tok_internal.h"

static cb_status load_path(const char *path, cb_tok **out, cb_error *err) {
  struct stat sb;
  cb_buf file;
  cb_buf_init(&file, 0);
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    cb_buf p;
    cb_buf_init(&p, 0);
    cb_buf_appendf(&p, "%s/tokenizer.json", path);
    cb_status st = load_path(p.data, out, err);
    cb_buf_free(&p);
    return st;
  }
  cb_status st = cb_file_read(path, CB_LIMIT_TOKENIZER_BYTES, &file, err);
  if (st != CB_OK) return st;
  size_t i = 0;
  while (i < file.len && (file.data[i] == ' ' || file.data[i] == '\n' || file.data[i] == '\r' || file.data[i] == '\t')) i++;
  if (i < file.len && file.data[i] == '{') {
    json_error_t je;
    json_t *root = json_loadb(file.data, file.len, 0, &je);
    cb_buf_free(&file);
    if (!root) return cb_error_at(err, CB_ERR_PARSE, path, je.line, je.column, "%s", je.text);
    if (json_object_get(root, "bpe_ranks")) st = cb__tok_load_tiktoken_json(path, root, out, err);
    else if (json_object_get(root, "model")) st = cb__tok_load_hf_json(path, root, out, err);
    else
      st = cb_error_at(err, CB_ERR_UNSUPPORTED, path, 0, 0,
                       "JSON that is neither a tokenizer.json (no 'model') nor a tiktoken "
                       "encoder (no 'bpe_ranks')");
    json_decref(root);
    return st;
  }
  st = cb__tok_load_tiktoken_file(path, file.data, file.len, out, err);
  cb_buf_free(&file);
  return st;
}

static int is_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

static void set_source(cb_tok_source *out, const char *path, const char *how) {
  out->path = cb_strdup(path);
  out->how = cb_strdup(how);
}

/* NAME.tiktoken, NAME.json, NAME/tokenizer.json in the search path; 1 if found. */
static int find_in_path(const char *spec, cb_tok_source *out, cb_buf *tried) {
  cb_buf dirs, cand, how;
  cb_buf_init(&dirs, 0);
  cb_buf_init(&cand, 0);
  cb_buf_init(&how, 0);
  const char *env = getenv("CALIBENCH_TOKENIZER_PATH");
  if (env && *env) cb_buf_appendf(&dirs, "%s:", env);
  cb_buf_append_str(&dirs, "node_modules/tiktoken/encoders");
  static const char *const forms[] = {".tiktoken", ".json", "/tokenizer.json"};
  int found = 0;
  char *save = NULL;
  for (char *d = strtok_r(dirs.data, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
    for (size_t f = 0; f < sizeof forms / sizeof forms[0] && !found; f++) {
      cb_buf_reset(&cand);
      cb_buf_appendf(&cand, "%s/%s%s", d, spec, forms[f]);
      if (is_file(cand.data)) {
        cb_buf_appendf(&how, "%s%s in %s (the tokenizer search path)", spec, forms[f], d);
        set_source(out, cand.data, how.data);
        found = 1;
      }
    }
    if (!found) cb_buf_appendf(tried, "%s%s", tried->len ? ", " : "", d);
  }
  cb_buf_free(&dirs);
  cb_buf_free(&cand);
  cb_buf_free(&how);
  return found;
}

cb_status cb_tok_resolve(const char *spec, const char *model, cb_tok_source *out,
                         cb_error *err) {
  memset(out, 0, sizeof *out);
  int by_model = !spec || !*spec;
  if (by_model) spec = model;
  if (!spec || !*spec) return cb_error_set(err, CB_ERR_INVALID, "no tokenizer given");
  if (is_file(spec)) {
    set_source(out, spec, "the path given");
    return CB_OK;
  }
  cb_buf tried, hf;
  cb_buf_init(&tried, 0);
  cb_buf_init(&hf, 0);
  cb_status st = CB_ERR_NOT_FOUND;
  if (!strchr(spec, '/') && find_in_path(spec, out, &tried)) {
    st = CB_OK;
  } else if (cb__hf_repo_id_ok(spec) && cb__hf_cache_find(spec, &out->path, &out->how, &hf)) {
    out->hub = 1;
    st = CB_OK;
  } else if (strchr(spec, '/') && !cb__hf_repo_id_ok(spec)) {
    cb_error_at(err, st, spec, 0, 0, "no such tokenizer file or directory");
  } else {
    cb_buf msg, head;
    cb_buf_init(&msg, 0);
    cb_buf_init(&head, 0);
    if (by_model) cb_buf_appendf(&head, "no tokenizer found for model '%s'", spec); /* a run's fallback reason */
    else cb_buf_appendf(&head, "tokenizer '%s' not found", spec);
    if (!strchr(spec, '/'))
      cb_buf_appendf(&msg, "no %s.tiktoken, %s.json or %s/tokenizer.json in %s; ", spec, spec,
                     spec, tried.data);
    cb_buf_append_str(&msg, hf.data ? hf.data : "");
    cb_error_set(err, st,
                 "%s: not a file; %s (give a file path, set "
                 "CALIBENCH_TOKENIZER_PATH or HF_HUB_CACHE, or run 'make npm-deps' for the "
                 "tiktoken encoders; known encodings: %s)",
                 head.data, msg.data, cb__tiktoken_known_names());
    cb_buf_free(&msg);
    cb_buf_free(&head);
  }
  cb_buf_free(&tried);
  cb_buf_free(&hf);
  return st;
}

void cb_tok_source_free(cb_tok_source *src) {
  cb_free(src->path);
  cb_free(src->how);
  memset(src, 0, sizeof *src);
}

cb_status cb_tok_load(const char *spec, cb_tok **out, cb_error *err) {
  *out = NULL;
  cb_tok_source src;
  cb_status st = cb_tok_resolve(spec, NULL, &src, err);
  if (st != CB_OK) return st;
  st = load_path(src.path, out, err);
  cb_tok_source_free(&src);
  return st;
}
