/*
 * sort_internal.h - the small-array sort shared by the radix sort (sort.c) and the
 * percentile selection (select.c).
 */
#ifndef CALIBENCH_STATS_SORT_INTERNAL_H
#define CALIBENCH_STATS_SORT_INTERNAL_H

#include <stddef.h>

/* Ascending insertion sort of v[0..n): the fastest for a few dozen values. */
void cb__stats_insertion_sort(double *v, size_t n);

#endif
