// SPDX-License-Identifier: MIT
/*
 * crosswake.c - signal handlers on two threads waking the heads the other
 * thread holds (lib/headlock.c, L2-L4).
 *
 * T1 keeps taking head A's lock (prepare and finish on A), T2 head B's; a
 * third thread signals both as fast as it can.  T1's handler completes B's
 * completion, T2's handler completes A's.  When T1's handler interrupts
 * T1's hold of A while T2's handler interrupts T2's hold of B, each handler
 * used to wait for the lock the other thread holds: both threads stuck in
 * handlers for good (ordinary heads), or FUTEX_LOCK_PI's EDEADLK and an
 * abort (PI heads).  Now a handler whose thread holds a lock never waits
 * for another: it leaves the wake to its own thread, which performs it
 * when it holds no lock any more, or (a full count on a PI head) adds its
 * event to done itself.  The watchdog turns a deadlock into a failure, and
 * every complete a handler made must be counted exactly.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

static struct swait_completion comp_a, comp_b;
static unsigned long posted_a, posted_b;	/* completes made, per head */
static int stop;
static int burst = 1;	/* completes per handler run */

/* On T1: complete B, whose lock T2 keeps taking. */
static void on_usr1(int sig)
{
	(void)sig;
	for (int i = 0; i < burst; i++) {
		swait_complete(&comp_b);
		__atomic_add_fetch(&posted_b, 1, __ATOMIC_RELAXED);
	}
}

/* On T2: complete A. */
static void on_usr2(int sig)
{
	(void)sig;
	for (int i = 0; i < burst; i++) {
		swait_complete(&comp_a);
		__atomic_add_fetch(&posted_a, 1, __ATOMIC_RELAXED);
	}
}

static bool valgrind;

static void *holder(void *arg)
{
	struct swait_completion *c = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (valgrind)
			sched_yield();	/* DRD's scheduler starves the rest */
		struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

		/* Two holds of the head lock, and a check under it. */
		swait_prepare(&c->wait, &w);
		swait_finish(&c->wait, &w);
		(void)swait_completion_done(c);
	}
	return NULL;
}

/* Consume every posted event; the count. */
static unsigned long drain(struct swait_completion *c)
{
	unsigned long n = 0;

	while (swait_completion_try_wait(c))
		n++;
	return n;
}

static void run(bool pi, int n)
{
	long rounds = tu_scale(n > 1 ? 400 : 40000);
	pthread_t t1, t2;
	long long t0 = tu_now_ns();

	valgrind = getenv("SWAIT_UNDER_VALGRIND") != NULL;
	/* Valgrind delivers each signal slowly: 100 pairs take seconds. */
	if (valgrind && rounds > 100)
		rounds = 100;
	burst = valgrind && n > 50 ? 50 : n;

	swait_completion_init(&comp_a);
	swait_completion_init(&comp_b);
	if (pi) {
		swait_head_init_pi(&comp_a.wait);
		swait_head_init_pi(&comp_b.wait);
	}
	posted_a = posted_b = 0;
	stop = 0;
	TU_SYNC_VAR(posted_a);
	TU_SYNC_VAR(posted_b);
	TU_SYNC_VAR(stop);
	tu_watchdog_arm(20, pi ? "cross-thread handler wakes, PI heads" :
			"cross-thread handler wakes", NULL);
	assert_int_equal(pthread_create(&t1, NULL, holder, &comp_a), 0);
	assert_int_equal(pthread_create(&t2, NULL, holder, &comp_b), 0);
	/*
	 * At least rounds pairs, 200 ms, and until each handler has run
	 * (under DRD beside other work, 100 pairs once ended with one
	 * thread's signals all still pending); at most 10 s after that many
	 * pairs, inside the watchdog's 20.
	 */
	for (long i = 0; i < rounds || tu_now_ns() - t0 < 200000000LL ||
			 !__atomic_load_n(&posted_a, __ATOMIC_RELAXED) ||
			 !__atomic_load_n(&posted_b, __ATOMIC_RELAXED); i++) {
		/*
		 * No throttle: a PI head's count of posted completes (2,047)
		 * fills in this storm, and each handler must then spill its
		 * event into done itself (lib/wake.c, L6).  Waiting for room
		 * there was a deadlock this loop reached on i386: both
		 * handlers waiting, each thread interrupted in take_ref() of
		 * its own head.
		 */
		assert_int_equal(pthread_kill(t1, SIGUSR1), 0);
		assert_int_equal(pthread_kill(t2, SIGUSR2), 0);
		if (i >= rounds && tu_now_ns() - t0 > 10000000000LL)
			break;
		if (valgrind)
			sched_yield();	/* Valgrind runs one thread at a time */
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t1, NULL), 0);
	assert_int_equal(pthread_join(t2, NULL), 0);
	tu_watchdog_disarm();

	printf("# %s heads, %d per handler: %lu completes on A, %lu on B, "
	       "from handlers\n", pi ? "PI" : "ordinary", burst, posted_a,
	       posted_b);
	/* Every complete a handler made was performed, exactly once. */
	assert_int_equal(drain(&comp_a), __atomic_load_n(&posted_a,
							 __ATOMIC_RELAXED));
	assert_int_equal(drain(&comp_b), __atomic_load_n(&posted_b,
							 __ATOMIC_RELAXED));
	assert_true(posted_a > 0 && posted_b > 0);
	assert_int_equal(swait_head_destroy(&comp_a.wait), 0);
	assert_int_equal(swait_head_destroy(&comp_b.wait), 0);
}

static void ordinary_heads(void **state)
{
	(void)state;
	run(false, 1);
}

static void pi_heads(void **state)
{
	(void)state;
	run(true, 1);
}

/*
 * 3,000 completes per handler run: a handler that interrupted the other
 * thread's hold of its own head fills the posted count of a PI head
 * (2,047) by itself, on any machine (standard signals merge, so one per
 * run rarely gets there), and the rest spill (lib/wake.c), in both
 * directions at once.
 */
static void pi_heads_burst(void **state)
{
	(void)state;
	run(true, 3000);
}

static int setup(void **state)
{
	(void)state;
	/* SA_RESTART, as a daemon's handlers usually are. */
	if (tu_signal_handler(SIGUSR1, on_usr1, SA_RESTART, NULL) != 0)
		return -1;
	return tu_signal_handler(SIGUSR2, on_usr2, SA_RESTART, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordinary_heads),
		cmocka_unit_test(pi_heads),
		cmocka_unit_test(pi_heads_burst),
	};

	if (tu_emulator_shares_tls()) {
		puts("skipped: qemu-i386 moves a thread's thread-local storage "
		     "once a signal handler has run (cross/qemu-i386.ini)");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
