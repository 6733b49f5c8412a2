// SPDX-License-Identifier: MIT
/*
 * check-output - the test that holds swait-bench to its documented output
 * schema (bench/README.md) and to its command-line contract.
 *
 *	check-output BENCH csv|json [ARGS...]	run BENCH ARGS --format FMT,
 *						parse stdout, check the schema
 *						(CHECK_LOAD=both: latency rows
 *						without and with the load;
 *						CHECK_PEERS=a,b: each peer
 *						in every scenario it fits)
 *	check-output BENCH badarg ARG...	BENCH ARG... must exit 2 with
 *						one stderr line naming the
 *						last ARG (or its value)
 *	check-output BENCH stall ARG...		BENCH ARG... must stall and
 *						be ended by its watchdog:
 *						exit 3, "no progress"
 *
 * No dependency beyond libc: a small JSON parser lives here.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The schema, copied on purpose from the writer (results.c) and
 * bench/README.md: this checker is the independent oracle, so a change to
 * the writer's columns must fail here until the documented schema changes.
 */
static const char *const columns[] = {
	"scenario", "metric", "unit", "series", "mechanism", "placement",
	"regime", "reps", "samples", "median", "p90", "p99", "p99_9",
	"p99_99", "max", "mean", "ref1", "ratio1_median", "ratio1_min",
	"ratio1_max", "ref2", "ratio2_median", "ratio2_min", "ratio2_max",
	"noisy", "csw_per_op", "futex_wake_per_op", "futex_wait_per_op",
	"load", "cpu_ns_per_op",
};
#define NCOLS (sizeof(columns) / sizeof(columns[0]))

enum kind { K_STR, K_STR_NULL, K_NUM, K_BOOL };

static enum kind kind_of(size_t c)
{
	const char *n = columns[c];

	if (!strcmp(n, "ref1") || !strcmp(n, "ref2"))
		return K_STR_NULL;
	if (!strcmp(n, "noisy"))
		return K_BOOL;
	if (!strcmp(n, "load"))
		return K_STR;
	return c < 7 ? K_STR : K_NUM;
}

static const char *const scenarios[] = {
	"pingpong", "nowaiter", "broadcast", "latency", "timedwait",
	"prodcons", "contention", "mostlybusy",
	"program",	/* named only: not in the default tour */
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))
/* The "seen" mask of a default run: rows of every scenario but program. */
#define ALL_SCEN ((1u << (NSCEN - 1)) - 1)

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("check-output: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	failures++;
}

/* Run argv, collect stdout (and stderr into *err if non-NULL). */
static char *run(char **argv, int *status, char **err)
{
	int out[2], ep[2];
	pid_t pid;
	char *buf[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };

	if (pipe(out) || pipe(ep)) {
		perror("pipe");
		exit(99);
	}
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(ep[1], 2);
		close(out[0]);
		close(ep[0]);
		execv(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	close(out[1]);
	close(ep[1]);
	for (int i = 0; i < 2; i++) {
		int fd = i ? ep[0] : out[0];
		char chunk[4096];
		ssize_t n;

		while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
			buf[i] = realloc(buf[i], len[i] + (size_t)n + 1);
			memcpy(buf[i] + len[i], chunk, (size_t)n);
			len[i] += (size_t)n;
		}
		if (!buf[i])
			buf[i] = calloc(1, 1);
		buf[i][len[i]] = 0;
		close(fd);
	}
	waitpid(pid, status, 0);
	if (err)
		*err = buf[1];
	else
		free(buf[1]);
	return buf[0];
}

static bool is_number(const char *s)
{
	char *end;

	if (!*s)
		return false;
	strtod(s, &end);
	return *end == 0 && !strchr(s, 'n') && !strchr(s, 'N');
}

static bool known_scenario(const char *s)
{
	for (size_t i = 0; i < NSCEN; i++)
		if (!strcmp(s, scenarios[i]))
			return true;
	return false;
}

/* Column index of the load column (appended after schema 1's first 28). */
#define COL_LOAD (NCOLS - 2)	/* before cpu_ns_per_op */

/* Load conditions seen on latency rows: bit 0 none, bit 1 cpu. */
static unsigned load_seen;

/*
 * Only latency runs under load (bench/README.md); every other row must say
 * "none", and a load value is one of the two conditions.
 */
static void check_load(const char *where, size_t row, const char *scenario,
		       const char *load)
{
	bool cpu = !strcmp(load, "cpu");

	if (!cpu && strcmp(load, "none"))
		fail("%s %zu: load '%s' is not none or cpu", where, row,
		     load);
	else if (cpu && strcmp(scenario, "latency"))
		fail("%s %zu: %s under load", where, row, scenario);
	else if (!strcmp(scenario, "latency"))
		load_seen |= cpu ? 2u : 1u;
}

/*
 * CHECK_PEERS=a,b,...: the peers built into this swait-bench, each of which
 * must have rows in pingpong, nowaiter, broadcast, latency, prodcons,
 * contention and mostlybusy (bench/README.md) and none in timedwait.
 * peer_seen[k]: bit i, a row of peer k in scenario i.
 */
#define MAX_PEERS 8
static char *peer_names[MAX_PEERS];
static size_t npeer_names;
static unsigned peer_seen[MAX_PEERS];

static void note_row(const char *scenario, const char *mech)
{
	for (size_t k = 0; k < npeer_names; k++)
		if (!strcmp(mech, peer_names[k]))
			for (size_t i = 0; i < NSCEN; i++)
				if (!strcmp(scenario, scenarios[i]))
					peer_seen[k] |= 1u << i;
}

static void check_peers(void)
{
	/* Bit i of scenarios[]: all but timedwait (bit 4). */
	const unsigned want = ALL_SCEN & ~(1u << 4);

	for (size_t k = 0; k < npeer_names; k++)
		if (peer_seen[k] != want)
			fail("peer %s: scenario mask %#x, not %#x", peer_names[k],
			     peer_seen[k], want);
}

/*
 * The two scenarios whose series name their parameters (bench/README.md):
 * contention "w=N s=M" (wakers, waiters), mostlybusy "w=N work=Tns"
 * (workers, work per item).  A user's results are read by these names.
 */
static void check_series(const char *where, size_t row, const char *scenario,
			 const char *series)
{
	int a = 0, b = 0, n = -1;

	if (!strcmp(scenario, "contention") &&
	    (sscanf(series, "w=%d s=%d%n", &a, &b, &n) != 2 || n < 0 ||
	     series[n] || a < 1 || b < 1))
		fail("%s %zu: contention series '%s' is not 'w=N s=M'", where,
		     row, series);
	if (!strcmp(scenario, "mostlybusy") &&
	    (sscanf(series, "w=%d work=%dns%n", &a, &b, &n) != 2 || n < 0 ||
	     series[n] || a < 1 || b < 1))
		fail("%s %zu: mostlybusy series '%s' is not 'w=N work=Tns'",
		     where, row, series);
}

/* ------------------------------------------------------------------- CSV */

/*
 * CPU per operation on a throughput row (unit items/s) that did work: a
 * positive number, and not far beyond what the machine's CPUs give in the
 * time one operation takes.  If every thread's count stayed inside the
 * window, repetition i would have cpu_i <= vcpus x 1e9 / rate_i, and the
 * column's mean over repetitions times the smallest rate would be at most
 * vcpus x 1e9; with one or two repetitions (the CI's) the median is that
 * smallest rate (nearest rank).  A loaded machine bends that: CI with its
 * second lane saw 4.4 x vcpus, when window_run() still read its clock
 * after opening the window (a preemption in between made the rate too
 * high; fixed), and a thread counts from its first operation that sees
 * the window open to its first that sees it closed, which can outlast
 * it.  So the bound allows 50 x vcpus, and still catches a CPU time not
 * divided by the operations (the whole trial's, as swait-bench once
 * printed for prodcons, contention and mostlybusy) by a factor of
 * hundreds.  With more than two repetitions a median says nothing about
 * the smallest rate, so only the presence is checked.
 */
static void check_cpu(const char *where, size_t row, const char *unit,
		      double rate, int reps, bool has_cpu, double cpu,
		      int vcpus)
{
	if (strcmp(unit, "items/s") || !(rate > 0))
		return;
	if (!has_cpu || !(cpu > 0))
		fail("%s %zu: no cpu_ns_per_op on a throughput row", where,
		     row);
	else if (reps <= 2 && cpu * rate > 50.0 * vcpus * 1e9)
		fail("%s %zu: cpu_ns_per_op %g at %g items/s is more CPU than "
		     "%d vCPUs give", where, row, cpu, rate, vcpus);
}

static void check_csv(char *text, unsigned *seen)
{
	char *line, *save = NULL;
	bool header = false, load_line = false;
	int rows = 0, lineno = 0, vcpus = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[NCOLS + 1], *p = line;
		size_t n = 0;

		lineno++;
		if (lineno == 1 && strncmp(line, "# swait-bench ", 14))
			fail("csv: line 1 is not '# swait-bench VERSION'");
		if (line[0] == '#') {
			if (header)
				fail("csv: comment after the column line");
			if (!strncmp(line, "# vcpus: ", 9))
				vcpus = atoi(line + 9);
			if (!strncmp(line, "# load: ", 8)) {
				load_line = true;
				if (strcmp(line + 8, "none") &&
				    strcmp(line + 8, "cpu") &&
				    strcmp(line + 8, "both"))
					fail("csv: header '%s'", line);
			}
			continue;
		}
		while (n <= NCOLS) {
			f[n++] = p;
			p = strchr(p, ',');
			if (!p)
				break;
			*p++ = 0;
		}
		if (n != NCOLS) {
			fail("csv: line %d has %zu fields, not %zu", lineno, n,
			     NCOLS);
			continue;
		}
		if (!header) {
			for (size_t c = 0; c < NCOLS; c++)
				if (strcmp(f[c], columns[c]))
					fail("csv: column %zu is '%s', not "
					     "'%s'", c + 1, f[c], columns[c]);
			header = true;
			continue;
		}
		rows++;
		for (size_t c = 0; c < NCOLS; c++) {
			switch (kind_of(c)) {
			case K_STR:
				if (!*f[c] && strcmp(columns[c], "series"))
					fail("csv: line %d: empty %s", lineno,
					     columns[c]);
				break;
			case K_STR_NULL:
				break;
			case K_NUM:
				if (*f[c] && !is_number(f[c]))
					fail("csv: line %d: %s '%s' is not a "
					     "number", lineno, columns[c],
					     f[c]);
				break;
			case K_BOOL:
				if (strcmp(f[c], "true") &&
				    strcmp(f[c], "false"))
					fail("csv: line %d: noisy '%s'", lineno,
					     f[c]);
				break;
			}
		}
		if (!known_scenario(f[0]))
			fail("csv: line %d: unknown scenario '%s'", lineno,
			     f[0]);
		check_load("csv: line", (size_t)lineno, f[0], f[COL_LOAD]);
		check_series("csv: line", (size_t)lineno, f[0], f[3]);
		note_row(f[0], f[4]);
		for (size_t i = 0; i < NSCEN; i++)
			if (!strcmp(f[0], scenarios[i]))
				*seen |= 1u << i;
		if (*f[9] && *f[11] && *f[14] &&
		    !(atof(f[9]) <= atof(f[11]) && atof(f[11]) <= atof(f[14])))
			fail("csv: line %d: median <= p99 <= max fails", lineno);
		if (*f[9])
			check_cpu("csv: line", (size_t)lineno, f[2], atof(f[9]),
				  atoi(f[7]), *f[NCOLS - 1] != 0,
				  atof(f[NCOLS - 1]), vcpus);
	}
	if (!load_line)
		fail("csv: no '# load: ' header line");
	if (vcpus < 1)
		fail("csv: no '# vcpus: N' header line");
	if (!header)
		fail("csv: no column line");
	if (rows == 0)
		fail("csv: no result rows");
}

/* ------------------------------------------------------------------ JSON */

enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
	enum jt t;
	double num;
	char *str;
	size_t n;
	char **keys;
	struct jv *items;
};

static const char *jp;

static void ws(void)
{
	while (isspace((unsigned char)*jp))
		jp++;
}

static bool parse_value(struct jv *v);

static bool parse_string(char **out)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);

	if (*jp++ != '"')
		return false;
	while (*jp && *jp != '"') {
		char c = *jp++;

		if (c == '\\') {
			c = *jp++;
			if (c == 'u') {
				for (int i = 0; i < 4; i++)
					if (!isxdigit((unsigned char)*jp++))
						return false;
				c = '?';
			} else if (!strchr("\"\\/bfnrt", c) || !c) {
				return false;
			}
		} else if ((unsigned char)c < 0x20) {
			return false;
		}
		if (n + 2 > cap)
			s = realloc(s, cap *= 2);
		s[n++] = c;
	}
	if (*jp++ != '"')
		return false;
	s[n] = 0;
	*out = s;
	return true;
}

static bool parse_value(struct jv *v)
{
	memset(v, 0, sizeof(*v));
	ws();
	if (*jp == '{' || *jp == '[') {
		bool obj = *jp++ == '{';

		v->t = obj ? J_OBJ : J_ARR;
		ws();
		if (*jp == (obj ? '}' : ']')) {
			jp++;
			return true;
		}
		for (;;) {
			v->items = realloc(v->items, (v->n + 1) *
					   sizeof(*v->items));
			v->keys = realloc(v->keys, (v->n + 1) *
					  sizeof(*v->keys));
			v->keys[v->n] = NULL;
			if (obj) {
				ws();
				if (!parse_string(&v->keys[v->n]))
					return false;
				ws();
				if (*jp++ != ':')
					return false;
			}
			if (!parse_value(&v->items[v->n++]))
				return false;
			ws();
			if (*jp == ',') {
				jp++;
				continue;
			}
			return *jp++ == (obj ? '}' : ']');
		}
	}
	if (*jp == '"') {
		v->t = J_STR;
		return parse_string(&v->str);
	}
	if (!strncmp(jp, "null", 4)) {
		jp += 4;
		return true;
	}
	if (!strncmp(jp, "true", 4) || !strncmp(jp, "false", 5)) {
		v->t = J_BOOL;
		v->num = *jp == 't';
		jp += *jp == 't' ? 4 : 5;
		return true;
	}
	if (*jp == '-' || isdigit((unsigned char)*jp)) {
		char *end;

		v->t = J_NUM;
		v->num = strtod(jp, &end);
		if (end == jp)
			return false;
		jp = end;
		return true;
	}
	return false;
}

static const struct jv *get(const struct jv *o, const char *key)
{
	if (o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->items[i];
	return NULL;
}

static void check_json(const char *text, unsigned *seen)
{
	static const char *const hdr_str[] = {
		"kernel", "cpu_model", "glibc", "policy", "placement", "load",
		"load_before", "load_after", "started", "futex_counts",
	};
	struct jv root;
	const struct jv *h, *res, *x, *l, *cpu, *reps, *vcpus = NULL;

	jp = text;
	if (!parse_value(&root)) {
		fail("json: syntax error at offset %td", jp - text);
		return;
	}
	ws();
	if (*jp)
		fail("json: trailing text at offset %td", jp - text);
	if (root.t != J_OBJ) {
		fail("json: top level is not an object");
		return;
	}
	x = get(&root, "tool");
	if (!x || x->t != J_STR || strcmp(x->str, "swait-bench"))
		fail("json: tool is not \"swait-bench\"");
	x = get(&root, "version");
	if (!x || x->t != J_STR)
		fail("json: no version string");
	x = get(&root, "schema");
	if (!x || x->t != J_NUM || x->num != 1)
		fail("json: schema is not 1");
	h = get(&root, "header");
	if (!h || h->t != J_OBJ) {
		fail("json: no header object");
	} else {
		for (size_t i = 0; i < sizeof(hdr_str) / sizeof(hdr_str[0]); i++)
			if (!(x = get(h, hdr_str[i])) || x->t != J_STR)
				fail("json: header.%s is not a string",
				     hdr_str[i]);
		if (!(vcpus = get(h, "vcpus")) || vcpus->t != J_NUM ||
		    vcpus->num < 1) {
			fail("json: header.vcpus is not a count");
			vcpus = NULL;
		}
		if (!(x = get(h, "reps")) || x->t != J_NUM || x->num < 1)
			fail("json: header.reps is not a count");
		if (!(x = get(h, "cpus")) || x->t != J_ARR || x->n != 2)
			fail("json: header.cpus is not a pair");
	}
	res = get(&root, "results");
	if (!res || res->t != J_ARR || res->n == 0) {
		fail("json: results is not a non-empty array");
		return;
	}
	for (size_t i = 0; i < res->n; i++) {
		const struct jv *r = &res->items[i];

		if (r->t != J_OBJ || r->n != NCOLS) {
			fail("json: results[%zu] is not an object of %zu keys",
			     i, NCOLS);
			continue;
		}
		for (size_t c = 0; c < NCOLS; c++) {
			x = get(r, columns[c]);
			if (!x) {
				fail("json: results[%zu] has no %s", i,
				     columns[c]);
				continue;
			}
			switch (kind_of(c)) {
			case K_STR:
				if (x->t != J_STR)
					fail("json: results[%zu].%s is not a "
					     "string", i, columns[c]);
				break;
			case K_STR_NULL:
				if (x->t != J_STR && x->t != J_NULL)
					fail("json: results[%zu].%s", i,
					     columns[c]);
				break;
			case K_NUM:
				if (x->t != J_NUM && x->t != J_NULL)
					fail("json: results[%zu].%s is not a "
					     "number or null", i, columns[c]);
				break;
			case K_BOOL:
				if (x->t != J_BOOL)
					fail("json: results[%zu].noisy is not "
					     "a boolean", i);
				break;
			}
		}
		x = get(r, "scenario");
		if (x && x->t == J_STR) {
			if (!known_scenario(x->str))
				fail("json: unknown scenario '%s'", x->str);
			for (size_t k = 0; k < NSCEN; k++)
				if (!strcmp(x->str, scenarios[k]))
					*seen |= 1u << k;
		}
		l = get(r, "mechanism");
		if (x && x->t == J_STR && l && l->t == J_STR)
			note_row(x->str, l->str);
		x = get(r, "samples");
		if (x && (x->t != J_NUM || x->num < 1))
			fail("json: results[%zu].samples < 1", i);
		x = get(r, "scenario");
		l = get(r, "load");
		if (x && x->t == J_STR && l && l->t == J_STR)
			check_load("json: results", i, x->str, l->str);
		l = get(r, "series");
		if (x && x->t == J_STR && l && l->t == J_STR)
			check_series("json: results", i, x->str, l->str);
		x = get(r, "unit");
		l = get(r, "median");
		cpu = get(r, "cpu_ns_per_op");
		reps = get(r, "reps");
		if (x && x->t == J_STR && l && l->t == J_NUM && reps &&
		    reps->t == J_NUM && cpu && vcpus)
			check_cpu("json: results", i, x->str, l->num,
				  (int)reps->num, cpu->t == J_NUM,
				  cpu->t == J_NUM ? cpu->num : 0,
				  (int)vcpus->num);
	}
}

int main(int argc, char **argv)
{
	char *args[64], *out, *err = NULL, format[] = "--format";
	int status, n = 0;
	unsigned seen = 0;

	if (argc < 3 || argc > 50) {
		fprintf(stderr, "usage: check-output BENCH csv|json|badarg "
			"[ARGS...]\n");
		return 99;
	}
	args[n++] = argv[1];
	for (int i = 3; i < argc; i++)
		args[n++] = argv[i];
	if (!strcmp(argv[2], "badarg")) {
		const char *last = argv[argc - 1];
		const char *eq = strchr(last, '=');
		char *nl;

		args[n] = NULL;
		free(run(args, &status, &err));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 2)
			fail("badarg: '%s' did not exit with status 2", last);
		nl = strchr(err, '\n');
		if (!nl || nl[1])
			fail("badarg: stderr is not one line: '%s'", err);
		if (!strstr(err, eq ? eq + 1 : last))
			fail("badarg: message does not name '%s': %s", last,
			     err);
		return failures ? 1 : 0;
	}
	if (!strcmp(argv[2], "stall")) {
		args[n] = NULL;
		free(run(args, &status, &err));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 3)
			fail("stall: exit status %d, not the watchdog's 3: %s",
			     WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
		if (!strstr(err, "no progress for") ||
		    !strstr(err, "(a lost wakeup?)"))
			fail("stall: the watchdog did not say so: %s", err);
		return failures ? 1 : 0;
	}
	if (getenv("CHECK_PEERS")) {
		char *save = NULL, *list = strdup(getenv("CHECK_PEERS"));

		for (char *t = strtok_r(list, ",", &save);
		     t && npeer_names < MAX_PEERS; t = strtok_r(NULL, ",", &save))
			peer_names[npeer_names++] = t;
	}
	args[n++] = format;
	args[n++] = argv[2];
	args[n] = NULL;
	out = run(args, &status, &err);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail("%s exited with status %d: %s", argv[1],
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1, err);
	if (!strcmp(argv[2], "csv"))
		check_csv(out, &seen);
	else if (!strcmp(argv[2], "json"))
		check_json(out, &seen);
	else
		fail("unknown check '%s'", argv[2]);
	if (getenv("CHECK_ALL_SCENARIOS") && seen != ALL_SCEN)
		fail("not every scenario has results (seen mask %#x)", seen);
	check_peers();
	if (getenv("CHECK_LOAD") && !strcmp(getenv("CHECK_LOAD"), "both") &&
	    load_seen != 3)
		fail("--load both: latency rows lack a load condition (seen "
		     "mask %#x)", load_seen);
	if (failures)
		fprintf(stderr, "check-output: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
