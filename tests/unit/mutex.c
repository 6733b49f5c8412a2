// SPDX-License-Identifier: MIT
/*
 * mutex.c - swait_event_mutex() and its timed and interruptible forms:
 * the condition is evaluated with the mutex held, the mutex is held on
 * every return, each wake costs exactly one re-acquire and one evaluation,
 * a deadline times out with the mutex held, a cancelled waiter's cleanup
 * handlers run with the mutex held and leave the head empty, a signal
 * ends an interruptible wait with EINTR and the mutex held, and misuse
 * (a mutex not held, bad input) is an error, not a hang.
 *
 * The mutex is PTHREAD_MUTEX_ERRORCHECK, so that unlocking it without
 * holding it is an error the macros can return (EPERM).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tu_unit.h"

static struct swait_head head;
static pthread_mutex_t mutex;
static int value;		/* the state, under mutex: plain int */
static int evals;		/* evaluations of the condition */
static int evals_unheld;	/* ... made without the mutex held */

/*
 * Whether the mutex is held, by this thread wherever the tests call it: no
 * other thread holds it then (the writer takes it only while the waiter
 * sleeps).  A trylock, because Helgrind and DRD report a second lock of a
 * held mutex, and a read of glibc's owner field races with its unlock.
 */
static bool held(void)
{
	if (pthread_mutex_trylock(&mutex) == EBUSY)
		return true;
	pthread_mutex_unlock(&mutex);
	return false;
}

/* The condition: counts itself and whether the mutex was held. */
static bool reached(int want)
{
	evals++;
	if (!held())
		evals_unheld++;
	return value >= want;
}

static int setup(void **state)
{
	pthread_mutexattr_t a;

	(void)state;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&mutex, &a);
	pthread_mutexattr_destroy(&a);
	swait_head_init(&head);
	value = evals = evals_unheld = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	pthread_mutex_destroy(&mutex);
	return swait_head_destroy(&head) == 0 ? 0 : -1;
}

/* The writer: set value under the mutex, wake under it too. */
struct writer {
	pid_t waiter_tid;
	int steps;		/* wakes to make, value += 1 each */
	bool wake_all;
};

static void *writer(void *arg)
{
	struct writer *wr = arg;

	for (int i = 0; i < wr->steps; i++) {
		if (!tu_wait_asleep(wr->waiter_tid, &head))
			return (void *)1;
		pthread_mutex_lock(&mutex);
		value++;
		if (wr->wake_all)
			swait_wake_all(&head);
		else
			swait_wake_one(&head);
		pthread_mutex_unlock(&mutex);
	}
	return NULL;
}

/*
 * Three wakes, the condition true after the third: 1 evaluation before
 * the first sleep and exactly one per wake, all with the mutex held.
 */
static void test_one_evaluation_per_wake(void **state)
{
	struct writer wr = { tu_gettid(), 3, false };
	pthread_t t;
	void *res;

	(void)state;
	tu_watchdog("swait_event_mutex, three wakes");
	assert_int_equal(pthread_create(&t, NULL, writer, &wr), 0);
	pthread_mutex_lock(&mutex);
	swait_event_mutex(&head, reached(3), &mutex);
	assert_true(held());
	assert_int_equal(value, 3);
	pthread_mutex_unlock(&mutex);
	assert_int_equal(pthread_join(t, &res), 0);
	tu_watchdog_done();
	assert_null(res);
	assert_int_equal(evals, 1 + 3);
	assert_int_equal(evals_unheld, 0);
}

/* The same through wake_all and the timed form with a far deadline. */
static void test_wake_all_timed(void **state)
{
	struct writer wr = { tu_gettid(), 2, true };
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC, 60LL * 1000000000);
	pthread_t t;
	int r;

	(void)state;
	tu_watchdog("swait_event_mutex_timeout, two wake_all");
	assert_int_equal(pthread_create(&t, NULL, writer, &wr), 0);
	pthread_mutex_lock(&mutex);
	r = swait_event_mutex_timeout(&head, reached(2), &mutex,
				      CLOCK_MONOTONIC, &dl);
	assert_int_equal(r, 0);
	assert_true(held());
	pthread_mutex_unlock(&mutex);
	assert_int_equal(pthread_join(t, NULL), 0);
	tu_watchdog_done();
	assert_int_equal(evals, 1 + 2);
	assert_int_equal(evals_unheld, 0);
}

/* A deadline that passes: ETIMEDOUT, not early, mutex held, head empty. */
static void test_timeout(void **state)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_REALTIME };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct timespec dl = tu_deadline(clocks[i], 20 * 1000000LL);
		int r;

		pthread_mutex_lock(&mutex);
		r = swait_event_mutex_timeout(&head, reached(1), &mutex,
					      clocks[i], &dl);
		assert_int_equal(r, ETIMEDOUT);
		assert_true(tu_reached(clocks[i], &dl));
		assert_true(held());
		pthread_mutex_unlock(&mutex);
		assert_false(swait_active(&head));
	}
	assert_int_equal(evals_unheld, 0);
}

/* Bad input: EINVAL before anything; a mutex not held: EPERM. */
static void test_errors(void **state)
{
	struct timespec bad = { 0, 1000000000L };
	int r;

	(void)state;
	pthread_mutex_lock(&mutex);
	r = swait_event_mutex_timeout(&head, reached(1), &mutex,
				      CLOCK_MONOTONIC, &bad);
	assert_int_equal(r, EINVAL);
	r = swait_event_mutex_generic(&head, reached(1), &mutex, 0x80,
				      CLOCK_MONOTONIC, NULL);
	assert_int_equal(r, EINVAL);
	assert_int_equal(evals, 0);	/* refused before cond */
	assert_true(held());
	pthread_mutex_unlock(&mutex);

	/*
	 * Not held: the unlock fails, nothing sleeps, nothing stays queued.
	 * Valgrind's tools and ThreadSanitizer report the failed unlock
	 * itself, as they should.
	 */
#ifdef __SANITIZE_THREAD__
	return;
#endif
	if (getenv("SWAIT_UNDER_VALGRIND"))
		return;
	r = swait_event_mutex_timeout(&head, value > 0, &mutex,
				      CLOCK_MONOTONIC, NULL);
	assert_int_equal(r, EPERM);
	assert_false(held());
	assert_false(swait_active(&head));
}

/* Cancellation: the cleanup handler runs with the mutex held. */
static int cleanup_saw_held = -1;

static void cleanup(void *arg)
{
	(void)arg;
	cleanup_saw_held = held();
	pthread_mutex_unlock(&mutex);
}

static void *cancelled_waiter(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, tu_gettid(), __ATOMIC_RELEASE);
	pthread_mutex_lock(&mutex);
	pthread_cleanup_push(cleanup, NULL);
	swait_event_mutex(&head, value > 0, &mutex);
	pthread_cleanup_pop(1);
	return NULL;
}

static void test_cancel(void **state)
{
	pid_t tid = 0;
	pthread_t t;
	void *res;

	(void)state;
	tu_watchdog("swait_event_mutex cancelled");
	assert_int_equal(pthread_create(&t, NULL, cancelled_waiter, &tid), 0);
	while (__atomic_load_n(&tid, __ATOMIC_ACQUIRE) == 0)
		sched_yield();
	assert_true(tu_wait_asleep(tid, &head));
	assert_int_equal(pthread_cancel(t), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	tu_watchdog_done();
	assert_ptr_equal(res, PTHREAD_CANCELED);
	assert_int_equal(cleanup_saw_held, 1);
	assert_false(swait_active(&head));
	assert_false(held());
	assert_int_equal(pthread_mutex_trylock(&mutex), 0);	/* released */
	pthread_mutex_unlock(&mutex);
}

/*
 * The interruptible forms: a handler (installed without SA_RESTART) that
 * interrupts the sleep ends the wait with EINTR, the mutex held; with a
 * deadline any interrupting handler does.
 */
static void on_usr1(int sig)
{
	(void)sig;
}

struct intr {
	pid_t tid;
	int timed, r, held_after;
};

static void *interruptible_waiter(void *arg)
{
	struct intr *in = arg;
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC, 60LL * 1000000000);

	TU_STORE(&in->tid, tu_gettid());
	pthread_mutex_lock(&mutex);
	in->r = in->timed ?
		swait_event_mutex_interruptible_timeout(&head, value > 0,
				&mutex, CLOCK_MONOTONIC, &dl) :
		swait_event_mutex_interruptible(&head, value > 0, &mutex);
	in->held_after = held();
	pthread_mutex_unlock(&mutex);
	return NULL;
}

static void test_interruptible(void **state)
{
	(void)state;
	assert_int_equal(tu_signal_handler(SIGUSR1, on_usr1, 0, NULL), 0);
	for (int timed = 0; timed < 2; timed++) {
		struct intr in = { 0, timed, -1, -1 };
		pthread_t t;

		tu_watchdog("swait_event_mutex_interruptible and a signal");
		assert_int_equal(pthread_create(&t, NULL,
						interruptible_waiter, &in), 0);
		while (TU_LOAD(&in.tid) == 0)
			sched_yield();
		assert_true(tu_wait_asleep(in.tid, &head));
		assert_int_equal(pthread_kill(t, SIGUSR1), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		tu_watchdog_done();
		assert_int_equal(in.r, EINTR);
		assert_int_equal(in.held_after, 1);
		assert_false(swait_active(&head));
	}
}

#define WITH_FIXTURE(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_FIXTURE(test_one_evaluation_per_wake),
		WITH_FIXTURE(test_wake_all_timed),
		WITH_FIXTURE(test_timeout),
		WITH_FIXTURE(test_errors),
		WITH_FIXTURE(test_cancel),
		WITH_FIXTURE(test_interruptible),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
