/*
 * dialog_scenario.c - `probe dialog` scenario files (dialog.h, docs/probe.md):
 *
 *   clarification: ["could you remind me", ...]   # optional: replaces the built-in list
 *   scenarios:
 *     - name: trip
 *       system: "You are a travel agent."        # optional
 *       max_tokens: 128                           # optional (128)
 *       slots: {budget: "(\\d+) ?EUR"}            # optional: a value's pattern, for not_contradicts
 *       turns:
 *         - user: "My budget is 300 EUR."
 *           set: {budget: "300"}
 *         - user: "Which hotel fits my budget?"
 *           checks:
 *             - mentions: budget
 *             - not_contradicts: budget
 *             - regex: "(?i)hotel"
 *             - {json: "$.budget", slot: budget}   # or equals: "300"; neither: the path exists
 *
 * Every error names the file and line of what is wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "calibench/alloc.h"
#include "probe/dialog.h"
#include "util/yaml_doc.h"

/* Questions a model asks back when it lacks something; caseless. A clarification is
 * an answer matching one of these that also holds a '?'. */
static const char *const CLARIFY_DEFAULT[] = {
    "\\b(could|can|would) you (please )?(remind|tell|confirm|clarify|specify|repeat|share)",
    "\\bremind me\\b",
    "\\bwhat (is|was|are|were) (your|the)\\b",
    "\\bwhat's your\\b",
    "\\bdo you mean\\b",
    "\\b(please|kindly) (confirm|clarify|specify)\\b",
    "\\b(i|I) (don't|do not) (know|recall|remember) (your|the)\\b",
};

#define MAX_TOKENS_DEFAULT 128

typedef struct loader {
  cb__yaml_ctx y;
  cb__probe_dialog_suite *suite;
} loader;

static const char *scalar_text(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static yaml_node_t *node(const loader *l, int id) { return yaml_document_get_node(l->y.doc, id); }

/* A string value: a non-empty scalar. */
static cb_status string_at(const loader *l, const yaml_node_t *n, const char *key, int allow_empty,
                           char **out) {
  const char *s;
  cb_status st = cb__yaml_scalar(l->y.path, n, key, &s, l->y.err);
  if (st != CB_OK) return st;
  if (!allow_empty && !*s) return cb__yaml_key_at(&l->y, n, CB_ERR_PARSE, key, "expected a non-empty text");
  *out = cb_strdup(s);
  return CB_OK;
}

static cb_status mapping_at(const loader *l, const yaml_node_t *n, const char *key) {
  if (n->type == YAML_MAPPING_NODE) return CB_OK;
  return cb__yaml_key_at(&l->y, n, CB_ERR_PARSE, key, "expected a mapping");
}

static cb_status list_at(const loader *l, const yaml_node_t *n, const char *key) {
  if (n->type == YAML_SEQUENCE_NODE && n->data.sequence.items.top > n->data.sequence.items.start)
    return CB_OK;
  return cb__yaml_key_at(&l->y, n, CB_ERR_PARSE, key, "expected a non-empty list");
}

static cb_status compile_at(const loader *l, const yaml_node_t *n, const char *key,
                            const char *pattern, int caseless, pcre2_code **out) {
  char *why = NULL;
  *out = cb__probe_dialog_compile(pattern, caseless, &why);
  if (*out) return CB_OK;
  cb_status st = cb__yaml_key_at(&l->y, n, CB_ERR_PARSE, key, "not a valid regular expression: %s", why);
  cb_free(why);
  return st;
}

/* ---- slots ----------------------------------------------------------------------------- */

static int slot_find(const cb__probe_dialog_scenario *sc, const char *name) {
  for (size_t i = 0; i < sc->n_slots; i++)
    if (!strcmp(sc->slots[i].name, name)) return (int)i;
  return -1;
}

static int slot_add(cb__probe_dialog_scenario *sc, const char *name) {
  int i = slot_find(sc, name);
  if (i >= 0) return i;
  sc->slots = cb_reallocarray(sc->slots, sc->n_slots + 1, sizeof *sc->slots);
  sc->slots[sc->n_slots] = (cb__probe_dialog_slot){.name = cb_strdup(name)};
  return (int)sc->n_slots++;
}

static cb_status load_slots(const loader *l, const yaml_node_t *map, cb__probe_dialog_scenario *sc) {
  cb_status st = mapping_at(l, map, "slots");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; !st && p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
    const char *name;
    if ((st = cb__yaml_scalar(l->y.path, k, "slots", &name, l->y.err)) != CB_OK) break;
    int i = slot_add(sc, name); /* before taking the address: it may move the slots */
    cb__probe_dialog_slot *s = &sc->slots[i];
    if ((st = string_at(l, v, name, 0, &s->pattern)) != CB_OK) break;
    st = compile_at(l, v, name, s->pattern, 1, &s->re);
  }
  return st;
}

/* ---- checks ----------------------------------------------------------------------------- */

/* What each turn's slots hold when it is sent: values[slot] (borrowed from the
 * scenario's `set` nodes) and the turn that set it. */
typedef struct slot_state {
  const char **value;
  long *set_turn;
} slot_state;

static cb_status check_slot(const loader *l, const yaml_node_t *n, const char *key,
                            const cb__probe_dialog_scenario *sc, const slot_state *ss, size_t turn,
                            cb__probe_dialog_check *c) {
  const char *name = scalar_text(n);
  c->slot = slot_find(sc, name);
  if (c->slot < 0 || !ss->value[c->slot])
    return cb__yaml_key_at(&l->y, n, CB_ERR_PARSE, key,
                           "slot '%s' is not set by this or an earlier turn (set: {%s: VALUE})", name,
                           name);
  c->expected = cb_strdup(ss->value[c->slot]);
  c->depth = (int)(turn - (size_t)ss->set_turn[c->slot]);
  return CB_OK;
}

static cb_status load_check(const loader *l, const yaml_node_t *map, const cb__probe_dialog_scenario *sc,
                            const slot_state *ss, size_t turn, cb__probe_dialog_check *c) {
  *c = (cb__probe_dialog_check){.slot = -1, .depth = -1, .line = cb__yaml_line(map)};
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "checks",
                           "expected a mapping: {regex: RE}, {mentions: SLOT}, {not_contradicts: "
                           "SLOT} or {json: PATH, equals: V | slot: SLOT}");
  int kinds = 0;
  const yaml_node_t *equals = NULL, *slot = NULL, *kind_node = NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
    const char *key = k->type == YAML_SCALAR_NODE ? scalar_text(k) : "";
    const char *text;
    cb_status st = cb__yaml_scalar(l->y.path, v, key, &text, l->y.err);
    if (st != CB_OK) return st;
    cb__probe_dialog_check_kind kind = CB__PROBE_DIALOG_CHECK_KINDS;
    for (int i = 0; i < CB__PROBE_DIALOG_CHECK_KINDS; i++)
      if (!strcmp(key, cb__probe_dialog_check_kind_name((cb__probe_dialog_check_kind)i))) kind = (cb__probe_dialog_check_kind)i;
    if (kind != CB__PROBE_DIALOG_CHECK_KINDS) {
      kinds++;
      c->kind = kind;
      kind_node = v;
    } else if (!strcmp(key, "equals")) {
      equals = v;
    } else if (!strcmp(key, "slot")) {
      slot = v;
    } else {
      return cb__yaml_at(&l->y, k, CB_ERR_PARSE,
                         "unknown key '%s' in a check (known: regex, json, mentions, "
                         "not_contradicts, equals, slot)", key);
    }
  }
  if (kinds != 1)
    return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "checks",
                           "expected exactly one of regex, json, mentions, not_contradicts, got %d", kinds);
  if ((equals || slot) && c->kind != CB__PROBE_DIALOG_JSON)
    return cb__yaml_key_at(&l->y, equals ? equals : slot, CB_ERR_PARSE, equals ? "equals" : "slot",
                           "applies to a json check only");
  if (equals && slot)
    return cb__yaml_key_at(&l->y, slot, CB_ERR_PARSE, "slot", "give equals or slot, not both");
  const char *kname = cb__probe_dialog_check_kind_name(c->kind);
  switch (c->kind) {
    case CB__PROBE_DIALOG_REGEX: {
      cb_status st = string_at(l, kind_node, kname, 0, &c->pattern);
      return st ? st : compile_at(l, kind_node, kname, c->pattern, 0, &c->re);
    }
    case CB__PROBE_DIALOG_JSON: {
      cb_status st = string_at(l, kind_node, kname, 0, &c->path);
      if (st != CB_OK) return st;
      if (equals) return string_at(l, equals, "equals", 1, &c->expected);
      return slot ? check_slot(l, slot, "slot", sc, ss, turn, c) : CB_OK;
    }
    case CB__PROBE_DIALOG_MENTIONS:
      return check_slot(l, kind_node, kname, sc, ss, turn, c);
    case CB__PROBE_DIALOG_NOT_CONTRADICTS: {
      cb_status st = check_slot(l, kind_node, kname, sc, ss, turn, c);
      if (st != CB_OK) return st;
      if (!sc->slots[c->slot].re)
        return cb__yaml_key_at(&l->y, kind_node, CB_ERR_PARSE, kname,
                               "slot '%s' has no pattern: give slots: {%s: REGEX} (the values of "
                               "its kind an answer could state)",
                               sc->slots[c->slot].name, sc->slots[c->slot].name);
      c->re = sc->slots[c->slot].re; /* borrowed: the slot frees it */
      return CB_OK;
    }
    default:
      return CB_OK;
  }
}

/* ---- turns and scenarios ------------------------------------------------------------------ */

static cb_status load_set(const loader *l, const yaml_node_t *map, cb__probe_dialog_scenario *sc,
                          slot_state *ss, size_t turn) {
  cb_status st = mapping_at(l, map, "set");
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; !st && p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
    const char *name, *value;
    if ((st = cb__yaml_scalar(l->y.path, k, "set", &name, l->y.err)) != CB_OK) break;
    if ((st = cb__yaml_scalar(l->y.path, v, name, &value, l->y.err)) != CB_OK) break;
    if (!*value) return cb__yaml_key_at(&l->y, v, CB_ERR_PARSE, name, "expected a non-empty value");
    size_t before = sc->n_slots;
    int i = slot_add(sc, name);
    if (sc->n_slots != before) { /* a new slot: room for it in the state */
      ss->value = cb_reallocarray(ss->value, sc->n_slots, sizeof *ss->value);
      ss->set_turn = cb_reallocarray(ss->set_turn, sc->n_slots, sizeof *ss->set_turn);
      ss->value[i] = NULL;
    }
    ss->value[i] = value;
    ss->set_turn[i] = (long)turn;
  }
  return st;
}

static cb_status load_turn(const loader *l, const yaml_node_t *map, cb__probe_dialog_scenario *sc,
                           slot_state *ss, size_t turn) {
  cb__probe_dialog_turn *t = &sc->turns[turn];
  t->line = cb__yaml_line(map);
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "turns", "expected a mapping {user: TEXT, ...}");
  const yaml_node_t *user = NULL, *set = NULL, *checks = NULL;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
    const char *key = k->type == YAML_SCALAR_NODE ? scalar_text(k) : "";
    if (!strcmp(key, "user")) user = v;
    else if (!strcmp(key, "set")) set = v;
    else if (!strcmp(key, "checks")) checks = v;
    else
      return cb__yaml_at(&l->y, k, CB_ERR_PARSE, "unknown key '%s' in a turn (known: user, set, checks)", key);
  }
  if (!user) return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "user", "missing: every turn has a user message");
  cb_status st = string_at(l, user, "user", 0, &t->user);
  /* The turn's own statements count for its checks (depth 0). */
  if (!st && set) st = load_set(l, set, sc, ss, turn);
  if (st || !checks) return st;
  if ((st = list_at(l, checks, "checks")) != CB_OK) return st;
  size_t n = (size_t)(checks->data.sequence.items.top - checks->data.sequence.items.start);
  t->checks = cb_calloc(n, sizeof *t->checks);
  for (size_t i = 0; i < n && !st; i++) {
    st = load_check(l, node(l, checks->data.sequence.items.start[i]), sc, ss, turn, &t->checks[i]);
    t->n_checks = i + 1;
  }
  return st;
}

static cb_status load_scenario(const loader *l, const yaml_node_t *map, cb__probe_dialog_scenario *sc) {
  sc->max_tokens = MAX_TOKENS_DEFAULT;
  if (map->type != YAML_MAPPING_NODE)
    return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "scenarios", "expected a mapping {name, turns, ...}");
  const yaml_node_t *turns = NULL, *slots = NULL;
  cb_status st = CB_OK;
  for (yaml_node_pair_t *p = map->data.mapping.pairs.start; !st && p < map->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
    const char *key = k->type == YAML_SCALAR_NODE ? scalar_text(k) : "";
    double x;
    if (!strcmp(key, "name")) st = string_at(l, v, key, 0, &sc->name);
    else if (!strcmp(key, "system")) st = string_at(l, v, key, 0, &sc->system);
    else if (!strcmp(key, "max_tokens")) {
      st = cb__yaml_number(l->y.path, v, key, 1, 0, 1 << 20, &x, l->y.err);
      sc->max_tokens = (int64_t)x;
      if (!st && x != (double)sc->max_tokens) st = cb__yaml_key_at(&l->y, v, CB_ERR_PARSE, key, "expected a whole number");
    } else if (!strcmp(key, "slots")) slots = v;
    else if (!strcmp(key, "turns")) turns = v;
    else
      st = cb__yaml_at(&l->y, k, CB_ERR_PARSE,
                       "unknown key '%s' in a scenario (known: name, system, max_tokens, slots, turns)", key);
  }
  if (st) return st;
  if (!sc->name) return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "name", "missing: every scenario has a name");
  if (!turns) return cb__yaml_key_at(&l->y, map, CB_ERR_PARSE, "turns", "missing: every scenario has turns");
  if (slots && (st = load_slots(l, slots, sc)) != CB_OK) return st;
  if ((st = list_at(l, turns, "turns")) != CB_OK) return st;
  size_t n = (size_t)(turns->data.sequence.items.top - turns->data.sequence.items.start);
  sc->turns = cb_calloc(n, sizeof *sc->turns);
  slot_state ss = {.value = cb_calloc(sc->n_slots + 1, sizeof *ss.value),
                   .set_turn = cb_calloc(sc->n_slots + 1, sizeof *ss.set_turn)};
  for (size_t i = 0; i < n && !st; i++) {
    st = load_turn(l, node(l, turns->data.sequence.items.start[i]), sc, &ss, i);
    sc->n_turns = i + 1;
  }
  cb_free(ss.value);
  cb_free(ss.set_turn);
  return st;
}

static cb_status load_clarify(const loader *l, const yaml_node_t *list) {
  cb_status st = list_at(l, list, "clarification");
  if (st) return st;
  size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
  l->suite->clarify = cb_calloc(n, sizeof *l->suite->clarify);
  for (size_t i = 0; i < n; i++) {
    yaml_node_t *v = node(l, list->data.sequence.items.start[i]);
    const char *text;
    if ((st = cb__yaml_scalar(l->y.path, v, "clarification", &text, l->y.err)) != CB_OK) return st;
    if ((st = compile_at(l, v, "clarification", text, 1, &l->suite->clarify[i])) != CB_OK) return st;
    l->suite->n_clarify = i + 1;
  }
  return CB_OK;
}

static cb_status load_root(const loader *l, const yaml_node_t *root) {
  if (root->type != YAML_MAPPING_NODE)
    return cb__yaml_at(&l->y, root, CB_ERR_PARSE, "expected a mapping with 'scenarios' (docs/probe.md)");
  const yaml_node_t *scenarios = NULL, *clarify = NULL;
  for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node(l, p->key);
    const char *key = k->type == YAML_SCALAR_NODE ? scalar_text(k) : "";
    if (!strcmp(key, "scenarios")) scenarios = node(l, p->value);
    else if (!strcmp(key, "clarification")) clarify = node(l, p->value);
    else
      return cb__yaml_at(&l->y, k, CB_ERR_PARSE, "unknown key '%s' (known: scenarios, clarification)", key);
  }
  if (!scenarios) return cb__yaml_at(&l->y, root, CB_ERR_PARSE, "key 'scenarios': missing");
  cb_status st = list_at(l, scenarios, "scenarios");
  if (st) return st;
  cb__probe_dialog_suite *s = l->suite;
  size_t n = (size_t)(scenarios->data.sequence.items.top - scenarios->data.sequence.items.start);
  s->scenarios = cb_calloc(n, sizeof *s->scenarios);
  for (size_t i = 0; i < n && !st; i++) {
    yaml_node_t *v = node(l, scenarios->data.sequence.items.start[i]);
    st = load_scenario(l, v, &s->scenarios[i]);
    s->n = i + 1;
    for (size_t j = 0; !st && j < i; j++)
      if (!strcmp(s->scenarios[j].name, s->scenarios[i].name))
        st = cb__yaml_key_at(&l->y, v, CB_ERR_PARSE, "name", "scenario '%s' is named twice", s->scenarios[i].name);
    if (!st && s->scenarios[i].n_turns > s->max_turns) s->max_turns = s->scenarios[i].n_turns;
  }
  if (!st && clarify) st = load_clarify(l, clarify);
  if (st || s->n_clarify) return st;
  size_t nd = sizeof CLARIFY_DEFAULT / sizeof *CLARIFY_DEFAULT;
  s->clarify = cb_calloc(nd, sizeof *s->clarify);
  for (size_t i = 0; i < nd; i++) {
    char *why = NULL;
    s->clarify[i] = cb__probe_dialog_compile(CLARIFY_DEFAULT[i], 1, &why);
    if (!s->clarify[i]) abort(); /* the built-in list compiles */
  }
  s->n_clarify = nd;
  return CB_OK;
}

cb_status cb__probe_dialog_suite_load(const char *path, cb__probe_dialog_suite *out, cb_error *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  yaml_document_t doc;
  cb_status st = cb__yaml_load_file(path, &doc, err);
  if (st != CB_OK) return st;
  loader l = {.y = {path, &doc, err}, .suite = out};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!root) st = cb_error_at(err, CB_ERR_PARSE, path, 1, 0, "empty file: expected 'scenarios'");
  else st = load_root(&l, root);
  yaml_document_delete(&doc);
  if (st != CB_OK) cb__probe_dialog_suite_free(out);
  return st;
}

void cb__probe_dialog_suite_free(cb__probe_dialog_suite *s) {
  for (size_t i = 0; i < s->n; i++) {
    cb__probe_dialog_scenario *sc = &s->scenarios[i];
    for (size_t t = 0; t < sc->n_turns; t++) {
      cb__probe_dialog_turn *turn = &sc->turns[t];
      for (size_t c = 0; c < turn->n_checks; c++) {
        cb__probe_dialog_check *ch = &turn->checks[c];
        if (ch->kind == CB__PROBE_DIALOG_REGEX) pcre2_code_free(ch->re);
        cb_free(ch->pattern);
        cb_free(ch->path);
        cb_free(ch->expected);
      }
      cb_free(turn->checks);
      cb_free(turn->user);
    }
    for (size_t k = 0; k < sc->n_slots; k++) {
      cb_free(sc->slots[k].name);
      cb_free(sc->slots[k].pattern);
      pcre2_code_free(sc->slots[k].re);
    }
    cb_free(sc->slots);
    cb_free(sc->turns);
    cb_free(sc->name);
    cb_free(sc->system);
  }
  cb_free(s->scenarios);
  for (size_t i = 0; i < s->n_clarify; i++) pcre2_code_free(s->clarify[i]);
  cb_free(s->clarify);
  memset(s, 0, sizeof *s);
}
