/*
 * embed_set.c - `probe embed`'s retrieval set in BEIR's layout (probe_embed.h):
 * corpus.jsonl, queries.jsonl and qrels/<split>.tsv, read as BEIR's GenericDataLoader
 * reads them (beir/datasets/data_loader.py: the qrels header line skipped, the queries
 * kept that have a judgment), but strictly: what BEIR would pass over silently (a
 * duplicate id, a judgment of an unknown document) is an error naming file and line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "calibench/alloc.h"
#include "calibench/buf.h"
#include "calibench/limits.h"
#include "calibench/probe_embed.h"

/* An id and its index, for lookups by binary search. */
typedef struct id_entry {
  const char *id;
  size_t index;
  long line;
} id_entry;

static int id_cmp(const void *a, const void *b) {
  return strcmp(((const id_entry *)a)->id, ((const id_entry *)b)->id);
}

typedef struct text_list {
  char **ids, **texts;
  long *lines;
  size_t n, cap;
} text_list;

static void list_free(text_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    cb_free(l->ids[i]);
    cb_free(l->texts[i]);
  }
  cb_free(l->ids);
  cb_free(l->texts);
  cb_free(l->lines);
  memset(l, 0, sizeof *l);
}

static void list_push(text_list *l, char *id, char *text, long line) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->ids = cb_reallocarray(l->ids, l->cap, sizeof *l->ids);
    l->texts = cb_reallocarray(l->texts, l->cap, sizeof *l->texts);
    l->lines = cb_reallocarray(l->lines, l->cap, sizeof *l->lines);
  }
  l->ids[l->n] = id;
  l->texts[l->n] = text;
  l->lines[l->n++] = line;
}

/* An id: a non-empty string, or an integer (written in decimal). */
static char *read_id(json_t *v) {
  if (json_is_string(v) && json_string_length(v) && !memchr(json_string_value(v), '\t', json_string_length(v)))
    return cb_strdup(json_string_value(v));
  if (json_is_integer(v)) {
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)json_integer_value(v));
    return cb_strdup(s);
  }
  return NULL;
}

/* s[0..n) without leading and trailing ASCII white space, as Python's str.strip() of
 * what BEIR's models embed (Unicode spaces beyond ASCII are kept). */
static char *strip_copy(const char *s, size_t n) {
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  char *out = cb_malloc(n + 1);
  memcpy(out, s, n);
  out[n] = 0;
  return out;
}

/* One JSONL file of {"_id", "text"[, "title"]} objects. */
static cb_status read_jsonl(const char *path, int with_title, text_list *out, cb_error *err) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &b, err);
  if (st != CB_OK) return st;
  const char *p = b.data ? b.data : "", *end = p + b.len;
  long line = 0;
  while (p < end && st == CB_OK) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    line++;
    const char *q = p;
    p += len + (nl ? 1 : 0);
    size_t k = 0;
    while (k < len && isspace((unsigned char)q[k])) k++;
    if (k == len) continue; /* a blank line */
    json_error_t je;
    json_t *o = json_loadb(q, len, JSON_REJECT_DUPLICATES, &je);
    if (!json_is_object(o)) {
      st = o ? cb_error_at(err, CB_ERR_PARSE, path, line, 0, "expected a JSON object")
             : cb_error_at(err, CB_ERR_PARSE, path, line, je.column, "not JSON: %s", je.text);
      json_decref(o);
      break;
    }
    json_t *text = json_object_get(o, "text"), *title = json_object_get(o, "title");
    char *id = read_id(json_object_get(o, "_id"));
    if (!id) st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                              "field '_id': expected a non-empty string (no tab) or an integer");
    else if (!json_is_string(text))
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "field 'text': expected a string");
    else if (with_title && title && !json_is_null(title) && !json_is_string(title))
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "field 'title': expected a string");
    if (st == CB_OK) {
      /* BEIR's sentence-transformers models embed title + " " + text, stripped
       * (beir/retrieval/models/sentence_bert.py) */
      cb_buf t;
      cb_buf_init(&t, 0);
      if (with_title && json_is_string(title)) {
        cb_buf_append(&t, json_string_value(title), json_string_length(title));
        cb_buf_append_char(&t, ' ');
      }
      cb_buf_append(&t, json_string_value(text), json_string_length(text));
      char *s = strip_copy(t.data ? t.data : "", t.len);
      cb_buf_free(&t);
      if (!*s) {
        st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                         "field 'text': empty (an embedding endpoint refuses an empty input)");
        cb_free(s);
      } else {
        list_push(out, id, s, line);
        id = NULL;
      }
    }
    cb_free(id);
    json_decref(o);
  }
  cb_buf_free(&b);
  return st;
}

/* The ids sorted for lookups; a repeated id is an error naming both lines. */
static cb_status index_ids(const char *path, const text_list *l, id_entry **out, cb_error *err) {
  id_entry *e = cb_calloc(l->n ? l->n : 1, sizeof *e);
  for (size_t i = 0; i < l->n; i++) e[i] = (id_entry){l->ids[i], i, l->lines[i]};
  qsort(e, l->n, sizeof *e, id_cmp);
  for (size_t i = 1; i < l->n; i++)
    if (!strcmp(e[i - 1].id, e[i].id)) {
      long first = e[i - 1].line < e[i].line ? e[i - 1].line : e[i].line;
      long again = e[i - 1].line < e[i].line ? e[i].line : e[i - 1].line;
      cb_status st = cb_error_at(err, CB_ERR_PARSE, path, again, 0,
                                 "field '_id': '%.100s' again (first on line %ld)", e[i].id, first);
      cb_free(e);
      return st;
    }
  *out = e;
  return CB_OK;
}

static const id_entry *find_id(const id_entry *e, size_t n, const char *id) {
  id_entry key = {id, 0, 0};
  return bsearch(&key, e, n, sizeof *e, id_cmp);
}

static int judgment_cmp(const void *a, const void *b) {
  const cb_probe_embed_judgment *x = a, *y = b;
  if (x->query != y->query) return x->query < y->query ? -1 : 1;
  return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* One qrels field: [s, e) of the line. */
static char *field_copy(const char *s, const char *e) { return strip_copy(s, (size_t)(e - s)); }

/* The qrels rows against the corpus's and the queries' ids; judgments use the
 * queries' file indices (renumbered once the judged queries are known). */
static cb_status read_qrels(const char *path, const id_entry *docs, size_t n_docs,
                            const id_entry *queries, size_t n_queries,
                            cb_probe_embed_judgment **out, size_t *n_out, long **lines_out,
                            cb_error *err) {
  cb_buf b;
  cb_buf_init(&b, 0);
  cb_status st = cb_file_read_lines(path, CB_LIMIT_DATASET_BYTES, CB_LIMIT_LINE_BYTES, &b, err);
  if (st != CB_OK) return st;
  cb_probe_embed_judgment *j = NULL;
  long *lines = NULL;
  size_t n = 0, cap = 0;
  const char *p = b.data ? b.data : "", *end = p + b.len;
  long line = 0;
  while (p < end && st == CB_OK) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *q = p, *qe = p + len;
    p += len + (nl ? 1 : 0);
    if (len && qe[-1] == '\r') qe--;
    if (++line == 1) continue; /* the header (BEIR skips the first row) */
    if (q == qe) continue;
    const char *t1 = memchr(q, '\t', (size_t)(qe - q));
    const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(qe - t1 - 1)) : NULL;
    if (!t2 || memchr(t2 + 1, '\t', (size_t)(qe - t2 - 1))) {
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "expected three tab-separated fields: query-id, corpus-id, score");
      break;
    }
    char *qid = field_copy(q, t1), *did = field_copy(t1 + 1, t2), *sc = field_copy(t2 + 1, qe);
    const id_entry *qi = find_id(queries, n_queries, qid), *di = find_id(docs, n_docs, did);
    char *endp;
    errno = 0;
    long score = strtol(sc, &endp, 10);
    if (!*sc || *endp || errno)
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0, "field 'score': expected an integer, got '%.40s'", sc);
    else if (!qi)
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "field 'query-id': '%.100s' is not in queries.jsonl", qid);
    else if (!di)
      st = cb_error_at(err, CB_ERR_PARSE, path, line, 0,
                       "field 'corpus-id': '%.100s' is not in corpus.jsonl", did);
    if (st == CB_OK) {
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        j = cb_reallocarray(j, cap, sizeof *j);
        lines = cb_reallocarray(lines, cap, sizeof *lines);
      }
      j[n] = (cb_probe_embed_judgment){qi->index, di->index, score};
      lines[n++] = line;
    }
    cb_free(qid);
    cb_free(did);
    cb_free(sc);
  }
  cb_buf_free(&b);
  if (st == CB_OK && line == 0)
    st = cb_error_at(err, CB_ERR_PARSE, path, 1, 0,
                     "empty: expected a header line 'query-id<TAB>corpus-id<TAB>score' and rows");
  if (st != CB_OK) {
    cb_free(j);
    cb_free(lines);
    return st;
  }
  *out = j;
  *n_out = n;
  *lines_out = lines;
  return CB_OK;
}

void cb_probe_embed_set_free(cb_probe_embed_set *s) {
  for (size_t i = 0; i < s->n_docs; i++) {
    cb_free(s->doc_ids[i]);
    cb_free(s->doc_texts[i]);
  }
  for (size_t i = 0; i < s->n_queries; i++) {
    cb_free(s->query_ids[i]);
    cb_free(s->query_texts[i]);
  }
  cb_free(s->doc_ids);
  cb_free(s->doc_texts);
  cb_free(s->query_ids);
  cb_free(s->query_texts);
  cb_free(s->qrels);
  memset(s, 0, sizeof *s);
}

/* A judgment with its qrels line, for naming a repeated pair. */
typedef struct judgment_at {
  cb_probe_embed_judgment j;
  long line;
} judgment_at;

static int judgment_at_cmp(const void *a, const void *b) {
  const judgment_at *x = a, *y = b;
  int c = judgment_cmp(&x->j, &y->j);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* Keep the judged queries (file order), renumber the judgments, refuse a pair judged
 * twice. */
static cb_status judged_queries(const char *qrels_path, text_list *queries, const text_list *docs,
                                const cb_probe_embed_judgment *j, size_t n, const long *lines,
                                cb_probe_embed_set *out, cb_error *err) {
  size_t *new_index = cb_calloc(queries->n ? queries->n : 1, sizeof *new_index);
  char *judged = cb_calloc(queries->n ? queries->n : 1, 1);
  for (size_t i = 0; i < n; i++) judged[j[i].query] = 1;
  out->query_ids = cb_calloc(queries->n ? queries->n : 1, sizeof *out->query_ids);
  out->query_texts = cb_calloc(queries->n ? queries->n : 1, sizeof *out->query_texts);
  for (size_t q = 0; q < queries->n; q++) {
    if (!judged[q]) {
      out->unjudged_queries++;
      continue;
    }
    new_index[q] = out->n_queries;
    out->query_ids[out->n_queries] = queries->ids[q];
    out->query_texts[out->n_queries++] = queries->texts[q];
    queries->ids[q] = queries->texts[q] = NULL;
  }
  judgment_at *s = cb_calloc(n ? n : 1, sizeof *s);
  for (size_t i = 0; i < n; i++) {
    s[i].j = j[i];
    s[i].j.query = new_index[j[i].query];
    s[i].line = lines[i];
  }
  qsort(s, n, sizeof *s, judgment_at_cmp);
  cb_status st = CB_OK;
  for (size_t i = 1; i < n && st == CB_OK; i++)
    if (!judgment_cmp(&s[i - 1].j, &s[i].j))
      st = cb_error_at(err, CB_ERR_PARSE, qrels_path, s[i].line, 0,
                       "query '%.100s' and document '%.100s' judged again (first on line %ld)",
                       out->query_ids[s[i].j.query], docs->ids[s[i].j.doc], s[i - 1].line);
  if (st == CB_OK) {
    out->qrels = cb_calloc(n ? n : 1, sizeof *out->qrels);
    for (size_t i = 0; i < n; i++) out->qrels[i] = s[i].j;
    out->n_qrels = n;
  }
  cb_free(s);
  cb_free(judged);
  cb_free(new_index);
  return st;
}

cb_status cb_probe_embed_set_load(const char *dir, const char *split, cb_probe_embed_set *out,
                                  cb_error *err) {
  memset(out, 0, sizeof *out);
  char corpus[4096], queries_path[4096], qrels[4096];
  snprintf(corpus, sizeof corpus, "%s/corpus.jsonl", dir);
  snprintf(queries_path, sizeof queries_path, "%s/queries.jsonl", dir);
  snprintf(qrels, sizeof qrels, "%s/qrels/%s.tsv", dir, split);
  text_list docs = {0}, queries = {0};
  id_entry *doc_ix = NULL, *query_ix = NULL;
  cb_probe_embed_judgment *j = NULL;
  long *lines = NULL;
  size_t n = 0;
  cb_status st = read_jsonl(corpus, 1, &docs, err);
  if (st == CB_OK) st = read_jsonl(queries_path, 0, &queries, err);
  if (st == CB_OK) st = index_ids(corpus, &docs, &doc_ix, err);
  if (st == CB_OK) st = index_ids(queries_path, &queries, &query_ix, err);
  if (st == CB_OK && !docs.n) st = cb_error_at(err, CB_ERR_PARSE, corpus, 0, 0, "no documents");
  if (st == CB_OK)
    st = read_qrels(qrels, doc_ix, docs.n, query_ix, queries.n, &j, &n, &lines, err);
  if (st == CB_OK && !n)
    st = cb_error_at(err, CB_ERR_PARSE, qrels, 0, 0, "no judgments: nothing to evaluate");
  if (st == CB_OK) st = judged_queries(qrels, &queries, &docs, j, n, lines, out, err);
  cb_free(doc_ix);
  cb_free(query_ix);
  cb_free(j);
  cb_free(lines);
  if (st == CB_OK) {
    out->doc_ids = docs.ids;
    out->doc_texts = docs.texts;
    out->n_docs = docs.n;
    docs.ids = docs.texts = NULL;
    docs.n = 0;
  }
  list_free(&docs);
  list_free(&queries);
  if (st != CB_OK) cb_probe_embed_set_free(out);
  return st;
}
