/* SPDX-License-Identifier: MIT */
/*
 * swait/kernel.h - the Linux kernel's swait and completion names, on libswait
 *
 * Kernel code that uses <linux/swait.h> and <linux/completion.h> compiles
 * against this header unchanged, so that a driver's logic or a ported
 * subsystem can be unit-tested with threads in user space.  Everything here
 * is a macro or a static inline over <swait.h>; nothing is added to the
 * library.  Include it instead of the two kernel headers.
 *
 * TYPES
 *
 *   struct swait_queue_head   is struct swait_head (a macro renames the tag)
 *   struct swait_queue        is struct swait_waiter (likewise)
 *   struct completion         wraps struct swait_completion (member c)
 *
 * The two swait types are the libswait types themselves, not wrappers, so
 * that libswait calls and kernel names mix freely, and so that the kernel's
 * swait_active(), which libswait already exports with the same meaning (a
 * lockless, unordered "is a waiter queued?"), needs no second definition:
 * this header does not redefine it.  struct completion is a wrapper instead
 * of a renamed tag because "completion" is too common an identifier to
 * become a macro.
 *
 * DIFFERENCES FROM THE KERNEL (what a port must know)
 *
 *   Timeouts.  The kernel counts jiffies; here every timeout is in
 *   milliseconds on CLOCK_MONOTONIC.  The return contract is the kernel's:
 *   0 if the condition was still false when the timeout elapsed, otherwise
 *   the time left, at least 1 - here in milliseconds, rounded up.  A
 *   condition already true returns the timeout unchanged (1 if it was 0).
 *   MAX_SCHEDULE_TIMEOUT waits without a deadline and, as in the kernel,
 *   is what comes back on success.  A negative timeout counts as 0.
 *   The *_ts macros take an absolute struct timespec deadline instead.
 *   A jiffy is therefore a millisecond: HZ is 1000 and msecs_to_jiffies()
 *   and friends convert exactly (usecs rounded up).
 *
 *   Killable waits are the uninterruptible ones (a fatal signal ends the
 *   process in user space), the _io waits the plain ones, and
 *   wait_for_completion_state() is interruptible iff its state has
 *   TASK_INTERRUPTIBLE.
 *
 *   Signals.  The kernel's interruptible waits return -ERESTARTSYS when a
 *   signal is pending; here they return -EINTR when a signal handler
 *   interrupted the sleep in the kernel, and ERESTARTSYS is defined as
 *   EINTR (if not already defined) so that "ret == -ERESTARTSYS" tests
 *   still work.  A handler that ran while the thread was not asleep (while
 *   it evaluated the condition) yields no -EINTR.  The forms with and
 *   without a timeout differ under SA_RESTART: wait_for_completion_
 *   interruptible() and swait_event_interruptible_exclusive() are restarted
 *   silently by a handler installed with SA_RESTART, while
 *   wait_for_completion_interruptible_timeout() and the _timeout macros
 *   return -EINTR after any handler that interrupted the sleep (see
 *   swait_sleep() in <swait.h>).  Install handlers that must interrupt
 *   waits without SA_RESTART, or have them make the condition true and
 *   wake.  swake_up_one(), swake_up_all(), complete()
 *   and complete_all() are async-signal-safe, as the kernel's may run in a
 *   hard interrupt; nothing else here is.
 *
 *   Task states.  prepare_to_swait_exclusive() ignores its state argument:
 *   whether a sleep is interruptible is chosen by the flags given to
 *   swait_sleep(), which replaces the kernel's schedule() in open-coded
 *   loops (user space has no "current task" to schedule away):
 *
 *	DECLARE_SWAITQUEUE(wait);
 *
 *	for (;;) {
 *		prepare_to_swait_exclusive(&wq, &wait, TASK_UNINTERRUPTIBLE);
 *		if (cond)
 *			break;
 *		swait_sleep(&wq, &wait, 0, CLOCK_MONOTONIC, NULL);
 *	}
 *	finish_swait(&wq, &wait);
 *
 *   TASK_* and MAX_SCHEDULE_TIMEOUT are defined here (if not already) only
 *   so that such code compiles.
 *
 *   Spinning.  Like every libswait sleep, these waits first poll for their
 *   wake for a bounded time (10 us by default) before they block, which
 *   the kernel's do not; pass SWAIT_NOSPIN to swait_sleep() in an
 *   open-coded loop, or swait_set_spin(0, NULL) on the thread, for the
 *   kernel's immediate sleep (see swait_set_spin(3)).
 *
 *   Names.  Only the kernel's current (v4.19 and later) names are provided:
 *   swake_up_one, swake_up_all and the swait_event_*_exclusive macros.  The
 *   older kernel names swait_event(), swait_event_interruptible() and
 *   swait_event_timeout() are libswait's own macros, which take a pointer
 *   to the head and return a positive errno; old kernel code that passes
 *   the head by name fails to compile rather than misbehave.  The
 *   kernel-internal calls (swake_up_locked, prepare_to_swait_event,
 *   __init_swait_queue_head) are not provided.
 *
 *   Context.  Every wait may block and is a pthread cancellation point when
 *   it sleeps; only the wakes and completes above may be called from a
 *   signal handler.  Heads and
 *   completions are process-private.  The ordering and lifetime guarantees
 *   are libswait's (see <swait.h>), which match the kernel's: a wake
 *   publishes what the waker wrote before it, and a thread whose
 *   wait_for_completion*() returned success may free an on-stack completion
 *   at once.
 *
 * The header needs GNU statement expressions (GCC, Clang; C99 or later, and
 * C++), marked __extension__ so that -Wpedantic builds stay quiet, and the
 * POSIX clocks that <swait.h> itself needs.
 */
#ifndef SWAIT_KERNEL_H
#define SWAIT_KERNEL_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <swait.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- kernel constants */

#ifndef ERESTARTSYS
#define ERESTARTSYS EINTR	/* interrupted waits return -EINTR */
#endif

#ifndef MAX_SCHEDULE_TIMEOUT
#define MAX_SCHEDULE_TIMEOUT LONG_MAX	/* no deadline */
#endif

/* Accepted and ignored by prepare_to_swait_exclusive(). */
#ifndef TASK_UNINTERRUPTIBLE
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define TASK_KILLABLE		0x0102
#define TASK_IDLE		0x0402
#endif

/*
 * Jiffies.  Every timeout here is in milliseconds, so a jiffy is one: HZ
 * is 1000 and the conversions are exact, which keeps "2 * HZ" and
 * msecs_to_jiffies(100) meaning what they mean in the kernel.
 */
#ifndef HZ
#define HZ 1000
#endif

static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	return m;
}

static inline unsigned int jiffies_to_msecs(const unsigned long j)
{
	return j > UINT_MAX ? UINT_MAX : (unsigned int)j;
}

/* Rounded up, as the kernel rounds: a wait is never shorter than asked. */
static inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	return ((unsigned long)u + 999) / 1000;
}

/* ------------------------------------------------------------ swait queues */

#define swait_queue_head swait_head
#define swait_queue swait_waiter

#define __SWAIT_QUEUE_HEAD_INITIALIZER(name) SWAIT_HEAD_INITIALIZER

#define DECLARE_SWAIT_QUEUE_HEAD(name)					\
	struct swait_queue_head name = SWAIT_HEAD_INITIALIZER
#define DECLARE_SWAIT_QUEUE_HEAD_ONSTACK(name) DECLARE_SWAIT_QUEUE_HEAD(name)
#define DECLARE_SWAITQUEUE(name)					\
	struct swait_queue name = SWAIT_WAITER_INITIALIZER

/* A macro in the kernel (for lockdep); a function here.  Never blocks. */
static inline void init_swait_queue_head(struct swait_queue_head *q)
{
	swait_head_init(q);
}

/* Wake the longest waiter, if any.  Never blocks. */
static inline void swake_up_one(struct swait_queue_head *q)
{
	swait_wake_one(q);
}

/* Wake every waiter queued when the call starts.  Never blocks. */
static inline void swake_up_all(struct swait_queue_head *q)
{
	swait_wake_all(q);
}

/*
 * swait_active(q) is libswait's own function: same name, same meaning (a
 * lockless peek, no barrier), and q is already a struct swait_head.
 */

/* A full barrier, then swait_active().  Never blocks. */
static inline bool swq_has_sleeper(struct swait_queue_head *q)
{
	return swait_has_sleeper(q);
}

/* Queue wait at the tail of q; state is ignored (see above). */
static inline void prepare_to_swait_exclusive(struct swait_queue_head *q,
					      struct swait_queue *wait,
					      int state)
{
	(void)state;
	swait_prepare(q, wait);
}

/* Dequeue wait if still queued, passing on a wake it did not use. */
static inline void finish_swait(struct swait_queue_head *q,
				struct swait_queue *wait)
{
	swait_finish(q, wait);
}

/* ---------------------------------------------------- timeout arithmetic */

/*
 * Turn a kernel-style timeout in milliseconds into an absolute deadline on
 * CLOCK_MONOTONIC in *dl.  Returns dl, or NULL for "no deadline"
 * (MAX_SCHEDULE_TIMEOUT, or more milliseconds than int64_t nanoseconds
 * hold: 292 years).
 */
static inline const struct timespec *
swait_kernel_deadline_ms(struct timespec *dl, unsigned long ms)
{
	unsigned long long wide = ms;	/* 32-bit long: no type-limits warning */

	if (ms == (unsigned long)MAX_SCHEDULE_TIMEOUT ||
	    wide >= (unsigned long long)INT64_MAX / 1000000u)
		return NULL;
	/* Cannot fail: the clock is valid and the offset is not negative. */
	(void)swait_deadline_after(dl, CLOCK_MONOTONIC, (int64_t)ms * 1000000);
	return dl;
}

/* Milliseconds left until dl, rounded up, at least 1 (the kernel's ">= 1"). */
static inline long swait_kernel_left_ms(const struct timespec *dl)
{
	struct timespec now;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = ((int64_t)dl->tv_sec - (int64_t)now.tv_sec) * 1000000000 +
	     (dl->tv_nsec - now.tv_nsec);
	if (ns <= 0)
		return 1;
	return (long)((ns + 999999) / 1000000);
}

/*
 * The loop behind every millisecond wait: the kernel's return contract on
 * top of swait_event_generic().  head is a pointer; flags as for
 * swait_sleep().  Returns 0 on timeout, -EINTR if interrupted, else the
 * milliseconds left (>= 1), or timeout itself for MAX_SCHEDULE_TIMEOUT.
 */
#define swait_kernel_event_ms(head, cond, flags, timeout)		\
	__extension__ ({						\
		long swait_kt_ = (long)(timeout);			\
		if (swait_kt_ < 0)					\
			swait_kt_ = 0;					\
		if (cond) {						\
			if (swait_kt_ == 0)				\
				swait_kt_ = 1;				\
		} else if (swait_kt_ != 0) {				\
			struct timespec swait_kdl_;			\
			const struct timespec *swait_kdp_ =		\
				swait_kernel_deadline_ms(&swait_kdl_,	\
					(unsigned long)swait_kt_);	\
			int swait_ke_ = swait_event_generic(head, cond,	\
					flags, CLOCK_MONOTONIC,		\
					swait_kdp_);			\
			if (swait_ke_ == ETIMEDOUT)			\
				swait_kt_ = 0;				\
			else if (swait_ke_ != 0)			\
				swait_kt_ = -swait_ke_;			\
			else if (swait_kdp_)				\
				swait_kt_ = swait_kernel_left_ms(swait_kdp_); \
		}							\
		swait_kt_;						\
	})

/*
 * The absolute-deadline loop behind the *_ts macros: 1 once cond is true,
 * 0 when the deadline passed first, -EINTR if interrupted, -EINVAL for a
 * bad clock or deadline.
 */
#define swait_kernel_event_ts(head, cond, flags, clock, deadline)	\
	__extension__ ({						\
		int swait_ke_ = swait_event_generic(head, cond, flags,	\
						    clock, deadline);	\
		swait_ke_ == 0 ? 1L :					\
			swait_ke_ == ETIMEDOUT ? 0L : -(long)swait_ke_;	\
	})

/* ------------------------------------------------------------ event macros */

/*
 * All take the head by name, as the kernel's do (wq, not &wq).  cond may be
 * evaluated any number of times.
 *
 * swait_event_exclusive(wq, cond)
 *	Sleep until cond is true.  A statement.
 * swait_event_interruptible_exclusive(wq, cond)
 *	0 once cond is true, or -EINTR (the kernel: -ERESTARTSYS).
 * swait_event_timeout_exclusive(wq, cond, timeout_ms)
 *	0 if cond is still false after timeout_ms, else the milliseconds left
 *	(>= 1).  A long.
 * swait_event_interruptible_timeout_exclusive(wq, cond, timeout_ms)
 *	As above, or -EINTR.
 * swait_event_idle_exclusive, swait_event_idle_timeout_exclusive
 *	The same as the uninterruptible forms (no load accounting here).
 * swait_event_timeout_exclusive_ts(wq, cond, clock, deadline)
 * swait_event_interruptible_timeout_exclusive_ts(wq, cond, clock, deadline)
 *	Not in the kernel: an absolute deadline (const struct timespec *) on
 *	clock, CLOCK_MONOTONIC or CLOCK_REALTIME.  1 once cond is true, 0 when
 *	the deadline passed first, -EINTR (interruptible form only), or
 *	-EINVAL for a bad clock or deadline.
 */
#define swait_event_exclusive(wq, cond)					\
	swait_event(&(wq), cond)

#define swait_event_interruptible_exclusive(wq, cond)			\
	(-swait_event_interruptible(&(wq), cond))

#define swait_event_timeout_exclusive(wq, cond, timeout)		\
	swait_kernel_event_ms(&(wq), cond, 0, timeout)

#define swait_event_interruptible_timeout_exclusive(wq, cond, timeout)	\
	swait_kernel_event_ms(&(wq), cond, SWAIT_INTERRUPTIBLE, timeout)

#define swait_event_idle_exclusive(wq, cond)				\
	swait_event_exclusive(wq, cond)

#define swait_event_idle_timeout_exclusive(wq, cond, timeout)		\
	swait_event_timeout_exclusive(wq, cond, timeout)

#define swait_event_timeout_exclusive_ts(wq, cond, clock, deadline)	\
	swait_kernel_event_ts(&(wq), cond, 0, clock, deadline)

#define swait_event_interruptible_timeout_exclusive_ts(wq, cond, clock,	\
						       deadline)	\
	swait_kernel_event_ts(&(wq), cond, SWAIT_INTERRUPTIBLE, clock,	\
			      deadline)

/* ------------------------------------------------------------- completions */

/*
 * The kernel's struct completion.  c is the libswait completion; kernel
 * code that read x->done must use completion_done() instead.
 */
struct completion {
	struct swait_completion c;
};

#define COMPLETION_INITIALIZER(work) { SWAIT_COMPLETION_INITIALIZER }
#define DECLARE_COMPLETION(work)					\
	struct completion work = COMPLETION_INITIALIZER(work)
#define DECLARE_COMPLETION_ONSTACK(work) DECLARE_COMPLETION(work)
/* The kernel's form: struct completion done = ..._ONSTACK(done); */
#define COMPLETION_INITIALIZER_ONSTACK(work)				\
	(*__extension__ ({ init_completion(&(work)); &(work); }))

static inline void init_completion(struct completion *x)
{
	swait_completion_init(&x->c);
}

/* Not done again.  Must not race with waits or completes. */
static inline void reinit_completion(struct completion *x)
{
	swait_completion_reinit(&x->c);
}

/* Post one event, wake one waiter.  Never blocks. */
static inline void complete(struct completion *x)
{
	swait_complete(&x->c);
}

/* Done for every present and future waiter.  Never blocks. */
static inline void complete_all(struct completion *x)
{
	swait_complete_all(&x->c);
}

/* Wait for and consume one event. */
static inline void wait_for_completion(struct completion *x)
{
	swait_completion_wait(&x->c);
}

/* 0 with an event consumed, or -EINTR (the kernel: -ERESTARTSYS). */
static inline int wait_for_completion_interruptible(struct completion *x)
{
	return -swait_completion_wait_interruptible(&x->c);
}

/*
 * The waits with a timeout consume an event exactly as
 * swait_completion_wait*() do: by swait_completion_try_wait() as the
 * condition of a wait on the completion's own head.
 */

/* 0 on timeout, else the milliseconds left (>= 1), an event consumed. */
static inline unsigned long
wait_for_completion_timeout(struct completion *x, unsigned long timeout)
{
	long left;

	if (timeout > (unsigned long)MAX_SCHEDULE_TIMEOUT)
		timeout = MAX_SCHEDULE_TIMEOUT;
	left = swait_kernel_event_ms(&x->c.wait,
				     swait_completion_try_wait(&x->c), 0,
				     timeout);
	return (unsigned long)left;
}

/* As wait_for_completion_timeout(), or -EINTR. */
static inline long
wait_for_completion_interruptible_timeout(struct completion *x,
					  unsigned long timeout)
{
	if (timeout > (unsigned long)MAX_SCHEDULE_TIMEOUT)
		timeout = MAX_SCHEDULE_TIMEOUT;
	return swait_kernel_event_ms(&x->c.wait,
				     swait_completion_try_wait(&x->c),
				     SWAIT_INTERRUPTIBLE, timeout);
}

/*
 * Killable waits.  In the kernel only a fatal signal ends them; in user
 * space a fatal signal ends the process, so they are the uninterruptible
 * waits and never return -ERESTARTSYS.
 */
static inline int wait_for_completion_killable(struct completion *x)
{
	wait_for_completion(x);
	return 0;
}

static inline long
wait_for_completion_killable_timeout(struct completion *x,
				     unsigned long timeout)
{
	return (long)wait_for_completion_timeout(x, timeout);
}

/* The _io waits account the sleep as I/O wait in the kernel; no more. */
static inline void wait_for_completion_io(struct completion *x)
{
	wait_for_completion(x);
}

static inline unsigned long
wait_for_completion_io_timeout(struct completion *x, unsigned long timeout)
{
	return wait_for_completion_timeout(x, timeout);
}

/*
 * A wait in the task state given: interruptible if state has
 * TASK_INTERRUPTIBLE (0 or -EINTR), else uninterruptible (0); TASK_KILLABLE
 * is uninterruptible, as above.
 */
static inline int wait_for_completion_state(struct completion *x,
					    unsigned int state)
{
	if (state & TASK_INTERRUPTIBLE)
		return wait_for_completion_interruptible(x);
	wait_for_completion(x);
	return 0;
}

/* Consume an event if one is posted; true if one was.  Never blocks. */
static inline bool try_wait_for_completion(struct completion *x)
{
	return swait_completion_try_wait(&x->c);
}

/* Whether an event is posted (none consumed).  Never blocks. */
static inline bool completion_done(struct completion *x)
{
	return swait_completion_done(&x->c);
}

#ifdef __cplusplus
}
#endif

#endif /* SWAIT_KERNEL_H */
