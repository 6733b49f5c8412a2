// SPDX-License-Identifier: MIT
/*
 * headlock.c - a hold of a head's lock, and the wakes posted to it: the
 * rules that let a signal handler wake any head at any time without
 * waiting and without losing anything.  Read lib/lock.h for the words.
 *
 * WHY POSTING
 *
 * The four wakes may run in a signal handler (swait.h, Signals).  A handler
 * that interrupted its own thread inside a hold of head A and waits for A
 * waits for itself; two threads whose handlers each wait for a head the
 * other holds wait for each other.  So a wake made while its thread takes
 * or holds a lock never waits for a lock: if the head it wants is free it
 * takes it, and if it is held (by its own thread, another thread, or a
 * handler) it adds itself to the head and returns.  The holder, whoever it
 * is, cannot finish releasing while anything is posted: it performs the
 * posted calls first.  The posts live in the head, not in any thread, so
 * nothing is reserved, nothing nests wrong and nothing fills up.
 *
 * RULES (tests/model/post.pml checks them with nested handlers at every
 * step, two threads whose handlers wake each other's heads, full counts
 * on PI heads (CAP=1), and destroy;
 * its seeded bugs, tests/mutants/mutants.txt, show each check can fail)
 *
 *  L1. A thread counts the holds it is taking or in (swait_tls.depth): +1
 *      before it tries a lock, -1 after the release that ends the hold.  A
 *      handler that finds depth > 0 interrupted a hold of its own thread
 *      (the library takes one lock at a time: every critical section locks
 *      one head), and it is the only caller that can find that.
 *  L2. A wake at depth > 0 never waits (swait_head_lock_or_post()): one
 *      CAS takes the lock if it is free, or adds the call to the posted
 *      set if it is held.  Ordinary head: the posted set is in the lock
 *      word itself, so "post if held" and "take if free" are one CAS on one
 *      word and cannot both fail.  PI head: in the walks word, beside the
 *      count of threads taking, holding or leaving the lock (REFS, L7).
 *  L3. A release succeeds only with nothing posted: ordinary head, the
 *      final CAS expects the posted bits clear and clears HELD; PI head,
 *      the last of REFS to leave finds the set empty (L7).  A release that
 *      finds posts takes them (a CAS, so none is taken twice or dropped)
 *      and performs them under the lock it still holds, then tries again.
 *      So every post is performed before the hold it was posted to ends,
 *      and the final successful release is the holder's last access to the
 *      head: a post's effects are on the head before anyone can take the
 *      lock after it (destroy, a completion's done check).
 *  L4. A hold may wait for a lock (spin, park, FUTEX_LOCK_PI) only at
 *      depth 1.  A thread that waits therefore holds no lock, and no
 *      handler ever waits while its thread holds one: no cycle of waits
 *      can form, among any threads and handlers, on either kind of head.
 *  L5. A wake_all walk drops the lock between its steps (lib/swait.c I5)
 *      only at depth 1; inside a handler at depth > 1 it walks in one
 *      hold, because taking the lock again could wait (L4).  Between two
 *      steps the walk is still counted on the head (the walks count, or
 *      REFS), which licenses its next lock and makes destroy wait.
 *  L6. Counts saturate safely: more than 15 posted wake_ones (one on a PI
 *      head) become a wake_all (spurious wakeups are allowed).  Posted
 *      completes count to 2,047 per hold on a PI head, a bound a storm of
 *      handlers reaches.  A post that would overflow it never waits for
 *      the holder (who may be this thread, interrupted, or another thread
 *      in a handler waiting likewise for a head this thread holds: a
 *      deadlock, tests/protocol/sigwake.c many_held_elsewhere): it counts
 *      itself in REFS (SWAIT_FULL) and spills (lib/wake.c): the event goes
 *      into the completion's count atomically, without the lock, and only
 *      its wake is posted, which always fits.  Being counted is what
 *      licenses the access: a waiter that finds an event waits until it
 *      is the only one counted before it returns (lib/completion.c).  On
 *      an ordinary head they count to 16,777,215 per hold, and a handler
 *      that would overflow that waits for the holder to take the set,
 *      which a holder on another thread does when it next runs.  Handlers
 *      can wait for each other there only after 16,777,215 completes were
 *      posted to one hold whose thread is itself stuck in a handler:
 *      swait(7), Limits.
 *  L7. PI head.  The lock word belongs to the kernel (owner's tid), so the
 *      posted set lives in the walks word with REFS, the number of threads
 *      taking, holding or leaving the lock (or walking).  A taker adds
 *      itself to REFS before FUTEX_LOCK_PI; a leaver unlocks the PI word
 *      and then removes itself with a CAS that sees the posted set: if it
 *      is the last (REFS 1) and something was posted after its unlock, it
 *      takes the lock again (waiting at depth 1, else a trylock; a
 *      newcomer that took it first performs them) and releases it again,
 *      which performs them (L3).  The posts stay in the word meanwhile,
 *      where a completion's check sees them.  A post is made only while
 *      REFS > 0, so some counted thread's release sees it; a wake at depth
 *      > 0 that finds REFS 0 counts itself and takes the free lock, or, if
 *      a newcomer took it first, hands its call to the newcomer's REFS and
 *      leaves (or spills, L6).  REFS has 16 bits and also counts the
 *      leavers a wake_one woke (lib/wake.c) and the handlers that spill,
 *      who cannot wait: a taker that finds 32,767 others counted yields
 *      until one leaves (it holds nothing, L4), which leaves room for one
 *      such count per thread and handler nesting level.  The posted set
 *      has the rest of the word but the PI flag.
 *
 * Ordering.  A post is a release CAS and the holder takes the set with an
 * acquire CAS, so what a handler wrote before its wake (the condition) is
 * visible to the holder that performs it, and through the flip's release
 * (lib/swait.c O3) to the woken waiter.
 *
 * FORK
 *
 * The PI lock word holds the owner's thread id, cached per thread.  A fork
 * child's one thread inherits its parent's cached id.  An atfork handler
 * cannot clear it: _Fork() and clone() run none.  So the cache carries the
 * stamp of the process it was made in, and the stamp lives in a page the
 * kernel zeroes in every child (MADV_WIPEONFORK; lib/lock.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "annotate.h"
#include "check.h"
#include "internal.h"
#include "headlock.h"
#include "list.h"
#include "lock.h"
#include "race.h"
#include "state.h"
#include "trace.h"

SWAIT_TLS struct swait_tls swait_tls;
SWAIT_TLS uint64_t swait_tid_cache;

/*
 * The process stamp page (lib/internal.h): a MADV_WIPEONFORK page once the
 * constructor has run, these static words before that or where the kernel
 * lacks MADV_WIPEONFORK (Linux < 4.14; then the atfork handler zeroes
 * them, which covers fork() but not _Fork()).
 */
static uint32_t stamp_fallback[2];
uint32_t *swait_process_stamp = stamp_fallback;

#if SWAIT_TEST_HOOKS
void (*swait_hook_head_locked)(struct swait_head *head);
void (*swait_hook_before_post)(struct swait_head *head);
void (*swait_hook_leaving)(struct swait_head *head, bool last_out);
unsigned long swait_hook_deferred;

/* A test stops a PI head's leaver here (L7). */
static inline void run_leaving_hook(struct swait_head *h, bool last_out)
{
	void (*hook)(struct swait_head *, bool) = __atomic_load_n(
		&swait_hook_leaving, __ATOMIC_ACQUIRE);

	if (hook)
		hook(h, last_out);
}

/* A test raises a nested signal here: between a post's load and its CAS. */
static inline void run_post_hook(struct swait_head *h)
{
	void (*hook)(struct swait_head *) = __atomic_load_n(
		&swait_hook_before_post, __ATOMIC_ACQUIRE);

	if (hook)
		hook(h);
}
#else
static inline void run_post_hook(struct swait_head *h)
{
	(void)h;
}

static inline void run_leaving_hook(struct swait_head *h, bool last_out)
{
	(void)h;
	(void)last_out;
}
#endif

/*
 * The cache did not match: a new thread, or a new process whose stamp
 * reads 0.  The first refresh in a process stamps it with the process id,
 * which differs from the parent's (alive at the fork), so no cache copied
 * from the parent matches.  Async-signal-safe: two system calls, a CAS and
 * a one-word store.
 */
uint32_t swait_tid_refresh(void)
{
	uint32_t *word = &__atomic_load_n(&swait_process_stamp,
					  __ATOMIC_RELAXED)[SWAIT_STAMP_TID];
	uint32_t stamp = __atomic_load_n(word, __ATOMIC_RELAXED);
	uint32_t tid;

	if (stamp == 0) {
		uint32_t mine = (uint32_t)syscall(SYS_getpid);

		/* Another thread of this process may stamp it first. */
		if (__atomic_compare_exchange_n(word, &stamp, mine, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			stamp = mine;
	}
	tid = (uint32_t)syscall(SYS_gettid);
	__atomic_store_n(&swait_tid_cache, (uint64_t)stamp << 32 | tid,
			 __ATOMIC_RELAXED);
	return tid;
}

/*
 * The process's id for objects (lib/cond.c F1): the stamp page's second
 * word, a random nonzero 30-bit value drawn by the first call in each
 * process.  Not the pid: a child in a new pid namespace, or a descendant
 * that a recycled pid reaches, can have its ancestor's pid, and a copy
 * its ancestor decided would pass for its own.  Drawn with a CAS from 0
 * and returned as seen, never read again through a pointer the
 * constructor may have swapped meanwhile.  Async-signal-safe.
 */
uint32_t swait_process_id_slow(void)
{
	uint32_t *word = &__atomic_load_n(&swait_process_stamp,
					  __ATOMIC_RELAXED)[SWAIT_STAMP_ID];
	uint32_t seen = __atomic_load_n(word, __ATOMIC_RELAXED), mine = 0;
	struct timespec t;
	int saved = errno;	/* never modified (swait.h) */

	if (seen != 0)
		return seen;
	if (syscall(SYS_getrandom, &mine, sizeof(mine), 1 /* NONBLOCK */) !=
	    (long)sizeof(mine)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		mine = (uint32_t)syscall(SYS_getpid) * 2654435761u ^
		       (uint32_t)t.tv_nsec ^ (uint32_t)t.tv_sec << 7;
	}
	errno = saved;
	mine &= SWAIT_PROCESS_ID_MASK;
	if (mine == 0)
		mine = 1;
	if (__atomic_compare_exchange_n(word, &seen, mine, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return mine;
	return seen;	/* another thread of this process drew first */
}

/*
 * fork() clears the stamp wherever it lives: without MADV_WIPEONFORK, and
 * where the advice is accepted but not carried out (qemu-user answers 0
 * and ignores it), this is what keeps a fork() child's cache from matching.
 */
static void swait_atfork_child(void)
{
	uint32_t *word = __atomic_load_n(&swait_process_stamp,
					 __ATOMIC_RELAXED);

	__atomic_store_n(&word[SWAIT_STAMP_TID], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&word[SWAIT_STAMP_ID], 0, __ATOMIC_RELAXED);
}

__attribute__((constructor))
static void swait_init_library(void)
{
	long size = sysconf(_SC_PAGESIZE);
	void *page = mmap(NULL, (size_t)(size > 0 ? size : 4096),
			  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);

	pthread_atfork(NULL, NULL, swait_atfork_child);
	if (page == MAP_FAILED)
		return;
	if (madvise(page, (size_t)(size > 0 ? size : 4096),
		    MADV_WIPEONFORK) != 0) {
		munmap(page, (size_t)(size > 0 ? size : 4096));
		return;
	}
	/* An id drawn before now (a constructor's call) stays this one's. */
	((uint32_t *)page)[SWAIT_STAMP_ID] = __atomic_load_n(
		&stamp_fallback[SWAIT_STAMP_ID], __ATOMIC_RELAXED);
	__atomic_store_n(&swait_process_stamp, (uint32_t *)page,
			 __ATOMIC_RELAXED);
}

/* --------------------------------------------------------- posted sets */

/* The ordinary word's posted bits, decoded (L3). */
static void decode_word(uint32_t v, struct swait_posted *p)
{
	p->ones = (v & SWAIT_LOCK_ONE_MASK) / SWAIT_LOCK_ONE;
	p->completes = (v & SWAIT_LOCK_COMPLETE_MASK) / SWAIT_LOCK_COMPLETE;
	p->wake_all = (v & SWAIT_LOCK_WAKE_ALL) != 0;
	p->complete_all = (v & SWAIT_LOCK_COMPLETE_ALL) != 0;
}

/*
 * The ordinary word v with n calls of kind what added (L6).  Returns false
 * only when n completes would overflow their count.
 */
static bool add_word(uint32_t v, enum swait_post what, uint32_t n,
		     uint32_t *out)
{
	uint32_t c;

	switch (what) {
	case SWAIT_POST_WAKE_ONE:
		c = (v & SWAIT_LOCK_ONE_MASK) / SWAIT_LOCK_ONE + n;
		if (c > SWAIT_LOCK_ONE_MASK / SWAIT_LOCK_ONE || (v & SWAIT_LOCK_WAKE_ALL))
			v = (v & ~SWAIT_LOCK_ONE_MASK) | SWAIT_LOCK_WAKE_ALL;
		else
			v = (v & ~SWAIT_LOCK_ONE_MASK) | c * SWAIT_LOCK_ONE;
		break;
	case SWAIT_POST_WAKE_ALL:
		v = (v & ~SWAIT_LOCK_ONE_MASK) | SWAIT_LOCK_WAKE_ALL;
		break;
	case SWAIT_POST_COMPLETE:
		c = (v & SWAIT_LOCK_COMPLETE_MASK) / SWAIT_LOCK_COMPLETE;
		if (n > SWAIT_LOCK_COMPLETE_MASK / SWAIT_LOCK_COMPLETE - c)
			return false;
		v += n * SWAIT_LOCK_COMPLETE;
		break;
	case SWAIT_POST_COMPLETE_ALL:
		v |= SWAIT_LOCK_COMPLETE_ALL;
		break;
	}
	*out = v;
	return true;
}

/*
 * A PI head's walks word: REFS and the posted set (L7).  REFS has 16 bits:
 * a thread that would take the lock while 32,767 others are counted waits
 * first (take_ref()), which leaves room for the waiters a wake_one counts
 * (lib/wake.c: they cannot wait); posted completes have 11 bits, and
 * wake_ones one (a second makes a wake_all).  Bit 27 marks a completion's
 * head (lib/state.h).
 */
#define PI_ONE		0x80000000u
#define PI_COMPLETE	0x00010000u
#define PI_COMPLETE_MASK 0x07ff0000u
#define PI_WAKE_ALL	0x10000000u
#define PI_COMPLETE_ALL	0x20000000u
#define PI_POSTED	(PI_ONE | PI_COMPLETE_MASK | PI_WAKE_ALL | \
			 PI_COMPLETE_ALL)

_Static_assert((PI_POSTED & (SWAIT_PI_REFS_MASK | SWAIT_WALKS_PI |
			    SWAIT_PI_EVENTS)) == 0 &&
	       (SWAIT_PI_REFS_MASK & SWAIT_WALKS_PI) == 0,
	       "a PI head's posted bits overlap REFS or the PI flag");

static void decode_pi(uint32_t v, struct swait_posted *p)
{
	p->ones = (v & PI_ONE) != 0;
	p->completes = (v & PI_COMPLETE_MASK) / PI_COMPLETE;
	p->wake_all = (v & PI_WAKE_ALL) != 0;
	p->complete_all = (v & PI_COMPLETE_ALL) != 0;
}

/*
 * The PI walks word v with the set p added (L6).  Returns false only when
 * the completes would overflow their count.
 */
static bool add_pi(uint32_t v, const struct swait_posted *p, uint32_t *out)
{
	uint32_t c = (v & PI_COMPLETE_MASK) / PI_COMPLETE;
	uint32_t ones = p->ones + ((v & PI_ONE) != 0);

	if (p->completes > PI_COMPLETE_MASK / PI_COMPLETE - c)
		return false;
	v += p->completes * PI_COMPLETE;
	if (p->complete_all)
		v |= PI_COMPLETE_ALL;
	if (p->wake_all || ones > 1 || (v & PI_WAKE_ALL))
		v = (v & ~PI_ONE) | PI_WAKE_ALL;
	else if (ones == 1)
		v |= PI_ONE;
	*out = v;
	return true;
}

/*
 * A full count empties when one of those it waits for takes a step: a
 * counted thread leaves REFS (L7, a taker at depth 1, holding nothing), an
 * ordinary head's holder takes its posted set (L6).
 */
static void wait_for_room(void)
{
	swait_cpu_relax();
	sched_yield();
}

/* L7: count this thread in REFS, waiting while 32,767 others are. */
static void take_ref(struct swait_head *h)
{
	uint32_t v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);

	for (;;) {
		if ((v & SWAIT_PI_REFS_MASK) >= SWAIT_PI_REFS_TAKERS) {
			wait_for_room();
			v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(&h->walks, &v, v + 1, false,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
	}
}

/* ------------------------------------------------------------- taking */

static inline void run_locked_hook(struct swait_head *h)
{
	swait_ann_lock_acquired(h);
	SWAIT_RACE();	/* a holder preempted inside its critical section */
#if SWAIT_TEST_HOOKS
	{
		void (*hook)(struct swait_head *) = __atomic_load_n(
			&swait_hook_head_locked, __ATOMIC_ACQUIRE);

		if (hook)
			hook(h);
	}
#endif
}

/*
 * The rare ways to take the lock: a PI head's, or a contended one.  Out of
 * line, so that the fast path of swait_head_lock() needs no saved
 * registers of its own (its prologue was a quarter of a handoff's lock
 * cost: bench/README.md).
 */
__attribute__((noinline, cold))
static void head_lock_slow(struct swait_head *h)
{
	if (swait_head_is_pi(h)) {
		/* L7: counted before the wait, so posts go to us or later. */
		take_ref(h);
		swait_pi_lock(&h->lock);
	} else {
		swait_trace1(lock_contended, h);
		swait_lock_slow(&h->lock);
	}
}

__attribute__((noinline, cold))
static void nested_lock(struct swait_head *h)
{
	swait_fatal("a call that is not async-signal-safe was made from a "
		    "signal handler that interrupted a libswait call of the "
		    "same thread (only the four wakes may be called there) "
		    "[head]", h, NULL, NULL);
}

void swait_head_lock(struct swait_head *h)
{
	unsigned d = __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED);

	/*
	 * The lock word, walks and list.next (the first 16 bytes) are
	 * synchronisation words, accessed outside the lock by design.
	 */
	swait_ann_sync_word(h, offsetof(struct swait_head, list.prev));
	/* L1: only a handler can lock at depth > 0, and only to wake. */
	if (SWAIT_DEBUG_CHECKS && swait_unlikely(d != 0))
		nested_lock(h);
	__atomic_store_n(&swait_tls.depth, d + 1, __ATOMIC_RELAXED);
	swait_signal_fence();
	if (swait_unlikely(swait_head_is_pi(h) || !swait_trylock(&h->lock)))
		head_lock_slow(h);
	run_locked_hook(h);
}

/* What pi_take_or_hand_over() did. */
enum hand {
	HAND_TAKEN,	/* the lock is ours */
	HAND_OVER,	/* the set is the newcomer's; we left REFS */
	HAND_FULL,	/* it did not fit: still counted, not holding (L6) */
};

/* L2 on a PI head, past REFS 0: counted, take the lock or hand over. */
static enum hand pi_take_or_hand_over(struct swait_head *h,
				      const struct swait_posted *p)
{
	for (;;) {
		uint32_t v, nv;

		if (swait_pi_trylock(&h->lock))
			return HAND_TAKEN;
		/* A newcomer, counted after us, holds it. */
		v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);
		if ((v & SWAIT_PI_REFS_MASK) < 2) {
			swait_cpu_relax();	/* it left meanwhile: retry */
			continue;
		}
		if (!add_pi(v, p, &nv))
			return HAND_FULL;	/* never wait for it (L6) */
		if (__atomic_compare_exchange_n(&h->walks, &v, nv - 1, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return HAND_OVER;	/* its REFS performs our calls */
	}
}

enum swait_took swait_head_lock_or_post(struct swait_head *h,
					enum swait_post what)
{
	unsigned d = __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED);
	uint32_t v, nv;

	swait_ann_sync_word(h, offsetof(struct swait_head, list.prev));
	if (swait_head_is_pi(h)) {
		struct swait_posted p = swait_posted_of(what);

		v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);
		for (;;) {
			run_post_hook(h);
			if ((v & SWAIT_PI_REFS_MASK) != 0) {
				if (add_pi(v, &p, &nv)) {
					/* Release: our writes, to the holder. */
					if (__atomic_compare_exchange_n(
							&h->walks, &v, nv,
							false, __ATOMIC_RELEASE,
							__ATOMIC_RELAXED))
						goto posted;
					continue;
				}
				/*
				 * L6: full.  Whoever must empty the count may
				 * be interrupted by a handler waiting for us:
				 * count ourselves and spill instead.  Relaxed:
				 * spill()'s release fence orders this count
				 * before the event it adds to done, for the
				 * waiter's acquire load (lib/completion.c).
				 */
				if (__atomic_compare_exchange_n(&h->walks, &v,
						v + 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
					__atomic_store_n(&swait_tls.depth,
						d + 1, __ATOMIC_RELAXED);
					swait_signal_fence();
					return SWAIT_FULL;
				}
				continue;
			}
			if (__atomic_compare_exchange_n(&h->walks, &v, v + 1,
					false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
				break;
		}
		__atomic_store_n(&swait_tls.depth, d + 1, __ATOMIC_RELAXED);
		swait_signal_fence();
		switch (pi_take_or_hand_over(h, &p)) {
		case HAND_TAKEN:
			break;
		case HAND_OVER:
			swait_signal_fence();
			__atomic_store_n(&swait_tls.depth, d, __ATOMIC_RELAXED);
			goto posted;
		case HAND_FULL:
			return SWAIT_FULL;	/* counted, depth + 1 */
		}
		run_locked_hook(h);
		return SWAIT_TAKEN;
	}
	v = __atomic_load_n(&h->lock, __ATOMIC_RELAXED);
	for (;;) {
		run_post_hook(h);
		if (v == 0) {
			/* Free: take it (acquire), as swait_trylock(). */
			if (__atomic_compare_exchange_n(&h->lock, &v,
					SWAIT_LOCK_HELD, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				break;
			continue;
		}
		if (!add_word(v, what, 1, &nv)) {
			wait_for_room();	/* L6 */
			v = __atomic_load_n(&h->lock, __ATOMIC_RELAXED);
			continue;
		}
		/* Release: the caller's writes, to the holder (L2). */
		if (__atomic_compare_exchange_n(&h->lock, &v, nv, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			goto posted;
	}
	__atomic_store_n(&swait_tls.depth, d + 1, __ATOMIC_RELAXED);
	swait_signal_fence();
	run_locked_hook(h);
	return SWAIT_TAKEN;
posted:
#if SWAIT_TEST_HOOKS
	__atomic_add_fetch(&swait_hook_deferred, 1, __ATOMIC_RELAXED);
#endif
	return SWAIT_POSTED;
}

/* ------------------------------------------------------------ releasing */

/* A locker parks on the word: wake one (address only, lib/lock.h). */
__attribute__((noinline, cold))
static void head_unlock_wake(struct swait_head *h)
{
	swait_futex_wake(&h->lock, 1);
}

static inline void hold_ends(void)
{
	swait_signal_fence();
	__atomic_store_n(&swait_tls.depth,
			 __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) - 1,
			 __ATOMIC_RELAXED);
}

/*
 * L7: leave REFS, ending a hold (depth - 1); the last one out performs what
 * was posted after the holder's release.  SWAIT_RELEASED when left;
 * SWAIT_PERFORM with the lock taken again, for the caller's next release
 * to take and perform what is posted (*p empty).
 *
 * The posts stay on the word until a holder takes them: a completion's
 * check that takes the free lock meanwhile sees them there and performs
 * them itself (lib/completion.c).  Taking them off first, to perform once
 * the lock was ours, hid them in this thread's hands in between: a
 * swait_completion_done() then said false after swait_complete() had
 * returned.
 */
static enum swait_released drop_ref(struct swait_head *h,
				    struct swait_posted *p)
{
	uint32_t v;

	run_leaving_hook(h, false);
	v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);
	for (;;) {
		if ((v & PI_POSTED) && (v & SWAIT_PI_REFS_MASK) == 1) {
			run_leaving_hook(h, true);
			if (swait_head_may_wait()) {
				swait_pi_lock(&h->lock);
			} else if (!swait_pi_trylock(&h->lock)) {
				/*
				 * A newcomer, counted after our look, took
				 * it: its release performs them.  Look again
				 * (it may have left meanwhile).
				 */
				swait_cpu_relax();
				v = __atomic_load_n(&h->walks,
						    __ATOMIC_RELAXED);
				continue;
			}
			run_locked_hook(h);
			*p = (struct swait_posted){ 0, 0, false, false };
			return SWAIT_PERFORM;
		}
		/* Release: the hold, to whoever counts next. */
		if (__atomic_compare_exchange_n(&h->walks, &v, v - 1, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			hold_ends();
			return SWAIT_RELEASED;
		}
	}
}

__attribute__((noinline))
static enum swait_released release_pi(struct swait_head *h, bool keep_ref,
				      struct swait_posted *p)
{
	uint32_t v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED);

	/* Posted while we hold it: take them, still holding (L3). */
	while (v & PI_POSTED) {
		if (__atomic_compare_exchange_n(&h->walks, &v, v & ~PI_POSTED,
				false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			decode_pi(v, p);
			return SWAIT_PERFORM;
		}
	}
	swait_ann_lock_released(h);
	swait_pi_unlock(&h->lock);
	if (keep_ref)
		return SWAIT_RELEASED;	/* L5: still counted, relocks later */
	return drop_ref(h, p);
}

enum swait_released swait_head_spilled(struct swait_head *h,
				       struct swait_posted *p)
{
	struct swait_posted w = *p;
	uint32_t v = __atomic_load_n(&h->walks, __ATOMIC_RELAXED), nv;

	/* The wakes that go with the events now in done (L6). */
	w.ones += w.completes;
	w.completes = 0;
	w.wake_all |= w.complete_all;
	w.complete_all = false;
	/*
	 * Release: the events added to done, to the holder that performs the
	 * wakes.  We are counted, so REFS > 0 and a counted release sees it.
	 */
	do
		(void)add_pi(v, &w, &nv);	/* no completes: always fits */
	while (!__atomic_compare_exchange_n(&h->walks, &v, nv, false,
					    __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
	return drop_ref(h, p);
}

enum swait_released swait_head_try_release(struct swait_head *h,
					   bool keep_ref,
					   struct swait_posted *p)
{
	uint32_t v;

	if (swait_unlikely(swait_head_is_pi(h)))
		return release_pi(h, keep_ref, p);
	v = SWAIT_LOCK_HELD;
	swait_ann_lock_released(h);
	/* The common case: held, nobody parked, nothing posted. */
	if (swait_likely(__atomic_compare_exchange_n(&h->lock, &v, 0, false,
			__ATOMIC_RELEASE, __ATOMIC_RELAXED)))
		goto released;
	for (;;) {
		if (v & SWAIT_LOCK_POSTED) {
			/* L3: take the set, still holding. */
			if (__atomic_compare_exchange_n(&h->lock, &v,
					v & (SWAIT_LOCK_HELD |
					     SWAIT_LOCK_PARKED), false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				swait_ann_lock_acquired(h);
				decode_word(v, p);
				return SWAIT_PERFORM;
			}
			continue;
		}
		if (__atomic_compare_exchange_n(&h->lock, &v, 0, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			break;
	}
	if (v & SWAIT_LOCK_PARKED)
		head_unlock_wake(h);	/* an address: harmless if freed */
released:
	if (!keep_ref)
		hold_ends();
	return SWAIT_RELEASED;
}

void swait_head_relock(struct swait_head *h)
{
	if (swait_head_is_pi(h))
		swait_pi_lock(&h->lock);	/* REFS kept (L5) */
	else
		swait_lock(&h->lock);
	run_locked_hook(h);
}

bool swait_head_busy(const struct swait_head *h)
{
	/*
	 * Acquire: a holder that performed a posted set did so before its
	 * release, which this load then publishes; likewise the last thread
	 * out of a PI head's REFS (L7).
	 */
	if (swait_head_is_pi(h))
		return (__atomic_load_n(&h->walks, __ATOMIC_ACQUIRE) &
			(PI_POSTED | SWAIT_PI_REFS_MASK)) != 0 ||
		       __atomic_load_n(&h->lock, __ATOMIC_RELAXED) != 0;
	return __atomic_load_n(&h->lock, __ATOMIC_ACQUIRE) != 0;
}

bool swait_head_posted(const struct swait_head *h)
{
	/* Acquire: what the poster wrote before its post (L2's release). */
	if (swait_head_is_pi(h))
		return (__atomic_load_n(&h->walks, __ATOMIC_ACQUIRE) &
			PI_POSTED) != 0;
	return (__atomic_load_n(&h->lock, __ATOMIC_ACQUIRE) &
		SWAIT_LOCK_POSTED) != 0;
}

enum swait_released swait_head_leave_pi(struct swait_head *h,
					struct swait_posted *p)
{
	/* A leaver's REF stands for a hold while it leaves (L1: 0 -> 1). */
	__atomic_store_n(&swait_tls.depth,
			 __atomic_load_n(&swait_tls.depth, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
	swait_signal_fence();
	return drop_ref(h, p);
}
