// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#if TU_VALGRIND
#include <valgrind/helgrind.h>
#include <valgrind/drd.h>
#endif

void tu_release(const volatile void *addr)
{
#if TU_VALGRIND
	ANNOTATE_HAPPENS_BEFORE(addr);
#else
	(void)addr;
#endif
}

void tu_acquire(const volatile void *addr)
{
#if TU_VALGRIND
	ANNOTATE_HAPPENS_AFTER(addr);
#else
	(void)addr;
#endif
}

void tu_sync_var(const volatile void *addr, unsigned long size)
{
#if TU_VALGRIND
	VALGRIND_HG_DISABLE_CHECKING(addr, size);
	VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION,
					addr, size, 0, 0, 0);
#else
	(void)addr;
	(void)size;
#endif
}

static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond;
static int wd_started;
static long long wd_deadline;	/* 0: disarmed */
static const char *wd_what;
static void (*wd_describe)(FILE *);

long long tu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double tu_slowdown(void)
{
	const char *s = getenv("SWAIT_TEST_SLOWDOWN");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

long tu_scale(long base)
{
	const char *s = getenv("SWAIT_STRESS_SCALE");
	double v = s ? atof(s) : 1.0;
	long n;

	if (v <= 0)
		v = 1.0;
	n = (long)((double)base * v);
	return n > 0 ? n : 1;
}

static void *watchdog(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd_lock);
	for (;;) {
		if (wd_deadline == 0) {
			pthread_cond_wait(&wd_cond, &wd_lock);
			continue;
		}
		long long d = wd_deadline;
		struct timespec ts = { d / 1000000000LL, d % 1000000000LL };

		if (pthread_cond_timedwait(&wd_cond, &wd_lock, &ts) != 0 &&
		    wd_deadline != 0 && tu_now_ns() >= wd_deadline)
			break;
	}
	fprintf(stderr, "WATCHDOG: %s did not finish in time "
		"(lost wakeup or deadlock?)\n", wd_what ? wd_what : "test");
	if (wd_describe)
		wd_describe(stderr);
	fflush(stderr);
	_exit(1);
	return NULL;
}

/*
 * SWAIT_WATCHDOG_SCALE in (0, 1] shortens the watchdogs alone: the mutant
 * runs (tests/mutants/run) expect a hang and should not wait a minute to
 * see it; a test that passes finishes long before any watchdog.
 */
static double watchdog_scale(void)
{
	const char *s = getenv("SWAIT_WATCHDOG_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 && v <= 1 ? v : 1.0;
}

void tu_watchdog_arm(double seconds, const char *what,
		     void (*describe)(FILE *out))
{
	pthread_mutex_lock(&wd_lock);
	if (!wd_started) {
		pthread_condattr_t ca;
		pthread_t t;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&wd_cond, &ca);
		pthread_condattr_destroy(&ca);
		if (pthread_create(&t, NULL, watchdog, NULL) != 0) {
			fprintf(stderr, "watchdog: pthread_create failed\n");
			_exit(1);
		}
		pthread_detach(t);
		wd_started = 1;
	}
	wd_deadline = tu_now_ns() +
		      (long long)(seconds * tu_slowdown() * watchdog_scale() *
				  1e9);
	wd_what = what;
	wd_describe = describe;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

void tu_watchdog_disarm(void)
{
	pthread_mutex_lock(&wd_lock);
	wd_deadline = 0;
	if (wd_started)
		pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
}

int tu_pin_self(int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	CPU_ZERO(&set);
	CPU_SET(cpu % n, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0
		? 0 : -1;
}

void tu_pause(unsigned long n)
{
	struct timespec nap = { 0, 50 * 1000 };

	if (n < 200)
		sched_yield();
	else
		nanosleep(&nap, NULL);
}

void tu_spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

pid_t tu_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool tu_emulator_shares_tls(void)
{
	const char *w = getenv("MESON_EXE_WRAPPER");

	return w && strstr(w, "qemu-i386");
}

static ssize_t read_task_file(pid_t tid, const char *name, char *buf,
			      size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

void tu_task_describe(FILE *out, pid_t tid)
{
	static const char *const keys[] = {
		"State:", "SigPnd:", "ShdPnd:", "SigBlk:",
	};
	char buf[4096], *line, *save = NULL;

	if (read_task_file(tid, "status", buf, sizeof(buf)) <= 0) {
		fprintf(out, "    task %d: gone\n", (int)tid);
		return;
	}
	fprintf(out, "    task %d:", (int)tid);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			size_t n = strlen(keys[k]);

			if (!strncmp(line, keys[k], n))
				fprintf(out, " %s %s", keys[k],
					line + n + strspn(line + n, " \t"));
		}
	/* The system call it is in: its number first, or "running". */
	if (read_task_file(tid, "syscall", buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, " \n")] = '\0';
		fprintf(out, " syscall: %s", buf);
	}
	fprintf(out, "\n");
}

char tu_task_state(pid_t tid)
{
	char buf[512];
	char *p;

	if (read_task_file(tid, "stat", buf, sizeof(buf)) <= 0)
		return '?';
	/* The command name may contain anything: the state follows its ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == '\0')
		return '?';
	return p[2];
}

long tu_task_syscall(pid_t tid)
{
	char buf[256];

	if (read_task_file(tid, "syscall", buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

unsigned long tu_task_syscall_arg(pid_t tid, int k)
{
	char buf[256], *p = buf, *end;
	unsigned long v = 0;

	if (k < 1 || k > 6 || read_task_file(tid, "syscall", buf,
					      sizeof(buf)) <= 0)
		return 0;
	strtol(p, &end, 10);		/* the number */
	for (int i = 0; i < k; i++) {
		p = end;
		v = strtoul(p, &end, 16);
		if (end == p)
			return 0;
	}
	return v;
}

bool tu_is_futex_call(long nr)
{
	if (getenv("MESON_EXE_WRAPPER"))
		return true;	/* the host's numbering */
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		return true;
#endif
#ifdef SYS_futex
	if (nr == SYS_futex)
		return true;
#endif
#ifdef SYS_futex_waitv
	if (nr == SYS_futex_waitv)	/* lib/swait.c W1-W3 */
		return true;
#endif
	return false;
}

struct timespec tu_deadline(clockid_t clock, long long nsec)
{
	struct timespec ts;
	long long t;

	clock_gettime(clock, &ts);
	t = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + nsec;
	ts.tv_sec = (time_t)(t / 1000000000LL);
	ts.tv_nsec = (long)(t % 1000000000LL);
	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000L;
	}
	return ts;
}

bool tu_reached(clockid_t clock, const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(clock, &now);
	return now.tv_sec > ts->tv_sec ||
	       (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}

int tu_signal_handler(int sig, void (*fn)(int), int flags,
		      struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	return sigaction(sig, &sa, old);
}

long long tu_signal_cost_ns(int sig, void (*fn)(int))
{
	enum { ROUNDS = 5, PER_ROUND = 200 };
	long long t[ROUNDS], t0, tmp;
	struct sigaction old;
	int failed = 0;

	if (tu_signal_handler(sig, fn, 0, &old) != 0)
		return -1;
	for (int r = 0; r < ROUNDS; r++) {
		t0 = tu_now_ns();
		for (int i = 0; i < PER_ROUND; i++)
			failed |= raise(sig);
		t[r] = (tu_now_ns() - t0) / PER_ROUND;
	}
	(void)sigaction(sig, &old, NULL);
	/* A raise that failed ran no handler: its time says nothing. */
	if (failed)
		return -1;
	for (int i = 1; i < ROUNDS; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			tmp = t[j];
			t[j] = t[j - 1];
			t[j - 1] = tmp;
		}
	return t[ROUNDS / 2];
}

int tu_pi_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int err;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	err = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return err;
}

static void *spy_main(void *arg)
{
	struct tu_spy *spy = arg;

	TU_STORE(&spy->tid, tu_gettid());
	pthread_mutex_lock(spy->mutex);
	TU_ADD(&spy->got, 1);
	pthread_mutex_unlock(spy->mutex);
	return NULL;
}

bool tu_spy_start(struct tu_spy *spy, pthread_mutex_t *m)
{
	spy->mutex = m;
	spy->tid = 0;
	spy->got = 0;
	TU_SYNC_VAR(spy->tid);
	TU_SYNC_VAR(spy->got);
	if (pthread_create(&spy->thread, NULL, spy_main, spy) != 0)
		return false;
	return tu_poll(TU_LOAD(&spy->tid) != 0 &&
		       tu_task_state(TU_LOAD(&spy->tid)) == 'S');
}

int tu_spy_got(struct tu_spy *spy)
{
	return TU_LOAD(&spy->got);
}

int tu_spy_join(struct tu_spy *spy)
{
	pthread_join(spy->thread, NULL);
	return spy->got;
}
