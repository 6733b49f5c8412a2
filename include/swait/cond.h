/* SPDX-License-Identifier: MIT */
/*
 * swait/cond.h - pthread_cond_t's interface on swait heads
 *
 * For code written against pthread_cond: swap the type and the prefix and
 * nothing else changes (the argument order, the error numbers, the
 * cancellation behaviour and the destroy rule are pthread_cond's).  New
 * code is usually clearer with the event macros of <swait.h>
 * (swait_event_mutex: the condition is an argument, the loop is written
 * once); a program that cannot be recompiled can run on this face
 * unmodified through the preload (swait-run(1)).
 *
 *	swait_cond_t c = SWAIT_COND_INITIALIZER;	(or all-zero bytes)
 *
 *	pthread_mutex_lock(&m);				pthread_mutex_lock(&m);
 *	while (!ready)					ready = true;
 *		swait_cond_wait(&c, &m);		swait_cond_signal(&c);
 *	pthread_mutex_unlock(&m);			pthread_mutex_unlock(&m);
 *
 * A swait_cond_t is a swait head (the waiters queue on it exactly as on any
 * head: one list, FIFO, each waiter sleeping on its own futex word) plus
 * the clock its timed waits use.  It is never larger than a pthread_cond_t
 * and never more strictly aligned, so the preload can keep one in a
 * pthread_cond_t's storage.
 *
 * GUARANTEES
 *
 *   signal     wakes the thread that has waited longest among those blocked
 *              on c when it is called, if any: FIFO, or on a condvar used
 *              with a priority-inheritance mutex the highest-priority one
 *              (below).  c's waiters are those whose wait had released the
 *              mutex: a waiter is queued before its unlock, so a signaller
 *              holding the mutex sees every thread that has blocked.
 *              "Wakes" means: that thread is taken off the queue and will
 *              return 0 once it has the mutex again.  If the selected
 *              thread has just timed out or been cancelled it passes the
 *              wake on to the next waiter, so a
 *              signal is never swallowed.  Callable with or without the
 *              mutex held; O(1); no system call when nobody waits.
 *   broadcast  wakes every thread blocked on c when it is called.  Threads
 *              that block after it returned are not woken by it.
 *   spurious   a wait may return 0 without a signal or broadcast meant for
 *              it in one case only: it received a wake passed on by a
 *              waiter that timed out or was cancelled as the wake selected
 *              it (the wake was for a thread blocked before this one).
 *              Callers re-check their predicate in a loop, as POSIX asks.
 *   destroy    returns 0 when no thread is blocked on c, even while threads
 *              that signal or broadcast woke have not yet returned from
 *              their waits (they do not touch c again once they hold the
 *              mutex, and those a signal woke are waited for, a few steps
 *              each); after that c may be freed.  So POSIX's example works:
 *              a woken thread may destroy and free the condvar (C++'s
 *              ~condition_variable after notify_all, libstdc++'s 54185).
 *              EBUSY (c untouched) while a thread is blocked on it.
 *   cancel     the waits are cancellation points.  A cancelled waiter
 *              leaves the queue (passing on a wake that selected it) and
 *              re-takes the mutex before the cleanup handlers run, as
 *              pthread_cond_wait does.
 *   errors     EINVAL for a clock other than CLOCK_REALTIME and
 *              CLOCK_MONOTONIC, or tv_nsec outside [0, 1e9): checked
 *              before the mutex is released.  EPERM when an error-checking
 *              (or robust) mutex is not held by the caller, also before
 *              anything is released.  EOWNERDEAD (the mutex is held,
 *              inconsistent) and ENOTRECOVERABLE (not held) from a robust
 *              mutex whose owner died are passed through, as
 *              pthread_cond_wait returns them.  ETIMEDOUT at the deadline;
 *              a negative tv_sec counts as past.
 *   lifetime   c is a head: it may be copied or moved only while idle (no
 *              thread waiting, no call in progress, every wait returned),
 *              and the copy then works at its new address; queued
 *              waiters point at it, so not otherwise.  All-zero bytes
 *              are a valid condvar that times out on CLOCK_REALTIME.
 *   fork       a fork child may use its copy, re-initialised or not, even
 *              if the parent's threads were blocked on it: the child's
 *              first wait starts it afresh (swait_cond(3), Fork).
 *
 * PRIORITY INHERITANCE
 *
 *   A condvar's first wait fixes its head's kind from the mutex: with a
 *   PTHREAD_PRIO_INHERIT (or PTHREAD_PRIO_PROTECT) mutex the head lock is
 *   a priority-inheritance futex (swait_head_init_pi), so no lock on the
 *   wait or wake path lacks priority inheritance: a high-priority thread
 *   that needs the head lock held by a preempted low-priority one lends it
 *   its priority (glibc bug 11588 cannot happen).  On such a condvar,
 *   signal wakes the highest-priority waiter, the longest waiting among
 *   equals (POSIX's rule for SCHED_FIFO and SCHED_RR threads): a waiter is
 *   queued by its scheduling priority as pthread_getschedparam() reports it
 *   at the wait (glibc's cached value: set priorities with
 *   pthread_setschedparam(), or before the thread's first wait), ahead of
 *   every lower-priority waiter, in O(1)
 *   lock hold when the priorities are equal and O(k) for k lower-priority
 *   waiters ahead of which it goes.  A priority changed while waiting
 *   keeps the place taken at the wait.  The kind stays until
 *   swait_cond_init() (or destroy and all-zero bytes); POSIX lets one
 *   condvar be used with one mutex at a time, so use PI mutexes with a
 *   condvar from its first wait on.
 *
 * Process-shared condvars are not supported: swait_cond_init() returns
 * ENOTSUP for a PTHREAD_PROCESS_SHARED attribute (the waiters' words are
 * private futexes in their own stacks).  The preload hands such condvars
 * to glibc.
 */
#ifndef SWAIT_COND_H
#define SWAIT_COND_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <swait.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * 48 bytes, the size of a pthread_cond_t on every Linux ABI glibc supports;
 * aligned as a pointer.  reserved is always zero: a preload tells the face's
 * condvars from glibc's process-shared ones by a bit glibc sets in bytes
 * that fall in reserved here.
 */
struct swait_cond {
	struct swait_head head;	/* the waiters */
	uint32_t clock;		/* CLOCK_REALTIME (0) or CLOCK_MONOTONIC */
	uint32_t kind;		/* 0 until the first wait; then the head's
				 * kind and the process that decided it
				 * (lib/cond.c K1, F1) */
	uint32_t reserved[(48 - sizeof(struct swait_head)) / 4 - 2];
};
typedef struct swait_cond swait_cond_t;

#define SWAIT_COND_INITIALIZER { SWAIT_HEAD_INITIALIZER, 0, 0, { 0 } }

/*
 * attr may be NULL.  Its clock (pthread_condattr_setclock) is the one
 * swait_cond_timedwait() measures deadlines on.  Returns 0, ENOTSUP for
 * a process-shared attr, or EINVAL for an attr whose clock is neither
 * CLOCK_REALTIME nor CLOCK_MONOTONIC or that cannot be read (c is then
 * left as it was).
 */
int swait_cond_init(swait_cond_t *c, const pthread_condattr_t *attr)
	SWAIT_NONNULL(1);

/* 0, or EBUSY while a thread is blocked on c (see destroy above). */
int swait_cond_destroy(swait_cond_t *c) SWAIT_NONNULL(1);

/*
 * Release mutex, block until woken, re-take mutex.  mutex must be held by
 * the caller.  Returns 0, or an error as above.
 */
int swait_cond_wait(swait_cond_t *c, pthread_mutex_t *mutex)
	SWAIT_NONNULL(1, 2);

/* As swait_cond_wait(), with an absolute deadline on c's clock; NULL:
 * EINVAL. */
int swait_cond_timedwait(swait_cond_t *c, pthread_mutex_t *mutex,
			 const struct timespec *abstime) SWAIT_NONNULL(1, 2);

/* As swait_cond_wait(), with an absolute deadline on clock; NULL: EINVAL. */
int swait_cond_clockwait(swait_cond_t *c, pthread_mutex_t *mutex,
			 clockid_t clock, const struct timespec *abstime)
	SWAIT_NONNULL(1, 2);

/* Wake the longest-waiting blocked thread, if any.  Returns 0. */
int swait_cond_signal(swait_cond_t *c) SWAIT_NONNULL(1);

/* Wake every blocked thread.  Returns 0. */
int swait_cond_broadcast(swait_cond_t *c) SWAIT_NONNULL(1);

#ifdef __cplusplus
}
#endif

#endif /* SWAIT_COND_H */
