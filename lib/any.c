// SPDX-License-Identifier: MIT
/*
 * any.c - waiting on several heads at once: swait_prepare_any(),
 * swait_wait_any(), swait_finish_any().  Built on lib/swait.c's rules
 * (I1-I6, O1-O4), which it names but does not change; swait.c's flips are
 * the waker's side of a grouped node, and nothing in swait.c calls here.
 *
 * A thread waiting on n heads queues node i of its waiters[] on heads[i].
 * All nodes share one futex word, the group word G, kept in waiters[0]'s
 * group field (a single waiter uses that field only for a debug tag; a
 * grouped node is recognised by its state).  A grouped node's state is GROUP | i << 8 | QUEUED, WOKEN_ONE or
 * WOKEN_ALL, or IDLE; G holds bit i for each node woken, the SLEEPING bit,
 * and the index of the node whose wake a wait consumed.
 *
 *  G1. A grouped node's state is written only under its head's lock, by
 *      prepare_any, finish_any and wakers.  There is no lockless announce
 *      on it: the thread announces on G.  So I1 holds for it unchanged.
 *  G2. Under heads[i]'s lock, while node i is in the group (not IDLE), bit
 *      i of G is set iff node i was dequeued by a waker and not yet
 *      re-queued: the waker sets it (fetch_or, release) in the critical
 *      section of its dequeue; prepare_any clears it in the critical
 *      section that re-queues the node.  So the bit a wait reports names
 *      the very wake finish_any will find on the node.  (finish_any idles
 *      the nodes one by one and clears G after the last, so an IDLE node's
 *      bit is clear by the next prepare_any.)
 *  G3. O2 on G: the announce is a CAS from "no bit" to SLEEPING; a waker
 *      whose fetch_or finds SLEEPING and no earlier bit issues the one
 *      FUTEX_WAKE.  Both are read-modify-writes on G, totally ordered.
 *  G4. I3 for groups: a waker's fetch_or on G is its last access to the
 *      group, inside heads[i]'s critical section.  finish_any takes every
 *      head's lock before it returns, so after it no waker is left inside
 *      a critical section that could touch any node or G.
 *  G5. I6 for groups: only the wake that swait_wait_any() reported is
 *      consumed.  finish_any and prepare_any pass on every other WOKEN_ONE
 *      node: the caller re-checks all its conditions, but may take one
 *      thing and leave, and a second wake may stand for a second thing
 *      (a single waiter never holds two wakes, a group may).
 *
 * Memory ordering is lib/swait.c's O1-O3, with G for the word: the fence
 * at the end of prepare_any is O1's (DMB ISH on ARMv8); the waker's
 * fetch-or of G is a release (LDSETL, or an LDXR/STLXR loop) and the
 * waiter's loads and CASes of G are acquires (LDAR, CASA), so what the
 * waker wrote before the wake is visible to the woken group; the announce
 * CAS and the fetch-or are read-modify-writes of one word (O2).
 *
 * tests/model/group.pml checks G1-G5 exhaustively, with single waiters
 * beside the group on both heads; its seeded bugs (group_no_pass_on,
 * group_prepare_consumes, group_keep_bit, group_wake_always_no) are each
 * caught.
 */
#include <pthread.h>

#include "annotate.h"
#include "asym.h"
#include "check.h"
#include "defer.h"
#include "futex.h"
#include "headlock.h"
#include "internal.h"
#include "list.h"
#include "queue.h"
#include "race.h"
#include "spin.h"
#include "state.h"
#include "trace.h"

static inline bool group_size_ok(unsigned n)
{
	return n >= 1 && n <= SWAIT_ANY_MAX;
}

/* G5: one swait_wake_one() on heads[i] for each bit i of pass. */
static void pass_on(struct swait_head *const heads[], uint32_t pass)
{
	for (unsigned i = 0; pass != 0; i++, pass >>= 1)
		if (pass & 1)
			swait_wake_one(heads[i]);
}

/*
 * Each node in left was woken, so counted as a leaver on its head
 * (lib/wake.c, LEAVERS); after its pass-on, this is its last access.
 */
static void leave(struct swait_head *const heads[], uint32_t left)
{
	for (unsigned i = 0; left != 0; i++, left >>= 1)
		if (left & 1)
			swait_head_leave(heads[i]);
}

SWAIT_EXPORT void swait_prepare_any(struct swait_head *const heads[],
				    unsigned n, struct swait_waiter ws[])
{
	uint32_t *g = &ws[0].group;
	uint32_t pass = 0, left = 0, consumed;
	bool front = false, asym = false;

	swait_check(group_size_ok(n),
		    "swait_prepare_any: n must be 1..SWAIT_ANY_MAX "
		    "[heads, n, waiters]", heads, (void *)(uintptr_t)n, ws);
	if (!group_size_ok(n))
		return;
	swait_ann_sync_word(g, sizeof(*g));
	/*
	 * A new group: node 0 is IDLE (never queued, or idled by finish_any
	 * or by the end of a single wait it served in).  A single wait
	 * leaves its tag in this field (lib/state.h), which would read as
	 * woken bits, so clear it; no waker reaches G before node 0 is
	 * queued (G4).  Our own node: no waker writes an IDLE one.
	 */
	swait_ann_sync_word(&ws[0].state, sizeof(ws[0].state));
	if (load_relaxed(&ws[0].state) == SWAIT_IDLE)
		store_relaxed(g, 0);
	/*
	 * Drop SLEEPING and the consumed index of the last wait; keep the
	 * woken bits: each is cleared below with its node's re-queue (G2).
	 */
	consumed = (__atomic_fetch_and(g, G_WOKEN_MASK, __ATOMIC_RELAXED) &
		    G_CONSUMED_MASK) >> G_CONSUMED_SHIFT;
	for (unsigned i = 0; i < n; i++) {
		struct swait_head *h = heads[i];
		struct swait_waiter *w = &ws[i];
		uint32_t s, tag = SWAIT_GROUP | i << SWAIT_GROUP_SHIFT;

		swait_head_lock(h);
		s = load_relaxed(&w->state);
		swait_check(s == SWAIT_IDLE ||
			    (s & ~SWAIT_SUBSTATE) == tag,
			    "swait_prepare_any: node is queued by another "
			    "wait, or waiters[] was overwritten [node, its "
			    "head, this head]", w, w->head, h);
		if (s == (tag | SWAIT_QUEUED)) {
			swait_check(w->head == h,
				    "swait_prepare_any: heads[] changed "
				    "between calls [node, its head, this head]",
				    w, w->head, h);
		} else {
			/*
			 * IDLE, or woken: (re-)queue.  A wake_one the last
			 * wait did not report is passed on below (G5): the
			 * caller may take one thing and leave, and that
			 * wake may stand for something else.
			 */
			if ((s == (tag | SWAIT_WOKEN_ONE) ||
			     s == (tag | SWAIT_WOKEN_EVENT)) && i + 1 != consumed)
				pass |= 1u << i;
			/* Counted unless on a completion's head (LEAVERS). */
			if (s == (tag | SWAIT_WOKEN_ONE) ||
			    s == (tag | SWAIT_WOKEN_ALL))
				left |= 1u << i;
			swait_ann_sync_word(&w->state, sizeof(w->state));
			list_add_tail(&h->list, &w->link);
			w->head = h;
			if (i != 0)
				w->group = SWAIT_MAGIC;
			store_relaxed(&w->state, tag | SWAIT_QUEUED);
			if (s != SWAIT_IDLE)	/* G2 */
				__atomic_fetch_and(g, ~(1u << i),
						   __ATOMIC_RELAXED);
		}
		front |= list_is_first(&h->list, &w->link);
		asym |= swait_walks_asym(load_relaxed(&h->walks));
		swait_head_unlock(h);
	}
	swait_spin_note_front(front);	/* S6 (lib/spin.c) */
	/* Behind our re-queued node: to another waiter, if there is one. */
	pass_on(heads, pass);
	leave(heads, left);
	SWAIT_RACE();
	/*
	 * O1, as at the end of swait_prepare(), for every head at once: one
	 * membarrier() if any of them is asymmetric (lib/asym.c O1a).
	 */
	swait_o1_waiter(asym);
}

/* The body of swait_wait_any(), inside the cancellation cleanup. */
static int wait_any_announced(uint32_t *g, unsigned flags, clockid_t clock,
			      const struct timespec *deadline,
			      unsigned *which)
{
	uint32_t v;
	int err, oldtype;

	pthread_testcancel();
	/* S1 (lib/spin.c): poll the group word for a wake first. */
	v = swait_spin(g, G_WOKEN_MASK, 0, flags, clock, deadline);
	if (v & G_WOKEN_MASK)
		goto woken;
	/* G3: announce; fails (acquire) if a wake came first. */
	if (!__atomic_compare_exchange_n(g, &v, v | G_SLEEPING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		goto woken;
	for (;;) {
		SWAIT_RACE();
		swait_async_window_open(&oldtype);	/* C1 */
		err = swait_futex_wait(g, G_SLEEPING, clock, deadline);
		swait_async_window_close(oldtype);
		v = load_acquire(g);			/* O3 */
		if (v & G_WOKEN_MASK)
			goto woken;
		if (err == ETIMEDOUT ||
		    (err == EINTR && (flags & SWAIT_INTERRUPTIBLE))) {
			/* Retract; a failed CAS means a wake won the race. */
			if (__atomic_compare_exchange_n(g, &v, 0, false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
				return err;
			goto woken;
		}
	}
woken:
	swait_ann_happens_after(g);	/* O3 */
	*which = (unsigned)__builtin_ctz(v & G_WOKEN_MASK);
	/*
	 * Record which wake this wait consumed (G5), replacing what an
	 * earlier wait without a prepare between recorded: the index names
	 * one node, and an OR of two would name a third, whose wake
	 * finish_any would then take as consumed and not pass on.  (The
	 * earlier wake is passed on instead: at worst a spurious wake for
	 * another waiter.)  A CAS: wakers of the other nodes may still set
	 * their bits, and only this thread writes the index.
	 */
	v = load_relaxed(g);
	while (!__atomic_compare_exchange_n(g, &v,
			(v & ~G_CONSUMED_MASK) |
			(*which + 1) << G_CONSUMED_SHIFT, false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return 0;
}

struct any_ctx {
	struct swait_head *const *heads;
	struct swait_waiter *waiters;
	const struct timespec *deadline;
	unsigned *which;
	clockid_t clock;
	unsigned flags, n;
};

static void wait_any_cancelled(void *arg)
{
	struct any_ctx *ctx = arg;

	swait_async_window_unwound();	/* C1: cancelled inside it */
	swait_finish_any(ctx->heads, ctx->n, ctx->waiters);
}

/* I4 under cancellation, as sleep_cancellable(). */
static int wait_any_cancellable(struct any_ctx *ctx)
{
	int err;

	pthread_cleanup_push(wait_any_cancelled, ctx);
	err = wait_any_announced(&ctx->waiters[0].group, ctx->flags,
				 ctx->clock, ctx->deadline, ctx->which);
	pthread_cleanup_pop(0);
	return err;
}

SWAIT_EXPORT int swait_wait_any(struct swait_head *const heads[], unsigned n,
				struct swait_waiter ws[], unsigned flags,
				clockid_t clock, const struct timespec *deadline,
				unsigned *which)
{
	struct any_ctx ctx = { heads, ws, deadline, which, clock, flags, n };
	int err;

	if (!group_size_ok(n) || (flags & ~(SWAIT_INTERRUPTIBLE | SWAIT_NOSPIN)) ||
	    !swait_deadline_valid(clock, deadline))
		return EINVAL;
	swait_check((load_relaxed(&ws[0].state) & ~SWAIT_SUBSTATE) ==
		    SWAIT_GROUP,
		    "swait_wait_any: waiters[] was not prepared with "
		    "swait_prepare_any() [heads, waiters]", heads, ws, NULL);
	swait_trace2(wait_start, heads[0], ws);
	err = wait_any_cancellable(&ctx);
	swait_trace3(wait_end, heads[0], ws,
		     err == 0 ? 0 : err == ETIMEDOUT ? 1 : 2);
	return err;
}

SWAIT_EXPORT void swait_finish_any(struct swait_head *const heads[],
				   unsigned n, struct swait_waiter ws[])
{
	uint32_t *g = &ws[0].group;
	uint32_t pass = 0, left = 0, consumed;

	if (!group_size_ok(n))
		return;
	/* Written by this thread only (wait_any): a relaxed load will do. */
	consumed = ((load_relaxed(g) & G_CONSUMED_MASK) >> G_CONSUMED_SHIFT);
	for (unsigned i = 0; i < n; i++) {
		struct swait_waiter *w = &ws[i];
		uint32_t s;

		swait_head_lock(heads[i]);
		s = load_relaxed(&w->state);	/* stable under the lock (G1) */
		if (s != SWAIT_IDLE) {
			swait_check((s & ~SWAIT_SUBSTATE) ==
				    (SWAIT_GROUP | i << SWAIT_GROUP_SHIFT) &&
				    w->head == heads[i],
				    "swait_finish_any: node does not belong to "
				    "this group [node, its head, this head]",
				    w, w->head, heads[i]);
			switch (s & SWAIT_SUBSTATE) {
			case SWAIT_QUEUED:
				list_del(w);
				break;
			case SWAIT_WOKEN_ONE:
				if (i + 1 != consumed)	/* G5 */
					pass |= 1u << i;
				left |= 1u << i;	/* counted */
				break;
			case SWAIT_WOKEN_EVENT:
				if (i + 1 != consumed)	/* G5 */
					pass |= 1u << i;
				break;
			case SWAIT_WOKEN_ALL:
				left |= 1u << i;	/* counted */
				break;
			}
			if (i != 0)
				w->group = 0;
			store_relaxed(&w->state, SWAIT_IDLE);
			swait_ann_idle_word(&w->state);
		}
		swait_head_unlock(heads[i]);
	}
	/* G4: no waker can reach the group any more. */
	store_relaxed(g, 0);
	swait_ann_idle_word(g);
	SWAIT_RACE();
	pass_on(heads, pass);	/* G5, as I6 */
	leave(heads, left);
}

