/*
 * json_type.h - what kind of JSON value a reader met, worded for its error messages
 * ("expected ..., got an array").
 */
#ifndef CALIBENCH_UTIL_JSON_TYPE_H
#define CALIBENCH_UTIL_JSON_TYPE_H

#include <jansson.h>

/* "an object", "an array", "a string", "a number", "a boolean", "null"; "nothing"
 * for NULL (a key that is absent). */
const char *cb__json_type_name(const json_t *v);

#endif
