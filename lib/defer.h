/* SPDX-License-Identifier: MIT */
/*
 * defer.h - wakes from signal handlers handed to the interrupted lock holder
 * (lib/defer.c, S1-S5): the encoding of a posted set, the check each of the
 * four async-signal-safe wakes makes first, and the holder's side.
 */
#ifndef SWAIT_DEFER_H
#define SWAIT_DEFER_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "headlock.h"

/*
 * A posted set (swait_posted_t): counts of wake_one and complete calls, and
 * flags for the _all calls.
 */
#if ULONG_MAX > 0xffffffffUL
#define POST_WAKE_ONE		0x0000000000000001UL
#define POST_ONE_MASK		0x0000000000ffffffUL	/* 24 bits */
#define POST_COMPLETE		0x0000000001000000UL
#define POST_COMPLETE_MASK	0x00ffffffff000000UL	/* 32 bits */
#define POST_WAKE_ALL		0x0100000000000000UL
#define POST_COMPLETE_ALL	0x0200000000000000UL
#else
#define POST_WAKE_ONE		0x00000001UL
#define POST_ONE_MASK		0x00003fffUL		/* 14 bits */
#define POST_COMPLETE		0x00004000UL
#define POST_COMPLETE_MASK	0x0fffc000UL		/* 14 bits */
#define POST_WAKE_ALL		0x10000000UL
#define POST_COMPLETE_ALL	0x20000000UL
#endif

/* Compiler-only barrier: orders accesses against this thread's handlers. */
#define swait_signal_fence() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * S1: if this thread is taking or holding head's lock (so the caller is a
 * signal handler that interrupted it), post what to that hold and return
 * true.  C1: if this thread is in a sleep's asynchronous-cancellation
 * window (so the caller is a handler that interrupted the sleep), run
 * fn(arg) with cancellation disabled and return true.  Otherwise false.
 * Call swait_from_handler() instead.
 */
bool swait_from_handler_slow(struct swait_head *head, swait_posted_t what,
			     void (*fn)(void *), void *arg);

/*
 * The first thing each of the four async-signal-safe calls does after its
 * emptiness peek: true if the call was done here, posted to this thread's
 * lock holder (S1) or run as fn(arg) out of reach of cancellation (C1), and
 * the caller must return.  fn is the call's body, without this check.  Two
 * thread-local loads on the usual path.
 */
static inline bool swait_from_handler(struct swait_head *head,
				      swait_posted_t what,
				      void (*fn)(void *), void *arg)
{
	return __builtin_expect((swait_tls.depth | swait_tls.async_window)
				!= 0, 0) &&
	       swait_from_handler_slow(head, what, fn, arg);
}

/*
 * C1: a sleep's asynchronous-cancellation window, opened just before its
 * FUTEX_WAIT and closed just after.  The mark is set before the type
 * changes and cleared after it is restored, so a handler that sees the
 * type asynchronous always sees the mark.
 */
static inline void swait_async_window_open(int *oldtype)
{
	__atomic_store_n(&swait_tls.async_window, 1, __ATOMIC_RELAXED);
	swait_signal_fence();
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, oldtype);
}

static inline void swait_async_window_close(int oldtype)
{
	pthread_setcanceltype(oldtype, NULL);
	swait_signal_fence();
	__atomic_store_n(&swait_tls.async_window, 0, __ATOMIC_RELAXED);
}

/* C1: the window was left by cancellation; its cleanup handler says so. */
static inline void swait_async_window_unwound(void)
{
	__atomic_store_n(&swait_tls.async_window, 0, __ATOMIC_RELAXED);
}

/*
 * S2, S5: the holder's side.  swait_head_unlock() calls it, after the
 * release, with the set its handlers posted to that hold; it performs the
 * set as the calls it stands for before returning.
 */
void swait_run_posted(struct swait_head *head, swait_posted_t set);

#endif /* SWAIT_DEFER_H */
