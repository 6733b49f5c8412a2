// SPDX-License-Identifier: MIT
/*
 * sigwake.c - the four wakes, and the two peeks (swait_active,
 * swait_has_sleeper), called from a signal handler that interrupted the
 * thread holding the same head's lock (lib/headlock.c, L1-L7).
 *
 * Deterministic: a test hook runs inside swait_prepare()'s critical
 * section and raise()s the signal there, so the handler always lands while
 * its own thread holds the lock.  Before the design, every case here hung
 * (ordinary heads: the handler parks on a lock its thread holds) or aborted
 * (PI heads: FUTEX_LOCK_PI says EDEADLK).  The watchdog turns a hang into
 * a failure.  Each case also checks that the wake was deferred (the
 * library's counter) and performed before the interrupted call returned.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_prepare_locked)(struct swait_head *head);
extern unsigned long swait_hook_deferred;
extern unsigned long swait_hook_spills;

enum op { OP_WAKE_ONE, OP_WAKE_ALL, OP_COMPLETE, OP_COMPLETE_ALL, OP_NONE,
	  OP_COMPLETE_MANY, OP_COMPLETE_THEN_ALL, OP_PEEK };

/*
 * More completes than a PI head's posted count holds (2,047, lib/headlock.c
 * L6), and than an ordinary one's wake_one count (15): all from handlers
 * that interrupted their own thread's hold.
 */
#define MANY 5000

/* What the handler does, on which head; set before the raise. */
static enum op handler_op;
static struct swait_completion comp;
static struct swait_head other;		/* a head the thread does not hold */
static struct swait_head *hook_target;
static int hook_fired;
static int peek_active = -1, peek_sleeper = -1;	/* OP_PEEK's answers */

static void on_signal(int sig)
{
	(void)sig;
	switch (handler_op) {
	case OP_WAKE_ONE:
		swait_wake_one(&comp.wait);
		break;
	case OP_WAKE_ALL:
		swait_wake_all(&comp.wait);
		break;
	case OP_COMPLETE:
		swait_complete(&comp);
		swait_complete(&comp);	/* two posts: counted, not merged */
		break;
	case OP_COMPLETE_ALL:
		swait_complete_all(&comp);
		break;
	case OP_NONE:
		/* Not the held head: free, so taken at once (L2). */
		swait_wake_one(&other);
		break;
	case OP_COMPLETE_MANY:
		for (int i = 0; i < MANY; i++)
			swait_complete(&comp);
		break;
	case OP_COMPLETE_THEN_ALL:
		swait_complete(&comp);
		swait_complete_all(&comp);
		break;
	case OP_PEEK:
		/* Async-signal-safe too: a load and a barrier, no lock. */
		peek_active = swait_active(&comp.wait);
		peek_sleeper = swait_has_sleeper(&comp.wait);
		break;
	}
}

/* Runs under hook_target's lock: the handler interrupts the holder. */
static void raise_hook(struct swait_head *h)
{
	if (h != hook_target)
		return;
	hook_fired++;
	raise(SIGUSR2);
}

static int setup(void **state)
{
	(void)state;
	return tu_signal_handler(SIGUSR2, on_signal, 0, NULL);
}

/* How the completion's head is made: as by swait_completion_init, PI, asym. */
enum kind { PLAIN, PI, ASYM };

static void init_heads(enum kind k)
{
	swait_completion_init(&comp);
	if (k == PI)
		swait_head_init_pi(&comp.wait);
	if (k == ASYM)	/* only the cases that use it as a plain head */
		assert_int_equal(swait_head_init_asym(&comp.wait), 0);
	swait_head_init(&other);
}

/* Prepare w on the completion's head with the handler raised inside. */
static void prepare_with_signal(struct swait_waiter *w, enum op op)
{
	handler_op = op;
	hook_target = &comp.wait;
	hook_fired = 0;
	__atomic_store_n(&swait_hook_prepare_locked, raise_hook,
			 __ATOMIC_RELEASE);
	swait_prepare(&comp.wait, w);
	__atomic_store_n(&swait_hook_prepare_locked, NULL, __ATOMIC_RELEASE);
	assert_int_equal(hook_fired, 1);
}

/* A sleep with a past deadline: 0 iff the waiter had been woken. */
static int poll_sleep(struct swait_head *h, struct swait_waiter *w)
{
	static const struct timespec past = { 0, 0 };

	return swait_sleep(h, w, 0, CLOCK_MONOTONIC, &past);
}

static void run_wake_one(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;

	init_heads(k);
	tu_watchdog_arm(20, "wake_one from a handler on the holder", NULL);
	prepare_with_signal(&w, OP_WAKE_ONE);
	assert_int_equal(swait_hook_deferred - before, 1);
	/* Performed before prepare returned: the waiter is already woken. */
	assert_false(swait_active(&comp.wait));
	assert_int_equal(poll_sleep(&comp.wait, &w), 0);
	swait_finish(&comp.wait, &w);
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

static void run_wake_all(enum kind k)
{
	struct swait_waiter w1 = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter w2 = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;

	init_heads(k);
	tu_watchdog_arm(20, "wake_all from a handler on the holder", NULL);
	swait_prepare(&comp.wait, &w1);
	prepare_with_signal(&w2, OP_WAKE_ALL);
	assert_int_equal(swait_hook_deferred - before, 1);
	assert_false(swait_active(&comp.wait));
	assert_int_equal(poll_sleep(&comp.wait, &w1), 0);
	assert_int_equal(poll_sleep(&comp.wait, &w2), 0);
	swait_finish(&comp.wait, &w1);
	swait_finish(&comp.wait, &w2);
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

static void run_complete(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;

	init_heads(k);
	tu_watchdog_arm(20, "complete from a handler on the holder", NULL);
	prepare_with_signal(&w, OP_COMPLETE);
	assert_int_equal(swait_hook_deferred - before, 2);
	/* Both events posted, the queued waiter woken by the first. */
	assert_int_equal(poll_sleep(&comp.wait, &w), 0);
	swait_finish(&comp.wait, &w);
	assert_true(swait_completion_try_wait(&comp));
	assert_true(swait_completion_try_wait(&comp));
	assert_false(swait_completion_try_wait(&comp));
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

static void run_complete_all(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;

	init_heads(k);
	tu_watchdog_arm(20, "complete_all from a handler on the holder", NULL);
	prepare_with_signal(&w, OP_COMPLETE_ALL);
	assert_int_equal(swait_hook_deferred - before, 1);
	assert_int_equal(poll_sleep(&comp.wait, &w), 0);
	swait_finish(&comp.wait, &w);
	assert_true(swait_completion_done(&comp));
	assert_true(swait_completion_try_wait(&comp));
	assert_true(swait_completion_try_wait(&comp));	/* done for all */
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

/*
 * A wake of a head nobody holds, from a handler that interrupted a hold of
 * another head: the handler finds its lock free, takes it and wakes at
 * once (lib/headlock.c L2); nothing is posted and nothing waits.
 */
static void run_other_head(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct swait_waiter wo = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;

	init_heads(k);
	tu_watchdog_arm(20, "handler wakes another head", NULL);
	swait_prepare(&other, &wo);
	prepare_with_signal(&w, OP_NONE);
	assert_int_equal(swait_hook_deferred - before, 0);
	assert_int_equal(poll_sleep(&other, &wo), 0);		/* woken */
	assert_int_equal(poll_sleep(&comp.wait, &w), ETIMEDOUT);	/* not */
	swait_finish(&other, &wo);
	swait_finish(&comp.wait, &w);
	tu_watchdog_disarm();
}

/*
 * After MANY completes from handlers: all counted, none twice; on a PI
 * head each past the 2,047th was spilled (lib/wake.c), on an ordinary one
 * none was (its count holds 16,777,215).
 */
static void many_counted(enum kind k, unsigned long spills)
{
	assert_int_equal(swait_hook_spills - spills,
			 k == PI ? MANY - 2047 : 0);
	assert_int_equal(__atomic_load_n(&comp.done, __ATOMIC_RELAXED), MANY);
	for (int i = 0; i < MANY; i++)
		assert_true(swait_completion_try_wait(&comp));
	assert_false(swait_completion_try_wait(&comp));
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

/*
 * MANY completes posted to the thread's own hold: on a PI head the count
 * fills at 2,047 and the handler spills the rest into done itself (it
 * once hung here, waiting for a holder that could not run).  Every one is
 * counted, none twice, and the queued waiter is woken.
 */
static void run_complete_many(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;
	unsigned long spills = swait_hook_spills;

	init_heads(k);
	tu_watchdog_arm(20, "many completes from a handler on the holder",
			NULL);
	prepare_with_signal(&w, OP_COMPLETE_MANY);
	assert_true(swait_hook_deferred - before >= 2047);
	assert_int_equal(poll_sleep(&comp.wait, &w), 0);
	swait_finish(&comp.wait, &w);
	many_counted(k, spills);
}

/*
 * MANY completes from a handler, on a head that ANOTHER thread holds and
 * will not release before the handler returns: it waits for this thread.
 * That is the deadlock of two threads whose handlers fill each other's
 * heads (tests/protocol/crosswake.c), made deterministic.  On a PI head the
 * count of posted completes fills at 2,047; the handler used to wait for
 * room there, for good (lib/headlock.c L6).  Now it counts itself in REFS
 * and adds the rest to done itself (a spill, lib/wake.c), posting only
 * their wakes.  Every event is counted once, and the holder's own waiter
 * is woken by what its release performs.
 */
static __thread int i_am_holder;	/* the thread that holds comp */
static int holder_in, holder_go;

static void hold_or_raise_hook(struct swait_head *h)
{
	if (h == &comp.wait && i_am_holder) {
		__atomic_store_n(&holder_in, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&holder_go, __ATOMIC_ACQUIRE))
			sched_yield();
	} else if (h == &other) {
		hook_fired++;
		raise(SIGUSR2);
	}
}

static void *hold_comp(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int *woken = arg;

	i_am_holder = 1;
	swait_prepare(&comp.wait, &w);	/* the hook holds it here */
	*woken = poll_sleep(&comp.wait, &w) == 0;
	swait_finish(&comp.wait, &w);
	return NULL;
}

static void run_many_held_elsewhere(enum kind k)
{
	struct swait_waiter wo = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;
	unsigned long spills = swait_hook_spills;
	pthread_t t;
	int woken = -1;

	init_heads(k);
	holder_in = holder_go = hook_fired = 0;
	TU_SYNC_VAR(holder_in);
	TU_SYNC_VAR(holder_go);
	tu_watchdog_arm(20, "many completes from a handler on a head another "
			"thread holds", NULL);
	handler_op = OP_COMPLETE_MANY;
	__atomic_store_n(&swait_hook_prepare_locked, hold_or_raise_hook,
			 __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&t, NULL, hold_comp, &woken), 0);
	while (!__atomic_load_n(&holder_in, __ATOMIC_ACQUIRE))
		sched_yield();
	/* Our hold of other, interrupted: the handler completes comp. */
	swait_prepare(&other, &wo);
	assert_int_equal(hook_fired, 1);
	__atomic_store_n(&holder_go, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(t, NULL), 0);
	__atomic_store_n(&swait_hook_prepare_locked, NULL, __ATOMIC_RELEASE);
	swait_finish(&other, &wo);
	assert_true(swait_hook_deferred - before >= 2047);
	assert_int_equal(woken, 1);
	many_counted(k, spills);
}

/*
 * A complete flips the waiter while it is still between its prepare and
 * its condition, then a complete_all makes done UINT_MAX: the condition
 * (try_wait) waits out walks under the lock, and must not count the
 * waiter itself, flipped but not yet left, among what it waits for
 * (lib/wake.c, LEAVERS: a completion's wakes count no leavers).  It hung
 * when they did.
 */
static void run_complete_then_all(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	init_heads(k);
	tu_watchdog_arm(20, "complete_all seen by a woken waiter's condition",
			NULL);
	prepare_with_signal(&w, OP_COMPLETE_THEN_ALL);
	assert_true(swait_completion_try_wait(&comp));	/* the condition */
	swait_finish(&comp.wait, &w);
	assert_true(swait_completion_done(&comp));
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

/*
 * swait_active() and swait_has_sleeper() from a handler on the holder
 * (swait.h and swait(7) call them async-signal-safe): no hang (they take
 * no lock), no misuse abort in debug builds, and the true answer: the
 * interrupted prepare had already queued its waiter.
 */
static void run_peek(enum kind k)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	init_heads(k);
	peek_active = peek_sleeper = -1;
	tu_watchdog_arm(20, "swait_active/has_sleeper from a handler on the "
			"holder", NULL);
	prepare_with_signal(&w, OP_PEEK);
	assert_int_equal(peek_active, 1);
	assert_int_equal(peek_sleeper, 1);
	swait_finish(&comp.wait, &w);
	assert_int_equal(swait_head_destroy(&comp.wait), 0);
	tu_watchdog_disarm();
}

#define BOTH(name)							\
	static void name##_plain(void **s) { (void)s; run_##name(PLAIN); } \
	static void name##_pi(void **s) { (void)s; run_##name(PI); }
/*
 * On an asymmetric head (lib/asym.c) the handler's wake or peek has no
 * fence, and the interrupted prepare ends in membarrier(): the post to the
 * holder must work the same.
 */
#define ASYM_TOO(name)							\
	static void name##_asym(void **s) { (void)s; run_##name(ASYM); }
BOTH(wake_one)
BOTH(wake_all)
BOTH(complete)
BOTH(complete_all)
BOTH(other_head)
BOTH(complete_many)
BOTH(many_held_elsewhere)
BOTH(complete_then_all)
BOTH(peek)
ASYM_TOO(wake_one)
ASYM_TOO(wake_all)
ASYM_TOO(peek)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wake_one_plain),
		cmocka_unit_test(wake_one_pi),
		cmocka_unit_test(wake_all_plain),
		cmocka_unit_test(wake_all_pi),
		cmocka_unit_test(complete_plain),
		cmocka_unit_test(complete_pi),
		cmocka_unit_test(complete_all_plain),
		cmocka_unit_test(complete_all_pi),
		cmocka_unit_test(other_head_plain),
		cmocka_unit_test(other_head_pi),
		cmocka_unit_test(complete_many_plain),
		cmocka_unit_test(complete_many_pi),
		cmocka_unit_test(many_held_elsewhere_plain),
		cmocka_unit_test(many_held_elsewhere_pi),
		cmocka_unit_test(complete_then_all_plain),
		cmocka_unit_test(complete_then_all_pi),
		cmocka_unit_test(peek_plain),
		cmocka_unit_test(peek_pi),
		cmocka_unit_test(wake_one_asym),
		cmocka_unit_test(wake_all_asym),
		cmocka_unit_test(peek_asym),
	};

	if (tu_emulator_shares_tls()) {
		puts("skipped: qemu-i386 moves a thread's thread-local storage "
		     "once a signal handler has run (cross/qemu-i386.ini)");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
