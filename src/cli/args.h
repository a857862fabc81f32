/*
 * args.h - strict parsing of option values for the CLI: the whole string must be
 * a number in range, or the user gets "calibench: --OPT: expected ..., got '...'".
 */
#ifndef CALIBENCH_CLI_ARGS_H
#define CALIBENCH_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 on success, prints the error and returns -1 otherwise. */
int cli_parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out);
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out);
/* A byte size with an optional K, M or G suffix (powers of 1024). */
int cli_parse_bytes(const char *opt, const char *s, size_t *out);

#endif
