// SPDX-License-Identifier: MIT
/*
 * wake.c - swait_wake_one() and swait_wake_all(): which waiters they pick,
 * how many, in what order, and that an empty head is left alone.
 *
 * The threaded tests queue real sleepers in a known order: the main thread
 * starts the next thread only after the previous one has prepared (a flag
 * it sets after swait_prepare()), and wakes only after /proc shows them
 * asleep in the futex, so the FUTEX_WAKE path is the one exercised.
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

#define NTHREADS 5

static const struct timespec past = { 0, 0 };

static int poll_sleep(struct swait_head *h, struct swait_waiter *w)
{
	return swait_sleep(h, w, 0, CLOCK_MONOTONIC, &past);
}

struct sleeper {
	pthread_t thread;
	struct swait_head *head;
	int index;
	int tid;
	int prepared;
	int returned;
	int result;
	int payload_seen;
};

/* The order in which sleepers returned from their sleep. */
static int order[NTHREADS];
static int order_n;

/* Written (plainly) before a wake; a woken sleeper must see it (O3). */
static int payload;

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int r, pos;

	TU_STORE(&s->tid, (int)tu_gettid());
	swait_prepare(s->head, &w);
	TU_STORE(&s->prepared, 1);
	r = swait_sleep(s->head, &w, 0, CLOCK_MONOTONIC, NULL);
	s->payload_seen = payload;
	swait_finish(s->head, &w);
	pos = TU_ADD(&order_n, 1) - 1;
	if (pos < NTHREADS)
		__atomic_store_n(&order[pos], s->index, __ATOMIC_RELAXED);
	s->result = r;
	TU_STORE(&s->returned, 1);
	return NULL;
}

/* Start sleepers one at a time, each queued before the next starts. */
static void start_sleepers(struct sleeper *s, int n, struct swait_head *h)
{
	int i;

	memset(s, 0, sizeof(*s) * (size_t)n);
	order_n = 0;
	payload = 0;
	for (i = 0; i < n; i++) {
		s[i].head = h;
		s[i].index = i;
		assert_int_equal(pthread_create(&s[i].thread, NULL,
						sleeper_main, &s[i]), 0);
		assert_true(tu_poll(TU_LOAD(&s[i].prepared)));
	}
	for (i = 0; i < n; i++)
		assert_true(tu_wait_asleep((pid_t)TU_LOAD(&s[i].tid), h));
}

static int returned_count(const struct sleeper *s, int n)
{
	int i, c = 0;

	for (i = 0; i < n; i++)
		c += TU_LOAD(&s[i].returned);
	return c;
}

static void test_wake_empty_head(void **state)
{
	struct swait_head zero = SWAIT_HEAD_INITIALIZER;
	struct swait_head used = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)state;
	swait_wake_one(&zero);
	swait_wake_all(&zero);
	assert_false(swait_active(&zero));
	assert_int_equal(swait_head_destroy(&zero), 0);

	/* A head whose list was used and emptied (NULL links again). */
	swait_prepare(&used, &w);
	swait_finish(&used, &w);
	swait_wake_one(&used);
	swait_wake_all(&used);
	assert_int_equal(swait_head_destroy(&used), 0);

	/* Nothing is remembered: a waiter that comes later is not woken. */
	swait_prepare(&zero, &w);
	assert_int_equal(poll_sleep(&zero, &w), ETIMEDOUT);
	swait_finish(&zero, &w);
	swait_prepare(&used, &w);
	assert_int_equal(poll_sleep(&used, &w), ETIMEDOUT);
	swait_finish(&used, &w);
}

/* FIFO without threads: eight waiters, eight wakes, in queue order. */
static void test_wake_one_order_single_thread(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w[8];
	int i, j;

	(void)state;
	for (i = 0; i < 8; i++) {
		swait_waiter_init(&w[i]);
		swait_prepare(&h, &w[i]);
	}
	for (i = 0; i < 8; i++) {
		swait_wake_one(&h);
		for (j = i; j < 8; j++)
			assert_int_equal(poll_sleep(&h, &w[j]),
					 j == i ? 0 : ETIMEDOUT);
		swait_finish(&h, &w[i]);
	}
	assert_false(swait_active(&h));
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_wake_one_fifo_threads(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct sleeper s[NTHREADS];
	int i;

	(void)state;
	tu_watchdog("wake_one FIFO order");
	tu_test_phase("queueing");
	start_sleepers(s, NTHREADS, &h);
	for (i = 0; i < NTHREADS; i++) {
		tu_test_phase("waking one");
		payload = 100 + i;
		swait_wake_one(&h);
		/*
		 * returned is the sleeper's last store, after its order
		 * entry: once i + 1 have returned, order[i] is written.
		 */
		assert_true(tu_poll(returned_count(s, NTHREADS) >= i + 1));
		/* Exactly one returned per wake, and it was the oldest. */
		assert_int_equal(returned_count(s, NTHREADS), i + 1);
		assert_true(TU_LOAD(&s[i].returned));
		assert_int_equal(__atomic_load_n(&order[i], __ATOMIC_RELAXED),
				 i);
		assert_int_equal(s[i].payload_seen, 100 + i);
	}
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(pthread_join(s[i].thread, NULL), 0);
		assert_int_equal(s[i].result, 0);
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * One wake_one, one sleeper returns; the others stay asleep and queued.
 * Checked once the woken one has returned, so a stray second wake would
 * have had all the time it needs to show.
 */
static void test_wake_one_wakes_exactly_one(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct sleeper s[3];
	int i;

	(void)state;
	tu_watchdog("wake_one wakes exactly one");
	start_sleepers(s, 3, &h);
	swait_wake_one(&h);
	assert_int_equal(pthread_join(s[0].thread, NULL), 0);
	assert_int_equal(s[0].result, 0);
	for (i = 1; i < 3; i++)
		assert_true(tu_wait_asleep((pid_t)TU_LOAD(&s[i].tid), &h));
	assert_int_equal(returned_count(s, 3), 1);
	assert_true(swait_active(&h));

	tu_test_phase("releasing the rest");
	swait_wake_all(&h);
	for (i = 1; i < 3; i++) {
		assert_int_equal(pthread_join(s[i].thread, NULL), 0);
		assert_int_equal(s[i].result, 0);
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_wake_all_threads(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter late = SWAIT_WAITER_INITIALIZER;
	struct sleeper s[4];
	struct timespec dl;
	int i;

	(void)state;
	tu_watchdog("wake_all wakes the queued set");
	start_sleepers(s, 4, &h);
	payload = 7;
	swait_wake_all(&h);
	assert_false(swait_active(&h));

	/* Prepared after the wake_all: not woken by it. */
	swait_prepare(&h, &late);
	dl = tu_deadline(CLOCK_MONOTONIC, 20 * 1000000LL);
	assert_int_equal(swait_sleep(&h, &late, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	assert_true(swait_active(&h));
	swait_finish(&h, &late);

	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(s[i].thread, NULL), 0);
		assert_int_equal(s[i].result, 0);
		assert_int_equal(s[i].payload_seen, 7);
	}
	assert_int_equal(TU_LOAD(&order_n), 4);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/* wake_all without threads: the set queued at the call, nothing more. */
static void test_wake_all_single_thread(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w3 = SWAIT_WAITER_INITIALIZER;

	(void)state;
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_wake_all(&h);
	assert_false(swait_active(&h));
	swait_prepare(&h, &w3);
	assert_int_equal(poll_sleep(&h, &w1), 0);
	assert_int_equal(poll_sleep(&h, &w2), 0);
	assert_int_equal(poll_sleep(&h, &w3), ETIMEDOUT);
	swait_finish(&h, &w1);
	swait_finish(&h, &w2);
	swait_finish(&h, &w3);
	assert_int_equal(swait_head_destroy(&h), 0);

	/* A wake_one after a wake_all finds only later arrivals. */
	swait_prepare(&h, &w1);
	swait_wake_all(&h);
	swait_prepare(&h, &w2);
	swait_wake_one(&h);
	assert_false(swait_active(&h));
	assert_int_equal(poll_sleep(&h, &w1), 0);
	assert_int_equal(poll_sleep(&h, &w2), 0);
	swait_finish(&h, &w1);
	swait_finish(&h, &w2);
	assert_int_equal(swait_head_destroy(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_empty_head),
		cmocka_unit_test(test_wake_one_order_single_thread),
		cmocka_unit_test(test_wake_one_fifo_threads),
		cmocka_unit_test(test_wake_one_wakes_exactly_one),
		cmocka_unit_test(test_wake_all_threads),
		cmocka_unit_test(test_wake_all_single_thread),
	};

	TU_SYNC_VAR(order);	/* atomics Helgrind cannot see */

	return cmocka_run_group_tests(tests, NULL, NULL);
}
