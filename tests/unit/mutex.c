// SPDX-License-Identifier: MIT
/*
 * mutex.c - swait_event_mutex() and its timed and interruptible forms:
 * the condition is evaluated with the mutex held, the mutex is held on
 * every return, each wake costs exactly one re-acquire and one evaluation,
 * a deadline times out with the mutex held, a cancelled waiter's cleanup
 * handlers run with the mutex held and leave the head empty, a signal
 * ends an interruptible wait with EINTR and the mutex held, and misuse
 * (a mutex not held, bad input) is an error, not a hang; the statement
 * form, which cannot return it, aborts in debug builds.
 *
 * The mutex is PTHREAD_MUTEX_ERRORCHECK, so that unlocking it without
 * holding it is an error the macros can return (EPERM).
 *
 * Robust mutexes (the "owner died" tests): a helper thread takes the mutex
 * while the waiter sleeps and exits holding it.  Every expression form and
 * swait_sleep_mutex() then return EOWNERDEAD with the mutex held, ahead of
 * the sleep's 0, ETIMEDOUT or EINTR, without evaluating the condition; the
 * caller makes it consistent and it works again.  ENOTRECOVERABLE returns
 * with the mutex not held.  A cancelled waiter's cleanup handler runs
 * holding the inconsistent mutex and can repair it.  The statement form
 * aborts on EOWNERDEAD in every build.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tu_unit.h"

#ifndef SWAIT_TEST_DEBUG_CHECKS
#define SWAIT_TEST_DEBUG_CHECKS 0
#endif

static const struct timespec past = { 0, 0 };
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
 * EBUSY, or EDEADLK from a robust error-checking mutex (glibc).  Never
 * called while a robust mutex's owner is dead: the trylock would take it.
 */
static bool held(void)
{
	int r = pthread_mutex_trylock(&mutex);

	if (r == 0) {
		pthread_mutex_unlock(&mutex);
		return false;
	}
	return r == EBUSY || r == EDEADLK;
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
	/* swait_sleep()'s flags are taken, SWAIT_NOSPIN too */
	r = swait_event_mutex_generic(&head, reached(1), &mutex,
				      SWAIT_NOSPIN | SWAIT_INTERRUPTIBLE,
				      CLOCK_MONOTONIC, &past);
	assert_int_equal(r, ETIMEDOUT);
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

/*
 * swait_sleep_mutex(): bad flags, clock or deadline give EINVAL before the
 * mutex is released, as its ERRORS promise ("nothing was evaluated or
 * unlocked"): a spy blocked on the priority-inheriting mutex would be
 * handed it by any release (tu_spy_start()).
 */
static void test_sleep_mutex_einval_before_unlock(void **state)
{
	struct timespec bad = { 1, 1000000000L }, ok;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	pthread_mutex_t pi_mutex;
	struct tu_spy spy;

	(void)state;
	tu_watchdog("sleep_mutex_einval_before_unlock");
	assert_int_equal(tu_pi_mutex_init(&pi_mutex), 0);
	pthread_mutex_lock(&pi_mutex);
	assert_true(tu_spy_start(&spy, &pi_mutex));
	ok = tu_deadline(CLOCK_MONOTONIC, 1000000000LL);
	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep_mutex(&head, &w, &pi_mutex, 0,
					   CLOCK_MONOTONIC, &bad), EINVAL);
	assert_int_equal(swait_sleep_mutex(&head, &w, &pi_mutex, 0x80,
					   CLOCK_MONOTONIC, &ok), EINVAL);
	assert_int_equal(swait_sleep_mutex(&head, &w, &pi_mutex, 0,
					   CLOCK_PROCESS_CPUTIME_ID, &ok),
			 EINVAL);
	swait_finish(&head, &w);
	assert_int_equal(tu_spy_got(&spy), 0);
	assert_int_equal(pthread_mutex_unlock(&pi_mutex), 0);
	assert_int_equal(tu_spy_join(&spy), 1);
	assert_int_equal(pthread_mutex_destroy(&pi_mutex), 0);
	tu_watchdog_done();
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

/*
 * The statement form cannot return EPERM (a mutex not held): debug builds
 * abort naming the misuse; release builds end the statement with the
 * condition false, nothing queued, the mutex still free.  In a child,
 * since one outcome is an abort.
 */
static void statement_not_held(void *arg)
{
	(void)arg;
	swait_event_mutex(&head, value > 0, &mutex);
	tu_check(value == 0);
	tu_check(!swait_active(&head));
	tu_check(pthread_mutex_trylock(&mutex) == 0);
}

static void test_statement_not_held(void **state)
{
	static const char *const words[] = { "not held by this thread", NULL };
	struct tu_child res;

	(void)state;
	/* As in test_errors: these tools report the failed unlock itself. */
#ifdef __SANITIZE_THREAD__
	skip();
#endif
	if (getenv("SWAIT_UNDER_VALGRIND"))
		skip();
	assert_int_equal(tu_run_child(statement_not_held, NULL, 10, &res), 0);
	if (SWAIT_TEST_DEBUG_CHECKS)
		assert_true(tu_child_aborted(&res, words));
	else
		assert_true(tu_child_ok(&res, "statement form, mutex not held"));
}

/* ------------------------------------------ robust mutexes: owner died */

/* Whether robust mutexes work here; set by setup_robust(). */
static const char *robust_skip_why;

/*
 * Take the mutex and exit holding it: the kernel walks the exiting
 * thread's robust list and marks the mutex's owner dead.
 */
static void *lock_and_exit(void *arg)
{
	return (void *)(intptr_t)pthread_mutex_lock(arg);
}

/* The fixture: the same mutex, made robust (still error-checking). */
static int setup_robust(void **state)
{
	pthread_mutexattr_t a;

	(void)state;
	robust_skip_why = tu_robust_skip_why();
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	if (!robust_skip_why)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&mutex, &a);
	pthread_mutexattr_destroy(&a);
	swait_head_init(&head);
	value = evals = evals_unheld = 0;
	return 0;
}

static void robust_or_skip(void)
{
	if (robust_skip_why) {
		print_message("skipped: %s\n", robust_skip_why);
		skip();
	}
}

/* How the helper dies, holding the mutex, once the waiter sleeps. */
enum death {
	AFTER_WAKE,	/* value++ and a wake_one: the sleep returns 0 */
	AFTER_SIGNAL,	/* SIGUSR1 to the waiter: EINTR */
	AT_ONCE,	/* nothing: the sleep times out, or is cancelled */
};

struct dier {
	pid_t waiter_tid;
	pthread_t waiter;
	enum death how;
	clockid_t clock;
	const struct timespec *deadline;	/* AT_ONCE: NULL or one */
	int lock_r;		/* its pthread_mutex_lock() */
	bool in_time;		/* AT_ONCE: locked before the deadline */
};

static void *die_holding(void *arg)
{
	struct dier *d = arg;

	if (!tu_wait_asleep(d->waiter_tid, &head))
		return (void *)1;
	d->lock_r = pthread_mutex_lock(&mutex);
	switch (d->how) {
	case AFTER_WAKE:
		value++;
		swait_wake_one(&head);
		break;
	case AFTER_SIGNAL:
		pthread_kill(d->waiter, SIGUSR1);
		break;
	case AT_ONCE:
		d->in_time = d->deadline &&
			     !tu_reached(d->clock, d->deadline);
		break;
	}
	return NULL;	/* with the mutex held: its owner dies */
}

/* The waits under test, each with reached(want) as its condition. */
enum form {
	TIMEOUT,		/* swait_event_mutex_timeout */
	INTERRUPTIBLE,		/* swait_event_mutex_interruptible */
	INTERRUPTIBLE_TIMEOUT,	/* swait_event_mutex_interruptible_timeout */
	GENERIC,		/* _generic, SWAIT_INTERRUPTIBLE, REALTIME */
	SLEEP_MUTEX,		/* swait_sleep_mutex() in a loop */
};

static clockid_t form_clock(enum form f)
{
	return f == GENERIC ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

static int wait_form(enum form f, int want, const struct timespec *dl)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int r = 0;

	switch (f) {
	case TIMEOUT:
		return swait_event_mutex_timeout(&head, reached(want), &mutex,
						 CLOCK_MONOTONIC, dl);
	case INTERRUPTIBLE:
		return swait_event_mutex_interruptible(&head, reached(want),
						       &mutex);
	case INTERRUPTIBLE_TIMEOUT:
		return swait_event_mutex_interruptible_timeout(&head,
				reached(want), &mutex, CLOCK_MONOTONIC, dl);
	case GENERIC:
		return swait_event_mutex_generic(&head, reached(want), &mutex,
				SWAIT_INTERRUPTIBLE, CLOCK_REALTIME, dl);
	case SLEEP_MUTEX:
		/* The condition is checked under the mutex, so it may come
		 * before the prepare: no writer can change it in between. */
		while (!reached(want)) {
			swait_prepare(&head, &w);
			r = swait_sleep_mutex(&head, &w, &mutex,
					      SWAIT_INTERRUPTIBLE,
					      CLOCK_MONOTONIC, dl);
			if (r != 0)
				break;
		}
		swait_finish(&head, &w);
		return r;
	}
	return -1;
}

/*
 * With the mutex held and consistent: one more wait, which a writer that
 * behaves ends with a wake.
 */
static void wait_again(enum form f)
{
	struct timespec dl = tu_deadline(form_clock(f), 60LL * 1000000000);
	struct writer wr = { tu_gettid(), 1, false };
	int want = value + 1;
	pthread_t t;
	void *res;

	assert_int_equal(pthread_create(&t, NULL, writer, &wr), 0);
	assert_int_equal(wait_form(f, want, &dl), 0);
	assert_int_equal(value, want);
	assert_true(held());
	assert_int_equal(pthread_mutex_unlock(&mutex), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	assert_int_equal(evals_unheld, 0);
	assert_false(swait_active(&head));
}

/*
 * After EOWNERDEAD: this thread holds the mutex (a robust mutex's unlock
 * is EPERM otherwise) and it is inconsistent (pthread_mutex_consistent()
 * is EINVAL otherwise).  Repaired, it locks with 0 and serves another
 * wait, which a well-behaved writer ends.
 */
static void repair_and_wait_again(enum form f)
{
	assert_int_equal(pthread_mutex_consistent(&mutex), 0);
	assert_true(held());
	assert_int_equal(pthread_mutex_unlock(&mutex), 0);
	assert_int_equal(pthread_mutex_lock(&mutex), 0);
	wait_again(f);
}

/*
 * The owner wakes the waiter and dies: the sleep returned 0, the relock
 * EOWNERDEAD, and that is what the wait returns, before evaluating the
 * condition (the state may be half-written).
 */
static void owner_died_after_wake(enum form f)
{
	struct timespec dl = tu_deadline(form_clock(f), 60LL * 1000000000);
	struct dier d = { tu_gettid(), pthread_self(), AFTER_WAKE,
			  CLOCK_MONOTONIC, NULL, -1, false };
	pthread_t t;
	void *res;

	robust_or_skip();
	tu_watchdog("EOWNERDEAD after a wake");
	assert_int_equal(pthread_create(&t, NULL, die_holding, &d), 0);
	assert_int_equal(pthread_mutex_lock(&mutex), 0);
	assert_int_equal(wait_form(f, 1, &dl), EOWNERDEAD);
	assert_int_equal(evals, 1);	/* before the sleep; none after */
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	assert_int_equal(d.lock_r, 0);
	assert_int_equal(value, 1);	/* what the owner wrote */
	assert_false(swait_active(&head));
	repair_and_wait_again(f);
	tu_watchdog_done();
}

/* The owner interrupts the waiter and dies: EOWNERDEAD beats EINTR. */
static void owner_died_after_signal(enum form f)
{
	struct timespec dl = tu_deadline(form_clock(f), 60LL * 1000000000);
	struct dier d = { tu_gettid(), pthread_self(), AFTER_SIGNAL,
			  CLOCK_MONOTONIC, NULL, -1, false };
	pthread_t t;
	void *res;

	robust_or_skip();
	assert_int_equal(tu_signal_handler(SIGUSR1, on_usr1, 0, NULL), 0);
	tu_watchdog("EOWNERDEAD after a signal");
	assert_int_equal(pthread_create(&t, NULL, die_holding, &d), 0);
	assert_int_equal(pthread_mutex_lock(&mutex), 0);
	assert_int_equal(wait_form(f, 1, &dl), EOWNERDEAD);
	assert_int_equal(evals, 1);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	assert_int_equal(d.lock_r, 0);
	assert_int_equal(value, 0);
	assert_false(swait_active(&head));
	repair_and_wait_again(f);
	tu_watchdog_done();
}

/*
 * The owner takes the mutex while the waiter sleeps and dies; nothing
 * wakes the waiter, so its sleep times out: EOWNERDEAD beats ETIMEDOUT.
 * That needs the helper to lock before the deadline; if it was slower
 * (a loaded machine), the waiter may have relocked first and returned
 * ETIMEDOUT, which proves nothing: repair and try a longer deadline.
 */
static void owner_died_before_deadline(enum form f)
{
	clockid_t clock = form_clock(f);
	long long ns = 50 * 1000000LL;

	robust_or_skip();
	tu_watchdog("EOWNERDEAD after a deadline");
	for (int attempt = 0;; attempt++, ns *= 4) {
		struct timespec dl = tu_deadline(clock, ns);
		struct dier d = { tu_gettid(), pthread_self(), AT_ONCE,
				  clock, &dl, -1, false };
		pthread_t t;
		void *res;
		int r;

		evals = 0;
		assert_int_equal(pthread_create(&t, NULL, die_holding, &d),
				 0);
		assert_int_equal(pthread_mutex_lock(&mutex), 0);
		r = wait_form(f, 1, &dl);
		if (r == EOWNERDEAD) {
			assert_int_equal(pthread_join(t, &res), 0);
			assert_null(res);
			assert_int_equal(d.lock_r, 0);
			assert_true(tu_reached(clock, &dl));
			assert_int_equal(evals, 1);
			assert_false(swait_active(&head));
			break;
		}
		/*
		 * The helper was late: it waits for the mutex now, or gave
		 * up when it never saw this thread asleep (res 1).
		 */
		assert_int_equal(r, ETIMEDOUT);
		assert_int_equal(pthread_mutex_unlock(&mutex), 0);
		assert_int_equal(pthread_join(t, &res), 0);
		assert_false(d.in_time);
		assert_true(attempt < 4);
		if (res == NULL) {
			assert_int_equal(pthread_mutex_lock(&mutex),
					 EOWNERDEAD);
			assert_int_equal(pthread_mutex_consistent(&mutex), 0);
			assert_int_equal(pthread_mutex_unlock(&mutex), 0);
		}
	}
	repair_and_wait_again(f);
	tu_watchdog_done();
}

#define FORM_TEST(name, run, form)					\
	static void name(void **state)					\
	{								\
		(void)state;						\
		run(form);						\
	}

FORM_TEST(test_owner_died_timeout, owner_died_after_wake, TIMEOUT)
FORM_TEST(test_owner_died_interruptible, owner_died_after_wake,
	  INTERRUPTIBLE)
FORM_TEST(test_owner_died_interruptible_timeout, owner_died_after_wake,
	  INTERRUPTIBLE_TIMEOUT)
FORM_TEST(test_owner_died_generic, owner_died_after_wake, GENERIC)
FORM_TEST(test_owner_died_sleep_mutex, owner_died_after_wake, SLEEP_MUTEX)
FORM_TEST(test_owner_died_beats_eintr_interruptible,
	  owner_died_after_signal, INTERRUPTIBLE)
FORM_TEST(test_owner_died_beats_eintr_interruptible_timeout,
	  owner_died_after_signal, INTERRUPTIBLE_TIMEOUT)
FORM_TEST(test_owner_died_beats_eintr_generic, owner_died_after_signal,
	  GENERIC)
FORM_TEST(test_owner_died_beats_eintr_sleep_mutex, owner_died_after_signal,
	  SLEEP_MUTEX)
FORM_TEST(test_owner_died_beats_etimedout_timeout,
	  owner_died_before_deadline, TIMEOUT)
FORM_TEST(test_owner_died_beats_etimedout_generic,
	  owner_died_before_deadline, GENERIC)
FORM_TEST(test_owner_died_beats_etimedout_sleep_mutex,
	  owner_died_before_deadline, SLEEP_MUTEX)

/*
 * A mutex made unrecoverable while the waiter slept (an owner died and
 * the next owner unlocked it unrepaired): ENOTRECOVERABLE, not held.
 */
static void *spoil(void *arg)
{
	struct dier *d = arg;
	pthread_t t;
	void *res;

	if (!tu_wait_asleep(d->waiter_tid, &head))
		return (void *)1;
	if (pthread_create(&t, NULL, lock_and_exit, &mutex) != 0 ||
	    pthread_join(t, &res) != 0 || res != NULL)
		return (void *)2;
	d->lock_r = pthread_mutex_lock(&mutex);		/* EOWNERDEAD */
	if (pthread_mutex_unlock(&mutex) != 0)		/* unrepaired */
		return (void *)3;
	swait_wake_one(&head);
	return NULL;
}

static void test_not_recoverable(void **state)
{
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC, 60LL * 1000000000);
	struct dier d = { tu_gettid(), pthread_self(), AT_ONCE,
			  CLOCK_MONOTONIC, NULL, -1, false };
	pthread_t t;
	void *res;

	(void)state;
	robust_or_skip();
	tu_watchdog("ENOTRECOVERABLE");
	assert_int_equal(pthread_create(&t, NULL, spoil, &d), 0);
	assert_int_equal(pthread_mutex_lock(&mutex), 0);
	assert_int_equal(wait_form(TIMEOUT, 1, &dl), ENOTRECOVERABLE);
	assert_int_equal(pthread_join(t, &res), 0);
	tu_watchdog_done();
	assert_null(res);
	assert_int_equal(d.lock_r, EOWNERDEAD);
	assert_int_equal(evals, 1);
	assert_false(swait_active(&head));
	/* Not held: a robust mutex's unlock says so. */
	assert_int_equal(pthread_mutex_unlock(&mutex), EPERM);
	assert_int_equal(pthread_mutex_lock(&mutex), ENOTRECOVERABLE);
}

/*
 * Cancellation cannot return EOWNERDEAD: the relock in the cleanup runs
 * before the waiter's own handler, which finds the mutex held and
 * inconsistent, repairs it (pthread_mutex_consistent() returns 0 only for
 * an inconsistent mutex) and unlocks it (0 only if this thread held it).
 * Afterwards it is free and consistent and serves another wait.
 */
struct robust_cancel {
	pid_t tid;
	int consistent_r, unlock_r;
};

static void repair(void *arg)
{
	struct robust_cancel *c = arg;

	c->consistent_r = pthread_mutex_consistent(&mutex);
	c->unlock_r = pthread_mutex_unlock(&mutex);
}

static void *cancelled_robust_waiter(void *arg)
{
	struct robust_cancel *c = arg;

	if (pthread_mutex_lock(&mutex) != 0)
		return (void *)1;
	TU_STORE(&c->tid, tu_gettid());
	pthread_cleanup_push(repair, c);
	swait_event_mutex(&head, value > 0, &mutex);
	pthread_cleanup_pop(1);
	return NULL;
}

static void test_owner_died_cancelled(void **state)
{
	struct robust_cancel c = { 0, -1, -1 };
	struct dier d = { 0, 0, AT_ONCE, CLOCK_MONOTONIC, NULL, -1, false };
	pthread_t waiter, t;
	void *res;

	(void)state;
	robust_or_skip();
	tu_watchdog("cancelled with the owner dead");
	assert_int_equal(pthread_create(&waiter, NULL,
					cancelled_robust_waiter, &c), 0);
	while (TU_LOAD(&c.tid) == 0)
		sched_yield();
	d.waiter_tid = c.tid;
	d.waiter = waiter;
	assert_int_equal(pthread_create(&t, NULL, die_holding, &d), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	assert_int_equal(d.lock_r, 0);
	/* The owner is dead and the waiter still asleep on the head. */
	assert_true(tu_wait_asleep(c.tid, &head));
	assert_int_equal(pthread_cancel(waiter), 0);
	assert_int_equal(pthread_join(waiter, &res), 0);
	assert_ptr_equal(res, PTHREAD_CANCELED);
	assert_int_equal(c.consistent_r, 0);
	assert_int_equal(c.unlock_r, 0);
	assert_false(swait_active(&head));
	/* Free and consistent (EINVAL: nothing to repair). */
	assert_int_equal(pthread_mutex_lock(&mutex), 0);
	assert_int_equal(pthread_mutex_consistent(&mutex), EINVAL);
	wait_again(TIMEOUT);
	tu_watchdog_done();
}

/*
 * The statement form meets EOWNERDEAD: it cannot return it, and aborts in
 * every build, naming the error and the remedy.
 */
static void statement_owner_died(void *arg)
{
	struct dier d = { tu_gettid(), pthread_self(), AFTER_WAKE,
			  CLOCK_MONOTONIC, NULL, -1, false };
	pthread_t t;

	(void)arg;
	tu_check(pthread_create(&t, NULL, die_holding, &d) == 0);
	tu_check(pthread_mutex_lock(&mutex) == 0);
	swait_event_mutex(&head, value > 0, &mutex);
	tu_check_failed("swait_event_mutex() returned after EOWNERDEAD",
			__FILE__, __LINE__);
}

static void test_statement_owner_died(void **state)
{
	static const char *const words[] = { "EOWNERDEAD", NULL };
	struct tu_child res;

	(void)state;
	robust_or_skip();
	assert_int_equal(tu_run_child(statement_owner_died, NULL, 10, &res),
			 0);
	assert_true(tu_child_aborted(&res, words));
	assert_non_null(strstr(res.out, "expression form"));
}

#define WITH_FIXTURE(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
#define ROBUST(t) cmocka_unit_test_setup_teardown(t, setup_robust, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		WITH_FIXTURE(test_one_evaluation_per_wake),
		WITH_FIXTURE(test_wake_all_timed),
		WITH_FIXTURE(test_timeout),
		WITH_FIXTURE(test_errors),
		WITH_FIXTURE(test_sleep_mutex_einval_before_unlock),
		WITH_FIXTURE(test_cancel),
		WITH_FIXTURE(test_interruptible),
		WITH_FIXTURE(test_statement_not_held),
		ROBUST(test_owner_died_timeout),
		ROBUST(test_owner_died_interruptible),
		ROBUST(test_owner_died_interruptible_timeout),
		ROBUST(test_owner_died_generic),
		ROBUST(test_owner_died_sleep_mutex),
		ROBUST(test_owner_died_beats_eintr_interruptible),
		ROBUST(test_owner_died_beats_eintr_interruptible_timeout),
		ROBUST(test_owner_died_beats_eintr_generic),
		ROBUST(test_owner_died_beats_eintr_sleep_mutex),
		ROBUST(test_owner_died_beats_etimedout_timeout),
		ROBUST(test_owner_died_beats_etimedout_generic),
		ROBUST(test_owner_died_beats_etimedout_sleep_mutex),
		ROBUST(test_not_recoverable),
		ROBUST(test_owner_died_cancelled),
		ROBUST(test_statement_owner_died),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
