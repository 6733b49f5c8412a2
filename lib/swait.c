// SPDX-License-Identifier: MIT
/*
 * swait.c - the wait/wake protocol on one head: the rules every other
 * protocol file builds on.  Read this comment first.
 *
 * OBJECTS
 *
 * A head is a lock word (lib/lock.h, taken through lib/headlock.c), a walks
 * word (the count of wake_all walks in progress, and the PI flag; see
 * lib/state.h) and a circular doubly linked list of waiters (lib/list.h).
 * A waiter lives in its thread's stack frame; its 32-bit state is the futex
 * word that thread sleeps on.
 *
 * This file holds the single waiter's side (prepare, sleep, finish);
 * lib/head.c a head's and a waiter's life (init, destroy); lib/wake.c the waker's side of every node, single or grouped
 * (wake_one, wake_all, the flips) and what a lock hold does before its
 * release.  The rules of groups are lib/any.c's (G1-G5); the rules of the
 * head lock and of wakes from signal handlers are lib/headlock.c's
 * (L1-L7, checked by tests/model/post.pml).  tests/model/swait.pml
 * checks I1-I6, O1-O3 and W1-W3 exhaustively for three waiters and two
 * wakers, and its seeded bugs (tests/mutants/) show that each check can
 * fail.
 *
 * WAITER STATES (w->state)
 *
 *	IDLE       not on any list; no waker will touch the waiter.
 *	QUEUED     on a list (the head's, or a wake_all batch of that head).
 *	SLEEPING   on a list, and its thread is about to FUTEX_WAIT or is in it.
 *	SLEEPING_V the same, in futex_waitv() on its word and h->walks (W1).
 *	WOKEN_ONE  taken off the list by a wake_one; not yet seen by the thread.
 *	           (WOKEN_EVENT on a completion's head: the same, but not
 *	           counted as a leaver, lib/wake.c.)
 *	WOKEN_ALL  taken off the list by a wake_all; not yet seen by the thread.
 *
 * Transitions and who makes them:
 *
 *	IDLE/WOKEN_*      -> QUEUED      prepare, head lock held (enqueue)
 *	QUEUED            -> SLEEPING*   sleep, CAS, no lock (announce)
 *	SLEEPING_V        -> SLEEPING    sleep, CAS, no lock (ENOSYS: W3)
 *	SLEEPING*         -> QUEUED      sleep, CAS, no lock (retract after a
 *	                                 timeout or a signal), or prepare,
 *	                                 lock held (keep place)
 *	QUEUED/SLEEPING*  -> WOKEN_*     waker, exchange, head lock held,
 *	                                 in the same critical section as the
 *	                                 dequeue
 *	QUEUED/SLEEPING*  -> IDLE        finish, head lock held (dequeue)
 *	WOKEN_*           -> IDLE        the waiter's own thread (consume),
 *	                                 no lock: nobody else writes it then
 *
 * INVARIANTS (a reviewer can check each against the code)
 *
 *  I1. Under the head lock, a waiter is on a list of the head iff its state
 *      is QUEUED, SLEEPING or SLEEPING_V (SLEEPING* below).  Every change of list membership and the
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
 *      tolerates, or an EINVAL when the address now holds a PI futex,
 *      which swait_futex_wake() ignores.  So a waiter that sees WOKEN_* (acquire) owns its frame.
 *  I4. A waiter that is QUEUED or SLEEPING may not leave: its memory is on a
 *      list.  swait_finish() takes it off under the lock.  Cancellation
 *      runs swait_finish() from a cleanup handler.
 *  I5. Every lock hold is O(1): one enqueue, one dequeue, one splice, or one
 *      step of a wake_all walk, plus the calls signal handlers posted to
 *      that hold (lib/headlock.c L3), one dequeue each.  FUTEX_WAKE is
 *      issued after unlock (lib/wake.c: but for the ninth flip onwards of
 *      one hold, which only a storm of posts makes).
 *  I6. A wake_one selection is never lost: a waiter that leaves in WOKEN_ONE
 *      (or WOKEN_EVENT) without a sleep having consumed it passes the wake
 *      on (finish).  A
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
 *      sees as atomic acquire/release.  On a head made by
 *      swait_head_init_asym() the pair is asymmetric: a compiler barrier
 *      in the wakes, membarrier() in the prepare (lib/asym.c, O1a-O1b).
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
 *  On weaker hardware.  x86 hides most of this (every locked instruction is
 *  a full barrier, and only store-to-load reordering exists), so the
 *  qemu-user runs of CI on an x86 host do not exercise ARM's or POWER's
 *  reorderings, and the spin model is sequentially consistent but for O1's
 *  store buffer.  What each step compiles to on ARMv8 (gcc 12, -march
 *  armv8-a; LSE atomics replace the exclusive pairs where available), and
 *  what breaks if it is made weaker, for a reviewer on ARM:
 *
 *   O1  the two __atomic_thread_fence(SEQ_CST) are DMB ISH (on x86, gcc
 *       12 emits a locked OR of the stack top, cheaper than MFENCE and
 *       as strong for ordinary memory): a full barrier
 *       that orders the earlier store (the enqueue's list stores and the
 *       unlock's STLR; the caller's store of cond) before the later load
 *       (LDR of cond; LDR of head->list.next).  ARMv8 is
 *       other-multi-copy-atomic, so the two barriers forbid the "store
 *       buffering" outcome in which each side reads the other's old value.
 *       Weaker: DMB ISHST orders stores only and allows it; dropping either
 *       fence allows it; an STLR followed by a plain LDR does not order
 *       them either (only STLR then LDAR is ordered on ARMv8, and C11 does
 *       not promise even that).  The result is a lost wakeup: the waiter
 *       reads cond false and sleeps, the waker reads an empty list and
 *       returns.  mutant no_barrier is that bug; x86 hides it at run time
 *       because the unlock's XCHG is already a full barrier.
 *   O2  the announce CAS and the waker's exchange are read-modify-writes
 *       of one word (LDAXR/STXR loops, or CASA and SWPL): same-location
 *       coherence orders them whatever the barriers, so it holds on any
 *       hardware.  The kernel's futex_wait() orders its load of the word
 *       against the waker with its own smp_mb() pairing.
 *   O3  the exchange is a release (STLXR, or SWPL) and the waiter's loads
 *       of WOKEN_* are acquires (LDAR, or the CASA): RCsc on ARMv8.  Made
 *       relaxed, the woken waiter may read cond and the data the waker
 *       wrote before the wake as they were before it.
 *   O4  the lock's acquire CAS (LDAXR or CASA) and release (STLR or the
 *       release exchange) order the critical sections; the relaxed
 *       atomic stores of ->next are plain STRs, single-copy atomic for an
 *       aligned pointer on ARMv8 and ARMv7 alike.
 *
 *  No C11 model checker that explores weak-memory executions (herd7,
 *  GenMC, CDSChecker, Nidhugg, CBMC) is packaged in Debian 12, so this
 *  argument is checked by reading, not by a tool.
 *
 * WAKE_ALL IN ONE SYSTEM CALL (futex_waitv, Linux 5.16)
 *
 *  A walk used to make one FUTEX_WAKE per sleeping waiter, because each
 *  sleeps on its own word.  Now a single waiter sleeps in futex_waitv() on
 *  two words, h->walks first and its own state second; wake_one still
 *  wakes exactly its word, and a walk wakes all its sleepers by h->walks.
 *
 *  W1. A walk's exchange that finds SLEEPING_V owes no FUTEX_WAKE of the
 *      waiter's word.  The walk ends by changing h->walks (walk_done(),
 *      under the lock, after its last flip) and, after its last unlock,
 *      makes one FUTEX_WAKE(&h->walks, INT_MAX) if it flipped any
 *      SLEEPING_V waiter (or a quiescer waits).  That wake passes an
 *      address only, as every wake (I3); it also wakes futex_waitv()
 *      sleepers that were not in the walk, whose state is still
 *      SLEEPING_V: for them it is a stale wake, and they sleep again.  A
 *      flipped waiter stays asleep until its walk ends, a walk of O(1) lock
 *      holds (I5) that makes no system call in between.
 *  W2. No sleep through the walk's wake.  The waiter's kernel call takes
 *      the words in order, each "queue on the word's hash bucket, then
 *      compare it" under the bucket's lock.  So it is queued on h->walks
 *      before it reads its own word.  If that read comes before the
 *      walk's exchange, it is queued on h->walks before the exchange,
 *      hence before the walk's FUTEX_WAKE, which finds it; if after, it
 *      sees WOKEN_* and returns EAGAIN.  The value it expects of h->walks
 *      does not matter to this argument; a stale value costs an EAGAIN
 *      and a fall back to FUTEX_WAIT (W4).  Belt and braces, for a kernel
 *      that compared the words in another order: walk_done() advances a
 *      5-bit generation in h->walks (lib/state.h), so the word does not go
 *      back to a value a sleeper read before the walk's end (unless 32
 *      walks end in the moment between that read and the kernel's
 *      compare), and the compare of h->walks fails instead.
 *  W3. Where the kernel lacks futex_waitv() (ENOSYS; EPERM from a seccomp
 *      filter that predates it), the sleeper re-announces SLEEPING with a
 *      CAS (a failed CAS is a wake that came first) and uses FUTEX_WAIT on
 *      its word; a process-wide hint makes later sleeps announce SLEEPING
 *      at once.  A walk gives SLEEPING waiters their own FUTEX_WAKE, as
 *      before.  Both kinds may be queued on one head at once.  Group nodes
 *      (lib/any.c) sleep on their group word and are woken as before.
 *  W4. futex_waitv() costs more than FUTEX_WAIT (two hash buckets, a copied
 *      vector: about 100 ns a sleep on the reference machine), which a head
 *      used only with wake_one would pay for nothing.  So a sleeper
 *      announces SLEEPING_V only on a head whose walks word has BCAST
 *      (lib/state.h), which a walk sets in the lock hold where it gives a
 *      second sleeper a FUTEX_WAKE of its own (so that the waiters it
 *      wakes after that sleep in futex_waitv next time), and nothing
 *      clears but an init.  The bit only chooses how a sleeper sleeps; W1-W3
 *      hold for any mix of SLEEPING and SLEEPING_V waiters, so its timing
 *      does not matter (the model chooses freely at each announce).  The
 *      choice, and the walks value the sleep will expect, are made by
 *      prepare under the lock and kept in the waiter (w->group, lib/state.h):
 *      the sleep never reads the head, because by then a walk may have
 *      flipped it, and the first woken thread may have destroyed and freed
 *      the head (swait_head_destroy).  The kernel reading an unmapped walks
 *      word answers EFAULT, and a sleeper that gets EFAULT, EAGAIN, a wake
 *      not for it or ENOSYS with its word still SLEEPING_V re-announces
 *      SLEEPING (a CAS; failing, it was woken) and sleeps on its own word
 *      alone: a walk then gives it a FUTEX_WAKE of its own (W3).  PI heads
 *      never set BCAST: their walks word counts the threads at the lock
 *      (lib/headlock.c L7) and moves with every hold.
 *  W5. A sleep with a deadline and SWAIT_INTERRUPTIBLE announces SLEEPING
 *      even on a broadcast head.  Such a sleep promises EINTR for any
 *      handler that interrupts it, SA_RESTART or not, which FUTEX_WAIT
 *      with a timeout gives (the kernel turns its -ERESTART_RESTARTBLOCK
 *      into EINTR when a handler runs), and futex_waitv() does not: it
 *      returns -ERESTARTSYS, which SA_RESTART restarts, silently, until
 *      the deadline.  W1-W3 hold for any mix of sleepers, so this costs
 *      only the walk's FUTEX_WAKE of its word (W3).
 *
 * COST
 *
 *  - wake on an empty head: one fence, one load.
 *  - a waiter that was woken before it announced: no system call anywhere.
 *  - a blocking handoff: the waker's one FUTEX_WAKE, the waiter's one
 *    FUTEX_WAIT or futex_waitv (plus FUTEX_WAKE/WAIT on the lock word under
 *    contention).
 *  - wake_all: one lock hold per waiter, and one FUTEX_WAKE in all for the
 *    sleepers in futex_waitv (one each on the ENOSYS path, W3, and on a
 *    head whose walks never found two sleepers, W4).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

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

#if SWAIT_TEST_HOOKS
void (*swait_hook_prepare_locked)(struct swait_head *head);
void (*swait_hook_futex_wake)(uint32_t *word);
unsigned long swait_hook_futex_waits;
#endif

/* ---------------------------------------------------------------- waiting */

/*
 * W3: the kernel lacks futex_waitv() (Linux < 5.16), or a seccomp filter
 * refuses it.  Relaxed: a hint that orders nothing; a thread that reads it
 * stale announces SLEEPING_V, makes one call that fails with ENOSYS, and
 * re-announces.
 */
static int waitv_missing;

/*
 * Lock held: how a waiter queued now will sleep (W4), as its tag: the
 * walks word it will expect in futex_waitv() on a broadcast head, or the
 * plain tag.  Decided here, under the lock, so that the sleep never reads
 * the head: by then a walk may have woken the waiter, and the head may be
 * destroyed and freed (swait_head_destroy).
 */
static uint32_t sleep_tag(struct swait_head *h)
{
	uint32_t v = load_relaxed(&h->walks);

	if (swait_likely(!(v & SWAIT_WALKS_BCAST)) || (v & SWAIT_WALKS_PI))
		return SWAIT_MAGIC;
	/* An atomic hint, not data: Helgrind and DRD must not check it. */
	swait_ann_sync_word(&waitv_missing, sizeof(waitv_missing));
	if (__atomic_load_n(&waitv_missing, __ATOMIC_RELAXED))
		return SWAIT_MAGIC;
	return v;
}

/*
 * swait_prepare(), with the enqueue in the order goes_before() gives (NULL:
 * at the tail).  Any order keeps I1-I6: they say nothing of where in the
 * list a waiter sits, and wake_one still takes the first.  Only I5's O(1)
 * hold becomes O(k), k the waiters the new one goes before, scanned from
 * the tail; 0 when keys are equal.
 */
static void prepare(struct swait_head *h, struct swait_waiter *w,
		    bool (*goes_before)(const struct swait_waiter *,
					const struct swait_waiter *))
{
	uint32_t s, tag;
	bool asym;

	swait_head_lock(h);
	s = load_relaxed(&w->state);
	swait_check(!(s & SWAIT_GROUP),
		    "swait_prepare: waiter is a node of a swait_wait_any() "
		    "group; swait_finish_any() it first [waiter, head]",
		    w, h, NULL);
	tag = sleep_tag(h);
	if (swait_state_queued(s)) {
		swait_check(w->head == h,
			    "swait_prepare: waiter is still queued on another "
			    "head [waiter, its head, this head]", w, w->head, h);
		swait_check(swait_waiter_tag_ok(w->group),
			    "swait_prepare: waiter says it is queued but its "
			    "memory was overwritten [waiter, head]", w, h, NULL);
		w->group = tag;
		/*
		 * Keep its place.  Withdraw a SLEEPING announcement left by a
		 * sleep that did not end in a wake, so that a waker does not
		 * pay a FUTEX_WAKE for a thread that is running.  The lock
		 * excludes the waker's exchange (I2).
		 */
		store_relaxed(&w->state, SWAIT_QUEUED);
	} else {
		/*
		 * IDLE, or WOKEN_*: re-queueing consumes the wake (I6); a
		 * WOKEN_ONE leaves after the unlock (lib/wake.c, LEAVERS).
		 */
		swait_ann_sync_word(&w->state, sizeof(w->state));
		if (goes_before)
			list_add_ordered(&h->list, &w->link, goes_before);
		else
			list_add_tail(&h->list, &w->link);
		w->head = h;
		w->group = tag;
		store_relaxed(&w->state, SWAIT_QUEUED);
	}
	/* S6 (lib/spin.c): whether the next sleep may spin. */
	swait_spin_note_front(list_is_first(&h->list, &w->link));
	asym = swait_walks_asym(load_relaxed(&h->walks));	/* O1b */
#if SWAIT_TEST_HOOKS
	{
		void (*hook)(struct swait_head *) = __atomic_load_n(
			&swait_hook_prepare_locked, __ATOMIC_ACQUIRE);

		if (hook)
			hook(h);	/* widens the critical section */
	}
#endif
	swait_head_unlock(h);
	if (s == SWAIT_WOKEN_ONE)
		swait_head_leave(h);	/* queued again: h cannot be gone */
	SWAIT_RACE();	/* between the enqueue and the barrier */
	/*
	 * O1: order the enqueue before the caller's read of its condition.
	 * Pairs with the fence at the start of swait_wake_one() and
	 * swait_wake_all(), or on an asymmetric head stands in for it
	 * (lib/asym.c O1a).  The unlock's release does not do it: a release
	 * orders earlier accesses before the store, not the store before
	 * later loads.
	 */
	swait_o1_waiter(asym);
}

SWAIT_EXPORT void swait_prepare(struct swait_head *h, struct swait_waiter *w)
{
	prepare(h, w, NULL);
}

void swait_prepare_ordered(struct swait_head *h, struct swait_waiter *w,
			   bool (*goes_before)(const struct swait_waiter *,
					       const struct swait_waiter *))
{
	prepare(h, w, goes_before);
}

/*
 * One sleep of an announced waiter: futex_waitv() on h->walks and its own
 * word if it announced SLEEPING_V (W2), FUTEX_WAIT on its word otherwise.
 */
static int sleep_once(struct swait_head *h, struct swait_waiter *w,
		      uint32_t sleeping, uint32_t walks, clockid_t clock,
		      const struct timespec *deadline)
{
	if (sleeping == SWAIT_SLEEPING_V)
		return swait_futex_waitv(&h->walks, walks, &w->state,
					 SWAIT_SLEEPING_V, clock, deadline);
	return swait_futex_wait(&w->state, SWAIT_SLEEPING, clock, deadline);
}

/*
 * W3, W5: re-announce a SLEEPING_V waiter as SLEEPING, to sleep on its own
 * word alone (a walk then gives it a FUTEX_WAKE of its own).  *s is the
 * state read; acquire on failure, where a WOKEN_* read publishes the
 * waker's writes (O3).  False: a wake came first, *s says which.
 */
static bool announce_plain(struct swait_waiter *w, uint32_t *s)
{
	return __atomic_compare_exchange_n(&w->state, s, SWAIT_SLEEPING, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
}

/*
 * The body of swait_sleep(), between the cancellation cleanup push and pop.
 * Returns 0 with the waiter consumed (IDLE), or ETIMEDOUT/EINTR with it
 * still QUEUED.
 */
static int sleep_announced(struct swait_head *h, struct swait_waiter *w,
			   unsigned flags, clockid_t clock,
			   const struct timespec *deadline)
{
	/*
	 * W3, W4: SLEEPING_V if prepare chose futex_waitv.  The tag is ours
	 * until a waker flips us (w->group, I3); read before the announce,
	 * which is what lets a waker in.
	 */
	uint32_t walks = w->group;
	bool waitv = swait_waiter_uses_waitv(walks) &&
		     !(deadline && (flags & SWAIT_INTERRUPTIBLE));	/* W5 */
	uint32_t sleeping = waitv ? SWAIT_SLEEPING_V : SWAIT_SLEEPING;
	uint32_t s;
	int err, oldtype;

	/*
	 * S1 (lib/spin.c): poll our word for a while first.  A wake seen
	 * here is taken as a failed announce takes it, below.  Not a look
	 * at h: once a waker has flipped us, h may be gone (S6 is decided
	 * in prepare, under the lock).
	 */
	s = swait_spin(&w->state, ~0u, SWAIT_QUEUED, flags, clock, deadline);
	/*
	 * O2: announce.  Acquire on failure: a WOKEN_* we read publishes the
	 * waker's writes (O3).
	 */
	if (s != SWAIT_QUEUED ||
	    !__atomic_compare_exchange_n(&w->state, &s, sleeping, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		swait_check(s != SWAIT_IDLE,
			    "swait_sleep: waiter was not prepared [waiter]",
			    w, NULL, NULL);
		if (!swait_state_sleeping(s)) {
			/*
			 * A wake came first (or while we spun): no system
			 * call, but still a cancellation point.  A cancel acted on here finds
			 * WOKEN_*, which the cleanup passes on (I6).
			 */
			pthread_testcancel();
			goto woken;
		}
		sleeping = s;	/* announced by an earlier sleep */
		if (sleeping == SWAIT_SLEEPING_V && !waitv) {
			if (!announce_plain(w, &s))	/* W5 */
				goto woken;
			sleeping = SWAIT_SLEEPING;
		}
	}
	for (;;) {
		/*
		 * A cancellation point, as pthread_cond_wait is: deferred
		 * cancellation is acted on only inside this window, where
		 * the state is SLEEPING(_V) or WOKEN_* and not yet consumed,
		 * so the cleanup handler (swait_finish) can dequeue the
		 * waiter or pass its wake on (I4, I6).  A cancel already
		 * pending is acted on as the window opens: switching to the
		 * asynchronous type tests for one (glibc, musl), so no
		 * pthread_testcancel() precedes it.
		 */
		SWAIT_RACE();	/* between the announce and the wait */
		swait_async_window_open(&oldtype);	/* C1 */
		err = sleep_once(h, w, sleeping, walks, clock, deadline);
		swait_async_window_close(oldtype);

		s = load_acquire(&w->state);	/* O3 */
		if (s != sleeping)
			goto woken;	/* only a waker leaves SLEEPING* (I2) */
		if (sleeping == SWAIT_SLEEPING_V && err != ETIMEDOUT &&
		    err != EINTR) {
			/*
			 * W3: no futex_waitv() here (ENOSYS), or the walks
			 * word moved since prepare (EAGAIN), or a walk's wake
			 * of it was not for us (0), or the head is gone
			 * (EFAULT: a walk woke us, its head was destroyed and
			 * unmapped, and the kernel read the walks word after
			 * that; the CAS below fails).  Re-announce as
			 * SLEEPING and sleep on our own word alone: a walk
			 * then wakes us by that word, and the head is never
			 * read again.  A failed CAS is a wake that came first.
			 */
			if (err == ENOSYS)
				__atomic_store_n(&waitv_missing, 1,
						 __ATOMIC_RELAXED);
			if (!announce_plain(w, &s))
				goto woken;
			sleeping = SWAIT_SLEEPING;
			continue;
		}
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
		 * at memory we now occupy (I3), EAGAIN a word that moved
		 * before we slept, EINTR without the flag a signal we
		 * ignore: sleep again, same absolute deadline.
		 */
	}
woken:
	swait_ann_happens_after(&w->state);	/* O3 */
	store_relaxed(&w->state, SWAIT_IDLE);	/* consumed (I2, I6) */
	swait_ann_idle_word(&w->state);
	if (s == SWAIT_WOKEN_ONE)
		swait_head_leave(h);	/* its last access (lib/wake.c) */
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

	swait_async_window_unwound();	/* C1: cancelled inside it */
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
	err = sleep_announced(ctx->head, ctx->waiter, ctx->flags, ctx->clock,
			      ctx->deadline);
	pthread_cleanup_pop(0);
	return err;
}

SWAIT_EXPORT int swait_sleep(struct swait_head *h, struct swait_waiter *w,
			     unsigned flags, clockid_t clock,
			     const struct timespec *deadline)
{
	struct sleep_ctx ctx = { h, w, deadline, clock, flags };

	if (flags & ~(SWAIT_INTERRUPTIBLE | SWAIT_NOSPIN))
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

	if (swait_state_queued(s)) {
		swait_check(w->head == h,
			    "swait_finish: waiter is queued on another head "
			    "[waiter, its head, this head]", w, w->head, h);
		swait_head_lock(h);
		s = load_relaxed(&w->state);	/* stable under the lock (I1) */
		if (swait_state_queued(s)) {
			list_del(w);
			w->group = 0;
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
	/*
	 * I6: selected by a wake_one that no sleep consumed: pass it on,
	 * then leave (lib/wake.c, LEAVERS): destroy waits for that.
	 */
	if (s == SWAIT_WOKEN_ONE || s == SWAIT_WOKEN_EVENT) {
		swait_wake_one(h);
		if (s == SWAIT_WOKEN_ONE)
			swait_head_leave(h);
	}
	SWAIT_RACE();	/* before the caller's re-check */
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

