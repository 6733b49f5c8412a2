// SPDX-License-Identifier: MIT
/*
 * plot.c - --plot FILE.png with gnuplot, found in PATH at run time.
 *
 * One PNG with one panel per plottable block of results: a CDF per
 * mechanism for pingpong round trips and latency one-way times (log x axis,
 * so the tail shows), and clustered bars of the median time to the last
 * waiter running for broadcast.  The data go to a temporary directory that
 * is removed afterwards.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static bool is_cdf(const struct row *r)
{
	return (strcmp(r->scenario, "pingpong") == 0 &&
		strcmp(r->metric, "round_trip") == 0) ||
	       (strcmp(r->scenario, "latency") == 0 &&
		strcmp(r->metric, "one_way") == 0);
}

static bool is_bars(const struct row *r)
{
	return strcmp(r->scenario, "broadcast") == 0 &&
	       strcmp(r->metric, "last_running") == 0;
}

static bool same_panel(const struct row *a, const struct row *b)
{
	return strcmp(a->scenario, b->scenario) == 0 &&
	       strcmp(a->metric, b->metric) == 0 &&
	       strcmp(a->regime, b->regime) == 0 &&
	       strcmp(a->load, b->load) == 0 &&
	       strcmp(a->series, b->series) == 0;
}

/* Whether r[i] is the first bars row of its regime (bars span series). */
static bool first_bars(const struct row *r, size_t i)
{
	if (!is_bars(&r[i]))
		return false;
	for (size_t k = 0; k < i; k++)
		if (is_bars(&r[k]) && !strcmp(r[k].regime, r[i].regime))
			return false;
	return true;
}

/* Up to 2000 points of the empirical CDF, x in microseconds. */
static int write_cdf(const char *file, const struct row *r)
{
	FILE *f = fopen(file, "w");
	size_t m = r->samples < 2000 ? r->samples : 2000;

	if (!f)
		return -1;
	for (size_t k = 0; k < m; k++) {
		size_t i = m > 1 ? k * (r->samples - 1) / (m - 1) : 0;

		fprintf(f, "%.4f %.6f\n", r->sorted[i] / 1e3,
			(double)(i + 1) / (double)r->samples);
	}
	return fclose(f);
}

/*
 * One colour per mechanism, the same in every panel, and no two alike
 * (gnuplot's default cycle repeats after eight: swait and futex-sleeper
 * shared one).  libswait's own mechanisms are the warm colours.
 */
static const char *const known_mechs[] = {
	"swait", "completion", "swait-all", "cond", "cond-after",
	"cond-broadcast", "sem", "eventfd", "pipe", "futex", "futex-sleeper",
};
static const char *const palette[] = {
	"#d62728", "#ff7f0e", "#8c564b", "#1f77b4", "#17becf",
	"#9467bd", "#2ca02c", "#bcbd22", "#e377c2", "#000000", "#7f7f7f",
	"#aec7e8",
};

static size_t mech_slot(const char *name)
{
	size_t n = sizeof(known_mechs) / sizeof(known_mechs[0]);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(known_mechs[i], name))
			return i;
	return n;	/* any other: the last colour */
}

static const char *mech_colour(const char *name)
{
	return palette[mech_slot(name)];
}

static void gp_quote(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s; s++)
		if (*s != '\'')
			fputc(*s, g);
	fputc('\'', g);
}

int plot_write(const char *png)
{
	struct row *r;
	size_t n = results_rows(&r), panels = 0, nfiles = 0;
	char dir[] = "/tmp/swait-bench-plot.XXXXXX", file[4200], script[64], cmd[128];
	FILE *g;
	int status;

	for (size_t i = 0; i < n; i++)
		if ((is_cdf(&r[i]) &&
		     (i == 0 || !same_panel(&r[i - 1], &r[i]))) ||
		    first_bars(r, i))
			panels++;
	if (panels == 0) {
		fprintf(stderr, "swait-bench: --plot: nothing to plot (run "
			"pingpong, latency or broadcast)\n");
		return 1;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "swait-bench: --plot: mkdtemp: %s\n",
			strerror(errno));
		return 1;
	}
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	g = fopen(script, "w");
	if (!g)
		return 1;
	fprintf(g, "set terminal png size 1000,%zu font ',10'\nset output ",
		420 * panels);
	gp_quote(g, png);
	fprintf(g, "\nset termoption noenhanced\n"
		"set multiplot layout %zu,1\nset grid\n"
		"set key outside right\n", panels);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		if (!is_cdf(&r[i]) && !first_bars(r, i)) {
			i++;
			continue;
		}
		while (is_cdf(&r[i]) && j < n && same_panel(&r[i], &r[j]))
			j++;
		if (is_cdf(&r[i])) {
			fprintf(g, "set title \"%s %s, placement %s%s (CDF)\"\n"
				"set logscale x\nset xlabel 'microseconds'\n"
				"set ylabel 'fraction of samples'\n"
				"set yrange [0:1]\nset style data lines\n"
				"unset xtics\nset xtics\nplot ",
				r[i].scenario, r[i].metric, r[i].regime,
				opt.load == LOAD_NONE ? "" :
				strcmp(r[i].load, "none") ? ", load cpu" :
				", no load");
			for (size_t k = i; k < j; k++) {
				snprintf(file, sizeof(file), "%s/%zu.dat", dir,
					 nfiles++);
				if (write_cdf(file, &r[k]) != 0)
					return 1;
				fprintf(g, "%s", k > i ? ", " : "");
				gp_quote(g, file);
				fprintf(g, " using 1:2 lw 2 lc rgb '%s' title ",
					mech_colour(r[k].mech));
				gp_quote(g, r[k].mech);
			}
			fprintf(g, "\nunset logscale x\nset yrange [*:*]\n");
		} else {
			/* rows: one per mechanism per n; columns: mechanisms */
			const char *mech[16];
			size_t nm = 0;
			FILE *d;

			const char *ser[16];
			size_t ns = 0;

			for (size_t k = i; k < n; k++) {
				size_t m = 0;

				if (!is_bars(&r[k]) ||
				    strcmp(r[k].regime, r[i].regime))
					continue;
				while (m < nm && strcmp(mech[m], r[k].mech))
					m++;
				if (m == nm && nm < 16)
					mech[nm++] = r[k].mech;
				m = 0;
				while (m < ns && strcmp(ser[m], r[k].series))
					m++;
				if (m == ns && ns < 16)
					ser[ns++] = r[k].series;
			}
			snprintf(file, sizeof(file), "%s/%zu.dat", dir,
				 nfiles++);
			d = fopen(file, "w");
			if (!d)
				return 1;
			for (size_t k = 0; k < ns; k++) {
				fprintf(d, "\"%s\"", ser[k]);
				for (size_t m = 0; m < nm; m++) {
					double v = NAN;

					for (size_t x = i; x < n; x++)
						if (is_bars(&r[x]) &&
						    !strcmp(r[x].regime,
							    r[i].regime) &&
						    !strcmp(r[x].series,
							    ser[k]) &&
						    !strcmp(r[x].mech, mech[m]))
							v = r[x].median;
					fprintf(d, " %.3f", v / 1e3);
				}
				fputc('\n', d);
			}
			fclose(d);
			fprintf(g, "set title \"broadcast: median wake to last "
				"waiter running, placement %s\"\n"
				"set style data histograms\n"
				"set style histogram clustered\n"
				"set style fill solid 0.8 border -1\n"
				"set xlabel 'waiters'\nset ylabel "
				"'microseconds'\nset yrange [0:*]\nplot ",
				r[i].regime);
			for (size_t m = 0; m < nm; m++) {
				fprintf(g, "%s", m ? ", " : "");
				gp_quote(g, file);
				fprintf(g, " using %zu:xtic(1) lc rgb '%s' "
					"title ", m + 2, mech_colour(mech[m]));
				gp_quote(g, mech[m]);
			}
			fprintf(g, "\nset yrange [*:*]\n"
				"set style data lines\n");
		}
		i = j;
	}
	fprintf(g, "unset multiplot\n");
	fclose(g);
	snprintf(cmd, sizeof(cmd), "gnuplot '%s' 1>&2", script);
	status = system(cmd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "swait-bench: --plot: could not remove %s\n",
			dir);
	if (status != 0) {
		fprintf(stderr, "swait-bench: --plot: gnuplot failed\n");
		return 1;
	}
	fprintf(stderr, "swait-bench: plot written to %s\n", png);
	return 0;
}
