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
 * The relock's error wins.  A robust mutex whose owner died while the
 * waiter slept is relocked with EOWNERDEAD: this thread now holds it, and
 * the state it guards may be half-written.  That is reported instead of the
 * sleep's 0, ETIMEDOUT or EINTR, as pthread_cond_wait() reports it, because
 * it is the one result the caller must act on (pthread_mutex_consistent(),
 * or unlocking it unrepaired, which makes it ENOTRECOVERABLE for everyone).
 * Losing the sleep's result loses nothing: a wake that ended the sleep was
 * for this waiter, which returns to its caller, and one that selected it
 * without ending the sleep is passed on by the caller's swait_finish().
 * ENOTRECOVERABLE is passed through the same way; the mutex is not held
 * then.
 *
 * Cancellation: the sleep is a cancellation point.  The mutex is locked
 * again before a cancellation unwinds past this frame, as pthread_cond_wait
 * does, so the caller's own cleanup handlers run with it held; the sleep's
 * own cleanup (swait.c) has dequeued the waiter or passed its wake on.  A
 * cleanup handler has no way to return the relock's error, so, exactly as
 * with glibc's pthread_cond_wait(): after EOWNERDEAD the caller's handlers
 * run holding an inconsistent mutex, and after ENOTRECOVERABLE without the
 * mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "internal.h"
#include "swait.h"

static void relock(void *mutex)
{
	/* The error cannot be returned from a cleanup handler: see above. */
	(void)pthread_mutex_lock(mutex);
}

SWAIT_EXPORT int swait_sleep_mutex(struct swait_head *h,
				   struct swait_waiter *w,
				   pthread_mutex_t *mutex, unsigned flags,
				   clockid_t clock,
				   const struct timespec *deadline)
{
	int err, lock_err;

	/*
	 * swait_sleep() checks these too, but only after the unlock: by
	 * then other threads may have run inside the caller's critical
	 * section, which an EINVAL promises did not happen.
	 */
	if ((flags & ~(SWAIT_INTERRUPTIBLE | SWAIT_NOSPIN)) ||
	    !swait_deadline_valid(clock, deadline))
		return EINVAL;
	err = pthread_mutex_unlock(mutex);
	if (err != 0)
		return err;	/* EPERM: an error-checking mutex not held */
	pthread_cleanup_push(relock, mutex);
	err = swait_sleep(h, w, flags, clock, deadline);
	pthread_cleanup_pop(0);
	lock_err = pthread_mutex_lock(mutex);
	return lock_err != 0 ? lock_err : err;
}

/*
 * The statement form's verdict on an error it cannot return.  A relock
 * that found the owner dead aborts in every build: the statement's promise
 * (cond true, the mutex held and usable) cannot be kept, nothing tells the
 * caller, and carrying on would run its critical section on whatever the
 * dead owner left half-written, then make the mutex unrecoverable for every
 * other thread with the caller's next unlock.  This comes from another
 * thread dying at run time, in production as in testing, so it cannot be a
 * debug-only check.  The other errors are misuse that every run through the
 * call makes (EPERM: the mutex is not held by this thread); debug builds
 * abort on them, release builds return and the statement ends with cond
 * false, as before.
 */
SWAIT_EXPORT void swait_event_mutex_failed(pthread_mutex_t *mutex, int err)
{
	char msg[192];

	switch (err) {
	case 0:
		return;
	case EOWNERDEAD:
		swait_fatal("swait_event_mutex(): the mutex's owner died "
			    "(EOWNERDEAD) and a statement cannot report it: "
			    "wait on a robust mutex with an expression form, "
			    "such as swait_event_mutex_timeout()",
			    mutex, NULL, NULL);
	case ENOTRECOVERABLE:
		swait_fatal("swait_event_mutex(): the mutex is not recoverable "
			    "(ENOTRECOVERABLE), not held, and a statement "
			    "cannot report it: wait on a robust mutex with an "
			    "expression form", mutex, NULL, NULL);
	case EPERM:
		swait_check(0, "swait_event_mutex(): the mutex is not held by "
			    "this thread (pthread_mutex_unlock() failed with "
			    "EPERM), so cond would be false after the "
			    "statement", mutex, NULL, NULL);
		return;
	default:
		/* A relock error no correct caller meets: EAGAIN, EDEADLK,
		 * EINVAL (a priority ceiling below this thread's). */
		if (SWAIT_DEBUG_CHECKS) {
			snprintf(msg, sizeof(msg), "swait_event_mutex(): the "
				 "wait failed with error %d, so cond would be "
				 "false after the statement", err);
			swait_fatal(msg, mutex, NULL, NULL);
		}
		return;
	}
}
