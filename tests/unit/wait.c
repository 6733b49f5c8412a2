// SPDX-License-Identifier: MIT
/*
 * wait.c - the low-level waiting calls: swait_prepare(), swait_sleep(),
 * swait_finish(), swait_active(), swait_has_sleeper() and
 * swait_deadline_after().
 *
 * Mostly single-threaded: a sleep with a deadline already past returns 0
 * exactly when the waiter was woken, so queue positions and wake
 * selections are observable deterministically.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "tu_unit.h"

static const struct timespec past = { 0, 0 };

/*
 * The fixture of every test but the last: a head h and waiters w1, w2, w3,
 * fresh for each test.  At file scope, so that a test that fails half way
 * leaves nothing on the head that points into a dead frame; teardown checks
 * that the test left the head empty.
 */
static struct swait_head h;
static struct swait_waiter w1, w2, w3;

static int setup(void **state)
{
	(void)state;
	swait_head_init(&h);
	swait_waiter_init(&w1);
	swait_waiter_init(&w2);
	swait_waiter_init(&w3);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return swait_head_destroy(&h) == 0 ? 0 : -1;
}

/* A sleep on h with a past deadline: 0 iff w had been woken. */
static int poll_sleep(struct swait_waiter *w)
{
	return swait_sleep(&h, w, 0, CLOCK_MONOTONIC, &past);
}

static void test_prepare_twice_keeps_place(void **state)
{
	(void)state;
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_prepare(&h, &w3);
	swait_prepare(&h, &w1);		/* must not move to the tail */
	swait_prepare(&h, &w2);

	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&w1), 0);
	assert_int_equal(poll_sleep(&w2), ETIMEDOUT);
	assert_int_equal(poll_sleep(&w3), ETIMEDOUT);
	swait_finish(&h, &w1);

	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&w2), 0);
	assert_int_equal(poll_sleep(&w3), ETIMEDOUT);
	swait_finish(&h, &w2);

	/* Not linked twice: one wake empties the queue, destroy agrees. */
	swait_wake_one(&h);
	assert_false(swait_active(&h));
	assert_int_equal(poll_sleep(&w3), 0);
	swait_finish(&h, &w3);
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_prepare_after_timeout_keeps_place(void **state)
{
	(void)state;
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	/* A timed-out sleep leaves w1 queued; the usual loop prepares again. */
	assert_int_equal(poll_sleep(&w1), ETIMEDOUT);
	assert_true(swait_active(&h));
	swait_prepare(&h, &w1);

	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&w2), ETIMEDOUT);
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);
	swait_finish(&h, &w2);
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * lib/swait.c I6: preparing a waiter that was woken consumes the wake (the
 * caller re-checks its condition next) and queues it again at the tail.
 */
static void test_prepare_after_wake_requeues(void **state)
{
	(void)state;
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_wake_one(&h);		/* selects w1 */
	swait_prepare(&h, &w1);		/* consumes it; now w2, w1 */
	assert_int_equal(poll_sleep(&w1), ETIMEDOUT);

	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&w1), ETIMEDOUT);
	assert_int_equal(poll_sleep(&w2), 0);
	swait_finish(&h, &w2);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_active_and_has_sleeper(void **state)
{
	(void)state;
	assert_false(swait_active(&h));
	assert_false(swait_has_sleeper(&h));
	swait_prepare(&h, &w1);
	assert_true(swait_active(&h));
	assert_true(swait_has_sleeper(&h));
	swait_prepare(&h, &w2);
	swait_finish(&h, &w1);
	assert_true(swait_active(&h));
	assert_true(swait_has_sleeper(&h));
	swait_finish(&h, &w2);
	assert_false(swait_active(&h));
	assert_false(swait_has_sleeper(&h));

	/* A woken waiter is off the queue even before its thread runs. */
	swait_prepare(&h, &w1);
	swait_wake_one(&h);
	assert_false(swait_active(&h));
	assert_false(swait_has_sleeper(&h));
	swait_finish(&h, &w1);
	assert_false(swait_active(&h));
}

static void test_finish_idle_is_noop(void **state)
{
	struct swait_waiter idle = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter *other = &w1;
	struct swait_waiter before;

	(void)state;
	swait_finish(&h, &idle);
	assert_false(swait_active(&h));
	assert_int_equal(swait_head_destroy(&h), 0);

	/* With another waiter queued: not dequeued, not woken. */
	swait_prepare(&h, other);
	memcpy(&before, &idle, sizeof(idle));
	swait_finish(&h, &idle);
	swait_finish(&h, &idle);
	assert_memory_equal(&before, &idle, sizeof(idle));
	assert_true(swait_active(&h));
	assert_int_equal(poll_sleep(other), ETIMEDOUT);

	/* Finish twice: the second is on an idle waiter. */
	swait_finish(&h, other);
	swait_finish(&h, other);
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_finish_after_wake(void **state)
{
	(void)state;
	/* Woken, slept on it (consumed), finished: nothing to pass on. */
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);
	assert_int_equal(poll_sleep(&w2), ETIMEDOUT);
	assert_true(swait_active(&h));

	/* Woken but left without sleeping: the wake goes to the next one. */
	swait_prepare(&h, &w1);			/* queue: w2, w1 */
	swait_wake_one(&h);			/* selects w2 */
	swait_finish(&h, &w2);			/* passes it to w1 */
	assert_false(swait_active(&h));
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);

	/* A lone waiter woken and finished: the head is simply empty. */
	swait_prepare(&h, &w1);
	swait_wake_one(&h);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);

	/* A wake_all is not passed on: it was never "the one" wake. */
	swait_prepare(&h, &w1);
	swait_wake_all(&h);
	swait_prepare(&h, &w2);
	swait_finish(&h, &w1);
	assert_int_equal(poll_sleep(&w2), ETIMEDOUT);
	swait_finish(&h, &w2);
	assert_int_equal(swait_head_destroy(&h), 0);
}

/* A sleep after the wake happened must not block; no deadline at all. */
static void test_sleep_after_wake_returns_at_once(void **state)
{
	(void)state;
	tu_watchdog("sleep after wake");
	tu_test_phase("after wake_one");
	swait_prepare(&h, &w1);
	swait_wake_one(&h);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_MONOTONIC, NULL), 0);
	swait_finish(&h, &w1);

	tu_test_phase("after wake_all");
	swait_prepare(&h, &w1);
	swait_wake_all(&h);
	assert_int_equal(swait_sleep(&h, &w1, SWAIT_INTERRUPTIBLE,
				     CLOCK_REALTIME, NULL), 0);
	swait_finish(&h, &w1);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_sleep_einval(void **state)
{
	struct timespec neg_ns, big_ns, good;

	(void)state;
	good = tu_deadline(CLOCK_MONOTONIC, 10LL * 1000000000LL);
	neg_ns = good;
	neg_ns.tv_nsec = -1;
	big_ns = good;
	big_ns.tv_nsec = 1000000000L;

	swait_prepare(&h, &w1);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_PROCESS_CPUTIME_ID,
				     &good), EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_PROCESS_CPUTIME_ID,
				     NULL), EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_BOOTTIME, NULL),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_MONOTONIC, &neg_ns),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_REALTIME, &neg_ns),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_MONOTONIC, &big_ns),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_REALTIME, &big_ns),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, 0x4u, CLOCK_MONOTONIC, &good),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, ~0u, CLOCK_MONOTONIC, &good),
			 EINVAL);
	assert_int_equal(swait_sleep(&h, &w1, SWAIT_INTERRUPTIBLE | 0x80u,
				     CLOCK_MONOTONIC, NULL), EINVAL);
	/* Still queued after every refusal, and finish takes it off. */
	assert_true(swait_active(&h));
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * EINVAL is not a wake: a woken waiter keeps its wake through a refused
 * sleep, and a refused sleep that leaves passes the wake on (no swallowed
 * wakeups).
 */
static void test_sleep_einval_keeps_wake(void **state)
{
	(void)state;
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_wake_one(&h);
	assert_int_equal(swait_sleep(&h, &w1, 0, CLOCK_PROCESS_CPUTIME_ID,
				     NULL), EINVAL);
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);
	assert_int_equal(poll_sleep(&w2), ETIMEDOUT);

	swait_prepare(&h, &w1);			/* queue: w2, w1 */
	swait_wake_one(&h);			/* selects w2 */
	assert_int_equal(swait_sleep(&h, &w2, 0x4u, CLOCK_MONOTONIC, NULL),
			 EINVAL);
	swait_finish(&h, &w2);			/* passes it to w1 */
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void check_past(clockid_t clock, struct timespec dl)
{
	assert_int_equal(swait_sleep(&h, &w1, 0, clock, &dl), ETIMEDOUT);
	assert_true(swait_active(&h));
	assert_int_equal(swait_sleep(&h, &w1, SWAIT_INTERRUPTIBLE, clock,
				     &dl), ETIMEDOUT);
	assert_true(swait_active(&h));
}

static void test_sleep_deadline_past(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	struct timespec dl;
	unsigned i;

	(void)state;
	tu_watchdog("sleep with a past deadline");
	swait_prepare(&h, &w1);
	for (i = 0; i < 2; i++) {
		dl.tv_sec = 0;
		dl.tv_nsec = 0;
		check_past(clocks[i], dl);
		check_past(clocks[i], tu_deadline(clocks[i], -1));
		check_past(clocks[i],
			   tu_deadline(clocks[i], -1000000000LL));
		/* The kernel would refuse these: they must count as past. */
		dl.tv_sec = -1;
		dl.tv_nsec = 0;
		check_past(clocks[i], dl);
		dl.tv_sec = -1000000;
		dl.tv_nsec = 999999999;
		check_past(clocks[i], dl);
	}
	tu_watchdog_done();
	/* A timeout leaves the waiter queued, and wakeable, until finish. */
	swait_wake_one(&h);
	assert_false(swait_active(&h));
	assert_int_equal(poll_sleep(&w1), 0);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

/* A short real timeout: returns ETIMEDOUT no earlier than the deadline. */
static void test_sleep_deadline_future(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	struct timespec dl;
	unsigned i;

	(void)state;
	tu_watchdog("sleep with a 20 ms deadline");
	swait_prepare(&h, &w1);
	for (i = 0; i < 2; i++) {
		dl = tu_deadline(clocks[i], 20 * 1000000LL);
		assert_int_equal(swait_sleep(&h, &w1, 0, clocks[i], &dl),
				 ETIMEDOUT);
		assert_true(tu_reached(clocks[i], &dl));
		assert_true(swait_active(&h));
	}
	tu_watchdog_done();
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * Deadlines too far for nanoseconds in an int64_t: tv_sec at its largest,
 * and the one swait_deadline_after() saturates at.  Each sleep waits for
 * its wake.  A fresh thread sleeps, so that its spin before the sleep
 * (lib/spin.c) runs and reads the deadline: that read once multiplied
 * tv_sec by 10^9, a signed overflow the UBSan build (CI's asan stage)
 * reports.
 */
static int far_results[2];
static int far_done;		/* sleeps returned */

static void *far_sleeper(void *arg)
{
	struct timespec far[2] = { { INT64_MAX, 0 }, { 0, 0 } };

	(void)arg;
	swait_deadline_after(&far[1], CLOCK_MONOTONIC, INT64_MAX);
	for (int i = 0; i < 2; i++) {
		swait_prepare(&h, &w1);
		far_results[i] = swait_sleep(&h, &w1, 0, CLOCK_MONOTONIC,
					     &far[i]);
		swait_finish(&h, &w1);
		TU_ADD(&far_done, 1);
	}
	return NULL;
}

static void test_sleep_deadline_far(void **state)
{
	pthread_t t;

	(void)state;
	tu_watchdog("sleep with a deadline centuries away");
	TU_SYNC_VAR(far_done);
	far_done = 0;
	far_results[0] = far_results[1] = -1;
	assert_int_equal(pthread_create(&t, NULL, far_sleeper, NULL), 0);
	for (int i = 0; i < 2; i++) {
		/* Sleep i is queued (perhaps still spinning): wake it. */
		assert_true(tu_poll(TU_LOAD(&far_done) == i &&
				    swait_active(&h)));
		swait_wake_one(&h);
		assert_true(tu_poll(TU_LOAD(&far_done) == i + 1));
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(far_results[0], 0);
	assert_int_equal(far_results[1], 0);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_deadline_after(void **state)
{
	struct timespec dl, before, after;
	long long b, a, d;

	(void)state;
	assert_int_equal(swait_deadline_after(&dl, CLOCK_PROCESS_CPUTIME_ID,
					      0), EINVAL);
	assert_int_equal(swait_deadline_after(&dl, CLOCK_MONOTONIC, -1),
			 EINVAL);

	/* 1.999999999 s forces a carry from tv_nsec into tv_sec. */
	clock_gettime(CLOCK_MONOTONIC, &before);
	assert_int_equal(swait_deadline_after(&dl, CLOCK_MONOTONIC,
					      1999999999LL), 0);
	clock_gettime(CLOCK_MONOTONIC, &after);
	assert_in_range(dl.tv_nsec, 0, 999999999);
	b = (long long)before.tv_sec * 1000000000LL + before.tv_nsec;
	a = (long long)after.tv_sec * 1000000000LL + after.tv_nsec;
	d = (long long)dl.tv_sec * 1000000000LL + dl.tv_nsec;
	assert_true(d >= b + 1999999999LL);
	assert_true(d <= a + 1999999999LL);

	clock_gettime(CLOCK_REALTIME, &before);
	assert_int_equal(swait_deadline_after(&dl, CLOCK_REALTIME, 0), 0);
	assert_in_range(dl.tv_nsec, 0, 999999999);
	assert_true(dl.tv_sec > before.tv_sec ||
		    (dl.tv_sec == before.tv_sec &&
		     dl.tv_nsec >= before.tv_nsec));
}

#define WITH_FIXTURE(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_FIXTURE(test_prepare_twice_keeps_place),
		WITH_FIXTURE(test_prepare_after_timeout_keeps_place),
		WITH_FIXTURE(test_prepare_after_wake_requeues),
		WITH_FIXTURE(test_active_and_has_sleeper),
		WITH_FIXTURE(test_finish_idle_is_noop),
		WITH_FIXTURE(test_finish_after_wake),
		WITH_FIXTURE(test_sleep_after_wake_returns_at_once),
		WITH_FIXTURE(test_sleep_einval),
		WITH_FIXTURE(test_sleep_einval_keeps_wake),
		WITH_FIXTURE(test_sleep_deadline_past),
		WITH_FIXTURE(test_sleep_deadline_future),
		WITH_FIXTURE(test_sleep_deadline_far),
		cmocka_unit_test(test_deadline_after),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
