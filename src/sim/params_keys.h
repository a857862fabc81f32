/*
 * params_keys.h - the keys of a simulator profile, one table for each level (top,
 * model:, gpu:), in the order a profile is written: params.c reads a profile through
 * them and profile_write.c writes one, so a key is read and written alike.
 */
#ifndef CALIBENCH_SIM_PARAMS_KEYS_H
#define CALIBENCH_SIM_PARAMS_KEYS_H

#include <stddef.h>

/* How a key's value is spelled and where it is kept. */
typedef enum {
  CB__SIM_KEY_INT,       /* int */
  CB__SIM_KEY_I64,       /* int64_t */
  CB__SIM_KEY_U64,       /* uint64_t, any whole number */
  CB__SIM_KEY_DBL,       /* double */
  CB__SIM_KEY_BOOL,      /* int, true/false */
  CB__SIM_KEY_STR,       /* char[size] */
  CB__SIM_KEY_US_NS,     /* uint64_t nanoseconds, spelled in microseconds */
  CB__SIM_KEY_GIB_BYTES, /* double bytes, spelled in GiB */
  CB__SIM_KEY_WDTYPE,    /* cb_sim_dtype: bf16, fp8 or int4 */
  CB__SIM_KEY_KVDTYPE    /* cb_sim_dtype: bf16 or fp8 */
} cb__sim_key_type;

typedef struct cb__sim_key {
  const char *key;
  cb__sim_key_type type;
  size_t off;      /* offset in the target struct */
  double min, max; /* inclusive range for numbers */
  int min_open;    /* 1: min is exclusive */
  size_t size;     /* CB__SIM_KEY_STR: buffer size */
} cb__sim_key;

extern const cb__sim_key cb__sim_param_keys[]; /* cb_sim_params, but model: and gpu: */
extern const size_t cb__sim_param_keys_len;
extern const cb__sim_key cb__sim_model_keys[]; /* cb_sim_model */
extern const size_t cb__sim_model_keys_len;
extern const cb__sim_key cb__sim_gpu_keys[]; /* cb_sim_gpu */
extern const size_t cb__sim_gpu_keys_len;

#endif
