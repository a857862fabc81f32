/*
 * load.c - cb_tok_load: from a name or a path to a loaded tokenizer.
 *
 * A spec that names an existing file or directory is loaded from there; otherwise it
 * is an encoding name looked up as NAME.tiktoken, NAME.json and NAME/tokenizer.json
 * in each directory of $CALIBENCH_TOKENIZER_PATH, then ./node_modules/tiktoken/encoders
 * (the tiktoken npm package's JSON encoders). The format is told from the content:
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

cb_status cb_tok_load(const char *spec, cb_tok **out, cb_error *err) {
  *out = NULL;
  if (!spec || !*spec) return cb_error_set(err, CB_ERR_INVALID, "no tokenizer given");
  if (is_file(spec)) return load_path(spec, out, err);
  if (strchr(spec, '/'))
    return cb_error_at(err, CB_ERR_NOT_FOUND, spec, 0, 0, "no such tokenizer file or directory");
  cb_buf dirs, tried, cand;
  cb_buf_init(&dirs, 0);
  cb_buf_init(&tried, 0);
  cb_buf_init(&cand, 0);
  const char *env = getenv("CALIBENCH_TOKENIZER_PATH");
  if (env && *env) cb_buf_appendf(&dirs, "%s:", env);
  cb_buf_append_str(&dirs, "node_modules/tiktoken/encoders");
  static const char *const forms[] = {".tiktoken", ".json", "/tokenizer.json"};
  cb_status st = CB_ERR_NOT_FOUND;
  char *save = NULL;
  for (char *d = strtok_r(dirs.data, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
      cb_buf_reset(&cand);
      cb_buf_appendf(&cand, "%s/%s%s", d, spec, forms[f]);
      if (is_file(cand.data)) {
        st = load_path(cand.data, out, err);
        goto done;
      }
    }
    cb_buf_appendf(&tried, "%s%s", tried.len ? ", " : "", d);
  }
  cb_error_set(err, CB_ERR_NOT_FOUND,
               "tokenizer '%s' not found: no %s.tiktoken, %s.json or %s/tokenizer.json in %s "
               "(set CALIBENCH_TOKENIZER_PATH, run 'make npm-deps' for the tiktoken encoders, "
               "or give a file path; known encodings: %s)",
               spec, spec, spec, spec, tried.data ? tried.data : "(nowhere)",
               cb__tiktoken_known_names());
done:
  cb_buf_free(&dirs);
  cb_buf_free(&tried);
  cb_buf_free(&cand);
  return st;
}
