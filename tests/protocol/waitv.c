// SPDX-License-Identifier: MIT
/*
 * waitv.c - wake_all in one system call (lib/swait.c W1-W3).
 *
 * Where the kernel has futex_waitv(), a single waiter on a head that has
 * seen a broadcast (W4: a walk that gave two or more sleepers a FUTEX_WAKE
 * each) sleeps in it, and a wake_all walk that finds N such sleepers makes
 * one FUTEX_WAKE, of the head's walks word, instead of N.  On a fresh head,
 * and on a head only ever woken by wake_one, sleepers use FUTEX_WAIT.  Where it does not (ENOSYS; CI forces
 * that with the no-waitv wrapper, tests/common/no-waitv.c), sleepers use
 * FUTEX_WAIT and the walk wakes each word.  Each test probes which kernel
 * it runs on and asserts the behaviour that kernel must show, so the same
 * program checks both paths: counted through the library's test hook on
 * FUTEX_WAKE, and seen in /proc (the system call a sleeper is blocked in).
 *
 * Also: wake_one stays targeted (one FUTEX_WAKE of the chosen waiter's own
 * word, the other sleepers stay asleep), a PI head's walk wakes each
 * sleeper's own word (its walks word moves with every lock hold), a walk
 * that found one sleeper teaches the head nothing, and a sleeper in
 * futex_waitv() still times out on both clocks and takes signals as a
 * sleeper in FUTEX_WAIT does.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_futex_wake)(uint32_t *word);

#define NSLEEPERS 8

static struct swait_head head;
static unsigned flag;			/* the condition, TU_LOAD/TU_STORE */
static pid_t tids[NSLEEPERS];
static unsigned woken_count;		/* sleepers whose wait returned */

/* FUTEX_WAKE calls made by the thread that set `counting`. */
static _Thread_local bool counting;
static unsigned wakes_walks, wakes_other;

static void count_wake(uint32_t *word)
{
	if (!counting)
		return;
	if (word == &head.walks)
		wakes_walks++;
	else
		wakes_other++;
}

/* Whether this kernel (and its seccomp filter) offers futex_waitv(). */
static bool have_waitv(void)
{
#ifdef SYS_futex_waitv
	/* Zero futexes is EINVAL where the call exists. */
	long r = syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0);

	return r == -1 && errno == EINVAL;
#else
	return false;
#endif
}

static void *sleeper(void *arg)
{
	unsigned i = (unsigned)(uintptr_t)arg;

	TU_STORE(&tids[i], tu_gettid());
	swait_event(&head, TU_LOAD(&flag) != 0);
	TU_ADD(&woken_count, 1);
	return NULL;
}

/* Start n sleepers and wait until each is blocked in a futex call. */
static void start_sleepers(pthread_t *t, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		TU_STORE(&tids[i], 0);
		assert_int_equal(pthread_create(&t[i], NULL, sleeper,
						(void *)(uintptr_t)i), 0);
	}
	for (unsigned i = 0; i < n; i++) {
		pid_t tid;

		/*
		 * Not parked on the head lock's word: a sleeper whose
		 * prepare met a contended lock (the race-window build yields
		 * while holding it) is blocked in a futex too, not yet queued,
		 * and the walk would find fewer sleepers than counted.
		 */
		assert_true(tu_poll((tid = TU_LOAD(&tids[i])) != 0 &&
				    tu_task_state(tid) == 'S' &&
				    (tu_task_syscall(tid) == -1 ||
				     tu_is_futex_call(tu_task_syscall(tid))) &&
				    tu_task_syscall_arg(tid, 1) !=
				    (unsigned long)(uintptr_t)&head.lock));
	}
}

/* Each sleeper is blocked in the call this kernel calls for (W3). */
static void assert_sleepers_use(unsigned n, bool waitv)
{
	if (getenv("MESON_EXE_WRAPPER"))
		return;		/* /proc shows the host's numbers */
	for (unsigned i = 0; i < n; i++) {
		long nr = tu_task_syscall(TU_LOAD(&tids[i]));

		if (nr < 0)
			continue;	/* /proc/.../syscall unreadable */
#ifdef SYS_futex_waitv
		if (waitv)
			assert_int_equal(nr, SYS_futex_waitv);
		else
			assert_int_not_equal(nr, SYS_futex_waitv);
#else
		(void)waitv;
#endif
	}
}

static void setup_head(bool pi)
{
	if (pi)
		swait_head_init_pi(&head);
	else
		swait_head_init(&head);
	__atomic_store_n(&swait_hook_futex_wake, count_wake,
			 __ATOMIC_RELEASE);
}

static void teardown_head(void)
{
	__atomic_store_n(&swait_hook_futex_wake, NULL, __ATOMIC_RELEASE);
	assert_int_equal(swait_head_destroy(&head), 0);
}

/*
 * One broadcast round: n sleepers, blocked in futex_waitv iff waitv, woken
 * by one wake_all that makes the FUTEX_WAKE calls W1/W3 say.
 */
static void broadcast_round(unsigned n, bool waitv)
{
	pthread_t t[NSLEEPERS];

	TU_STORE(&flag, 0);
	TU_STORE(&woken_count, 0);
	wakes_walks = wakes_other = 0;
	start_sleepers(t, n);
	assert_sleepers_use(n, waitv);

	TU_STORE(&flag, 1);
	counting = true;
	swait_wake_all(&head);
	counting = false;
	/* The counts first: a missing wake would leave the joins hanging. */
	if (waitv) {
		/* W1: one wake of the walks word, none of a waiter's. */
		assert_int_equal(wakes_walks, 1);
		assert_int_equal(wakes_other, 0);
	} else {
		/* W3, W4: one wake per sleeper's own word. */
		assert_int_equal(wakes_walks, 0);
		assert_int_equal(wakes_other, n);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(TU_LOAD(&woken_count), n);
}

static void run_wake_all(bool pi)
{
	/*
	 * A PI head never: its walks word counts the threads at its lock
	 * (lib/headlock.c L7) and moves with every lock hold, so each
	 * sleeper sleeps on its own word and a walk wakes each (W4).
	 */
	bool waitv = have_waitv() && !pi;

	tu_watchdog_arm(60, "wake_all of sleepers", NULL);
	setup_head(pi);
	/* W4: a fresh head's sleepers use FUTEX_WAIT; one walk teaches it. */
	broadcast_round(NSLEEPERS, false);
	broadcast_round(NSLEEPERS, waitv);
	broadcast_round(NSLEEPERS, waitv);
	teardown_head();
	tu_watchdog_disarm();
}

/* W4: a walk that found one sleeper does not make the head a broadcast one. */
static void one_sleeper_teaches_nothing(void **state)
{
	(void)state;
	tu_watchdog_arm(60, "wake_all of one sleeper", NULL);
	setup_head(false);
	broadcast_round(1, false);
	broadcast_round(1, false);
	broadcast_round(2, false);	/* two own wakes: it learns here */
	broadcast_round(2, have_waitv());
	teardown_head();
	tu_watchdog_disarm();
}

static void wake_all_one_call(void **state)
{
	(void)state;
	run_wake_all(false);
}

static void wake_all_one_call_pi(void **state)
{
	(void)state;
	run_wake_all(true);
}

/*
 * wake_one stays targeted: one FUTEX_WAKE, of the oldest sleeper's own
 * word; the others stay asleep, still blocked.
 */
static void wake_one_targeted(void **state)
{
	pthread_t t[3];
	bool waitv = have_waitv();

	(void)state;
	tu_watchdog_arm(60, "wake_one among futex_waitv sleepers", NULL);
	setup_head(false);
	broadcast_round(3, false);	/* W4: now a broadcast head */
	TU_STORE(&flag, 0);
	TU_STORE(&woken_count, 0);
	wakes_walks = wakes_other = 0;
	start_sleepers(t, 3);
	assert_sleepers_use(3, waitv);

	/* Only one of them may take this: a counter of one token. */
	TU_STORE(&flag, 1);
	counting = true;
	swait_wake_one(&head);
	counting = false;
	assert_int_equal(wakes_walks, 0);
	assert_int_equal(wakes_other, 1);
	assert_true(tu_poll(TU_LOAD(&woken_count) == 1));
	/* The other two went back to sleep or never woke: still queued. */
	assert_true(swait_active(&head));

	swait_wake_all(&head);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(TU_LOAD(&woken_count), 3);
	teardown_head();
	tu_watchdog_disarm();
}

static unsigned sig_count;
static int intr_result = -1;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sig_count, 1, __ATOMIC_RELAXED);
}

static void *intr_sleeper(void *arg)
{
	(void)arg;
	TU_STORE(&tids[0], tu_gettid());
	TU_STORE(&intr_result, swait_event_interruptible(&head,
						 TU_LOAD(&flag) != 0));
	return NULL;
}

/*
 * Signals reach a sleeper in futex_waitv() as they reach one in FUTEX_WAIT:
 * an interruptible wait ends with EINTR (the handler has no SA_RESTART),
 * a plain wait ignores the signal and sleeps on until its wake.
 */
static void signals_in_waitv(void **state)
{
	pthread_t t[1];
	bool waitv = have_waitv();

	(void)state;
	tu_watchdog_arm(60, "signals to futex_waitv sleepers", NULL);
	assert_int_equal(tu_signal_handler(SIGUSR1, on_signal, 0, NULL), 0);
	setup_head(false);
	broadcast_round(2, false);	/* W4: now a broadcast head */
	TU_STORE(&flag, 0);

	/* Interruptible: EINTR, and the head is left empty. */
	TU_STORE(&tids[0], 0);
	TU_STORE(&intr_result, -1);
	assert_int_equal(pthread_create(&t[0], NULL, intr_sleeper, NULL), 0);
	assert_true(tu_poll(TU_LOAD(&tids[0]) != 0 &&
			    tu_task_state(TU_LOAD(&tids[0])) == 'S' &&
			    swait_active(&head)));
	assert_sleepers_use(1, waitv);
	assert_int_equal(pthread_kill(t[0], SIGUSR1), 0);
	assert_int_equal(pthread_join(t[0], NULL), 0);
	assert_int_equal(TU_LOAD(&intr_result), EINTR);
	assert_false(swait_active(&head));

	/* Plain: the signal is ignored; only the wake ends the wait. */
	TU_STORE(&woken_count, 0);
	start_sleepers(t, 1);
	assert_sleepers_use(1, waitv);
	assert_int_equal(pthread_kill(t[0], SIGUSR1), 0);
	assert_true(tu_poll(__atomic_load_n(&sig_count, __ATOMIC_RELAXED) >= 2));
	assert_true(tu_poll(tu_task_state(TU_LOAD(&tids[0])) == 'S'));
	assert_int_equal(TU_LOAD(&woken_count), 0);
	assert_true(swait_active(&head));
	TU_STORE(&flag, 1);
	swait_wake_all(&head);
	assert_int_equal(pthread_join(t[0], NULL), 0);
	assert_int_equal(TU_LOAD(&woken_count), 1);
	teardown_head();
	tu_watchdog_disarm();
}

static bool restart_sleep;	/* swait_sleep(), else the event macro */

static void *restart_sleeper(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC,
					 30LL * 1000000000LL);
	int r;

	(void)arg;
	TU_STORE(&tids[0], tu_gettid());
	if (restart_sleep) {
		swait_prepare(&head, &w);
		r = swait_sleep(&head, &w, SWAIT_INTERRUPTIBLE,
				CLOCK_MONOTONIC, &dl);
		swait_finish(&head, &w);
	} else {
		r = swait_event_interruptible_timeout(&head,
				TU_LOAD(&flag) != 0, CLOCK_MONOTONIC, &dl);
	}
	TU_STORE(&intr_result, r);
	return NULL;
}

/*
 * W5: with a deadline, an interruptible wait returns EINTR for any handler
 * that interrupts its sleep, SA_RESTART or not (swait_sleep(3)), also on a
 * broadcast head, where a sleep without both is in futex_waitv(), which
 * SA_RESTART restarts: such a wait used to sleep on to its deadline.  The
 * signal is sent until the wait returns, as one that lands before the
 * sleep is rightly no EINTR; the watchdog ends a wait that ignores them.
 * The kernel face's interruptible waits rest on this (lib/kernel.c K2;
 * tests/kernel/test_kernel.c checks them after a complete_all).
 */
static void sa_restart_deadline(void **state)
{
	pthread_t t;

	(void)state;
	tu_watchdog_arm(20, "SA_RESTART and a deadline on a broadcast head",
			NULL);
	assert_int_equal(tu_signal_handler(SIGUSR2, on_signal, SA_RESTART,
					   NULL), 0);
	for (int k = 0; k < 2; k++) {
		restart_sleep = k == 1;
		setup_head(false);
		broadcast_round(2, false);	/* W4: a broadcast head */
		TU_STORE(&flag, 0);
		TU_STORE(&tids[0], 0);
		TU_STORE(&intr_result, -1);
		assert_int_equal(pthread_create(&t, NULL, restart_sleeper,
						NULL), 0);
		assert_true(tu_poll(TU_LOAD(&tids[0]) != 0 &&
				    tu_task_state(TU_LOAD(&tids[0])) == 'S' &&
				    swait_active(&head)));
		/* W5: on its own word, where a handler ends the sleep. */
		assert_sleepers_use(1, false);
		while (TU_LOAD(&intr_result) == -1) {
			assert_int_equal(pthread_kill(t, SIGUSR2), 0);
			(void)tu_poll_ns(TU_LOAD(&intr_result) != -1,
					 20 * 1000000LL);
		}
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(TU_LOAD(&intr_result), EINTR);
		assert_false(swait_active(&head));
		teardown_head();
	}
	tu_watchdog_disarm();
}

/* A sleeper in futex_waitv() times out, on each clock, and leaves. */
static void timeout_both_clocks(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

	(void)state;
	tu_watchdog_arm(60, "timeouts on a broadcast head", NULL);
	setup_head(false);
	broadcast_round(2, false);	/* W4: its sleeps now use futex_waitv */
	TU_STORE(&flag, 0);
	for (size_t i = 0; i < 2; i++) {
		struct timespec dl;
		int r;

		assert_int_equal(swait_deadline_after(&dl, clocks[i],
						      20 * 1000 * 1000), 0);
		r = swait_event_timeout(&head, TU_LOAD(&flag) != 0, clocks[i],
					&dl);
		assert_int_equal(r, ETIMEDOUT);
		assert_false(swait_active(&head));
	}
	teardown_head();
	tu_watchdog_disarm();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wake_all_one_call),
		cmocka_unit_test(wake_all_one_call_pi),
		cmocka_unit_test(one_sleeper_teaches_nothing),
		cmocka_unit_test(wake_one_targeted),
		cmocka_unit_test(timeout_both_clocks),
		cmocka_unit_test(signals_in_waitv),
		cmocka_unit_test(sa_restart_deadline),
	};

	TU_SYNC_VAR(head);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
