/* SPDX-License-Identifier: MIT */
/*
 * unitutil.h - helpers shared by the unit tests: bounded polling (threads
 * are ordered by observing state, never by sleeping), "is this thread
 * asleep in the futex?" from /proc, a watchdog that names the phase a test
 * was in, and cmocka's includes in the order cmocka wants them.
 *
 * cmocka's assertions longjmp and are not thread-safe: only the main thread
 * asserts.  Worker threads record what they saw and the main thread checks.
 */
#ifndef SWAIT_UNITUTIL_H
#define SWAIT_UNITUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

/* How long a bounded poll may take before the test fails (unscaled). */
#define UU_POLL_SECONDS 5.0

/* How long a multi-threaded test may take before the watchdog fires. */
#define UU_WATCHDOG_SECONDS 20.0

/* Back off politely: yield first, then nap briefly (2 shared CPUs). */
void uu_pause(unsigned long n);

/*
 * Evaluate cond until it is true or ns nanoseconds (scaled by
 * tu_slowdown()) pass; the value is whether it became true.  For ordering
 * threads by observed state.
 */
#define uu_poll_ns(cond, ns)						\
	__extension__ ({						\
		long long uu_dl_ = tu_now_ns() +			\
			(long long)((double)(ns) * tu_slowdown());	\
		unsigned long uu_n_ = 0;				\
		bool uu_ok_;						\
		while (!(uu_ok_ = (cond)) && tu_now_ns() < uu_dl_)	\
			uu_pause(uu_n_++);				\
		uu_ok_;							\
	})

/* The same, bounded by UU_POLL_SECONDS: failing it fails the test. */
#define uu_poll(cond) uu_poll_ns(cond, UU_POLL_SECONDS * 1e9)

pid_t uu_gettid(void);

/* The state letter of a thread of this process ('R', 'S', ...), or '?'. */
char uu_task_state(pid_t tid);

/*
 * Poll until thread tid is blocked in the futex system call ('S' in
 * /proc/self/task/<tid>/stat, and futex in .../syscall where readable) and
 * head has a queued waiter: the thread has prepared and gone to sleep.
 * Bounded; returns whether that state was seen.
 */
bool uu_wait_asleep(pid_t tid, const struct swait_head *head);

/*
 * Arm the shared watchdog for the current test; a hang prints what and the
 * last phase set with uu_phase().  uu_watchdog_done() disarms it.
 */
void uu_watchdog(const char *what);
void uu_watchdog_done(void);
void uu_phase(const char *phase);

/*
 * Forked children, for death tests and for scenarios that may crash the
 * process (a crash must fail one test, not end the suite).  The child runs
 * fn(arg) with stderr captured and an alarm of seconds (a hang is killed
 * by SIGALRM), then exits 0.  cmocka assertions do not work in a child:
 * use uu_check(), which prints the failed condition and exits 1.
 */
struct uu_child {
	int status;		/* from waitpid() */
	char out[4096];		/* the child's stderr, NUL-terminated */
};

int uu_run_child(void (*fn)(void *), void *arg, unsigned seconds,
		 struct uu_child *res);

/*
 * Whether the child exited with status 0; if not, prints what happened to
 * it (as "what: ...") and its stderr.  Use as assert_true(uu_child_ok()).
 */
bool uu_child_ok(const struct uu_child *res, const char *what);

__attribute__((noreturn))
void uu_check_failed(const char *what, const char *file, int line);

#define uu_check(cond)							\
	do {								\
		if (!(cond))						\
			uu_check_failed(#cond, __FILE__, __LINE__);	\
	} while (0)

/* A deadline on clock offset by nsec (may be negative) from now. */
struct timespec uu_deadline(clockid_t clock, long long nsec);

/* Whether clock has reached the absolute time *ts. */
bool uu_reached(clockid_t clock, const struct timespec *ts);

/*
 * Atomic int helpers for flags shared with worker threads.  Each tells
 * Helgrind/DRD that *p is a synchronisation word (tu_sync_var): they do not
 * model atomics and would report every access as a race.
 */
static inline int uu_load(const int *p)
{
	int v;

	tu_sync_var(p, sizeof(*p));
	v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	tu_acquire(p);
	return v;
}

static inline void uu_store(int *p, int v)
{
	tu_sync_var(p, sizeof(*p));
	tu_release(p);
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline int uu_inc(int *p)
{
	int v;

	tu_sync_var(p, sizeof(*p));
	tu_release(p);
	v = __atomic_add_fetch(p, 1, __ATOMIC_ACQ_REL);
	tu_acquire(p);
	return v;
}

#endif
