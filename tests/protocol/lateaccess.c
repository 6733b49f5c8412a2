// SPDX-License-Identifier: MIT
/*
 * lateaccess.c - invariant I3 of lib/swait.c: the waker's exchange to
 * WOKEN_* is its last access to the waiter's memory.
 *
 * A waiter that was woken before it announced a sleep may return at once:
 * swait_finish() sees WOKEN_ONE without taking the lock.  So each round here
 * gives the waker exactly that waiter: it prepares, never sleeps, spins
 * until the waker has published the round's flag, finishes and returns,
 * and the next round's frame is a new one (under ASan with
 * detect_stack_use_after_return, a returned frame is poisoned, so a waker
 * still reading the node is reported; in the race-window build the waker
 * is often preempted right after its exchange, which is the moment that
 * matters).  Without ASan it still checks that every round's wake was
 * consumed or passed on, never lost.
 *
 * The second test makes a late access fatal in every build: each round's
 * node lives alone in a page that is made inaccessible (mprotect
 * PROT_NONE, which shoots the mapping down on every CPU before it returns)
 * the moment swait_finish() returns.  A waker that still reads or writes
 * the node dies of SIGSEGV.  Its FUTEX_WAKE on the node's address is a
 * system call on a private futex, which never touches the page, and must
 * stay harmless.  Both threads share one CPU, so that whenever the waker
 * is preempted (in the race-window build: a yield at a protocol step) the
 * waiter runs its whole finish and mprotect before the waker goes on; on
 * two vCPUs the shootdown takes longer than any window the waker leaves.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

static struct swait_head head;
static unsigned long round_flag;	/* the round the waker has opened */
static unsigned long round_prepared;	/* the round the waiter queued for */

/* One round in its own frame, so that the waiter node dies with it. */
/* Where the protected test's nodes live: one a page, PAGES pages. */
#define PAGES 64
static char *pages;
static long page_size;

static struct swait_waiter *page_node(unsigned long r)
{
	return (struct swait_waiter *)(void *)
		(pages + (r % PAGES) * (unsigned long)page_size);
}

/*
 * One round on node w: queue, let the waker go, finish at a random moment
 * of the waker's wake_one.
 */
static void round_on(struct swait_waiter *w, unsigned long r)
{
	swait_prepare(&head, w);
	tu_release(&round_prepared);
	__atomic_store_n(&round_prepared, r, __ATOMIC_RELEASE);
	while (__atomic_load_n(&round_flag, __ATOMIC_ACQUIRE) < r)
		sched_yield();	/* never sleep on the head: the lockless exit */
	tu_acquire(&round_flag);
	/*
	 * Arrive at the finish a random while after the flag, so that across
	 * the rounds its lockless load sweeps the waker's whole wake_one,
	 * including just after the exchange.  Arriving first only serialises
	 * on the head lock.
	 */
	for (unsigned spin = (unsigned)(r * 2654435761u) >> 17; spin; spin--)
		__asm__ __volatile__("" ::: "memory");
	swait_finish(&head, w);
}

static __attribute__((noinline)) void waiter_round(unsigned long r)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	round_on(&w, r);
}

static void *waiter(void *arg)
{
	long rounds = (long)arg;

	for (long r = 1; r <= rounds; r++)
		waiter_round((unsigned long)r);
	return NULL;
}

/* The node's page is readable only from its prepare to its finish. */
static void *protected_waiter(void *arg)
{
	long rounds = (long)arg;

	if (tu_pin_self(0) != 0)
		return (void *)1;
	for (long r = 1; r <= rounds; r++) {
		struct swait_waiter *w = page_node((unsigned long)r);

		if (mprotect(w, (size_t)page_size, PROT_READ | PROT_WRITE))
			return (void *)1;
		swait_waiter_init(w);
		round_on(w, (unsigned long)r);
		if (mprotect(w, (size_t)page_size, PROT_NONE))
			return (void *)1;
	}
	return NULL;
}

/*
 * The waker's side: open each round once the waiter has queued for it.
 * With both, odd rounds wake with wake_all: a node it flips WOKEN_ALL is
 * not passed on, so its waiter's finish takes no lock and may return while
 * the waker is still inside its critical section.
 */
static void wake_rounds(void *(*waiter_fn)(void *), long rounds, bool both)
{
	pthread_t t;
	void *res;

	__atomic_store_n(&round_flag, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&round_prepared, 0, __ATOMIC_RELAXED);
	TU_SYNC_VAR(round_flag);
	TU_SYNC_VAR(round_prepared);
	tu_watchdog_arm(60, "late-access rounds", NULL);
	assert_int_equal(pthread_create(&t, NULL, waiter_fn, (void *)rounds),
			 0);
	for (long r = 1; r <= rounds; r++) {
		/*
		 * Wait until the waiter has queued for round r.  (Not
		 * swait_active(): round r - 1's wake may have landed on the
		 * round r node already, when the waiter's own finish beat it.)
		 */
		while (__atomic_load_n(&round_prepared, __ATOMIC_ACQUIRE) <
		       (unsigned long)r)
			sched_yield();	/* Valgrind runs one thread at a time */
		tu_acquire(&round_prepared);
		tu_release(&round_flag);
		__atomic_store_n(&round_flag, (unsigned long)r,
				 __ATOMIC_RELEASE);
		if (both && (r & 1))
			swait_wake_all(&head);	/* races the waiter's finish */
		else
			swait_wake_one(&head);
		/*
		 * 60 s for each 1,000 rounds, not for all: the handoffs only
		 * yield, and beside busy neighbours at the same priority a
		 * yield can give away a whole time slice (the whole loop went
		 * past 60 s under load).  A round that never ends still fails.
		 */
		if (r % 1000 == 0)
			tu_watchdog_arm(60, "late-access rounds", NULL);
	}
	assert_int_equal(pthread_join(t, &res), 0);
	assert_null(res);
	tu_watchdog_disarm();
	/* Every wake was consumed by a finish (passed on to nobody). */
	assert_false(swait_active(&head));
	assert_int_equal(swait_head_destroy(&head), 0);
}

static void wake_never_touches_a_returned_waiter(void **state)
{
	(void)state;
	wake_rounds(waiter, tu_scale(20000), false);
}

static void wake_never_touches_a_protected_waiter(void **state)
{
	cpu_set_t cpus;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
	assert_int_equal(tu_pin_self(0), 0);
	page_size = sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, PAGES * (size_t)page_size, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pages != MAP_FAILED);
	wake_rounds(protected_waiter, tu_scale(20000), true);
	assert_int_equal(munmap(pages, PAGES * (size_t)page_size), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(cpus), &cpus), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wake_never_touches_a_returned_waiter),
		cmocka_unit_test(wake_never_touches_a_protected_waiter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
