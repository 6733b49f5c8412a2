// SPDX-License-Identifier: MIT
/*
 * debug.c - the debug checks: misuse that would corrupt a queue or lose a
 * wakeup aborts with a message naming the misuse, and an init that meets
 * memory not in use (garbage included) does not.  Death tests: each
 * misuse runs in a forked child whose stderr is captured; the child must
 * die of SIGABRT with the expected words in its message.
 *
 * Built with -DSWAIT_TEST_DEBUG_CHECKS=1 when the library has its checks
 * (Meson's debug_checks_on); otherwise every test here is skipped.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <swait/cond.h>

#include "tu_unit.h"

#ifndef SWAIT_TEST_DEBUG_CHECKS
#define SWAIT_TEST_DEBUG_CHECKS 0
#endif

#define CHILD_SECONDS 10

static void expect_death(void (*fn)(void *), void *arg,
			 const char *const *words)
{
	struct tu_child res;

	if (!SWAIT_TEST_DEBUG_CHECKS)
		skip();
	assert_int_equal(tu_run_child(fn, arg, CHILD_SECONDS, &res), 0);
	assert_true(tu_child_aborted(&res, words));
}

/* The same misuse-free sequence survives: the harness can tell. */
static void correct_use(void *arg)
{
	struct swait_head h1 = SWAIT_HEAD_INITIALIZER;
	struct swait_head h2 = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	static const struct timespec past = { 0, 0 };

	(void)arg;
	swait_prepare(&h1, &w);
	swait_finish(&h1, &w);
	swait_prepare(&h2, &w);
	swait_wake_one(&h2);
	tu_check(swait_sleep(&h2, &w, 0, CLOCK_MONOTONIC, &past) == 0);
	swait_finish(&h2, &w);
	tu_check(swait_head_destroy(&h1) == 0);
	tu_check(swait_head_destroy(&h2) == 0);
}

static void test_correct_use_survives(void **state)
{
	struct tu_child res;

	(void)state;
	if (!SWAIT_TEST_DEBUG_CHECKS)
		skip();
	assert_int_equal(tu_run_child(correct_use, NULL, CHILD_SECONDS, &res),
			 0);
	assert_true(tu_child_ok(&res, "correct use"));
}

static void prepare_on_two_heads(void *arg)
{
	struct swait_head h1 = SWAIT_HEAD_INITIALIZER;
	struct swait_head h2 = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	swait_prepare(&h1, &w);
	swait_prepare(&h2, &w);
}

static void test_prepare_on_second_head(void **state)
{
	static const char *const words[] = {
		"still queued on another head", NULL
	};

	(void)state;
	expect_death(prepare_on_two_heads, NULL, words);
}

/* A queued waiter's memory is reused; the next wake finds it. */
static void overwrite_queued(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter behind = SWAIT_WAITER_INITIALIZER;

	swait_prepare(&h, &w);
	swait_prepare(&h, &behind);
	memset(&w, *(int *)arg, sizeof(w));
	swait_wake_one(&h);
}

static void test_overwritten_waiter(void **state)
{
	static const char *const words[] = { "overwritten", "corrupted", NULL };
	int fill;

	(void)state;
	fill = 0x55;
	expect_death(overwrite_queued, &fill, words);
	fill = 0;
	expect_death(overwrite_queued, &fill, words);
	fill = 0xff;
	expect_death(overwrite_queued, &fill, words);
}

/* Only the magic word was lost: the links still look right. */
static void overwrite_magic_only(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	swait_prepare(&h, &w);
	w.group = 0;
	swait_wake_all(&h);
}

static void test_overwritten_magic(void **state)
{
	static const char *const words[] = { "overwritten", "corrupted", NULL };

	(void)state;
	expect_death(overwrite_magic_only, NULL, words);
}

static void sleep_unprepared(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	(void)swait_sleep(&h, &w, 0, CLOCK_MONOTONIC, NULL);
}

/* Prepared once, finished, then slept on again without a prepare. */
static void sleep_after_finish(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	swait_prepare(&h, &w);
	swait_finish(&h, &w);
	(void)swait_sleep(&h, &w, 0, CLOCK_MONOTONIC, NULL);
}

static void test_sleep_not_prepared(void **state)
{
	static const char *const words[] = { "not prepared", NULL };

	(void)state;
	expect_death(sleep_unprepared, NULL, words);
	expect_death(sleep_after_finish, NULL, words);
}

static void sleep_on_other_head(void *arg)
{
	struct swait_head h1 = SWAIT_HEAD_INITIALIZER;
	struct swait_head h2 = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	swait_prepare(&h1, &w);
	(void)swait_sleep(&h2, &w, 0, CLOCK_MONOTONIC, NULL);
}

static void finish_on_other_head(void *arg)
{
	struct swait_head h1 = SWAIT_HEAD_INITIALIZER;
	struct swait_head h2 = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	swait_prepare(&h1, &w);
	swait_finish(&h2, &w);
}

static void test_wrong_head(void **state)
{
	static const char *const words[] = { "another head", NULL };

	(void)state;
	expect_death(sleep_on_other_head, NULL, words);
	expect_death(finish_on_other_head, NULL, words);
}

static void single_call_on_group_node(void *arg)
{
	static struct swait_head a, b;
	struct swait_head *heads[2] = { &a, &b };
	struct swait_waiter w[2];
	int which = *(int *)arg;

	memset(w, 0, sizeof(w));
	swait_prepare_any(heads, 2, w);
	if (which == 0)
		(void)swait_sleep(&b, &w[1], 0, CLOCK_MONOTONIC, NULL);
	else if (which == 1)
		swait_finish(&a, &w[0]);
	else
		swait_prepare(&b, &w[1]);
}

static void test_group_node_misuse(void **state)
{
	static const char *const words[] = { "swait_wait_any() group", NULL };
	static int which[3] = { 0, 1, 2 };

	(void)state;
	for (int i = 0; i < 3; i++)
		expect_death(single_call_on_group_node, &which[i], words);
}

/*
 * Re-initialising in use: arg selects a head, a PI head, a completion with
 * a thread blocked in its wait, a group node's head, a condvar with a
 * thread blocked on it, or a queued waiter.
 */
static struct swait_completion reinit_comp;
static swait_cond_t reinit_cond = SWAIT_COND_INITIALIZER;
static pthread_mutex_t reinit_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *wait_comp(void *arg)
{
	(void)arg;
	swait_completion_wait(&reinit_comp);
	return NULL;
}

static void *wait_cond(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&reinit_mutex);
	for (;;)	/* nothing ever signals it: the child dies first */
		swait_cond_wait(&reinit_cond, &reinit_mutex);
	return NULL;
}

static void reinit_in_use(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_head pi = SWAIT_HEAD_PI_INITIALIZER;
	struct swait_head *heads[2] = { &h, &pi };
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER, g[2];
	pthread_t t;

	switch (*(int *)arg) {
	case 0:
		swait_prepare(&h, &w);
		swait_head_init(&h);
		break;
	case 1:
		swait_prepare(&pi, &w);
		swait_head_init_pi(&pi);
		break;
	case 2:
		swait_completion_init(&reinit_comp);
		tu_check(pthread_create(&t, NULL, wait_comp, NULL) == 0);
		while (!swait_active(&reinit_comp.wait))
			sched_yield();
		swait_completion_init(&reinit_comp);
		break;
	case 3:
		memset(g, 0, sizeof(g));
		swait_prepare_any(heads, 2, g);
		swait_head_init_pi(&pi);	/* g[1] is queued there */
		break;
	case 4:
		tu_check(pthread_create(&t, NULL, wait_cond, NULL) == 0);
		while (!swait_active(&reinit_cond.head))
			sched_yield();
		swait_cond_init(&reinit_cond, NULL);
		break;
	default:
		swait_prepare(&h, &w);
		swait_waiter_init(&w);
		break;
	}
}

static void test_reinit_in_use(void **state)
{
	static const char *const head_words[] = { "still has waiters", NULL };
	static const char *const waiter_words[] = { "still queued", NULL };
	static int which[6] = { 0, 1, 2, 3, 4, 5 };

	(void)state;
	for (int i = 0; i < 5; i++)
		expect_death(reinit_in_use, &which[i], head_words);
	expect_death(reinit_in_use, &which[5], waiter_words);
}

/*
 * What an init may meet that is not a head in use: garbage, links into
 * readable memory that does not link back, an unmapped address, a head
 * whose waiters have left, a copy of a head in use, a finished waiter, a
 * condvar of garbage or one whose waits are over.
 */
static void reinit_not_in_use(void *arg)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER, copy;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter decoy[2];
	static const struct timespec past = { 0, 0 };
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	swait_cond_t c;
	void *page;

	(void)arg;
	memset(&h, 0xa5, sizeof(h));
	swait_head_init(&h);
	memset(decoy, 0x5a, sizeof(decoy));
	h.list.next = &decoy[1].link;		/* readable, no link back */
	swait_head_init_pi(&h);
	page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	tu_check(page != MAP_FAILED);
	h.list.next = (struct swait_list *)page;	/* unreadable */
	swait_head_init(&h);
	h.list.next = (struct swait_list *)(uintptr_t)0x10;
	swait_head_init(&h);
	munmap(page, 4096);

	swait_prepare(&h, &w);
	memcpy(&copy, &h, sizeof(copy));	/* its waiter names h */
	swait_head_init(&copy);
	swait_finish(&h, &w);
	swait_head_init(&h);			/* the waiter has left */
	swait_waiter_init(&w);			/* finished: idle */
	memset(&w, 0xa5, sizeof(w));
	swait_waiter_init(&w);
	tu_check(swait_head_destroy(&h) == 0);

	/* A condvar: garbage, then decided by a wait that timed out. */
	memset(&c, 0xa5, sizeof(c));
	tu_check(swait_cond_init(&c, NULL) == 0);
	pthread_mutex_lock(&m);
	tu_check(swait_cond_timedwait(&c, &m, &past) == ETIMEDOUT);
	pthread_mutex_unlock(&m);
	tu_check(swait_cond_init(&c, NULL) == 0);
	tu_check(swait_cond_destroy(&c) == 0);
}

static void test_reinit_not_in_use_survives(void **state)
{
	struct tu_child res;

	(void)state;
	if (!SWAIT_TEST_DEBUG_CHECKS)
		skip();
	assert_int_equal(tu_run_child(reinit_not_in_use, NULL, CHILD_SECONDS,
				      &res), 0);
	assert_true(tu_child_ok(&res, "init of memory not in use"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_correct_use_survives),
		cmocka_unit_test(test_reinit_in_use),
		cmocka_unit_test(test_reinit_not_in_use_survives),
		cmocka_unit_test(test_prepare_on_second_head),
		cmocka_unit_test(test_overwritten_waiter),
		cmocka_unit_test(test_overwritten_magic),
		cmocka_unit_test(test_sleep_not_prepared),
		cmocka_unit_test(test_wrong_head),
		cmocka_unit_test(test_group_node_misuse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
