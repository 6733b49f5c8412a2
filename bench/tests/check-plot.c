// SPDX-License-Identifier: MIT
/*
 * check-plot - the reading check of swait-bench --plot (issue 23): does the
 * figure say what it shows?  Runs
 *
 *	BENCH ARGS... --format csv --output DIR/run.csv --plot DIR/run.png
 *
 * with SWAIT_BENCH_PLOT_KEEP=DIR/keep, so the gnuplot script and its data
 * stay, then reads them as a reader would read the picture:
 *
 *  - every scenario with rows in the CSV has a panel;
 *  - one colour per mechanism: no colour names two mechanisms, and no
 *    mechanism shows in two colours;
 *  - an axis whose plotted values span a decade or more is logarithmic,
 *    and one that does not is linear;
 *  - a CDF stops at its p99.9 (its last fraction is below 1, from 0.99),
 *    and its x range ends there, not at the maximum;
 *  - titles are in words (no internal names such as round_trip), and the
 *    subtitle gives the repetitions, the placement and the machine;
 *  - with gnuplot in PATH, the PNG is written.
 *
 * Independent of the writer (plot.c): it knows gnuplot's syntax, not the
 * writer's tables.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("check-plot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

#define MAXN 64

static char colour_of[MAXN][16], label_of[MAXN][80];
static size_t ncolours;

/* One colour per mechanism, both ways. */
static void note_colour(const char *colour, const char *label)
{
	for (size_t i = 0; i < ncolours; i++) {
		bool c = !strcmp(colour_of[i], colour);
		bool l = !strcmp(label_of[i], label);

		if (c && l)
			return;
		if (c)
			fail("colour %s names both '%s' and '%s'", colour,
			     label_of[i], label);
		if (l)
			fail("'%s' is drawn in %s and in %s", label,
			     colour_of[i], colour);
		if (c || l)
			return;
	}
	if (ncolours < MAXN) {
		snprintf(colour_of[ncolours], 16, "%s", colour);
		snprintf(label_of[ncolours], 80, "%s", label);
		ncolours++;
	}
}

/*
 * Column col (1-based) of every line of a data file: min > 0 and max; with
 * last2, column 2 of the last line.  Returns the number of lines.
 */
static size_t data_span(const char *file, int col, double *lo, double *hi,
			double *last2)
{
	FILE *f = fopen(file, "r");
	char line[512];
	size_t lines = 0;

	if (!f) {
		fail("cannot read %s", file);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		lines++;
		char *p = line, *end;
		double v = 0;

		for (int c = 1; c <= col && *p; c++) {
			p += strspn(p, " \t");
			if (*p == '"') {
				p = strchr(p + 1, '"');
				p = p ? p + 1 : line + strlen(line);
				continue;
			}
			v = strtod(p, &end);
			if (end == p)
				break;
			p = end;
			if (c == 1 && col == 1 && last2) {
				*last2 = strtod(p, NULL);
			}
		}
		if (v > 0 && v < *lo)
			*lo = v;
		if (v > *hi)
			*hi = v;
	}
	fclose(f);
	return lines;
}

struct panel {
	char scenario[32];
	bool logx, logy;
	double xmax;		/* set xrange's upper bound, 0: none */
};

/* One plot line: its series, their colours, the axis span. */
static void check_plot(char *line, const struct panel *p)
{
	bool cdf = strstr(line, "using 1:2") != NULL;
	double lo = 1e300, hi = 0;
	char *s = line + 5;

	while ((s = strchr(s, '\''))) {
		char file[1024], colour[16], label[80];
		int col = 2, n = 0;
		char *q = strchr(s + 1, '\'');
		double last = -1;

		if (!q)
			break;
		snprintf(file, sizeof(file), "%.*s", (int)(q - s - 1), s + 1);
		if (sscanf(q + 1, " using %d%n", &col, &n) < 1) {
			fail("plot item without 'using': %s", q + 1);
			return;
		}
		q = strstr(q, "lc rgb '");
		if (!q || sscanf(q, "lc rgb '%15[^']' title '%79[^']'", colour,
				 label) != 2) {
			fail("plot item of %s without a colour and a title",
			     file);
			return;
		}
		note_colour(colour, label);
		if (cdf) {
			double flo = 1e300, fhi = 0;

			/*
			 * Below 1,000 samples (all drawn: fewer lines) the
			 * p99.9 is the maximum; from there it is below it.
			 */
			size_t lines = data_span(file, 1, &flo, &fhi, &last);

			lo = flo < lo ? flo : lo;
			hi = fhi > hi ? fhi : hi;
			if (!(last >= 0.99 && (last < 1.0 || lines < 1000)))
				fail("%s: CDF of '%s' ends at fraction %g, not "
				     "at its p99.9", p->scenario, label, last);
		} else {
			data_span(file, col, &lo, &hi, NULL);
		}
		s = strstr(q, "title '") + 7;
		s = strchr(s, '\'') + 1;
	}
	if (hi <= 0)
		return;
	if ((hi / lo >= 10) != (cdf ? p->logx : p->logy))
		fail("%s: values from %g to %g on a %s %c axis", p->scenario,
		     lo, hi, (cdf ? p->logx : p->logy) ? "log" : "linear",
		     cdf ? 'x' : 'y');
	if (cdf && !(p->xmax > 0 && p->xmax <= hi * 1.10))
		fail("%s: the x range ends at %g, past the last p99.9 %g",
		     p->scenario, p->xmax, hi);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/check-plot.XXXXXX", path[128], line[65536];
	char *args[64], out[64], png[64], keep[64], cpu[256] = "";
	char fmt[] = "--format", csv[] = "csv", o[] = "--output",
	     pl[] = "--plot";
	char scen[16][32], panels[32][32];
	size_t nscen = 0, npanels = 0;
	struct panel p = { "", false, false, 0 };
	int n = 0, status;
	FILE *f;

	if (argc < 2 || argc > 50 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: check-plot BENCH [ARGS...]\n");
		return 99;
	}
	snprintf(out, sizeof(out), "%s/run.csv", dir);
	snprintf(png, sizeof(png), "%s/run.png", dir);
	snprintf(keep, sizeof(keep), "%s/keep", dir);
	setenv("SWAIT_BENCH_PLOT_KEEP", keep, 1);
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n++] = fmt;
	args[n++] = csv;
	args[n++] = o;
	args[n++] = out;
	args[n++] = pl;
	args[n++] = png;
	args[n] = NULL;
	if (fork() == 0) {
		execv(args[0], args);
		_exit(127);
	}
	wait(&status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fail("%s exited with status %d", argv[1], WEXITSTATUS(status));
		return 1;
	}
	/* The scenarios with results, and the machine, from the CSV. */
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		size_t k = strcspn(line, ",");

		if (!strncmp(line, "# cpu_model: ", 13))
			snprintf(cpu, sizeof(cpu), "%.*s",
				 (int)strcspn(line + 13, "\n"), line + 13);
		if (line[0] == '#' || !strncmp(line, "scenario,", 9) || k > 31)
			continue;
		line[k] = 0;
		for (k = 0; k < nscen && strcmp(scen[k], line); k++)
			;
		if (k == nscen && nscen < 16)
			snprintf(scen[nscen++], 32, "%.31s", line);
	}
	if (f)
		fclose(f);
	if (nscen == 0)
		fail("no results in %s", out);
	snprintf(path, sizeof(path), "%s/plot.gp", keep);
	f = fopen(path, "r");
	if (!f) {
		fail("no script %s", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "set multiplot", 13)) {
			if (!strstr(line, "repetitions") ||
			    !strstr(line, "placement") || !strstr(line, cpu) ||
			    !strstr(line, "vCPUs"))
				fail("the subtitle lacks the run header: %s",
				     line);
		} else if (!strncmp(line, "# panel ", 8)) {
			sscanf(line + 8, "%31s", p.scenario);
			if (npanels < 32)
				snprintf(panels[npanels++], 32, "%s",
					 p.scenario);
		} else if (!strncmp(line, "set title ", 10)) {
			if (strchr(line, '_'))
				fail("a title names internals: %s", line);
		} else if (!strcmp(line, "set logscale x")) {
			p.logx = true;
		} else if (!strcmp(line, "unset logscale x")) {
			p.logx = false;
		} else if (!strcmp(line, "set logscale y")) {
			p.logy = true;
		} else if (!strcmp(line, "unset logscale y")) {
			p.logy = false;
		} else if (!strncmp(line, "set xrange [", 12)) {
			char *c = strchr(line, ':');

			p.xmax = c ? strtod(c + 1, NULL) : 0;
		} else if (!strncmp(line, "plot ", 5)) {
			check_plot(line, &p);
		}
	}
	fclose(f);
	for (size_t i = 0; i < nscen; i++) {
		size_t k = 0;

		while (k < npanels && strcmp(panels[k], scen[i]))
			k++;
		if (k == npanels)
			fail("scenario %s has results but no panel", scen[i]);
	}
	if (access("/usr/bin/gnuplot", X_OK) == 0) {
		unsigned char sig[4] = { 0 };

		f = fopen(png, "rb");
		if (!f || fread(sig, 1, 4, f) != 4 || sig[1] != 'P' ||
		    sig[2] != 'N' || sig[3] != 'G')
			fail("%s is not a PNG", png);
		if (f)
			fclose(f);
	}
	snprintf(line, sizeof(line), "rm -rf '%s'", dir);
	if (system(line) != 0)
		fprintf(stderr, "check-plot: could not remove %s\n", dir);
	printf("check-plot: %zu scenarios, %zu panels, %zu colours\n", nscen,
	       npanels, ncolours);
	return failures ? 1 : 0;
}
