/* SPDX-License-Identifier: MIT */
/*
 * lock.h - the head lock's words: the ordinary lock word, which also holds
 * the wakes posted to its holder, and the priority-inheritance futex of a
 * PI head.  How a hold uses them, and why nothing posted is lost, is
 * lib/headlock.c's (L1-L7); this file only says what the bits mean and
 * how a thread takes and parks.
 *
 * THE ORDINARY LOCK WORD
 *
 *	bit 0		HELD: a thread holds the lock
 *	bit 1		PARKED: a thread may be parked in FUTEX_WAIT on it
 *	bit 2		a swait_wake_all() was posted to the holder
 *	bit 3		a swait_complete_all() was posted to the holder
 *	bits 4-7	swait_wake_one() calls posted (15; more become a
 *			wake_all: a superset, allowed as spurious wakeups)
 *	bits 8-31	swait_complete() calls posted (16,777,215)
 *
 * A word with HELD clear is 0: posts are made only to a holder (L2), and
 * the release that clears HELD requires the posted bits to be clear (L3).
 * So the uncontended lock is one CAS 0 -> HELD and the uncontended
 * release one CAS HELD -> 0, no system call.
 *
 * Why it never spins without bound: a SCHED_FIFO thread spinning on a holder
 * it preempted on the same CPU would spin forever.  After SWAIT_LOCK_SPINS
 * relaxed polls the locker sets PARKED and sleeps in the kernel, which lets
 * the holder run (Drepper's "mutex, take 2", in "Futexes Are Tricky", with
 * CASes instead of exchanges so that the posted bits survive).  A release
 * wakes one parked thread only when PARKED was set.
 *
 * Critical sections under this lock are O(1) list operations (lib/swait.c
 * I5), so the spin almost always succeeds; it is bounded so that it costs
 * at most a few microseconds when it does not.
 */
#ifndef SWAIT_LOCK_H
#define SWAIT_LOCK_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "futex.h"
#include "internal.h"

#define SWAIT_LOCK_HELD		0x00000001u
#define SWAIT_LOCK_PARKED	0x00000002u
#define SWAIT_LOCK_POSTED	0xfffffffcu	/* every posted bit */
#define SWAIT_LOCK_WAKE_ALL	0x00000004u
#define SWAIT_LOCK_COMPLETE_ALL	0x00000008u
#define SWAIT_LOCK_ONE		0x00000010u
#define SWAIT_LOCK_ONE_MASK	0x000000f0u
#define SWAIT_LOCK_COMPLETE	0x00000100u
#define SWAIT_LOCK_COMPLETE_MASK 0xffffff00u

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
 * previous holder wrote before its release is visible from here on.
 */
static inline bool swait_trylock(uint32_t *word)
{
	uint32_t expected = 0;

	return __atomic_compare_exchange_n(word, &expected, SWAIT_LOCK_HELD,
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
		if (seen & SWAIT_LOCK_PARKED)
			break;	/* someone already parks: join them */
		if (seen == 0 &&
		    __atomic_compare_exchange_n(word, &seen, SWAIT_LOCK_HELD,
				false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
	/*
	 * Park.  Taking the lock from here on sets PARKED too: we cannot know
	 * whether other threads are still parked, so the releaser must assume
	 * they are.  A post changes the word under us: the wait then returns
	 * EAGAIN and we look again.
	 */
	seen = __atomic_load_n(word, __ATOMIC_RELAXED);
	for (;;) {
		if (seen == 0) {
			if (__atomic_compare_exchange_n(word, &seen,
					SWAIT_LOCK_HELD | SWAIT_LOCK_PARKED,
					false, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
				return;
			continue;
		}
		if (!(seen & SWAIT_LOCK_PARKED) &&
		    !__atomic_compare_exchange_n(word, &seen,
				seen | SWAIT_LOCK_PARKED, false,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		(void)swait_futex_wait(word, seen | SWAIT_LOCK_PARKED,
				       CLOCK_MONOTONIC, NULL);
		seen = __atomic_load_n(word, __ATOMIC_RELAXED);
	}
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

uint32_t swait_tid_refresh(void);

static inline uint32_t swait_tid(void)
{
	uint64_t c = __atomic_load_n(&swait_tid_cache, __ATOMIC_RELAXED);
	uint32_t stamp = __atomic_load_n(
		&__atomic_load_n(&swait_process_stamp,
				 __ATOMIC_RELAXED)[SWAIT_STAMP_TID],
		__ATOMIC_RELAXED);

	if (swait_likely((uint32_t)(c >> 32) == stamp && (uint32_t)c != 0))
		return (uint32_t)c;
	return swait_tid_refresh();
}

static void swait_pi_lock_slow(uint32_t *word);

/* Take a free PI lock without waiting (acquire on success). */
static inline bool swait_pi_trylock(uint32_t *word)
{
	uint32_t expected = 0;

	return __atomic_compare_exchange_n(word, &expected, swait_tid(),
			false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

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
