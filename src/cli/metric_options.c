/*
 * metric_options.c - the metric options of eval score as a command's options
 * (metric_options.h).
 */
#include <unistd.h>

#include "metric_options.h"

void cli_metric_options_init(cli_metric_options *m, size_t max, int first) {
  m->n = cb_eval_option_defs(m->defs, max < CLI_METRIC_OPTIONS_MAX ? max : CLI_METRIC_OPTIONS_MAX);
  m->first = first;
}

void cli_metric_options_append(const cli_metric_options *m, struct option *table, size_t *n) {
  for (size_t i = 0; i < m->n; i++)
    table[(*n)++] = (struct option){m->defs[i]->name,
                                    m->defs[i]->arg ? required_argument : no_argument, NULL,
                                    m->first + (int)i};
  table[*n] = (struct option){NULL, 0, NULL, 0};
}

void cli_metric_options_usage(const cli_metric_options *m, FILE *out, int width) {
  for (size_t i = 0; i < m->n; i++) {
    const cb_eval_option_def *d = m->defs[i];
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", d->name, d->arg ? " " : "", d->arg ? d->arg : "");
    fprintf(out, "  %-*s %s\n", width, left, d->help);
  }
}

int cli_metric_options_take(const cli_metric_options *m, int val, const char *arg,
                            cb_eval_option *opts, size_t *n_opts) {
  if (val < m->first || val >= m->first + (int)m->n) return 0;
  const cb_eval_option_def *d = m->defs[val - m->first];
  opts[(*n_opts)++] = (cb_eval_option){d->name, d->arg ? arg : NULL, 0};
  return 1;
}

int cli_eval_default_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) return 1;
  return n < CLI_EVAL_THREADS_DEFAULT_MAX ? (int)n : CLI_EVAL_THREADS_DEFAULT_MAX;
}
