/*
 * manifest.c - the machine facts of a manifest: calibench's version and commit, and
 * the host (name, kernel, CPU model, cores), so a reader knows what produced a run.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "calibench/results.h"
#include "cb_version.h"

static void json_str(cb_buf *out, const char *key, const char *v) {
  cb_buf_appendf(out, "\"%s\":\"", key);
  cb_buf_append_json_string(out, v, strlen(v));
  cb_buf_append_char(out, '"');
}

/* "model name : AMD EPYC ..." from /proc/cpuinfo, or "". */
static void cpu_model(char *out, size_t n) {
  out[0] = '\0';
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (colon && !strncmp(line, "model name", 10)) {
      colon++;
      while (*colon == ' ') colon++;
      colon[strcspn(colon, "\n")] = '\0';
      snprintf(out, n, "%s", colon);
      break;
    }
  }
  fclose(f);
}

void cb_results_manifest_host(cb_buf *out) {
  cb_buf_append_str(out, "\"calibench\":{");
  json_str(out, "version", CB_VERSION_STRING);
  cb_buf_append_char(out, ',');
  json_str(out, "commit", CB_GIT_COMMIT);
  cb_buf_append_str(out, "},\"host\":{");
  struct utsname u;
  char host[256] = "", cpu[256];
  gethostname(host, sizeof host - 1);
  cpu_model(cpu, sizeof cpu);
  json_str(out, "hostname", host);
  if (uname(&u) == 0) {
    cb_buf_append_char(out, ',');
    json_str(out, "kernel", u.release);
    cb_buf_append_char(out, ',');
    json_str(out, "machine", u.machine);
  }
  cb_buf_append_char(out, ',');
  json_str(out, "cpu_model", cpu);
  cb_buf_appendf(out, ",\"cpus\":%ld}", sysconf(_SC_NPROCESSORS_ONLN));
}
