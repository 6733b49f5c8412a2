// SPDX-License-Identifier: MIT
/*
 * wake.c - the waker's side of the queue: taking waiters off a head and
 * flipping them (lib/swait.c I1-I6, O1-O3, W1-W4; grouped nodes, lib/any.c
 * G1-G4), and what a hold of a head lock does before its release: perform
 * the calls signal handlers posted to it (lib/headlock.c L1-L7) and walk a
 * wake_all's batch one waiter per hold.
 *
 * A HOLD'S WORK
 *
 * Every call that takes a head lock ends in swait_hold_release(), which
 * loops until the release succeeds (L3):
 *
 *	take one walk step (if walking, lock held)
 *	try to release:
 *	    posted calls were taken instead -> perform them, lock still
 *	                                       held, and go round again
 *	    released -> FUTEX_WAKE the words flipped in this hold (I5)
 *	if the walk has more, take the lock again and go round
 *
 * Performing a posted set is what the calls themselves would do: n
 * completes add n to the completion's count (through the sink
 * lib/completion.c registers: this layer does not know completions), and
 * each wake_one or complete flips the longest waiter; a wake_all or
 * complete_all starts a walk, or extends the one in progress by splicing
 * the head's list onto its batch.  So one hold performs O(1) plus what was
 * posted to it, and a walk drops the lock between its steps (I5) as long as
 * this thread may wait for it again (L5: at depth 1).
 *
 * Flipped words are kept in the hold and woken after the release, eight at
 * a time: more flips in one hold (a handler's storm of posts) wake the
 * first eight with the lock held, which is only slower (a FUTEX_WAKE is an
 * address, I3).
 *
 * The handlers' side.  The four wakes are async-signal-safe.  At depth 0
 * they take the lock as any call does.  At depth > 0 the caller is a
 * handler that interrupted a hold of its own thread, and
 * swait_head_lock_or_post() (L2) either takes a free lock or posts the call
 * to whoever holds it.  C1 (lib/defer.h): a handler that interrupted a
 * sleep's asynchronous-cancellation window runs with cancellation disabled
 * and deferred, so that nothing unwinds it while it holds a lock.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

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
#include "state.h"
#include "trace.h"

#if SWAIT_TEST_HOOKS
unsigned swait_hook_max_hold_steps;
unsigned long swait_hook_spills;
#endif

void (*swait_complete_sink)(struct swait_head *head, uint32_t n, bool all);

#define HOLD_WORDS 8

/* What one hold carries from its critical section to its release. */
struct hold {
	struct swait_head *h;
	struct swait_list batch;	/* a walk's detached waiters */
	bool walking;			/* a walk is in progress (counted) */
	bool by_walks;			/* flipped a SLEEPING_V waiter (W1) */
	bool quiesced;			/* walk_done() found a quiescer */
	bool pi;
	unsigned own_wakes;		/* W4 */
	unsigned steps;			/* walk steps in this lock hold */
	unsigned woken;			/* walk steps in all (tracing) */
	unsigned nwords;
	uint32_t *words[HOLD_WORDS];	/* flipped, to FUTEX_WAKE */
};

static inline void hold_init(struct hold *k, struct swait_head *h)
{
	k->h = h;
	k->walking = k->by_walks = k->quiesced = false;
	k->pi = swait_head_is_pi(h);
	k->own_wakes = k->steps = k->woken = k->nwords = 0;
}

void swait_wake_word(uint32_t *word)
{
	swait_futex_wake(word, 1);
}

static void flush_words(struct hold *k)
{
	for (unsigned i = 0; i < k->nwords; i++) {
		SWAIT_RACE();	/* between the word store and FUTEX_WAKE */
		swait_futex_wake(k->words[i], 1);
	}
	k->nwords = 0;
}

static void add_word(struct hold *k, uint32_t *word)
{
	if (k->nwords == HOLD_WORDS)
		flush_words(k);	/* under the lock: slower, still right */
	k->words[k->nwords++] = word;
}

/* ------------------------------------------- the waker's side of a node */

/* Lock held: whether h is a completion's head (lib/state.h). */
static inline bool events_head(struct swait_head *h)
{
	uint32_t v = load_relaxed(&h->walks);

	return (v & swait_events_bit(v)) != 0;
}

/*
 * dequeue_and_flip() for a node of a group (lock held): G1, G2, G4.  Returns
 * the group word to FUTEX_WAKE after unlock if this wake is the first since
 * the thread announced its sleep, else NULL.
 */
static uint32_t *dequeue_and_flip_grouped(struct swait_head *h,
					  struct swait_waiter *w, uint32_t s,
					  uint32_t how)
{
	unsigned idx = (s >> SWAIT_GROUP_SHIFT) & SWAIT_SUBSTATE;
	struct swait_waiter *w0 = w - idx;
	uint32_t old;

	swait_check(w->head == h && idx < SWAIT_ANY_MAX &&
		    (s & SWAIT_SUBSTATE) == SWAIT_QUEUED,
		    "a queued group node was overwritten (waiters[] reused or "
		    "freed while queued?) [node, its head, this head]",
		    w, w->head, h);
	list_del(w);
	/* finish_any locks h again: a leaver, but on a completion's head. */
	if (events_head(h))
		how = how == SWAIT_WOKEN_ONE ? SWAIT_WOKEN_EVENT
					     : SWAIT_WOKEN_ALL_EV;
	else
		swait_head_count_leaver(h);
	store_relaxed(&w->state, SWAIT_GROUP | idx << SWAIT_GROUP_SHIFT | how);
	SWAIT_RACE();
	swait_trace3(wake, h, w, how);
	/*
	 * The last access to the group (G4).  Release: publishes what the
	 * waker wrote before the wake (O3); pairs with the acquire loads of G
	 * in swait_wait_any().
	 */
	swait_ann_happens_before(&w0->group);
	old = __atomic_fetch_or(&w0->group, 1u << idx, __ATOMIC_RELEASE);
	if ((old & G_SLEEPING) && !(old & G_WOKEN_MASK))
		return &w0->group;	/* G3: the first wake of this sleep */
	return NULL;
}

/*
 * Take w off its list and flip it to woken (lock held).  Returns the word to
 * FUTEX_WAKE after unlock if its thread announced a sleep, else NULL.  A
 * walk passes by_walks: a thread asleep in futex_waitv() (SLEEPING_V) is
 * then left to the walk's one FUTEX_WAKE of h->walks (W1), and *by_walks
 * set instead of a word returned.
 */
static uint32_t *dequeue_and_flip(struct swait_head *h, struct swait_waiter *w,
				  uint32_t how, bool *by_walks)
{
	uint32_t old, s = load_relaxed(&w->state);

	if (s & SWAIT_GROUP)
		return dequeue_and_flip_grouped(h, w, s, how);
	swait_check(swait_waiter_tag_ok(w->group) && w->head == h,
		    "a queued waiter was overwritten (waiter memory reused or "
		    "freed while queued?) [waiter, its head, this head]",
		    w, w->head, h);
	/*
	 * w->group stays: the waiter may be reading its tag right now, before
	 * its announce (lib/swait.c W4).
	 */
	list_del(w);
	/* A wake_one's waiter may pass the wake on (I6): a leaver. */
	if (how == SWAIT_WOKEN_ONE) {
		if (events_head(h))
			how = SWAIT_WOKEN_EVENT;	/* not counted */
		else
			swait_head_count_leaver(h);
	}
	SWAIT_RACE();
	/*
	 * I3: the last access to *w.  Release: publishes the dequeue and all
	 * the waker wrote before the wake (O3); pairs with the acquire loads
	 * and CASes of w->state in swait_sleep() and swait_finish().
	 */
	swait_trace3(wake, h, w, how);	/* w is still queued: alive */
	swait_ann_happens_before(&w->state);
	old = __atomic_exchange_n(&w->state, how, __ATOMIC_RELEASE);
	if (old == SWAIT_SLEEPING_V && by_walks) {
		*by_walks = true;
		return NULL;
	}
	return swait_state_sleeping(old) ? &w->state : NULL;
}

uint32_t *swait_wake_one_locked(struct swait_head *h)
{
	if (list_empty(&h->list))
		return NULL;
	return dequeue_and_flip(h, waiter_of(h->list.next), SWAIT_WOKEN_ONE,
				NULL);
}

/* ------------------------------------------------------------- walks */

/* Lock held: one walk ends.  Returns whether quiescers must be woken. */
static bool walk_done(struct swait_head *h)
{
	uint32_t old = load_relaxed(&h->walks), v;

	do {
		v = old - 1;
		/* W2: a new generation, so the word does not go back. */
		v = (v & ~SWAIT_WALKS_GEN) |
		    ((v + SWAIT_WALKS_GEN_ONE) & SWAIT_WALKS_GEN);
		/* Release: the walk's accesses, to destroy's quiesce. */
	} while (!__atomic_compare_exchange_n(&h->walks, &old, v, false,
					      __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return (old & SWAIT_WALKS_QUIESCER) && !(v & SWAIT_WALKS_MASK);
}



/*
 * Lock held: a wake_all.  Detach the queued set in O(1): later arrivals
 * queue on the head and are not ours.  Waiters in the batch still belong
 * to h: one that times out unlinks itself from the batch under h's lock
 * (list_del needs no anchor), and destroy waits while a walk is counted.
 * A PI head's walk is counted in REFS by the hold itself (L7).
 */
static void walk_start(struct hold *k)
{
	struct swait_head *h = k->h;

	if (list_empty(&h->list))
		return;
	if (!k->walking) {
		k->batch.next = k->batch.prev = NULL;	/* empty */
		k->walking = true;
		if (!k->pi)
			__atomic_fetch_add(&h->walks, 1, __ATOMIC_RELAXED);
	}
	list_splice_tail_init(&h->list, &k->batch);
}

/* Lock held: flip the batch's first waiter, or end the walk. */
static void walk_step(struct hold *k)
{
	struct swait_head *h = k->h;
	struct swait_waiter *w;
	uint32_t *word;

	if (!list_empty(&k->batch)) {
		w = waiter_of(k->batch.next);
		word = dequeue_and_flip(h, w, SWAIT_WOKEN_ALL, &k->by_walks);
		if (word) {
			add_word(k, word);
			/*
			 * W4: the second single sleeper that needs a wake of
			 * its own makes h a broadcast head, so that the
			 * waiters this walk wakes sleep in futex_waitv next
			 * time.  Never a PI head: its walks word holds REFS
			 * (L7), which moves too often to sleep on.
			 */
			if (word == &w->state && ++k->own_wakes == 2 && !k->pi)
				__atomic_fetch_or(&h->walks, SWAIT_WALKS_BCAST,
						  __ATOMIC_RELAXED);
		}
		k->steps++;
		k->woken++;
#if SWAIT_TEST_HOOKS
		/* Concurrent walks update it with atomics: a sync word. */
		swait_ann_sync_word(&swait_hook_max_hold_steps,
				    sizeof(swait_hook_max_hold_steps));
		if (k->steps > __atomic_load_n(&swait_hook_max_hold_steps,
					       __ATOMIC_RELAXED))
			__atomic_store_n(&swait_hook_max_hold_steps, k->steps,
					 __ATOMIC_RELAXED);
#endif
	}
	if (list_empty(&k->batch)) {	/* the rest may have left */
		swait_trace2(wake_all, h, k->woken);
		k->walking = false;
		k->woken = 0;
		if (!k->pi && walk_done(h))
			k->quiesced = true;
	}
}

/* ---------------------------------------------------------- performing */

/* n completes, or all, into the completion's count (lib/completion.c). */
static void sink_completes(struct swait_head *h, const struct swait_posted *p)
{
	void (*sink)(struct swait_head *, uint32_t, bool) =
		__atomic_load_n(&swait_complete_sink, __ATOMIC_RELAXED);

	/* Only lib/completion.c posts completes, having set it. */
	swait_check(sink != NULL, "a complete was posted to a head that is "
		    "not a completion's [head]", h, NULL, NULL);
	sink(h, p->completes, p->complete_all);
}

/* Lock held: the calls a set stands for (L3), as they would do them. */
static void perform(struct hold *k, const struct swait_posted *p)
{
	struct swait_head *h = k->h;
	uint32_t n;

	if (p->completes || p->complete_all)
		sink_completes(h, p);
	/* Each wake_one and each complete wakes the longest waiter. */
	for (n = p->ones + p->completes; n > 0 && !list_empty(&h->list); n--) {
		uint32_t *word = swait_wake_one_locked(h);

		if (word)
			add_word(k, word);
	}
	if (p->wake_all || p->complete_all)
		walk_start(k);
}

/*
 * L6: a PI completion's count of posted completes is full, and this thread
 * is counted in REFS without the lock (headlock.h, SWAIT_FULL).  Nobody
 * that could empty the count is waited for: the event goes into done
 * here, and only its wake is posted.  Being counted is what licenses
 * touching the completion: a waiter that finds the event waits until it
 * is the only one counted before it returns (lib/completion.c).  Leaving
 * may hand back the lock, as the last one out with calls posted.
 */
static enum swait_released spill(struct swait_head *h, struct swait_posted *p)
{
#if SWAIT_TEST_HOOKS
	__atomic_add_fetch(&swait_hook_spills, 1, __ATOMIC_RELAXED);
#endif
	/*
	 * Release: our count in REFS before the event, so that a waiter
	 * whose acquire load of done sees it sees us counted
	 * (lib/completion.c check_done).
	 */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	sink_completes(h, p);
	return swait_head_spilled(h, p);
}

/*
 * Release the hold k (lock held): perform what is posted, walk, and wake
 * the flipped words after each release.  After the last release nothing
 * here touches *h but by FUTEX_WAKE of its walks word (W1), an address.
 */
static void hold_release(struct hold *k)
{
	struct swait_head *h = k->h;
	struct swait_posted p;
	bool more;

	for (;;) {
		if (k->walking)
			walk_step(k);
		more = k->walking;
		/* L5: inside a handler at depth > 1, walk in one hold. */
		if (more && !swait_head_may_wait())
			continue;
		if (swait_head_try_release(h, more, &p) == SWAIT_PERFORM) {
			perform(k, &p);
			continue;
		}
		k->steps = 0;
		flush_words(k);
		if (!more)
			break;
		swait_head_relock(h);
	}
	/*
	 * W1: one system call for every waiter of the walk asleep in
	 * futex_waitv(), and for the quiescers.  walk_done() changed the word
	 * after the last flip; this wake comes after the unlock, an address
	 * only, as every wake (I3).
	 */
	if (k->quiesced || k->by_walks) {
		k->quiesced = k->by_walks = false;
		swait_futex_wake(&h->walks, INT_MAX);
	}
}

__attribute__((noinline))
static void head_unlock_slow(struct swait_head *h, uint32_t *word)
{
	struct hold k;

	hold_init(&k, h);
	if (word)
		add_word(&k, word);
	hold_release(&k);
}

void swait_head_unlock(struct swait_head *h)
{
	if (swait_likely(swait_head_release_fast(h)))
		return;
	head_unlock_slow(h, NULL);
}

/*
 * LEAVERS.  A waiter that a wake_one flipped may still touch its head: if
 * it leaves without having slept on that wake, it passes the wake on (I6),
 * and a grouped node's finish_any() locks every head of its group.  So the
 * flip counts it in the head (swait_head_count_leaver(), under the lock),
 * and it leaves with this, its last access to the head, once it has
 * consumed the wake or passed it on: destroy waits for the count (each
 * leaver takes O(1) library steps, or the rest of its condition), so that
 * destroy's 0 means nothing of the library touches the head again.
 * Waiters a walk flipped are not counted: they never read the head again
 * (W4's tag), nor are those of a completion's head (WOKEN_EVENT): its
 * waiters wait out a complete_all's walk under its lock (lib/completion.c),
 * and would wait for themselves if they counted; a completion is freed by
 * its only waiter, after its wait returned, as in the kernel.
 */
void swait_head_leave_slow(struct swait_head *h)
{
	struct swait_posted p;
	struct hold k;

	if (swait_head_leave_pi(h, &p) == SWAIT_RELEASED)
		return;
	hold_init(&k, h);	/* L7: the last one out performs */
	perform(&k, &p);
	hold_release(&k);
}

void swait_wake_quiescer(struct swait_head *h)
{
	swait_futex_wake(&h->walks, INT_MAX);	/* an address (I3) */
}

static void do_call(struct hold *k, enum swait_post what)
{
	struct swait_posted p = swait_posted_of(what);

	perform(k, &p);
}

/* A wake that may wait for the lock (depth 0). */
static void wake_now(struct swait_head *h, enum swait_post what)
{
	struct hold k;

	swait_head_lock(h);
	if (swait_likely(what == SWAIT_POST_WAKE_ONE)) {
		/* The handoff's path: no hold to carry unless posts came. */
		uint32_t *word = swait_wake_one_locked(h);

		if (swait_likely(swait_head_release_fast(h))) {
			if (word) {
				SWAIT_RACE();	/* the word store, FUTEX_WAKE */
				swait_futex_wake(word, 1);
			}
		} else {
			head_unlock_slow(h, word);
		}
		return;
	}
	hold_init(&k, h);
	do_call(&k, what);
	hold_release(&k);
}

/*
 * The four wakes' way past their peek: a handler that interrupted a hold of
 * its thread (L2), or a sleep's asynchronous-cancellation window (C1).
 */
__attribute__((noinline, cold))
static void wake_in_handler(struct swait_head *h, enum swait_post what)
{
	int state, type;

	if (__atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) != 0) {
		struct hold k;

		switch (swait_head_lock_or_post(h, what)) {
		case SWAIT_TAKEN:
			hold_init(&k, h);
			do_call(&k, what);
			hold_release(&k);
			break;
		case SWAIT_POSTED:
			break;	/* the holder performs it (L3) */
		case SWAIT_FULL: {
			/* L6: counted in REFS, not holding: spill it. */
			struct swait_posted p = swait_posted_of(what);

			if (spill(h, &p) == SWAIT_PERFORM) {
				hold_init(&k, h);
				perform(&k, &p);
				hold_release(&k);
			}
			break;
		}
		}
		return;
	}
	/*
	 * C1: nothing unwinds the call while it holds a lock.  Disabled, so
	 * that a cancel signal already in flight is ignored; deferred too,
	 * because glibc 2.36 acts on a pending cancel when an asynchronous
	 * thread re-enables, but leaves the thread's result NULL instead of
	 * PTHREAD_CANCELED; a deferred one is acted on at the re-enable with
	 * the right result.
	 */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
	wake_now(h, what);
	pthread_setcancelstate(state, NULL);	/* a cancel may act here */
	pthread_setcanceltype(type, NULL);
}

void swait_wake_call(struct swait_head *h, enum swait_post what)
{
	if (swait_unlikely((__atomic_load_n(&swait_tls.depth,
					    __ATOMIC_RELAXED) |
			    __atomic_load_n(&swait_tls.async_window,
					    __ATOMIC_RELAXED)) != 0))
		wake_in_handler(h, what);
	else
		wake_now(h, what);
}

SWAIT_EXPORT void swait_wake_one(struct swait_head *h)
{
	/*
	 * O1: order the caller's store of its condition before the peek.  A
	 * full fence on an asymmetric head too: stronger than O1a needs, and
	 * paid only where <swait.h>'s inline half did not end the wake (a
	 * waiter is queued, or the caller was built without it), so that the
	 * ordinary head's path stays as short as it was.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (list_empty(&h->list))
		return;
	swait_wake_call(h, SWAIT_POST_WAKE_ONE);
}

/*
 * The same function under a second name, in version node SWAIT_0.8: the
 * one <swait.h>'s inline wake calls.  The inline reads bits of the walks
 * word whose meaning this release fixed (SWAIT_HEAD_ASYM_BIT was a
 * generation bit before it), so a caller built with it must not run on an
 * older library; referring to a symbol that only this release defines
 * makes the dynamic loader refuse one ("version `SWAIT_0.8' not found"),
 * where a reference to swait_wake_one@SWAIT_0.1 would bind to it and
 * lose wakeups on an ordinary head whose generation happened to be odd.
 */
SWAIT_EXPORT extern __typeof__(swait_wake_one) swait_wake_one_slow
	__attribute__((alias("swait_wake_one")));

SWAIT_EXPORT void swait_wake_all(struct swait_head *h)
{
	/* O1, as in swait_wake_one(): a full fence on every head. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (list_empty(&h->list))
		return;
	swait_wake_call(h, SWAIT_POST_WAKE_ALL);
}

/* ------------------------------------------------------------ quiescing */

/* Lock held: wait until no walk and no leaver counts on h (destroy). */

void swait_quiesce_dropping_lock(struct swait_head *h)
{
	uint32_t v;

	if (swait_head_is_pi(h)) {
		/*
		 * L7: walks on a PI head are counted in REFS, with everyone
		 * else who takes or leaves its lock; wait until we are the
		 * only one.  Each of them finishes an O(1) hold.
		 */
		unsigned rounds = 0;

		while ((__atomic_load_n(&h->walks, __ATOMIC_ACQUIRE) &
			SWAIT_PI_REFS_MASK) > 1) {	/* we are one */
			swait_head_unlock(h);
			/*
			 * Not a yield alone: the thread we wait for may be a
			 * waiter of lower priority on our CPU that we just
			 * signalled (tests/rt/condpi.c).  The word as read
			 * after our unlock, which moved REFS itself.
			 */
			v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);
			if (v & SWAIT_PI_REFS_MASK)
				swait_backoff_wait(&h->walks, v, rounds++);
			swait_head_lock(h);
		}
		return;
	}
	/* Acquire: the walkers' and leavers' accesses come before. */
	while (((v = __atomic_load_n(&h->walks, __ATOMIC_ACQUIRE)) &
		SWAIT_WALKS_MASK) != 0) {
		if (!(v & SWAIT_WALKS_QUIESCER) &&
		    !__atomic_compare_exchange_n(&h->walks, &v,
				v | SWAIT_WALKS_QUIESCER, false,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		v |= SWAIT_WALKS_QUIESCER;
		swait_head_unlock(h);
		/*
		 * walk_done() or the last leaver takes the count to 0 and,
		 * seeing the flag, wakes us; we clear it, under the lock.
		 */
		(void)swait_futex_wait(&h->walks, v, CLOCK_MONOTONIC, NULL);
		swait_head_lock(h);
	}
	if (v & SWAIT_WALKS_QUIESCER)
		__atomic_fetch_and(&h->walks, ~SWAIT_WALKS_QUIESCER,
				   __ATOMIC_RELAXED);
}
