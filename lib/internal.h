/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what lib/swait.c offers the rest of the library (the
 * completions) beyond the public API.  Nothing here is exported.
 *
 * Completions keep their count under the head lock, as the kernel's do,
 * because a waiter may free an on-stack completion as soon as its wait
 * returns: the completer must be done with the memory when the waiter can
 * observe the count.  So they need the lock itself and wakes that run with
 * the lock already held.
 */
#ifndef SWAIT_INTERNAL_H
#define SWAIT_INTERNAL_H

#include <limits.h>
#include <stdint.h>

#include "swait.h"

#define SWAIT_EXPORT __attribute__((visibility("default")))

/*
 * Wakes posted by signal handlers to the thread that holds the head lock
 * (lib/swait.c, SIGNAL HANDLERS), in one word-sized set: counts of
 * wake_one and complete calls, and flags for the _all calls.  Word-sized
 * because atomics on it must be lock-free (a handler uses them).
 */
typedef unsigned long swait_defer_t;

#if ULONG_MAX > 0xffffffffUL
#define DEFER_WAKE_ONE		0x0000000000000001UL
#define DEFER_ONE_MASK		0x0000000000ffffffUL	/* 24 bits */
#define DEFER_COMPLETE		0x0000000001000000UL
#define DEFER_COMPLETE_MASK	0x00ffffffff000000UL	/* 32 bits */
#define DEFER_WAKE_ALL		0x0100000000000000UL
#define DEFER_COMPLETE_ALL	0x0200000000000000UL
#else
#define DEFER_WAKE_ONE		0x00000001UL
#define DEFER_ONE_MASK		0x00003fffUL		/* 14 bits */
#define DEFER_COMPLETE		0x00004000UL
#define DEFER_COMPLETE_MASK	0x0fffc000UL		/* 14 bits */
#define DEFER_WAKE_ALL		0x10000000UL
#define DEFER_COMPLETE_ALL	0x20000000UL
#endif

/* Handlers nested deeper than this while heads are held abort. */
#define SWAIT_HELD_MAX 8

/* A head this thread is taking or holding (lib/swait.c, S1-S2). */
struct swait_held {
	struct swait_head *head;	/* NULL once closed */
	swait_defer_t pending;		/* DEFER_* posted by handlers */
};

/*
 * This thread's state for wakes from signal handlers, in one thread-local
 * object so that every access is one %fs-relative address.
 */
struct swait_tls {
	unsigned depth;			/* entries in held[] */
	struct swait_head *performing;	/* head run_deferred() works on (S5) */
	swait_defer_t carry;		/* sets handed to that loop (S5) */
	struct swait_held held[SWAIT_HELD_MAX];
};

extern __thread __attribute__((tls_model("initial-exec")))
	struct swait_tls swait_tls;

/*
 * If this thread is taking or holding head's lock (so the caller is a
 * signal handler that interrupted it), post what for the holder to perform
 * after its unlock and return true.  Check swait_tls.depth != 0 first:
 * that is the whole cost on the usual path.
 */
bool swait_defer_to_holder(struct swait_head *head, swait_defer_t what);

/*
 * The first thing each of the four async-signal-safe wakes does: true if
 * the wake was handed to this thread's lock holder (S1) and the caller
 * must return.  One thread-local load on the usual path.
 */
static inline bool swait_deferred(struct swait_head *head, swait_defer_t what)
{
	return __builtin_expect(swait_tls.depth != 0, 0) &&
	       swait_defer_to_holder(head, what);
}

/*
 * Post n events to c and wake up to n of its waiters, one per lock hold,
 * each event posted in the hold that wakes its waiter (so that a waiter
 * never consumes an event before the completer is done with the memory).
 * swait_complete() is n = 1; a holder performing deferred completes
 * batches them.
 */
void swait_complete_n(struct swait_completion *c, swait_defer_t n);

void swait_head_lock(struct swait_head *head);
void swait_head_unlock(struct swait_head *head);

/*
 * With the lock held: dequeue and flip the longest waiter.  Returns the word
 * the caller must pass to swait_wake_word() after unlocking, or NULL.
 */
uint32_t *swait_wake_one_locked(struct swait_head *head);

/* FUTEX_WAKE one thread on a word returned by swait_wake_one_locked(). */
void swait_wake_word(uint32_t *word);

/* Called with the lock held; wakes every queued waiter; returns unlocked. */
void swait_wake_all_locked(struct swait_head *head);

/*
 * With the lock held: wait (dropping and retaking the lock) until no
 * swait_wake_all() walk is in progress on head.  After it, and until the lock
 * is released, no waker will touch head again except by a FUTEX_WAKE.
 */
void swait_quiesce_locked(struct swait_head *head);

#ifndef SWAIT_TEST_HOOKS
#define SWAIT_TEST_HOOKS 0
#endif
#if SWAIT_TEST_HOOKS
/*
 * Test builds only (static library): the most waiters one swait_wake_all()
 * woke in a single hold of the head lock.  I5 says 1.
 */
extern unsigned swait_hook_max_hold_steps;

/*
 * Test builds only: called inside swait_prepare()'s critical section, after
 * the enqueue, when set.  The PI test uses it to hold a head lock for long.
 */
extern void (*swait_hook_prepare_locked)(struct swait_head *head);

/* Test builds only: how many wakes were deferred to a holder (S1). */
extern unsigned long swait_hook_deferred;
#endif

#endif /* SWAIT_INTERNAL_H */
