// SPDX-License-Identifier: MIT
/*
 * completion.c - the kernel's completions, on a swait head.
 *
 * done is written under the head lock (or, on a PI head, by a thread counted
 * at it: a spill, below) and read under it before a wait returns, as in the
 * kernel (kernel/sched/completion.c).  That is what lets a waiter free an
 * on-stack completion as soon as its wait returns:
 *
 *  - swait_complete() increments done and dequeues a waiter in one critical
 *    section, and touches the completion only by FUTEX_WAKE after unlocking.
 *    A waiter that consumes done takes the same lock, so it cannot return
 *    before the completer is done with the memory.  On a PI head the
 *    completer still leaves REFS after its unlock (lib/headlock.c L7), so
 *    a waiter that finds an event waits there until it is the only thread
 *    counted (swait_quiesce_dropping_lock) before it returns.
 *  - swait_complete_all() walks its waiters with the lock dropped between
 *    wakes (bounded hold, lib/swait.c I5).  A waiter that sees done ==
 *    UINT_MAX therefore also waits, under the lock, until no walk is in
 *    progress (swait_quiesce_dropping_lock) before it may return.  The
 *    head is marked as a completion's (lib/state.h), so that its wakes
 *    count no leavers (lib/wake.c): that wait must not wait for its own
 *    thread.
 *
 * Completes posted by signal handlers (lib/headlock.c L2) are performed by
 * the lock's holder before its release, through complete_sink(), which
 * adds them to done under the lock: so a waiter that takes the lock sees
 * them, and the holder's release is its last access.  On a PI head whose
 * count of posted completes is full, the handler counts itself in REFS
 * and adds its event through the same sink without the lock (a spill,
 * lib/wake.c, L6); the waiter that sees it waits for it to leave REFS, as
 * for a completer still leaving.
 *
 * The lockless "done == 0" peeks are safe without a barrier: a waiter that
 * peeks after its prepare either sees the count, or the completer's critical
 * section (which writes the count) comes after the prepare's and finds the
 * waiter queued.  A complete posted to a holder and not yet performed is
 * not in done yet: the peek decides "not done" only while the head's lock
 * is idle (swait_head_busy: not held, nothing posted, and on a PI head
 * no thread in REFS), and under the lock a PI head's sets posted for the
 * last one out are performed first, so that swait_completion_done() is
 * true once swait_complete() has returned.
 */
#include <limits.h>
#include <stddef.h>

#include "annotate.h"
#include "check.h"
#include "headlock.h"
#include "internal.h"
#include "queue.h"
#include "state.h"

static inline unsigned int peek_done(const struct swait_completion *c)
{
	return __atomic_load_n(&c->done, __ATOMIC_RELAXED);
}

/* Store under the lock, atomic because of the lockless peeks. */
static inline void set_done(struct swait_completion *c, unsigned int v)
{
	swait_ann_sync_word(&c->done, sizeof(c->done));
	__atomic_store_n(&c->done, v, __ATOMIC_RELAXED);
}

SWAIT_EXPORT void swait_completion_init(struct swait_completion *c)
{
	swait_head_init_checked(&c->wait, SWAIT_WALKS_EVENTS,
		"swait_completion_init: the completion still has waiters, "
		"who would never be woken (re-initialised while in use? "
		"swait_completion_reinit() keeps them) [head, first waiter]");
	set_done(c, 0);
}

SWAIT_EXPORT void swait_completion_reinit(struct swait_completion *c)
{
	set_done(c, 0);
}

static inline struct swait_completion *completion_of(struct swait_head *h)
{
	return (struct swait_completion *)(void *)
		((char *)h - offsetof(struct swait_completion, wait));
}

/*
 * n events posted, or all of them (queue.h's sink): with the lock held, or
 * on a PI head by a thread counted in REFS without it, whose posted count
 * was full (a spill, lib/wake.c, L6): perhaps a handler that interrupted
 * this very update, or a check_done() under the lock; so every change of
 * done is an atomic read-modify-write.
 */
static void complete_sink(struct swait_head *h, uint32_t n, bool all)
{
	struct swait_completion *c = completion_of(h);
	unsigned int d = peek_done(c), v;
	uint32_t w = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);

	/*
	 * Before the flips that follow: they count no leavers here.  Relaxed:
	 * every reader of the mark holds the lock, which orders it.
	 */
	if (!(w & swait_events_bit(w)))
		__atomic_fetch_or(&h->walks, swait_events_bit(w),
				  __ATOMIC_RELAXED);
	swait_ann_sync_word(&c->done, sizeof(c->done));
	do {
		if (all || d == UINT_MAX)
			v = UINT_MAX;	/* saturates, as the kernel's */
		else
			v = n >= UINT_MAX - d ? UINT_MAX : d + n;
	} while (!__atomic_compare_exchange_n(&c->done, &d, v, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

__attribute__((constructor))
static void register_sink(void)
{
	__atomic_store_n(&swait_complete_sink, complete_sink,
			 __ATOMIC_RELAXED);
}

SWAIT_EXPORT void swait_complete(struct swait_completion *c)
{
	/* No empty-head peek: the count changes whoever waits. */
	swait_wake_call(&c->wait, SWAIT_POST_COMPLETE);
}

SWAIT_EXPORT void swait_complete_all(struct swait_completion *c)
{
	swait_wake_call(&c->wait, SWAIT_POST_COMPLETE_ALL);
}

/*
 * Whether an event is posted, consuming one if consume.  Under the lock even
 * when it only looks, as in the kernel: a complete() still holding the lock
 * (or a complete_all() walk, which quiesce waits out) is done with *c when
 * this returns, so the caller may free c on true.
 */
static bool check_done(struct swait_completion *c, bool consume)
{
	bool pi = swait_head_is_pi(&c->wait);
	unsigned int d;

	/*
	 * Without the lock only while the head is idle (the lock word first,
	 * acquire, then done): a holder takes a set of posted completes off
	 * the word and adds them to done before its release completes, so a
	 * look at done and the posted bits alone missed the set in between.
	 */
	if (!swait_head_busy(&c->wait) && peek_done(c) == 0)
		return false;
	swait_head_lock(&c->wait);
	if (pi && swait_head_posted(&c->wait)) {
		/*
		 * L7: posted while the lock was free but REFS was not 0 (a
		 * walk between steps, a thread leaving), for the last one out
		 * to perform.  We hold the lock now, so our release performs
		 * them: before done is read.
		 */
		swait_head_unlock(&c->wait);
		swait_head_lock(&c->wait);
	}
	/*
	 * Acquire: a spill (lib/wake.c, L6) counts itself in REFS, then adds
	 * to done without the lock; seeing its events, we see it counted.
	 */
	d = __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
	/*
	 * On a PI head a completer still touches the head after its unlock
	 * (it leaves REFS, L7), or adds its events without the lock (a
	 * spill), so a waiter that could take the lock before then must not
	 * return, and perhaps free the completion, yet: wait until it is
	 * the only one counted.  (An ordinary head's release is its holder's
	 * last access.)
	 */
	if (d == UINT_MAX || (pi && d != 0)) {
		swait_quiesce_dropping_lock(&c->wait);
		d = peek_done(c);
	}
	/* An RMW: a handler on this thread may add to it (complete_sink). */
	while (d != 0 && d != UINT_MAX && consume &&
	       !__atomic_compare_exchange_n(&c->done, &d, d - 1, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	swait_head_unlock(&c->wait);
	return d != 0;
}

SWAIT_EXPORT bool swait_completion_try_wait(struct swait_completion *c)
{
	return check_done(c, true);
}

SWAIT_EXPORT bool swait_completion_done(struct swait_completion *c)
{
	return check_done(c, false);
}

SWAIT_EXPORT void swait_completion_wait(struct swait_completion *c)
{
	swait_event(&c->wait, swait_completion_try_wait(c));
}

SWAIT_EXPORT int swait_completion_wait_timeout(struct swait_completion *c,
					       clockid_t clock,
					       const struct timespec *deadline)
{
	return swait_event_timeout(&c->wait, swait_completion_try_wait(c),
				   clock, deadline);
}

SWAIT_EXPORT int swait_completion_wait_interruptible(struct swait_completion *c)
{
	return swait_event_interruptible(&c->wait,
					 swait_completion_try_wait(c));
}

SWAIT_EXPORT int swait_completion_wait_for(struct swait_completion *c,
					   int64_t ns)
{
	struct timespec dl;
	int err = swait_deadline_after(&dl, CLOCK_MONOTONIC, ns);

	/* EINVAL (ns < 0) before the event is looked at, as the macros. */
	return err != 0 ? err : swait_completion_wait_timeout(c,
						CLOCK_MONOTONIC, &dl);
}

/*
 * WAIT_ANY WITH COMPLETIONS.  A completion's head is an ordinary member of
 * a swait_wait_any() group: complete() flips its node (WOKEN_EVENT, so
 * counted as no leaver) and adds to done in one critical section, like any
 * wake_one.  What a group cannot do by itself is consume the event, and
 * the queue layer must not learn what an event is (lib/queue.h).  So the
 * event is consumed here, above the group, only by try_wait under the
 * completion's lock, only for the member reported:
 *
 *  E1. done is the only record of an event.  A wake of the group's node
 *      says only "look at done"; this call consumes with try_wait, which
 *      decrements done under the lock or finds it 0.  So an event is
 *      consumed once, by whoever's try_wait comes first.
 *  E2. Reported iff consumed: *which names a completion member exactly
 *      when this call's own try_wait on it returned true.  A reported wake
 *      whose event another thread took first (its try_wait, or a waiter
 *      woken by another complete) gives *which == n.
 *  E3. No event lost: an event this call does not consume stays in done.
 *      Its wake, if it flipped our node, was not the reported one, so the
 *      next swait_prepare_any() or swait_finish_any() passes it on to the
 *      next waiter of that completion (G5), or back to our own re-queued
 *      node, whose next check finds the event.
 *  E4. No sleep through an event: the caller's swait_prepare_any() ends
 *      with O1's fence, then take_first() reads done; a complete either
 *      wrote done before that read, or its critical section comes after
 *      the prepare's and finds the node queued (I1), whose wake ends the
 *      swait_wait_any() (G3).  complete_all() leaves done at UINT_MAX, so
 *      take_first() returns at once on every call after it.
 *
 * It does not re-wait by itself when the event was gone (E2): that would
 * need the caller's prepare, which re-queues every woken node, and a node
 * of an ordinary head flipped by a wake_all meanwhile is re-queued without
 * a pass-on (G5 passes on wake_ones only); the caller's conditions, not
 * checked here, would then sleep through it.  The caller's loop prepares
 * and checks them, as for any spurious return.
 */
static bool take_first(struct swait_head *const heads[], unsigned mask,
		       unsigned *which)
{
	for (unsigned i = 0; mask != 0; i++, mask >>= 1)
		if ((mask & 1) &&
		    swait_completion_try_wait(completion_of(heads[i]))) {
			*which = i;
			return true;
		}
	return false;
}

SWAIT_EXPORT int swait_completion_wait_any(struct swait_head *const heads[],
					   unsigned n,
					   struct swait_waiter ws[],
					   unsigned completions,
					   unsigned flags, clockid_t clock,
					   const struct timespec *deadline,
					   unsigned *which)
{
	unsigned i;
	int err;

	/* All of swait_wait_any()'s checks first: nothing consumed on EINVAL. */
	if (n < 1 || n > SWAIT_ANY_MAX || (completions >> n) != 0 ||
	    (flags & ~(SWAIT_INTERRUPTIBLE | SWAIT_NOSPIN)) ||
	    !swait_deadline_valid(clock, deadline))
		return EINVAL;
	if (take_first(heads, completions, which))	/* E4 */
		return 0;
	err = swait_wait_any(heads, n, ws, flags, clock, deadline, &i);
	if (err != 0)	/* one last look, as the event macros take */
		return take_first(heads, completions, which) ? 0 : err;
	if (!(completions & (1u << i)))
		*which = i;	/* an ordinary head's wake */
	else if (swait_completion_try_wait(completion_of(heads[i])))
		*which = i;	/* E2: reported, consumed */
	else
		*which = n;	/* E2: taken by another thread first */
	return 0;
}
