/* SPDX-License-Identifier: MIT */
/*
 * defer.h - C1: a sleep's asynchronous-cancellation window, and how a wake
 * made by a signal handler that interrupted it stays out of cancellation's
 * reach (lib/wake.c).  Wakes from handlers that interrupted a lock hold
 * are lib/headlock.c's (L1-L7).
 *
 * A sleep is a cancellation point, and to be one while blocked in
 * FUTEX_WAIT it switches to asynchronous cancellation around the system
 * call (lib/swait.c, lib/any.c).  A handler that runs in that window
 * inherits the asynchronous type: a pthread_cancel() landing while the
 * handler is inside a wake would unwind it with a head lock held, and every
 * later call on that head would hang.
 *
 *  C1. The sleep marks its window in swait_tls (swait_async_window_open
 *      and _close, the mark set before the type turns asynchronous and
 *      cleared after it is restored).  A wake that finds the mark is in a
 *      handler that interrupted the window; it runs with cancellation
 *      disabled and deferred, and restores both when it is done, after its
 *      last unlock.  A cancel that landed meanwhile acts there, unwinding a
 *      handler that holds nothing.  A cancel signal already in flight when
 *      the state was disabled is ignored by glibc's handler and acted on at
 *      the restore.
 *
 * Memory ordering: the mark is between a thread and the handlers that
 * interrupt it, which the kernel's signal delivery and return order like
 * program order; compiler barriers suffice.  tests/protocol/cancelhandler.c
 * checks C1; mutant cancel_window_ignored shows that it can fail.
 */
#ifndef SWAIT_DEFER_H
#define SWAIT_DEFER_H

#include <pthread.h>

#include "headlock.h"

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

#endif /* SWAIT_DEFER_H */
