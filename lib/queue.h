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

/*
 * Entered and left with the lock held; drops and retakes it while it waits
 * until no swait_wake_all() walk is in progress on head.  After it, and
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
