// SPDX-License-Identifier: MIT
/*
 * lockhold.c - invariant I5 of lib/swait.c, measured: swait_wake_all() wakes
 * at most one waiter per hold of the head lock, however many are queued.
 *
 * Timing a lock from outside is noise on a shared VM, so this reads a
 * counter that test builds keep (SWAIT_TEST_HOOKS, static library only):
 * the most waiters one wake_all step woke under one hold.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern unsigned swait_hook_max_hold_steps;

#define NWAITERS 64

static struct swait_head head;
static int go;
static int queued;

static void *waiter(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&queued, 1, __ATOMIC_SEQ_CST);
	swait_event(&head, __atomic_load_n(&go, __ATOMIC_ACQUIRE));
	return NULL;
}

static int count_queued(void)
{
	/* Walk nothing: a waiter that is queued shows in destroy's EBUSY. */
	return swait_head_destroy(&head) == EBUSY;
}

static void wake_all_drops_lock_between_wakes(void **state)
{
	pthread_t t[NWAITERS];

	(void)state;
	TU_SYNC_VAR(go);
	TU_SYNC_VAR(queued);
	tu_watchdog_arm(60, "wake_all of 64 sleepers", NULL);
	for (int i = 0; i < NWAITERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, waiter, NULL), 0);
	/*
	 * Wait until every thread has queued; a thread that counted itself
	 * but has not yet prepared would be woken by its own condition check
	 * instead, which only makes the walk shorter, never longer.
	 */
	while (__atomic_load_n(&queued, __ATOMIC_SEQ_CST) < NWAITERS ||
	       !count_queued())
		sched_yield();
	for (int spins = 0; spins < 200; spins++)
		sched_yield();	/* let the stragglers reach the queue */
	__atomic_store_n(&swait_hook_max_hold_steps, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	swait_wake_all(&head);
	for (int i = 0; i < NWAITERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	tu_watchdog_disarm();
	assert_int_equal(swait_head_destroy(&head), 0);
	/* At least one waiter was woken by the walk, and one per hold. */
	assert_int_equal(__atomic_load_n(&swait_hook_max_hold_steps,
					 __ATOMIC_RELAXED), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wake_all_drops_lock_between_wakes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
