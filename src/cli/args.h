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
/* A duration flag (cb_duration_parse: "500ms", "2s", "1m"; a bare number is seconds).
 * 0 passes when `zero_ok` (the flag's "none"); any other value must be >= min_ns. */
int cli_parse_duration(const char *opt, const char *s, int zero_ok, uint64_t min_ns,
                       uint64_t *out_ns);
/* A price per 1,000 tokens, read as `calibrate cost` reads its price_input_per_1k
 * (cb_calib_price_parse): a number in [0, 1e9]. */
int cli_parse_price(const char *opt, const char *s, double *out);
/* A byte size with an optional K, M or G suffix (powers of 1024). */
int cli_parse_bytes(const char *opt, const char *s, size_t *out);

#endif
