// SPDX-License-Identifier: MIT
/*
 * headlock.c - a head's lock as the protocol takes it: the lock word
 * (lib/lock.h: spin-then-park, or a PI futex on a PI head), wrapped in the
 * held-heads stack that signal handlers read (lib/defer.c, S1-S5), and the
 * cached thread id the PI lock needs.
 *
 * THE HELD-HEADS STACK
 *
 * Every thread keeps a small stack of the heads it is locking (swait_tls,
 * thread-local): an entry is pushed before the lock is attempted and popped
 * after it is released; a stack because a handler may lock another head
 * and be interrupted in turn.  The rules it keeps, checked with the rest of
 * S1-S5 by tests/model/sig.pml:
 *
 *  H1. An entry is reserved (the depth) before it is filled, so a handler
 *      that runs in between pushes above it instead of overwriting it (the
 *      model's mutant sig_fill_first is the bug this prevents).
 *  H2. The release is: unlock the word, close the entry (head = NULL), read
 *      its pending set, pop (S2).  A handler runs atomically with respect
 *      to the thread it interrupts, so its post lands before the close (and
 *      the read sees it) or after (and it finds no open entry and wakes by
 *      itself).  Popping before the read would lose a post between the two
 *      (mutant sig_pop_first).
 *  H3. The holder's side needs no read-modify-write: every access to the
 *      stack is by this thread or a handler on it, so compiler-only signal
 *      fences order them; posts from nested handlers race with each other
 *      and use a CAS (lib/defer.c, S3).
 *
 * FORK
 *
 * The PI lock word holds the owner's thread id, cached per thread.  A fork
 * child's one thread inherits its parent's cached id.  An atfork handler
 * cannot clear it: _Fork() and clone() run none.  So the cache carries the
 * stamp of the process it was made in, and the stamp lives in a page the
 * kernel zeroes in every child (MADV_WIPEONFORK; lib/lock.h).
 */
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "annotate.h"
#include "check.h"
#include "internal.h"
#include "defer.h"
#include "headlock.h"
#include "list.h"
#include "lock.h"
#include "race.h"
#include "state.h"
#include "trace.h"

SWAIT_TLS struct swait_tls swait_tls;
SWAIT_TLS uint64_t swait_tid_cache;

/*
 * The process stamp (lib/lock.h): a word in a MADV_WIPEONFORK page once
 * the constructor has run, the static word before that or where the kernel
 * lacks MADV_WIPEONFORK (Linux < 4.14; then the atfork handler zeroes it,
 * which covers fork() but not _Fork()).
 */
static uint32_t stamp_fallback;
uint32_t *swait_process_stamp = &stamp_fallback;

#if SWAIT_TEST_HOOKS
void (*swait_hook_head_locked)(struct swait_head *head);
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
	uint32_t *word = __atomic_load_n(&swait_process_stamp,
					 __ATOMIC_RELAXED);
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
 * fork() clears the stamp wherever it lives: without MADV_WIPEONFORK, and
 * where the advice is accepted but not carried out (qemu-user answers 0
 * and ignores it), this is what keeps a fork() child's cache from matching.
 */
static void swait_atfork_child(void)
{
	__atomic_store_n(__atomic_load_n(&swait_process_stamp,
					 __ATOMIC_RELAXED), 0,
			 __ATOMIC_RELAXED);
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
	__atomic_store_n(&swait_process_stamp, (uint32_t *)page,
			 __ATOMIC_RELAXED);
}

/*
 * Debug builds: this thread already takes or holds h's lock, so the caller
 * is a signal handler that interrupted that hold and made a call that is
 * not async-signal-safe.  It would wait for its own thread forever (or, on
 * a PI head, get EDEADLK); say so instead.
 */
static void check_not_held(struct swait_head *h, unsigned d)
{
	for (unsigned i = 0; i < d; i++)
		swait_check(__atomic_load_n(&swait_tls.held[i].head,
					    __ATOMIC_RELAXED) != h,
			    "a call that is not async-signal-safe was made "
			    "from a signal handler that interrupted this "
			    "thread's hold of the same head's lock (only the "
			    "four wakes may be called there) [head]",
			    h, NULL, NULL);
}

static inline void held_push(struct swait_head *h)
{
	unsigned d = swait_tls.depth;

	/*
	 * In every build, not only with the debug checks: past the bound the
	 * push would write out of bounds.  Reached only by signal handlers
	 * that lock heads nested SWAIT_HELD_MAX deep (swait(7), Limits).
	 */
	if (swait_unlikely(d >= SWAIT_HELD_MAX))
		swait_fatal("head locks nested too deep: signal handlers that "
			    "wake are nested more than 8 deep (SWAIT_HELD_MAX) "
			    "[head, depth]", h, (void *)(uintptr_t)d, NULL);
	/*
	 * H1: reserve, then fill.  A handler in between sees a NULL head
	 * (left by the last pop), so it wakes by itself, which is safe
	 * because this thread does not hold h's lock yet.
	 */
	if (SWAIT_DEBUG_CHECKS)
		check_not_held(h, d);
	__atomic_store_n(&swait_tls.depth, d + 1, __ATOMIC_RELAXED);
	swait_signal_fence();
	__atomic_store_n(&swait_tls.held[d].pending, 0, __ATOMIC_RELAXED);
	swait_signal_fence();
	__atomic_store_n(&swait_tls.held[d].head, h, __ATOMIC_RELAXED);
	swait_signal_fence();
}

/* H2, after the unlock: close, read, pop.  Returns the pending set. */
static inline swait_posted_t held_pop(struct swait_head *h)
{
	unsigned d = swait_tls.depth - 1;
	swait_posted_t pending;

	swait_check(swait_tls.held[d].head == h,
		    "head lock released out of order [head, innermost held]",
		    h, swait_tls.held[d].head, NULL);
	swait_signal_fence();
	__atomic_store_n(&swait_tls.held[d].head, NULL, __ATOMIC_RELAXED);
	swait_signal_fence();
	pending = __atomic_load_n(&swait_tls.held[d].pending, __ATOMIC_RELAXED);
	swait_signal_fence();
	__atomic_store_n(&swait_tls.depth, d, __ATOMIC_RELAXED);
	swait_signal_fence();
	return pending;
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
	if (load_relaxed(&h->walks) & SWAIT_WALKS_PI) {
		swait_pi_lock(&h->lock);
	} else {
		swait_trace1(lock_contended, h);
		swait_lock_slow(&h->lock);
	}
}

void swait_head_lock(struct swait_head *h)
{
	/*
	 * The lock word, walks and list.next (the first 16 bytes) are
	 * synchronisation words, accessed outside the lock by design.
	 */
	swait_ann_sync_word(h, offsetof(struct swait_head, list.prev));
	held_push(h);
	/*
	 * The PI bit never changes after init; the count bits may.  A PI
	 * head's word is a PI futex, never CASed here: the test comes first.
	 */
	if (swait_unlikely((load_relaxed(&h->walks) & SWAIT_WALKS_PI) ||
			   !swait_trylock(&h->lock)))
		head_lock_slow(h);
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

__attribute__((noinline, cold))
static void head_unlock_pi(struct swait_head *h)
{
	swait_pi_unlock(&h->lock);
}

/* A locker parks on the word: wake one (lib/lock.h, swait_unlock). */
__attribute__((noinline, cold))
static void head_unlock_wake(struct swait_head *h)
{
	swait_futex_wake(&h->lock, 1);
}

void swait_head_unlock(struct swait_head *h)
{
	swait_posted_t pending;

	swait_ann_lock_released(h);
	if (swait_unlikely(load_relaxed(&h->walks) & SWAIT_WALKS_PI))
		head_unlock_pi(h);
	else if (swait_unlikely(swait_unlock_release(&h->lock)))
		head_unlock_wake(h);	/* swait_unlock(), its rare half apart */
	pending = held_pop(h);
	if (swait_likely((pending | __atomic_load_n(&swait_tls.nforeign,
						    __ATOMIC_RELAXED)) == 0))
		return;
	/* The up-call: handlers posted wakes to this hold (S2) or to other
	 * heads while this thread held a lock (S6). */
	swait_run_posted(h, pending);
}
