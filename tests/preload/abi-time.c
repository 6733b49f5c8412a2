// SPDX-License-Identifier: MIT
/*
 * abi-time.c - the timed waits of a program, run under libswait-preload.so
 * by abi-time.sh, built with its ABI's default time_t (test abi-time) and,
 * where that is 32 bits, with _TIME_BITS=64 too (abi-time64).
 *
 * On i386 and armhf the default time_t is 32 bits: abi-time binds
 * pthread_cond_timedwait@GLIBC_2.3.2 (armhf: @GLIBC_2.4) and
 * pthread_cond_clockwait@GLIBC_2.34, and passes them a struct timespec of
 * two 32-bit fields that the preload must widen for the face; abi-time64
 * binds __pthread_cond_timedwait64 and __pthread_cond_clockwait64
 * @GLIBC_2.34, as the rest of the project does.  On LP64 abi-time runs the
 * same checks on the only entries there are.
 *
 *   deadline  a wait times out at its deadline, not before it and not
 *             long after, for each entry and clock; a negative tv_sec is in
 *             the past (ETIMEDOUT at once: sign-extended, not read as
 *             2106), and the last second a 32-bit time_t can say is in the
 *             future (the wait sleeps until signalled).
 *   einval    tv_nsec outside [0, 1e9), and a clock the call does not
 *             take, fail with EINVAL before the mutex is released: a spy
 *             thread blocked on a priority-inheritance mutex would be
 *             handed it by any release (the kernel gives a PI futex to its
 *             top waiter), and it never gets it.
 *   fallback  a process-shared condvar is glibc's: its timed waits reach
 *             glibc's entry of the same width with the deadline unchanged,
 *             and time out at it.
 *   counted   the program prints "abi-time: N timed waits, S signals, F
 *             fallback" (the calls that must run on libswait, and the
 *             condvars handed to glibc); abi-time.sh checks that the
 *             preload's stats line has the same W, S and F.
 *
 * No libswait header or test helper: they need a 64-bit time_t.  A
 * watchdog (SIGALRM) turns a wait that never returns into a failure that
 * names its step.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(time_t) * CHAR_BIT == ABI_TIME_BITS,
	       "time_t must have the width meson built this program for");

#define MS 1000000LL
#define DELAY (200 * MS)	/* how far ahead a deadline is set */
#define LATE (2000 * MS)	/* how late a timeout may come (an emulator) */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_rt = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cv_mono;		/* pthread_condattr_setclock */
static int n_timed, n_signals, n_fallback;	/* for abi-time.sh */
static int n_glibc;			/* timed waits on glibc's condvar */
static bool on_glibc;			/* the fallback step runs */
static int failures;
static const char *volatile step = "start";	/* for the watchdog */

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "abi-time: %s: line %d: %s\n",	\
				step, __LINE__, #cond);			\
			failures++;					\
		}							\
	} while (0)

static void watchdog(int sig)
{
	static const char msg[] = "abi-time: watchdog: no return from: ";
	const char *s = step;

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, s, strlen(s));
	(void)!write(2, "\n", 1);
	_exit(1);
}

static const char *errname(int err)
{
	switch (err) {
	case 0:
		return "0";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EINVAL:
		return "EINVAL";
	default:
		return strerror(err);
	}
}

static long long now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct timespec timespec_of(long long ns)
{
	struct timespec t;

	t.tv_sec = (time_t)(ns / 1000000000LL);
	t.tv_nsec = (long)(ns % 1000000000LL);
	return t;
}

/* A timed wait: timedwait on c's own clock when clock is -1. */
static int timed(pthread_cond_t *c, pthread_mutex_t *mx, clockid_t clock,
		 const struct timespec *t)
{
	if (on_glibc)
		n_glibc++;
	else
		n_timed++;
	if (clock == (clockid_t)-1)
		return pthread_cond_timedwait(c, mx, t);
	return pthread_cond_clockwait(c, mx, clock, t);
}

/*
 * Nobody signals c: the wait must return ETIMEDOUT once clock (c's own for
 * timedwait) has passed the deadline, and soon after.
 */
static void times_out(const char *name, pthread_cond_t *c, clockid_t clock,
		      clockid_t measured_on)
{
	long long dl = now_ns(measured_on) + DELAY, late;
	struct timespec t = timespec_of(dl);
	int err;

	step = name;
	pthread_mutex_lock(&m);
	err = timed(c, &m, clock, &t);
	late = now_ns(measured_on) - dl;
	pthread_mutex_unlock(&m);
	CHECK(err == ETIMEDOUT);
	CHECK(late >= 0);
	CHECK(late < LATE);
	printf("abi-time: %s: %s, %.1f ms after the deadline\n", name,
	       errname(err), (double)late / MS);
}

/* A deadline already past: ETIMEDOUT without sleeping. */
static void past(const char *name, pthread_cond_t *c, clockid_t clock,
		 const struct timespec *t)
{
	long long t0 = now_ns(CLOCK_MONOTONIC), took;
	int err;

	step = name;
	pthread_mutex_lock(&m);
	err = timed(c, &m, clock, t);
	took = now_ns(CLOCK_MONOTONIC) - t0;
	pthread_mutex_unlock(&m);
	CHECK(err == ETIMEDOUT);
	CHECK(took < LATE);
	printf("abi-time: %s: %s after %.1f ms\n", name, errname(err),
	       (double)took / MS);
}

/* The far-future wait: woken by a signal, not by its deadline. */
static bool signalled;		/* under m */

static void *signaller(void *arg)
{
	pthread_mutex_lock(&m);
	signalled = true;
	n_signals++;
	pthread_cond_signal(arg);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void far(const char *name, pthread_cond_t *c, clockid_t clock)
{
	/* 2038-01-19 03:14:07.999999999 on CLOCK_REALTIME */
	struct timespec t = { .tv_sec = INT_MAX, .tv_nsec = 999999999 };
	pthread_t th;
	int err = 0;

	step = name;
	pthread_mutex_lock(&m);
	signalled = false;
	/* The signaller takes m only once the wait below has released it. */
	CHECK(pthread_create(&th, NULL, signaller, c) == 0);
	while (!signalled && err == 0)
		err = timed(c, &m, clock, &t);
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	CHECK(err == 0);
	CHECK(signalled);
	printf("abi-time: %s: %s, woken by the signal\n", name,
	       errname(err));
}

/*
 * The spy: blocked on a priority-inheritance mutex, it is handed the mutex
 * by any unlock, however short (FUTEX_UNLOCK_PI gives it to the top
 * waiter), and the unlocker's relock then waits for it.
 */
static pthread_mutex_t pm;
static pid_t spy_tid;
static int spy_got;

static void *spy(void *arg)
{
	(void)arg;
	__atomic_store_n(&spy_tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	pthread_mutex_lock(&pm);
	__atomic_add_fetch(&spy_got, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pm);
	return NULL;
}

/* The scheduler state of thread tid (S: asleep), or '?'. */
static char task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold anything */
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

static void einval(const char *name, pthread_cond_t *c, clockid_t clock,
		   long long sec, long nsec)
{
	struct timespec t = { .tv_sec = (time_t)sec, .tv_nsec = nsec };
	int err;

	step = name;
	err = timed(c, &pm, clock, &t);
	CHECK(err == EINVAL);
	printf("abi-time: %s: %s\n", name, errname(err));
}

static void einval_before_unlock(void)
{
	static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	pthread_mutexattr_t a;
	long long sec = now_ns(CLOCK_REALTIME) / 1000000000LL + 1;
	long long mono = now_ns(CLOCK_MONOTONIC) / 1000000000LL + 1;
	pthread_t th;
	int tries;

	step = "einval: setting up the spy";
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	CHECK(pthread_mutex_init(&pm, &a) == 0);
	pthread_mutexattr_destroy(&a);
	pthread_mutex_lock(&pm);
	CHECK(pthread_create(&th, NULL, spy, NULL) == 0);
	/* Bounded: 10 s in steps of 1 ms, then the checks below fail. */
	for (tries = 0; tries < 10000; tries++) {
		pid_t tid = __atomic_load_n(&spy_tid, __ATOMIC_ACQUIRE);

		if (tid != 0 && task_state(tid) == 'S')
			break;
		usleep(1000);
	}
	CHECK(tries < 10000);

	einval("einval: timedwait, tv_nsec 1e9", &cv, -1, sec, 1000000000L);
	einval("einval: timedwait, tv_nsec -1", &cv, -1, sec, -1L);
	einval("einval: timedwait, tv_nsec LONG_MAX", &cv, -1, sec, LONG_MAX);
	einval("einval: clockwait monotonic, tv_nsec 1e9", &cv,
	       CLOCK_MONOTONIC, mono, 1000000000L);
	einval("einval: clockwait realtime, tv_nsec LONG_MIN", &cv,
	       CLOCK_REALTIME, sec, LONG_MIN);
	einval("einval: clockwait on CLOCK_PROCESS_CPUTIME_ID", &cv,
	       CLOCK_PROCESS_CPUTIME_ID, sec, 0);

	step = "einval: the spy";
	CHECK(__atomic_load_n(&spy_got, __ATOMIC_ACQUIRE) == 0);
	pthread_mutex_unlock(&pm);
	pthread_join(th, NULL);
	CHECK(spy_got == 1);
	printf("abi-time: einval: the mutex was not released before EINVAL\n");
}

/*
 * A process-shared condvar is handed to glibc at init; its timed waits go
 * to glibc's entry of the program's width (the 32-bit one for abi-time on
 * i386 and armhf) with the program's own struct, so they still time out at
 * the deadline.  The preload counts the condvar, not the waits.
 */
static void fallback(void)
{
	pthread_condattr_t a;
	pthread_cond_t c;

	step = "fallback: init";
	pthread_condattr_init(&a);
	pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	CHECK(pthread_cond_init(&c, &a) == 0);
	pthread_condattr_destroy(&a);
	n_fallback++;
	on_glibc = true;
	times_out("glibc's: timedwait, monotonic condvar", &c, -1,
		  CLOCK_MONOTONIC);
	times_out("glibc's: clockwait realtime", &c, CLOCK_REALTIME,
		  CLOCK_REALTIME);
	on_glibc = false;
	CHECK(pthread_cond_destroy(&c) == 0);
}

/* Which object this program's pthread_cond_timedwait reference bound to. */
static const char *timedwait_owner(void)
{
	int (*f)(pthread_cond_t *, pthread_mutex_t *,
		 const struct timespec *) = pthread_cond_timedwait;
	Dl_info info;
	void *p;

	memcpy(&p, &f, sizeof(p));	/* POSIX: a function's address */
	if (!dladdr(p, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

int main(void)
{
	pthread_condattr_t a;

	signal(SIGALRM, watchdog);
	alarm(60);
	printf("abi-time: time_t of %u bits; pthread_cond_timedwait from %s\n",
	       (unsigned)sizeof(time_t) * CHAR_BIT, timedwait_owner());

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	CHECK(pthread_cond_init(&cv_mono, &a) == 0);
	pthread_condattr_destroy(&a);

	times_out("timedwait, realtime condvar", &cv_rt, -1, CLOCK_REALTIME);
	times_out("timedwait, monotonic condvar", &cv_mono, -1,
		  CLOCK_MONOTONIC);
	times_out("clockwait monotonic", &cv_rt, CLOCK_MONOTONIC,
		  CLOCK_MONOTONIC);
	times_out("clockwait realtime", &cv_mono, CLOCK_REALTIME,
		  CLOCK_REALTIME);

	past("timedwait, tv_sec -1", &cv_rt, -1,
	     &(struct timespec){ .tv_sec = -1, .tv_nsec = 0 });
	past("clockwait monotonic, tv_sec -1", &cv_rt, CLOCK_MONOTONIC,
	     &(struct timespec){ .tv_sec = -1, .tv_nsec = 999999999 });

	far("timedwait until 2038", &cv_rt, -1);
	far("clockwait realtime until 2038", &cv_rt, CLOCK_REALTIME);

	einval_before_unlock();
	fallback();

	CHECK(pthread_cond_destroy(&cv_mono) == 0);
	step = "exit";
	alarm(0);
	printf("abi-time: %d timed waits on glibc's condvar\n", n_glibc);
	printf("abi-time: %d timed waits, %d signals, %d fallback\n", n_timed,
	       n_signals, n_fallback);
	return failures ? 1 : 0;
}
