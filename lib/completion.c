// SPDX-License-Identifier: MIT
/*
 * completion.c - the kernel's completions, on a swait head.
 *
 * done is written only under the head lock and read under it before a wait
 * returns, as in the kernel (kernel/sched/completion.c).  That is what lets a
 * waiter free an on-stack completion as soon as its wait returns:
 *
 *  - swait_complete() increments done and dequeues a waiter in one critical
 *    section, and touches the completion only by FUTEX_WAKE after unlocking.
 *    A waiter that consumes done takes the same lock, so it cannot return
 *    before the completer is done with the memory.
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
 * them, and the holder's release is its last access.
 *
 * The lockless "done == 0" peeks are safe without a barrier: a waiter that
 * peeks after its prepare either sees the count, or the completer's critical
 * section (which writes the count) comes after the prepare's and finds the
 * waiter queued.  A complete posted to a holder and not yet performed is
 * not in done yet; the peek looks at the lock word for it too, so that
 * swait_completion_done() is true once swait_complete() has returned.
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
 * from a handler whose own thread holds it (lib/wake.c, L6), which may have
 * interrupted this very update; so every change of done under the lock is
 * an atomic read-modify-write.
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
	unsigned int d;

	if (peek_done(c) == 0 && !swait_head_posted(&c->wait))
		return false;
	swait_head_lock(&c->wait);
	d = peek_done(c);
	if (d == UINT_MAX)
		swait_quiesce_dropping_lock(&c->wait);
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

