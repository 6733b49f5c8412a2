/* SPDX-License-Identifier: MIT */
/*
 * output.h - what the output files share: results.c groups the trials into
 * rows; table.c, goals.c and export.c print them.
 */
#ifndef SWAIT_BENCH_OUTPUT_H
#define SWAIT_BENCH_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "bench.h"

/* Repetitions a row keeps a median of (--reps at most). */
#define MAX_REPS 1000

int cmp_double(const void *a, const void *b);
/* Sorts v in place; the nearest-rank median. */
double median_of(double *v, size_t n);
/* Whether two rows are of one block (all but the mechanism alike). */
bool row_block_eq(const struct row *a, const struct row *b);
/* ", no load" or ", load cpu" after the regime, when --load was given. */
const char *load_label(const struct row *r);

void print_table(FILE *f, struct row *r, size_t n);
void print_goals(FILE *f, const struct row *r, size_t n);
void print_csv(FILE *f, struct row *r, size_t n);
void print_json(FILE *f, struct row *r, size_t n);

#endif /* SWAIT_BENCH_OUTPUT_H */
