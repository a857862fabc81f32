/*
 * names.c - the client's name tables: error classes (one table, CB_CLIENT_ERROR_
 * CLASS_TABLE, for the client, the runner and the result files), API kinds and
 * token-count sources.
 */
#include <string.h>

#include "calibench/client.h"

static const char *const class_name[] = {
#define CB_CLIENT_ERR_NAME_(e, name, desc) name,
    CB_CLIENT_ERROR_CLASS_TABLE(CB_CLIENT_ERR_NAME_)
#undef CB_CLIENT_ERR_NAME_
};

static const char *const class_desc[] = {
#define CB_CLIENT_ERR_DESC_(e, name, desc) desc,
    CB_CLIENT_ERROR_CLASS_TABLE(CB_CLIENT_ERR_DESC_)
#undef CB_CLIENT_ERR_DESC_
};

const char *cb_client_error_class_name(cb_client_error_class c) {
  if ((unsigned)c >= CB_CLIENT_ERR_COUNT_) return "unknown";
  return class_name[c];
}

const char *cb_client_error_class_desc(cb_client_error_class c) {
  if ((unsigned)c >= CB_CLIENT_ERR_COUNT_) return "unknown error class";
  return class_desc[c];
}

cb_status cb_client_error_class_parse(const char *name, cb_client_error_class *out,
                                      cb_error *err) {
  for (unsigned i = 0; i < CB_CLIENT_ERR_COUNT_; i++) {
    if (name && strcmp(name, class_name[i]) == 0) {
      *out = (cb_client_error_class)i;
      return CB_OK;
    }
  }
  return cb_error_set(err, CB_ERR_NOT_FOUND,
                      "unknown error class '%s' (one of: none, connect, timeout, "
                      "http_status, stream_cut, malformed_sse, invalid_json, "
                      "server_error_event)",
                      name ? name : "(null)");
}

const char *cb_client_api_name(cb_client_api api) {
  switch (api) {
    case CB_CLIENT_API_CHAT: return "chat";
    case CB_CLIENT_API_COMPLETIONS: return "completions";
    case CB_CLIENT_API_OLLAMA_GENERATE: return "ollama";
  }
  return "unknown";
}

const char *cb_client_token_source_name(cb_client_token_source s) {
  switch (s) {
    case CB_CLIENT_TOKENS_NONE: return "none";
    case CB_CLIENT_TOKENS_USAGE: return "usage";
    case CB_CLIENT_TOKENS_TOKENIZER: return "tokenizer";
    case CB_CLIENT_TOKENS_CHUNKS: return "chunks";
  }
  return "unknown";
}
