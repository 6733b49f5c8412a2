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
 *
 * The head's kind.  All-zero bytes must be a valid condvar, and a condvar
 * is used with priority-inheritance mutexes or not, which only a wait can
 * tell.  So kind starts at 0 (UNDECIDED) and the first wait decides,
 * before anything else touches the head (K1-K3):
 *
 *  K1  The head is used only once kind is ORDINARY or PI.  A wait that
 *      finds it UNDECIDED claims it (CAS to DECIDING), initialises the head
 *      as an ordinary or a PI head from its mutex, and publishes the kind
 *      (release).  A wait that finds DECIDING waits until it is published:
 *      the decider runs a few stores, on a thread that may have been
 *      preempted, so the loop yields rather than spins, and after a few
 *      yields sleeps briefly, since the preempted decider may be of lower
 *      priority on the same CPU, which a yield never lets run.  (Only a
 *      program that waits with two mutexes meets a decider at all: the
 *      decider holds its mutex, which every other waiter needs.)
 *  K2  signal and broadcast read kind (acquire) and return at once while
 *      it is not decided: no thread can be blocked on c then, since a
 *      waiter publishes the kind before it queues, and queues before it
 *      releases the mutex; a signaller ordered after that release by the
 *      mutex sees the kind.  One not ordered by the mutex may miss a waiter
 *      that had not blocked when it was called, as POSIX allows.
 *  K3  destroy of an undecided condvar is 0: nobody can be queued (K2's
 *      argument), and nothing has touched the head.
 *
 * A fork child.  Its copy of a condvar that threads of the parent were
 * blocked on still holds their waiters: nodes in stacks the child copied
 * but no thread of it owns, which a wake would pick (a signal lost) and
 * which glibc's stack cache hands to the child's new threads (the queue
 * corrupted).  glibc's condvar holds no pointer to a waiter, so programs
 * reuse such condvars in the child, and CPython re-initialises its GIL's
 * on every os.fork().  So the kind word also names the process that
 * decided it (F1-F3):
 *  F1  DECIDING and the decided kinds carry the id of the process whose
 *      thread stored them (swait_process_id, lib/headlock.h: random,
 *      drawn per process, zeroed in every fork child) above the two kind
 *      bits.  A child's differs from its ancestors' (but for a 2^-30
 *      chance), so a child tells a copy at once, a copied DECIDING too,
 *      whose decider is not in the child and would never publish.
 *  F2  A wait that finds another process's word adopts the condvar: a
 *      CAS of that exact word to its own DECIDING (no ABA: every word
 *      this process stores has its own id), a fresh head, then K1's
 *      decision from its mutex.  No waiter of this process can be queued
 *      on the old head, since it would have adopted first.
 *  F3  signal, broadcast and destroy treat another process's kind as
 *      undecided (K2, K3): none of this process's threads is blocked on
 *      it.  init re-initialises it without the debug check for waiters,
 *      whose threads are not in this process.
 *
 * On a PI head, waiters queue by priority (swait_prepare_ordered: highest
 * first, FIFO among equals), so that wake_one, which takes the first,
 * wakes the highest-priority waiter.  The priority is the thread's
 * sched_priority at the wait (0 outside SCHED_FIFO and SCHED_RR), from
 * pthread_getschedparam(): glibc keeps it in the thread's descriptor, so it
 * costs no system call (sched_getparam() did: 1 us of a 4.5 us round trip
 * on the development VM, swait-bench pingpong swait-cond-pi).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "futex.h"
#include "headlock.h"
#include "internal.h"
#include "list.h"
#include "queue.h"
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

enum { UNDECIDED, DECIDING, ORDINARY, PI };

/* F1: the kind word is the kind in its two low bits, the process above. */
#define KIND_BITS 2u
#define KIND_OF(w) ((w) & ((1u << KIND_BITS) - 1))

static uint32_t kind_word(uint32_t id, uint32_t kind)
{
	return id << KIND_BITS | kind;
}

/* The kind of c as this process may use it: another's reads UNDECIDED. */
static uint32_t own_kind(uint32_t w)
{
	if (KIND_OF(w) != UNDECIDED && w >> KIND_BITS != swait_process_id())
		return UNDECIDED;	/* F3 */
	return KIND_OF(w);
}

SWAIT_EXPORT int swait_cond_init(swait_cond_t *c,
				 const pthread_condattr_t *attr)
{
	clockid_t clock = CLOCK_REALTIME;
	int pshared = PTHREAD_PROCESS_PRIVATE;
	uint32_t kind;

	if (attr) {
		if (pthread_condattr_getpshared(attr, &pshared) != 0 ||
		    pthread_condattr_getclock(attr, &clock) != 0)
			return EINVAL;
		if (pshared != PTHREAD_PROCESS_PRIVATE)
			return ENOTSUP;
		if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
			return EINVAL;
	}
	/*
	 * Debug builds: a condvar re-initialised with threads blocked on it
	 * would lose them, as a head would (swait_head_init()).  Only a
	 * decided condvar has a head to look at.
	 */
	kind = own_kind(load_relaxed(&c->kind));
	if (kind == ORDINARY || kind == PI)
		swait_head_init_checked(&c->head, 0,
			"swait_cond_init: the condvar still has waiters, who "
			"would never be woken (re-initialised while in use?) "
			"[head, first waiter]");
	memset(c, 0, sizeof(*c));	/* UNDECIDED: the first wait says */
	c->clock = (uint32_t)clock;
	return 0;
}

SWAIT_EXPORT int swait_cond_destroy(swait_cond_t *c)
{
	if (own_kind(load_acquire(&c->kind)) < ORDINARY)
		return 0;	/* K3, F3 */
	return swait_head_destroy(&c->head);
}

/*
 * glibc's mutex kind bits for PTHREAD_PRIO_INHERIT and PTHREAD_PRIO_PROTECT
 * (PTHREAD_MUTEX_PRIO_INHERIT_NP, _PROTECT_NP in its pthreadP.h): a
 * protocol the mutex attribute set and the mutex never changes.
 */
#define GLIBC_MUTEX_PRIO_BITS 0x60

static bool mutex_is_pi(pthread_mutex_t *m)
{
	return (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) &
		GLIBC_MUTEX_PRIO_BITS) != 0;
}

/*
 * K1: the head's kind, decided by the first wait; F2: adopted first if
 * the word is another process's (decided, or being decided by a thread
 * that is not in this process and will never publish).
 */
static uint32_t decide(swait_cond_t *c, pthread_mutex_t *m)
{
	uint32_t me = swait_process_id();
	uint32_t w = load_acquire(&c->kind), k;
	unsigned rounds = 0;

	for (;;) {
		k = KIND_OF(w);
		if (swait_likely(k >= ORDINARY && w >> KIND_BITS == me))
			return k;
		if (k == UNDECIDED || w >> KIND_BITS != me) {
			/*
			 * A failed CAS reloads w: look again.  Acquire, both
			 * ways: pairs with the release below that publishes
			 * a decided head, so a loser that reads it may use it.
			 */
			if (!__atomic_compare_exchange_n(&c->kind, &w,
					kind_word(me, DECIDING), false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
				continue;
			/* F2: another process's queue is not ours. */
			if (k != UNDECIDED)
				memset(&c->head, 0, sizeof(c->head));
			k = mutex_is_pi(m) ? PI : ORDINARY;
			if (k == PI)
				swait_head_init_pi(&c->head);
			else
				swait_head_init(&c->head);
			__atomic_store_n(&c->kind, kind_word(me, k),
					 __ATOMIC_RELEASE);
			return k;
		}
		/*
		 * DECIDING, by a thread of this process.  Only a program that
		 * waits with two mutexes gets here (the decider holds the one
		 * it waits with), and its decider may be of lower priority on
		 * our CPU, preempted by us: not a yield alone.
		 */
		swait_backoff_wait(&c->kind, w, rounds++);
		w = load_acquire(&c->kind);
	}
}

/* The waiter of a PI condvar: its priority beside the queue's node. */
struct prio_waiter {
	struct swait_waiter w;	/* first: the queue's node */
	int prio;
};

static int prio_of(const struct swait_waiter *w)
{
	return ((const struct prio_waiter *)(const void *)w)->prio;
}

/* Higher priority first; equal priorities keep their arrival order. */
static bool higher_prio(const struct swait_waiter *nw,
			const struct swait_waiter *queued)
{
	return prio_of(nw) > prio_of(queued);
}

static int current_prio(void)
{
	struct sched_param p;
	int policy;

	return pthread_getschedparam(pthread_self(), &policy, &p) == 0 ?
		p.sched_priority : 0;
}

static void relock(void *mutex)
{
	/* A cleanup handler cannot return EOWNERDEAD: see lib/mutex.c. */
	(void)pthread_mutex_lock(mutex);
}

static int cond_wait(swait_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct timespec *abstime)
{
	struct prio_waiter pw = { SWAIT_WAITER_INITIALIZER, 0 };
	struct swait_waiter *w = &pw.w;
	int err, lock_err;

	if (!swait_deadline_valid(clock, abstime))
		return EINVAL;
	if (decide(c, m) == PI) {
		pw.prio = current_prio();
		swait_prepare_ordered(&c->head, w, higher_prio);
	} else {
		swait_prepare(&c->head, w);
	}
	err = pthread_mutex_unlock(m);
	if (err != 0) {
		/* EPERM: not the holder; nothing was released. */
		swait_finish(&c->head, w);
		return err;
	}
	pthread_cleanup_push(relock, m);
	err = swait_sleep(&c->head, w, 0, clock, abstime);
	pthread_cleanup_pop(0);
	swait_finish(&c->head, w);	/* before the relock: see above */
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
	if (own_kind(load_acquire(&c->kind)) < ORDINARY)
		return 0;	/* K2, F3 */
	swait_wake_one(&c->head);
	return 0;
}

SWAIT_EXPORT int swait_cond_broadcast(swait_cond_t *c)
{
	if (own_kind(load_acquire(&c->kind)) < ORDINARY)
		return 0;	/* K2, F3 */
	swait_wake_all(&c->head);
	return 0;
}
