// SPDX-License-Identifier: MIT
/*
 * program.c - the "program" scenario: a real program, unmodified, with and
 * without libswait-preload.so.  pigz -p 8 and zstd -T8 (each when
 * installed) compress a generated corpus to a pipe; each repetition runs
 * the plain binary and the preloaded one back to back (order alternating),
 * and records the wall time, the CPU time (user + system of the child, from
 * wait4) and its context switches.  The ratios are swait-run over glibc,
 * per repetition, as everywhere in swait-bench; both runs must produce the
 * same bytes, or the scenario dies.
 *
 * Not part of the default tour (it takes tens of seconds and needs the
 * programs): name it, "swait-bench program".  --corpus-mb sets the corpus
 * size (default 100, --quick 20); the corpus is the same bytes every run
 * (a fixed-seed generator), so runs compare across machines.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef SWAIT_BENCH_PRELOAD_BUILD
#define SWAIT_BENCH_PRELOAD_BUILD ""
#endif
#ifndef SWAIT_BENCH_PRELOAD_INSTALLED
#define SWAIT_BENCH_PRELOAD_INSTALLED ""
#endif

/* The preload: $SWAIT_PRELOAD_LIB, else the build tree's, else installed. */
static const char *preload_path(void)
{
	const char *e = getenv("SWAIT_PRELOAD_LIB");

	if (e && *e)
		return access(e, R_OK) == 0 ? e : NULL;
	if (*SWAIT_BENCH_PRELOAD_BUILD &&
	    access(SWAIT_BENCH_PRELOAD_BUILD, R_OK) == 0)
		return SWAIT_BENCH_PRELOAD_BUILD;
	if (*SWAIT_BENCH_PRELOAD_INSTALLED &&
	    access(SWAIT_BENCH_PRELOAD_INSTALLED, R_OK) == 0)
		return SWAIT_BENCH_PRELOAD_INSTALLED;
	return NULL;
}

static bool on_path(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", d, prog);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}

/* A corpus of mb MiB: text, runs and noise from a fixed-seed generator. */
static void make_corpus(const char *file, long mb)
{
	FILE *f = fopen(file, "w");
	uint64_t s = 0x5eed5eedULL;
	long total = mb << 20, n = 0;

	if (!f)
		die("program: cannot create %s: %s", file, strerror(errno));
	while (n < total) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		switch ((s >> 33) % 4) {
		case 0:
			n += fprintf(f, "line %ld of the corpus, value %llu\n",
				     n, (unsigned long long)(s >> 20));
			break;
		case 1:
			for (int i = 0; i < 64; i++, n++)
				fputc('a' + (int)((s >> 40) % 3), f);
			break;
		default:
			for (int i = 0; i < 8; i++, n += 8) {
				s = s * 6364136223846793005ULL + 1ULL;
				fwrite(&s, 8, 1, f);
			}
		}
	}
	if (fclose(f) != 0)
		die("program: writing %s failed", file);
}

struct run_out {
	double wall_ns, cpu_ns, csw;
};

/* Run argv with stdin from in, stdout to out; the child's costs. */
static void run_child(char *const argv[], const char *in, const char *out,
		      const char *preload, struct run_out *r)
{
	struct rusage ru;
	uint64_t t0 = now_ns();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("program: fork: %s", strerror(errno));
	if (pid == 0) {
		int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY |
						       O_CREAT | O_TRUNC,
						       0600);

		if (fi < 0 || fo < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		else
			unsetenv("LD_PRELOAD");
		unsetenv("SWAIT_PRELOAD_STATS");
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		die("program: wait4: %s", strerror(errno));
	r->wall_ns = (double)(now_ns() - t0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("program: %s exited with status %d", argv[0],
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	r->cpu_ns = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
	r->csw = (double)(ru.ru_nvcsw + ru.ru_nivcsw);
}

static bool same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	bool same = fa && fb;
	int ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		if (ca != cb)
			same = false;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static void add(const char *metric, const char *unit, const char *series,
		const char *mech, int rep, double v, double csw)
{
	struct trial t;
	double *s = alloc_samples(1);

	s[0] = v;
	memset(&t, 0, sizeof(t));
	t.scenario = "program";
	t.metric = metric;
	t.unit = unit;
	snprintf(t.series, sizeof(t.series), "%s", series);
	t.mech = mech;
	t.regime = "free";
	t.rep = rep;
	t.v = s;
	t.n = 1;
	t.csw = csw;
	t.fwake = t.fwait = NAN;
	trial_add(&t);
}

void run_program(void)
{
	static const struct {
		const char *name, *series;
		const char *args[4];
	} progs[] = {
		{ "pigz", "pigz -p 8", { "-p", "8", "-c", NULL } },
		{ "zstd", "zstd -T8", { "-T8", "-q", "-c", NULL } },
	};
	const char *preload = preload_path();
	char dir[] = "/tmp/swait-bench-program.XXXXXX";
	char corpus[64], plain[64], swait[64];
	long mb = opt.corpus_mb ? opt.corpus_mb : opt.quick ? 20 : 100;
	bool any = false;

	if (!preload) {
		fprintf(stderr, "program: libswait-preload.so not found (set "
			"SWAIT_PRELOAD_LIB); scenario skipped\n");
		return;
	}
	if (!mkdtemp(dir))
		die("program: mkdtemp: %s", strerror(errno));
	snprintf(corpus, sizeof(corpus), "%s/corpus", dir);
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	snprintf(swait, sizeof(swait), "%s/swait", dir);
	progress("program: generating a %ld MiB corpus", mb);
	/* One operation here is a corpus, or a pair of whole runs. */
	watchdog_allow((double)mb);
	make_corpus(corpus, mb);
	scenario_refs("program", "glibc", NULL);
	for (size_t p = 0; p < sizeof(progs) / sizeof(progs[0]); p++) {
		char exe[512];
		char *argv[5];

		if (!on_path(progs[p].name, exe, sizeof(exe))) {
			fprintf(stderr, "program: %s not installed; skipped\n",
				progs[p].name);
			continue;
		}
		any = true;
		argv[0] = exe;
		for (int i = 0; i < 4; i++)
			argv[i + 1] = (char *)progs[p].args[i];
		for (int rep = 0; rep < opt.reps; rep++) {
			struct run_out a, b;

			progress("program: rep %d/%d %s", rep + 1, opt.reps,
				 progs[p].series);
			watchdog_allow((double)mb);
			/* Alternate which goes first: caches, frequency. */
			if (rep % 2 == 0) {
				run_child(argv, corpus, plain, NULL, &a);
				run_child(argv, corpus, swait, preload, &b);
			} else {
				run_child(argv, corpus, swait, preload, &b);
				run_child(argv, corpus, plain, NULL, &a);
			}
			if (!same_file(plain, swait))
				die("program: %s: output differs under the "
				    "preload", progs[p].series);
			add("wall", "ns", progs[p].series, "glibc", rep,
			    a.wall_ns, a.csw);
			add("wall", "ns", progs[p].series, "swait-run", rep,
			    b.wall_ns, b.csw);
			add("cpu", "ns", progs[p].series, "glibc", rep,
			    a.cpu_ns, a.csw);
			add("cpu", "ns", progs[p].series, "swait-run", rep,
			    b.cpu_ns, b.csw);
		}
	}
	unlink(corpus);
	unlink(plain);
	unlink(swait);
	rmdir(dir);
	if (!any)
		fprintf(stderr, "program: neither pigz nor zstd installed "
			"(apt-get install pigz zstd)\n");
}
