// SPDX-License-Identifier: MIT
/*
 * time64.c - timed waits mean what they say on every ABI.
 *
 * On 32-bit ABIs built with a 64-bit time_t (_TIME_BITS=64, the default of
 * new 32-bit Debian builds since the time64 transition) the library used to
 * hand its 64-bit struct timespec to SYS_futex, which reads two 32-bit
 * fields: every timed wait returned ETIMEDOUT at once.  Here each timed
 * entry point must sleep a whole 100 ms deadline on both clocks; a deadline
 * past 2038 must still wait for its wake; and swait_deadline_after() must
 * saturate instead of wrapping a 32-bit time_t into 1901.
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

#define MS 1000000LL

static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

static void expect_timeout(const char *what, clockid_t clock,
			   const struct timespec *dl, int r)
{
	bool late = tu_reached(clock, dl);

	if (r != ETIMEDOUT || !late)
		print_error("%s, clock %d: returned %d, %s the deadline\n",
			    what, (int)clock, r, late ? "after" : "before");
	assert_int_equal(r, ETIMEDOUT);
	assert_true(late);
}

static struct timespec in_100ms(clockid_t clock)
{
	struct timespec dl;

	assert_int_equal(swait_deadline_after(&dl, clock, 100 * MS), 0);
	return dl;
}

static void test_100ms_is_100ms(void **state)
{
	struct swait_head a = SWAIT_HEAD_INITIALIZER;
	struct swait_head b = SWAIT_HEAD_PI_INITIALIZER;
	struct swait_head *heads[2] = { &a, &b };
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER, g[2];
	struct timespec dl;
	unsigned which;
	int r;

	(void)state;
	tu_watchdog("100 ms deadlines");
	for (unsigned i = 0; i < 2; i++) {
		clockid_t clock = clocks[i];

		dl = in_100ms(clock);
		swait_prepare(&a, &w);
		r = swait_sleep(&a, &w, 0, clock, &dl);
		swait_finish(&a, &w);
		expect_timeout("swait_sleep", clock, &dl, r);

		dl = in_100ms(clock);
		r = swait_event_timeout(&b, false, clock, &dl);
		expect_timeout("swait_event_timeout", clock, &dl, r);

		dl = in_100ms(clock);
		r = swait_completion_wait_timeout(&c, clock, &dl);
		expect_timeout("swait_completion_wait_timeout", clock, &dl, r);

		dl = in_100ms(clock);
		memset(g, 0, sizeof(g));
		swait_prepare_any(heads, 2, g);
		r = swait_wait_any(heads, 2, g, 0, clock, &dl, &which);
		swait_finish_any(heads, 2, g);
		expect_timeout("swait_wait_any", clock, &dl, r);
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&a), 0);
	assert_int_equal(swait_head_destroy(&b), 0);
}

/* The waker: once the main thread sleeps, sets the flag and wakes. */
static struct swait_head far_head;
static int far_flag;

static void *wake_far(void *arg)
{
	pid_t tid = *(pid_t *)arg;

	if (tu_wait_asleep(tid, &far_head)) {
		TU_STORE(&far_flag, 1);
		swait_wake_one(&far_head);
	}
	return NULL;
}

/*
 * A deadline in 2106 (past 2^32 seconds) on both clocks: the wait must
 * sleep until the wake, not time out at once nor be refused.  Only with a
 * 64-bit time_t, the only kind that can say 2106.
 */
static void test_deadline_past_2038(void **state)
{
	pid_t self = tu_gettid();
	struct timespec dl;
	pthread_t t;
	int r;

	(void)state;
	if (sizeof(time_t) < 8)
		skip();
	tu_watchdog("a deadline in 2106");
	for (unsigned i = 0; i < 2; i++) {
		dl.tv_sec = (time_t)((int64_t)1 << 32);
		dl.tv_nsec = 0;
		TU_STORE(&far_flag, 0);
		assert_int_equal(pthread_create(&t, NULL, wake_far, &self), 0);
		r = swait_event_timeout(&far_head, TU_LOAD(&far_flag),
					clocks[i], &dl);
		assert_int_equal(pthread_join(t, NULL), 0);
		if (r != 0)
			print_error("clock %d: returned %d, not woken\n",
				    (int)clocks[i], r);
		assert_int_equal(r, 0);
	}
	tu_watchdog_done();
}

/* The largest offset saturates at the largest time_t, never wraps. */
static void test_deadline_after_saturates(void **state)
{
	struct timespec now, dl;

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		clock_gettime(clocks[i], &now);
		assert_int_equal(swait_deadline_after(&dl, clocks[i],
						      INT64_MAX), 0);
		assert_true(dl.tv_sec > now.tv_sec);
		assert_in_range(dl.tv_nsec, 0, 999999999);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_100ms_is_100ms),
		cmocka_unit_test(test_deadline_past_2038),
		cmocka_unit_test(test_deadline_after_saturates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
