/*
 * fuzz_yaml.c - libFuzzer driver for the YAML readers: scenarios (src/workload/
 * scenario.c), simulator profiles (src/sim/params.c), gate policies (src/gate/
 * policy_yaml.c) and calibration files (src/calib/cstat_yaml.c through a drift
 * distribution), all behind the limits of src/util/yaml_doc.c.
 *
 * Byte 0 picks the reader; the rest is the file. Checked: each either loads or fails
 * with a message (a parse error names the file); what loads validates.
 *
 * Build and run: `make fuzz FUZZ_TARGETS=yaml` (see the Makefile).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "calibench/calib.h"
#include "calibench/gate.h"
#include "calibench/sim.h"
#include "calibench/workload.h"
#include "fuzz_common.h"
#include "fuzz_memfile.h"

static void check_error(cb_status st, const cb_error *err, const char *name) {
  check(err->msg[0]);
  if (st == CB_ERR_PARSE) check(strstr(err->msg, name) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t reader = take_selector(&data, &size) & 3;
  cb_error err;
  cb_error_clear(&err);
  memfile m;
  memfile_open(&m, data, size);
  cb_status st;
  switch (reader) {
  case 0: {
    cb_scenario *sc = NULL;
    st = cb_scenario_parse((const char *)data, size, "fuzz.yaml", NULL, &sc, &err);
    if (st == CB_OK) {
      check(sc != NULL && cb_scenario_params(sc) != NULL);
      cb_scenario_free(sc);
    } else {
      check(sc == NULL);
      check_error(st, &err, "fuzz.yaml");
    }
    break;
  }
  case 1: {
    cb_sim_params p;
    cb_sim_default_params(&p);
    st = cb_sim_params_load_yaml(&p, m.path, &err);
    if (st == CB_OK) st = cb_sim_params_validate(&p, &err);
    if (st != CB_OK) check_error(st, &err, m.path);
    break;
  }
  case 2: {
    cb_gate_policy p;
    st = cb_gate_policy_load(&p, m.path, &err);
    if (st == CB_OK) cb_gate_policy_free(&p);
    else check_error(st, &err, m.path);
    break;
  }
  default: {
    cb_calib_dist d;
    st = cb_calib_dist_load(&d, m.path, &err);
    if (st == CB_OK) {
      check(d.len > 0 && cb_calib_dist_total(&d) > 0.0);
      cb_calib_dist_free(&d);
    } else {
      check_error(st, &err, m.path);
    }
    break;
  }
  }
  memfile_close(&m);
  return 0;
}
