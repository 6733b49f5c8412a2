// SPDX-License-Identifier: MIT
/*
 * spin.c - the spin before a sleep (lib/spin.c S1-S6), deterministically.
 *
 * A test hook runs at every poll of a spin, and another replaces the spin's
 * clock, so that no case depends on timing:
 *  - a wake that arrives while the waiter spins (the hook performs it, at
 *    the fifth poll) is taken with no FUTEX_WAIT by the waiter and no
 *    FUTEX_WAKE by the waker (S1), through swait_sleep, a completion, the
 *    mutex form and swait_wait_any;
 *  - with a clock that advances 100 ns per read, a spin ends after exactly
 *    cap / 100 clock reads (S2), or earlier at the caller's deadline, and
 *    then sleeps;
 *  - spins that find nothing are skipped 2^(k-1) - 1 times after k in a
 *    row, and a spin that finds a wake resets that (S3);
 *  - no spin with SWAIT_NOSPIN, with a cap of 0, or when the process may
 *    run on one CPU only (S4);
 *  - a SCHED_FIFO thread pinned to one CPU does not spin on the process
 *    default, and does on a cap of its own; the same thread under
 *    SCHED_OTHER spins on the default (S5; skipped without the privilege
 *    to set SCHED_FIFO, or when the default cap is 0);
 *  - a handler that runs during the spin gives no EINTR (it ran before
 *    the sleep), and one that wakes the head there is taken by the spin;
 *    a cancel landing during the spin is acted on when the sleep starts,
 *    and with a wake at the same poll the wake is passed on to the next
 *    sleeper; fork() during the spin leaves the child a head it can use
 *    and the parent its wake; PI heads spin as plain ones;
 *  - a waiter queued behind another does not spin, and does once it is
 *    first (S6);
 *  - swait_set_spin() range checks, and the environment's default
 *    (run again by meson with SWAIT_SPIN_NS set: argv[1] is the cap to
 *    expect).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_spin)(const uint32_t *word);
extern int64_t (*swait_hook_spin_clock)(void);
extern void (*swait_hook_futex_wake)(uint32_t *word);
extern unsigned long swait_hook_futex_waits;

static struct swait_head head;
static struct swait_completion comp;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int flag;

/* What the poll hook does at poll number wake_at (0: nothing). */
enum action {
	NONE, WAKE_ONE, COMPLETE, SET_AND_WAKE, WAKE_ANY1,
	RAISE,			/* a handler runs mid-spin (and may wake) */
	CANCEL_SELF,		/* pthread_cancel() of the spinning thread */
	WAKE_AND_CANCEL,	/* its wake, then its cancel, at one poll */
	FORK,			/* fork(); the parent then wakes itself */
};
static enum action action;
static unsigned polls, wake_at;
static unsigned long wakes;		/* FUTEX_WAKE calls */
static int64_t fake_ns;			/* the fake clock, when on */
static unsigned clock_reads;
static struct swait_head any_heads[2];
/* Only the thread that set this acts at a poll; others' spins pass. */
static __thread bool acting;
static int handler_wakes;		/* the handler also wakes head */
static volatile sig_atomic_t handled;
static pid_t child;
static int second_queued;		/* WAKE_AND_CANCEL's other sleeper */

static void on_signal(int sig)
{
	(void)sig;
	handled++;
	if (handler_wakes)
		swait_wake_one(&head);
}

static void on_poll(const uint32_t *word)
{
	(void)word;
	if (!acting || ++polls != wake_at)
		return;
	switch (action) {
	case NONE:
		break;
	case WAKE_ONE:
		swait_wake_one(&head);
		break;
	case COMPLETE:
		swait_complete(&comp);
		break;
	case SET_AND_WAKE:
		__atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
		swait_wake_one(&head);
		break;
	case WAKE_ANY1:
		swait_wake_one(&any_heads[1]);
		break;
	case RAISE:
		raise(SIGUSR1);
		break;
	case CANCEL_SELF:
		pthread_cancel(pthread_self());
		break;
	case WAKE_AND_CANCEL:
		/* The other sleeper queues behind us first. */
		while (!__atomic_load_n(&second_queued, __ATOMIC_ACQUIRE))
			sched_yield();
		swait_wake_one(&head);		/* us: the oldest */
		pthread_cancel(pthread_self());
		break;
	case FORK:
		child = fork();
		if (child > 0)
			swait_wake_one(&head);	/* the parent's copy only */
		break;
	}
}

static int64_t fake_clock(void)
{
	clock_reads++;
	return fake_ns += 100;
}

static void on_wake(uint32_t *word)
{
	(void)word;
	wakes++;
}

static unsigned long futex_waits(void)
{
	return __atomic_load_n(&swait_hook_futex_waits, __ATOMIC_RELAXED);
}

static bool many_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 &&
	       CPU_COUNT(&set) > 1;
}

static int setup(void **state)
{
	(void)state;
	if (!many_cpus()) {
		print_message("skipped: one CPU, where nothing spins (S4)\n");
		return -1;
	}
	swait_head_init(&head);
	swait_completion_init(&comp);
	acting = true;
	handler_wakes = 0;
	handled = 0;
	second_queued = 0;
	TU_SYNC_VAR(second_queued);
	flag = 0;
	action = NONE;
	polls = wake_at = clock_reads = 0;
	wakes = 0;
	fake_ns = 0;
	assert_int_equal(swait_set_spin(1000000, NULL), 0);
	__atomic_store_n(&swait_hook_spin, on_poll, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_futex_wake, on_wake, __ATOMIC_RELEASE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	__atomic_store_n(&swait_hook_spin, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_spin_clock, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_futex_wake, NULL, __ATOMIC_RELEASE);
	swait_set_spin(SWAIT_SPIN_DEFAULT, NULL);
	return 0;
}

/* A deadline ms milliseconds from now on CLOCK_MONOTONIC. */
static struct timespec in_ms(long ms)
{
	struct timespec dl;

	swait_deadline_after(&dl, CLOCK_MONOTONIC, ms * 1000000LL);
	return dl;
}

/* S1: a wake seen while spinning: no system call on either side. */
static void test_wake_while_spinning(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long waits = futex_waits();

	(void)state;
	action = WAKE_ONE;
	wake_at = 5;
	struct timespec dl = in_ms(2000);	/* a failure, not a hang */

	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl), 0);
	swait_finish(&head, &w);
	assert_int_equal(polls, 5);		/* seen at the next poll */
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
	assert_false(swait_active(&head));
	assert_int_equal(swait_head_destroy(&head), 0);
}

static void test_completion_spins(void **state)
{
	unsigned long waits = futex_waits();

	(void)state;
	action = COMPLETE;
	wake_at = 5;
	struct timespec dl = in_ms(2000);

	assert_int_equal(swait_completion_wait_timeout(&comp, CLOCK_MONOTONIC,
						       &dl), 0);
	assert_int_equal(polls, 5);
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
}

static void test_mutex_form_spins(void **state)
{
	struct timespec far = in_ms(2000);
	unsigned long waits = futex_waits();
	int err;

	(void)state;
	action = SET_AND_WAKE;
	wake_at = 5;

	pthread_mutex_lock(&mutex);
	err = swait_event_mutex_timeout(&head,
		__atomic_load_n(&flag, __ATOMIC_RELAXED), &mutex,
		CLOCK_MONOTONIC, &far);
	pthread_mutex_unlock(&mutex);
	assert_int_equal(err, 0);
	assert_int_equal(polls, 5);
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
}

static void test_wait_any_spins(void **state)
{
	struct swait_head *heads[2] = { &any_heads[0], &any_heads[1] };
	struct swait_waiter ws[2] = { SWAIT_WAITER_INITIALIZER,
				      SWAIT_WAITER_INITIALIZER };
	unsigned long waits = futex_waits();
	unsigned which = 9;

	(void)state;
	swait_head_init(&any_heads[0]);
	swait_head_init(&any_heads[1]);
	action = WAKE_ANY1;
	wake_at = 5;
	swait_prepare_any(heads, 2, ws);
	struct timespec dl = in_ms(2000);

	assert_int_equal(swait_wait_any(heads, 2, ws, 0, CLOCK_MONOTONIC,
					&dl, &which), 0);
	swait_finish_any(heads, 2, ws);
	assert_int_equal(which, 1);
	assert_int_equal(polls, 5);
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
}

/* On the fake clock: one sleep with deadline dl that must time out. */
static void sleep_to_timeout(const struct timespec *dl)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	__atomic_store_n(&swait_hook_spin_clock, fake_clock,
			 __ATOMIC_RELEASE);
	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, dl),
			 ETIMEDOUT);
	swait_finish(&head, &w);
}

/* S2: the cap ends the spin: 10 us at 100 ns per clock read. */
static void test_cap_bounds(void **state)
{
	struct timespec dl = in_ms(1);
	unsigned long waits = futex_waits();

	(void)state;
	assert_int_equal(swait_set_spin(10000, NULL), 0);
	sleep_to_timeout(&dl);
	/*
	 * Reads: the deadline's, the start, then one per 16 polls until
	 * the limit: start + 10,000 ns is reached at the 100th of those.
	 */
	assert_int_equal(clock_reads, 2 + 100);
	assert_int_equal(polls, 100 * 16);
	assert_int_equal(futex_waits() - waits, 1);	/* then it slept */
}

/* S2: a deadline nearer than the cap ends the spin first. */
static void test_deadline_bounds(void **state)
{
	/* 3,000 ns left on the fake clock; past on the real one. */
	struct timespec dl = { 0, 3000 + 100 };

	(void)state;
	sleep_to_timeout(&dl);
	/* The deadline read says 3,000 ns left: 30 reads after the start. */
	assert_int_equal(polls, 30 * 16);
}

/* S3: failures back off 0, 1, 3, 7, ... sleeps; a success resets. */
static void test_backoff(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	char spun[41] = { 0 }, want[41] = { 0 };

	(void)state;
	assert_int_equal(swait_set_spin(1000, NULL), 0);
	__atomic_store_n(&swait_hook_spin_clock, fake_clock,
			 __ATOMIC_RELEASE);
	for (int i = 1; i <= 40; i++) {
		/*
		 * Now on the real clock: the sleep after a spin times out at
		 * once.  Far ahead on the fake one, which starts at 0: the
		 * spin runs to its cap.
		 */
		struct timespec dl = in_ms(0);

		polls = 0;
		action = i == 32 ? WAKE_ONE : NONE;	/* 32 finds its wake */
		wake_at = 3;
		swait_prepare(&head, &w);
		(void)swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl);
		swait_finish(&head, &w);
		spun[i - 1] = polls ? 'S' : '.';
	}
	/* k failures in a row skip 2^(k-1) - 1; 32's success starts over. */
	for (int i = 1; i <= 40; i++)
		want[i - 1] = (i == 1 || i == 2 || i == 4 || i == 8 ||
			       i == 16 || i == 32 || i == 33 || i == 34 ||
			       i == 36 || i == 40) ? 'S' : '.';
	assert_string_equal(spun, want);
}

/* S4: no spin with SWAIT_NOSPIN, a cap of 0, or one CPU for the process. */
static void test_no_spin(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl;
	cpu_set_t all, one;

	(void)state;
	action = WAKE_ONE;	/* never reached: nothing polls */
	wake_at = 1;
	swait_prepare(&head, &w);
	dl = in_ms(1);
	assert_int_equal(swait_sleep(&head, &w, SWAIT_NOSPIN,
				     CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	assert_int_equal(polls, 0);

	assert_int_equal(swait_set_spin(0, NULL), 0);
	assert_int_equal(swait_spin_cap(), 0);
	dl = in_ms(1);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	assert_int_equal(polls, 0);

	/* This is the main thread: pinned, the process has one CPU. */
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(swait_set_spin(1000000, NULL), 0);
	dl = in_ms(1);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(polls, 0);
	/* Unpinned again (re-read by swait_set_spin): it spins. */
	assert_int_equal(swait_set_spin(1000000, NULL), 0);
	dl = in_ms(2000);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl), 0);
	assert_int_equal(polls, 1);
	swait_finish(&head, &w);
}

/*
 * S4's re-read without swait_set_spin(): a mask set by sched_setaffinity()
 * alone takes effect within 4,096 sleeps that may spin (swait_set_spin(3)).
 * Each sleep here spins and takes its wake at the first poll, so that S3
 * never skips one, until the re-read finds the process on one CPU (this
 * is the main thread): then the sleep does not spin, nothing wakes it,
 * and its 5 ms deadline ends it.
 */
static void test_affinity_reread(void **state)
{
	cpu_set_t all, one;
	unsigned n;
	int r = 0;

	(void)state;
	action = WAKE_ONE;
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	for (n = 1; n <= 2 * 4096; n++) {
		struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
		struct timespec dl = in_ms(5);

		polls = 0;
		wake_at = 1;
		swait_prepare(&head, &w);
		r = swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl);
		swait_finish(&head, &w);
		if (polls == 0)
			break;
		if (r != 0)
			break;
	}
	assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
	assert_int_equal(polls, 0);
	assert_int_equal(r, ETIMEDOUT);
	assert_true(n > 1);		/* it spun while the mask was wide */
	assert_true(n <= 4096);		/* and read the new one in time */
	assert_int_equal(swait_head_destroy(&head), 0);
}

/*
 * A handler that runs during the spin ran before the sleep: an
 * interruptible sleep gives no EINTR for it and sleeps on to its deadline;
 * a handler that wakes the head there is a wake the spin takes, with no
 * system call on either side.
 */
static void test_handler_during_spin(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct sigaction old;
	struct timespec dl;
	unsigned long waits;

	(void)state;
	assert_int_equal(tu_signal_handler(SIGUSR1, on_signal, 0, &old), 0);
	action = RAISE;
	wake_at = 3;
	dl = in_ms(20);
	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep(&head, &w, SWAIT_INTERRUPTIBLE,
				     CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	assert_int_equal(handled, 1);

	handler_wakes = 1;
	polls = 0;
	waits = futex_waits();
	dl = in_ms(2000);
	assert_int_equal(swait_sleep(&head, &w, SWAIT_INTERRUPTIBLE,
				     CLOCK_MONOTONIC, &dl), 0);
	swait_finish(&head, &w);
	assert_int_equal(handled, 2);
	assert_int_equal(polls, 3);	/* seen by that poll's load */
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(swait_head_destroy(&head), 0);
}

/* A thread that sleeps on head with a poll hook acting; records. */
struct sleeper {
	enum action action;
	int err;		/* swait_sleep()'s, if it returned */
	bool returned;
};

static void *spin_sleeper(void *arg)
{
	struct sleeper *sl = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl = in_ms(5000);

	acting = sl->action != NONE;
	if (acting)
		assert_int_equal(swait_set_spin(1000000, NULL), 0);
	swait_prepare(&head, &w);
	if (!acting)
		__atomic_store_n(&second_queued, 1, __ATOMIC_RELEASE);
	/* Cancelled, the library's own cleanup finishes w. */
	sl->err = swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl);
	sl->returned = true;
	swait_finish(&head, &w);
	return NULL;
}

/*
 * A cancel that lands during the spin is acted on when the sleep starts:
 * the thread ends cancelled, its waiter off the queue.
 */
static void test_cancel_during_spin(void **state)
{
	struct sleeper sl = { CANCEL_SELF, -1, false };
	pthread_t t;
	void *res;

	(void)state;
	action = CANCEL_SELF;
	wake_at = 3;
	assert_int_equal(pthread_create(&t, NULL, spin_sleeper, &sl), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	assert_ptr_equal(res, PTHREAD_CANCELED);
	assert_false(sl.returned);
	assert_true(polls >= 3);
	assert_false(swait_active(&head));
	assert_int_equal(swait_head_destroy(&head), 0);
}

/*
 * A wake and a cancel at one poll: the spin sees the wake, the cancel is
 * acted on before the sleep returns it, and the cleanup passes the wake on
 * to the next sleeper, which must wake (5 s before it would time out).
 */
static void test_wake_cancel_passes_on(void **state)
{
	struct sleeper a = { WAKE_AND_CANCEL, -1, false };
	struct sleeper b = { NONE, -1, false };
	pthread_t ta, tb;
	void *res;

	(void)state;
	action = WAKE_AND_CANCEL;
	wake_at = 3;
	assert_int_equal(pthread_create(&ta, NULL, spin_sleeper, &a), 0);
	/* b queues behind a: a's hook waits for that before it wakes. */
	while (!swait_active(&head))
		sched_yield();
	assert_int_equal(pthread_create(&tb, NULL, spin_sleeper, &b), 0);
	assert_int_equal(pthread_join(ta, &res), 0);
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_true(b.returned);
	assert_int_equal(b.err, 0);	/* the wake a passed on */
	if (res != PTHREAD_CANCELED) {
		/* The cancel was not seen in time: then a took the wake. */
		assert_true(a.returned);
		assert_int_equal(a.err, 0);
		fail_msg("cancel during the spin was not acted on");
	}
	assert_int_equal(swait_head_destroy(&head), 0);
}

/*
 * fork() during the spin.  The child has the forking thread's waiter and
 * head (swait(7), FORK: its own, so usable): its copy of the spin finds no
 * wake, sleeps to its deadline and finishes; the head then works there.
 * The parent wakes itself from the hook and leaves without a system call.
 */
static void test_fork_mid_spin(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl = in_ms(200);
	unsigned long waits = futex_waits();
	int err, status;

	(void)state;
	action = FORK;
	wake_at = 3;
	child = -1;
	swait_prepare(&head, &w);
	err = swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl);
	swait_finish(&head, &w);
	if (child == 0) {
		struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;
		struct timespec now = { 0, 0 };

		/* Child: no cmocka here; the exit code says what failed. */
		if (err != ETIMEDOUT)
			_exit(10);
		if (swait_active(&head))
			_exit(11);
		swait_prepare(&head, &w2);
		swait_wake_one(&head);
		if (swait_sleep(&head, &w2, 0, CLOCK_MONOTONIC, &now) != 0)
			_exit(12);
		swait_finish(&head, &w2);
		_exit(swait_head_destroy(&head) == 0 ? 0 : 13);
	}
	assert_true(child > 0);
	assert_int_equal(err, 0);
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(swait_head_destroy(&head), 0);
}

/* PI heads spin too, and a wake seen there costs no system call. */
static void test_pi_head_spins(void **state)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long waits = futex_waits();
	struct timespec dl = in_ms(2000);

	(void)state;
	swait_head_init_pi(&head);
	action = WAKE_ONE;
	wake_at = 5;
	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl), 0);
	swait_finish(&head, &w);
	assert_int_equal(polls, 5);
	assert_int_equal(futex_waits() - waits, 0);
	assert_int_equal(wakes, 0);
	assert_int_equal(swait_head_destroy(&head), 0);
}

/*
 * S6: a waiter behind another does not spin (the next wake_one is not
 * its); once it is first, it does.  The one in front sleeps in a thread
 * of its own, without the poll hook acting there.
 */
static void test_only_front_spins(void **state)
{
	struct sleeper front = { NONE, -1, false };
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl;
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, spin_sleeper, &front), 0);
	while (!__atomic_load_n(&second_queued, __ATOMIC_ACQUIRE))
		sched_yield();		/* front is queued */
	swait_prepare(&head, &w);
	dl = in_ms(20);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	assert_int_equal(polls, 0);		/* behind: no spin */
	swait_wake_one(&head);			/* front's */
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(front.err, 0);
	/* The note is taken at prepare (S6): prepare again, as loops do. */
	swait_prepare(&head, &w);
	dl = in_ms(20);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	swait_finish(&head, &w);
	assert_true(polls > 0);			/* first now: it spins */
	assert_int_equal(swait_head_destroy(&head), 0);
}

static void test_set_spin(void **state)
{
	long old = 7;

	(void)state;
	assert_int_equal(swait_set_spin(-2, &old), EINVAL);
	assert_int_equal(old, 7);	/* untouched on error */
	assert_int_equal(swait_set_spin(SWAIT_SPIN_MAX_NS + 1, NULL), EINVAL);
	assert_int_equal(swait_set_spin(SWAIT_SPIN_MAX_NS, &old), 0);
	assert_int_equal(old, 1000000);		/* setup's */
	assert_int_equal(swait_spin_cap(), SWAIT_SPIN_MAX_NS);
	assert_int_equal(swait_set_spin(SWAIT_SPIN_DEFAULT, &old), 0);
	assert_int_equal(old, SWAIT_SPIN_MAX_NS);
	assert_int_equal(swait_set_spin(5, &old), 0);
	assert_int_equal(old, SWAIT_SPIN_DEFAULT);
	assert_int_equal(swait_spin_cap(), 5);
}

/* The process default: the build's, or SWAIT_SPIN_NS (argv[1] says). */
static long expect_default = SPIN_NS_BUILD;

static void test_default(void **state)
{
	(void)state;
	assert_int_equal(swait_set_spin(SWAIT_SPIN_DEFAULT, NULL), 0);
	assert_int_equal(swait_spin_cap(), expect_default);
}

/*
 * S5, from a thread pinned to one CPU: spins under SCHED_OTHER on the
 * process default (the control), not under SCHED_FIFO on that default,
 * and again under SCHED_FIFO with a cap of its own.  polls[] says which.
 */
struct rt_run {
	unsigned polls[3];
	int err;		/* pthread_setschedparam()'s */
};

static unsigned timed_sleep_polls(void)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	/*
	 * Far beyond any cap here, so that the deadline cannot end the spin
	 * first: with 1 ms, under DRD on a loaded machine the deadline had
	 * passed by the time the spin began, and the control saw no poll.
	 */
	struct timespec dl = in_ms(50);

	polls = 0;
	swait_prepare(&head, &w);
	assert_int_equal(swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	swait_finish(&head, &w);
	return polls;
}

static void *rt_pinned(void *arg)
{
	struct rt_run *run = arg;
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };
	cpu_set_t one;

	acting = true;		/* count this thread's polls */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	/* The default cap; the affinity re-read with it. */
	assert_int_equal(swait_set_spin(SWAIT_SPIN_DEFAULT, NULL), 0);
	run->polls[0] = timed_sleep_polls();
	run->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (run->err)
		return NULL;
	assert_int_equal(swait_set_spin(SWAIT_SPIN_DEFAULT, NULL), 0);
	run->polls[1] = timed_sleep_polls();
	assert_int_equal(swait_set_spin(5000, NULL), 0);
	run->polls[2] = timed_sleep_polls();
	assert_int_equal(pthread_setschedparam(pthread_self(), SCHED_OTHER,
					       &other), 0);
	return NULL;
}

static void test_rt_pinned(void **state)
{
	struct rt_run run = { { 0, 0, 0 }, 0 };
	pthread_t t;

	(void)state;
	if (expect_default == 0)
		skip();		/* a default of 0 never spins anyway */
	assert_int_equal(pthread_create(&t, NULL, rt_pinned, &run), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(run.polls[0] > 0);	/* the control: it spins */
	if (run.err == EPERM) {
		print_message("skipped: no privilege for SCHED_FIFO\n");
		skip();
	}
	assert_int_equal(run.err, 0);
	assert_int_equal(run.polls[1], 0);
	assert_true(run.polls[2] > 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wake_while_spinning,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_spins,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_mutex_form_spins,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_any_spins,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap_bounds,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_deadline_bounds,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_backoff,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_spin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_affinity_reread,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_handler_during_spin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_during_spin,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_wake_cancel_passes_on,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_mid_spin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pi_head_spins, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_only_front_spins, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_set_spin,
						setup, teardown),
		cmocka_unit_test(test_default),
		cmocka_unit_test_setup_teardown(test_rt_pinned, setup,
						teardown),
	};

	if (argc > 1)
		expect_default = strtol(argv[1], NULL, 10);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
