// SPDX-License-Identifier: MIT
/*
 * head.c - heads and waiters as objects: sizes, every way of initialising
 * them (including none at all), and swait_head_destroy().
 *
 * Single-threaded and deterministic: a sleep with a deadline already past
 * returns 0 exactly when the waiter was woken and ETIMEDOUT when it was
 * not, so "who did the wake select?" is observable without threads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deny.h"
#include "tu_unit.h"

static const struct timespec past = { 0, 0 };

/* Whether w was woken: a sleep with a past deadline tells without blocking. */
static int poll_sleep(struct swait_head *h, struct swait_waiter *w)
{
	return swait_sleep(h, w, 0, CLOCK_MONOTONIC, &past);
}

/*
 * Use a head the way every caller does: queue two waiters, wake one, check
 * that the first was chosen, and leave it empty.  Any head that passes is
 * a working head.
 */
static void exercise_head(struct swait_head *h, struct swait_waiter *w1,
			  struct swait_waiter *w2)
{
	assert_false(swait_active(h));
	assert_false(swait_has_sleeper(h));
	assert_int_equal(swait_head_destroy(h), 0);

	swait_prepare(h, w1);
	assert_true(swait_active(h));
	assert_true(swait_has_sleeper(h));
	swait_prepare(h, w2);

	swait_wake_one(h);
	assert_true(swait_active(h));		/* w2 is still queued */
	assert_int_equal(poll_sleep(h, w1), 0);
	assert_int_equal(poll_sleep(h, w2), ETIMEDOUT);
	swait_finish(h, w1);
	swait_finish(h, w2);

	assert_false(swait_active(h));
	/* Emptied, the list holds no pointer into the head (lib/list.h). */
	assert_null(h->list.next);
	assert_null(h->list.prev);
	assert_int_equal(swait_head_destroy(h), 0);

	/* And again, now that the list has been used. */
	swait_prepare(h, w2);
	swait_prepare(h, w1);
	swait_wake_all(h);
	assert_false(swait_active(h));
	assert_null(h->list.next);	/* the walk's splice emptied it */
	assert_int_equal(poll_sleep(h, w1), 0);
	assert_int_equal(poll_sleep(h, w2), 0);
	swait_finish(h, w1);
	swait_finish(h, w2);
	assert_int_equal(swait_head_destroy(h), 0);
}

/*
 * An idle head, used, then moved (copied and the original scribbled on) is
 * a working head at its new address: swait_event_mutex(3), COPYING A HEAD.
 */
static void test_moved_idle(void **state)
{
	struct swait_head *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	swait_head_init(a);
	exercise_head(a, &w1, &w2);
	memcpy(b, a, sizeof(*a));
	memset(a, 0xa5, sizeof(*a));
	free(a);
	exercise_head(b, &w1, &w2);
	free(b);
}

static void test_struct_sizes(void **state)
{
	(void)state;
#if defined(__x86_64__) || (__SIZEOF_POINTER__ == 8 && __SIZEOF_LONG__ == 8)
	/* The header promises 24 and 32 bytes on LP64. */
	assert_true(sizeof(struct swait_head) <= 24);
	assert_true(sizeof(struct swait_waiter) <= 32);
#else
	skip();
#endif
}

static struct swait_head static_head;
static struct swait_waiter static_w1, static_w2;

static void test_static_zero_head(void **state)
{
	(void)state;
	exercise_head(&static_head, &static_w1, &static_w2);
}

static void test_calloc_head(void **state)
{
	struct swait_head *h = calloc(1, sizeof(*h));
	struct swait_waiter *w = calloc(2, sizeof(*w));

	(void)state;
	assert_non_null(h);
	assert_non_null(w);
	exercise_head(h, &w[0], &w[1]);
	free(w);
	free(h);
}

static void test_memset_head(void **state)
{
	struct swait_head h;
	struct swait_waiter w1, w2;

	(void)state;
	/* Garbage first, so that only the memset can make these valid. */
	memset(&h, 0xa5, sizeof(h));
	memset(&w1, 0xa5, sizeof(w1));
	memset(&w2, 0xa5, sizeof(w2));
	memset(&h, 0, sizeof(h));
	memset(&w1, 0, sizeof(w1));
	memset(&w2, 0, sizeof(w2));
	exercise_head(&h, &w1, &w2);
}

static void test_initializers(void **state)
{
	struct swait_head h1 = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;

	(void)state;
	exercise_head(&h1, &w1, &w2);
}

static void test_init_functions(void **state)
{
	struct swait_head h;
	struct swait_waiter w1, w2;

	(void)state;
	memset(&h, 0xa5, sizeof(h));
	memset(&w1, 0x5a, sizeof(w1));
	memset(&w2, 0xff, sizeof(w2));
	swait_head_init(&h);
	swait_waiter_init(&w1);
	swait_waiter_init(&w2);
	exercise_head(&h, &w1, &w2);

	/* Re-initialising a used, empty head gives a working head again. */
	swait_head_init(&h);
	exercise_head(&h, &w1, &w2);
}

/*
 * An asymmetric head (lib/asym.c) is a working head, from garbage too.
 * Its guarantees are the stress suite's (stress-wake's *_asym tests).
 */
static void test_init_asym(void **state)
{
	struct swait_head h;
	struct swait_waiter w1, w2;

	(void)state;
	memset(&h, 0xa5, sizeof(h));
	swait_waiter_init(&w1);
	swait_waiter_init(&w2);
	assert_int_equal(swait_head_init_asym(&h), 0);
	exercise_head(&h, &w1, &w2);
	assert_int_equal(swait_head_init_asym(&h), 0);	/* again, used */
	exercise_head(&h, &w1, &w2);
}

/* In a child whose seccomp filter answers membarrier() with ENOSYS. */
static void asym_without_membarrier(void *arg)
{
	struct swait_head h;
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	tu_check(tu_deny_syscall(SYS_membarrier, ENOSYS) == 0);
	memset(&h, 0xa5, sizeof(h));
	/* It says why, and makes an ordinary head that works. */
	tu_check(swait_head_init_asym(&h) == ENOSYS);
	swait_prepare(&h, &w1);
	swait_prepare(&h, &w2);
	swait_wake_one(&h);
	tu_check(poll_sleep(&h, &w1) == 0);
	tu_check(poll_sleep(&h, &w2) == ETIMEDOUT);
	swait_finish(&h, &w1);
	swait_finish(&h, &w2);
	tu_check(!swait_active(&h));
	tu_check(swait_head_destroy(&h) == 0);
}

static void test_init_asym_unavailable(void **state)
{
	struct tu_child res;

	(void)state;
	if (getenv("MESON_EXE_WRAPPER"))
		skip();		/* qemu-user has no seccomp for its guest */
	assert_int_equal(tu_run_child(asym_without_membarrier, NULL, 10, &res),
			 0);
	assert_true(tu_child_ok(&res, "swait_head_init_asym without "
				"membarrier"));
}

/*
 * A filter installed after the head was made: the sleep cannot order
 * itself against fence-less wakes, so it aborts and says why, with the
 * error the call returned, rather than risk a lost wakeup.
 */
static void asym_membarrier_denied_later(void *arg)
{
	struct swait_head h;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	tu_check(swait_head_init_asym(&h) == 0);
	tu_check(tu_deny_syscall(SYS_membarrier, EPERM) == 0);
	swait_prepare(&h, &w);		/* aborts here */
	swait_finish(&h, &w);
}

static void test_asym_membarrier_denied_later(void **state)
{
	static const char *const words[] = {
		"membarrier", "swait_head_init_asym", "seccomp",
		"(errno 1)", NULL	/* EPERM, the filter's answer */
	};
	struct tu_child res;

	(void)state;
	if (getenv("MESON_EXE_WRAPPER"))
		skip();
	assert_int_equal(tu_run_child(asym_membarrier_denied_later, NULL, 10,
				      &res), 0);
	assert_true(tu_child_aborted(&res, words));
}

/* A completion in every initial form counts posted events from zero. */
static void exercise_completion(struct swait_completion *c)
{
	assert_false(swait_completion_done(c));
	assert_false(swait_completion_try_wait(c));
	swait_complete(c);
	assert_true(swait_completion_done(c));
	assert_true(swait_completion_try_wait(c));
	assert_false(swait_completion_try_wait(c));
	assert_int_equal(swait_head_destroy(&c->wait), 0);
}

static struct swait_completion static_completion;

static void test_completion_initializers(void **state)
{
	struct swait_completion c1 = SWAIT_COMPLETION_INITIALIZER;
	struct swait_completion c2, *c3;

	(void)state;
	exercise_completion(&c1);
	exercise_completion(&static_completion);

	memset(&c2, 0xa5, sizeof(c2));
	swait_completion_init(&c2);
	exercise_completion(&c2);

	c3 = calloc(1, sizeof(*c3));
	assert_non_null(c3);
	exercise_completion(c3);
	free(c3);
}

static void test_destroy_empty(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;

	(void)state;
	assert_int_equal(swait_head_destroy(&h), 0);
	/* Destroy changes nothing: the head is still usable and empty. */
	assert_int_equal(swait_head_destroy(&h), 0);
	assert_false(swait_active(&h));
}

static void test_destroy_busy(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;

	(void)state;
	swait_prepare(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), EBUSY);
	swait_prepare(&h, &w2);
	assert_int_equal(swait_head_destroy(&h), EBUSY);

	/* Nothing changed: both are queued, in order, and still wakeable. */
	assert_true(swait_active(&h));
	swait_wake_one(&h);
	assert_int_equal(poll_sleep(&h, &w1), 0);
	assert_int_equal(poll_sleep(&h, &w2), ETIMEDOUT);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), EBUSY);	/* w2 */

	/* A waiter that leaves without ever being woken empties it too. */
	swait_finish(&h, &w2);
	assert_int_equal(swait_head_destroy(&h), 0);

	/* Timed out, still queued: busy until finish. */
	swait_prepare(&h, &w1);
	assert_int_equal(poll_sleep(&h, &w1), ETIMEDOUT);
	assert_int_equal(swait_head_destroy(&h), EBUSY);
	swait_finish(&h, &w1);
	assert_int_equal(swait_head_destroy(&h), 0);
}

struct destroyer {
	struct swait_head *h;
	int ret, done;
};

static void *destroy_thread(void *arg)
{
	struct destroyer *d = arg;

	d->ret = swait_head_destroy(d->h);
	TU_STORE(&d->done, 1);
	return NULL;
}

/*
 * A waiter a wake_one flipped while it was still between prepare and
 * finish may pass the wake on in its finish (I6), so it touches the head
 * after the flip.  destroy must not return 0 before that finish: it waits
 * for the waiter (counted as a leaver, lib/wake.c), and once it returned
 * the head's page is made inaccessible, which a late touch would fault
 * on.  Without the count destroy returns at once (nothing is queued).
 */
static void run_destroy_waits_for_leaver(bool pi)
{
	long psize = sysconf(_SC_PAGESIZE);
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct destroyer d = { NULL, -1, 0 };
	struct swait_head *h;
	double window;
	pthread_t t;
	void *page;

	page = mmap(NULL, (size_t)psize, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	h = page;
	if (pi)
		swait_head_init_pi(h);
	else
		swait_head_init(h);
	TU_SYNC_VAR(d.done);
	swait_prepare(h, &w);
	swait_wake_one(h);		/* flips w: not queued any more */
	d.h = h;
	assert_int_equal(pthread_create(&t, NULL, destroy_thread, &d), 0);
	/*
	 * A destroy that ignored the leaver returns within microseconds
	 * (milliseconds under Valgrind).  This waits for something not to
	 * happen, so a full slowdown (40 times under Valgrind) would only
	 * lengthen it: 200 ms, stretched at most 5 times, is ample.
	 */
	window = 200e6 * (tu_slowdown() > 5 ? 5 / tu_slowdown() : 1);
	assert_false(tu_poll_ns(TU_LOAD(&d.done), window));
	swait_finish(h, &w);		/* passes the wake on, then leaves */
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(d.ret, 0);
	assert_int_equal(mprotect(page, (size_t)psize, PROT_NONE), 0);
	assert_int_equal(munmap(page, (size_t)psize), 0);
}

static void test_destroy_waits_for_leaver(void **state)
{
	(void)state;
	run_destroy_waits_for_leaver(false);
}

static void test_destroy_waits_for_leaver_pi(void **state)
{
	(void)state;
	run_destroy_waits_for_leaver(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_struct_sizes),
		cmocka_unit_test(test_static_zero_head),
		cmocka_unit_test(test_calloc_head),
		cmocka_unit_test(test_memset_head),
		cmocka_unit_test(test_initializers),
		cmocka_unit_test(test_init_functions),
		cmocka_unit_test(test_init_asym),
		cmocka_unit_test(test_init_asym_unavailable),
		cmocka_unit_test(test_asym_membarrier_denied_later),
		cmocka_unit_test(test_moved_idle),
		cmocka_unit_test(test_completion_initializers),
		cmocka_unit_test(test_destroy_empty),
		cmocka_unit_test(test_destroy_busy),
		cmocka_unit_test(test_destroy_waits_for_leaver),
		cmocka_unit_test(test_destroy_waits_for_leaver_pi),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
