/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the head lock: spin a bounded number of times, then park; or,
 * on a priority-inheritance head, a PI futex.
 *
 * The lock word takes three values (the "mutex, take 2" of Drepper's
 * "Futexes Are Tricky"):
 *
 *	UNLOCKED	free
 *	LOCKED		held, nobody parked
 *	CONTENDED	held, and a thread may be parked in FUTEX_WAIT on it
 *
 * Why it never spins without bound: a SCHED_FIFO thread spinning on a holder
 * it preempted on the same CPU would spin forever.  After SWAIT_LOCK_SPINS
 * relaxed polls the locker stores CONTENDED and sleeps in the kernel, which
 * lets the holder run.  Unlock wakes one parked thread only when the word
 * was CONTENDED, so an uncontended lock/unlock is two atomic instructions and
 * no system call.
 *
 * Critical sections under this lock are O(1) list operations (lib/swait.c I5),
 * so the spin almost always succeeds; it is bounded so that it costs at most
 * a few microseconds when it does not.
 */
#ifndef SWAIT_LOCK_H
#define SWAIT_LOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "futex.h"
#include "internal.h"

enum {
	SWAIT_UNLOCKED = 0,
	SWAIT_LOCKED = 1,
	SWAIT_CONTENDED = 2,
};

#ifndef SWAIT_LOCK_SPINS
#define SWAIT_LOCK_SPINS 64
#endif

static inline void swait_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && __ARM_ARCH >= 7)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static void swait_lock_slow(uint32_t *word);

/*
 * The uncontended acquire.  The successful CAS is an acquire: everything the
 * previous holder wrote before its release in swait_unlock() is visible from
 * here on.
 */
static inline bool swait_trylock(uint32_t *word)
{
	uint32_t expected = SWAIT_UNLOCKED;

	return __atomic_compare_exchange_n(word, &expected, SWAIT_LOCKED,
			false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void swait_lock(uint32_t *word)
{
	if (swait_likely(swait_trylock(word)))
		return;
	swait_lock_slow(word);
}

__attribute__((noinline))
static void swait_lock_slow(uint32_t *word)
{
	uint32_t seen;

	for (int i = 0; i < SWAIT_LOCK_SPINS; i++) {
		swait_cpu_relax();
		seen = __atomic_load_n(word, __ATOMIC_RELAXED);
		if (seen == SWAIT_CONTENDED)
			break;	/* someone already parks: join them */
		if (seen == SWAIT_UNLOCKED &&
		    __atomic_compare_exchange_n(word, &seen, SWAIT_LOCKED,
				false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
	/*
	 * Park.  Taking the lock from here on stores CONTENDED, never LOCKED:
	 * we cannot know whether other threads are still parked, so the
	 * unlocker must assume they are.  The exchange is an acquire when it
	 * returns UNLOCKED, which is when we own the lock.
	 */
	while (__atomic_exchange_n(word, SWAIT_CONTENDED, __ATOMIC_ACQUIRE) !=
	       SWAIT_UNLOCKED)
		(void)swait_futex_wait(word, SWAIT_CONTENDED, CLOCK_MONOTONIC,
				       NULL);
}

/*
 * Release: the exchange publishes the critical section (pairs with the
 * acquire in swait_lock()/swait_lock_slow()).  The word is not touched after
 * it; the FUTEX_WAKE that may follow is a system call on the address, which
 * is harmless even if the head has been freed meanwhile (see futex.h).
 * swait_unlock_release() is the exchange alone, for a caller that keeps
 * the rare FUTEX_WAKE out of line: it returns whether a locker parks and
 * must be woken.
 */
static inline bool swait_unlock_release(uint32_t *word)
{
	return __atomic_exchange_n(word, SWAIT_UNLOCKED, __ATOMIC_RELEASE) ==
	       SWAIT_CONTENDED;
}

static inline void swait_unlock(uint32_t *word)
{
	if (swait_unlikely(swait_unlock_release(word)))
		swait_futex_wake(word, 1);
}

/*
 * The priority-inheritance lock (swait_head_init_pi).  The word holds the
 * owner's thread id, plus FUTEX_WAITERS while threads sleep in the kernel,
 * as the kernel's PI futex protocol defines.  A contended locker does not
 * spin: FUTEX_LOCK_PI queues it by priority and boosts the owner to it,
 * which is the point (a spinning SCHED_FIFO locker would be the priority
 * inversion).
 */

/*
 * This thread's id, cached, as stamp << 32 | tid, where stamp is the value
 * of *swait_process_stamp when it was cached.  That word is nonzero once
 * set and reads 0 in a new process: it lives in a MADV_WIPEONFORK page
 * (lib/headlock.c), which every fork, _Fork() and clone() without
 * CLONE_VM zeroes in the child, atfork handlers or not.  So the forking
 * thread's cache, which holds its parent's id, stops matching in the child.
 * One word, so that a signal handler refreshing it in between cannot leave
 * a stamp and a tid from two different refreshes.
 */
extern SWAIT_TLS uint64_t swait_tid_cache;
extern uint32_t *swait_process_stamp;

uint32_t swait_tid_refresh(void);

static inline uint32_t swait_tid(void)
{
	uint64_t c = __atomic_load_n(&swait_tid_cache, __ATOMIC_RELAXED);
	uint32_t stamp = __atomic_load_n(
		__atomic_load_n(&swait_process_stamp, __ATOMIC_RELAXED),
		__ATOMIC_RELAXED);

	if (swait_likely((uint32_t)(c >> 32) == stamp && (uint32_t)c != 0))
		return (uint32_t)c;
	return swait_tid_refresh();
}

static void swait_pi_lock_slow(uint32_t *word);

static inline void swait_pi_lock(uint32_t *word)
{
	uint32_t expected = 0;

	/* Acquire on success, pairs with the release in swait_pi_unlock(). */
	if (swait_likely(__atomic_compare_exchange_n(word, &expected,
			swait_tid(), false, __ATOMIC_ACQUIRE,
			__ATOMIC_RELAXED)))
		return;
	swait_pi_lock_slow(word);
}

__attribute__((noinline))
static void swait_pi_lock_slow(uint32_t *word)
{
	for (;;) {
		int saved = errno, err = 0;

		/* The kernel's lock is a full barrier: acquire included. */
		if (syscall(SWAIT_SYS_FUTEX, word,
			    FUTEX_LOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL,
			    0) != 0)
			err = errno;
		errno = saved;
		if (err == 0) {
			/*
			 * No-op for the CPU (the kernel's lock is a full
			 * barrier), but ThreadSanitizer does not see the
			 * kernel hand the lock over: this acquire pairs with
			 * the release before FUTEX_UNLOCK_PI, which it sees.
			 */
			(void)__atomic_load_n(word, __ATOMIC_ACQUIRE);
			return;
		}
		if (err == EINTR || err == EAGAIN)
			continue;	/* owner exiting, or a signal: retry */
		if (err == ENOMEM) {	/* no memory for the kernel's PI state */
			sched_yield();	/* a lock cannot fail: retry */
			continue;
		}
		/*
		 * EDEADLK: this thread already holds the lock: a call that is
		 * not async-signal-safe, made from a signal handler that
		 * interrupted the holder (debug builds say so earlier), or a
		 * cached thread id that is not this thread's.
		 */
		if (err == EDEADLK)
			swait_fatal("PI head lock: FUTEX_LOCK_PI says this thread "
				    "already holds it (a call that is not "
				    "async-signal-safe made from a signal "
				    "handler?) [lock word]", word, NULL, NULL);
		/*
		 * ESRCH/EOWNERDEAD: the thread id in the word is not a live
		 * thread.  The library never leaves a critical section
		 * except by its unlock (C1 keeps cancellation out of it), so
		 * a thread was ended inside one from outside: longjmp or
		 * pthread_exit out of a handler, or the user's asynchronous
		 * cancellation; or the word was copied into a fork child
		 * while a thread of the parent held it (the fork rule).
		 */
		if (err == ESRCH || err == EOWNERDEAD)
			swait_fatal("PI head lock: the thread that holds it is "
				    "gone (ended inside a swait call by longjmp, "
				    "pthread_exit or asynchronous cancellation, "
				    "or held by another thread at fork) "
				    "[lock word]", word, NULL, NULL);
		/* EFAULT, EINVAL, EPERM: the word is not a lock word. */
		swait_fatal_errno("FUTEX_LOCK_PI", err, __FILE__, __LINE__);
	}
}

static inline void swait_pi_unlock(uint32_t *word)
{
	uint32_t expected = swait_tid();
	int saved;

	/* Release: publishes the critical section to the next owner. */
	if (swait_likely(__atomic_compare_exchange_n(word, &expected, 0, false,
			__ATOMIC_RELEASE, __ATOMIC_RELAXED)))
		return;
	/*
	 * FUTEX_WAITERS is set: the kernel hands the lock over.  The release
	 * RMW changes nothing; it is the half of the hand-over that
	 * ThreadSanitizer can see (see swait_pi_lock_slow()).
	 */
	(void)__atomic_fetch_or(word, 0, __ATOMIC_RELEASE);
	saved = errno;
	if (syscall(SWAIT_SYS_FUTEX, word,
		    FUTEX_UNLOCK_PI | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0) != 0)
		swait_fatal_errno("FUTEX_UNLOCK_PI", errno, __FILE__, __LINE__);
	errno = saved;
}

#endif /* SWAIT_LOCK_H */
