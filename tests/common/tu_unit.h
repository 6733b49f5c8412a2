/* SPDX-License-Identifier: MIT */
/*
 * tu_unit.h - the unit tests' part of the helper layer, built on
 * testutil.h: "is this thread asleep in the futex?" from /proc, a watchdog
 * that names the phase a test was in, forked children for death tests, and
 * cmocka's includes in the order cmocka wants them.
 *
 * cmocka's assertions longjmp and are not thread-safe: only the main thread
 * asserts.  Worker threads record what they saw and the main thread checks.
 */
#ifndef SWAIT_TU_UNIT_H
#define SWAIT_TU_UNIT_H

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

/* How long a multi-threaded test may take before the watchdog fires. */
#define TU_WATCHDOG_SECONDS 20.0

/*
 * Poll until thread tid is blocked in the futex system call ('S' in
 * /proc/self/task/<tid>/stat, and futex in .../syscall where readable) and
 * head has a queued waiter: the thread has prepared and gone to sleep.
 * Bounded; returns whether that state was seen.
 */
bool tu_wait_asleep(pid_t tid, const struct swait_head *head);

/*
 * Arm the shared watchdog for the current test; a hang prints what and the
 * last phase set with tu_test_phase().  tu_watchdog_done() disarms it.
 */
void tu_watchdog(const char *what);
void tu_watchdog_done(void);
void tu_test_phase(const char *phase);

/*
 * A test made of many rounds: round r of it has begun.  The phase says
 * which, and the watchdog's time starts again, so that it measures a
 * stall, not the whole loop: on a loaded machine hundreds of rounds that
 * each start threads can take longer than one watchdog period.
 */
void tu_watchdog_round(long r);

/*
 * Forked children, for death tests and for scenarios that may crash the
 * process (a crash must fail one test, not end the suite).  The child runs
 * fn(arg) with stderr captured and an alarm of seconds (a hang is killed
 * by SIGALRM), then exits 0.  cmocka assertions do not work in a child:
 * use tu_check(), which prints the failed condition and exits 1.
 */
struct tu_child {
	int status;		/* from waitpid() */
	char out[4096];		/* the child's stderr, NUL-terminated */
};

int tu_run_child(void (*fn)(void *), void *arg, unsigned seconds,
		 struct tu_child *res);

/*
 * Whether the child exited with status 0; if not, prints what happened to
 * it (as "what: ...") and its stderr.  Use as assert_true(tu_child_ok()).
 */
bool tu_child_ok(const struct tu_child *res, const char *what);

/*
 * Whether the child died of SIGABRT with one of words (NULL-ended) in its
 * stderr: a death test's verdict.  Prints what it got otherwise.  Use as
 * assert_true(tu_child_aborted()).
 */
bool tu_child_aborted(const struct tu_child *res, const char *const *words);

/*
 * NULL where robust mutexes work (a thread that exits holding one leaves
 * it EOWNERDEAD for the next locker), else why not: qemu-user has no
 * robust list, ThreadSanitizer no model of a dead owner, and Valgrind's
 * tools report the exit (SWAIT_UNDER_VALGRIND).  Probed once.
 */
const char *tu_robust_skip_why(void);

__attribute__((noreturn))
void tu_check_failed(const char *what, const char *file, int line);

#define tu_check(cond)							\
	do {								\
		if (!(cond))						\
			tu_check_failed(#cond, __FILE__, __LINE__);	\
	} while (0)

#endif
