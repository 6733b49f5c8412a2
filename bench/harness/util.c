// SPDX-License-Identifier: MIT
/*
 * util.c - clocks, placement, threads, per-thread counters, run header.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double ts_to_ns(const struct timespec *ts)
{
	return (double)ts->tv_sec * 1e9 + (double)ts->tv_nsec;
}

struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};
	return ts;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fputs("swait-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/*
 * What is running now, for the progress line and the watchdog; and the
 * work done so far, which is what the watchdog judges.
 */
static pthread_mutex_t progress_mu = PTHREAD_MUTEX_INITIALIZER;
static char progress_what[128] = "start-up";
static uint64_t work_count;	/* operations completed, every thread */
static uint64_t work_allow;	/* ns: the running trial's allowance */
static int watchdog_armed;

void work_done(unsigned long n)
{
	__atomic_fetch_add(&work_count, n, __ATOMIC_RELAXED);
}

void watchdog_allow(double seconds)
{
	__atomic_store_n(&work_allow, (uint64_t)(seconds * 1e9),
			 __ATOMIC_RELAXED);
}

void progress(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&progress_mu);
	va_start(ap, fmt);
	vsnprintf(progress_what, sizeof(progress_what), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&progress_mu);
	/* A new trial: its own allowance, 0 unless it asks (program). */
	watchdog_allow(0);
	work_done(1);
	if (!opt.progress)
		return;
	fprintf(stderr, "\r\033[K%s", progress_what);
	fflush(stderr);
}

/*
 * A mechanism that loses a wakeup would hang the run.  The scenarios count
 * the operations their threads complete (work_done: samples, rounds, items;
 * the fast loops every 256th); a healthy trial completes one every few
 * microseconds to milliseconds, however long it runs.  When none has
 * completed for 30 s (SWAIT_BENCH_WATCHDOG seconds), plus the running
 * trial's allowance for one operation (a whole program run, say), say
 * which trial stalled and exit 3 instead of hanging.
 */
static void *watchdog(void *arg)
{
	uint64_t limit = 30 * 1000000000ull;
	const char *env = getenv("SWAIT_BENCH_WATCHDOG");	/* seconds */
	uint64_t seen = (uint64_t)-1, at = now_ns();

	(void)arg;
	if (env && atoi(env) > 0)
		limit = (uint64_t)atoi(env) * 1000000000ull;
	for (;;) {
		struct timespec tick = { 0, 100000000 };	/* 0.1 s */
		uint64_t w = __atomic_load_n(&work_count, __ATOMIC_RELAXED);
		uint64_t t = now_ns(), lim;

		if (w != seen) {
			seen = w;
			at = t;
		}
		lim = limit + __atomic_load_n(&work_allow, __ATOMIC_RELAXED);
		if (t - at > lim &&
		    __atomic_load_n(&watchdog_armed, __ATOMIC_RELAXED)) {
			pthread_mutex_lock(&progress_mu);
			fprintf(stderr, "\nswait-bench: no progress for %.0f s "
				"in '%s' (a lost wakeup?)\n",
				(double)lim / 1e9, progress_what);
			_exit(3);
		}
		nanosleep(&tick, NULL);
	}
	return NULL;
}

void watchdog_start(void)
{
	pthread_t t;

	__atomic_store_n(&watchdog_armed, 1, __ATOMIC_RELAXED);
	if (pthread_create(&t, NULL, watchdog, NULL) == 0)
		pthread_detach(t);
}

void watchdog_stop(void)
{
	__atomic_store_n(&watchdog_armed, 0, __ATOMIC_RELAXED);
}

/* Touch every page now, so that no sample pays a page fault. */
void *alloc_samples(size_t n)
{
	double *p = malloc((n ? n : 1) * sizeof(*p));

	if (!p)
		die("out of memory for %zu samples", n);
	memset(p, 0, (n ? n : 1) * sizeof(*p));
	return p;
}

/* --------------------------------------------------------------- threads */

const char *placement_name(enum placement p)
{
	switch (p) {
	case PLACE_SAME:
		return "same";
	case PLACE_SPLIT:
		return "split";
	default:
		return "free";
	}
}

int place_cpu(bool waker_side)
{
	switch (opt.cpus) {
	case PLACE_SAME:
		return opt.cpu_a;
	case PLACE_SPLIT:
		return waker_side ? opt.cpu_a : opt.cpu_b;
	default:
		return -1;
	}
}

double cpu_clock_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/*
 * The process's CPU time at the first spawn() of a trial: trial_add()
 * charges what the process used since then to the trial when the scenario
 * did not measure its threads itself.  A trial_add() makes the next
 * spawn() start a new mark.
 */
double trial_cpu_mark = NAN;
bool trial_cpu_stale = true;

pthread_t spawn(void *(*fn)(void *), void *arg, int cpu)
{
	pthread_attr_t a;
	pthread_t t;
	int err;

	if (trial_cpu_stale) {
		trial_cpu_mark = cpu_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		trial_cpu_stale = false;
	}

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
	}
	if (opt.rt) {
		struct sched_param sp = { .sched_priority = 80 };

		pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&a, SCHED_FIFO);
		pthread_attr_setschedparam(&a, &sp);
	}
	err = pthread_create(&t, &a, fn, arg);
	pthread_attr_destroy(&a);
	if (err)
		die("cannot start a thread: %s", strerror(err));
	return t;
}

void rt_window_keeper(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 81 : 0 };

	if (opt.rt)
		pthread_setschedparam(pthread_self(),
				      on ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* ------------------------------------------------------- per-thread counts */

static long thread_csw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * For --count-futex as root when tracefs is not mounted: mount it in a
 * mount namespace of our own, so that nothing outside this process sees
 * it and it goes away with us.  Must run before the first thread starts
 * (unshare(CLONE_NEWNS) implies CLONE_FS).  Returns whether it did.
 */
bool tracefs_private_mount(void)
{
	if (access("/sys/kernel/tracing/events", F_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", F_OK) == 0)
		return false;
	if (unshare(CLONE_NEWNS) != 0)
		return false;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		return false;
	return true;
}

static long tp_id = -2;		/* -2: not looked up, -1: unavailable */
static long tpv_id = -1;	/* sys_enter_futex_waitv, -1: none */
static const char *tp_why;

/* The id of a syscalls tracepoint, -1 if tracefs has none by that name. */
static long tp_lookup(const char *name)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing/events/syscalls",
		"/sys/kernel/debug/tracing/events/syscalls",
	};
	char path[160];
	long id = -1;

	for (size_t i = 0; i < 2 && id < 0; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/id", dirs[i], name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

bool futex_tracepoint_available(const char **why)
{
	if (tp_id == -2) {
		tp_why = "tracefs is not mounted "
			 "(mount -t tracefs nodev /sys/kernel/tracing)";
		tp_id = tp_lookup("sys_enter_futex");
		/* libswait's sleepers on a broadcast head (Linux 5.16). */
		tpv_id = tp_id >= 0 ? tp_lookup("sys_enter_futex_waitv") : -1;
		if (tp_id >= 0) {
			struct tcount t;

			/* Probe: root, or perf_event_paranoid, may refuse. */
			tcount_tracepoint(&t, true);
			if (t.tp_fd[0] < 0) {
				tp_why = "perf_event_open refused the "
					 "syscalls:sys_enter_futex tracepoint";
				tp_id = -1;
			}
			tcount_close(&t);
		}
	}
	if (why)
		*why = tp_why;
	return tp_id >= 0;
}

static int tp_open(long id, const char *filter)
{
	struct perf_event_attr a;
	int fd;

	if (id < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = (uint64_t)id;
	a.sample_period = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0 && filter &&
	    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * FUTEX_WAKE and FUTEX_WAKE_BITSET; the waits are FUTEX_WAIT and
 * FUTEX_WAIT_BITSET, each with or without the private and realtime flags.
 */
#define TP_WAKE "op == 1 || op == 129 || op == 10 || op == 138"
#define TP_WAIT "op == 0 || op == 128 || op == 9 || op == 137 || " \
		"op == 265 || op == 393"

void tcount_close(struct tcount *t)
{
	for (int i = 0; i < 4; i++) {
		if (t->tp_fd[i] >= 0)
			close(t->tp_fd[i]);
		t->tp_fd[i] = -1;
	}
}

void tcount_tracepoint(struct tcount *t, bool on)
{
	for (int i = 0; i < 4; i++)
		t->tp_fd[i] = -1;
	if (!on || tp_id < 0)
		return;
	t->tp_fd[0] = tp_open(tp_id, TP_WAKE);
	t->tp_fd[1] = tp_open(tp_id, TP_WAIT);
	t->tp_fd[2] = tp_open(tp_id, NULL);
	/* Every futex_waitv is a wait; counted with the FUTEX_WAITs. */
	t->tp_fd[3] = tp_open(tpv_id, NULL);
}


static long tp_read(int fd)
{
	uint64_t v;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return -1;
	return (long)v;
}

/* The waits so far: FUTEX_WAIT* and futex_waitv, -1 if not counted. */
static long tp_waits(const struct tcount *t)
{
	long s = tp_read(t->tp_fd[1]), v = tp_read(t->tp_fd[3]);

	return s < 0 ? -1 : s + (v < 0 ? 0 : v);
}

void tcount_check_cpu(struct tcount *t)
{
	if (sched_getcpu() != t->cpu_begin)
		t->moved = true;
}

void tcount_begin(struct tcount *t)
{
	t->cpu_begin = sched_getcpu();
	t->moved = false;
	t->fwake = tl_futex_wake;
	t->fwait = tl_futex_wait;
	t->tp_wake = tp_read(t->tp_fd[0]);
	t->tp_wait = tp_waits(t);
	t->tp_all = tp_read(t->tp_fd[2]);
	t->csw = thread_csw();
	t->cpu_ns = cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void tcount_end(struct tcount *t)
{
	long w, s, a;

	t->csw = thread_csw() - t->csw;
	t->cpu_ns = cpu_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t->cpu_ns;
	w = tp_read(t->tp_fd[0]);
	s = tp_waits(t);
	a = tp_read(t->tp_fd[2]);
	t->tp_wake = w < 0 ? -1 : w - t->tp_wake;
	t->tp_wait = s < 0 ? -1 : s - t->tp_wait;
	t->tp_all = a < 0 ? -1 : a - t->tp_all;
	t->fwake = tl_futex_wake - t->fwake;
	t->fwait = tl_futex_wait - t->fwait;
	t->cpu_end = sched_getcpu();
}

void window_counts_add(struct window_counts *c, const struct where *w)
{
	if (!w->in_window)
		return;
	c->csw += (double)w->tc.csw;
	c->fwake += (double)w->tc.fwake;
	c->fwait += (double)w->tc.fwait;
	c->tp_wake += (double)w->tc.tp_wake;
	c->tp_wait += (double)w->tc.tp_wait;
	/*
	 * The thread's own clock, read by the thread at its window's edges:
	 * exact, where the process's clock read by another thread counts
	 * threads running elsewhere only as of their last tick (4 ms at
	 * HZ=250, a fifth of a 20 ms window).
	 */
	c->cpu += w->tc.cpu_ns;
}

void window_counts_per_op(struct window_counts *c, double ops)
{
	c->csw = ops > 0 ? c->csw / ops : NAN;
	c->fwake = ops > 0 ? c->fwake / ops : NAN;
	c->fwait = ops > 0 ? c->fwait / ops : NAN;
	c->tp_wake = ops > 0 ? c->tp_wake / ops : NAN;
	c->tp_wait = ops > 0 ? c->tp_wait / ops : NAN;
	c->cpu = ops > 0 ? c->cpu / ops : NAN;
}

double window_run(int *measuring, uint64_t window)
{
	struct timespec warm = ns_to_ts(window / 10);
	struct timespec win = ns_to_ts(window);
	uint64_t t0, t1;

	nanosleep(&warm, NULL);
	/*
	 * The clock is read before the window opens and after it closes, so
	 * the length returned is never shorter than the window the threads
	 * saw: read after the opening store, a preemption between the two
	 * (a loaded machine) left the threads counting items for a window
	 * the clock did not see, and the rate came out too high.
	 */
	t0 = now_ns();
	__atomic_store_n(measuring, 1, __ATOMIC_RELAXED);
	nanosleep(&win, NULL);
	__atomic_store_n(measuring, 0, __ATOMIC_RELAXED);
	t1 = now_ns();
	return (double)(t1 - t0) / 1e9;
}

void where_start(struct where *w, bool tracepoint)
{
	memset(w, 0, sizeof(*w));
	tcount_tracepoint(&w->tc, tracepoint);
	/* For a thread that never sees the window: its CPUs all along. */
	tcount_begin(&w->tc);
}

void where_note(struct where *w, int measuring)
{
	if ((++w->done & 255) == 0)
		work_done(256);
	if (w->ended)
		return;
	if (measuring && !w->in_window) {
		w->in_window = true;
		tcount_begin(&w->tc);
	} else if (measuring) {
		if (opt.cpus == PLACE_FREE && (++w->ops & 255) == 0)
			tcount_check_cpu(&w->tc);
	} else if (w->in_window) {
		tcount_end(&w->tc);
		w->ended = true;
	}
}

void where_stop(struct where *w)
{
	if (!w->ended) {
		tcount_end(&w->tc);
		w->ended = true;
	}
	tcount_close(&w->tc);
}

const char *regime_of_threads(const struct tcount *const *t, size_t n)
{
	bool split = false;

	if (opt.cpus != PLACE_FREE)
		return placement_name(opt.cpus);
	for (size_t i = 0; i < n; i++)
		if (t[i]->moved || t[i]->cpu_begin != t[i]->cpu_end)
			return "migrated";
	for (size_t i = 1; i < n; i++)
		if (t[i]->cpu_begin != t[0]->cpu_begin)
			split = true;
	return split ? "split" : "same";
}

const char *regime_of(const struct tcount *a, const struct tcount *b)
{
	const struct tcount *t[2] = { a, b };

	return regime_of_threads(t, 2);
}

/* ---------------------------------------------------------------- header */

struct sysinfo_hdr hdr;

static void read_loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double a = 0, b = 0, c = 0;

	if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	else
		snprintf(buf, len, "unknown");
	if (f)
		fclose(f);
}

void header_begin(void)
{
	struct utsname u;
	FILE *f;
	char line[256];
	time_t now = time(NULL);

	if (uname(&u) == 0)
		snprintf(hdr.kernel, sizeof(hdr.kernel), "%s %s %s", u.sysname,
			 u.release, u.machine);
	snprintf(hdr.cpu_model, sizeof(hdr.cpu_model), "unknown");
	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && p) {
			p += 1 + strspn(p + 1, " \t");
			p[strcspn(p, "\n")] = 0;
			snprintf(hdr.cpu_model, sizeof(hdr.cpu_model), "%s", p);
			break;
		}
	}
	if (f)
		fclose(f);
	hdr.vcpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(hdr.glibc, sizeof(hdr.glibc), "%s", gnu_get_libc_version());
	snprintf(hdr.policy, sizeof(hdr.policy), "%s",
		 opt.rt ? "SCHED_FIFO 80, mlockall" : "SCHED_OTHER");
	read_loadavg(hdr.load_before, sizeof(hdr.load_before));
	strftime(hdr.started, sizeof(hdr.started), "%Y-%m-%dT%H:%M:%SZ",
		 gmtime(&now));
}

void header_end(void)
{
	read_loadavg(hdr.load_after, sizeof(hdr.load_after));
}
