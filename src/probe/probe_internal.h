/*
 * probe_internal.h - what the probes of src/probe/ share (internal to the probe
 * module; the public side is calibench/probe.h).
 */
#ifndef CALIBENCH_PROBE_INTERNAL_H
#define CALIBENCH_PROBE_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "calibench/probe.h"
#include "calibench/probe_context.h"

/* 1 when s is a probe or metric name: [a-z0-9_]+, shorter than `max`. */
int cb__probe_name_ok(const char *s, size_t max);

/* One answered context prompt for the judge: its needle and its answer (borrowed). */
typedef struct cb__context_answer {
  const cb_probe_context_needle *needle;
  const char *text;
} cb__context_answer;

/* probe context's judge (context_judge.c): grade the n answers against their needles'
 * values with p->judge_url's model and p->judge_rubric (NULL: the built-in 0-1 rubric),
 * its run in DIR/judge. grades[i] gets answer i's grade as a share of the rubric's
 * scale, NAN when the judge gave none; *summary what the run counted. */
cb_status cb__context_judge(const cb_probe_context_params *p, const cb__context_answer *answers,
                            size_t n, const char *dir, FILE *log, volatile sig_atomic_t *stop,
                            double *grades, json_t **summary, cb_error *err);

#endif
