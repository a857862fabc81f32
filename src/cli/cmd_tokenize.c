/*
 * cmd_tokenize.c - `calibench tokenize`: token ids, counts, decoding and exact-length
 * text from the command line, over the tok module.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/limits.h"
#include "calibench/tok.h"
#include "cli.h"

#define MAX_INPUT CB_LIMIT_TOKENIZE_BYTES

static void tokenize_usage(FILE *out) {
  fprintf(out,
          "usage: calibench tokenize --tokenizer FILE|NAME|ORG/MODEL [options] [FILE...]\n"
          "\n"
          "Tokenize text exactly as the model's tokenizer does (tiktoken encodings and\n"
          "Hugging Face tokenizer.json BPE, WordPiece and Unigram files). Reads each FILE,\n"
          "or stdin when none, at most 256 MiB each (docs/limits.md); each FILE's result\n"
          "goes on its own line.\n"
          "\n"
          "  -t, --tokenizer SPEC      a tokenizer.json (or its directory), a tiktoken npm\n"
          "                            encoder JSON, a NAME.tiktoken rank file, or an encoding\n"
          "                            name (cl100k_base, o200k_base, p50k_base, p50k_edit,\n"
          "                            r50k_base, gpt2) searched in $CALIBENCH_TOKENIZER_PATH\n"
          "                            and ./node_modules/tiktoken/encoders, or a Hugging Face\n"
          "                            model id whose tokenizer.json is in the local hub cache\n"
          "                            ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub;\n"
          "                            never downloaded; the file used is printed on stderr)\n"
          "  --model ORG/MODEL         with no --tokenizer: the model whose tokenizer to use,\n"
          "                            looked up the same way\n"
          "  --ids                     print the ids space-separated on one line (default)\n"
          "  --count                   print the number of tokens\n"
          "  --decode                  read ids (whitespace-separated) and print their text\n"
          "  --each-line               encode (or decode) every input line on its own, without\n"
          "                            its newline, one output line each\n"
          "  --special MODE            special-token text: allow (encode as the special id),\n"
          "                            reject (error), text (ordinary text); default: as the\n"
          "                            reference (tiktoken rejects, tokenizer.json allows)\n"
          "  --allow-special TOKEN     always encode TOKEN as its id; repeatable\n"
          "  --add-special-tokens      tokenizer.json: add the post-processor's tokens (BOS)\n"
          "  --synth N                 print text of exactly N tokens drawn from the inputs\n"
          "                            (together the corpus), starting at a word chosen by\n"
          "                            --seed; the text is followed by a newline\n"
          "  --seed N                  seed for --synth [0]\n"
          "  --info                    print the tokenizer's name, kind, vocabulary size,\n"
          "                            loaded memory and how its file was found\n"
          "  -h, --help                show this help\n");
}

enum { OPT_IDS = 256, OPT_COUNT, OPT_DECODE, OPT_EACH_LINE, OPT_SPECIAL, OPT_ALLOW_SPECIAL,
       OPT_ADD_SPECIAL, OPT_SYNTH, OPT_SEED, OPT_INFO, OPT_MODEL };

static const struct option tokenize_options[] = {
    {"tokenizer", required_argument, NULL, 't'},
    {"model", required_argument, NULL, OPT_MODEL},
    {"ids", no_argument, NULL, OPT_IDS},
    {"count", no_argument, NULL, OPT_COUNT},
    {"decode", no_argument, NULL, OPT_DECODE},
    {"each-line", no_argument, NULL, OPT_EACH_LINE},
    {"special", required_argument, NULL, OPT_SPECIAL},
    {"allow-special", required_argument, NULL, OPT_ALLOW_SPECIAL},
    {"add-special-tokens", no_argument, NULL, OPT_ADD_SPECIAL},
    {"synth", required_argument, NULL, OPT_SYNTH},
    {"seed", required_argument, NULL, OPT_SEED},
    {"info", no_argument, NULL, OPT_INFO},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

typedef enum { MODE_IDS, MODE_COUNT, MODE_DECODE, MODE_SYNTH, MODE_INFO } out_mode;

typedef struct job {
  cb_tok *tok;
  out_mode mode;
  int each; /* --each-line */
  cb_tok_encode_params params;
  long long synth_n, seed;
  cb_buf out;
  const char *source;
} job;

static int read_input(const char *path, cb_buf *in) {
  cb_error err;
  cb_error_clear(&err);
  if (path) {
    if (cb_file_read(path, MAX_INPUT, in, &err) != CB_OK) {
      fprintf(stderr, "calibench: tokenize: %s\n", err.msg);
      return -1;
    }
    return 0;
  }
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
    if (cb_buf_append(in, chunk, n) != CB_OK) {
      fprintf(stderr, "calibench: tokenize: stdin is larger than %zu bytes\n", MAX_INPUT);
      return -1;
    }
  if (ferror(stdin)) {
    fprintf(stderr, "calibench: tokenize: reading stdin: %s\n", strerror(errno));
    return -1;
  }
  if (!in->data) cb_buf_append(in, "", 0);
  return 0;
}

static void append_u32(cb_buf *b, uint32_t v) {
  char tmp[12];
  int n = 0;
  do tmp[n++] = (char)('0' + v % 10), v /= 10;
  while (v);
  while (n) cb_buf_append_char(b, tmp[--n]);
}

/* Parse whitespace-separated ids from s[0..n). */
static int parse_ids(const job *j, const char *s, size_t n, cb_tok_ids *ids) {
  for (size_t i = 0; i < n;) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == ',')) i++;
    if (i >= n) break;
    uint64_t v = 0;
    size_t st = i;
    while (i < n && s[i] >= '0' && s[i] <= '9' && v <= UINT32_MAX) v = v * 10 + (uint64_t)(s[i++] - '0');
    if (i == st || v > UINT32_MAX || (i < n && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == ','))) {
      fprintf(stderr, "calibench: tokenize --decode: %s: expected token ids, got '%.*s'\n",
              j->source, (int)(n - st > 20 ? 20 : n - st), s + st);
      return -1;
    }
    if (ids->len == ids->cap) {
      ids->cap = ids->cap ? ids->cap * 2 : 256;
      ids->ids = cb_reallocarray(ids->ids, ids->cap, sizeof *ids->ids);
    }
    ids->ids[ids->len++] = (cb_tok_id)v;
  }
  return 0;
}

/* One unit of input (a file or a line): its result appended to j->out, no newline. */
static int process(job *j, const char *s, size_t n) {
  cb_error err;
  cb_error_clear(&err);
  cb_tok_ids ids = {0};
  int rc = 0;
  if (j->mode == MODE_DECODE) {
    if (parse_ids(j, s, n, &ids) || cb_tok_decode(j->tok, ids.ids, ids.len, &j->out, &err) != CB_OK) {
      if (err.msg[0]) fprintf(stderr, "calibench: tokenize --decode: %s: %s\n", j->source, err.msg);
      rc = -1;
    }
  } else if (cb_tok_encode(j->tok, s, n, &j->params, &ids, &err) != CB_OK) {
    fprintf(stderr, "calibench: tokenize: %s: %s\n", j->source, err.msg);
    rc = -1;
  } else if (j->mode == MODE_COUNT) {
    cb_buf_appendf(&j->out, "%zu", ids.len);
  } else {
    for (size_t i = 0; i < ids.len; i++) {
      if (i) cb_buf_append_char(&j->out, ' ');
      append_u32(&j->out, ids.ids[i]);
    }
  }
  cb_tok_ids_free(&ids);
  return rc;
}

static int flush(job *j) {
  if (j->out.len && fwrite(j->out.data, 1, j->out.len, stdout) != j->out.len) {
    fprintf(stderr, "calibench: tokenize: writing output: %s\n", strerror(errno));
    return -1;
  }
  cb_buf_reset(&j->out);
  return 0;
}

static int run_input(job *j, const char *path) {
  cb_buf in;
  cb_buf_init(&in, MAX_INPUT);
  j->source = path ? path : "stdin";
  int rc = read_input(path, &in);
  if (rc) goto out;
  if (j->each) {
    size_t pos = 0;
    while (pos < in.len) {
      const char *nl = memchr(in.data + pos, '\n', in.len - pos);
      size_t end = nl ? (size_t)(nl - in.data) : in.len;
      if (process(j, in.data + pos, end - pos)) {
        rc = -1;
        goto out;
      }
      cb_buf_append_char(&j->out, '\n');
      if (j->out.len > (1 << 16) && flush(j)) {
        rc = -1;
        goto out;
      }
      pos = end + 1;
    }
  } else {
    if (process(j, in.data, in.len)) {
      rc = -1;
      goto out;
    }
    cb_buf_append_char(&j->out, '\n');
  }
  rc = flush(j);
out:
  cb_buf_free(&in);
  return rc;
}

/* --synth: every input, joined by newlines, is the corpus. */
static int synth(job *j, char **files, int n) {
  cb_buf corpus;
  cb_buf_init(&corpus, MAX_INPUT);
  int rc = 0;
  for (int i = 0; i < (n ? n : 1) && !rc; i++) {
    if (corpus.len) cb_buf_append_char(&corpus, '\n');
    rc = read_input(n ? files[i] : NULL, &corpus);
  }
  cb_error err;
  cb_error_clear(&err);
  if (!rc && cb_tok_synth(cb_tok_count, j->tok, corpus.data, corpus.len, (size_t)j->synth_n,
                          (uint64_t)j->seed, &j->out, &err) != CB_OK) {
    fprintf(stderr, "calibench: tokenize --synth: %s\n", err.msg);
    rc = -1;
  }
  if (!rc) {
    cb_buf_append_char(&j->out, '\n');
    rc = flush(j);
  }
  cb_buf_free(&corpus);
  return rc;
}

static const char *kind_name(cb_tok_kind k) {
  switch (k) {
    case CB_TOK_KIND_TIKTOKEN: return "tiktoken";
    case CB_TOK_KIND_HF_BPE: return "tokenizer.json BPE";
    case CB_TOK_KIND_HF_WORDPIECE: return "tokenizer.json WordPiece";
    case CB_TOK_KIND_HF_UNIGRAM: return "tokenizer.json Unigram";
  }
  return "?";
}

int cli_tokenize_main(int argc, char **argv) {
  job j;
  memset(&j, 0, sizeof j);
  cb_buf_init(&j.out, 0);
  cb_tok_default_encode_params(&j.params);
  const char *spec = NULL, *model = NULL;
  cb_tok_source src = {0};
  const char **allowed = NULL;
  size_t n_allowed = 0;
  int rc = 2;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "t:h", tokenize_options, NULL)) != -1) {
    switch (c) {
      case 'h': tokenize_usage(stdout); rc = 0; goto out;
      case 't': spec = optarg; break;
      case OPT_MODEL: model = optarg; break;
      case OPT_IDS: j.mode = MODE_IDS; break;
      case OPT_COUNT: j.mode = MODE_COUNT; break;
      case OPT_DECODE: j.mode = MODE_DECODE; break;
      case OPT_INFO: j.mode = MODE_INFO; break;
      case OPT_EACH_LINE: j.each = 1; break;
      case OPT_ADD_SPECIAL: j.params.add_special_tokens = 1; break;
      case OPT_SPECIAL:
        if (!strcmp(optarg, "allow")) j.params.special = CB_TOK_SPECIAL_ALLOW;
        else if (!strcmp(optarg, "reject")) j.params.special = CB_TOK_SPECIAL_REJECT;
        else if (!strcmp(optarg, "text")) j.params.special = CB_TOK_SPECIAL_TEXT;
        else {
          fprintf(stderr, "calibench: --special: expected allow, reject or text, got '%s'\n", optarg);
          goto out;
        }
        break;
      case OPT_ALLOW_SPECIAL:
        allowed = cb_reallocarray(allowed, n_allowed + 2, sizeof *allowed);
        allowed[n_allowed++] = optarg;
        allowed[n_allowed] = NULL;
        break;
      case OPT_SYNTH:
        if (cli_parse_int("--synth", optarg, 0, 1 << 24, &j.synth_n)) goto out;
        j.mode = MODE_SYNTH;
        break;
      case OPT_SEED: if (cli_parse_int("--seed", optarg, 0, INT64_MAX, &j.seed)) goto out; break;
      default: fprintf(stderr, "Run 'calibench tokenize --help' for the options.\n"); goto out;
    }
  }
  j.params.allowed_special = allowed;
  if (!spec && !model) {
    fprintf(stderr, "calibench: tokenize: --tokenizer is required (a file, an encoding name "
                    "such as cl100k_base or a Hugging Face model id), or --model\n");
    goto out;
  }
  if (j.mode == MODE_SYNTH && j.each) {
    fprintf(stderr, "calibench: tokenize: --synth reads the whole input as its corpus; "
                    "drop --each-line\n");
    goto out;
  }
  cb_error err;
  cb_error_clear(&err);
  if (cb_tok_resolve(spec, model, &src, &err) != CB_OK || cb_tok_load(src.path, &j.tok, &err) != CB_OK) {
    fprintf(stderr, "calibench: tokenize: %s\n", err.msg);
    goto out;
  }
  if (src.hub) fprintf(stderr, "calibench: tokenize: using %s (%s)\n", src.path, src.how);
  for (size_t i = 0; i < n_allowed; i++) {
    cb_tok_id id;
    if (cb_tok_special_id(j.tok, allowed[i], &id) != CB_OK) {
      fprintf(stderr, "calibench: --allow-special: '%s' is not a special token of %s\n",
              allowed[i], cb_tok_name(j.tok));
      goto out;
    }
  }
  if (j.mode == MODE_INFO) {
    printf("name: %s\nkind: %s\nvocab size: %zu\nmemory: %zu bytes\nfile: %s\nfound as: %s\n",
           cb_tok_name(j.tok),
           kind_name(cb_tok_kind_of(j.tok)),
           cb_tok_vocab_size(j.tok), cb_tok_memory_bytes(j.tok), src.path, src.how);
    rc = 0;
    goto out;
  }
  rc = 0;
  if (j.mode == MODE_SYNTH) {
    rc = synth(&j, argv + optind, argc - optind) ? 2 : 0;
    goto out;
  }
  if (optind == argc) {
    if (run_input(&j, NULL)) rc = 2;
  } else {
    for (int i = optind; i < argc && rc == 0; i++)
      if (run_input(&j, argv[i])) rc = 2;
  }
out:
  cb_tok_source_free(&src);
  cb_tok_free(j.tok);
  cb_buf_free(&j.out);
  cb_free(allowed);
  return rc;
}
