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
 * What is said about them: table.c and goals.c (the table), export.c (CSV
 * and JSON), plot.c (--plot).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"
#include "output.h"

static struct trial *trials;
static size_t ntrials, cap_trials;

struct counted {
	const char *scenario, *mech;
	const char *placement;	/* the --cpus running when counted */
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
	counted[ncounted].placement = placement_name(opt.cpus);
	snprintf(counted[ncounted].series, sizeof(counted[0].series), "%s",
		 series);
	counted[ncounted].fwake = fwake;
	counted[ncounted].fwait = fwait;
	ncounted++;
	/*
	 * A counting run spawns threads but adds no trial: the next trial
	 * must take its own CPU mark, not inherit this run's.
	 */
	trial_cpu_stale = true;
}

void scenario_refs(const char *scenario, const char *ref1, const char *ref2)
{
	if (nrefs < sizeof(refs) / sizeof(refs[0]))
		refs[nrefs++] = (struct refs){ scenario, ref1, ref2 };
}

int cmp_double(const void *a, const void *b)
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

double median_of(double *v, size_t n)
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

bool row_block_eq(const struct row *a, const struct row *b)
{
	return strcmp(a->scenario, b->scenario) == 0 &&
	       strcmp(a->metric, b->metric) == 0 &&
	       strcmp(a->series, b->series) == 0 &&
	       strcmp(a->regime, b->regime) == 0 &&
	       strcmp(a->placement, b->placement) == 0 &&
	       strcmp(a->load, b->load) == 0;
}

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
			/*
			 * Placement too: pingpong runs under same and
			 * split, and split's counts (a spinning swait
			 * makes none) once landed on same's rows.
			 */
			if (strcmp(counted[k].scenario, r->scenario) == 0 &&
			    strcmp(counted[k].placement, r->placement) == 0 &&
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
