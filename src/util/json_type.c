/* json_type.c - a JSON value's kind in words (json_type.h). */
#include "util/json_type.h"

const char *cb__json_type_name(const json_t *v) {
  if (!v) return "nothing";
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "a value";
}
