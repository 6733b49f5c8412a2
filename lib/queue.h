/* SPDX-License-Identifier: MIT */
/*
 * queue.h - what lib/swait.c offers the layers above it (completions,
 * deferred wakes) beyond the public API: wakes made inside a critical
 * section that the caller opened with swait_head_lock().
 *
 * Completions keep their count under the head lock, as the kernel's do,
 * because a waiter may free an on-stack completion as soon as its wait
 * returns: the completer must be done with the memory when the waiter can
 * observe the count.  So they need wakes that run with the lock already
 * held.
 *
 * Names: a _locked function is entered and left with the lock held; one
 * that drops the lock says so in its name.
 */
#ifndef SWAIT_QUEUE_H
#define SWAIT_QUEUE_H

#include <stdbool.h>
#include <stdint.h>

#include "headlock.h"
#include "state.h"
#include "swait.h"

/*
 * Lock held: dequeue and flip the longest waiter.  Returns the word the
 * caller must pass to swait_wake_word() after unlocking, or NULL.
 */
uint32_t *swait_wake_one_locked(struct swait_head *head);

/* FUTEX_WAKE one thread on a word returned by swait_wake_one_locked(). */
void swait_wake_word(uint32_t *word);

/*
 * Release head's lock, taken with swait_head_lock(): performs the calls
 * signal handlers posted to this hold first (lib/headlock.c L3, lib/wake.c),
 * then wakes what they flipped.  After it the caller holds no lock.
 */
void swait_head_unlock(struct swait_head *head);

/* One of the four wakes past its emptiness peek (lib/wake.c). */
void swait_wake_call(struct swait_head *head, enum swait_post what);

/*
 * Where posted completes go: set once by lib/completion.c, so that the
 * queue can perform them without knowing completions.  Called with head's
 * lock held: add n events to the completion whose head it is, or all of
 * them (complete_all); the caller then wakes the waiters.
 */
extern void (*swait_complete_sink)(struct swait_head *head, uint32_t n,
				   bool all);

void swait_head_leave_slow(struct swait_head *head);
void swait_wake_quiescer(struct swait_head *head);

/*
 * A waiter a wake_one flipped (or a grouped node any wake flipped) is done
 * with head: its last access to it (lib/wake.c, LEAVERS).  One atomic
 * decrement on an ordinary head; it wakes a destroy waiting for it.
 */
static inline void swait_head_leave(struct swait_head *head)
{
	uint32_t old;

	if (__atomic_load_n(&head->walks, __ATOMIC_RELAXED) &
	    SWAIT_HEAD_PI_BIT) {
		swait_head_leave_slow(head);
		return;
	}
	/* Release: our accesses to *head, to destroy's acquire. */
	old = __atomic_fetch_sub(&head->walks, 1, __ATOMIC_RELEASE);
	if (__builtin_expect((old & SWAIT_WALKS_QUIESCER) != 0, 0) &&
	    (old & SWAIT_WALKS_MASK) == 1)
		swait_wake_quiescer(head);	/* after it: an address */
}

/*
 * Entered and left with the lock held; drops and retakes it while it waits
 * until no swait_wake_all() walk is in progress on head and no leaver is
 * counted on it.  After it, and
 * until the lock is released, no waker will touch head again except by a
 * FUTEX_WAKE.
 */
void swait_quiesce_dropping_lock(struct swait_head *head);

/*
 * Make *head an empty head with the given walks word (0, or the PI flag).
 * Debug builds first abort with misuse if the memory is a head that still
 * has waiters.
 */
void swait_head_init_checked(struct swait_head *head, uint32_t walks,
			     const char *misuse);

#endif /* SWAIT_QUEUE_H */
