/* SPDX-License-Identifier: MIT */
/*
 * headlock.h - a hold of a head's lock (lib/headlock.c, L1-L7): taking it,
 * posting a wake to its holder instead of waiting for it, and releasing
 * it only once nothing posted is left.  The queue (lib/swait.c,
 * lib/wake.c) decides what a posted set means; this layer only carries it.
 */
#ifndef SWAIT_HEADLOCK_H
#define SWAIT_HEADLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "annotate.h"
#include "internal.h"
#include "swait.h"

/* What a post asks of the holder: one call of the four wakes. */
enum swait_post {
	SWAIT_POST_WAKE_ONE,
	SWAIT_POST_WAKE_ALL,
	SWAIT_POST_COMPLETE,
	SWAIT_POST_COMPLETE_ALL,
};

/*
 * A set of posted calls, as taken off a head by its holder.  Counts that
 * would not fit the head's word were merged on the way (L6): wake_ones
 * into wake_all; completes never.
 */
struct swait_posted {
	uint32_t ones;		/* swait_wake_one() calls */
	uint32_t completes;	/* swait_complete() calls */
	bool wake_all;		/* swait_wake_all() */
	bool complete_all;	/* swait_complete_all() */
};

/* One call as a set. */
static inline struct swait_posted swait_posted_of(enum swait_post what)
{
	struct swait_posted p = { 0, 0, false, false };

	switch (what) {
	case SWAIT_POST_WAKE_ONE:	p.ones = 1; break;
	case SWAIT_POST_WAKE_ALL:	p.wake_all = true; break;
	case SWAIT_POST_COMPLETE:	p.completes = 1; break;
	case SWAIT_POST_COMPLETE_ALL:	p.complete_all = true; break;
	}
	return p;
}

/*
 * This thread's state for wakes from signal handlers: two counters, no
 * slots (nothing fills up, nothing is reserved).
 */
struct swait_tls {
	unsigned depth;		/* holds this thread is taking or in (L1) */
	unsigned async_window;	/* in a sleep's async-cancel window (C1) */
};

extern SWAIT_TLS struct swait_tls swait_tls;

/* Compiler-only barrier: orders accesses against this thread's handlers. */
#define swait_signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * Take head's lock for a call that may wait (L1): every call but the four
 * wakes made inside a hold's window.  May spin, park, or on a PI head
 * sleep in FUTEX_LOCK_PI.
 */
void swait_head_lock(struct swait_head *head);

/* What swait_head_lock_or_post() did. */
enum swait_took {
	SWAIT_POSTED,		/* the holder performs it (L3) */
	SWAIT_TAKEN,		/* the lock is ours: do it, then release */
	SWAIT_FULL,		/* L6: a spill, see below */
};

/*
 * For a wake made while this thread takes or holds a lock (depth > 0: a
 * signal handler that interrupted libswait): never waits (L2).  Returns
 * SWAIT_TAKEN with head's lock taken, for the caller to do what itself and
 * then release; or SWAIT_POSTED with what posted to the holder, who
 * performs it before its release completes (L3).  SWAIT_FULL (L6, a PI
 * head only): what is a complete and the count of posted completes is
 * full; the caller is now counted in REFS without the lock (a hold, depth
 * + 1) and spills the call: it adds the event to the completion itself
 * (atomically: a holder may be inside its own update), then calls
 * swait_head_spilled().
 */
enum swait_took swait_head_lock_or_post(struct swait_head *head,
					enum swait_post what);

/* How a release (or a PI leaver's leave) ended. */
enum swait_released {
	SWAIT_RELEASED,		/* done: the caller's last access is behind */
	SWAIT_PERFORM,		/* held: perform *posted, then release again */
};

/*
 * Try to release head's lock (L3).  SWAIT_RELEASED once released: the
 * caller's last access to *head is behind it.  SWAIT_PERFORM, with the
 * lock held, when calls were posted to it: they are taken off the head
 * into *posted, for the caller to perform before it tries again (on a PI
 * head the last one out may also have taken the lock again, L7, with
 * *posted empty: its next try takes what is posted).
 *
 * keep_ref: a wake_all walk between two of its steps.  The lock is
 * released but the walk stays counted (lib/swait.c W-rules), so that
 * the walker may take it again with swait_head_relock().
 */
enum swait_released swait_head_try_release(struct swait_head *head,
					   bool keep_ref,
					   struct swait_posted *posted);

/*
 * L6, after SWAIT_FULL: the caller, counted in REFS without the lock, has
 * added posted's completes (and complete_all) to the completion.  This
 * posts the wakes that go with them, which always fit (one wake_one; more
 * make a wake_all), and leaves REFS as a leaver does; what that returns
 * is as for swait_head_try_release(), *posted reused.
 */
enum swait_released swait_head_spilled(struct swait_head *head,
				       struct swait_posted *posted);

/*
 * Whether calls are posted to head's holder and not yet taken (L3): a
 * completion's lockless "not done" peek must look here too, or it would
 * miss a complete whose call has returned.
 */
bool swait_head_posted(const struct swait_head *head);

/*
 * Whether anything may still be under way at head's lock (lockless, an
 * acquire load): held, posted to, or (PI) a thread counted in REFS.  When
 * it says no, every call posted to head before has been performed.
 */
bool swait_head_busy(const struct swait_head *head);

/*
 * The common release, inline: an ordinary head held, nobody parked,
 * nothing posted: one CAS HELD -> 0 ends the hold (L3).  Returns false,
 * having changed nothing, for everything else; the caller then goes the
 * full way (lib/wake.c).
 */
static inline bool swait_head_release_fast(struct swait_head *head)
{
	uint32_t v = 1;	/* SWAIT_LOCK_HELD (lib/lock.h) */

	/* A PI head's word is its owner's id, which may be 1: look first. */
	if (__atomic_load_n(&head->walks, __ATOMIC_RELAXED) &
	    SWAIT_HEAD_PI_BIT)
		return false;
	swait_ann_lock_released(head);
	/*
	 * Release: publishes the critical section to the next holder's
	 * acquire CAS (lib/lock.h swait_trylock, lock_or_post's take).
	 */
	if (!__atomic_compare_exchange_n(&head->lock, &v, 0, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		swait_ann_lock_acquired(head);
		return false;
	}
	swait_signal_fence();
	__atomic_store_n(&swait_tls.depth,
			 __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) - 1,
			 __ATOMIC_RELAXED);
	return true;
}

/*
 * Lock held: count a leaver, a waiter just woken by a wake_one (or any
 * grouped node) that may still touch the head on its way out (lib/wake.c,
 * LEAVERS).  In the walks word's count on an ordinary head, in REFS on a
 * PI head.
 */
static inline void swait_head_count_leaver(struct swait_head *head)
{
	/*
	 * Relaxed: the flip that follows is the release; the leaver's
	 * decrement is a release that destroy's acquire pairs with.
	 */
	__atomic_fetch_add(&head->walks, 1, __ATOMIC_RELAXED);
}

/*
 * A PI head's leaver leaves (L7): SWAIT_RELEASED when done; SWAIT_PERFORM
 * with the lock taken (a hold, depth 1), as the last one out with calls
 * posted, to be released (and so performed) as any hold.
 */
enum swait_released swait_head_leave_pi(struct swait_head *head,
					struct swait_posted *posted);

/* Take the lock again between two steps of a walk (L5). */
void swait_head_relock(struct swait_head *head);

/*
 * This process's id for objects: a random nonzero value below 2^30, drawn
 * once per process and kept in the stamp page (lib/internal.h), which every
 * fork child sees zeroed.  So it tells a fork child's copy of an object
 * its parent used from one its own threads used (lib/cond.c F1), except
 * for a 2^-30 chance of a draw equal to an ancestor's.  Async-signal-safe.
 */
#define SWAIT_PROCESS_ID_MASK 0x3fffffffu
uint32_t swait_process_id_slow(void);

static inline uint32_t swait_process_id(void)
{
	uint32_t id = __atomic_load_n(
		&__atomic_load_n(&swait_process_stamp,
				 __ATOMIC_RELAXED)[SWAIT_STAMP_ID],
		__ATOMIC_RELAXED);

	return __builtin_expect(id != 0, 1) ? id : swait_process_id_slow();
}

/*
 * Whether the hold now running may wait for the lock (L4): it is this
 * thread's only one, so no handler of this thread interrupted a hold.
 */
static inline bool swait_head_may_wait(void)
{
	return __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) <= 1;
}

#endif /* SWAIT_HEADLOCK_H */
