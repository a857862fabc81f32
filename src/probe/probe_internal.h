/*
 * probe_internal.h - what the probes of src/probe/ share (internal to the probe
 * module; the public side is calibench/probe.h).
 */
#ifndef CALIBENCH_PROBE_INTERNAL_H
#define CALIBENCH_PROBE_INTERNAL_H

#include <stddef.h>

#include "calibench/probe.h"

/* 1 when s is a probe or metric name: [a-z0-9_]+, shorter than `max`. */
int cb__probe_name_ok(const char *s, size_t max);

#endif
