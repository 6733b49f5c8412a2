// SPDX-License-Identifier: MIT
/*
 * mutex.c - sleeping with a pthread mutex held around the condition, the
 * kernel's wait_event_lock_irq() and pthread_cond_wait()'s shape.  It adds
 * no rule to the protocol: it is lib/swait.c's prepare/sleep/finish with the
 * caller's mutex released across the sleep.
 *
 * Why no wakeup is lost.  The caller holds the mutex while it evaluates the
 * condition and while it prepares (the enqueue), and writers change the
 * condition's state under the same mutex.  So a writer either ran before
 * the evaluation (which then sees its change) or takes the mutex after the
 * waiter's unlock, that is after the enqueue, and its wake finds the waiter
 * queued (I1).  The condition needs no atomics: the mutex orders it.
 *
 * Cancellation: the sleep is a cancellation point.  The mutex is locked
 * again before a cancellation unwinds past this frame, as pthread_cond_wait
 * does, so the caller's own cleanup handlers run with it held; the sleep's
 * own cleanup (swait.c) has dequeued the waiter or passed its wake on.
 */
#include <pthread.h>

#include "internal.h"
#include "swait.h"

static void relock(void *mutex)
{
	pthread_mutex_lock(mutex);
}

SWAIT_EXPORT int swait_sleep_mutex(struct swait_head *h,
				   struct swait_waiter *w,
				   pthread_mutex_t *mutex, unsigned flags,
				   clockid_t clock,
				   const struct timespec *deadline)
{
	int err = pthread_mutex_unlock(mutex);

	if (err != 0)
		return err;	/* EPERM: an error-checking mutex not held */
	pthread_cleanup_push(relock, mutex);
	err = swait_sleep(h, w, flags, clock, deadline);
	pthread_cleanup_pop(1);
	return err;
}
