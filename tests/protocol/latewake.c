// SPDX-License-Identifier: MIT
/*
 * latewake.c - a waker's FUTEX_WAKE that lands after its waiter returned,
 * on memory that now holds a PI futex with a blocked locker.
 *
 * The protocol allows it (lib/swait.c I3: the exchange to WOKEN_* is the
 * waker's last access; the FUTEX_WAKE on the address comes after the
 * unlock, and the waiter may be long gone).  The kernel answers FUTEX_WAKE
 * on a PI futex with EINVAL, and the library used to abort with
 * "impossible in a correct program".  Memory reused as an on-stack PI head
 * or a PTHREAD_PRIO_INHERIT mutex is an ordinary program.
 *
 * Deterministic: a test hook (SWAIT_TEST_HOOKS) stops the waker just
 * before its FUTEX_WAKE on the waiter's word, as a preemption there would;
 * meanwhile the waiter times out of FUTEX_WAIT, finds itself woken,
 * returns, and the test reuses the word as a PI lock that one thread holds
 * and another is blocked on in FUTEX_LOCK_PI.  Then the waker goes on.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_futex_wake)(uint32_t *word);

/* lib/state.h: announced, about to sleep (SLEEPING, SLEEPING_V) */
enum { STATE_SLEEPING = 2, STATE_SLEEPING_V = 5 };

static struct swait_head head;
/* The waiter's memory, reused as a PI futex word after the wait. */
static union {
	struct swait_waiter w;
	uint32_t word[sizeof(struct swait_waiter) / sizeof(uint32_t)];
} mem;
static uint32_t *target;
static sem_t in_hook, go_on;

static void hold_before_wake(uint32_t *word)
{
	if (word != __atomic_load_n(&target, __ATOMIC_ACQUIRE))
		return;
	sem_post(&in_hook);
	while (sem_wait(&go_on) != 0)
		;
}

static void *waker(void *arg)
{
	(void)arg;
	/* Wake only a waiter that announced its sleep: that wake FUTEX_WAKEs. */
	for (;;) {
		uint32_t s = __atomic_load_n(&mem.w.state, __ATOMIC_ACQUIRE);

		if (s == STATE_SLEEPING || s == STATE_SLEEPING_V)
			break;
		sched_yield();
	}
	swait_wake_one(&head);
	return NULL;
}

static long futex_pi(uint32_t *word, int op)
{
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, 0, NULL,
		       NULL, 0);
}

static void *pi_contender(void *arg)
{
	uint32_t *word = arg;
	uint32_t self = (uint32_t)syscall(SYS_gettid);

	/* Blocks in the kernel: the main thread owns the lock. */
	assert_int_equal(futex_pi(word, FUTEX_LOCK_PI), 0);
	assert_int_equal(__atomic_load_n(word, __ATOMIC_ACQUIRE) &
			 FUTEX_TID_MASK, self);
	if (!__atomic_compare_exchange_n(word, &self, 0, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		assert_int_equal(futex_pi(word, FUTEX_UNLOCK_PI), 0);
	return NULL;
}

static void late_wake_on_a_pi_futex(void **state)
{
	pthread_t w, c;
	struct timespec deadline;
	uint32_t *word = &mem.w.state, self, expected = 0;

	(void)state;
	TU_SYNC_VAR(mem);
	tu_watchdog_arm(60, "late FUTEX_WAKE on a reused PI futex", NULL);
	assert_int_equal(sem_init(&in_hook, 0, 0), 0);
	assert_int_equal(sem_init(&go_on, 0, 0), 0);
	swait_head_init(&head);
	swait_waiter_init(&mem.w);
	__atomic_store_n(&target, word, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_futex_wake, hold_before_wake,
			 __ATOMIC_RELEASE);

	swait_prepare(&head, &mem.w);
	assert_int_equal(pthread_create(&w, NULL, waker, NULL), 0);
	/*
	 * Sleep until the deadline: the waker flips us to WOKEN_ONE, then
	 * stops before its FUTEX_WAKE, so nothing ends our FUTEX_WAIT but
	 * the timeout, after which the state says we were woken.  200 ms
	 * is ample for the waker to flip us (under Valgrind, a slowdown of
	 * 40, ten times that, and the whole of it is slept); where it ran
	 * later than that, as a new thread may on a loaded machine, the
	 * sleep times out still queued and sleeps again (the watchdog ends a
	 * waker that never comes).
	 */
	for (int r;;) {
		assert_int_equal(swait_deadline_after(&deadline,
				CLOCK_MONOTONIC, (int64_t)(200e6 *
				(tu_slowdown() > 10 ? 10 : tu_slowdown()))), 0);
		r = swait_sleep(&head, &mem.w, 0, CLOCK_MONOTONIC, &deadline);
		if (r != ETIMEDOUT) {
			assert_int_equal(r, 0);
			break;
		}
	}
	swait_finish(&head, &mem.w);
	while (sem_wait(&in_hook) != 0)
		;

	/* The waiter has returned: its word is now a PI lock we hold... */
	self = (uint32_t)syscall(SYS_gettid);
	assert_true(__atomic_compare_exchange_n(word, &expected, self, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED));
	/* ...and another thread is blocked on. */
	assert_int_equal(pthread_create(&c, NULL, pi_contender, word), 0);
	while (!(__atomic_load_n(word, __ATOMIC_ACQUIRE) & FUTEX_WAITERS))
		sched_yield();

	/* The late wake lands now: EINVAL from the kernel, not an abort. */
	sem_post(&go_on);
	assert_int_equal(pthread_join(w, NULL), 0);

	/* The PI lock still works: hand it to the contender. */
	assert_int_equal(futex_pi(word, FUTEX_UNLOCK_PI), 0);
	assert_int_equal(pthread_join(c, NULL), 0);
	assert_int_equal(__atomic_load_n(word, __ATOMIC_ACQUIRE), 0);

	__atomic_store_n(&swait_hook_futex_wake, NULL, __ATOMIC_RELEASE);
	assert_int_equal(swait_head_destroy(&head), 0);
	tu_watchdog_disarm();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(late_wake_on_a_pi_futex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
