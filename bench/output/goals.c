// SPDX-License-Identifier: MIT
/*
 * goals.c - libswait's performance goals (README, Performance), judged on
 * the rows of this run and printed under the table.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"
#include "output.h"

/*
 * The row of (scenario, metric, series, mech) measured without load under
 * placement (same or split), for a goal.  Rows of one thread (nowaiter)
 * and of whole programs (unpinned) count as any placement.
 */
static const struct row *find_row_at(const struct row *r, size_t n,
				     const char *scenario, const char *metric,
				     const char *series, const char *mech,
				     const char *placement)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].scenario, scenario) &&
		    !strcmp(r[i].metric, metric) &&
		    !strcmp(r[i].series, series) && !strcmp(r[i].mech, mech) &&
		    !strcmp(r[i].load, "none") &&
		    ((!strcmp(r[i].placement, placement) &&
		      !strcmp(r[i].regime, placement)) ||
		     !strcmp(r[i].regime, "one thread") ||
		     !strcmp(r[i].scenario, "program")))
			return &r[i];
	return NULL;
}

static const struct row *find_row(const struct row *r, size_t n,
				  const char *scenario, const char *metric,
				  const char *series, const char *mech)
{
	return find_row_at(r, n, scenario, metric, series, mech, "same");
}

/* The worst (largest) per-repetition ratio a/b, NAN if none. */
static double worst_ratio(const struct row *a, const struct row *b)
{
	double w = NAN;

	for (int k = 0; a && b && k < MAX_REPS; k++)
		if (!isnan(a->rep_med[k]) && !isnan(b->rep_med[k]) &&
		    b->rep_med[k] > 0) {
			double q = a->rep_med[k] / b->rep_med[k];

			if (isnan(w) || q > w)
				w = q;
		}
	return w;
}

/* The median of the per-repetition ratios a/b, NAN if none. */
static double median_ratio(const struct row *a, const struct row *b)
{
	double q[MAX_REPS];
	size_t m = 0;

	for (int k = 0; a && b && k < MAX_REPS; k++)
		if (!isnan(a->rep_med[k]) && !isnan(b->rep_med[k]) &&
		    b->rep_med[k] > 0)
			q[m++] = a->rep_med[k] / b->rep_med[k];
	if (m == 0)
		return NAN;
	qsort(q, m, sizeof(q[0]), cmp_double);
	return m % 2 ? q[m / 2] : (q[m / 2 - 1] + q[m / 2]) / 2;
}

/*
 * Counts are judged with 1 % slack: on a shared machine a few involuntary
 * context switches (and the futex calls around them) come from other load.
 */
static void goal_line(FILE *f, const char *what, double bound, double got,
		      const char *unknown, bool count)
{
	fprintf(f, "  %-48s <= %4.2f  ", what, bound);
	if (isnan(got))
		fprintf(f, "%-8s %s\n", "n/a", unknown);
	else if (got <= (count ? bound * 1.01 + 0.001 : bound))
		fprintf(f, "%-8.3f met\n", got);
	else
		fprintf(f, "%-8.3f MISSED: %.3f is above the bound %.2f\n",
			got, got, bound);
}

/*
 * The project's performance goals (README, Performance), judged on one CPU
 * by the worst repetition.  Printed only for rows measured with both
 * threads on one CPU.
 */
void print_goals(FILE *f, const struct row *r, size_t n)
{
	static const struct {
		const char *scenario, *metric, *series, *mech, *ref;
		double bound;
		const char *what;
		bool median;	/* judged by the median ratio, not the worst */
		const char *placement;	/* NULL: same */
	} ratio_goals[] = {
		{ "pingpong", "round_trip", "", "swait", "futex", 1.03,
		  "pingpong: swait / raw futex", false, NULL },
		{ "pingpong", "round_trip", "", "swait", "cond", 0.46,
		  "pingpong: swait / cond (signal under lock)", false, NULL },
		/* Across two CPUs, where the spin before a sleep acts. */
		{ "pingpong", "round_trip", "", "swait", "atomic", 1.10,
		  "pingpong split: swait / std::atomic wait (median)", true,
		  "split" },
		{ "pingpong", "round_trip", "", "swait", "cond", 0.10,
		  "pingpong split: swait / cond (median)", true, "split" },
		{ "pingpong", "round_trip", "", "swait", "futex", 0.10,
		  "pingpong split: swait / raw futex (median)", true, "split" },
		{ "pingpong", "round_trip", "", "swait", "nsync", 0.10,
		  "pingpong split: swait / nsync (median)", true, "split" },
		{ "pingpong", "round_trip", "", "swait", "abseil", 0.10,
		  "pingpong split: swait / abseil CondVar (median)", true,
		  "split" },
		{ "pingpong", "round_trip", "", "completion", "atomic",
		  1.10, "pingpong split: completion / std::atomic (median)",
		  true, "split" },
		/* What the spin costs where it cannot help (issue 22). */
		{ "pingpong", "round_trip", "", "swait", "swait-nospin", 1.03,
		  "pingpong: swait / swait-nospin (median)", true, NULL },
		{ "latency", "one_way", "", "swait", "swait-nospin", 1.05,
		  "latency split: swait / swait-nospin (median)", true,
		  "split" },
		{ "nowaiter", "wake_call", "", "swait", "atomic", 1.00,
		  "nowaiter: swait_wake_one / atomic notify_one (median)",
		  true, NULL },
		/* The same goal on a swait_head_init_asym() head. */
		{ "nowaiter", "wake_call", "", "swait-asym", "atomic", 1.00,
		  "nowaiter: swait_wake_one on an asymmetric head / atomic "
		  "notify_one (median)", true, NULL },
		{ "pingpong", "round_trip", "", "swait", "cond-after", 1.00,
		  "pingpong: swait / cond (signal after unlock)", false, NULL },
		{ "pingpong", "round_trip", "", "swait", "sem", 1.00,
		  "pingpong: swait / sem_t", false, NULL },
		/*
		 * swait / nsync <= 0.90 on one CPU is retired (issue 22):
		 * nsync is within 7 % of the raw futex there, so it would
		 * mean beating the two system calls every handoff needs.
		 */
		{ "pingpong", "round_trip", "", "swait", "abseil", 0.90,
		  "pingpong: swait / abseil CondVar (median)", true, NULL },
		{ "broadcast", "last_running", "n=64", "swait", "futex", 1.10,
		  "broadcast n=64 last: swait / futex bulk (median)", true, NULL },
		{ "broadcast", "last_running", "n=64", "swait", "cond", 0.50,
		  "broadcast n=64: swait / cond_broadcast, last", false, NULL },
		/* The condvar face against the same code on glibc. */
		{ "pingpong", "round_trip", "", "swait-cond", "cond", 0.50,
		  "pingpong: swait-cond / cond (signal under lock)", false, NULL },
		{ "broadcast", "last_running", "n=64", "swait-cond", "cond",
		  0.60, "broadcast n=64: swait-cond / cond, last", false, NULL },
		/* Unmodified programs under swait-run (unpinned, median). */
		{ "program", "wall", "pigz -p 8", "swait-run", "glibc", 1.00,
		  "program pigz -p 8 wall: swait-run / glibc (median)", true, NULL },
		{ "program", "cpu", "pigz -p 8", "swait-run", "glibc", 1.00,
		  "program pigz -p 8 cpu: swait-run / glibc (median)", true, NULL },
		{ "program", "wall", "zstd -T8", "swait-run", "glibc", 1.00,
		  "program zstd -T8 wall: swait-run / glibc (median)", true, NULL },
		{ "program", "cpu", "zstd -T8", "swait-run", "glibc", 1.00,
		  "program zstd -T8 cpu: swait-run / glibc (median)", true, NULL },
	};
	const struct row *pp = find_row(r, n, "pingpong", "round_trip", "",
					"swait");
	const struct row *nw = find_row(r, n, "nowaiter", "wake_call", "",
					"swait");
	const struct row *pps = find_row_at(r, n, "pingpong", "round_trip", "",
					    "swait", "split");
	bool any = false;
	const char *nc = "(not counted: use --count-futex)";

	for (size_t i = 0; i < sizeof(ratio_goals) / sizeof(ratio_goals[0]);
	     i++) {
		const struct row *a, *b;

		const char *pl = ratio_goals[i].placement ?
				 ratio_goals[i].placement : "same";

		a = find_row_at(r, n, ratio_goals[i].scenario,
				ratio_goals[i].metric, ratio_goals[i].series,
				ratio_goals[i].mech, pl);
		b = find_row_at(r, n, ratio_goals[i].scenario,
				ratio_goals[i].metric, ratio_goals[i].series,
				ratio_goals[i].ref, pl);
		if (!a || !b)
			continue;
		if (!any)
			fprintf(f, "\ngoals: libswait's targets (README, "
				"Performance), all threads on one CPU unless\n"
				"  it says split (waker and woken on two CPUs);"
				"\n  a ratio goal is judged by the worst "
				"repetition's ratio of medians, or by the\n"
				"  median of those ratios where it says "
				"(median); \"met\" when the measured value\n"
				"  is within the bound, MISSED when not\n");
		any = true;
		goal_line(f, ratio_goals[i].what, ratio_goals[i].bound,
			  ratio_goals[i].median ? median_ratio(a, b)
						: worst_ratio(a, b), "", false);
	}
	if (pp) {
		if (!any)
			fprintf(f, "\ngoals: libswait's targets (README, "
				"Performance), both threads on one CPU\n");
		any = true;
		goal_line(f, "pingpong: swait FUTEX_WAKE per handoff", 1.0,
			  pp->fwake / 2, nc, true);
		goal_line(f, "pingpong: swait FUTEX_WAIT per handoff", 1.0,
			  pp->fwait / 2, nc, true);
		goal_line(f, "pingpong: swait context switches per round trip",
			  2.0, pp->csw, "", true);
	}
	if (pps) {
		if (!any)
			fprintf(f, "\ngoals: libswait's targets (README, "
				"Performance)\n");
		any = true;
		goal_line(f, "pingpong split: swait context switches per "
			  "round trip", 0.30, pps->csw, "", true);
	}
	if (nw) {
		if (!any)
			fprintf(f, "\ngoals: libswait's targets (README, "
				"Performance), both threads on one CPU\n");
		goal_line(f, "nowaiter: swait_wake_one futex calls per call",
			  0.0, isnan(nw->fwake) ? NAN : nw->fwake + nw->fwait,
			  nc, true);
	}
}

/* A log2 histogram of each latency row, in microseconds. */
