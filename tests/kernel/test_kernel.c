// SPDX-License-Identifier: MIT
/*
 * test_kernel.c - <swait/kernel.h>: the toy driver (toydrv.c, kernel-style
 * code) driven by threads, then each kernel name's return contract.
 */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <swait/kernel.h>

#include "testutil.h"
#include "toydrv.h"

/* ---------------------------------------------------------------- helpers */

struct runner {
	pthread_t tid;
	int (*fn)(void *arg);
	void *arg;
	int ret;
	int finished;	/* atomic: set once fn returned */
};

static void *runner_main(void *p)
{
	struct runner *r = p;

	r->ret = r->fn(r->arg);
	__atomic_store_n(&r->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void start(struct runner *r, int (*fn)(void *), void *arg)
{
	r->fn = fn;
	r->arg = arg;
	r->ret = 0;
	r->finished = 0;
	assert_int_equal(pthread_create(&r->tid, NULL, runner_main, r), 0);
}

static int join(struct runner *r)
{
	assert_int_equal(pthread_join(r->tid, NULL), 0);
	return r->ret;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void on_signal(int sig)
{
	(void)sig;
}

/* SIGUSR1 runs a handler and, without SA_RESTART, interrupts waits. */
static void install_handler(void)
{
	assert_int_equal(tu_signal_handler(SIGUSR1, on_signal, 0, NULL), 0);
}

/* Signal r's thread until its function returns (a signal may come early). */
static void interrupt_until_finished(struct runner *r)
{
	while (!__atomic_load_n(&r->finished, __ATOMIC_ACQUIRE)) {
		pthread_kill(r->tid, SIGUSR1);
		sleep_ms(2);
	}
}

static int group_setup(void **state)
{
	(void)state;
	install_handler();
	return 0;
}

static int arm(void **state)
{
	(void)state;
	tu_watchdog_arm(20.0, "kernel test", NULL);
	return 0;
}

static int disarm(void **state)
{
	(void)state;
	tu_watchdog_disarm();
	return 0;
}

/* ------------------------------------------------------- the toy driver */

static int worker_fn(void *dev)
{
	return toy_worker(dev);
}

static int irq_fn(void *dev)
{
	return toy_irq_thread(dev);
}

/* Two workers and an irq thread serve n requests, each on a worker stack. */
static void test_driver_roundtrip(void **state)
{
	struct toy_dev dev;
	struct runner irq, w[2];
	long n = tu_scale(300), i;

	(void)state;
	toy_dev_init(&dev, 10000);
	start(&irq, irq_fn, &dev);
	start(&w[0], worker_fn, &dev);
	start(&w[1], worker_fn, &dev);

	toy_queue_work(&dev, (unsigned int)n);
	for (i = 0; i < n; i++)
		assert_true(wait_for_completion_timeout(&dev.job_done,
							10000) >= 1);
	assert_false(try_wait_for_completion(&dev.job_done));

	toy_stop_workers(&dev);
	assert_int_equal(join(&w[0]), 0);
	assert_int_equal(join(&w[1]), 0);
	toy_stop_irq(&dev);
	assert_int_equal(join(&irq), 0);

	assert_int_equal(dev.errors, 0);
	assert_int_equal(dev.sum, n * (n + 1));	/* 2 * (1 + ... + n) */
}

/* No irq thread: the worker's wait_for_completion_timeout() gives up. */
static void test_driver_hung_hardware(void **state)
{
	struct toy_dev dev;
	struct runner w;
	long long t0 = tu_now_ns();

	(void)state;
	toy_dev_init(&dev, 20);
	start(&w, worker_fn, &dev);
	toy_queue_work(&dev, 1);
	assert_true(wait_for_completion_timeout(&dev.job_done, 10000) >= 1);
	assert_true(tu_now_ns() - t0 >= 20 * 1000000LL);
	toy_stop_workers(&dev);
	assert_int_equal(join(&w), 0);

	assert_int_equal(dev.errors, 1);
	assert_int_equal(dev.last_error, -ETIMEDOUT);
	assert_null(dev.hw_head);	/* the request was taken back */
}

/* An idle worker's swait_event_interruptible_exclusive() sees a signal. */
static void test_driver_worker_signalled(void **state)
{
	struct toy_dev dev;
	struct runner w;

	(void)state;
	toy_dev_init(&dev, 1000);
	start(&w, worker_fn, &dev);
	while (!toy_worker_sleeping(&dev))
		sleep_ms(1);
	interrupt_until_finished(&w);
	assert_int_equal(join(&w), -ERESTARTSYS);
	assert_int_equal(-ERESTARTSYS, -512);	/* <linux/errno.h>'s */
}

/* ------------------------------------------------------------ swait names */

static DECLARE_SWAIT_QUEUE_HEAD(test_wq);
static int test_flag;

static int set_flag_later(void *arg)
{
	sleep_ms((long)(intptr_t)arg);
	__atomic_store_n(&test_flag, 1, __ATOMIC_RELAXED);
	swake_up_one(&test_wq);
	return 0;
}

static void test_event_timeout_ms(void **state)
{
	struct swait_queue_head q;
	long long t0;
	int flag = 0;

	(void)state;
	init_swait_queue_head(&q);
	/* cond true: the timeout comes back, 1 for a timeout of 0 */
	assert_int_equal(swait_event_timeout_exclusive(q, 1, 50), 50);
	assert_int_equal(swait_event_timeout_exclusive(q, 1, 0), 1);
	/* cond false: 0 at once for 0 or a negative timeout */
	assert_int_equal(swait_event_timeout_exclusive(q, flag, 0), 0);
	assert_int_equal(swait_event_timeout_exclusive(q, flag, -5), 0);
	/* cond false: 0 after the timeout */
	t0 = tu_now_ns();
	assert_int_equal(swait_event_timeout_exclusive(q, flag, 15), 0);
	assert_true(tu_now_ns() - t0 >= 15 * 1000000LL);
	assert_int_equal(swait_event_interruptible_timeout_exclusive(q, flag,
								     5), 0);
	assert_int_equal(swait_event_idle_timeout_exclusive(q, flag, 1), 0);
	assert_false(swait_active(&q));
}

static void test_event_woken(void **state)
{
	struct runner r;
	long left;

	(void)state;
	test_flag = 0;
	start(&r, set_flag_later, (void *)(intptr_t)10);
	left = swait_event_timeout_exclusive(test_wq,
			__atomic_load_n(&test_flag, __ATOMIC_RELAXED), 5000);
	assert_true(left >= 1 && left <= 5000);
	join(&r);

	test_flag = 0;
	start(&r, set_flag_later, (void *)(intptr_t)5);
	left = swait_event_interruptible_timeout_exclusive(test_wq,
			__atomic_load_n(&test_flag, __ATOMIC_RELAXED),
			MAX_SCHEDULE_TIMEOUT);
	assert_int_equal(left, MAX_SCHEDULE_TIMEOUT);
	join(&r);

	test_flag = 0;
	start(&r, set_flag_later, (void *)(intptr_t)5);
	swait_event_exclusive(test_wq,
			      __atomic_load_n(&test_flag, __ATOMIC_RELAXED));
	join(&r);

	test_flag = 0;
	start(&r, set_flag_later, (void *)(intptr_t)5);
	swait_event_idle_exclusive(test_wq,
			__atomic_load_n(&test_flag, __ATOMIC_RELAXED));
	join(&r);
}

static void test_event_ts(void **state)
{
	DECLARE_SWAIT_QUEUE_HEAD(q);
	struct timespec past = { 0, 0 }, bad = { 0, 1000000000L }, dl;
	int flag = 0;

	(void)state;
	assert_int_equal(swait_event_timeout_exclusive_ts(q, 1,
				CLOCK_MONOTONIC, &past), 1);
	assert_int_equal(swait_event_timeout_exclusive_ts(q, flag,
				CLOCK_MONOTONIC, &past), 0);
	assert_int_equal(swait_event_timeout_exclusive_ts(q, flag,
				CLOCK_MONOTONIC, &bad), -EINVAL);
	assert_int_equal(swait_event_interruptible_timeout_exclusive_ts(q,
				flag, CLOCK_PROCESS_CPUTIME_ID, &past),
			 -EINVAL);
	assert_int_equal(swait_deadline_after(&dl, CLOCK_REALTIME, 5000000), 0);
	assert_int_equal(swait_event_interruptible_timeout_exclusive_ts(q,
				flag, CLOCK_REALTIME, &dl), 0);
}

/* The open-coded loop, with swait_sleep() where the kernel has schedule(). */
static void test_open_coded(void **state)
{
	DECLARE_SWAITQUEUE(wait);
	struct runner r;
	bool (*active)(const struct swait_queue_head *) = swait_active;

	(void)state;
	test_flag = 0;
	assert_false(active(&test_wq));
	assert_false(swq_has_sleeper(&test_wq));
	start(&r, set_flag_later, (void *)(intptr_t)5);
	for (;;) {
		prepare_to_swait_exclusive(&test_wq, &wait,
					   TASK_UNINTERRUPTIBLE);
		if (__atomic_load_n(&test_flag, __ATOMIC_RELAXED))
			break;
		assert_true(swait_active(&test_wq));
		swait_sleep(&test_wq, &wait, 0, CLOCK_MONOTONIC, NULL);
	}
	finish_swait(&test_wq, &wait);
	join(&r);
	assert_false(swait_active(&test_wq));
	swake_up_all(&test_wq);	/* empty: a no-op */
}

/*
 * A finite timeout too long to add to the clock (MAX_JIFFY_OFFSET, which
 * kernel code passes for "no limit", and the largest, LONG_MAX - 1) still
 * sleeps until the wake, and gives back about all of itself.  Once,
 * such a timeout overflowed the deadline and every schedule_timeout()
 * returned at once, so the waits round it spun.
 */
struct long_sleep {
	long timeout;
	long left;
};

static int sleep_long(void *arg)
{
	struct long_sleep *ls = arg;
	DECLARE_SWAITQUEUE(wait);

	prepare_to_swait_exclusive(&test_wq, &wait, TASK_UNINTERRUPTIBLE);
	ls->left = schedule_timeout(ls->timeout);
	finish_swait(&test_wq, &wait);
	return 0;
}

static void test_huge_timeouts(void **state)
{
	const long timeouts[] = {
		MAX_JIFFY_OFFSET, LONG_MAX - 1,
		(long)msecs_to_jiffies((unsigned int)-1),
	};

	(void)state;
	/* The kernel's: a negative int of milliseconds means no limit. */
	assert_int_equal(msecs_to_jiffies((unsigned int)-1), MAX_JIFFY_OFFSET);
	assert_int_equal(msecs_to_jiffies(INT_MAX), INT_MAX);
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		struct long_sleep ls = { timeouts[i], -1 };
		struct runner r;

		start(&r, sleep_long, &ls);
		while (!swait_active(&test_wq))
			sleep_ms(1);
		/* Queued; it must now be asleep, not back already. */
		sleep_ms(30);
		assert_false(__atomic_load_n(&r.finished, __ATOMIC_ACQUIRE));
		swake_up_one(&test_wq);
		join(&r);
		assert_true(ls.left > 0 && ls.left <= timeouts[i]);
		assert_true(ls.left >= timeouts[i] - 20000);
	}
}

/*
 * Three contracts a review found broken (compared with kernel/sched/
 * swait.c, kernel/time/time.c and kernel/sched/completion.c):
 * __finish_swait() sets TASK_RUNNING, so a schedule_timeout() after it
 * returns at once; jiffies_to_msecs() wraps at 32 bits, as the kernel's
 * unsigned int does at HZ 1000, so jiffies_to_msecs(jiffies) keeps moving
 * past 2^32 jiffies (5 minutes up); and a completion timeout past
 * LONG_MAX is the kernel's negative long: 0 at once, not no limit.
 */
static void test_review_contracts(void **state)
{
	struct swait_queue_head q;
	struct completion c;
	unsigned int m0;
	long t0;
	DECLARE_SWAITQUEUE(w);

	(void)state;
	init_swait_queue_head(&q);
	raw_spin_lock_irq(&q.lock);
	__prepare_to_swait(&q, &w);
	__set_current_state(TASK_UNINTERRUPTIBLE);
	__finish_swait(&q, &w);		/* cond true: no sleep */
	raw_spin_unlock_irq(&q.lock);
	assert_int_equal(current->__state, TASK_RUNNING);
	t0 = (long)tu_now_ns();
	assert_int_equal(schedule_timeout(200), 200);
	assert_true((long)tu_now_ns() - t0 < 100 * 1000000L);
	assert_false(swait_active(&q));

#if ULONG_MAX > UINT_MAX
	assert_int_equal(jiffies_to_msecs(((unsigned long)1 << 32) + 5), 5);
#endif
	m0 = jiffies_to_msecs(jiffies);
	sleep_ms(20);
	assert_true(jiffies_to_msecs(jiffies) - m0 >= 15);

	init_completion(&c);
	t0 = (long)tu_now_ns();
	assert_int_equal(wait_for_completion_timeout(&c, ULONG_MAX), 0);
	assert_int_equal(wait_for_completion_interruptible_timeout(&c,
			(unsigned long)LONG_MAX + 1), 0);
	assert_true((long)tu_now_ns() - t0 < 1000 * 1000000L);
	complete(&c);
	assert_true(wait_for_completion_timeout(&c, ULONG_MAX) != 0);
	assert_false(completion_done(&c));	/* consumed */
}

/* ------------------------------------------------------------ completions */

static void test_completion_calls(void **state)
{
	DECLARE_COMPLETION(c);
	struct completion d;
	long long t0;

	(void)state;
	assert_false(completion_done(&c));
	assert_false(try_wait_for_completion(&c));
	assert_int_equal(wait_for_completion_timeout(&c, 0), 0);
	t0 = tu_now_ns();
	assert_int_equal(wait_for_completion_timeout(&c, 15), 0);
	assert_true(tu_now_ns() - t0 >= 15 * 1000000LL);
	assert_int_equal(wait_for_completion_interruptible_timeout(&c, 1), 0);

	complete(&c);
	assert_true(completion_done(&c));
	assert_int_equal(wait_for_completion_timeout(&c, 100), 100);
	complete(&c);
	assert_int_equal(wait_for_completion_timeout(&c, 0), 1);
	complete(&c);
	complete(&c);
	assert_true(try_wait_for_completion(&c));
	assert_int_equal(wait_for_completion_interruptible(&c), 0);
	assert_false(try_wait_for_completion(&c));

	init_completion(&d);
	complete_all(&d);
	wait_for_completion(&d);
	assert_int_equal(wait_for_completion_interruptible_timeout(&d,
				MAX_SCHEDULE_TIMEOUT), MAX_SCHEDULE_TIMEOUT);
	assert_true(try_wait_for_completion(&d));
	assert_true(completion_done(&d));
	reinit_completion(&d);
	assert_false(completion_done(&d));
}

static struct completion sig_c;

static int wait_interruptible(void *arg)
{
	(void)arg;
	return wait_for_completion_interruptible(&sig_c);
}

static int wait_interruptible_timeout(void *arg)
{
	(void)arg;
	return (int)wait_for_completion_interruptible_timeout(&sig_c, 10000);
}

static void test_completion_signalled(void **state)
{
	struct runner r;

	(void)state;
	init_completion(&sig_c);
	start(&r, wait_interruptible, NULL);
	interrupt_until_finished(&r);
	assert_int_equal(join(&r), -ERESTARTSYS);

	start(&r, wait_interruptible_timeout, NULL);
	interrupt_until_finished(&r);
	assert_int_equal(join(&r), -ERESTARTSYS);
	assert_false(completion_done(&sig_c));
}

static struct completion restart_c;
static pid_t restart_tids[2];

static int restart_sleeper(void *arg)
{
	TU_STORE(&restart_tids[(intptr_t)arg], tu_gettid());
	wait_for_completion(&restart_c);
	return 0;
}

static int restart_waiter(void *arg)
{
	(void)arg;
	return wait_for_completion_interruptible(&restart_c);
}

/*
 * A handler installed with SA_RESTART (glibc's signal()) still ends an
 * interruptible wait with -ERESTARTSYS (lib/kernel.c K2), also on a
 * completion whose complete_all() woke two sleepers: its head then puts
 * sleepers in futex_waitv(), which SA_RESTART restarts, except the sleeps
 * with a deadline and SWAIT_INTERRUPTIBLE that K2 makes (lib/swait.c W5).
 * Before W5 this wait slept through every signal (the watchdog fires).
 */
static void test_completion_signalled_restart(void **state)
{
	struct runner s[2], r;
	pid_t tid;

	(void)state;
	assert_int_equal(tu_signal_handler(SIGUSR2, on_signal, SA_RESTART,
					   NULL), 0);
	init_completion(&restart_c);
	for (intptr_t i = 0; i < 2; i++) {
		TU_STORE(&restart_tids[i], 0);
		start(&s[i], restart_sleeper, (void *)i);
	}
	for (int i = 0; i < 2; i++)
		assert_true(tu_poll((tid = TU_LOAD(&restart_tids[i])) != 0 &&
				    tu_task_state(tid) == 'S'));
	complete_all(&restart_c);	/* two own wakes: a broadcast head */
	assert_int_equal(join(&s[0]), 0);
	assert_int_equal(join(&s[1]), 0);
	reinit_completion(&restart_c);

	start(&r, restart_waiter, NULL);
	while (!__atomic_load_n(&r.finished, __ATOMIC_ACQUIRE)) {
		pthread_kill(r.tid, SIGUSR2);
		sleep_ms(2);
	}
	assert_int_equal(join(&r), -ERESTARTSYS);
	assert_false(completion_done(&restart_c));
}

/* The on-stack handshake: the waiter's frame ends as soon as it returns. */
static int complete_later(void *arg)
{
	sleep_ms(2);
	complete(arg);
	return 0;
}

static void test_completion_onstack(void **state)
{
	long i, n = tu_scale(50);

	(void)state;
	for (i = 0; i < n; i++) {
		DECLARE_COMPLETION_ONSTACK(done);
		struct runner r;

		start(&r, complete_later, &done);
		if (i & 1)
			wait_for_completion(&done);
		else
			assert_true(wait_for_completion_timeout(&done,
							10000) >= 1);
		join(&r);
	}
}

/*
 * The rest of the kernel's completion and timeout names, as kernel code
 * writes them: the ONSTACK initializer, the killable, _io and _state
 * waits, HZ and the jiffies conversions.
 */
static struct swait_queue_head static_q = __SWAIT_QUEUE_HEAD_INITIALIZER(static_q);

static int complete_after_2ms(void *arg)
{
	sleep_ms(2);
	complete(arg);
	return 0;
}

static void test_completion_more_names(void **state)
{
	struct completion done = COMPLETION_INITIALIZER_ONSTACK(done);
	struct runner r;
	long long t0;

	(void)state;
	assert_false(swait_active(&static_q));
	assert_int_equal(HZ, 1000);
	assert_int_equal(msecs_to_jiffies(250), 250);
	assert_int_equal(jiffies_to_msecs(2 * HZ), 2000);
	assert_int_equal(usecs_to_jiffies(1), 1);	/* rounded up */
	assert_int_equal(usecs_to_jiffies(2000), 2);
	assert_int_equal(usecs_to_jiffies(2001), 3);

	assert_false(completion_done(&done));
	start(&r, complete_after_2ms, &done);
	assert_int_equal(wait_for_completion_killable(&done), 0);
	join(&r);

	start(&r, complete_after_2ms, &done);
	wait_for_completion_io(&done);
	join(&r);

	start(&r, complete_after_2ms, &done);
	assert_int_equal(wait_for_completion_state(&done, TASK_KILLABLE), 0);
	join(&r);

	start(&r, complete_after_2ms, &done);
	assert_int_equal(wait_for_completion_state(&done,
						   TASK_INTERRUPTIBLE), 0);
	join(&r);

	t0 = tu_now_ns();
	assert_int_equal(wait_for_completion_killable_timeout(&done,
				msecs_to_jiffies(15)), 0);
	assert_true(tu_now_ns() - t0 >= 15 * 1000000LL);
	assert_int_equal(wait_for_completion_io_timeout(&done,
				usecs_to_jiffies(5000)), 0);
	complete(&done);
	assert_true(wait_for_completion_io_timeout(&done, HZ) >= 1);
	complete(&done);
	assert_true(wait_for_completion_killable_timeout(&done, HZ) >= 1);
	assert_false(completion_done(&done));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_completion_more_names,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_driver_roundtrip,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_driver_hung_hardware,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_driver_worker_signalled,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_event_timeout_ms,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_event_woken, arm, disarm),
		cmocka_unit_test_setup_teardown(test_event_ts, arm, disarm),
		cmocka_unit_test_setup_teardown(test_open_coded, arm, disarm),
		cmocka_unit_test_setup_teardown(test_review_contracts,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_huge_timeouts,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_completion_calls,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_completion_signalled,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_completion_signalled_restart,
						arm, disarm),
		cmocka_unit_test_setup_teardown(test_completion_onstack,
						arm, disarm),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
