/*
 * behavior_refusal.c - the `refusal` section of a simulator behaviour file
 * (behavior_answer.h, docs/probe.md): its parser and the decision whether a prompt is
 * refused.
 */
#include <string.h>

#include "calibench/alloc.h"
#include "calibench/rng.h"
#include "calibench/workload.h"
#include "sim/behavior.h"
#include "sim/behavior_answer.h"

#define DEFAULT_TEXT "I'm sorry, but I can't help with that."

static const char *scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static void free_list(char **list, size_t n) {
  for (size_t i = 0; i < n; i++) cb_free(list[i]);
  cb_free(list);
}

/* A non-empty list of non-empty strings, copied into *out. */
static cb_status string_list(const cb__yaml_ctx *y, const yaml_node_t *v, const char *key,
                             char ***out, size_t *n) {
  if (v->type != YAML_SEQUENCE_NODE)
    return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected a list of strings");
  size_t count = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
  if (!count) return cb__yaml_key_at(y, v, CB_ERR_PARSE, key, "expected at least one string");
  char **list = cb_calloc(count, sizeof *list);
  size_t i = 0;
  for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++, i++) {
    const yaml_node_t *e = yaml_document_get_node(y->doc, *it);
    const char *s = NULL;
    cb_status st = cb__yaml_scalar(y->path, e, key, &s, y->err);
    if (st == CB_OK && !s[0]) st = cb__yaml_key_at(y, e, CB_ERR_PARSE, key, "expected a non-empty string");
    if (st != CB_OK) {
      free_list(list, i);
      return st;
    }
    list[i] = cb_strdup(s);
  }
  *out = list;
  *n = count;
  return CB_OK;
}

void cb__sim_refusal_free(cb__sim_refusal *r) {
  free_list(r->triggers, r->n_triggers);
  free_list(r->inducements, r->n_inducements);
  cb_free(r->text);
  memset(r, 0, sizeof *r);
}

static cb_status parse_key(const cb__yaml_ctx *y, const char *k, const yaml_node_t *v,
                           cb__sim_refusal *r) {
  const char *s;
  if (!strcmp(k, "triggers")) {
    return string_list(y, v, "refusal.triggers", &r->triggers, &r->n_triggers);
  }
  if (!strcmp(k, "inducements"))
    return string_list(y, v, "refusal.inducements", &r->inducements, &r->n_inducements);
  if (!strcmp(k, "induced_compliance"))
    return cb__yaml_number(y->path, v, "refusal.induced_compliance", 0, 0, 1,
                           &r->induced_compliance, y->err);
  if (!strcmp(k, "text")) {
    if (cb__yaml_scalar(y->path, v, "refusal.text", &s, y->err) != CB_OK) return CB_ERR_PARSE;
    if (!s[0]) return cb__yaml_key_at(y, v, CB_ERR_PARSE, "refusal.text", "expected a non-empty string");
    cb_free(r->text);
    r->text = cb_strdup(s);
    return CB_OK;
  }
  if (!strcmp(k, "mode")) {
    if (cb__yaml_scalar(y->path, v, "refusal.mode", &s, y->err) != CB_OK) return CB_ERR_PARSE;
    if (!strcmp(s, "content")) r->mode = CB__SIM_REFUSAL_CONTENT;
    else if (!strcmp(s, "field")) r->mode = CB__SIM_REFUSAL_FIELD;
    else if (!strcmp(s, "content_filter")) r->mode = CB__SIM_REFUSAL_FILTER;
    else
      return cb__yaml_key_at(y, v, CB_ERR_PARSE, "refusal.mode",
                             "expected content, field or content_filter, got '%s'", s);
    return CB_OK;
  }
  return cb__yaml_at(y, v, CB_ERR_PARSE,
                     "unknown key 'refusal.%s' (expected triggers, induced_compliance, "
                     "inducements, text or mode)", k);
}

cb_status cb__sim_refusal_parse(const cb__yaml_ctx *y, const yaml_node_t *map, cb__sim_refusal *out) {
  memset(out, 0, sizeof *out);
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(y, map, CB_ERR_PARSE, "refusal", "expected a mapping");
  cb_status st = CB_OK;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
       st == CB_OK && p < map->data.mapping.pairs.top; p++) {
    const yaml_node_t *k = yaml_document_get_node(y->doc, p->key);
    const yaml_node_t *v = yaml_document_get_node(y->doc, p->value);
    if (k->type != YAML_SCALAR_NODE) st = cb__yaml_at(y, k, CB_ERR_PARSE, "refusal: expected a key");
    else st = parse_key(y, scalar(k), v, out);
  }
  if (st == CB_OK && !out->triggers)
    st = cb__yaml_key_at(y, map, CB_ERR_PARSE, "refusal",
                         "needs 'triggers', the phrases whose prompts are refused");
  if (st != CB_OK) {
    cb__sim_refusal_free(out);
    return st;
  }
  if (!out->text) out->text = cb_strdup(DEFAULT_TEXT);
  return CB_OK;
}

/* `needle` in `hay` (hay_len bytes), ASCII case folded. */
static int contains_nocase(const char *hay, size_t hay_len, const char *needle) {
  size_t n = strlen(needle);
  if (!n || n > hay_len) return 0;
  for (size_t i = 0; i + n <= hay_len; i++) {
    size_t j = 0;
    while (j < n) {
      unsigned char a = (unsigned char)hay[i + j], b = (unsigned char)needle[j];
      if (a >= 'A' && a <= 'Z') a = (unsigned char)(a + 32);
      if (b >= 'A' && b <= 'Z') b = (unsigned char)(b + 32);
      if (a != b) break;
      j++;
    }
    if (j == n) return 1;
  }
  return 0;
}

int cb__sim_refusal_refuses(const cb__sim_refusal *r, const char *prompt, size_t len, double u) {
  int triggered = 0;
  for (size_t i = 0; i < r->n_triggers && !triggered; i++)
    triggered = contains_nocase(prompt, len, r->triggers[i]);
  if (!triggered) return 0;
  size_t n = r->n_inducements;
  const char *const *list = (const char *const *)r->inducements;
  if (!list) list = cb_workload_inducements(&n);
  int induced = 0;
  for (size_t i = 0; i < n && !induced; i++) induced = contains_nocase(prompt, len, list[i]);
  return !induced || u >= r->induced_compliance;
}

/* ---- the section (behavior.h) ------------------------------------------------------ */

cb_status cb__sim_behavior_refusal_parse(const cb__yaml_ctx *y, const yaml_node_t *map, void **out) {
  cb__sim_refusal *r = cb_calloc(1, sizeof *r);
  *out = r; /* on failure too: the loader frees it (behavior.h) */
  return cb__sim_refusal_parse(y, map, r);
}

void cb__sim_behavior_refusal_free(void *section) {
  cb__sim_refusal_free(section);
  cb_free(section);
}

int cb__sim_behavior_refusal_answer(const void *section, const cb__sim_behavior_request *rq,
                                    cb__sim_behavior_reply *reply) {
  /* The compliance draw is the prompt text's, not the request's arrival: the same
   * prompt gets the same decision at any concurrency. */
  double u = cb__sim_behavior_uniform(rq, UINT64_C(0x636f6d706c79) /* "comply" */, 0);
  if (!cb__sim_refusal_refuses(section, rq->text, rq->len, u)) return 0;
  reply->answer = cb__sim_refusal_answer(section, rq->vocab ? rq->vocab : CB_WORKLOAD_APPROX_VOCAB);
  return 1;
}
