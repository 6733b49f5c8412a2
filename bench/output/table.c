// SPDX-License-Identifier: MIT
/*
 * table.c - the table for people: a block per (scenario, metric, series,
 * regime, load), a legend, then latency histograms, the load comparison,
 * mostlybusy's asym question and the goals (goals.c).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"
#include "output.h"

static void print_histograms(FILE *f, const struct row *r, size_t n);
static void print_load_compare(FILE *f, const struct row *r, size_t n);
static void print_asym(FILE *f, const struct row *r, size_t n);

static const char *metric_title(const struct row *r)
{
	/* Where a scenario's metric means something of its own. */
	static const struct {
		const char *scenario, *metric, *title;
	} st[] = {
		{ "contention", "throughput",
		  "handoffs per second (items/s) through one channel" },
		{ "contention", "fairness",
		  "waiter fairness (Jain's index, 1 = equal)" },
		{ "mostlybusy", "throughput",
		  "items per second, workers usually busy" },
	};
	static const struct {
		const char *metric, *title;
	} t[] = {
		{ "round_trip", "time per round trip (two handoffs)" },
		{ "wake_call", "time per wake call, nobody waiting" },
		{ "first_running", "wake to the first waiter running" },
		{ "last_running", "wake to the last waiter running" },
		{ "waker_call", "the waker's own time in the wake call" },
		{ "one_way", "one-way wake latency, waker stamp to woken stamp" },
		{ "overshoot", "time past the deadline when the wait returned" },
		{ "throughput", "items per second through the bounded queue" },
		{ "fairness", "consumer fairness (Jain's index, 1 = equal)" },
		{ "push_wake", "the producer's time per push + wake" },
		{ "empty_waits",
		  "items a worker waited for (found the queue empty)" },
		{ "membarrier_call",
		  "one membarrier(PRIVATE_EXPEDITED): the sleep's extra cost" },
	};

	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++)
		if (strcmp(st[i].scenario, r->scenario) == 0 &&
		    strcmp(st[i].metric, r->metric) == 0)
			return st[i].title;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (strcmp(t[i].metric, r->metric) == 0)
			return t[i].title;
	return r->metric;
}

struct scale {
	double div;
	const char *unit;
	int prec;
};

/*
 * The unit of a block's values.  Times carry their own unit, value by
 * value (div 0), chosen so that each keeps one to three digits before the
 * point: a 3.5 ns median beside a 20 us maximum reads "3.5 ns" and
 * "20.00 us", where one unit per column printed the median as "0.00".
 * Other units are printed as measured (items/s in thousands).
 */
static struct scale block_scale(const struct row *r)
{
	if (strcmp(r->unit, "ns") == 0)
		return (struct scale){ 0, "", 0 };
	if (strcmp(r->unit, "items/s") == 0)
		return (struct scale){ 1e3, "k items/s", 1 };
	return (struct scale){ 1, r->unit, 3 };
}

/*
 * A percentile is printed only where it is more than one sample's worth:
 * p99 needs 100 samples, p99.9 1,000, p99.99 10,000.
 */
static double enough(const struct row *r, double v, double need)
{
	return (double)r->samples >= need ? v : NAN;
}

/* A time in ns as "3.5 ns", "999.9 ns", "1.08 us", "12.34 us", "2.10 ms". */
static void put_time(FILE *f, double ns, int w)
{
	static const struct {
		double div;
		const char *unit;
	} u[] = { { 1, "ns" }, { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	size_t i = 0;
	char buf[32];

	while (i + 1 < sizeof(u) / sizeof(u[0]) && fabs(ns) >= 1e3 * u[i].div)
		i++;
	snprintf(buf, sizeof(buf), "%.*f %s", i == 0 ? 1 : 2, ns / u[i].div,
		 u[i].unit);
	fprintf(f, " %*s", w, buf);
}

static void put_num(FILE *f, double v, struct scale s, int w)
{
	if (isnan(v))
		fprintf(f, " %*s", w, "-");
	else if (s.div == 0)
		put_time(f, v, w);
	else if (v != 0 && fabs(v / s.div) < 0.1)
		fprintf(f, " %*.2g", w, v / s.div);	/* never 0.000 */
	else
		fprintf(f, " %*.*f", w, s.prec, v / s.div);
}

static void put_ratio(FILE *f, const char *ref, double med, double min,
		      double max)
{
	char buf[40];

	/* Two decimals, or two significant digits below 0.1: never 0.00. */
	if (!ref || isnan(med))
		snprintf(buf, sizeof(buf), "-");
	else if (min < 0.1)
		snprintf(buf, sizeof(buf), "%.2g [%.2g..%.2g]", med, min, max);
	else
		snprintf(buf, sizeof(buf), "%.2f [%.2f..%.2f]", med, min, max);
	fprintf(f, "  %-22s", buf);
}

static void put_count(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, " %6s", "n/a");
	else
		fprintf(f, " %6.2f", v);
}


/* What the columns mean, once under the tables. */
static void print_legend(FILE *f)
{
	fputs("\nhow to read the tables\n"
	      "  median .. max  the samples of every repetition pooled; a "
	      "time carries its\n"
	      "                 own unit, value by value (ns, us = "
	      "microseconds, ms), other\n"
	      "                 units are under the column; p99, p99.9 and "
	      "p99.99 are\n"
	      "                 shown only from 100, 1,000 and 10,000 "
	      "samples (\"-\" below)\n"
	      "  x REF          this mechanism's median over REF's, one ratio "
	      "per\n"
	      "                 repetition: the median ratio [smallest.."
	      "largest]; below 1\n"
	      "                 is faster (or, for items/s, fewer)\n"
	      "  cpu us/op      CPU time per operation in microseconds: "
	      "the measured\n"
	      "                 threads' own (pingpong, latency, nowaiter, "
	      "and each\n"
	      "                 thread's over the window in prodcons, "
	      "contention and\n"
	      "                 mostlybusy), or the process's during the "
	      "trial\n"
	      "                 (broadcast, timedwait); spinning shows "
	      "here\n"
	      "  csw /op        context switches per operation (every thread "
	      "of the trial,\n"
	      "                 getrusage)\n"
	      "  fwake, fwait   FUTEX_WAKE and FUTEX_WAIT system calls per "
	      "operation\n"
	      "                 (counted only with --count-futex)\n"
	      "  n/a            not counted in this run\n", f);
}

/* ", no load" or ", load cpu" after the regime, when --load was given. */
const char *load_label(const struct row *r)
{
	if (opt.load == LOAD_NONE)
		return "";
	return strcmp(r->load, "none") ? ", load cpu" : ", no load";
}

void print_table(FILE *f, struct row *r, size_t n)
{
	fprintf(f, "swait-bench %s (libswait %d.%d.%d)\n", SWAIT_BENCH_VERSION,
		SWAIT_VERSION_MAJOR, SWAIT_VERSION_MINOR, SWAIT_VERSION_PATCH);
	fprintf(f, "kernel    %s\ncpu       %s, %d vCPUs\nglibc     %s\n",
		hdr.kernel, hdr.cpu_model, hdr.vcpus, hdr.glibc);
	fprintf(f, "policy    %s\n", hdr.policy);
	{
		const char *pl = placements_label();

		if (!strcmp(pl, "free"))
			fprintf(f, "placement free (trials labelled by the "
				"CPUs the threads ran on)\n");
		if (strstr(pl, "same"))
			fprintf(f, "placement same (all threads on CPU %d)\n",
				opt.cpu_a);
		if (strstr(pl, "split"))
			fprintf(f, "placement split (waker side on CPU %d, the "
				"other side on CPU %d)\n", opt.cpu_a,
				opt.cpu_b);
	}
	if (opt.load != LOAD_NONE)
		fprintf(f, "load      %s: latency %s %d busy SCHED_OTHER "
			"threads, one pinned to each CPU%s; other scenarios "
			"without\n", load_mode_name(opt.load),
			opt.load == LOAD_BOTH ? "without and with" : "with",
			load_threads_count(), opt.load == LOAD_BOTH ?
			", in every repetition" : "");
	fprintf(f, "loadavg   %s before, %s after\nreps      %d, order "
		"rotated, fresh threads per trial\n", hdr.load_before,
		hdr.load_after, opt.reps);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool counts = false, noisy = false;
		struct scale s[5];

		while (j < n && row_block_eq(&r[i], &r[j])) {
			counts |= !isnan(r[j].csw) || !isnan(r[j].fwake);
			noisy |= r[j].noisy;
			j++;
		}
		for (size_t c = 0; c < 5; c++)
			s[c] = block_scale(&r[i]);
		fprintf(f, "\n%s: %s", r[i].scenario, metric_title(&r[i]));
		if (r[i].series[0])
			fprintf(f, ", %s", r[i].series);
		fprintf(f, " [%s%s]\n", r[i].regime, load_label(&r[i]));
		fprintf(f, "  %-14s %9s %9s %9s %9s %9s", "mechanism", "median",
			"p99", "p99.9", "p99.99", "max");
		fprintf(f, "  %-22s  %-22s", "", "");
		fprintf(f, " %8s", "cpu");
		if (counts)
			fprintf(f, " %6s %6s %6s", "csw", "fwake", "fwait");
		fputc('\n', f);
		fprintf(f, "  %-14s %9s %9s %9s %9s %9s", "", s[0].unit,
			s[1].unit, s[2].unit, s[3].unit, s[4].unit);
		{
			char a[40], b[40];

			snprintf(a, sizeof(a), "x %s [min..max]",
				 r[i].ref1 ? r[i].ref1 : "-");
			snprintf(b, sizeof(b), "x %s [min..max]",
				 r[i].ref2 ? r[i].ref2 : "-");
			fprintf(f, "  %-22s  %-22s", a, b);
		}
		fprintf(f, " %8s", "us/op");
		if (counts)
			fprintf(f, " %6s %6s %6s", "/op", "/op", "/op");
		fputc('\n', f);
		for (size_t k = i; k < j; k++) {
			fprintf(f, "  %-14s", r[k].mech);
			put_num(f, r[k].median, s[0], 9);
			put_num(f, enough(&r[k], r[k].p99, 100), s[1], 9);
			put_num(f, enough(&r[k], r[k].p999, 1000), s[2], 9);
			put_num(f, enough(&r[k], r[k].p9999, 10000), s[3], 9);
			put_num(f, r[k].max, s[4], 9);
			put_ratio(f, r[k].ref1, r[k].r1_med, r[k].r1_min,
				  r[k].r1_max);
			put_ratio(f, r[k].ref2, r[k].r2_med, r[k].r2_min,
				  r[k].r2_max);
			if (isnan(r[k].cpu))
				fprintf(f, " %8s", "-");
			else
				fprintf(f, " %8.3f", r[k].cpu / 1e3);
			if (counts) {
				put_count(f, r[k].csw);
				put_count(f, r[k].fwake);
				put_count(f, r[k].fwait);
			}
			fputc('\n', f);
		}
		if (noisy)
			fprintf(f, "  too noisy: the reference (%s) varied by "
				"more than +-10 %% across repetitions; ratios "
				"are not conclusive\n", r[i].ref1);
		i = j;
	}
	print_legend(f);
	print_histograms(f, r, n);
	print_load_compare(f, r, n);
	print_asym(f, r, n);
	print_goals(f, r, n);
}

static void print_histograms(FILE *f, const struct row *r, size_t n)
{
	static const double edges[] = {
		1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024,
	};
	const size_t ne = sizeof(edges) / sizeof(edges[0]);
	const struct row *prev = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t k = 0, cnt[16] = { 0 };

		if (strcmp(r[i].scenario, "latency"))
			continue;
		if (!prev || strcmp(prev->regime, r[i].regime) ||
		    strcmp(prev->load, r[i].load)) {
			prev = &r[i];
			fprintf(f, "\nlatency histogram [%s%s]: samples per "
				"bucket, upper bound in us\n  %-14s",
				r[i].regime, load_label(&r[i]), "mechanism");
			for (size_t e = 0; e <= ne; e++) {
				char b[16];

				snprintf(b, sizeof(b), "%s%.0f",
					 e < ne ? "<=" : ">",
					 edges[e < ne ? e : ne - 1]);
				fprintf(f, " %7s", b);
			}
			fputc('\n', f);
		}
		for (size_t s = 0; s < r[i].samples; s++) {
			while (k < ne && r[i].sorted[s] > edges[k] * 1e3)
				k++;
			cnt[k]++;
		}
		fprintf(f, "  %-14s", r[i].mech);
		for (size_t e = 0; e <= ne; e++)
			fprintf(f, " %7zu", cnt[e]);
		fputc('\n', f);
	}
}

/*
 * With --load both: each mechanism without and with the load, side by
 * side, and how much the load slowed its median, computed per repetition
 * because the two phases of one repetition ran back to back.
 */
static void print_load_compare(FILE *f, const struct row *r, size_t n)
{
	const struct row *head = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct row *u = &r[i], *l = NULL;
		double q[MAX_REPS];
		size_t nq = 0;
		char buf[40] = "-";

		if (strcmp(u->load, "none"))
			continue;
		for (size_t k = 0; k < n && !l; k++)
			if (strcmp(r[k].load, "none") &&
			    !strcmp(r[k].scenario, u->scenario) &&
			    !strcmp(r[k].metric, u->metric) &&
			    !strcmp(r[k].series, u->series) &&
			    !strcmp(r[k].regime, u->regime) &&
			    !strcmp(r[k].mech, u->mech))
				l = &r[k];
		if (!l)
			continue;
		if (!head || strcmp(head->scenario, u->scenario) ||
		    strcmp(head->metric, u->metric) ||
		    strcmp(head->series, u->series) ||
		    strcmp(head->regime, u->regime)) {
			head = u;
			fprintf(f, "\n%s: %s, us%s%s [%s], no load vs load "
				"%s\n", u->scenario, metric_title(u),
				u->series[0] ? ", " : "", u->series,
				u->regime, l->load);
			fprintf(f, "  %-14s %9s %9s %9s %9s %9s %9s  %s\n",
				"mechanism", "median", "median", "p99", "p99",
				"max", "max", "load / no load, median");
			fprintf(f, "  %-14s %9s %9s %9s %9s %9s %9s  %s\n",
				"", "no load", "load", "no load", "load",
				"no load", "load", "per rep [min..max]");
		}
		for (int k = 0; k < MAX_REPS; k++)
			if (!isnan(u->rep_med[k]) && !isnan(l->rep_med[k]) &&
			    u->rep_med[k] > 0)
				q[nq++] = l->rep_med[k] / u->rep_med[k];
		if (nq) {
			double med = median_of(q, nq);

			snprintf(buf, sizeof(buf), "%.2f [%.2f..%.2f]", med,
				 q[0], q[nq - 1]);
		}
		fprintf(f, "  %-14s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f  %s\n",
			u->mech, u->median / 1e3, l->median / 1e3,
			u->p99 / 1e3, l->p99 / 1e3, u->max / 1e3,
			l->max / 1e3, buf);
	}
}

/*
 * mostlybusy's question (mostlybusy.c): does taking the fence out of the
 * waker (swait-asym, the sleeper pays a membarrier instead) gain 20 %
 * items per second over swait?  Every repetition's ratio, per regime.
 */
static void print_asym(FILE *f, const struct row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct row *a = &r[i], *b = NULL;
		size_t reps = 0, gain = 0;

		if (strcmp(a->scenario, "mostlybusy") ||
		    strcmp(a->metric, "throughput") ||
		    strcmp(a->mech, "swait-asym"))
			continue;
		for (size_t k = 0; k < n && !b; k++)
			if (row_block_eq(a, &r[k]) &&
			    !strcmp(r[k].mech, "swait"))
				b = &r[k];
		if (!b)
			continue;
		fprintf(f, "\nmostlybusy: swait-asym / swait items per second, "
			"each repetition [%s%s]\n ", a->regime, load_label(a));
		for (int k = 0; k < MAX_REPS; k++) {
			double q;

			if (isnan(a->rep_med[k]) || isnan(b->rep_med[k]) ||
			    b->rep_med[k] <= 0)
				continue;
			q = a->rep_med[k] / b->rep_med[k];
			if (reps && reps % 12 == 0)
				fputs("\n ", f);
			fprintf(f, " %.3f", q);
			reps++;
			gain += q >= 1.20;
		}
		fprintf(f, "\n  a gain of 20 %% or more (>= 1.20) in %zu of "
			"%zu repetitions\n", gain, reps);
	}
}
