// SPDX-License-Identifier: MIT
/*
 * errno.c - "errno is never modified" (swait.h and every man page), on the
 * paths where the library makes system calls that fail by design: a timed
 * sleep that times out, one a signal interrupts, a sleep whose word moved
 * (EAGAIN), a broadcast head's futex_waitv(), a PI head's contended lock,
 * an asymmetric head's membarrier(), the condvar face's timeout.  Off
 * x86-64 and aarch64 the library calls syscall(), which sets errno, and
 * saves it by hand (lib/futex.h, lib/lock.h): the cross stage runs this.
 *
 * Each call is made with errno set to a value no call returns, and errno
 * must hold it afterwards, on the calling thread and on the woken one.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include <swait/cond.h>

#include "tu_unit.h"

#define SENTINEL 4242

#define CHECK_ERRNO(call)						\
	do {								\
		errno = SENTINEL;					\
		call;							\
		assert_int_equal(errno, SENTINEL);			\
	} while (0)

static void on_signal(int sig)
{
	(void)sig;	/* touches nothing: errno is the library's to keep */
}

static int setup(void **state)
{
	(void)state;
	return tu_signal_handler(SIGUSR1, on_signal, 0, NULL);
}

/*
 * Static, not on the stack: Valgrind's DRD keeps the library's
 * annotations of a head's address after the frame ends, and reports a
 * later pthread mutex that pthread_create() puts at that address.
 */
static struct swait_head plain = SWAIT_HEAD_INITIALIZER;
static struct swait_head pi = SWAIT_HEAD_PI_INITIALIZER;
static struct swait_completion c = SWAIT_COMPLETION_INITIALIZER;
static swait_cond_t cv = SWAIT_COND_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct swait_head heads[3];

static void test_timeouts(void **state)
{
	struct timespec dl;
	int r = 0;

	(void)state;
	dl = tu_deadline(CLOCK_MONOTONIC, 2 * 1000000LL);
	CHECK_ERRNO(r = swait_event_timeout(&plain, false, CLOCK_MONOTONIC, &dl));
	assert_int_equal(r, ETIMEDOUT);
	dl = tu_deadline(CLOCK_REALTIME, 2 * 1000000LL);
	CHECK_ERRNO(r = swait_event_timeout(&pi, false, CLOCK_REALTIME, &dl));
	assert_int_equal(r, ETIMEDOUT);
	CHECK_ERRNO(r = swait_completion_wait_for(&c, 2 * 1000000LL));
	assert_int_equal(r, ETIMEDOUT);
	CHECK_ERRNO(r = swait_completion_wait_for(&c, -1));
	assert_int_equal(r, EINVAL);

	dl = tu_deadline(CLOCK_REALTIME, 2 * 1000000LL);
	pthread_mutex_lock(&m);
	CHECK_ERRNO(r = swait_cond_timedwait(&cv, &m, &dl));
	assert_int_equal(r, ETIMEDOUT);
	pthread_mutex_unlock(&m);
	CHECK_ERRNO(swait_cond_destroy(&cv));
	CHECK_ERRNO(swait_head_destroy(&plain));
	CHECK_ERRNO(swait_head_destroy(&pi));
	CHECK_ERRNO(swait_head_destroy(&c.wait));
}

struct sleeper {
	pthread_t t;
	struct swait_head *h;
	int tid;
	int flag;
	int intr;		/* interruptible, with a deadline */
	int result;
	int err_after;
	int done;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC, 30LL * 1000000000);

	TU_STORE(&s->tid, (int)tu_gettid());
	errno = SENTINEL;
	if (s->intr)
		s->result = swait_event_interruptible_timeout(s->h,
				TU_LOAD(&s->flag), CLOCK_MONOTONIC, &dl);
	else
		s->result = swait_event_timeout(s->h, TU_LOAD(&s->flag),
						CLOCK_MONOTONIC, &dl);
	s->err_after = errno;
	TU_STORE(&s->done, 1);
	return NULL;
}

static void start(struct sleeper *s, struct swait_head *h, int intr)
{
	memset(s, 0, sizeof(*s));
	s->h = h;
	s->intr = intr;
	assert_int_equal(pthread_create(&s->t, NULL, sleeper_main, s), 0);
	assert_true(tu_poll(TU_LOAD(&s->tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&s->tid), h));
}

static void finish(struct sleeper *s, int result)
{
	assert_int_equal(pthread_join(s->t, NULL), 0);
	assert_int_equal(s->result, result);
	assert_int_equal(s->err_after, SENTINEL);
}

/* Woken, interrupted, and the same on a broadcast head (futex_waitv). */
static void test_sleepers(void **state)
{
	struct sleeper s[2];

	(void)state;
	tu_watchdog("errno across sleeps");
	swait_head_init(&heads[0]);
	swait_head_init_pi(&heads[1]);
	assert_int_equal(swait_head_init_asym(&heads[2]), 0);
	for (int k = 0; k < 3; k++) {
		struct swait_head *h = &heads[k];

		/* Two sleepers woken by one wake_all: now a broadcast head. */
		start(&s[0], h, 0);
		start(&s[1], h, 0);
		TU_STORE(&s[0].flag, 1);
		TU_STORE(&s[1].flag, 1);
		CHECK_ERRNO(swait_wake_all(h));
		finish(&s[0], 0);
		finish(&s[1], 0);

		/* Woken by wake_one, in futex_waitv on a broadcast head. */
		start(&s[0], h, 0);
		TU_STORE(&s[0].flag, 1);
		CHECK_ERRNO(swait_wake_one(h));
		finish(&s[0], 0);

		/* Interrupted: EINTR, errno left as it was. */
		start(&s[0], h, 1);
		while (!TU_LOAD(&s[0].done)) {
			assert_int_equal(pthread_kill(s[0].t, SIGUSR1), 0);
			(void)tu_poll_ns(TU_LOAD(&s[0].done), 20 * 1000000LL);
		}
		finish(&s[0], EINTR);
		CHECK_ERRNO(swait_wake_one(h));		/* nobody waits */
		CHECK_ERRNO(assert_int_equal(swait_head_destroy(h), 0));
	}
	tu_watchdog_done();
}

/*
 * Contention: two threads prepare, wake and finish on one PI head and one
 * ordinary head, so locks are contended (FUTEX_LOCK_PI, the ordinary
 * lock's park) and wakes find sleepers; errno is checked after each call.
 */
static struct swait_head churn_heads[2];
static int churn_bad;

static void *churn(void *arg)
{
	long n = tu_scale(20000);

	(void)arg;
	for (long i = 0; i < n; i++) {
		struct swait_head *h = &churn_heads[i & 1];
		struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
		const struct timespec past = { 0, 0 };

		errno = SENTINEL;
		swait_prepare(h, &w);
		swait_wake_one(h);
		(void)swait_sleep(h, &w, 0, CLOCK_MONOTONIC, &past);
		swait_finish(h, &w);
		swait_wake_all(h);
		if (errno != SENTINEL)
			TU_STORE(&churn_bad, errno);
	}
	return NULL;
}

static void test_contention(void **state)
{
	pthread_t t[2];

	(void)state;
	tu_watchdog("errno under contention");
	swait_head_init(&churn_heads[0]);
	swait_head_init_pi(&churn_heads[1]);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_int_equal(TU_LOAD(&churn_bad), 0);
	assert_int_equal(swait_head_destroy(&churn_heads[0]), 0);
	assert_int_equal(swait_head_destroy(&churn_heads[1]), 0);
	tu_watchdog_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_sleepers),
		cmocka_unit_test(test_contention),
	};

	TU_SYNC_VAR(churn_bad);
	return cmocka_run_group_tests(tests, setup, NULL);
}
