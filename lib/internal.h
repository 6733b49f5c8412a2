/* SPDX-License-Identifier: MIT */
/*
 * internal.h - how the library declares its own symbols, and the test
 * hooks.  Nothing here is exported except through SWAIT_EXPORT, and the
 * version script (lib/libswait.map) decides what that reaches.
 */
#ifndef SWAIT_INTERNAL_H
#define SWAIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "swait.h"

#define SWAIT_EXPORT __attribute__((visibility("default")))

/*
 * Thread-local storage that signal handlers may touch: initial-exec, static
 * TLS, reached without __tls_get_addr (which may allocate, and is not
 * async-signal-safe) even when libswait is dlopen()ed.
 */
#define SWAIT_TLS __thread __attribute__((tls_model("initial-exec")))

/*
 * The process stamp page (lib/headlock.c): two words that every fork,
 * _Fork() and clone() without CLONE_VM child sees zeroed (MADV_WIPEONFORK,
 * or the atfork handler where the kernel lacks it).  [SWAIT_STAMP_TID]:
 * the process id, stamped by the first thread-id refresh, which tells the
 * thread-id caches whose process they belong to (lib/lock.h).
 * [SWAIT_STAMP_ID]: a random id for objects (swait_process_id(), lib/
 * headlock.h).  Relaxed atomics throughout: each word is a value to
 * compare, not a publication of other memory.  The pointer moves once, in
 * the library's constructor, from a static pair to the page.
 */
enum { SWAIT_STAMP_TID, SWAIT_STAMP_ID };
extern uint32_t *swait_process_stamp;

/*
 * swait_prepare() that queues *w in the order goes_before(w, queued) gives
 * instead of at the tail (lib/swait.c): the queue knows nothing of what the
 * order means.  Not exported; the condvar face orders PI waiters by
 * priority with it.
 */
void swait_prepare_ordered(struct swait_head *h, struct swait_waiter *w,
			   bool (*goes_before)(const struct swait_waiter *,
					       const struct swait_waiter *));

#ifndef SWAIT_TEST_HOOKS
#define SWAIT_TEST_HOOKS 0
#endif
#if SWAIT_TEST_HOOKS
/*
 * Test builds only (Meson option test_hooks; hidden, never exported):
 * the most waiters one swait_wake_all() woke in a single hold of the head
 * lock.  I5 says 1.
 */
extern unsigned swait_hook_max_hold_steps;

/*
 * Test builds only: called inside swait_prepare()'s critical section, after
 * the enqueue, when set.  The PI test uses it to hold a head lock for long.
 */
extern void (*swait_hook_prepare_locked)(struct swait_head *head);

/* Test builds only: how many wakes were posted to a holder (L2). */
extern unsigned long swait_hook_deferred;

/* Test builds only: how many full counts were spilled (lib/wake.c, L6). */
extern unsigned long swait_hook_spills;

/*
 * Test builds only: called by a wake at depth > 0 (lib/headlock.c L2)
 * before each attempt to take or post, when set: a test raises a nested
 * signal from it, inside the one step of a post.
 */
extern void (*swait_hook_before_post)(struct swait_head *head);

/*
 * Test builds only: called by a PI head's leaver (lib/headlock.c L7) as it
 * starts to leave REFS, its lock released (last_out false), and again
 * when, the last one out with calls posted, it is about to take the lock
 * again (true).
 */
extern void (*swait_hook_leaving)(struct swait_head *head, bool last_out);

/* Test builds only: called with every head lock just taken, when set. */
extern void (*swait_hook_head_locked)(struct swait_head *head);

/* Test builds only: before every FUTEX_WAKE (lib/futex.h), when set. */
extern void (*swait_hook_futex_wake)(uint32_t *word);

/* Test builds only: FUTEX_WAIT and futex_waitv() calls made (lib/futex.h). */
extern unsigned long swait_hook_futex_waits;

/*
 * Test builds only (lib/spin.c): called at every poll of a spin, when set;
 * and the spin's clock, in ns, instead of CLOCK_MONOTONIC and the
 * deadline's clock, when set.
 */
extern void (*swait_hook_spin)(const uint32_t *word);
extern int64_t (*swait_hook_spin_clock)(void);
#endif

#endif /* SWAIT_INTERNAL_H */
