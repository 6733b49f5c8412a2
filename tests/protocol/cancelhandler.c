// SPDX-License-Identifier: MIT
/*
 * cancelhandler.c - a cancellation that lands while a signal handler is
 * inside one of the four async-signal-safe calls, on a thread that is
 * asleep in libswait (lib/defer.h, C1).
 *
 * swait_sleep() turns on asynchronous cancellation around its FUTEX_WAIT,
 * and a handler that runs meanwhile inherits it.  If the handler calls
 * swait_complete() (the documented SIGTERM-handler use) and the thread is
 * cancelled while that call holds the completion's lock, the unwinding
 * used to leave the lock held: every later call on the completion hung.
 *
 * Deterministic: the thread sleeps (observed blocked in the futex system
 * call); a signal runs the handler; a test hook runs with each head lock
 * just taken, and for the target head it cancels the calling thread, which
 * is exactly "a pthread_cancel() lands while the lock is held".  Then the
 * thread must end cancelled, the complete must have been posted, and the
 * lock must be free (a watchdog turns a hang into a failure).  For each of
 * the four calls.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_head_locked)(struct swait_head *head);

enum op { OP_COMPLETE, OP_COMPLETE_ALL, OP_WAKE_ONE, OP_WAKE_ALL };

static struct swait_completion comp;	/* the handler's target */
static struct swait_head sleep_head;	/* where the thread sleeps */
static struct swait_head target_waiters;	/* for the two plain wakes */
static enum op handler_op;
static int hook_fired;
static pid_t sleeper_tid;

static void cancel_self_hook(struct swait_head *h)
{
	struct swait_head *t = handler_op == OP_WAKE_ONE ||
			       handler_op == OP_WAKE_ALL ?
			       &target_waiters : &comp.wait;

	if (h != t || __atomic_exchange_n(&hook_fired, 1, __ATOMIC_RELAXED))
		return;
	/* The lock is held: a cancel now must not unwind this call. */
	pthread_cancel(pthread_self());
}

static void on_signal(int sig)
{
	(void)sig;
	switch (handler_op) {
	case OP_COMPLETE:
		swait_complete(&comp);
		break;
	case OP_COMPLETE_ALL:
		swait_complete_all(&comp);
		break;
	case OP_WAKE_ONE:
		swait_wake_one(&target_waiters);
		break;
	case OP_WAKE_ALL:
		swait_wake_all(&target_waiters);
		break;
	}
}

static void *sleeper(void *arg)
{
	(void)arg;
	__atomic_store_n(&sleeper_tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	/* Nobody wakes this head: only the cancel ends the wait. */
	swait_event(&sleep_head, 0);
	return NULL;
}

/* Whether thread tid is blocked in the futex system call. */
static int in_futex(pid_t tid)
{
	char path[64];
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return tu_is_futex_call(nr) && swait_active(&sleep_head);
}

/* A waiter on target_waiters, so that the plain wakes take the lock. */
static void *target_waiter(void *arg)
{
	int *woken = arg;

	swait_event(&target_waiters, __atomic_load_n(woken, __ATOMIC_ACQUIRE));
	return NULL;
}

static void run(enum op op)
{
	pthread_t t, tw;
	void *res;
	int woken = 0;

	tu_watchdog_arm(30, "cancel inside a handler's wake", NULL);
	swait_completion_init(&comp);
	swait_head_init(&sleep_head);
	swait_head_init(&target_waiters);
	handler_op = op;
	hook_fired = 0;
	sleeper_tid = 0;
	TU_SYNC_VAR(woken);
	TU_SYNC_VAR(sleeper_tid);
	TU_SYNC_VAR(hook_fired);
	TU_SYNC_VAR(swait_hook_head_locked);
	if (op == OP_WAKE_ONE || op == OP_WAKE_ALL) {
		assert_int_equal(pthread_create(&tw, NULL, target_waiter,
						&woken), 0);
		while (!swait_active(&target_waiters))
			sched_yield();
	}
	assert_int_equal(pthread_create(&t, NULL, sleeper, NULL), 0);
	while (__atomic_load_n(&sleeper_tid, __ATOMIC_ACQUIRE) == 0 ||
	       !in_futex(sleeper_tid))
		sched_yield();

	__atomic_store_n(&swait_hook_head_locked, cancel_self_hook,
			 __ATOMIC_RELEASE);
	assert_int_equal(pthread_kill(t, SIGUSR1), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	__atomic_store_n(&swait_hook_head_locked, NULL, __ATOMIC_RELEASE);
	assert_int_equal(__atomic_load_n(&hook_fired, __ATOMIC_RELAXED), 1);
	assert_ptr_equal(res, PTHREAD_CANCELED);

	/* The cancelled waiter left its queue; nothing was left locked. */
	assert_int_equal(swait_head_destroy(&sleep_head), 0);
	switch (op) {
	case OP_COMPLETE:
		assert_true(swait_completion_try_wait(&comp));
		assert_false(swait_completion_done(&comp));
		break;
	case OP_COMPLETE_ALL:
		assert_true(swait_completion_done(&comp));
		break;
	case OP_WAKE_ONE:
	case OP_WAKE_ALL:
		/* The woken waiter re-checks; let it leave. */
		__atomic_store_n(&woken, 1, __ATOMIC_RELEASE);
		swait_wake_all(&target_waiters);
		assert_int_equal(pthread_join(tw, NULL), 0);
		break;
	}
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	assert_int_equal(swait_head_destroy(&target_waiters), 0);
	tu_watchdog_disarm();
}

static void complete_in_handler(void **state)
{
	(void)state;
	run(OP_COMPLETE);
}

static void complete_all_in_handler(void **state)
{
	(void)state;
	run(OP_COMPLETE_ALL);
}

static void wake_one_in_handler(void **state)
{
	(void)state;
	run(OP_WAKE_ONE);
}

static void wake_all_in_handler(void **state)
{
	(void)state;
	run(OP_WAKE_ALL);
}

static void *pause_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int setup(void **state)
{
	pthread_t t;

	(void)state;
	/*
	 * glibc loads its unwinder (libgcc_s, with malloc) at the first
	 * cancellation; do that one here, not in the handler, where only the
	 * library's calls are under test.
	 */
	if (pthread_create(&t, NULL, pause_forever, NULL) != 0 ||
	    pthread_cancel(t) != 0 || pthread_join(t, NULL) != 0)
		return -1;
	return tu_signal_handler(SIGUSR1, on_signal, 0, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(complete_in_handler),
		cmocka_unit_test(complete_all_in_handler),
		cmocka_unit_test(wake_one_in_handler),
		cmocka_unit_test(wake_all_in_handler),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
