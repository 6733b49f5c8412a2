// SPDX-License-Identifier: MIT
/*
 * completion.c - completions: events are counted, complete() wakes one
 * waiter, complete_all() releases every present and future waiter until
 * reinit, and an on-stack completion may be freed as soon as its wait
 * returns (the kernel's thread-start handshake).
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

static const struct timespec past = { 0, 0 };

#define NEVENTS 5

static void test_try_wait_and_done(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;

	(void)state;
	assert_false(swait_completion_done(&c));
	assert_false(swait_completion_try_wait(&c));
	swait_complete(&c);
	/* done() does not consume. */
	assert_true(swait_completion_done(&c));
	assert_true(swait_completion_done(&c));
	assert_true(swait_completion_try_wait(&c));
	assert_false(swait_completion_done(&c));
	assert_false(swait_completion_try_wait(&c));
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

static void test_n_completes_n_waits(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	int i;

	(void)state;
	tu_watchdog("N completes, N waits");
	for (i = 0; i < NEVENTS; i++)
		swait_complete(&c);
	/* Each wait consumes one event without blocking. */
	for (i = 0; i < NEVENTS; i++) {
		assert_true(swait_completion_done(&c));
		if (i % 3 == 0)
			swait_completion_wait(&c);
		else if (i % 3 == 1)
			assert_int_equal(swait_completion_wait_timeout(&c,
						CLOCK_MONOTONIC, &past), 0);
		else
			assert_int_equal(
				swait_completion_wait_interruptible(&c), 0);
	}
	assert_false(swait_completion_done(&c));
	assert_false(swait_completion_try_wait(&c));
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_REALTIME,
						       &past), ETIMEDOUT);

	/* And the N+1th try_wait fails after N try_waits too. */
	for (i = 0; i < NEVENTS; i++)
		swait_complete(&c);
	for (i = 0; i < NEVENTS; i++)
		assert_true(swait_completion_try_wait(&c));
	assert_false(swait_completion_try_wait(&c));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

static void test_wait_timeout(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	struct timespec dl, bad = { 0, 1000000000L }, neg = { -1, 0 };

	(void)state;
	tu_watchdog("completion wait timeout");
	dl = tu_deadline(CLOCK_MONOTONIC, 20 * 1000000LL);
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_MONOTONIC,
						       &dl), ETIMEDOUT);
	assert_true(tu_reached(CLOCK_MONOTONIC, &dl));
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_MONOTONIC,
						       &neg), ETIMEDOUT);
	assert_int_equal(swait_head_destroy(&c.wait), 0);

	/* EINVAL for bad input, even when an event is there to take. */
	swait_complete(&c);
	assert_int_equal(swait_completion_wait_timeout(&c,
				CLOCK_PROCESS_CPUTIME_ID, &past), EINVAL);
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_MONOTONIC,
						       &bad), EINVAL);
	bad.tv_nsec = -1;
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_REALTIME,
						       &bad), EINVAL);
	/* Nothing was consumed by the refusals. */
	assert_true(swait_completion_done(&c));
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_MONOTONIC,
						       &neg), 0);
	assert_false(swait_completion_done(&c));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

/*
 * swait_completion_wait_for(): a relative timeout on CLOCK_MONOTONIC.  0
 * is a poll, a negative ns is EINVAL with nothing consumed, and an event
 * posted while it sleeps ends it (the thread case below).
 */
static void test_wait_for(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	long long t0;

	(void)state;
	tu_watchdog("completion wait_for");
	/* ns == 0: a deadline already past: ETIMEDOUT, or 0 with an event. */
	assert_int_equal(swait_completion_wait_for(&c, 0), ETIMEDOUT);
	swait_complete(&c);
	assert_int_equal(swait_completion_wait_for(&c, -1), EINVAL);
	assert_int_equal(swait_completion_wait_for(&c, INT64_MIN), EINVAL);
	assert_true(swait_completion_done(&c));	/* EINVAL consumed none */
	assert_int_equal(swait_completion_wait_for(&c, 0), 0);
	assert_false(swait_completion_done(&c));	/* 0 consumed it */
	assert_int_equal(swait_completion_wait_for(&c, 0), ETIMEDOUT);
	/* A real timeout: not before ns has passed. */
	t0 = tu_now_ns();
	assert_int_equal(swait_completion_wait_for(&c, 20 * 1000000LL),
			 ETIMEDOUT);
	assert_true(tu_now_ns() - t0 >= 20 * 1000000LL);
	/* The longest timeout saturates: still valid, an event returns 0. */
	swait_complete(&c);
	assert_int_equal(swait_completion_wait_for(&c, INT64_MAX), 0);
	/* complete_all: done for every later wait. */
	swait_complete_all(&c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(swait_completion_wait_for(&c, 0), 0);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

static struct {
	int tid;
	int result;
	int returned;
} wf;

static void *wait_for_main(void *arg)
{
	struct swait_completion *c = arg;

	TU_STORE(&wf.tid, (int)tu_gettid());
	/* A minute: only the complete can end it in time. */
	wf.result = swait_completion_wait_for(c, 60 * 1000000000LL);
	TU_STORE(&wf.returned, 1);
	return NULL;
}

static void test_wait_for_woken(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	pthread_t t;

	(void)state;
	memset(&wf, 0, sizeof(wf));
	tu_watchdog("completion wait_for woken by a complete");
	assert_int_equal(pthread_create(&t, NULL, wait_for_main, &c), 0);
	assert_true(tu_poll(TU_LOAD(&wf.tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&wf.tid), &c.wait));
	swait_complete(&c);
	assert_true(tu_poll(TU_LOAD(&wf.returned)));
	assert_int_equal(pthread_join(t, NULL), 0);
	tu_watchdog_done();
	assert_int_equal(wf.result, 0);
	assert_false(swait_completion_done(&c));	/* consumed */
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

struct comp_waiter {
	pthread_t thread;
	struct swait_completion *c;
	int tid;
	int done;
};

static void *comp_waiter_main(void *arg)
{
	struct comp_waiter *w = arg;

	TU_STORE(&w->tid, (int)tu_gettid());
	swait_completion_wait(w->c);
	TU_STORE(&w->done, 1);
	return NULL;
}

static void start_comp_waiters(struct comp_waiter *w, int n,
			       struct swait_completion *c)
{
	int i;

	memset(w, 0, sizeof(*w) * (size_t)n);
	for (i = 0; i < n; i++) {
		w[i].c = c;
		assert_int_equal(pthread_create(&w[i].thread, NULL,
						comp_waiter_main, &w[i]), 0);
		assert_true(tu_poll(TU_LOAD(&w[i].tid) != 0));
		assert_true(tu_wait_asleep((pid_t)TU_LOAD(&w[i].tid),
					   &c->wait));
	}
}

/* One complete() releases exactly one sleeper, the oldest. */
static void test_complete_wakes_one(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	struct comp_waiter w[2];

	(void)state;
	tu_watchdog("complete wakes one");
	start_comp_waiters(w, 2, &c);
	swait_complete(&c);
	assert_int_equal(pthread_join(w[0].thread, NULL), 0);
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&w[1].tid), &c.wait));
	assert_false(TU_LOAD(&w[1].done));
	assert_false(swait_completion_done(&c));	/* w[0] took it */
	swait_complete(&c);
	assert_int_equal(pthread_join(w[1].thread, NULL), 0);
	assert_false(swait_completion_try_wait(&c));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

static void test_complete_all(void **state)
{
	struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
	struct comp_waiter w[3];
	int i;

	(void)state;
	tu_watchdog("complete_all");
	start_comp_waiters(w, 3, &c);
	swait_complete_all(&c);
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_join(w[i].thread, NULL), 0);

	/* Future waits return too, and consume nothing. */
	for (i = 0; i < 10; i++) {
		swait_completion_wait(&c);
		assert_true(swait_completion_try_wait(&c));
		assert_true(swait_completion_done(&c));
		assert_int_equal(swait_completion_wait_timeout(&c,
					CLOCK_MONOTONIC, &past), 0);
		assert_int_equal(swait_completion_wait_interruptible(&c), 0);
	}
	/* complete() after complete_all() keeps it done for everyone. */
	swait_complete(&c);
	swait_completion_wait(&c);
	swait_completion_wait(&c);
	assert_true(swait_completion_done(&c));
	assert_int_equal(swait_head_destroy(&c.wait), 0);

	/* reinit: not done again, and counts from zero. */
	swait_completion_reinit(&c);
	assert_false(swait_completion_done(&c));
	assert_false(swait_completion_try_wait(&c));
	assert_int_equal(swait_completion_wait_timeout(&c, CLOCK_MONOTONIC,
						       &past), ETIMEDOUT);
	swait_complete(&c);
	assert_true(swait_completion_try_wait(&c));
	assert_false(swait_completion_try_wait(&c));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&c.wait), 0);
}

/*
 * The thread-start handshake: the parent's completion lives in its stack
 * frame; the child completes it and the parent returns at once, so that
 * frame is reused by the next iteration (and scribbled over) while the
 * child may still be inside swait_complete().  A completer that touched
 * the completion after its wait returned would corrupt the next
 * iteration's completion, which lives at the same address: a stray
 * increment would end that wait before its child has started, which the
 * started check catches.
 */
struct handshake {
	struct swait_completion c;
	long id;
};

static long started;

static void *child_main(void *arg)
{
	struct handshake *hs = arg;

	__atomic_store_n(&started, hs->id, __ATOMIC_RELAXED);
	swait_complete(&hs->c);
	return NULL;
}

static __attribute__((noinline)) int handshake_once(pthread_t *child,
						    long id, long *seen)
{
	struct handshake hs = { SWAIT_COMPLETION_INITIALIZER, id };
	int err;

	err = pthread_create(child, NULL, child_main, &hs);
	if (err != 0)
		return err;
	swait_completion_wait(&hs.c);
	*seen = __atomic_load_n(&started, __ATOMIC_RELAXED);
	return 0;
}

/* Reuse the stack where the completion was, as the next caller would. */
static __attribute__((noinline)) void scribble_stack(void)
{
	volatile unsigned char junk[256];
	size_t i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

static void test_on_stack_handshake(void **state)
{
	long i, seen, n = tu_scale(300);
	pthread_t child, prev;

	(void)state;
	tu_watchdog("on-stack completion handshake");
	assert_int_equal(handshake_once(&prev, 1, &seen), 0);
	assert_int_equal(seen, 1);
	for (i = 2; i <= n; i++) {
		tu_watchdog_round(i);
		assert_int_equal(handshake_once(&child, i, &seen), 0);
		assert_int_equal(seen, i);
		if (i & 1)
			scribble_stack();
		/* The previous child may still be leaving swait_complete(). */
		assert_int_equal(pthread_join(prev, NULL), 0);
		prev = child;
	}
	assert_int_equal(pthread_join(prev, NULL), 0);
	tu_watchdog_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_try_wait_and_done),
		cmocka_unit_test(test_n_completes_n_waits),
		cmocka_unit_test(test_wait_timeout),
		cmocka_unit_test(test_wait_for),
		cmocka_unit_test(test_wait_for_woken),
		cmocka_unit_test(test_complete_wakes_one),
		cmocka_unit_test(test_complete_all),
		cmocka_unit_test(test_on_stack_handshake),
	};

	TU_SYNC_VAR(started);	/* atomics Helgrind cannot see */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
