// SPDX-License-Identifier: MIT
/*
 * swait.c - the wait/wake protocol.  Everything that orders a waiter against
 * a waker is in this file; read this comment first.
 *
 * OBJECTS
 *
 * A head is a lock word (lib/lock.h), an aux word (the count of wake_all
 * walks in progress and the PI flag) and a circular doubly linked list of
 * waiters.  All-zero list links mean an
 * empty list that has never been used; the first enqueue links the anchor
 * to itself.  A waiter lives in its thread's stack frame; its 32-bit state is
 * the futex word that thread sleeps on.
 *
 * WAITER STATES (w->state)
 *
 *	IDLE       not on any list; no waker will touch the waiter.
 *	QUEUED     on a list (the head's, or a wake_all batch of that head).
 *	SLEEPING   on a list, and its thread is about to FUTEX_WAIT or is in it.
 *	WOKEN_ONE  taken off the list by a wake_one; not yet seen by the thread.
 *	WOKEN_ALL  taken off the list by a wake_all; not yet seen by the thread.
 *
 * Transitions and who makes them:
 *
 *	IDLE/WOKEN_*      -> QUEUED      prepare, head lock held (enqueue)
 *	QUEUED            -> SLEEPING    sleep, CAS, no lock (announce)
 *	SLEEPING          -> QUEUED      sleep, CAS, no lock (retract after a
 *	                                 timeout or a signal), or prepare,
 *	                                 lock held (keep place)
 *	QUEUED/SLEEPING   -> WOKEN_*     waker, exchange, head lock held,
 *	                                 in the same critical section as the
 *	                                 dequeue
 *	QUEUED/SLEEPING   -> IDLE        finish, head lock held (dequeue)
 *	WOKEN_*           -> IDLE        the waiter's own thread (consume),
 *	                                 no lock: nobody else writes it then
 *
 * INVARIANTS (a reviewer can check each against the code)
 *
 *  I1. Under the head lock, a waiter is on a list of the head iff its state
 *      is QUEUED or SLEEPING.  Every change of list membership and the
 *      matching state change happen in one critical section.
 *  I2. Only the waiter's own thread moves a waiter out of IDLE, WOKEN_ONE or
 *      WOKEN_ALL, and only wakers (under the lock) move it into WOKEN_*.
 *      Waiter and waker both write state with atomic read-modify-writes
 *      wherever the other may write concurrently (the CASes in sleep, the
 *      exchange in the wake), so neither overwrites the other.
 *  I3. A waker's exchange to WOKEN_* is its last access to the waiter's
 *      memory.  The dequeue (writes to the neighbours and the anchor) comes
 *      before it, in the same critical section.  After it the waker only
 *      passes the word's address to FUTEX_WAKE, which is harmless once the
 *      waiter has returned: private futexes are keyed by address, the
 *      kernel never touches the page, and a wake of an unrelated futex at
 *      a reused address is a spurious wakeup, which every futex user
 *      tolerates.  So a waiter that sees WOKEN_* (acquire) owns its frame.
 *  I4. A waiter that is QUEUED or SLEEPING may not leave: its memory is on a
 *      list.  swait_finish() takes it off under the lock.  Cancellation
 *      runs swait_finish() from a cleanup handler.
 *  I5. Every lock hold is O(1): one enqueue, one dequeue, one splice, or one
 *      step of a wake_all walk.  FUTEX_WAKE is always issued after unlock.
 *  I6. A wake_one selection is never lost: a waiter that leaves in WOKEN_ONE
 *      without a sleep having consumed it passes the wake on (finish).  A
 *      prepare of a WOKEN waiter consumes the wake, because the caller
 *      re-evaluates its condition right after the prepare.
 *
 * ORDERING
 *
 *  O1. No lost wakeup: the condition and the queue form a Dekker pair.
 *
 *	waiter (prepare + check)	waker (set + wake)
 *	enqueue (list store)		store cond
 *	FENCE (seq_cst)			FENCE (seq_cst)
 *	load cond			load head->list.next
 *
 *      With both fences, at least one side sees the other's store: the
 *      waiter sees cond true, or the waker sees a non-empty list, takes the
 *      lock and (I1) finds the waiter.  The fence at the end of prepare and
 *      the one at the start of wake_one/wake_all are that pair; without
 *      either, the store can sit in a store buffer while the load runs.
 *      ThreadSanitizer does not model stand-alone fences.  It needs no
 *      substitute here: this pair orders no plain data, only which of two
 *      atomic stores the other side sees, which is a lost-wakeup property
 *      that TSan does not check (the stress suite and the spin model do).
 *      Every plain access is ordered by the head lock or by O3, which TSan
 *      sees as atomic acquire/release.
 *
 *  O2. No sleep through a wake: the announce CAS (QUEUED -> SLEEPING) and
 *      the waker's exchange are read-modify-writes on one word, so they are
 *      totally ordered.  Exchange first: the CAS fails, the waiter does not
 *      sleep, the waker saw QUEUED and makes no system call.  CAS first: the
 *      waker sees SLEEPING and issues FUTEX_WAKE; the waiter's FUTEX_WAIT
 *      compares the word to SLEEPING inside the kernel, so it either returns
 *      EAGAIN or is asleep before the FUTEX_WAKE looks for it.
 *
 *  O3. Publication: the waker's exchange is a release and the waiter's
 *      reads of WOKEN_* are acquires, so everything the waker wrote before
 *      its wake (the condition included) is visible to the woken waiter.
 *
 *  O4. The lock word's own release/acquire (lib/lock.h) orders the list
 *      between critical sections.  Lockless readers of the list read only
 *      head->list.next, and every store to a ->next is atomic.
 *
 * GROUPS (swait_prepare_any / swait_wait_any / swait_finish_any)
 *
 * A thread waiting on n heads queues node i of its waiters[] on heads[i].
 * All nodes share one futex word, the group word G, kept in waiters[0]'s
 * magic field (a grouped node needs no magic: it is recognised by its
 * state).  A grouped node's state is GROUP | i << 8 | QUEUED, WOKEN_ONE or
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
 * SIGNAL HANDLERS
 *
 * The four wakes (swait_wake_one, swait_wake_all, swait_complete,
 * swait_complete_all) may run in a signal handler, the user-space analogue
 * of the kernel's swake_up_one() from a hard interrupt.  The hazard is a
 * handler that interrupts a thread while that thread holds (or is taking)
 * the head lock it wants: it would wait for itself.  So every thread keeps
 * a small stack of the heads it is locking (swait_tls.held[], thread-local,
 * pushed before the lock is attempted, popped after it is released; a stack
 * because a handler may lock another head and be interrupted in turn).  An
 * entry is reserved (the depth) before it is filled, and closed before it is
 * popped, so a handler never overwrites a live entry.
 *
 *  S1. A wake first looks for its head on its own thread's stack.  Found
 *      and open: it adds itself to that entry's pending set and returns
 *      without touching the head.  Otherwise it runs as usual: no entry of
 *      this thread holds the lock, so waiting for the lock waits for
 *      another thread, which finishes an O(1) critical section (I5).
 *  S2. The holder's release is: unlock the word, close the entry (its head
 *      pointer becomes NULL), read the pending set, pop.  A handler runs
 *      atomically with respect to the thread it interrupts, so a post lands
 *      either before the close (and the read after it sees it) or after it
 *      (and the handler, finding no open entry, wakes by itself, the lock
 *      being free of this thread).  The holder then performs what it read,
 *      as ordinary calls, before the interrupted call returns.  Nothing is
 *      lost and no thread waits for itself.
 *  S3. Posts from nested handlers race with each other, so a post is a
 *      compare-and-swap on the entry; the holder's side needs none (plain
 *      loads and stores, ordered by signal fences: all on one thread).
 *  S4. A deferred complete is performed by the same call that held the
 *      lock, before it returns; until then the event is not posted, so no
 *      waiter can have consumed it and freed the completion.  The handler
 *      itself never touches the head after its post.  n deferred completes
 *      post one event per lock hold that wakes a waiter (swait_complete_n),
 *      as n calls would, so the last hold is the last access.
 *  S5. A timer may post faster than the holder performs: the performing
 *      calls' own unlocks of the head find new posts.  They hand them to
 *      the loop already running (swait_tls.performing, swait_tls.carry) instead of
 *      starting another, so the backlog costs time, not stack; the counts
 *      are word-sized, so they do not overflow.
 *
 * tests/model/sig.pml checks S1-S5 exhaustively, nested handlers included;
 * tests/model/group.pml checks G1-G5.
 *
 * COST
 *
 *  - wake on an empty head: one fence, one load.
 *  - a waiter that was woken before it announced: no system call anywhere.
 *  - a blocking handoff: the waker's one FUTEX_WAKE, the waiter's one
 *    FUTEX_WAIT (plus FUTEX_WAKE/WAIT on the lock word under contention).
 */
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "annotate.h"
#include "check.h"
#include "futex.h"
#include "internal.h"
#include "lock.h"
#include "race.h"
#include "trace.h"

/*
 * Seeded bugs (Meson option mutant, tests/mutants/): each SWAIT_MUTANT_*
 * breaks one rule above on purpose, so that the test suites can show they
 * catch it.  Never defined in a real build.
 */

enum {
	SWAIT_IDLE = 0,
	SWAIT_QUEUED = 1,
	SWAIT_SLEEPING = 2,
	SWAIT_WOKEN_ONE = 3,
	SWAIT_WOKEN_ALL = 4,
};

/*
 * A grouped node's state: GROUP | index << GROUP_SHIFT | QUEUED or WOKEN_*.
 * No single waiter's state ever has GROUP set.
 */
#define SWAIT_GROUP		0x80000000u
#define SWAIT_GROUP_SHIFT	8
#define SWAIT_SUBSTATE		0xffu

/* The group word G (waiters[0].magic). */
#define G_WOKEN_MASK		0x0000ffffu	/* bit i: node i woken */
#define G_CONSUMED_SHIFT	16		/* index + 1 of the consumed node */
#define G_CONSUMED_MASK		0x001f0000u
#define G_SLEEPING		0x80000000u

/* w->magic while queued (debug builds): "swai". */
#define SWAIT_MAGIC 0x73776169u

/*
 * head->aux: the count of wake_all walks in progress (destroy's EBUSY and
 * the completions' quiesce), whether the head is a PI head (fixed at init;
 * SWAIT_HEAD_PI_INITIALIZER spells the same bit), and whether a thread
 * sleeps in swait_quiesce_locked() on this word.  Written under the lock.
 */
#define SWAIT_WALKERS_MASK 0x3fffffffu
#define SWAIT_HEAD_PI 0x40000000u
#define SWAIT_QUIESCE_WAITING 0x80000000u

SWAIT_TLS uint32_t swait_tid_cache;

/* A fork child has one thread, the forking one, with its parent's id. */
static void swait_atfork_child(void)
{
	swait_tid_cache = 0;
}

__attribute__((constructor))
static void swait_init_library(void)
{
	pthread_atfork(NULL, NULL, swait_atfork_child);
}

/* Through void *: the list link is the first member, the cast is aligned. */
#define waiter_of(l) ((struct swait_waiter *)(void *)			\
	((char *)(l) - offsetof(struct swait_waiter, link)))

static inline uint32_t load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_relaxed(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ lists */

/*
 * ->next stores are atomic because swait_active() reads head->list.next
 * without the lock (O4); everything else here runs under the head lock.
 */
static inline void set_next(struct swait_list *l, struct swait_list *next)
{
	__atomic_store_n(&l->next, next, __ATOMIC_RELAXED);
}

static inline bool list_empty(const struct swait_list *anchor)
{
	const struct swait_list *n =
		__atomic_load_n(&anchor->next, __ATOMIC_RELAXED);

	return n == NULL || n == anchor;
}

static inline void list_add_tail(struct swait_list *anchor,
				 struct swait_list *l)
{
	struct swait_list *prev;

	if (anchor->next == NULL) {	/* zero-initialised head */
		set_next(anchor, anchor);
		anchor->prev = anchor;
	}
	prev = anchor->prev;
	l->prev = prev;
	set_next(l, anchor);
	anchor->prev = l;
	set_next(prev, l);
}

static inline void list_del(struct swait_waiter *w)
{
	struct swait_list *l = &w->link;
	struct swait_list *next = l->next, *prev = l->prev;

	swait_check(next && prev && next->prev == l && prev->next == l,
		    "list corrupted: a queued waiter's links were overwritten "
		    "(waiter memory reused or freed while queued?) "
		    "[waiter, next, prev]", w, next, prev);
	next->prev = prev;
	set_next(prev, next);
	l->next = NULL;
	l->prev = NULL;
}

/* Move all of from's entries to the empty anchor to; O(1). */
static inline void list_splice_init(struct swait_list *from,
				    struct swait_list *to)
{
	struct swait_list *first = from->next, *last = from->prev;

	to->prev = last;
	set_next(to, first);
	first->prev = to;
	set_next(last, to);
	from->prev = from;
	set_next(from, from);
}

/* ---------------------------------------------------------------- helpers */

#if SWAIT_TEST_HOOKS
unsigned swait_hook_max_hold_steps;
void (*swait_hook_prepare_locked)(struct swait_head *head);
#endif

/* --------------------------------------------------- the held-heads stack */

/* This thread's held-heads stack and perform loop (internal.h). */
SWAIT_TLS struct swait_tls swait_tls;

#if SWAIT_TEST_HOOKS
unsigned long swait_hook_deferred;
#endif

/* Compiler-only barrier: orders accesses against this thread's handlers. */
#define signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static inline void held_push(struct swait_head *h)
{
	unsigned d = swait_tls.depth;

	swait_check(d < SWAIT_HELD_MAX,
		    "head locks nested too deep: signal handlers that wake "
		    "are nested more than SWAIT_HELD_MAX deep [head, depth]",
		    h, (void *)(uintptr_t)d, NULL);
	/*
	 * Reserve the entry first, then fill it: a handler that runs in
	 * between pushes above it instead of overwriting it, and sees a NULL
	 * head (left by the last pop), so it wakes by itself, which is safe
	 * because this thread does not hold h's lock yet.
	 */
	__atomic_store_n(&swait_tls.depth, d + 1, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&swait_tls.held[d].pending, 0, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&swait_tls.held[d].head, h, __ATOMIC_RELAXED);
	signal_fence();
}

/* After the unlock: close, read, pop (S2).  Returns the pending set. */
static inline swait_defer_t held_pop(struct swait_head *h)
{
	unsigned d = swait_tls.depth - 1;
	swait_defer_t pending;

	swait_check(swait_tls.held[d].head == h,
		    "head lock released out of order [head, innermost held]",
		    h, swait_tls.held[d].head, NULL);
	signal_fence();
	__atomic_store_n(&swait_tls.held[d].head, NULL, __ATOMIC_RELAXED);
	signal_fence();
	pending = __atomic_load_n(&swait_tls.held[d].pending, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&swait_tls.depth, d, __ATOMIC_RELAXED);
	signal_fence();
	return pending;
}

/*
 * Add the set what to the set v: counts add, flags or.  wake_one counts
 * past their field become a wake_all, a superset (spurious wakeups are
 * allowed); complete counts are exact, so a field that would overflow
 * aborts (2^32 completes posted during one lock hold on LP64).
 */
static swait_defer_t defer_add(struct swait_head *h, swait_defer_t v,
			       swait_defer_t what)
{
	swait_defer_t ones = (v & DEFER_ONE_MASK) + (what & DEFER_ONE_MASK);
	swait_defer_t completes = (v & DEFER_COMPLETE_MASK) / DEFER_COMPLETE +
				  (what & DEFER_COMPLETE_MASK) / DEFER_COMPLETE;
	swait_defer_t flags = (v | what) & ~(DEFER_ONE_MASK |
					     DEFER_COMPLETE_MASK);

	if (ones > DEFER_ONE_MASK) {
		ones = 0;
		flags |= DEFER_WAKE_ALL;
	}
	swait_check(completes <= DEFER_COMPLETE_MASK / DEFER_COMPLETE,
		    "too many swait_complete() from signal handlers during "
		    "one lock hold [head, pending]", h, (void *)v, NULL);
	return flags | ones | completes * DEFER_COMPLETE;
}

/*
 * S1: if this thread is taking or holding h's lock, post what to that entry
 * and return true: the holder will do it.  A handler's only access to the
 * stack, with a CAS against nested handlers (S3).
 */
bool swait_defer_to_holder(struct swait_head *h, swait_defer_t what)
{
	unsigned d = __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED);

	while (d-- > 0) {
		struct swait_held *e = &swait_tls.held[d];
		swait_defer_t p;

		if (__atomic_load_n(&e->head, __ATOMIC_RELAXED) != h)
			continue;
		p = __atomic_load_n(&e->pending, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&e->pending, &p,
				defer_add(h, p, what), false,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
#if SWAIT_TEST_HOOKS
		__atomic_add_fetch(&swait_hook_deferred, 1, __ATOMIC_RELAXED);
#endif
		return true;
	}
	return false;
}

/* A set found by an unlock of the head being performed: for the loop. */
static void carry_add(struct swait_head *h, swait_defer_t what)
{
	swait_defer_t p = __atomic_load_n(&swait_tls.carry, __ATOMIC_RELAXED);

	/* A CAS: a handler's own unlock of h may add to it too. */
	while (!__atomic_compare_exchange_n(&swait_tls.carry, &p,
			defer_add(h, p, what), false,
			__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* One set, as the calls it stands for (S4: complete_n's rule). */
static void perform(struct swait_head *h, swait_defer_t p)
{
	/* Only the completion calls post DEFER_COMPLETE*: h is c->wait. */
	struct swait_completion *c = (struct swait_completion *)(void *)
		((char *)h - offsetof(struct swait_completion, wait));
	swait_defer_t n;

	if (p & DEFER_COMPLETE_MASK)
		swait_complete_n(c, (p & DEFER_COMPLETE_MASK) / DEFER_COMPLETE);
	if (p & DEFER_COMPLETE_ALL)
		swait_complete_all(c);
	/* More wake_ones than waiters wake nobody more. */
	for (n = p & DEFER_ONE_MASK; n > 0 && swait_active(h); n--)
		swait_wake_one(h);
	if (p & DEFER_WAKE_ALL)
		swait_wake_all(h);
}

/*
 * S2, S5: the holder performs what its handlers posted.  Iteratively: the
 * calls that perform it lock and unlock h again, and their unlocks may
 * find new posts (a timer can outpace the holder); those go to
 * swait_tls.carry and this loop, not to a nested run_deferred(), so the stack
 * does not grow with the backlog.
 */
__attribute__((noinline))
static void run_deferred(struct swait_head *h, swait_defer_t p)
{
	if (__atomic_load_n(&swait_tls.performing, __ATOMIC_RELAXED) != NULL) {
		/*
		 * Another head's loop is below us: we are in a handler that
		 * interrupted it (its own calls touch only its head).  Run
		 * this set directly; a post during it comes from a handler
		 * nested in this one, so the recursion is bounded by that.
		 */
		perform(h, p);
		return;
	}
	__atomic_store_n(&swait_tls.performing, h, __ATOMIC_RELAXED);
	signal_fence();
	for (;;) {
		perform(h, p);
		p = __atomic_exchange_n(&swait_tls.carry, 0, __ATOMIC_RELAXED);
		if (p != 0)
			continue;
		/*
		 * Stop being the performer, then look once more: an unlock
		 * of h by a handler in between carried its set here.  After
		 * the store, such an unlock runs its set itself.
		 */
		__atomic_store_n(&swait_tls.performing, NULL, __ATOMIC_RELAXED);
		signal_fence();
		p = __atomic_exchange_n(&swait_tls.carry, 0, __ATOMIC_RELAXED);
		if (p == 0)
			break;
		__atomic_store_n(&swait_tls.performing, h, __ATOMIC_RELAXED);
		signal_fence();
	}
}

/* ------------------------------------------------------------- head lock */

void swait_head_lock(struct swait_head *h)
{
	/*
	 * The lock word, aux and list.next (the first 16 bytes) are
	 * synchronisation words, accessed outside the lock by design.
	 */
	swait_ann_sync_word(h, offsetof(struct swait_head, list.prev));
	held_push(h);
	/* The PI bit never changes after init; the count bits may. */
	if (swait_unlikely(load_relaxed(&h->aux) & SWAIT_HEAD_PI)) {
		swait_pi_lock(&h->lock);
	} else if (swait_unlikely(!swait_trylock(&h->lock))) {
		swait_trace1(lock_contended, h);
		swait_lock_slow(&h->lock);
	}
	swait_ann_lock_acquired(h);
	SWAIT_RACE();	/* a holder preempted inside its critical section */
}

void swait_head_unlock(struct swait_head *h)
{
	swait_defer_t pending;

	swait_ann_lock_released(h);
	if (swait_unlikely(load_relaxed(&h->aux) & SWAIT_HEAD_PI))
		swait_pi_unlock(&h->lock);
	else
		swait_unlock(&h->lock);
	pending = held_pop(h);
	if (swait_likely(pending == 0))
		return;
	if (__atomic_load_n(&swait_tls.performing, __ATOMIC_RELAXED) == h)
		carry_add(h, pending);	/* S5: the loop below us runs it */
	else
		run_deferred(h, pending);
}

void swait_wake_word(uint32_t *word)
{
	swait_futex_wake(word, 1);
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
	store_relaxed(&w->state, SWAIT_GROUP | idx << SWAIT_GROUP_SHIFT | how);
	SWAIT_RACE();
	swait_trace3(wake, h, w, how);
	/*
	 * The last access to the group (G4).  Release: publishes what the
	 * waker wrote before the wake (O3); pairs with the acquire loads of G
	 * in swait_wait_any().
	 */
	swait_ann_happens_before(&w0->magic);
	old = __atomic_fetch_or(&w0->magic, 1u << idx, __ATOMIC_RELEASE);
	if ((old & G_SLEEPING) && !(old & G_WOKEN_MASK))
		return &w0->magic;	/* G3: the first wake of this sleep */
	return NULL;
}

/*
 * Take w off its list and flip it to woken (lock held).  Returns the word to
 * FUTEX_WAKE after unlock if its thread announced a sleep, else NULL.
 */
static uint32_t *dequeue_and_flip(struct swait_head *h, struct swait_waiter *w,
				  uint32_t how)
{
	uint32_t old, s = load_relaxed(&w->state);

	if (s & SWAIT_GROUP)
		return dequeue_and_flip_grouped(h, w, s, how);
	swait_check(w->magic == SWAIT_MAGIC && w->head == h,
		    "a queued waiter was overwritten (waiter memory reused or "
		    "freed while queued?) [waiter, its head, this head]",
		    w, w->head, h);
#ifndef SWAIT_MUTANT_STORE_BEFORE_DEQUEUE
	list_del(w);
	w->magic = 0;
	SWAIT_RACE();
#endif
	/*
	 * I3: the last access to *w.  Release: publishes the dequeue and all
	 * the waker wrote before the wake (O3); pairs with the acquire loads
	 * and CASes of w->state in swait_sleep() and swait_finish().
	 */
	swait_trace3(wake, h, w, how);	/* w is still queued: alive */
	swait_ann_happens_before(&w->state);
	old = __atomic_exchange_n(&w->state, how, __ATOMIC_RELEASE);
#ifdef SWAIT_MUTANT_STORE_BEFORE_DEQUEUE
	SWAIT_RACE();
	list_del(w);
	w->magic = 0;
#endif
#ifdef SWAIT_MUTANT_READ_AFTER_STORE
	SWAIT_RACE();
	(void)*(volatile struct swait_list **)&w->link.next;
#endif
	return old == SWAIT_SLEEPING ? &w->state : NULL;
}

/* ------------------------------------------------------------ init/destroy */

SWAIT_EXPORT void swait_head_init(struct swait_head *h)
{
	memset(h, 0, sizeof(*h));
}

SWAIT_EXPORT void swait_head_init_pi(struct swait_head *h)
{
	memset(h, 0, sizeof(*h));
	h->aux = SWAIT_HEAD_PI;
}

SWAIT_EXPORT int swait_head_destroy(struct swait_head *h)
{
	bool busy;

	/*
	 * Taking the lock also waits out a wake that is still releasing it:
	 * after our unlock, no earlier caller touches *h except by FUTEX_WAKE.
	 */
	swait_head_lock(h);
	busy = !list_empty(&h->list) ||
	       (load_relaxed(&h->aux) & SWAIT_WALKERS_MASK) != 0;
	swait_head_unlock(h);
	return busy ? EBUSY : 0;
}

SWAIT_EXPORT void swait_waiter_init(struct swait_waiter *w)
{
	memset(w, 0, sizeof(*w));
}

/* ---------------------------------------------------------------- waiting */

SWAIT_EXPORT void swait_prepare(struct swait_head *h, struct swait_waiter *w)
{
	uint32_t s;

	swait_head_lock(h);
	s = load_relaxed(&w->state);
	swait_check(!(s & SWAIT_GROUP),
		    "swait_prepare: waiter is a node of a swait_wait_any() "
		    "group; swait_finish_any() it first [waiter, head]",
		    w, h, NULL);
	if (s == SWAIT_QUEUED || s == SWAIT_SLEEPING) {
		swait_check(w->head == h,
			    "swait_prepare: waiter is still queued on another "
			    "head [waiter, its head, this head]", w, w->head, h);
		swait_check(w->magic == SWAIT_MAGIC,
			    "swait_prepare: waiter says it is queued but its "
			    "memory was overwritten [waiter, head]", w, h, NULL);
		/*
		 * Keep its place.  Withdraw a SLEEPING announcement left by a
		 * sleep that did not end in a wake, so that a waker does not
		 * pay a FUTEX_WAKE for a thread that is running.  The lock
		 * excludes the waker's exchange (I2).
		 */
		store_relaxed(&w->state, SWAIT_QUEUED);
	} else {
		/* IDLE, or WOKEN_*: re-queueing consumes the wake (I6). */
		swait_ann_sync_word(&w->state, sizeof(w->state));
		list_add_tail(&h->list, &w->link);
		w->head = h;
		w->magic = SWAIT_MAGIC;
		store_relaxed(&w->state, SWAIT_QUEUED);
	}
#if SWAIT_TEST_HOOKS
	{
		void (*hook)(struct swait_head *) = __atomic_load_n(
			&swait_hook_prepare_locked, __ATOMIC_ACQUIRE);

		if (hook)
			hook(h);	/* widens the critical section */
	}
#endif
	swait_head_unlock(h);
	SWAIT_RACE();	/* between the enqueue and the barrier */
	/*
	 * O1: order the enqueue before the caller's read of its condition.
	 * Pairs with the fence at the start of swait_wake_one() and
	 * swait_wake_all().  The unlock's release does not do it: a release
	 * orders earlier accesses before the store, not the store before
	 * later loads.
	 */
#ifndef SWAIT_MUTANT_NO_BARRIER
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * The body of swait_sleep(), between the cancellation cleanup push and pop.
 * Returns 0 with the waiter consumed (IDLE), or ETIMEDOUT/EINTR with it
 * still QUEUED.
 */
static int sleep_announced(struct swait_waiter *w, unsigned flags,
			   clockid_t clock, const struct timespec *deadline)
{
	uint32_t s = SWAIT_QUEUED;
	int err, oldtype;

	pthread_testcancel();
	/*
	 * O2: announce.  Acquire on failure: a WOKEN_* we read publishes the
	 * waker's writes (O3).
	 */
	if (!__atomic_compare_exchange_n(&w->state, &s, SWAIT_SLEEPING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		swait_check(s != SWAIT_IDLE,
			    "swait_sleep: waiter was not prepared [waiter]",
			    w, NULL, NULL);
		if (s != SWAIT_SLEEPING)
			goto woken;	/* a wake came first: no syscall */
	}
	for (;;) {
		/*
		 * A cancellation point, as pthread_cond_wait is: deferred
		 * cancellation is acted on only inside this window, where
		 * the state is SLEEPING or WOKEN_* and not yet consumed, so
		 * the cleanup handler (swait_finish) can dequeue the waiter
		 * or pass its wake on (I4, I6).
		 */
		SWAIT_RACE();	/* between the announce and the wait */
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
#ifndef SWAIT_MUTANT_WAIT_NO_COMPARE
		err = swait_futex_wait(&w->state, SWAIT_SLEEPING, clock,
				       deadline);
#else
		/* Compares against a stale copy: a wake in between is lost. */
		{
			uint32_t seen = load_relaxed(&w->state);

			SWAIT_RACE();
			err = swait_futex_wait(&w->state, seen, clock,
					       deadline);
			if (err == EAGAIN)
				err = 0;
		}
#endif
		pthread_setcanceltype(oldtype, NULL);

		s = load_acquire(&w->state);	/* O3 */
		if (s != SWAIT_SLEEPING)
			goto woken;	/* only a waker leaves SLEEPING (I2) */
		if (err == ETIMEDOUT ||
		    (err == EINTR && (flags & SWAIT_INTERRUPTIBLE))) {
			/*
			 * Retract the announcement so that a waker selecting
			 * us later makes no FUTEX_WAKE.  If the CAS fails, a
			 * wake won the race: report it, not the timeout.
			 */
			if (__atomic_compare_exchange_n(&w->state, &s,
					SWAIT_QUEUED, false, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE))
				return err;
			goto woken;
		}
		/*
		 * 0 with the word still SLEEPING is a stale FUTEX_WAKE aimed
		 * at memory we now occupy (I3), EINTR without the flag is a
		 * signal we ignore: sleep again, same absolute deadline.
		 */
	}
woken:
	swait_ann_happens_after(&w->state);	/* O3 */
	store_relaxed(&w->state, SWAIT_IDLE);	/* consumed (I2, I6) */
	swait_ann_idle_word(&w->state);
	return 0;
}

struct sleep_ctx {
	struct swait_head *head;
	struct swait_waiter *waiter;
	const struct timespec *deadline;
	clockid_t clock;
	unsigned flags;
};

static void sleep_cancelled(void *arg)
{
	struct sleep_ctx *ctx = arg;

	swait_finish(ctx->head, ctx->waiter);
}

/*
 * I4 under cancellation.  glibc's setjmp form of the cleanup (the library is
 * built without -fexceptions, see lib/meson.build): the cancel signal unwinds
 * to this frame from inside syscall() and runs sleep_cancelled(), which
 * dequeues the waiter or passes its wake on.  Everything the cleanup needs is
 * in *ctx, in memory, so nothing lives in a register across the setjmp.
 */
static int sleep_cancellable(struct sleep_ctx *ctx)
{
	int err;

	pthread_cleanup_push(sleep_cancelled, ctx);
	err = sleep_announced(ctx->waiter, ctx->flags, ctx->clock,
			      ctx->deadline);
	pthread_cleanup_pop(0);
	return err;
}

SWAIT_EXPORT int swait_sleep(struct swait_head *h, struct swait_waiter *w,
			     unsigned flags, clockid_t clock,
			     const struct timespec *deadline)
{
	static const struct timespec past = { 0, 0 };
	struct sleep_ctx ctx = { h, w, deadline, clock, flags };

	if (flags & ~SWAIT_INTERRUPTIBLE)
		return EINVAL;
	if (!swait_deadline_valid(clock, deadline))
		return EINVAL;
	swait_check(w->head == h || load_relaxed(&w->state) == SWAIT_IDLE,
		    "swait_sleep: waiter was prepared on another head "
		    "[waiter, its head, this head]", w, w->head, h);
	swait_check(!(load_relaxed(&w->state) & SWAIT_GROUP),
		    "swait_sleep: waiter is a node of a swait_wait_any() group "
		    "[waiter, head]", w, h, NULL);
	int err;

	/* The kernel refuses a negative tv_sec; it is a deadline long past. */
	if (deadline && deadline->tv_sec < 0)
		ctx.deadline = &past;
	swait_trace2(wait_start, h, w);
	err = sleep_cancellable(&ctx);
	swait_trace3(wait_end, h, w, err == 0 ? 0 : err == ETIMEDOUT ? 1 : 2);
	return err;
}

SWAIT_EXPORT void swait_finish(struct swait_head *h, struct swait_waiter *w)
{
	/* Acquire: a WOKEN_* read here means the waker is done with *w (I3). */
	uint32_t s = load_acquire(&w->state);

	swait_check(!(s & SWAIT_GROUP),
		    "swait_finish: waiter is a node of a swait_wait_any() "
		    "group; use swait_finish_any() [waiter, head]", w, h, NULL);

	if (s == SWAIT_QUEUED || s == SWAIT_SLEEPING) {
		swait_check(w->head == h,
			    "swait_finish: waiter is queued on another head "
			    "[waiter, its head, this head]", w, w->head, h);
#ifdef SWAIT_MUTANT_FINISH_KEEPS_QUEUED
		return;		/* leaves its frame on the list */
#endif
		swait_head_lock(h);
		s = load_relaxed(&w->state);	/* stable under the lock (I1) */
		if (s == SWAIT_QUEUED || s == SWAIT_SLEEPING) {
			list_del(w);
			w->magic = 0;
			store_relaxed(&w->state, SWAIT_IDLE);
			swait_ann_idle_word(&w->state);
			swait_head_unlock(h);
			SWAIT_RACE();	/* before the caller's re-check */
			return;
		}
		/* A waker dequeued us between the load and the lock. */
		swait_head_unlock(h);
	}
	if (s == SWAIT_IDLE)
		return;
	swait_ann_happens_after(&w->state);	/* O3 */
	store_relaxed(&w->state, SWAIT_IDLE);
	swait_ann_idle_word(&w->state);
	/* I6: selected by a wake_one that no sleep consumed: pass it on. */
	if (s == SWAIT_WOKEN_ONE)
		swait_wake_one(h);
	SWAIT_RACE();	/* before the caller's re-check */
}

/* ------------------------------------------------ several heads at once */

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

SWAIT_EXPORT void swait_prepare_any(struct swait_head *const heads[],
				    unsigned n, struct swait_waiter ws[])
{
	uint32_t *g = &ws[0].magic;
	uint32_t pass = 0, consumed;

	swait_check(group_size_ok(n),
		    "swait_prepare_any: n must be 1..SWAIT_ANY_MAX "
		    "[heads, n, waiters]", heads, (void *)(uintptr_t)n, ws);
	if (!group_size_ok(n))
		return;
	swait_ann_sync_word(g, sizeof(*g));
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
			if (s == (tag | SWAIT_WOKEN_ONE) && i + 1 != consumed)
				pass |= 1u << i;
			swait_ann_sync_word(&w->state, sizeof(w->state));
			list_add_tail(&h->list, &w->link);
			w->head = h;
			if (i != 0)
				w->magic = SWAIT_MAGIC;
			store_relaxed(&w->state, tag | SWAIT_QUEUED);
			if (s != SWAIT_IDLE)	/* G2 */
				__atomic_fetch_and(g, ~(1u << i),
						   __ATOMIC_RELAXED);
		}
		swait_head_unlock(h);
	}
	/* Behind our re-queued node: to another waiter, if there is one. */
	pass_on(heads, pass);
	SWAIT_RACE();
	/* O1, as at the end of swait_prepare(), for every head at once. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The body of swait_wait_any(), inside the cancellation cleanup. */
static int wait_any_announced(uint32_t *g, unsigned flags, clockid_t clock,
			      const struct timespec *deadline,
			      unsigned *which)
{
	uint32_t v;
	int err, oldtype;

	pthread_testcancel();
	v = load_acquire(g);
	if (v & G_WOKEN_MASK)
		goto woken;
	/* G3: announce; fails (acquire) if a wake came first. */
	if (!__atomic_compare_exchange_n(g, &v, v | G_SLEEPING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		goto woken;
	for (;;) {
		SWAIT_RACE();
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
		err = swait_futex_wait(g, G_SLEEPING, clock, deadline);
		pthread_setcanceltype(oldtype, NULL);
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
	 * Record which wake this wait consumed (G5).  An RMW: wakers of the
	 * other nodes may still set their bits.  Re-entering after a return
	 * of 0 without a prepare finds the same lowest bit and ORs the same
	 * index again.
	 */
	__atomic_fetch_or(g, (*which + 1) << G_CONSUMED_SHIFT,
			  __ATOMIC_RELAXED);
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

	swait_finish_any(ctx->heads, ctx->n, ctx->waiters);
}

/* I4 under cancellation, as sleep_cancellable(). */
static int wait_any_cancellable(struct any_ctx *ctx)
{
	int err;

	pthread_cleanup_push(wait_any_cancelled, ctx);
	err = wait_any_announced(&ctx->waiters[0].magic, ctx->flags,
				 ctx->clock, ctx->deadline, ctx->which);
	pthread_cleanup_pop(0);
	return err;
}

SWAIT_EXPORT int swait_wait_any(struct swait_head *const heads[], unsigned n,
				struct swait_waiter ws[], unsigned flags,
				clockid_t clock, const struct timespec *deadline,
				unsigned *which)
{
	static const struct timespec past = { 0, 0 };
	struct any_ctx ctx = { heads, ws, deadline, which, clock, flags, n };
	int err;

	if (!group_size_ok(n) || (flags & ~SWAIT_INTERRUPTIBLE) ||
	    !swait_deadline_valid(clock, deadline))
		return EINVAL;
	swait_check((load_relaxed(&ws[0].state) & ~SWAIT_SUBSTATE) ==
		    SWAIT_GROUP,
		    "swait_wait_any: waiters[] was not prepared with "
		    "swait_prepare_any() [heads, waiters]", heads, ws, NULL);
	if (deadline && deadline->tv_sec < 0)
		ctx.deadline = &past;
	swait_trace2(wait_start, heads[0], ws);
	err = wait_any_cancellable(&ctx);
	swait_trace3(wait_end, heads[0], ws,
		     err == 0 ? 0 : err == ETIMEDOUT ? 1 : 2);
	return err;
}

SWAIT_EXPORT void swait_finish_any(struct swait_head *const heads[],
				   unsigned n, struct swait_waiter ws[])
{
	uint32_t *g = &ws[0].magic;
	uint32_t pass = 0, consumed;

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
				break;
			}
			if (i != 0)
				w->magic = 0;
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
}

/* ------------------------------------------------------------------ waking */

uint32_t *swait_wake_one_locked(struct swait_head *h)
{
	if (list_empty(&h->list))
		return NULL;
	return dequeue_and_flip(h, waiter_of(h->list.next), SWAIT_WOKEN_ONE);
}

SWAIT_EXPORT void swait_wake_one(struct swait_head *h)
{
	uint32_t *word;

	/* O1: order the caller's store of its condition before the peek. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (list_empty(&h->list))
		return;
	if (swait_deferred(h, DEFER_WAKE_ONE))
		return;		/* S1: a handler on the holder's thread */
	swait_head_lock(h);
	word = swait_wake_one_locked(h);
	swait_head_unlock(h);
	if (word) {
		SWAIT_RACE();	/* between the word store and FUTEX_WAKE */
		swait_futex_wake(word, 1);	/* after unlock (I5) */
	}
}

/* Lock held: one walk ends.  Returns whether quiescers must be woken. */
static bool walk_done(struct swait_head *h)
{
	uint32_t v = load_relaxed(&h->aux) - 1;

	if ((v & SWAIT_WALKERS_MASK) != 0) {
		store_relaxed(&h->aux, v);
		return false;
	}
	store_relaxed(&h->aux, v & SWAIT_HEAD_PI);
	return (v & SWAIT_QUIESCE_WAITING) != 0;
}

void swait_wake_all_locked(struct swait_head *h)
{
	struct swait_list batch;
	uint32_t *word;
	bool last, quiesced;
	unsigned steps = 0, woken = 0;

	if (list_empty(&h->list)) {
		swait_head_unlock(h);
		return;
	}
	/*
	 * Detach the queued set in O(1): later arrivals queue on the head and
	 * are not ours.  Waiters in the batch still belong to h: one that times
	 * out unlinks itself from the batch under h's lock (list_del needs no
	 * anchor), and destroy reports EBUSY while a walk is counted.
	 */
	list_splice_init(&h->list, &batch);
	store_relaxed(&h->aux, load_relaxed(&h->aux) + 1);
	for (;;) {
		word = dequeue_and_flip(h, waiter_of(batch.next),
					SWAIT_WOKEN_ALL);
		last = batch.next == &batch;
		quiesced = last && walk_done(h);
		steps++;
#if SWAIT_TEST_HOOKS
		/* Concurrent walks update it with atomics: a sync word. */
		swait_ann_sync_word(&swait_hook_max_hold_steps,
				    sizeof(swait_hook_max_hold_steps));
		if (steps > __atomic_load_n(&swait_hook_max_hold_steps,
					    __ATOMIC_RELAXED))
			__atomic_store_n(&swait_hook_max_hold_steps, steps,
					 __ATOMIC_RELAXED);
#endif
#ifdef SWAIT_MUTANT_WAKE_ALL_HOLDS_LOCK
		if (!last) {
			if (word)
				swait_futex_wake(word, 1);
			continue;
		}
#endif
		/*
		 * I5: drop the lock between two wakes, so a higher-priority
		 * thread that wants it waits behind one step, not the walk.
		 * After the last step nothing here touches *h again.
		 */
		swait_head_unlock(h);
		steps = 0;
		woken++;
		if (word) {
			SWAIT_RACE();
			swait_futex_wake(word, 1);
		}
		if (last)
			break;
		swait_head_lock(h);
		if (batch.next == &batch) {	/* the rest left on their own */
			quiesced = walk_done(h);
			swait_head_unlock(h);
			break;
		}
	}
	swait_trace2(wake_all, h, woken);	/* a value: h is not read */
	if (quiesced)
		swait_futex_wake(&h->aux, INT_MAX);
}

SWAIT_EXPORT void swait_wake_all(struct swait_head *h)
{
	/* O1, as in swait_wake_one(). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (list_empty(&h->list))
		return;
	if (swait_deferred(h, DEFER_WAKE_ALL))
		return;		/* S1 */
	swait_head_lock(h);
	swait_wake_all_locked(h);
}

void swait_quiesce_locked(struct swait_head *h)
{
	uint32_t v;

	while (((v = load_relaxed(&h->aux)) & SWAIT_WALKERS_MASK) != 0) {
		v |= SWAIT_QUIESCE_WAITING;
		store_relaxed(&h->aux, v);
		swait_head_unlock(h);
		/* walk_done() clears the count, then wakes us after unlock. */
		(void)swait_futex_wait(&h->aux, v, CLOCK_MONOTONIC, NULL);
		swait_head_lock(h);
	}
}

SWAIT_EXPORT bool swait_active(const struct swait_head *h)
{
	return !list_empty(&h->list);
}

SWAIT_EXPORT bool swait_has_sleeper(struct swait_head *h)
{
	/* O1: the caller's store before the peek, as in the wakes. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return !list_empty(&h->list);
}

/* --------------------------------------------------------------- deadlines */

SWAIT_EXPORT int swait_deadline_after(struct timespec *deadline,
				      clockid_t clock, int64_t nsec)
{
	struct timespec now;

	if ((clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) || nsec < 0)
		return EINVAL;
	clock_gettime(clock, &now);
	deadline->tv_sec = now.tv_sec + (time_t)(nsec / 1000000000);
	deadline->tv_nsec = now.tv_nsec + (long)(nsec % 1000000000);
	if (deadline->tv_nsec >= 1000000000L) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000L;
	}
	return 0;
}
