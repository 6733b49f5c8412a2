// SPDX-License-Identifier: MIT
/*
 * cond.c - pthread_cond_t's interface (<swait/cond.h>) on one swait head.
 *
 * It adds no rule to the protocol: a wait is swait_prepare, unlock,
 * swait_sleep, swait_finish, relock, on the condvar's head, and signal and
 * broadcast are swait_wake_one and swait_wake_all.  What it decides is the
 * order of those steps, for three of pthread_cond's promises:
 *
 *  - No lost wakeup.  The waiter is queued (swait_prepare, I1) before it
 *    releases the mutex; a signaller that holds the mutex, or that took it
 *    after the waiter's unlock, finds it queued.
 *
 *  - Destroy by a woken thread.  The waiter finishes (dequeue, pass on a
 *    wake it did not consume) before it re-takes the mutex, not after as
 *    swait_sleep_mutex does.  A thread a signal woke is a leaver that
 *    swait_head_destroy waits for (lib/wake.c LEAVERS); if it finished only
 *    after the relock, a destroyer holding the mutex would wait for a
 *    thread that waits for the mutex.  Finished first, it has left the head
 *    before it needs the mutex, and after the relock nothing reads c.
 *    Threads a broadcast woke never read the head again (W2), so
 *    pthread_cond_destroy's POSIX example and ~condition_variable after
 *    notify_all return 0 and may free c at once.
 *
 *  - Cancellation.  swait_sleep's own cleanup finishes the waiter (I4); the
 *    cleanup here re-takes the mutex, and runs after it (cleanups unwind
 *    innermost first), so the caller's handlers run holding the mutex and
 *    the wake, if one selected this thread, has been passed on.
 *
 * The deadline is validated before the mutex is released, as glibc does, so
 * that bad input never lets another thread into the caller's critical
 * section.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"
#include "swait.h"
#include "swait/cond.h"

/*
 * The preload keeps a swait_cond_t in a pthread_cond_t's storage and tells
 * glibc's process-shared condvars from the face's by bit 0 of glibc's
 * __wrefs: it must fall in reserved, which the face keeps zero.
 */
_Static_assert(sizeof(swait_cond_t) == sizeof(pthread_cond_t),
	       "swait_cond_t must be a pthread_cond_t's size");
_Static_assert(_Alignof(swait_cond_t) <= _Alignof(pthread_cond_t),
	       "swait_cond_t must fit a pthread_cond_t's alignment");
_Static_assert(offsetof(pthread_cond_t, __data.__wrefs) >=
	       offsetof(swait_cond_t, reserved) &&
	       offsetof(pthread_cond_t, __data.__wrefs) + 4 <=
	       sizeof(swait_cond_t),
	       "glibc's __wrefs must fall in swait_cond_t's reserved words");

SWAIT_EXPORT int swait_cond_init(swait_cond_t *c,
				 const pthread_condattr_t *attr)
{
	clockid_t clock = CLOCK_REALTIME;
	int pshared = PTHREAD_PROCESS_PRIVATE;

	if (attr) {
		if (pthread_condattr_getpshared(attr, &pshared) != 0 ||
		    pthread_condattr_getclock(attr, &clock) != 0)
			return EINVAL;
		if (pshared != PTHREAD_PROCESS_PRIVATE)
			return ENOTSUP;
		if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
			return EINVAL;
	}
	memset(c, 0, sizeof(*c));
	swait_head_init(&c->head);
	c->clock = (uint32_t)clock;
	return 0;
}

SWAIT_EXPORT int swait_cond_destroy(swait_cond_t *c)
{
	return swait_head_destroy(&c->head);
}

static void relock(void *mutex)
{
	/* A cleanup handler cannot return EOWNERDEAD: see lib/mutex.c. */
	(void)pthread_mutex_lock(mutex);
}

static int cond_wait(swait_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *abstime)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int err, lock_err;

	if (!swait_deadline_valid(clock, abstime))
		return EINVAL;
	swait_prepare(&c->head, &w);
	err = pthread_mutex_unlock(m);
	if (err != 0) {
		/* EPERM: not the holder; nothing was released. */
		swait_finish(&c->head, &w);
		return err;
	}
	pthread_cleanup_push(relock, m);
	err = swait_sleep(&c->head, &w, 0, clock, abstime);
	pthread_cleanup_pop(0);
	swait_finish(&c->head, &w);	/* before the relock: see above */
	lock_err = pthread_mutex_lock(m);
	return lock_err != 0 ? lock_err : err;
}

SWAIT_EXPORT int swait_cond_wait(swait_cond_t *c, pthread_mutex_t *m)
{
	return cond_wait(c, m, CLOCK_REALTIME, NULL);
}

SWAIT_EXPORT int swait_cond_timedwait(swait_cond_t *c, pthread_mutex_t *m,
				      const struct timespec *abstime)
{
	if (!abstime)
		return EINVAL;
	return cond_wait(c, m, (clockid_t)c->clock, abstime);
}

SWAIT_EXPORT int swait_cond_clockwait(swait_cond_t *c, pthread_mutex_t *m,
				      clockid_t clock,
				      const struct timespec *abstime)
{
	if (!abstime)
		return EINVAL;
	return cond_wait(c, m, clock, abstime);
}

SWAIT_EXPORT int swait_cond_signal(swait_cond_t *c)
{
	swait_wake_one(&c->head);
	return 0;
}

SWAIT_EXPORT int swait_cond_broadcast(swait_cond_t *c)
{
	swait_wake_all(&c->head);
	return 0;
}
