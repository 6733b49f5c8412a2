// SPDX-License-Identifier: MIT
/*
 * any.c - swait_prepare_any(), swait_wait_any() and swait_finish_any():
 * which head ended a wait, what happens to the other nodes, and that a
 * wake_one the group no longer needs is passed on (lib/swait.c, G1-G5).
 *
 * Most cases run on one thread: a wake that comes between the prepare and
 * the wait is what the wait must report, and a past deadline turns the
 * wait into a poll ("was this group woken?").  The threaded case wakes a
 * thread that /proc shows asleep in the futex, so the FUTEX_WAKE on the
 * shared word is exercised.
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

#define NH 3

static const struct timespec past = { 0, 0 };
static struct swait_head h[NH];
static struct swait_head *heads[NH] = { &h[0], &h[1], &h[2] };
static struct swait_waiter w[NH];

static void reset(void)
{
	for (int i = 0; i < NH; i++) {
		swait_head_init(&h[i]);
		swait_waiter_init(&w[i]);
	}
}

static int poll_any(unsigned *which)
{
	return swait_wait_any(heads, NH, w, 0, CLOCK_MONOTONIC, &past, which);
}

static int poll_single(struct swait_head *hd, struct swait_waiter *ws)
{
	return swait_sleep(hd, ws, 0, CLOCK_MONOTONIC, &past);
}

static void all_destroyable(void)
{
	for (int i = 0; i < NH; i++)
		assert_int_equal(swait_head_destroy(&h[i]), 0);
}

static void test_bad_arguments(void **state)
{
	struct timespec bad = { 0, 1000000000L };
	unsigned which;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	assert_int_equal(swait_wait_any(heads, 0, w, 0, CLOCK_MONOTONIC,
					&past, &which), EINVAL);
	assert_int_equal(swait_wait_any(heads, SWAIT_ANY_MAX + 1, w, 0,
					CLOCK_MONOTONIC, &past, &which),
			 EINVAL);
	assert_int_equal(swait_wait_any(heads, NH, w, 0x100, CLOCK_MONOTONIC,
					&past, &which), EINVAL);
	assert_int_equal(swait_wait_any(heads, NH, w, 0, CLOCK_PROCESS_CPUTIME_ID,
					&past, &which), EINVAL);
	assert_int_equal(swait_wait_any(heads, NH, w, 0, CLOCK_MONOTONIC,
					&bad, &which), EINVAL);
	/* None of that changed the group: still queued everywhere. */
	for (int i = 0; i < NH; i++)
		assert_true(swait_active(&h[i]));
	swait_finish_any(heads, NH, w);
	all_destroyable();
}

static void test_timeout_dequeues_all(void **state)
{
	unsigned which = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	for (int i = 0; i < NH; i++)
		assert_true(swait_active(&h[i]));
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	assert_int_equal(which, 99);	/* untouched unless woken */
	swait_finish_any(heads, NH, w);
	for (int i = 0; i < NH; i++)
		assert_false(swait_active(&h[i]));
	all_destroyable();
	/* The waiters are idle again: usable as single waiters. */
	swait_prepare(&h[1], &w[1]);
	swait_finish(&h[1], &w[1]);
}

static void test_wake_before_wait(void **state)
{
	(void)state;
	for (unsigned k = 0; k < NH; k++) {
		unsigned which = 99;

		reset();
		swait_prepare_any(heads, NH, w);
		swait_wake_one(&h[k]);
		assert_false(swait_active(&h[k]));	/* node k dequeued */
		assert_int_equal(poll_any(&which), 0);
		assert_int_equal(which, k);
		swait_finish_any(heads, NH, w);
		all_destroyable();
	}
}

static void test_lowest_index_wins(void **state)
{
	unsigned which = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_wake_all(&h[2]);
	swait_wake_one(&h[1]);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 1);
	swait_finish_any(heads, NH, w);
	all_destroyable();
}

/*
 * A single waiter queued behind the group's node on a head: the group's
 * node is selected by a wake_one after another head ended the wait, so
 * finish_any must pass that wake on to the single waiter (G5).
 */
static void test_unneeded_wake_one_passed_on(void **state)
{
	struct swait_waiter single = SWAIT_WAITER_INITIALIZER;
	unsigned which = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[2], &single);		/* behind node 2 */
	swait_wake_one(&h[0]);			/* ends the wait */
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 0);
	swait_wake_one(&h[2]);			/* selects node 2, not single */
	assert_int_equal(poll_single(&h[2], &single), ETIMEDOUT);
	swait_finish_any(heads, NH, w);		/* passes it on */
	assert_int_equal(poll_single(&h[2], &single), 0);
	swait_finish(&h[2], &single);
	all_destroyable();
}

/* The same after a timeout: no wake of the group was consumed at all. */
static void test_wake_after_timeout_passed_on(void **state)
{
	struct swait_waiter single = SWAIT_WAITER_INITIALIZER;
	unsigned which;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[0], &single);
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	swait_wake_one(&h[0]);			/* selects node 0 */
	swait_finish_any(heads, NH, w);
	assert_int_equal(poll_single(&h[0], &single), 0);
	swait_finish(&h[0], &single);
	all_destroyable();
}

/* The consumed wake is not passed on, and wake_all is never passed on. */
static void test_consumed_and_wake_all_not_passed_on(void **state)
{
	struct swait_waiter s0 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter s1 = SWAIT_WAITER_INITIALIZER;
	unsigned which;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[0], &s0);
	swait_wake_one(&h[0]);			/* node 0: consumed below */
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 0);
	swait_prepare(&h[1], &s1);
	swait_wake_all(&h[1]);			/* node 1 and s1 */
	swait_finish_any(heads, NH, w);
	assert_int_equal(poll_single(&h[0], &s0), ETIMEDOUT);
	assert_int_equal(poll_single(&h[1], &s1), 0);
	swait_finish(&h[0], &s0);
	swait_finish(&h[1], &s1);
	all_destroyable();
}

/*
 * A second prepare_any re-queues the woken node and consumes its wake
 * (G2): the next wait must not return at once for it.  Nodes still queued
 * keep their places: a single waiter queued after the first prepare stays
 * behind node 2.
 */
static void test_reprepare_consumes_and_keeps_places(void **state)
{
	struct swait_waiter single = SWAIT_WAITER_INITIALIZER;
	unsigned which;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[2], &single);
	swait_wake_one(&h[1]);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 1);
	swait_prepare_any(heads, NH, w);
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	swait_wake_one(&h[2]);			/* node 2 is still first */
	assert_int_equal(poll_single(&h[2], &single), ETIMEDOUT);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 2);
	swait_finish_any(heads, NH, w);		/* consumed: not passed on */
	assert_int_equal(poll_single(&h[2], &single), ETIMEDOUT);
	swait_finish(&h[2], &single);
	all_destroyable();
}

/*
 * Two heads' wakes selected the group; the wait reports one.  The other
 * may stand for a second piece of work: a caller that takes one and leaves
 * must not strand it, so the next prepare passes it on (G5).
 */
static void test_reprepare_passes_on_unreported(void **state)
{
	struct swait_waiter single = SWAIT_WAITER_INITIALIZER;
	unsigned which;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[2], &single);		/* behind node 2 */
	swait_wake_one(&h[0]);
	swait_wake_one(&h[2]);			/* selects node 2 */
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 0);
	assert_int_equal(poll_single(&h[2], &single), ETIMEDOUT);
	swait_prepare_any(heads, NH, w);	/* node 2 re-queued behind */
	assert_int_equal(poll_single(&h[2], &single), 0);
	swait_finish(&h[2], &single);
	/* The passed-on wake did not come back to the group. */
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	swait_finish_any(heads, NH, w);
	all_destroyable();
}

/* PI and ordinary heads mix; n == 1 works. */
static void test_pi_heads_and_one_head(void **state)
{
	unsigned which = 99;

	(void)state;
	reset();
	swait_head_init_pi(&h[1]);
	swait_prepare_any(heads, NH, w);
	swait_wake_one(&h[1]);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 1);
	swait_finish_any(heads, NH, w);
	all_destroyable();

	swait_prepare_any(heads, 1, w);
	assert_int_equal(swait_wait_any(heads, 1, w, 0, CLOCK_MONOTONIC,
					&past, &which), ETIMEDOUT);
	swait_wake_one(&h[0]);
	assert_int_equal(swait_wait_any(heads, 1, w, 0, CLOCK_MONOTONIC,
					&past, &which), 0);
	assert_int_equal(which, 0);
	swait_finish_any(heads, 1, w);
	all_destroyable();
}

/* ---------------------------------------------------- a real sleeper */

static struct {
	int tid;
	int prepared;
	int returned;
	int result;
	unsigned which;
	int payload_seen;
} sl;
static int payload;

static void *any_sleeper(void *arg)
{
	struct swait_waiter ws[NH];
	int r;

	(void)arg;
	memset(ws, 0, sizeof(ws));
	TU_STORE(&sl.tid, (int)tu_gettid());
	swait_prepare_any(heads, NH, ws);
	TU_STORE(&sl.prepared, 1);
	r = swait_wait_any(heads, NH, ws, 0, CLOCK_MONOTONIC, NULL,
			   &sl.which);
	sl.payload_seen = payload;
	swait_finish_any(heads, NH, ws);
	sl.result = r;
	TU_STORE(&sl.returned, 1);
	return NULL;
}

/*
 * asym: h[1] is an asymmetric head (lib/asym.c), the others are not, and
 * h[0] gets the wake_all that h[1] gets otherwise.
 */
static void run_sleeper_woken_by_any_head(bool asym)
{
	for (unsigned k = 0; k < NH; k++) {
		pthread_t t;

		reset();
		if (asym)
			assert_int_equal(swait_head_init_asym(&h[1]), 0);
		memset(&sl, 0, sizeof(sl));
		tu_watchdog("a wait_any sleeper woken by one head");
		assert_int_equal(pthread_create(&t, NULL, any_sleeper, NULL),
				 0);
		assert_true(tu_poll(TU_LOAD(&sl.prepared)));
		assert_true(tu_wait_asleep((pid_t)TU_LOAD(&sl.tid), &h[k]));
		payload = (int)k + 100;	/* published by the wake (O3) */
		if (k == (asym ? 0u : 1u))
			swait_wake_all(&h[k]);
		else
			swait_wake_one(&h[k]);
		assert_true(tu_poll(TU_LOAD(&sl.returned)));
		assert_int_equal(pthread_join(t, NULL), 0);
		tu_watchdog_done();
		assert_int_equal(sl.result, 0);
		assert_int_equal(sl.which, k);
		assert_int_equal(sl.payload_seen, (int)k + 100);
		all_destroyable();
	}
}

static void test_sleeper_woken_by_any_head(void **state)
{
	(void)state;
	run_sleeper_woken_by_any_head(false);
}

/*
 * One membarrier() for the group's prepare, and a fence-less wake_one
 * (<swait.h>'s inline half, then the library's) on the asymmetric head.
 */
static void test_sleeper_woken_by_any_head_asym(void **state)
{
	(void)state;
	run_sleeper_woken_by_any_head(true);
}

/*
 * A waiter is idle once swait_finish() returns and may serve again, as
 * node 0 of a group too.  A single wait leaves a tag in the field that is
 * node 0's group word, which once read as nodes woken: the group's waits
 * returned 0 at once, forever, past their deadline.
 */
static void test_node0_after_single_waits(void **state)
{
	(void)state;
	reset();
	/* Its single waits ended by a wake, then by a timeout. */
	for (int woken = 1; woken >= 0; woken--) {
		unsigned which = 99;

		swait_prepare(&h[0], &w[0]);
		if (woken)
			swait_wake_one(&h[0]);
		assert_int_equal(poll_single(&h[0], &w[0]),
				 woken ? 0 : ETIMEDOUT);
		swait_finish(&h[0], &w[0]);
		swait_prepare_any(heads, NH, w);
		assert_int_equal(poll_any(&which), ETIMEDOUT);
		assert_int_equal(which, 99);
		swait_wake_one(&h[2]);
		assert_int_equal(poll_any(&which), 0);
		assert_int_equal(which, 2);
		swait_finish_any(heads, NH, w);
	}
	all_destroyable();
}

/*
 * Two waits with no prepare between them: the second report is the one
 * consumed.  The index was OR-ed in, so reports of node 1 then node 0
 * (indexes 2 | 1) named node 2, whose wake finish_any then took as
 * consumed and did not pass on to the waiter queued behind it.
 */
static void test_rewait_consumes_last_report(void **state)
{
	struct swait_waiter behind = SWAIT_WAITER_INITIALIZER;
	unsigned first = 99, second = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_prepare(&h[2], &behind);		/* queued after node 2 */
	swait_wake_one(&h[1]);
	assert_int_equal(poll_any(&first), 0);
	assert_int_equal(first, 1);
	swait_wake_one(&h[0]);
	assert_int_equal(poll_any(&second), 0);
	assert_int_equal(second, 0);
	swait_wake_one(&h[2]);			/* node 2: never reported */
	swait_finish_any(heads, NH, w);
	assert_int_equal(poll_single(&h[2], &behind), 0);	/* passed on */
	swait_finish(&h[2], &behind);
	all_destroyable();
}

/* Cancelled in the wait: every node leaves its head (I4 for groups). */
static void test_cancel_dequeues(void **state)
{
	pthread_t t;
	void *ret;

	(void)state;
	reset();
	memset(&sl, 0, sizeof(sl));
	tu_watchdog("cancel a wait_any sleeper");
	assert_int_equal(pthread_create(&t, NULL, any_sleeper, NULL), 0);
	assert_true(tu_poll(TU_LOAD(&sl.prepared)));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&sl.tid), &h[0]));
	assert_int_equal(pthread_cancel(t), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	tu_watchdog_done();
	assert_ptr_equal(ret, PTHREAD_CANCELED);
	all_destroyable();
}

/*
 * Destroy after a wake_all that woke a group (swait.h, Lifetime): the
 * group's next swait_prepare_any() queues its node on the head again
 * before it leaves it, while a waiter woken by the same wake_all destroys
 * the head.  Destroy waits for the group to leave; it must then see the
 * node queued and say EBUSY (the destroyer retries), never 0 with a
 * waiter queued, after which the group's finish would lock a freed head.
 */
static struct swait_head *requeue_a;
static int requeue_go, requeue_ready, requeue_bad;

static void *requeue_group(void *arg)
{
	struct swait_head *hs[2] = { requeue_a, &h[1] };
	struct swait_waiter ws[2] = { SWAIT_WAITER_INITIALIZER,
				      SWAIT_WAITER_INITIALIZER };
	unsigned which;

	(void)arg;
	for (;;) {
		swait_prepare_any(hs, 2, ws);
		TU_ADD(&requeue_ready, 1);
		if (TU_LOAD(&requeue_go))
			break;
		(void)swait_wait_any(hs, 2, ws, 0, CLOCK_MONOTONIC, NULL,
				     &which);
	}
	swait_finish_any(hs, 2, ws);
	return NULL;
}

static void *requeue_destroyer(void *arg)
{
	struct swait_waiter ws = SWAIT_WAITER_INITIALIZER;
	struct swait_head *a = requeue_a;
	int r;

	(void)arg;
	swait_prepare(a, &ws);
	TU_ADD(&requeue_ready, 1);
	while (!TU_LOAD(&requeue_go)) {
		(void)swait_sleep(a, &ws, 0, CLOCK_MONOTONIC, NULL);
		swait_prepare(a, &ws);
	}
	swait_finish(a, &ws);
	while ((r = swait_head_destroy(a)) == EBUSY)
		sched_yield();
	if (r != 0 || swait_active(a))
		TU_ADD(&requeue_bad, 1);	/* 0 with a node queued */
	return NULL;
}

static void test_destroy_sees_requeued_group(void **state)
{
	long n = tu_scale(2000);

	(void)state;
	tu_watchdog("destroy after a group queued again");
	swait_head_init(&h[1]);
	for (long i = 0; i < n; i++) {
		struct swait_head a;
		pthread_t g, d;

		if (i & 1)
			swait_head_init_pi(&a);
		else
			swait_head_init(&a);
		requeue_a = &a;
		TU_STORE(&requeue_go, 0);
		TU_STORE(&requeue_ready, 0);
		assert_int_equal(pthread_create(&g, NULL, requeue_group,
						NULL), 0);
		assert_int_equal(pthread_create(&d, NULL, requeue_destroyer,
						NULL), 0);
		assert_true(tu_poll(TU_LOAD(&requeue_ready) >= 2));
		TU_STORE(&requeue_go, 1);
		swait_wake_all(&a);
		assert_int_equal(pthread_join(g, NULL), 0);
		assert_int_equal(pthread_join(d, NULL), 0);
	}
	tu_watchdog_done();
	assert_int_equal(TU_LOAD(&requeue_bad), 0);
	assert_int_equal(swait_head_destroy(&h[1]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_timeout_dequeues_all),
		cmocka_unit_test(test_wake_before_wait),
		cmocka_unit_test(test_lowest_index_wins),
		cmocka_unit_test(test_unneeded_wake_one_passed_on),
		cmocka_unit_test(test_wake_after_timeout_passed_on),
		cmocka_unit_test(test_consumed_and_wake_all_not_passed_on),
		cmocka_unit_test(test_reprepare_consumes_and_keeps_places),
		cmocka_unit_test(test_reprepare_passes_on_unreported),
		cmocka_unit_test(test_pi_heads_and_one_head),
		cmocka_unit_test(test_sleeper_woken_by_any_head),
		cmocka_unit_test(test_sleeper_woken_by_any_head_asym),
		cmocka_unit_test(test_node0_after_single_waits),
		cmocka_unit_test(test_rewait_consumes_last_report),
		cmocka_unit_test(test_cancel_dequeues),
		cmocka_unit_test(test_destroy_sees_requeued_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
