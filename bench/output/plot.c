// SPDX-License-Identifier: MIT
/*
 * plot.c - --plot FILE.png with gnuplot, found in PATH at run time.
 *
 * One PNG a reader understands without the README: a panel for every
 * scenario that has results, titled in words, under a subtitle with the
 * run header (command, repetitions, placement, machine).
 *
 *  - pingpong round trips and latency one-way times: the CDF of each
 *    mechanism, clipped at its p99.9 (the few slowest samples of a shared
 *    machine would otherwise stretch the axis over the part that matters).
 *  - every other scenario: clustered bars of its headline metric's median,
 *    one cluster per series (broadcast's n=1..256, contention's w= s=).
 *  - an axis whose values span a decade or more is logarithmic (broadcast's
 *    n=1 bars would vanish beside n=256 on a linear one).
 *  - one colour per mechanism, the same in every panel, no two alike.
 *
 * The script and the data go to a temporary directory removed afterwards,
 * or to SWAIT_BENCH_PLOT_KEEP's directory, kept, for the bench suite's
 * reading check (tests/check-plot.c); there, without gnuplot, the script is
 * still written and the PNG is not.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <swait.h>

#include "bench.h"

bool plot_available(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)n, path);
		if (n && access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* What each scenario's panel shows, and how it says it. */
static const struct panel_kind {
	const char *scenario, *metric;
	bool cdf;
	const char *title, *axis;
} kinds[] = {
	{ "pingpong", "round_trip", true,
	  "Ping-pong: time for one round trip (two handoffs)",
	  "round trip" },
	{ "latency", "one_way", true,
	  "Wake latency: from the waker's call to the woken thread running",
	  "one-way latency" },
	{ "nowaiter", "wake_call", false,
	  "A wake with nobody waiting: time per call (median)",
	  "time per call" },
	{ "broadcast", "last_running", false,
	  "Broadcast: wake-all to the last waiter running (median), "
	  "by number of waiters", "time to the last waiter" },
	{ "timedwait", "overshoot", false,
	  "Timed wait: how late a 200 us deadline returns (median)",
	  "time past the deadline" },
	{ "prodcons", "throughput", false,
	  "Producers and consumers on a bounded queue: items per second",
	  "items per second" },
	{ "contention", "throughput", false,
	  "Many wakers and waiters on one channel: handoffs per second",
	  "handoffs per second" },
	{ "mostlybusy", "throughput", false,
	  "Busy workers that seldom sleep: items per second",
	  "items per second" },
	{ "program", "wall", false,
	  "Real programs, plain and under the preload: wall time (median)",
	  "wall time" },
};

static const struct panel_kind *kind_of(const struct row *r)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].scenario, r->scenario) &&
		    !strcmp(kinds[i].metric, r->metric))
			return &kinds[i];
	return NULL;
}

/* One panel: rows of one scenario and metric, regime and load (and series,
 * for a CDF). */
static bool same_panel(const struct row *a, const struct row *b)
{
	return !strcmp(a->scenario, b->scenario) &&
	       !strcmp(a->metric, b->metric) &&
	       !strcmp(a->regime, b->regime) && !strcmp(a->load, b->load) &&
	       (!kind_of(a)->cdf || !strcmp(a->series, b->series));
}

/*
 * One colour and one name in words per mechanism.  libswait's own are the
 * warm colours; the peers the greens; glibc's the blues.
 */
static const struct {
	const char *mech, *colour, *label;
} looks[] = {
	{ "swait", "#d62728", "swait (libswait)" },
	{ "swait-nospin", "#ff9896", "swait, no spin" },
	{ "swait-all", "#e7298a", "swait_wake_all" },
	{ "swait-asym", "#a50f15", "swait, membarrier in the sleep" },
	{ "completion", "#ff7f0e", "swait completion" },
	{ "swait-cond", "#8c564b", "swait condvar face" },
	{ "swait-cond-after", "#c49c94", "swait condvar, signal after unlock" },
	{ "swait-cond-pi", "#e6550d", "swait condvar, PI" },
	{ "swait-run", "#d6616b", "under libswait-preload" },
	{ "cond", "#1f77b4", "pthread_cond, signal under lock" },
	{ "cond-after", "#17becf", "pthread_cond, signal after unlock" },
	{ "cond-pi", "#393b79", "pthread_cond, PI mutex" },
	{ "cond-broadcast", "#6baed6", "pthread_cond_broadcast" },
	{ "glibc", "#08519c", "plain (glibc)" },
	{ "sem", "#9467bd", "sem_t" },
	{ "eventfd", "#bcbd22", "eventfd" },
	{ "pipe", "#e377c2", "pipe" },
	{ "futex", "#000000", "raw futex" },
	{ "futex-sleeper", "#7f7f7f", "raw futex, wake only a sleeper" },
	{ "nsync", "#2ca02c", "Google nsync" },
	{ "abseil", "#98df8a", "Abseil CondVar" },
	{ "atomic", "#637939", "C++20 std::atomic wait" },
};
/* Any mechanism not above, in order of appearance (none alike). */
static const char *const spare[] = {
	"#843c39", "#7b4173", "#ce6dbd", "#de9ed6", "#b5cf6b", "#cedb9c",
};
static const char *spare_mech[sizeof(spare) / sizeof(spare[0])];

static void mech_look(const char *mech, const char **colour,
		      const char **label)
{
	size_t n = sizeof(spare) / sizeof(spare[0]);

	*label = mech;
	for (size_t i = 0; i < sizeof(looks) / sizeof(looks[0]); i++)
		if (!strcmp(looks[i].mech, mech)) {
			*colour = looks[i].colour;
			*label = looks[i].label;
			return;
		}
	for (size_t i = 0; i < n; i++)
		if (!spare_mech[i] || !strcmp(spare_mech[i], mech)) {
			spare_mech[i] = mech;
			*colour = spare[i];
			return;
		}
	*colour = "#333333";
}

static void gp_quote(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s; s++)
		if (*s != '\'')
			fputc(*s, g);
	fputc('\'', g);
}

/* "same": where the threads ran, in words. */
static const char *where_words(const struct row *r)
{
	if (!strcmp(r->regime, "same"))
		return "all threads on one CPU";
	if (!strcmp(r->regime, "split"))
		return "waker and woken on two CPUs";
	if (!strcmp(r->regime, "migrated"))
		return "unpinned, threads moved";
	if (!strcmp(r->regime, "free"))
		return "unpinned";
	return r->regime;
}

/* A value axis: logarithmic when its values span a decade or more. */
static void gp_axis(FILE *g, char axis, double lo, double hi)
{
	if (lo > 0 && hi / lo >= 10)
		fprintf(g, "set logscale %c\n", axis);
	else
		fprintf(g, "unset logscale %c\n", axis);
}

/* Times in ns are drawn in microseconds, rates in millions a second. */
static double shown(const struct row *r, double v, const char **unit)
{
	if (!strcmp(r->unit, "ns")) {
		*unit = "microseconds";
		return v / 1e3;
	}
	if (!strcmp(r->unit, "items/s")) {
		*unit = "millions per second";
		return v / 1e6;
	}
	*unit = r->unit;
	return v;
}

/*
 * The CDF of rows r[i..j), each clipped at its p99.9: up to 2000 points,
 * the fraction of samples at or below x.
 */
static int panel_cdf(FILE *g, const char *dir, size_t *nfiles,
		     const struct row *r, size_t i, size_t j)
{
	double lo = INFINITY, hi = 0;
	const char *unit = "";

	for (size_t k = i; k < j; k++) {
		if (r[k].samples == 0)
			continue;
		lo = fmin(lo, shown(&r[k], r[k].sorted[0], &unit));
		hi = fmax(hi, shown(&r[k], r[k].p999, &unit));
	}
	gp_axis(g, 'x', lo, hi);
	fprintf(g, "unset logscale y\nset xrange [%g:%g]\nset yrange [0:1]\n"
		"set xlabel '%s, %s (up to each one''s p99.9)'\n"
		"set ylabel 'fraction of samples at or below'\n"
		"set style data lines\nplot ", lo * 0.95, hi * 1.05,
		kind_of(&r[i])->axis, unit);
	for (size_t k = i; k < j; k++) {
		char file[4200];
		const char *colour, *label;
		size_t clip = (size_t)ceil(0.999 * (double)r[k].samples);
		size_t m = clip < 2000 ? clip : 2000;
		FILE *d;

		snprintf(file, sizeof(file), "%s/%zu.dat", dir, (*nfiles)++);
		d = fopen(file, "w");
		if (!d)
			return -1;
		for (size_t p = 0; p < m; p++) {
			size_t s = m > 1 ? p * (clip - 1) / (m - 1) : 0;

			fprintf(d, "%.6g %.6f\n",
				shown(&r[k], r[k].sorted[s], &unit),
				(double)(s + 1) / (double)r[k].samples);
		}
		if (fclose(d) != 0)
			return -1;
		mech_look(r[k].mech, &colour, &label);
		fprintf(g, "%s", k > i ? ", " : "");
		gp_quote(g, file);
		fprintf(g, " using 1:2 lw 2 lc rgb '%s' title ", colour);
		gp_quote(g, label);
	}
	fputc('\n', g);
	return 0;
}

/*
 * Bars of rows r[i..j): one cluster per series, one bar per mechanism, the
 * median of each.
 */
static int panel_bars(FILE *g, const char *dir, size_t *nfiles,
		      const struct row *r, size_t i, size_t j)
{
	const char *mech[32], *ser[32], *unit = "";
	size_t nm = 0, ns = 0;
	double lo = INFINITY, hi = 0;
	char file[4200];
	FILE *d;

	for (size_t k = i; k < j; k++) {
		size_t m = 0;

		if (!same_panel(&r[i], &r[k]))
			continue;
		while (m < nm && strcmp(mech[m], r[k].mech))
			m++;
		if (m == nm && nm < 32)
			mech[nm++] = r[k].mech;
		m = 0;
		while (m < ns && strcmp(ser[m], r[k].series))
			m++;
		if (m == ns && ns < 32)
			ser[ns++] = r[k].series;
	}
	snprintf(file, sizeof(file), "%s/%zu.dat", dir, (*nfiles)++);
	d = fopen(file, "w");
	if (!d)
		return -1;
	for (size_t s = 0; s < ns; s++) {
		fprintf(d, "\"%s\"", ser[s][0] ? ser[s] : "all");
		for (size_t m = 0; m < nm; m++) {
			double v = NAN;

			for (size_t k = i; k < j; k++)
				if (same_panel(&r[i], &r[k]) &&
				    !strcmp(r[k].series, ser[s]) &&
				    !strcmp(r[k].mech, mech[m]))
					v = shown(&r[k], r[k].median, &unit);
			if (v > 0) {
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
			fprintf(d, isnan(v) ? " NaN" : " %.6g", v);
		}
		fputc('\n', d);
	}
	if (fclose(d) != 0)
		return -1;
	gp_axis(g, 'y', lo, hi);
	fprintf(g, "unset logscale x\nset xrange [*:*]\n");
	if (lo > 0 && hi / lo >= 10)
		fprintf(g, "set yrange [%g:*]\n", lo / 2);
	else
		fprintf(g, "set yrange [0:*]\n");
	fprintf(g, "set style data histograms\n"
		"set style histogram clustered\n"
		"set style fill solid 0.8 border -1\n"
		"set xlabel '%s'\nset ylabel '%s, %s'\nplot ",
		ns > 1 || ser[0][0] ? "series" : "", kind_of(&r[i])->axis,
		unit);
	for (size_t m = 0; m < nm; m++) {
		const char *colour, *label;

		mech_look(mech[m], &colour, &label);
		fprintf(g, "%s", m ? ", " : "");
		gp_quote(g, file);
		fprintf(g, " using %zu:xtic(1) lc rgb '%s' title ", m + 2,
			colour);
		gp_quote(g, label);
	}
	fputc('\n', g);
	return 0;
}

/* The figure's subtitle: what ran, where, how often. */
static void gp_subtitle(FILE *g, size_t rows, int cols)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "swait-bench %s, libswait %d.%d.%d: %s\\n"
		 "%d repetitions, order rotated; placement %s; %s, %d vCPUs; "
		 "%s; glibc %s; %s; started %s",
		 SWAIT_BENCH_VERSION, SWAIT_VERSION_MAJOR, SWAIT_VERSION_MINOR,
		 SWAIT_VERSION_PATCH, opt.command, opt.reps,
		 placements_label(), hdr.cpu_model, hdr.vcpus, hdr.kernel,
		 hdr.glibc, hdr.policy, hdr.started);
	fprintf(g, "set multiplot layout %zu,%d title \"", rows, cols);
	for (const char *s = buf; *s; s++)
		if (*s != '"')
			fputc(*s, g);
	fputs("\" font ',11'\n", g);
}

/*
 * Whether r[i] opens a panel: a CDF's rows are contiguous, a bar chart's
 * (one cluster per series) are spread over the series' blocks.
 */
static bool opens_panel(const struct row *r, size_t i)
{
	if (!kind_of(&r[i]))
		return false;
	for (size_t k = 0; k < i; k++)
		if (kind_of(&r[k]) && same_panel(&r[k], &r[i]))
			return false;
	return true;
}

/* Write the script and its data into dir; how many panels. */
static size_t plot_script(FILE *g, const char *png, const char *dir)
{
	struct row *r;
	size_t n = results_rows(&r), panels = 0, nfiles = 0;

	for (size_t i = 0; i < n; i++)
		panels += opens_panel(r, i);
	if (panels == 0)
		return 0;
	fprintf(g, "# swait-bench --plot: %zu panels\n"
		"set terminal pngcairo size 1600,%zu font ',10'\n"
		"set output ", panels, 140 + 420 * ((panels + 1) / 2));
	gp_quote(g, png);
	fprintf(g, "\nset termoption noenhanced\nset grid\n"
		"set key outside right top\n");
	gp_subtitle(g, (panels + 1) / 2, panels > 1 ? 2 : 1);
	for (size_t i = 0; i < n; i++) {
		const struct panel_kind *k = kind_of(&r[i]);
		size_t j = i + 1;
		int err;

		if (!opens_panel(r, i))
			continue;
		while (j < n && k->cdf && same_panel(&r[i], &r[j]))
			j++;
		fprintf(g, "# panel %s %s %s %s\n", r[i].scenario, r[i].metric,
			r[i].regime, r[i].load);
		fprintf(g, "set title \"%s\\n%s%s%s%s\"\n", k->title,
			where_words(&r[i]),
			opt.load == LOAD_NONE ? "" :
			strcmp(r[i].load, "none") ? ", beside a CPU load" :
			", no load",
			k->cdf && r[i].series[0] ? ", " : "",
			k->cdf ? r[i].series : "");
		err = k->cdf ? panel_cdf(g, dir, &nfiles, r, i, j) :
			       panel_bars(g, dir, &nfiles, r, i, n);
		if (err)
			return 0;
	}
	fprintf(g, "unset multiplot\n");
	return panels;
}

int plot_write(const char *png)
{
	const char *keep = getenv("SWAIT_BENCH_PLOT_KEEP");
	char tmp[] = "/tmp/swait-bench-plot.XXXXXX", script[4200], cmd[4400];
	const char *dir = keep && *keep ? keep : tmp;
	size_t panels;
	bool run = plot_available();
	FILE *g;
	int status = 0;

	if (dir == tmp ? !mkdtemp(tmp) :
	    mkdir(dir, 0700) != 0 && errno != EEXIST) {
		fprintf(stderr, "swait-bench: --plot: %s: %s\n", dir,
			strerror(errno));
		return 1;
	}
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	g = fopen(script, "w");
	if (!g)
		return 1;
	panels = plot_script(g, png, dir);
	if (fclose(g) != 0 || panels == 0) {
		fprintf(stderr, "swait-bench: --plot: nothing to plot\n");
		return 1;
	}
	if (run) {
		snprintf(cmd, sizeof(cmd), "gnuplot '%s' 1>&2", script);
		status = system(cmd);
	} else {
		fprintf(stderr, "swait-bench: --plot: gnuplot is not in PATH: "
			"script kept in %s, no PNG\n", dir);
	}
	if (dir == tmp) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "swait-bench: --plot: could not remove "
				"%s\n", dir);
	}
	if (status != 0) {
		fprintf(stderr, "swait-bench: --plot: gnuplot failed\n");
		return 1;
	}
	if (run)
		fprintf(stderr, "swait-bench: plot written to %s\n", png);
	return 0;
}
