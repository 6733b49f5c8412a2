// SPDX-License-Identifier: MIT
/*
 * swait-bench - compare libswait with pthread_cond and the other ways a
 * thread sleeps.  See bench/README.md for the method and the output schema.
 *
 * This file holds the command line and the order of things: parse and check
 * every argument before anything runs (a bad one exits 2 naming it), take
 * the run header, run the scenarios, print, plot.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <swait.h>

#include "bench.h"

struct opts opt = {
	.cpus = PLACE_SAME,
	.reps = 0,
	.format = FMT_TABLE,
	.cpu_a = -1,
	.cpu_b = -1,
};

const struct scenario scenarios[] = {
	{ "pingpong",
	  "two threads hand a token back and forth; time per round trip, "
	  "context switches and futex calls per round trip.",
	  run_pingpong, false },
	{ "nowaiter",
	  "wake calls with nobody waiting (swait_wake_one, "
	  "pthread_cond_signal, FUTEX_WAKE, ...); ns per call.",
	  run_nowaiter, false },
	{ "broadcast",
	  "N waiters (1, 8, 64, 256) verified asleep, then one wake-all; time "
	  "to the first and the last waiter running and the waker's own time.",
	  run_broadcast, false },
	{ "latency",
	  "one-way wake latency: the waker stamps the clock just before "
	  "waking, the woken thread on return (ptsematest style).",
	  run_latency, false },
	{ "timedwait",
	  "how late a wait with an absolute deadline returns, on "
	  "CLOCK_MONOTONIC and CLOCK_REALTIME.",
	  run_timedwait, false },
	{ "prodcons",
	  "P producers and C consumers on a bounded queue; items per second "
	  "and fairness across consumers.",
	  run_prodcons, false },
	{ "contention",
	  "N wakers and M waiters on one channel (by default sized from the "
	  "CPUs this process may use, or --wakers, --waiters); handoffs per "
	  "second, context switches per handoff, fairness across waiters.",
	  run_contention, false },
	/* Last: it registers the process for membarrier (swait-asym). */
	{ "mostlybusy",
	  "one producer waking after every push, busy workers that seldom "
	  "sleep; items per second, the producer's time per push and wake, "
	  "and swait-asym (no fence in the wake, membarrier in the sleep).",
	  run_mostlybusy, false },
	{ "program",
	  "a real program (pigz -p 8, zstd -T8, when installed) compressing "
	  "a corpus, plain and under libswait-preload.so; wall time, CPU time "
	  "and context switches, ratios swait-run / glibc, identical output "
	  "checked.  Not in the default tour: name it (--corpus-mb N).",
	  run_program, true },
};
const size_t nscenarios = sizeof(scenarios) / sizeof(scenarios[0]);

long trial_iterations(long def, long def_quick)
{
	if (opt.iterations)
		return opt.iterations;
	return opt.quick ? def_quick : def;
}

uint64_t trial_duration_ns(void)
{
	return (uint64_t)(opt.duration * 1e9);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: swait-bench [SCENARIO...] [OPTIONS]\n"
"\n"
"Compare libswait's wait queues with pthread_cond and the other ways a\n"
"thread sleeps.  With no scenario, runs all of them briefly (under a\n"
"minute) and prints a table.\n"
"\n"
"Scenarios:\n");
	for (size_t i = 0; i < nscenarios; i++) {
		const char *h = scenarios[i].help;

		fprintf(f, "  %-10s ", scenarios[i].name);
		/* Wrap at 78 columns, under the text. */
		while (*h) {
			size_t n = strlen(h), cut = n;

			if (n > 65) {
				cut = 65;
				while (cut > 0 && h[cut] != ' ')
					cut--;
			}
			fprintf(f, "%.*s\n", (int)cut, h);
			h += cut;
			h += strspn(h, " ");
			if (*h)
				fprintf(f, "  %-10s ", "");
		}
	}
	fprintf(f,
"\n"
"Options:\n"
"  --mech LIST        comma-separated mechanisms (default: all that fit)\n"
"  --cpus same|split|free|same,split\n"
"                     same: all threads on one CPU; split: waker and\n"
"                     woken on two CPUs; free: unpinned, trials labelled\n"
"                     by where they ran; a list runs each selected\n"
"                     scenario under each.  Default: pingpong and latency\n"
"                     under same and split, the others under same\n"
"  --reps N           repetitions, each runs every mechanism once, order\n"
"                     rotated (default 5, --quick 3)\n"
"  --iterations N     samples per trial\n"
"  --duration S       seconds per trial instead of --iterations (pingpong,\n"
"                     latency, timedwait, prodcons); the measured window\n"
"                     of contention and mostlybusy\n"
"  --corpus-mb N      program: the corpus size in MiB (default 100,\n"
"                     --quick 20)\n"
"  --threads N        broadcast: only N waiters; prodcons: N producers and\n"
"                     N consumers (default 2); mostlybusy: N workers\n"
"                     (default 2)\n"
"  --wakers N, --waiters M\n"
"                     contention: one series of N wakers and M waiters\n"
"                     instead of the default ones (a missing one is the\n"
"                     number of CPUs this process may use, at least 2)\n"
"  --rt               SCHED_FIFO threads and mlockall (fails if refused)\n"
"  --load none|cpu|both\n"
"                     latency beside a competing load: one busy thread\n"
"                     per CPU (SCHED_OTHER, dirtying 4 MiB and making\n"
"                     system calls); none (default), cpu (always), or\n"
"                     both: every repetition runs each mechanism without\n"
"                     and with it, side by side\n"
"  --count-futex      count futex calls of every mechanism with the\n"
"                     syscalls:sys_enter_futex tracepoint, in a separate\n"
"                     untimed run (as root, mounts tracefs in a private\n"
"                     mount namespace if it is not mounted)\n"
"  --format table|csv|json\n"
"  --output FILE      write the results to FILE instead of stdout\n"
"  --plot FILE.png    draw every scenario with gnuplot: CDFs of pingpong\n"
"                     and latency, bars of the others\n"
"  --quick            small trials, ends within about 10 seconds\n"
"  --help, --version\n"
"\n"
"Mechanisms:\n");
	for (size_t i = 0; i < nmechs; i++)
		fprintf(f, "  %-14s %s\n", mechs[i].name, mechs[i].desc);
	fprintf(f,
"  %-14s %s\n"
"  %-14s %s\n"
"  %-14s %s\n"
"  %-14s %s\n",
		"swait-all", "swait_wake_all() with nobody waiting (nowaiter)",
		"cond-broadcast", "pthread_cond_broadcast() with nobody waiting "
		"(nowaiter)",
		"swait-asym",
		"swait on a swait_head_init_asym() head: no fence in the",
		"", "wake, membarrier() in the sleep (nowaiter, mostlybusy)");
	peers_missing_print(f);
	fprintf(f,
"pingpong, latency, prodcons and contention use every mechanism above;\n"
"timedwait those with a deadline wait (swait, completion, cond, swait-cond,\n"
"sem, futex, futex-sleeper); nowaiter swait, swait-asym, swait-all, cond,\n"
"cond-broadcast, futex, futex-sleeper and the peers (nsync, abseil,\n"
"atomic); broadcast swait, cond, swait-cond, futex and the peers, in their\n"
"wake-all forms; mostlybusy swait,\n"
"swait-asym, cond, futex-sleeper and the peers, as wakes after a push\n"
"onto a queue of its own.\n"
"\n"
"Reading the table (a legend is also printed under it):\n"
"  median, p99, p99.9, p99.99, max\n"
"                     over the pooled samples; a time carries its own\n"
"                     unit (ns, us, ms), other units are under the\n"
"                     column's name; a percentile needs 100,\n"
"                     1,000 or 10,000 samples and shows - below that\n"
"  x REF [min..max]   the mechanism's median over REF's, one ratio per\n"
"                     repetition: median ratio [smallest..largest]\n"
"  csw /op            context switches per operation\n"
"  fwake, fwait /op   FUTEX_WAKE, FUTEX_WAIT calls per operation\n"
"                     (--count-futex)\n"
"  n/a                not counted in this run\n"
"  goals              libswait's targets (README); MISSED names the\n"
"                     measured value and the bound it is above\n");
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad(const char *fmt, ...)
{
	va_list ap;

	fputs("swait-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(2);
}

static long parse_long(const char *name, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		bad("%s: '%s' is not a whole number from %ld to %ld", name, s,
		    min, max);
	return v;
}

/*
 * The index of v in the NULL-terminated names, which list an enum's values
 * in order; anything else is a usage error naming the choices.
 */
static int choice(const char *name, const char *v, const char *const names[])
{
	char list[128] = "";
	int n;

	for (n = 0; names[n]; n++) {
		if (strcmp(v, names[n]) == 0)
			return n;
		if (n > 0)
			strncat(list, names[n + 1] ? ", " : " or ",
				sizeof(list) - strlen(list) - 1);
		strncat(list, names[n], sizeof(list) - strlen(list) - 1);
	}
	bad("%s: '%s' is not %s", name, v, list);
}

static double parse_seconds(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 3600)
		bad("%s: '%s' is not a number of seconds in (0, 3600]", name, s);
	return v;
}

static int scenario_index(const char *name)
{
	for (size_t i = 0; i < nscenarios; i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return (int)i;
	return -1;
}

static void check_mech_list(const char *list)
{
	const char *p = list;
	char name[64];

	if (!*list)
		bad("--mech: empty list");
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 0 || n >= sizeof(name))
			bad("--mech: bad list '%s'", list);
		memcpy(name, p, n);
		name[n] = 0;
		if (peer_missing_why(name))
			bad("--mech: %s was not built into this swait-bench "
			    "(%s)", name, peer_missing_why(name));
		if (!mech_name_known(name))
			bad("--mech: unknown mechanism '%s'", name);
		p += n;
		if (*p == ',' && *++p == 0)
			bad("--mech: bad list '%s'", list);
	}
}

/* The two CPUs placement uses: the last two this process may run on. */
static void pick_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (opt.cpu_a < 0)
			opt.cpu_a = c;
		else if (opt.cpu_b < 0)
			opt.cpu_b = c;
	}
	if ((opt.cpus_set & (1u << PLACE_SPLIT)) && opt.cpu_b < 0)
		bad("--cpus split: this process may run on one CPU only");
}

static void *rt_probe(void *arg)
{
	return arg;
}

static void check_rt(void)
{
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = 80 };
	pthread_t t;
	int err;

	pthread_attr_init(&a);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_FIFO);
	pthread_attr_setschedparam(&a, &sp);
	err = pthread_create(&t, &a, rt_probe, NULL);
	pthread_attr_destroy(&a);
	if (err)
		die("--rt: SCHED_FIFO refused (%s); run as root or raise "
		    "RLIMIT_RTPRIO, or drop --rt", strerror(err));
	pthread_join(t, NULL);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		die("--rt: mlockall refused (%s); raise RLIMIT_MEMLOCK or "
		    "drop --rt", strerror(errno));
}

/* Options that take a value: "--name value" or "--name=value". */
static const char *value_of(const char *arg, const char *name, int *i,
			    int argc, char **argv)
{
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return NULL;
	if (arg[n] == '=')
		return arg + n + 1;
	if (arg[n] != 0)
		return NULL;
	if (*i + 1 >= argc)
		bad("%s needs a value", name);
	return argv[++*i];
}

/*
 * The directory part of path made absolute, and its last name, so that two
 * spellings of one file ("x.png", "./x.png") compare equal before either
 * exists.  False if the directory cannot be resolved.
 */
static bool file_key(const char *path, char *key, size_t len)
{
	char dir[4096], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? (slash == path ? "/" : path) : ".");
	if (!realpath(dir, real))
		return false;
	snprintf(key, len, "%s/%s", real, base);
	return true;
}

/* Whether --output and --plot name one file (which one would overwrite). */
static bool same_file(const char *a, const char *b)
{
	char ka[8192], kb[8192];
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return file_key(a, ka, sizeof(ka)) && file_key(b, kb, sizeof(kb)) &&
	       strcmp(ka, kb) == 0;
}

static void parse(int argc, char **argv)
{
	const char *wakers_arg = NULL;	/* the last --wakers/--waiters */

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int s;

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--version") == 0 ||
			   strcmp(a, "-V") == 0) {
			printf("swait-bench %s\n", SWAIT_BENCH_VERSION);
			exit(0);
		} else if (strcmp(a, "--rt") == 0) {
			opt.rt = true;
		} else if (strcmp(a, "--quick") == 0) {
			opt.quick = true;
		} else if (strcmp(a, "--count-futex") == 0) {
			opt.count_futex = true;
		} else if ((v = value_of(a, "--mech", &i, argc, argv))) {
			check_mech_list(v);
			opt.mech_list = v;
		} else if ((v = value_of(a, "--cpus", &i, argc, argv))) {
			static const char *const c[] = { "same", "split",
							 "free", NULL };
			char buf[64], *tok, *save = NULL;

			if (strlen(v) >= sizeof(buf))
				bad("--cpus: '%s' is too long", v);
			strcpy(buf, v);
			opt.cpus_set = 0;
			for (tok = strtok_r(buf, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				opt.cpus_set |= 1u << choice("--cpus", tok, c);
			if (!opt.cpus_set)
				bad("--cpus: empty list");
			if ((opt.cpus_set & (1u << PLACE_FREE)) &&
			    opt.cpus_set != (1u << PLACE_FREE))
				bad("--cpus: free runs alone, not in a list");
			opt.cpus = (enum placement)__builtin_ctz(opt.cpus_set);
		} else if ((v = value_of(a, "--reps", &i, argc, argv))) {
			opt.reps = (int)parse_long("--reps", v, 1, 1000);
		} else if ((v = value_of(a, "--iterations", &i, argc, argv))) {
			opt.iterations = parse_long("--iterations", v, 1,
						    100000000);
		} else if ((v = value_of(a, "--duration", &i, argc, argv))) {
			opt.duration = parse_seconds("--duration", v);
		} else if ((v = value_of(a, "--corpus-mb", &i, argc, argv))) {
			opt.corpus_mb = parse_long("--corpus-mb", v, 1, 4096);
		} else if ((v = value_of(a, "--load", &i, argc, argv))) {
			static const char *const c[] = { "none", "cpu", "both",
							 NULL };

			opt.load = (enum load_mode)choice("--load", v, c);
		} else if ((v = value_of(a, "--threads", &i, argc, argv))) {
			opt.threads = (int)parse_long("--threads", v, 1, 1024);
		} else if ((v = value_of(a, "--wakers", &i, argc, argv))) {
			opt.wakers = (int)parse_long("--wakers", v, 1, 1024);
			wakers_arg = v;
		} else if ((v = value_of(a, "--waiters", &i, argc, argv))) {
			opt.waiters = (int)parse_long("--waiters", v, 1, 1024);
			wakers_arg = v;
		} else if ((v = value_of(a, "--format", &i, argc, argv))) {
			static const char *const c[] = { "table", "csv",
							 "json", NULL };

			opt.format = (enum format)choice("--format", v, c);
		} else if ((v = value_of(a, "--output", &i, argc, argv))) {
			if (!*v)
				bad("--output: empty file name");
			opt.output = v;
		} else if ((v = value_of(a, "--plot", &i, argc, argv))) {
			size_t n = strlen(v);

			if (n < 5 || strcmp(v + n - 4, ".png") != 0)
				bad("--plot: '%s' is not a .png file name", v);
			opt.plot = v;
		} else if (a[0] == '-') {
			bad("unknown option '%s'", a);
		} else if (strcmp(a, "all") == 0) {
			opt.scenarios = (1u << nscenarios) - 1;
		} else if ((s = scenario_index(a)) >= 0) {
			opt.scenarios |= 1u << s;
		} else {
			bad("unknown scenario '%s'", a);
		}
	}
	if (opt.output && opt.plot && same_file(opt.output, opt.plot))
		bad("--output and --plot name one file, '%s': the plot would "
		    "overwrite the results; give two names", opt.plot);
	if (opt.iterations && opt.duration > 0)
		bad("--iterations and --duration: give one, not both");
	if (!opt.scenarios)
		for (size_t k = 0; k < nscenarios; k++)
			if (!scenarios[k].named_only)
				opt.scenarios |= 1u << k;
	/*
	 * Only latency runs under the load: a busy thread beside pingpong or
	 * prodcons on one CPU measures the scheduler's time slice, not the
	 * mechanism.  Refuse a load that would change nothing.
	 */
	if (opt.load != LOAD_NONE &&
	    !(opt.scenarios & (1u << scenario_index("latency"))))
		bad("--load %s: only the latency scenario runs under load, and "
		    "it is not selected", load_mode_name(opt.load));
	/* Likewise a series that no selected scenario would run. */
	if (wakers_arg &&
	    !(opt.scenarios & (1u << scenario_index("contention"))))
		bad("--wakers/--waiters %s: only the contention scenario has "
		    "wakers and waiters, and it is not selected", wakers_arg);
	if (!opt.reps)
		opt.reps = opt.quick ? 3 : 5;
}

/*
 * The plot is written after the run: make sure now that it can be, as for
 * --output, instead of after minutes of measuring.
 */
static void check_plot_path(const char *png)
{
	char dir[4096];
	const char *slash = strrchr(png, '/');
	size_t n = slash ? (size_t)(slash - png) : 1;

	if (n >= sizeof(dir))
		die("--plot: '%s': name too long", png);
	memcpy(dir, slash ? png : ".", n);
	dir[slash && n == 0 ? 1 : n] = '\0';
	if (slash && n == 0)
		dir[0] = '/';
	if (access(png, F_OK) == 0 ? access(png, W_OK) != 0 :
	    access(dir, W_OK | X_OK) != 0)
		die("--plot: cannot write '%s': %s", png, strerror(errno));
}

/*
 * Where scenario i runs: --cpus as given, or by default pingpong and
 * latency (handoffs, where placement decides everything) under both same
 * and split, the others under same; split only where there are two CPUs.
 */
static unsigned scenario_placements(size_t i)
{
	const char *name = scenarios[i].name;

	if (opt.cpus_set)
		return opt.cpus_set;
	if ((!strcmp(name, "pingpong") || !strcmp(name, "latency")) &&
	    opt.cpu_b >= 0)
		return 1u << PLACE_SAME | 1u << PLACE_SPLIT;
	return 1u << PLACE_SAME;
}

/* The placements this run uses, for the header: "same", "same,split". */
const char *placements_label(void)
{
	static char buf[32];
	unsigned all = 0;

	for (size_t i = 0; i < nscenarios; i++)
		if (opt.scenarios & (1u << i))
			all |= scenario_placements(i);
	buf[0] = '\0';
	for (int p = PLACE_SAME; p <= PLACE_FREE; p++)
		if (all & (1u << p)) {
			if (buf[0])
				strcat(buf, ",");
			strcat(buf, placement_name((enum placement)p));
		}
	return buf;
}

/* "swait-bench ARGS...", as the plot's subtitle says how it was made. */
static void keep_command(int argc, char **argv)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "swait-bench");
	for (int i = 1; i < argc; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " %s",
			 argv[i]);
	opt.command = buf;
}

int main(int argc, char **argv)
{
	FILE *out = stdout;

	parse(argc, argv);
	keep_command(argc, argv);
	pick_cpus();
	if (opt.count_futex && tracefs_private_mount())
		fprintf(stderr, "swait-bench: --count-futex: mounted tracefs "
			"in a private mount namespace\n");
	if (opt.plot && !plot_available() && !getenv("SWAIT_BENCH_PLOT_KEEP"))
		die("--plot needs gnuplot, which is not in PATH (Debian: "
		    "apt-get install gnuplot-nox)");
	if (opt.output) {
		out = fopen(opt.output, "w");
		if (!out)
			die("--output: cannot open '%s': %s", opt.output,
			    strerror(errno));
	}
	if (opt.plot)
		check_plot_path(opt.plot);
	if (opt.rt)
		check_rt();
	opt.progress = isatty(STDERR_FILENO);
	header_begin();
	watchdog_start();
	for (size_t i = 0; i < nscenarios; i++) {
		if (!(opt.scenarios & (1u << i)))
			continue;
		for (int p = PLACE_SAME; p <= PLACE_FREE; p++) {
			if (!(scenario_placements(i) & (1u << p)))
				continue;
			opt.cpus = (enum placement)p;
			scenarios[i].run();
		}
	}
	watchdog_stop();	/* no more waits: the rest cannot hang */
	header_end();
	if (opt.progress)
		fputs("\r\033[K", stderr);
	{
		struct row *rows;

		if (results_rows(&rows) == 0 && opt.mech_list)
			bad("--mech %s: none of these mechanisms is measured "
			    "by the selected scenarios", opt.mech_list);
	}
	results_print(out, opt.format);
	if (out != stdout && fclose(out) != 0)
		die("--output: cannot write '%s': %s", opt.output,
		    strerror(errno));
	fflush(stdout);
	if (opt.plot && plot_write(opt.plot) != 0)
		return 1;
	return 0;
}
