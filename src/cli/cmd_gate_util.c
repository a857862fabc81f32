/*
 * cmd_gate_util.c - small helpers of the store/history/gate commands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibench/secret.h"
#include "gate_cli.h"

void gate_cli_registry_label(const char *target, char *out, size_t n) {
  cb_secret_mask_url(target ? target : cb_store_default_target(), out, n);
}

void gate_cli_apply_fault_hook(cb_store *s) {
  const char *f = getenv("CALIBENCH_TEST_STORE_FAULT");
  if (!f || !f[0]) return;
  int crash = !strncmp(f, "crash:", 6);
  const char *num = strchr(f, ':');
  if (!num || (!crash && strncmp(f, "fail:", 5))) {
    fprintf(stderr, "calibench: ignoring CALIBENCH_TEST_STORE_FAULT='%s' (fail:N or crash:N)\n", f);
    return;
  }
  cb_store_inject_fault(s, strtol(num + 1, NULL, 10), crash);
}
