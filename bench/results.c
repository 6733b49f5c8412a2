// SPDX-License-Identifier: MIT
/*
 * results.c - every kept sample, and what is said about them.
 *
 * Scenarios add trials: one mechanism, one repetition, one metric, all its
 * samples.  Rows group the trials of one (scenario, metric, series,
 * mechanism, regime): percentiles come from the pooled samples, ratios from
 * the repetitions.  A ratio is computed per repetition (the mechanism's
 * median over the reference's median in that same repetition, which ran
 * interleaved with it) and reported as the median of those ratios with
 * their min and max; regimes and load conditions are never mixed.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"

static struct trial *trials;
static size_t ntrials, cap_trials;

struct counted {
	const char *scenario, *mech;
	char series[32];
	double fwake, fwait;
};
static struct counted *counted;
static size_t ncounted;

struct refs {
	const char *scenario, *ref1, *ref2;
};
static struct refs refs[16];
static size_t nrefs;

void trial_add(const struct trial *t)
{
	if (ntrials == cap_trials) {
		cap_trials = cap_trials ? 2 * cap_trials : 64;
		trials = realloc(trials, cap_trials * sizeof(*trials));
		if (!trials)
			die("out of memory");
	}
	trials[ntrials] = *t;
	/*
	 * A trial is added before the load around it stops, so the label
	 * says what really ran beside it, whichever scenario forgot to ask.
	 */
	if (!trials[ntrials].load)
		trials[ntrials].load = load_current();
	/*
	 * CPU per operation: the scenario's own per-thread measure, else the
	 * process's since the trial's first thread started (its threads, and
	 * the main thread's bookkeeping while they ran).  Not for a program
	 * run in child processes, which reports its own CPU time.
	 */
	if (!t->cpu_known)
		trials[ntrials].cpu =
			t->n && !isnan(trial_cpu_mark) && !trial_cpu_stale &&
			strcmp(t->scenario, "program") ?
			(cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID) -
			 trial_cpu_mark) / (double)t->n : NAN;
	trial_cpu_stale = true;
	trials[ntrials].placement = placement_name(opt.cpus);
	ntrials++;
}

void trial_add_pair(const char *scenario, const char *metric,
		    const struct mech *m, int rep, double *v, size_t n,
		    const struct tcount *a, const struct tcount *b)
{
	struct trial t;

	memset(&t, 0, sizeof(t));
	t.scenario = scenario;
	t.metric = metric;
	t.unit = "ns";
	t.mech = m->name;
	t.regime = regime_of(a, b);
	t.rep = rep;
	t.v = v;
	t.n = n;
	t.csw = (double)(a->csw + b->csw) / (double)n;
	t.cpu = (a->cpu_ns + b->cpu_ns) / (double)n;
	t.cpu_known = true;
	t.fwake = t.fwait = NAN;
	if (m->own_futex_count) {
		t.fwake = (double)(a->fwake + b->fwake) / (double)n;
		t.fwait = (double)(a->fwait + b->fwait) / (double)n;
	}
	trial_add(&t);
}

void counts_set(const char *scenario, const char *series, const char *mech,
		double fwake, double fwait)
{
	counted = realloc(counted, (ncounted + 1) * sizeof(*counted));
	if (!counted)
		die("out of memory");
	counted[ncounted].scenario = scenario;
	counted[ncounted].mech = mech;
	snprintf(counted[ncounted].series, sizeof(counted[0].series), "%s",
		 series);
	counted[ncounted].fwake = fwake;
	counted[ncounted].fwait = fwait;
	ncounted++;
}

void scenario_refs(const char *scenario, const char *ref1, const char *ref2)
{
	if (nrefs < sizeof(refs) / sizeof(refs[0]))
		refs[nrefs++] = (struct refs){ scenario, ref1, ref2 };
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted[0..n). */
static double pct(const double *sorted, size_t n, double p)
{
	size_t k;

	if (n == 0)
		return NAN;
	k = (size_t)ceil(p * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return pct(v, n, 0.5);
}

static bool same_block(const struct row *a, const struct trial *t)
{
	return strcmp(a->scenario, t->scenario) == 0 &&
	       strcmp(a->metric, t->metric) == 0 &&
	       strcmp(a->series, t->series) == 0 &&
	       strcmp(a->regime, t->regime) == 0 &&
	       strcmp(a->placement, t->placement) == 0 &&
	       strcmp(a->load, t->load) == 0;
}

static bool row_block_eq(const struct row *a, const struct row *b)
{
	return strcmp(a->scenario, b->scenario) == 0 &&
	       strcmp(a->metric, b->metric) == 0 &&
	       strcmp(a->series, b->series) == 0 &&
	       strcmp(a->regime, b->regime) == 0 &&
	       strcmp(a->placement, b->placement) == 0 &&
	       strcmp(a->load, b->load) == 0;
}

#define MAX_REPS 1000

struct rowx {
	struct row r;
	double rep_med[MAX_REPS];
	double csw_sum, fwake_sum, fwait_sum, cpu_sum;
	int csw_n, fw_n, cpu_n;
};

static struct row *rows;
static size_t nrows;

static void ratios(struct rowx *x, const struct rowx *ref, double *med,
		   double *min, double *max)
{
	double r[MAX_REPS];
	size_t n = 0;

	*med = *min = *max = NAN;
	if (!ref)
		return;
	for (int i = 0; i < MAX_REPS; i++)
		if (!isnan(x->rep_med[i]) && !isnan(ref->rep_med[i]) &&
		    ref->rep_med[i] > 0)
			r[n++] = x->rep_med[i] / ref->rep_med[i];
	if (n == 0)
		return;
	*med = median_of(r, n);
	*min = r[0];
	*max = r[n - 1];
}

static const struct refs *refs_of(const char *scenario)
{
	for (size_t i = 0; i < nrefs; i++)
		if (strcmp(refs[i].scenario, scenario) == 0)
			return &refs[i];
	return NULL;
}

size_t results_rows(struct row **out)
{
	struct rowx *xs;
	size_t nx = 0;

	if (rows) {
		*out = rows;
		return nrows;
	}
	xs = calloc(ntrials ? ntrials : 1, sizeof(*xs));
	if (!xs)
		die("out of memory");
	for (size_t i = 0; i < ntrials; i++) {
		const struct trial *t = &trials[i];
		struct rowx *x = NULL;

		for (size_t j = 0; j < nx; j++)
			if (same_block(&xs[j].r, t) &&
			    strcmp(xs[j].r.mech, t->mech) == 0)
				x = &xs[j];
		if (!x) {
			x = &xs[nx++];
			x->r.scenario = t->scenario;
			x->r.metric = t->metric;
			x->r.unit = t->unit;
			x->r.series = t->series;
			x->r.mech = t->mech;
			x->r.regime = t->regime;
			x->r.placement = t->placement;
			x->r.load = t->load;
			for (int k = 0; k < MAX_REPS; k++)
				x->rep_med[k] = NAN;
		}
		x->r.sorted = realloc(x->r.sorted, (x->r.samples + t->n) *
				      sizeof(double));
		if (!x->r.sorted && x->r.samples + t->n)
			die("out of memory");
		memcpy(x->r.sorted + x->r.samples, t->v, t->n * sizeof(double));
		x->r.samples += t->n;
		if (t->rep >= 0 && t->rep < MAX_REPS && t->n) {
			double *tmp = alloc_samples(t->n);

			memcpy(tmp, t->v, t->n * sizeof(double));
			if (isnan(x->rep_med[t->rep]))
				x->r.reps++;
			x->rep_med[t->rep] = median_of(tmp, t->n);
			free(tmp);
		}
		if (!isnan(t->csw)) {
			x->csw_sum += t->csw;
			x->csw_n++;
		}
		if (!isnan(t->cpu)) {
			x->cpu_sum += t->cpu;
			x->cpu_n++;
		}
		if (!isnan(t->fwake)) {
			x->fwake_sum += t->fwake;
			x->fwait_sum += t->fwait;
			x->fw_n++;
		}
	}
	for (size_t j = 0; j < nx; j++) {
		struct row *r = &xs[j].r;
		const struct refs *rf = refs_of(r->scenario);
		const struct rowx *ref1 = NULL, *ref2 = NULL;
		double sum = 0;

		qsort(r->sorted, r->samples, sizeof(double), cmp_double);
		for (size_t k = 0; k < r->samples; k++)
			sum += r->sorted[k];
		r->mean = r->samples ? sum / (double)r->samples : NAN;
		r->median = pct(r->sorted, r->samples, 0.5);
		r->p90 = pct(r->sorted, r->samples, 0.90);
		r->p99 = pct(r->sorted, r->samples, 0.99);
		r->p999 = pct(r->sorted, r->samples, 0.999);
		r->p9999 = pct(r->sorted, r->samples, 0.9999);
		r->max = r->samples ? r->sorted[r->samples - 1] : NAN;
		r->csw = xs[j].csw_n ? xs[j].csw_sum / xs[j].csw_n : NAN;
		r->cpu = xs[j].cpu_n ? xs[j].cpu_sum / xs[j].cpu_n : NAN;
		r->fwake = xs[j].fw_n ? xs[j].fwake_sum / xs[j].fw_n : NAN;
		r->fwait = xs[j].fw_n ? xs[j].fwait_sum / xs[j].fw_n : NAN;
		for (size_t k = 0; k < ncounted; k++)
			if (strcmp(counted[k].scenario, r->scenario) == 0 &&
			    strcmp(counted[k].series, r->series) == 0 &&
			    strcmp(counted[k].mech, r->mech) == 0) {
				r->fwake = counted[k].fwake;
				r->fwait = counted[k].fwait;
			}
		r->ref1 = rf ? rf->ref1 : NULL;
		r->ref2 = rf ? rf->ref2 : NULL;
		/*
		 * A fraction (mostlybusy's empty_waits) is mostly near 0,
		 * where a ratio of two says nothing: no references.
		 */
		if (strcmp(r->unit, "fraction") == 0)
			r->ref1 = r->ref2 = NULL;
		for (size_t k = 0; k < nx; k++) {
			if (!row_block_eq(r, &xs[k].r))
				continue;
			if (r->ref1 && strcmp(xs[k].r.mech, r->ref1) == 0)
				ref1 = &xs[k];
			if (r->ref2 && strcmp(xs[k].r.mech, r->ref2) == 0)
				ref2 = &xs[k];
		}
		ratios(&xs[j], ref1, &r->r1_med, &r->r1_min, &r->r1_max);
		ratios(&xs[j], ref2, &r->r2_med, &r->r2_min, &r->r2_max);
		if (!ref1)
			r->ref1 = NULL;
		if (!ref2)
			r->ref2 = NULL;
		if (ref1 && ref1->r.reps > 1) {
			double v[MAX_REPS], m;
			size_t n = 0;

			for (int k = 0; k < MAX_REPS; k++)
				if (!isnan(ref1->rep_med[k]))
					v[n++] = ref1->rep_med[k];
			m = median_of(v, n);
			r->noisy = v[n - 1] > 1.10 * m || v[0] < 0.90 * m;
		}
	}
	for (size_t j = 0; j < nx; j++) {
		xs[j].r.rep_med = malloc(sizeof(xs[j].rep_med));
		if (!xs[j].r.rep_med)
			die("out of memory");
		memcpy(xs[j].r.rep_med, xs[j].rep_med, sizeof(xs[j].rep_med));
	}
	/* Blocks contiguous, in order of first appearance (stable). */
	rows = malloc((nx ? nx : 1) * sizeof(*rows));
	if (!rows)
		die("out of memory");
	for (size_t j = 0; j < nx; j++) {
		bool seen = false;

		for (size_t k = 0; k < j && !seen; k++)
			seen = row_block_eq(&xs[k].r, &xs[j].r);
		if (seen)
			continue;
		for (size_t k = j; k < nx; k++)
			if (row_block_eq(&xs[k].r, &xs[j].r))
				rows[nrows++] = xs[k].r;
	}
	free(xs);
	*out = rows;
	return nrows;
}

/* ----------------------------------------------------------------- table */

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

static void print_histograms(FILE *f, const struct row *r, size_t n);
static void print_load_compare(FILE *f, const struct row *r, size_t n);
static void print_asym(FILE *f, const struct row *r, size_t n);

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
	      "                 threads' (pingpong, latency, nowaiter) or "
	      "the process's\n"
	      "                 during the trial (the others); spinning "
	      "shows here\n"
	      "  csw /op        context switches per operation (every thread "
	      "of the trial,\n"
	      "                 getrusage)\n"
	      "  fwake, fwait   FUTEX_WAKE and FUTEX_WAIT system calls per "
	      "operation\n"
	      "                 (counted only with --count-futex)\n"
	      "  n/a            not counted in this run\n", f);
}
static void print_goals(FILE *f, const struct row *r, size_t n);

/* ", no load" or ", load cpu" after the regime, when --load was given. */
static const char *load_label(const struct row *r)
{
	if (opt.load == LOAD_NONE)
		return "";
	return strcmp(r->load, "none") ? ", load cpu" : ", no load";
}

static void print_table(FILE *f, struct row *r, size_t n)
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

/* ---------------------------------------------------------------- goals */

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
static void print_goals(FILE *f, const struct row *r, size_t n)
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
		{ "pingpong", "round_trip", "", "swait", "cond-after", 1.00,
		  "pingpong: swait / cond (signal after unlock)", false, NULL },
		{ "pingpong", "round_trip", "", "swait", "sem", 1.00,
		  "pingpong: swait / sem_t", false, NULL },
		{ "pingpong", "round_trip", "", "swait", "nsync", 0.90,
		  "pingpong: swait / nsync (median)", true, NULL },
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

/* ------------------------------------------------------------- CSV, JSON */

static const char *const columns[] = {
	"scenario", "metric", "unit", "series", "mechanism", "placement",
	"regime", "reps", "samples", "median", "p90", "p99", "p99_9",
	"p99_99", "max", "mean", "ref1", "ratio1_median", "ratio1_min",
	"ratio1_max", "ref2", "ratio2_median", "ratio2_min", "ratio2_max",
	"noisy", "csw_per_op", "futex_wake_per_op", "futex_wait_per_op",
	"load", "cpu_ns_per_op",
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

/* Each row as strings; NULL for an unknown value. */
static void row_fields(const struct row *r, char v[NCOLS][64], bool str[NCOLS],
		       bool null[NCOLS])
{
	const double nums[] = {
		r->median, r->p90, r->p99, r->p999, r->p9999, r->max, r->mean,
	};
	size_t c = 0;

#define S(x) do { snprintf(v[c], 64, "%s", (x) ? (x) : ""); \
		  str[c] = true; null[c] = !(x); c++; } while (0)
#define N(x) do { double x_ = (x); snprintf(v[c], 64, "%.6g", x_); \
		  str[c] = false; null[c] = isnan(x_); c++; } while (0)
	S(r->scenario);
	S(r->metric);
	S(r->unit);
	S(r->series);
	S(r->mech);
	S(r->placement);
	S(r->regime);
	N((double)r->reps);
	N((double)r->samples);
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		N(nums[i]);
	S(r->ref1);
	N(r->r1_med);
	N(r->r1_min);
	N(r->r1_max);
	S(r->ref2);
	N(r->r2_med);
	N(r->r2_min);
	N(r->r2_max);
	snprintf(v[c], 64, "%s", r->noisy ? "true" : "false");
	str[c] = false;
	null[c] = false;
	c++;
	N(r->csw);
	N(r->fwake);
	N(r->fwait);
	S(r->load);
	N(r->cpu);
#undef S
#undef N
}

static void print_csv(FILE *f, struct row *r, size_t n)
{
	char v[NCOLS][64];
	bool str[NCOLS], null[NCOLS];

	fprintf(f, "# swait-bench %s\n# kernel: %s\n# cpu_model: %s\n"
		"# vcpus: %d\n# glibc: %s\n# policy: %s\n# placement: %s\n"
		"# load: %s\n# load_before: %s\n# load_after: %s\n"
		"# started: %s\n",
		SWAIT_BENCH_VERSION, hdr.kernel, hdr.cpu_model, hdr.vcpus,
		hdr.glibc, hdr.policy, placements_label(),
		load_mode_name(opt.load), hdr.load_before, hdr.load_after,
		hdr.started);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, "%s%s", c ? "," : "", columns[c]);
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		row_fields(&r[i], v, str, null);
		for (size_t c = 0; c < NCOLS; c++)
			fprintf(f, "%s%s", c ? "," : "", null[c] ? "" : v[c]);
		fputc('\n', f);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_json(FILE *f, struct row *r, size_t n)
{
	char v[NCOLS][64];
	bool str[NCOLS], null[NCOLS];
	const char *why = NULL;

	fprintf(f, "{\n  \"tool\": \"swait-bench\",\n  \"version\": ");
	json_str(f, SWAIT_BENCH_VERSION);
	fprintf(f, ",\n  \"schema\": 1,\n  \"header\": {\n    \"kernel\": ");
	json_str(f, hdr.kernel);
	fprintf(f, ",\n    \"cpu_model\": ");
	json_str(f, hdr.cpu_model);
	fprintf(f, ",\n    \"vcpus\": %d,\n    \"glibc\": ", hdr.vcpus);
	json_str(f, hdr.glibc);
	fprintf(f, ",\n    \"policy\": ");
	json_str(f, hdr.policy);
	fprintf(f, ",\n    \"placement\": ");
	json_str(f, placements_label());
	fprintf(f, ",\n    \"load\": ");
	json_str(f, load_mode_name(opt.load));
	fprintf(f, ",\n    \"cpus\": [%d, %d],\n    \"reps\": %d,\n"
		"    \"load_before\": ", opt.cpu_a, opt.cpu_b, opt.reps);
	json_str(f, hdr.load_before);
	fprintf(f, ",\n    \"load_after\": ");
	json_str(f, hdr.load_after);
	fprintf(f, ",\n    \"started\": ");
	json_str(f, hdr.started);
	fprintf(f, ",\n    \"futex_counts\": ");
	json_str(f, opt.count_futex && futex_tracepoint_available(&why) ?
		 "tracepoint" : "own-wrappers");
	fprintf(f, "\n  },\n  \"results\": [");
	for (size_t i = 0; i < n; i++) {
		row_fields(&r[i], v, str, null);
		fprintf(f, "%s\n    {", i ? "," : "");
		for (size_t c = 0; c < NCOLS; c++) {
			fprintf(f, "%s\"%s\": ", c ? ", " : "", columns[c]);
			if (null[c])
				fputs("null", f);
			else if (str[c])
				json_str(f, v[c]);
			else
				fputs(v[c], f);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
}

void results_print(FILE *f, enum format fmt)
{
	struct row *r;
	size_t n = results_rows(&r);

	switch (fmt) {
	case FMT_CSV:
		print_csv(f, r, n);
		break;
	case FMT_JSON:
		print_json(f, r, n);
		break;
	default:
		print_table(f, r, n);
		break;
	}
}
