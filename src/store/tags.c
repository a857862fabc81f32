/*
 * tags.c - a run's key=value labels. Kept sorted by key so a tag set has one
 * canonical text ("branch=main,model=llama,stage=prod"), which the registry stores
 * and compares; the series of a run is that set without the tags that change with
 * every change under test (commit, version).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "calibench/store.h"

static const char *const stages[] = {"pretrain", "sft", "rlhf", "quantized", "prod"};

static int key_ok(const char *k) {
  size_t n = strlen(k);
  if (n == 0 || n >= CB_TAG_KEY_MAX || !islower((unsigned char)k[0])) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)k[i];
    if (!(islower(c) || isdigit(c) || c == '_' || c == '.' || c == '-')) return 0;
  }
  return 1;
}

static int value_ok(const char *v) {
  size_t n = strlen(v);
  if (n == 0 || n >= CB_TAG_VALUE_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)v[i];
    if (c < 0x20 || c == 0x7f || c == ',') return 0;
  }
  return 1;
}

cb_status cb_tags_set(cb_tags *t, const char *key, const char *value, cb_error *err) {
  if (!key_ok(key))
    return cb_error_set(err, CB_ERR_INVALID,
                        "tag key '%s': expected a lowercase name of [a-z0-9_.-] starting "
                        "with a letter, at most %d characters", key, CB_TAG_KEY_MAX - 1);
  if (!value_ok(value))
    return cb_error_set(err, CB_ERR_INVALID,
                        "tag '%s': value '%s' must be 1..%d characters without ',' or control "
                        "characters", key, value, CB_TAG_VALUE_MAX - 1);
  if (!strcmp(key, "stage")) {
    size_t i = 0;
    while (i < sizeof stages / sizeof stages[0] && strcmp(stages[i], value)) i++;
    if (i == sizeof stages / sizeof stages[0])
      return cb_error_set(err, CB_ERR_INVALID, "tag 'stage': '%s' is not one of %s", value,
                          CB_TAG_STAGES);
  }
  size_t i = 0;
  while (i < t->count && strcmp(t->items[i].key, key) < 0) i++;
  if (i < t->count && !strcmp(t->items[i].key, key)) {
    snprintf(t->items[i].value, sizeof t->items[i].value, "%s", value);
    return CB_OK;
  }
  if (t->count == CB_TAGS_MAX)
    return cb_error_set(err, CB_ERR_CAPACITY, "at most %d tags per run", CB_TAGS_MAX);
  memmove(&t->items[i + 1], &t->items[i], (t->count - i) * sizeof t->items[0]);
  snprintf(t->items[i].key, sizeof t->items[i].key, "%s", key);
  snprintf(t->items[i].value, sizeof t->items[i].value, "%s", value);
  t->count++;
  return CB_OK;
}

cb_status cb_tags_add(cb_tags *t, const char *kv, cb_error *err) {
  const char *eq = strchr(kv, '=');
  if (!eq) return cb_error_set(err, CB_ERR_INVALID, "tag '%s': expected key=value", kv);
  char key[CB_TAG_KEY_MAX + 1];
  size_t n = (size_t)(eq - kv);
  if (n >= sizeof key) n = sizeof key - 1; /* too long: key_ok rejects it */
  memcpy(key, kv, n);
  key[n] = '\0';
  return cb_tags_set(t, key, eq + 1, err);
}

const char *cb_tags_get(const cb_tags *t, const char *key) {
  for (size_t i = 0; i < t->count; i++)
    if (!strcmp(t->items[i].key, key)) return t->items[i].value;
  return NULL;
}

void cb_tags_format(const cb_tags *t, char *out, size_t n) {
  size_t off = 0;
  if (n) out[0] = '\0';
  for (size_t i = 0; i < t->count && off < n; i++) {
    int w = snprintf(out + off, n - off, "%s%s=%s", i ? "," : "", t->items[i].key,
                     t->items[i].value);
    if (w < 0) break;
    off += (size_t)w;
  }
}

cb_status cb_tags_parse(cb_tags *t, const char *text, cb_error *err) {
  cb_tags tmp = *t;
  const char *p = text;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char item[CB_TAG_KEY_MAX + CB_TAG_VALUE_MAX + 2];
    if (n >= sizeof item) return cb_error_set(err, CB_ERR_INVALID, "tag '%.40s...' is too long", p);
    memcpy(item, p, n);
    item[n] = '\0';
    cb_status st = cb_tags_add(&tmp, item, err);
    if (st != CB_OK) return st;
    p += n + (end ? 1 : 0);
  }
  *t = tmp;
  return CB_OK;
}

void cb_tags_series(const cb_tags *t, cb_tags *series) {
  series->count = 0;
  for (size_t i = 0; i < t->count; i++)
    if (strcmp(t->items[i].key, "commit") && strcmp(t->items[i].key, "version"))
      series->items[series->count++] = t->items[i];
}
