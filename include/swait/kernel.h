/* SPDX-License-Identifier: MIT */
/*
 * swait/kernel.h - the Linux kernel's swait, completion and task names, on
 * libswait
 *
 * Kernel code that uses <linux/swait.h>, <linux/completion.h> and the
 * scheduler calls around them (jiffies, current, set_current_state(),
 * schedule_timeout(), signal_pending()) compiles against this header
 * unchanged and behaves as in the kernel, so that a driver's logic, a
 * kthread's loop or kernel/sched/completion.c itself can be unit-tested
 * with threads in user space.  Include it instead of the kernel headers;
 * link with libswait (the task state and schedule() live in the library,
 * symbol node SWAIT_0.6).  swait_kernel(3) is the manual: the table of
 * real kernel functions its tests compile, and every difference from the
 * kernel with its reason.  In short:
 *
 *   Time.  A jiffy is a millisecond of CLOCK_MONOTONIC: HZ is 1000 (an
 *   includer's other HZ is an error), jiffies starts 5 minutes before a
 *   32-bit wrap as the kernel's does, and every timeout counts jiffies.
 *
 *   Tasks.  current is the calling thread's task.  schedule() and
 *   schedule_timeout() sleep on the queue the last prepare_to_swait*() or
 *   __prepare_to_swait() prepared, or, with none prepared, until
 *   wake_up_process(); in TASK_RUNNING they return at once.
 *
 *   Signals.  A state with TASK_INTERRUPTIBLE blocks every signal until
 *   the sleep, which restores the thread's mask: a signal that arrives
 *   before the sleep stays pending, signal_pending(current) sees it and
 *   schedule() does not sleep.  A handler that runs during the sleep ends
 *   it even under SA_RESTART and is recorded for signal_pending().
 *   finish_swait(), __finish_swait() and set_current_state(TASK_RUNNING)
 *   restore the mask (pending handlers run then, as on the kernel's way
 *   back to user space) and clear the record: a signal is reported by one
 *   wait only.  Fatal signals end the process, so TASK_KILLABLE waits are
 *   uninterruptible.  swake_up_one(), swake_up_all(), complete() and
 *   complete_all() are async-signal-safe, as the kernel's may run in a
 *   hard interrupt; nothing else here is.
 *
 *   ERESTARTSYS is the includer's if it defines one (before or after this
 *   header; the macros read it where they expand), else 512 as in
 *   <linux/errno.h>.  Called through a pointer, the interruptible
 *   completion waits return -512.
 *
 *   Locks.  raw_spin_lock*() on any address (a head's .lock, a
 *   completion's wait.lock, a raw_spinlock_t) takes a recursive mutex
 *   chosen by the address; it serialises kernel code that takes it, while
 *   the queue calls take the head's own lock inside (so swake_up_locked()
 *   and complete() may run with it held or not).  It masks no signals.
 *
 *   swake_up_locked() takes one argument (kernels before 6.5) or two
 *   (6.5 and later: the wake flags, ignored); the argument count picks.
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

/*
 * An enumerator, not a macro: an includer's later #define ERESTARTSYS
 * replaces it wherever the macros below expand, without a "redefined".
 */
#ifndef ERESTARTSYS
enum { ERESTARTSYS = 512 };
#endif
/* What the functions (not the macros) return when interrupted: negated. */
#define SWAIT_KERNEL_ERESTART 512L

#ifndef MAX_SCHEDULE_TIMEOUT
#define MAX_SCHEDULE_TIMEOUT LONG_MAX	/* no deadline */
#endif
/* The kernel's longest finite timeout, which code passes for "no limit". */
#ifndef MAX_JIFFY_OFFSET
#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)
#endif

#ifndef TASK_RUNNING
#define TASK_RUNNING		0x0000
#define TASK_INTERRUPTIBLE	0x0001
#define TASK_UNINTERRUPTIBLE	0x0002
#define TASK_WAKEKILL		0x0100
#define TASK_NOLOAD		0x0400
#define TASK_KILLABLE		(TASK_WAKEKILL | TASK_UNINTERRUPTIBLE)
#define TASK_IDLE		(TASK_UNINTERRUPTIBLE | TASK_NOLOAD)
#define TASK_NORMAL		(TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE)
#endif

/* ---------------------------------------------------------------- jiffies */

#ifndef HZ
#define HZ 1000
#elif HZ != 1000
#error "<swait/kernel.h> counts jiffies in milliseconds: HZ must be 1000"
#endif

/* The kernel's INITIAL_JIFFIES: a 32-bit jiffies wraps 5 minutes in. */
#define SWAIT_KERNEL_INITIAL_JIFFIES					\
	((unsigned long)(unsigned int)(-300 * HZ))

/* The clock read into this thread's copy, so that jiffies is an lvalue. */
static inline volatile unsigned long *swait_kernel_jiffies(void)
{
	static __thread volatile unsigned long now;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = SWAIT_KERNEL_INITIAL_JIFFIES + (unsigned long)ts.tv_sec * 1000u +
	      (unsigned long)(ts.tv_nsec / 1000000);
	return &now;
}

#define jiffies (*swait_kernel_jiffies())

static inline uint64_t get_jiffies_64(void) { return jiffies; }

/* Wrap-safe comparisons of two jiffies values, as the kernel's. */
#define time_after(a, b)	((long)((unsigned long)(b) - (unsigned long)(a)) < 0)
#define time_before(a, b)	time_after(b, a)
#define time_after_eq(a, b)	((long)((unsigned long)(a) - (unsigned long)(b)) >= 0)
#define time_before_eq(a, b)	time_after_eq(b, a)
#define time_in_range(a, b, c)	(time_after_eq(a, b) && time_before_eq(a, c))
#define time_is_before_jiffies(a)	time_after(jiffies, a)
#define time_is_after_jiffies(a)	time_before(jiffies, a)

/* As the kernel's: negative (as an int) means no limit, MAX_JIFFY_OFFSET. */
static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	return (int)m < 0 ? (unsigned long)MAX_JIFFY_OFFSET : m;
}

/* As the kernel's at HZ 1000: the low 32 bits, wrapping as jiffies does. */
static inline unsigned int jiffies_to_msecs(const unsigned long j)
{
	return (unsigned int)j;
}

/* Rounded up, as the kernel rounds: a wait is never shorter than asked. */
static inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	return ((unsigned long)u + 999) / 1000;
}

/* ------------------------------------------------------------------ locks */

/* Kernel code's own raw spinlocks; the lock is keyed by address alone. */
typedef struct {
	unsigned int swait_unused;
} raw_spinlock_t;

#define __RAW_SPIN_LOCK_UNLOCKED(name) { 0 }
#define DEFINE_RAW_SPINLOCK(name) raw_spinlock_t name = { 0 }
#define raw_spin_lock_init(lock) ((void)(lock))

void swait_kernel_lock(const volatile void *lock);
void swait_kernel_unlock(const volatile void *lock);

#define raw_spin_lock(lock)		swait_kernel_lock(lock)
#define raw_spin_unlock(lock)		swait_kernel_unlock(lock)
#define raw_spin_lock_irq(lock)		swait_kernel_lock(lock)
#define raw_spin_unlock_irq(lock)	swait_kernel_unlock(lock)
#define raw_spin_lock_irqsave(lock, flags)				\
	do {								\
		(flags) = 0;						\
		swait_kernel_lock(lock);				\
	} while (0)
#define raw_spin_unlock_irqrestore(lock, flags)				\
	do {								\
		(void)(flags);						\
		swait_kernel_unlock(lock);				\
	} while (0)

/* ------------------------------------------------------------------ tasks */

/*
 * The calling thread's task.  state and __state are the kernel's (before
 * and since 5.14), pid is the thread id, comm its name; the swait_*
 * fields are libswait's.
 */
struct task_struct {
	long state;
	unsigned int __state;
	int pid;
	char comm[16];
	struct swait_head swait_self;	/* wake_up_process() wakes it */
	struct swait_waiter swait_selfw;
	struct swait_head *swait_q;	/* prepared, until finished */
	struct swait_waiter *swait_w;
	unsigned char swait_self_queued;
	unsigned char swait_section;	/* signals blocked: interruptible */
	unsigned char swait_signalled;	/* a handler ended a sleep */
	unsigned char swait_inited;
};

struct task_struct *swait_kernel_current(void);
void swait_kernel_set_state(unsigned int state);
long swait_kernel_schedule_timeout(long timeout);
int swait_kernel_signal_pending(struct task_struct *p);
int swait_kernel_wake_up_process(struct task_struct *p);
void swait_kernel_prepare(struct swait_head *q, struct swait_waiter *w);
void swait_kernel_finish(struct swait_head *q, struct swait_waiter *w,
			 bool running);
long swait_kernel_prepare_event(struct swait_head *q, struct swait_waiter *w,
				unsigned int state);

#define current (swait_kernel_current())

/* Both with the kernel's full barrier after the store. */
#define set_current_state(state) swait_kernel_set_state(state)
#define __set_current_state(state) swait_kernel_set_state(state)

static inline int signal_pending(struct task_struct *p)
{
	return swait_kernel_signal_pending(p);
}

/* A fatal signal ends the process before anyone could ask. */
static inline int fatal_signal_pending(struct task_struct *p)
{
	(void)p;
	return 0;
}

static inline int __fatal_signal_pending(struct task_struct *p)
{
	return fatal_signal_pending(p);
}

static inline int signal_pending_state(unsigned int state,
				       struct task_struct *p)
{
	if (!(state & (TASK_INTERRUPTIBLE | TASK_WAKEKILL)))
		return 0;
	if (!signal_pending(p))
		return 0;
	return (state & TASK_INTERRUPTIBLE) || __fatal_signal_pending(p);
}

/* Functions, not macros: completion.c passes schedule_timeout by address. */
static inline long schedule_timeout(long timeout)
{
	return swait_kernel_schedule_timeout(timeout);
}

static inline long io_schedule_timeout(long timeout)
{
	return schedule_timeout(timeout);
}

static inline void schedule(void)
{
	(void)schedule_timeout(MAX_SCHEDULE_TIMEOUT);
}

static inline void io_schedule(void)
{
	schedule();
}

static inline long schedule_timeout_interruptible(long timeout)
{
	__set_current_state(TASK_INTERRUPTIBLE);
	return schedule_timeout(timeout);
}

static inline long schedule_timeout_killable(long timeout)
{
	__set_current_state(TASK_KILLABLE);
	return schedule_timeout(timeout);
}

static inline long schedule_timeout_uninterruptible(long timeout)
{
	__set_current_state(TASK_UNINTERRUPTIBLE);
	return schedule_timeout(timeout);
}

static inline long schedule_timeout_idle(long timeout)
{
	__set_current_state(TASK_IDLE);
	return schedule_timeout(timeout);
}

/* Wakes p if it sleeps with no queue prepared; 1 if it was about to. */
static inline int wake_up_process(struct task_struct *p)
{
	return swait_kernel_wake_up_process(p);
}

#define might_sleep() do { } while (0)

/* ------------------------------------------------------------ swait queues */

#define swait_queue_head swait_head
#define swait_queue swait_waiter

#define __SWAIT_QUEUE_HEAD_INITIALIZER(name) SWAIT_HEAD_INITIALIZER

#define DECLARE_SWAIT_QUEUE_HEAD(name)					\
	struct swait_queue_head name = SWAIT_HEAD_INITIALIZER
#define DECLARE_SWAIT_QUEUE_HEAD_ONSTACK(name) DECLARE_SWAIT_QUEUE_HEAD(name)
#define DECLARE_SWAITQUEUE(name)					\
	struct swait_queue name = SWAIT_WAITER_INITIALIZER

/* A macro in the kernel (for lockdep).  Never blocks. */
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
 * The "locked" forms: the same calls, which take the head's own lock
 * inside (raw_spin_lock(&q->lock) is the kernel face's lock, above).
 */
static inline void swait_kernel_wake_locked1(struct swait_queue_head *q)
{
	swait_wake_one(q);
}

static inline void swait_kernel_wake_locked2(struct swait_queue_head *q,
					     int wake_flags)
{
	(void)wake_flags;
	swait_wake_one(q);
}

#define SWAIT_KERNEL_ARG3(a, b, c, ...) c
#define swake_up_locked(...)						\
	SWAIT_KERNEL_ARG3(__VA_ARGS__, swait_kernel_wake_locked2,	\
			  swait_kernel_wake_locked1, 0)(__VA_ARGS__)

static inline void swake_up_all_locked(struct swait_queue_head *q)
{
	swait_wake_all(q);
}

/* swait_active(q) is libswait's own, with the kernel's meaning. */

/* A full barrier, then swait_active().  Never blocks. */
static inline bool swq_has_sleeper(struct swait_queue_head *q)
{
	return swait_has_sleeper(q);
}

/* Queue wait at the tail of q for the next schedule(); state unchanged. */
static inline void __prepare_to_swait(struct swait_queue_head *q,
				      struct swait_queue *wait)
{
	swait_kernel_prepare(q, wait);
}

/* __prepare_to_swait(), then set_current_state(state). */
static inline void prepare_to_swait_exclusive(struct swait_queue_head *q,
					      struct swait_queue *wait,
					      int state)
{
	swait_kernel_prepare(q, wait);
	set_current_state((unsigned int)state);
}

/* -ERESTARTSYS, not queued, if a signal is pending for state; else 0. */
static inline long prepare_to_swait_event(struct swait_queue_head *q,
					  struct swait_queue *wait, int state)
{
	return swait_kernel_prepare_event(q, wait, (unsigned int)state);
}

#define prepare_to_swait_event(q, wait, state)				\
	__extension__ ({						\
		long swait_pe_ = prepare_to_swait_event(q, wait, state);	\
		swait_pe_ == -SWAIT_KERNEL_ERESTART ?			\
			-(long)(ERESTARTSYS) : swait_pe_;		\
	})

/*
 * Set TASK_RUNNING, dequeue wait if still queued (passing on a wake it
 * did not use) and end the wait's signal section (above), as
 * finish_swait() does: the kernel's two differ only in the lock.
 */
static inline void __finish_swait(struct swait_queue_head *q,
				  struct swait_queue *wait)
{
	swait_kernel_finish(q, wait, true);
}

static inline void finish_swait(struct swait_queue_head *q,
				struct swait_queue *wait)
{
	swait_kernel_finish(q, wait, true);
}

/* ------------------------------------------------------------ event macros */

/*
 * The kernel's ___swait_event(): prepare in state, test cond, give up on
 * a signal pending for state (with intr, a negative long), else sleep
 * with schedule_timeout(); timed tests cond as ___wait_cond_timeout().
 * The value is the time left (timeout itself for MAX_SCHEDULE_TIMEOUT).
 */
#define swait_kernel_wait(wq, cond, state, timeout, timed, intr)	\
	__extension__ ({						\
		long swait_kr_ = (timeout);				\
		struct swait_queue swait_kw_ = SWAIT_WAITER_INITIALIZER; \
		for (;;) {						\
			long swait_ki_ = swait_kernel_prepare_event(	\
					&(wq), &swait_kw_, (state));	\
			bool swait_kc_ = (cond);			\
			if (timed) {					\
				if (swait_kc_ && !swait_kr_)		\
					swait_kr_ = 1;			\
				swait_kc_ = swait_kc_ || !swait_kr_;	\
			}						\
			if (swait_kc_)					\
				break;					\
			if (swait_ki_) {				\
				swait_kr_ = (intr);			\
				break;					\
			}						\
			swait_kr_ = schedule_timeout(swait_kr_);	\
		}							\
		swait_kernel_finish(&(wq), &swait_kw_, true);		\
		swait_kr_;						\
	})

/* The kernel's ___wait_cond_timeout(), on ret. */
#define swait_kernel_cond_timeout(cond, ret)				\
	__extension__ ({						\
		bool swait_ct_ = (cond);				\
		if (swait_ct_ && !(ret))				\
			(ret) = 1;					\
		swait_ct_ || !(ret);					\
	})

#define swait_kernel_untimed(wq, cond, state)				\
	__extension__ ({						\
		long swait_ku_ = 0;					\
		if (!(cond))						\
			swait_ku_ = swait_kernel_wait(wq, cond, state,	\
					MAX_SCHEDULE_TIMEOUT, 0,	\
					-(long)(ERESTARTSYS));		\
		(int)(swait_ku_ < 0 ? swait_ku_ : 0);			\
	})

#define swait_kernel_timed(wq, cond, state, timeout)			\
	__extension__ ({						\
		long swait_kt_ = (long)(timeout);			\
		if (!swait_kernel_cond_timeout(cond, swait_kt_))	\
			swait_kt_ = swait_kernel_wait(wq, cond, state,	\
					swait_kt_, 1,			\
					-(long)(ERESTARTSYS));		\
		swait_kt_;						\
	})

/*
 * All take the head by name (wq, not &wq), evaluate cond any number of
 * times, and are expressions that may also stand as statements.
 *
 * swait_event_exclusive(wq, cond), swait_event_idle_exclusive(wq, cond)
 *	Sleep until cond is true.  void.
 * swait_event_interruptible_exclusive(wq, cond)
 *	0 once cond is true, or -ERESTARTSYS.  int.
 * swait_event_timeout_exclusive(wq, cond, timeout)
 * swait_event_idle_timeout_exclusive(wq, cond, timeout)
 *	0 if cond is still false after timeout jiffies, else the jiffies
 *	left (>= 1).  long.
 * swait_event_interruptible_timeout_exclusive(wq, cond, timeout)
 *	As above, or -ERESTARTSYS.
 * swait_event_timeout_exclusive_ts(wq, cond, clock, deadline)
 * swait_event_interruptible_timeout_exclusive_ts(wq, cond, clock, deadline)
 *	Not in the kernel: an absolute deadline (const struct timespec *) on
 *	clock, CLOCK_MONOTONIC or CLOCK_REALTIME, through swait_event_
 *	generic() (swait_sleep()'s signal rules, not the task's).  1 once
 *	cond is true, 0 when the deadline passed first, -ERESTARTSYS
 *	(interruptible form only), or -EINVAL.
 */
#define swait_event_exclusive(wq, cond)					\
	((void)swait_kernel_untimed(wq, cond, TASK_UNINTERRUPTIBLE))

#define swait_event_idle_exclusive(wq, cond)				\
	((void)swait_kernel_untimed(wq, cond, TASK_IDLE))

#define swait_event_interruptible_exclusive(wq, cond)			\
	swait_kernel_untimed(wq, cond, TASK_INTERRUPTIBLE)

#define swait_event_timeout_exclusive(wq, cond, timeout)		\
	swait_kernel_timed(wq, cond, TASK_UNINTERRUPTIBLE, timeout)

#define swait_event_idle_timeout_exclusive(wq, cond, timeout)		\
	swait_kernel_timed(wq, cond, TASK_IDLE, timeout)

#define swait_event_interruptible_timeout_exclusive(wq, cond, timeout)	\
	swait_kernel_timed(wq, cond, TASK_INTERRUPTIBLE, timeout)

#define swait_kernel_event_ts(head, cond, flags, clock, deadline)	\
	__extension__ ({						\
		int swait_ke_ = swait_event_generic(head, cond, flags,	\
						    clock, deadline);	\
		swait_ke_ == 0 ? 1L : swait_ke_ == ETIMEDOUT ? 0L :	\
			swait_ke_ == EINTR ? -(long)(ERESTARTSYS) :	\
			-(long)swait_ke_;				\
	})

#define swait_event_timeout_exclusive_ts(wq, cond, clock, deadline)	\
	swait_kernel_event_ts(&(wq), cond, 0, clock, deadline)

#define swait_event_interruptible_timeout_exclusive_ts(wq, cond, clock,	\
						       deadline)	\
	swait_kernel_event_ts(&(wq), cond, SWAIT_INTERRUPTIBLE, clock,	\
			      deadline)

/* ------------------------------------------------------------- completions */

/*
 * The kernel's struct completion: done and wait (x->done, x->wait.lock)
 * are the libswait completion's own fields, which c names as a whole.
 * done is written under the head's own lock by complete(): kernel code
 * that writes it itself (completion.c) must not mix with these calls.
 * (__extension__: anonymous members are C11, and this header is C99.)
 */
__extension__ struct completion {
	__extension__ union {
		struct swait_completion c;
		__extension__ struct {
			unsigned int done;
			struct swait_queue_head wait;
		};
	};
};

#define COMPLETION_INITIALIZER(work) { { SWAIT_COMPLETION_INITIALIZER } }
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

/* complete(); the kernel (6.6) prefers the waker's CPU for the wakee. */
static inline void complete_on_current_cpu(struct completion *x)
{
	complete(x);
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

/* 0 on timeout, else the jiffies left (>= 1), an event consumed. */
static inline unsigned long
wait_for_completion_timeout(struct completion *x, unsigned long timeout)
{
	long t = (long)timeout;	/* the kernel's long: past LONG_MAX, < 0 */

	return (unsigned long)swait_kernel_timed(x->c.wait,
			swait_completion_try_wait(&x->c),
			TASK_UNINTERRUPTIBLE, t);
}

/* As above, or -ERESTARTSYS: a task wait in TASK_INTERRUPTIBLE. */
static inline long
wait_for_completion_interruptible_timeout(struct completion *x,
					  unsigned long timeout)
{
	long t = (long)timeout;	/* the kernel's long: past LONG_MAX, < 0 */

	if (swait_kernel_cond_timeout(swait_completion_try_wait(&x->c), t))
		return t;
	return swait_kernel_wait(x->c.wait, swait_completion_try_wait(&x->c),
				 TASK_INTERRUPTIBLE, t, 1,
				 -SWAIT_KERNEL_ERESTART);
}

/* 0 with an event consumed, or -ERESTARTSYS. */
static inline int wait_for_completion_interruptible(struct completion *x)
{
	long r = wait_for_completion_interruptible_timeout(x,
							   MAX_SCHEDULE_TIMEOUT);

	return r < 0 ? (int)r : 0;
}

/*
 * Killable waits: only a fatal signal ends them in the kernel, and in
 * user space a fatal signal ends the process; so they never return
 * -ERESTARTSYS.
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

/* A wait in the task state given (TASK_INTERRUPTIBLE: 0 or -ERESTARTSYS). */
static inline int wait_for_completion_state(struct completion *x,
					    unsigned int state)
{
	if (state & TASK_INTERRUPTIBLE)
		return wait_for_completion_interruptible(x);
	wait_for_completion(x);
	return 0;
}

/*
 * The waits that may be interrupted, once more as macros: the includer's
 * ERESTARTSYS at the point of use (the functions above return -512).
 */
#define swait_kernel_restartsys(type, call)				\
	__extension__ ({						\
		type swait_rs_ = (call);				\
		swait_rs_ == -SWAIT_KERNEL_ERESTART ?			\
			(type)-(long)(ERESTARTSYS) : swait_rs_;		\
	})
#define wait_for_completion_interruptible(x)				\
	swait_kernel_restartsys(int, wait_for_completion_interruptible(x))
#define wait_for_completion_interruptible_timeout(x, t)			\
	swait_kernel_restartsys(long,					\
		wait_for_completion_interruptible_timeout(x, t))
#define wait_for_completion_state(x, state)				\
	swait_kernel_restartsys(int, wait_for_completion_state(x, state))

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
