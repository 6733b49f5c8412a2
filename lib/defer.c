// SPDX-License-Identifier: MIT
/*
 * defer.c - wakes from signal handlers.  The one file that knows both the
 * wakes (lib/swait.c) and the completions (lib/completion.c), because a
 * posted set holds both and is performed here.
 *
 * The four wakes (swait_wake_one, swait_wake_all, swait_complete,
 * swait_complete_all) may run in a signal handler, the user-space analogue
 * of the kernel's swake_up_one() from a hard interrupt.  The hazard is a
 * handler that interrupts a thread while that thread holds (or is taking)
 * the head lock it wants: it would wait for itself.  So every thread keeps
 * a stack of the heads it is locking (lib/headlock.c, H1-H3), and a handler
 * that finds its head there posts its wake to the holder instead.
 *
 *  S1. A wake first looks for its head on its own thread's stack.  Found
 *      and open: it adds itself to that entry's pending set and returns
 *      without touching the head.  Otherwise it runs as usual: no entry of
 *      this thread holds the lock, so waiting for the lock waits for
 *      another thread, which finishes an O(1) critical section (I5).
 *  S2. The holder's release is: unlock the word, close the entry, read the
 *      pending set, pop (H2).  So a post lands either before the close
 *      (and the read sees it) or after it (and the handler, finding no
 *      open entry, wakes by itself, the lock being free of this thread).
 *      The holder then performs what it read, as ordinary calls, before
 *      the interrupted call returns: swait_head_unlock() calls
 *      swait_run_posted(), the one call from the lock up into this file.
 *      Nothing is lost and no thread waits for itself.
 *  S3. Posts from nested handlers race with each other, so a post is a
 *      compare-and-swap on the entry; the holder's side needs none (H3).
 *  S4. A posted complete is performed by the same call that held the lock,
 *      before it returns; until then the event is not posted, so no waiter
 *      can have consumed it and freed the completion.  The handler itself
 *      never touches the head after its post.  n posted completes post one
 *      event per lock hold that wakes a waiter (swait_complete_n), as n
 *      calls would, so the last hold is the last access.
 *  S5. A timer may post faster than the holder performs: the performing
 *      calls' own unlocks of the head find new posts.  They hand them to
 *      the loop already running (swait_tls.running, swait_tls.backlog)
 *      instead of starting another, so the backlog costs time, not stack;
 *      the counts are word-sized, so they do not overflow.
 *
 * Handlers on different threads.  S1 covers a handler whose own thread
 * holds the head it wakes.  But T1's handler may wake head B, held by T2,
 * while T2's handler wakes head A, held by T1: if each waited for the lock,
 * each would wait for a thread stuck in a handler that waits too.
 *
 *  S6. A wake in a handler whose thread takes or holds any head lock
 *      (depth > 0), on a head that thread does not hold, never waits for a
 *      lock: it posts itself to its own thread's foreign list
 *      (swait_tls.foreign, one entry per head, reserved before it is
 *      filled, H1's way), and the thread performs the list when its
 *      outermost hold ends (depth back to 0), in swait_run_posted().  The
 *      library never takes a head lock while its thread holds another
 *      (each critical section locks one head; S1 and S6 post instead), so
 *      a thread that waits for a lock holds none: nobody waits for it, and
 *      the holder it waits for finishes an O(1) critical section plus
 *      handlers that never wait.  No cycle of waits can form, across any
 *      number of threads and handlers, on ordinary and PI heads alike.
 *      The drain copies the entries at depth 0, where no handler posts
 *      foreign, and empties the list with a compare-and-swap of its count,
 *      so that an entry a nested handler appended during the copy (from a
 *      call of its own, at depth 1) is copied too, not dropped.  S4's rule
 *      holds: a posted complete is not an event until the thread performs
 *      it, so no waiter can have consumed it and freed the completion.
 *
 * Cancellation reaches handlers too.  A sleep is a cancellation point, and
 * to be one while blocked in FUTEX_WAIT it switches to asynchronous
 * cancellation around the system call (lib/swait.c, lib/any.c).  A handler
 * that runs in that window inherits the asynchronous type: a pthread_cancel()
 * landing while the handler is inside a wake would unwind it with a head
 * lock held, and every later call on that head would hang.
 *
 *  C1. The sleep marks its window in swait_tls (swait_async_window_open
 *      and _close, the mark set before the type turns asynchronous and
 *      cleared after it is restored).  A wake that finds the mark is in a
 *      handler that interrupted the window; it runs with cancellation
 *      disabled and deferred, and restores both when it is done, after its
 *      last unlock.  A cancel that landed meanwhile acts
 *      there, unwinding a handler that holds nothing.  A cancel signal
 *      already in flight when the state was disabled is ignored by glibc's
 *      handler and acted on at the restore.
 *
 * Memory ordering.  Every rule above is between a thread and the handlers
 * that interrupt it: the posting handler and the performing holder run on
 * one thread, which the kernel's signal delivery and return order like
 * ordinary program order on every architecture.  So compiler barriers
 * (swait_signal_fence(), which emits no instruction, not even on ARM or
 * POWER) and single-word atomics suffice; no hardware barrier is needed
 * here.  The wakes a holder performs are ordinary calls, ordered by
 * lib/swait.c's O1-O4.
 *
 * tests/model/sig.pml checks S1-S5 and H1-H3 exhaustively, with a handler
 * nested in the handler and another thread contending for the lock; its
 * seeded bugs sig_fill_first (H1), sig_pop_first (H2) and sig_no_recheck
 * (S5) are each caught.
 */
#include <pthread.h>
#include <stddef.h>

#include "check.h"
#include "completion.h"
#include "defer.h"
#include "internal.h"

#if SWAIT_TEST_HOOKS
unsigned long swait_hook_deferred;
#endif

/*
 * Add the set what to the set v: counts add, flags or.  wake_one counts
 * past their field become a wake_all, a superset (spurious wakeups are
 * allowed); complete counts are exact, so a field that would overflow
 * aborts (2^32 completes posted during one lock hold on LP64).
 */
static swait_posted_t posted_add(struct swait_head *h, swait_posted_t v,
				 swait_posted_t what)
{
	swait_posted_t ones = (v & POST_ONE_MASK) + (what & POST_ONE_MASK);
	swait_posted_t completes = (v & POST_COMPLETE_MASK) / POST_COMPLETE +
				   (what & POST_COMPLETE_MASK) / POST_COMPLETE;
	swait_posted_t flags = (v | what) & ~(POST_ONE_MASK |
					      POST_COMPLETE_MASK);

	if (ones > POST_ONE_MASK) {
		ones = 0;
		flags |= POST_WAKE_ALL;
	}
	/* In every build: an overflow would lose completes silently. */
	if (swait_unlikely(completes > POST_COMPLETE_MASK / POST_COMPLETE))
		swait_fatal("too many swait_complete() from signal handlers "
			    "during one lock hold [head, pending]", h,
			    (void *)v, NULL);
	return flags | ones | completes * POST_COMPLETE;
}

/* Add what to entry e's set: a CAS, as nested handlers may too (S3). */
static void post_to_entry(struct swait_held *e, struct swait_head *h,
			  swait_posted_t what)
{
	swait_posted_t p = __atomic_load_n(&e->pending, __ATOMIC_RELAXED);

	while (!__atomic_compare_exchange_n(&e->pending, &p,
			posted_add(h, p, what), false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
#if SWAIT_TEST_HOOKS
	__atomic_add_fetch(&swait_hook_deferred, 1, __ATOMIC_RELAXED);
#endif
}

/* S1, with S3's CAS against nested handlers: a handler's only access. */
static bool post_to_holder(struct swait_head *h, swait_posted_t what)
{
	unsigned d = __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED);

	while (d-- > 0) {
		struct swait_held *e = &swait_tls.held[d];

		if (__atomic_load_n(&e->head, __ATOMIC_RELAXED) != h)
			continue;
		post_to_entry(e, h, what);
		return true;
	}
	return false;
}

/* S6: h is not held by this thread, which holds another head. */
static void post_foreign(struct swait_head *h, swait_posted_t what)
{
	unsigned n = __atomic_load_n(&swait_tls.nforeign, __ATOMIC_RELAXED);
	struct swait_held *e = NULL;

	for (unsigned i = 0; i < n && !e; i++)
		if (__atomic_load_n(&swait_tls.foreign[i].head,
				    __ATOMIC_RELAXED) == h)
			e = &swait_tls.foreign[i];
	if (!e) {
		/* In every build: past the bound we would write past it. */
		if (swait_unlikely(n >= SWAIT_FOREIGN_MAX))
			swait_fatal("signal handlers posted wakes to more than "
				    "8 heads (SWAIT_FOREIGN_MAX) during one "
				    "lock hold of their thread [head]",
				    h, NULL, NULL);
		/* H1's order: reserve, then fill; a nested post goes above. */
		e = &swait_tls.foreign[n];
		__atomic_store_n(&swait_tls.nforeign, n + 1, __ATOMIC_RELAXED);
		swait_signal_fence();
		__atomic_store_n(&e->pending, 0, __ATOMIC_RELAXED);
		swait_signal_fence();
		__atomic_store_n(&e->head, h, __ATOMIC_RELAXED);
		swait_signal_fence();
	}
	post_to_entry(e, h, what);
}

bool swait_from_handler_slow(struct swait_head *h, swait_posted_t what,
			     void (*fn)(void *), void *arg)
{
	int state, type;

	if (__atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) != 0) {
		if (!post_to_holder(h, what))	/* S1 */
			post_foreign(h, what);	/* S6 */
		return true;
	}
	if (__atomic_load_n(&swait_tls.async_window, __ATOMIC_RELAXED) == 0)
		return false;
	/*
	 * C1: nothing unwinds fn while it holds a lock.  Disabled, so that a
	 * cancel signal already in flight is ignored; deferred too, because
	 * glibc 2.36 acts on a pending cancel when an asynchronous thread
	 * re-enables, but leaves the thread's result NULL instead of
	 * PTHREAD_CANCELED; a deferred one is acted on at the re-enable
	 * with the right result.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
	fn(arg);
	pthread_setcancelstate(state, NULL);	/* a cancel may act here */
	pthread_setcanceltype(type, NULL);
	return true;
}

/* S5: a set found by an unlock of the head being performed, for the loop. */
static void backlog_add(struct swait_head *h, swait_posted_t what)
{
	swait_posted_t p = __atomic_load_n(&swait_tls.backlog,
					   __ATOMIC_RELAXED);

	/* A CAS: a handler's own unlock of h may add to it too. */
	while (!__atomic_compare_exchange_n(&swait_tls.backlog, &p,
			posted_add(h, p, what), false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* One set, as the calls it stands for (S4: complete_n's rule). */
static void perform_set(struct swait_head *h, swait_posted_t p)
{
	swait_posted_t n;

	/* Only the completion calls post POST_COMPLETE*: h is c->wait. */
	if (p & (POST_COMPLETE_MASK | POST_COMPLETE_ALL)) {
		struct swait_completion *c = (struct swait_completion *)
			(void *)((char *)h -
				 offsetof(struct swait_completion, wait));

		if (p & POST_COMPLETE_MASK)
			swait_complete_n(c, (p & POST_COMPLETE_MASK) /
					 POST_COMPLETE);
		if (p & POST_COMPLETE_ALL)
			swait_complete_all(c);
	}
	/* More wake_ones than waiters wake nobody more. */
	for (n = p & POST_ONE_MASK; n > 0 && swait_active(h); n--)
		swait_wake_one(h);
	if (p & POST_WAKE_ALL)
		swait_wake_all(h);
}

/*
 * S6, at depth 0: perform the foreign list.  Only the outermost drain runs;
 * an unlock inside its calls leaves new entries to its loop, which looks
 * again after it stops draining (S5's pattern), so none is stranded.
 */
static void run_foreign(void)
{
	struct swait_held copy[SWAIT_FOREIGN_MAX];

	if (__atomic_load_n(&swait_tls.draining, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&swait_tls.draining, 1, __ATOMIC_RELAXED);
	swait_signal_fence();
	for (;;) {
		unsigned got = 0, n;

		/* Copy and empty: a CAS, so an append during it is copied. */
		do {
			n = __atomic_load_n(&swait_tls.nforeign,
					    __ATOMIC_RELAXED);
			for (; got < n; got++) {
				struct swait_held *e = &swait_tls.foreign[got];

				/*
				 * Close, then read (H2's order): a post
				 * after the close finds no entry for its
				 * head and appends one, which the CAS sees.
				 */
				copy[got].head = __atomic_exchange_n(
					&e->head, NULL, __ATOMIC_RELAXED);
				swait_signal_fence();
				copy[got].pending = __atomic_exchange_n(
					&e->pending, 0, __ATOMIC_RELAXED);
			}
			swait_signal_fence();
		} while (!__atomic_compare_exchange_n(&swait_tls.nforeign, &n, 0,
				false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		swait_signal_fence();
		for (unsigned i = 0; i < got; i++)
			if (copy[i].head && copy[i].pending)
				perform_set(copy[i].head, copy[i].pending);
		if (got != 0)
			continue;
		/* Stop draining, then look once more (S5's pattern). */
		__atomic_store_n(&swait_tls.draining, 0, __ATOMIC_RELAXED);
		swait_signal_fence();
		if (__atomic_load_n(&swait_tls.nforeign, __ATOMIC_RELAXED) == 0)
			break;
		__atomic_store_n(&swait_tls.draining, 1, __ATOMIC_RELAXED);
		swait_signal_fence();
	}
}

/* S2, S5 for h's own posts. */
static void run_own(struct swait_head *h, swait_posted_t p)
{
	struct swait_head *running = __atomic_load_n(&swait_tls.running,
						     __ATOMIC_RELAXED);

	if (running == h) {
		backlog_add(h, p);	/* S5: the loop below us runs it */
		return;
	}
	if (running != NULL) {
		/*
		 * Another head's loop is below us: we are in a handler that
		 * interrupted it (its own calls touch only its head).  Run
		 * this set directly; a post during it comes from a handler
		 * nested in this one, so the recursion is bounded by that.
		 */
		perform_set(h, p);
		return;
	}
	__atomic_store_n(&swait_tls.running, h, __ATOMIC_RELAXED);
	swait_signal_fence();
	for (;;) {
		perform_set(h, p);
		p = __atomic_exchange_n(&swait_tls.backlog, 0, __ATOMIC_RELAXED);
		if (p != 0)
			continue;
		/*
		 * Stop running, then look once more: an unlock of h by a
		 * handler in between added its set to the backlog.  After
		 * the store, such an unlock runs its set itself.
		 */
		__atomic_store_n(&swait_tls.running, NULL, __ATOMIC_RELAXED);
		swait_signal_fence();
		p = __atomic_exchange_n(&swait_tls.backlog, 0, __ATOMIC_RELAXED);
		if (p == 0)
			break;
		__atomic_store_n(&swait_tls.running, h, __ATOMIC_RELAXED);
		swait_signal_fence();
	}
}

/*
 * S2, S5: the holder performs what its handlers posted.  Iteratively: the
 * calls that perform it lock and unlock h again, and their unlocks may
 * find new posts (a timer can outpace the holder); those go to
 * swait_tls.backlog and this loop, not to a nested loop, so the stack does
 * not grow with the backlog.  Then, once this thread holds no lock, S6's
 * foreign list.
 */
void swait_run_posted(struct swait_head *h, swait_posted_t p)
{
	if (p != 0)
		run_own(h, p);
	if (__atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) == 0 &&
	    __atomic_load_n(&swait_tls.nforeign, __ATOMIC_RELAXED) != 0)
		run_foreign();
}
