// SPDX-License-Identifier: MIT
/*
 * kernel.c - the part of <swait/kernel.h> a header cannot hold: the
 * calling thread's task (current), its state, schedule_timeout()'s sleep,
 * the record of signals a wait reports, and the locks that
 * raw_spin_lock() takes on any address (a head's .lock included).
 *
 * Rules (swait_kernel(3), SIGNALS, says the same to users):
 *
 * K1  An interruptible section opens when the thread's state gains
 *     TASK_INTERRUPTIBLE while none is open: every signal is blocked and
 *     the record (task->swait_signalled) is cleared.  So a signal that
 *     arrives between prepare_to_swait() (or set_current_state()) and the
 *     sleep stays pending in the kernel's own sense (sigpending()), where
 *     signal_pending() and schedule() see it, as the kernel's do.
 * K2  The sleep of an interruptible schedule() runs with the mask of
 *     before the section, always with a deadline (a far one for
 *     MAX_SCHEDULE_TIMEOUT), and without the spin: a handler that
 *     interrupts it gives EINTR under SA_RESTART too, and sets the record.
 *     The signals are blocked again before schedule() returns.
 * K3  In a section, signal_pending(current) is the record, or a signal
 *     pending and not blocked by the mask of before the section whose
 *     disposition is a handler (SIG_IGN and SIG_DFL signals are never
 *     "pending": the first is discarded, the second ends the process).
 * K4  The section closes (the mask of before it is restored, so pending
 *     handlers run then: the kernel's delivery on the way back to user
 *     space) at finish_swait(), __finish_swait() and an explicit
 *     set_current_state(TASK_RUNNING); these also clear the record, which
 *     the wait has reported by then (consumed, not pending for the next
 *     wait).  A schedule() with no queue prepared closes it when it
 *     returns but keeps the record, for msleep_interruptible()'s
 *     "signal_pending(current)" right after; the next section clears it.
 * K5  One window is left: a signal arriving in the microseconds between
 *     schedule()'s last check and its futex system call (after the mask is
 *     restored) runs its handler there and is seen only at the next signal
 *     or wake; FUTEX_WAIT cannot restore a mask atomically as the
 *     kernel's runqueue lock makes the check and the sleep one step.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "swait/kernel.h"

/* This thread's task, and the mask of before its open section. */
static __thread struct task_struct swait_task;
static __thread sigset_t swait_saved_mask;

SWAIT_EXPORT struct task_struct *swait_kernel_current(void)
{
	struct task_struct *t = &swait_task;

	if (!t->swait_inited) {
		swait_head_init(&t->swait_self);
		swait_waiter_init(&t->swait_selfw);
		t->pid = (int)syscall(SYS_gettid);
		if (pthread_getname_np(pthread_self(), t->comm,
				       sizeof(t->comm)) != 0)
			t->comm[0] = '\0';
		t->swait_inited = 1;
	}
	return t;
}

static void open_section(struct task_struct *t)
{
	sigset_t all;

	if (t->swait_section)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &swait_saved_mask);
	t->swait_section = 1;
	t->swait_signalled = 0;
}

/* K3: a signal pending that the mask of before lets through to a handler. */
static bool os_signal_pending(void)
{
	sigset_t pend;
	int sig;

	if (sigpending(&pend) != 0)
		return false;
	for (sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (sigismember(&pend, sig) != 1 ||
		    sigismember(&swait_saved_mask, sig) == 1)
			continue;
		if (sigaction(sig, NULL, &sa) != 0)
			continue;
		if ((sa.sa_flags & SA_SIGINFO) ||
		    (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL))
			return true;
	}
	return false;
}

/* K4: keep says whether the record outlives the section. */
static void close_section(struct task_struct *t, bool keep)
{
	if (t->swait_section) {
		if (os_signal_pending())
			t->swait_signalled = 1;
		t->swait_section = 0;
		pthread_sigmask(SIG_SETMASK, &swait_saved_mask, NULL);
	}
	if (!keep)
		t->swait_signalled = 0;
}

static void store_state(struct task_struct *t, unsigned int state)
{
	/*
	 * The kernel's smp_store_mb(): the state before the condition.  No
	 * wake here depends on it (wakes go through the queue, whose prepare
	 * has O1's fence); full order is kept for kernel code that reads
	 * another task's ->state, as the kernel's set_current_state() gives.
	 */
	__atomic_store_n(&t->__state, state, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->state, (long)state, __ATOMIC_SEQ_CST);
}

SWAIT_EXPORT void swait_kernel_set_state(unsigned int state)
{
	struct task_struct *t = swait_kernel_current();

	if (state & TASK_INTERRUPTIBLE)
		open_section(t);
	if (state == TASK_RUNNING) {
		if (t->swait_self_queued) {
			swait_finish(&t->swait_self, &t->swait_selfw);
			t->swait_self_queued = 0;
		}
		close_section(t, false);
	} else if (!t->swait_q) {
		/*
		 * No queue prepared: the sleep is wake_up_process()'s, on
		 * this task's own head.  Queued before the caller tests its
		 * condition, as any waiter is (the enqueue's barrier).
		 */
		swait_prepare(&t->swait_self, &t->swait_selfw);
		t->swait_self_queued = 1;
	}
	store_state(t, state);
}

SWAIT_EXPORT void swait_kernel_prepare(struct swait_head *q,
				       struct swait_waiter *w)
{
	struct task_struct *t = swait_kernel_current();

	if (t->swait_self_queued) {
		swait_finish(&t->swait_self, &t->swait_selfw);
		t->swait_self_queued = 0;
	}
	swait_prepare(q, w);
	t->swait_q = q;
	t->swait_w = w;
}

SWAIT_EXPORT void swait_kernel_finish(struct swait_head *q,
				      struct swait_waiter *w, bool running)
{
	struct task_struct *t = swait_kernel_current();

	swait_finish(q, w);
	if (t->swait_w == w)
		t->swait_q = NULL, t->swait_w = NULL;
	close_section(t, false);
	if (running)
		store_state(t, TASK_RUNNING);
}

SWAIT_EXPORT int swait_kernel_signal_pending(struct task_struct *p)
{
	struct task_struct *t = swait_kernel_current();

	if (p != t)
		return __atomic_load_n(&p->swait_signalled, __ATOMIC_RELAXED);
	if (t->swait_signalled)
		return 1;
	return t->swait_section && os_signal_pending();
}

SWAIT_EXPORT long swait_kernel_prepare_event(struct swait_head *q,
					     struct swait_waiter *w,
					     unsigned int state)
{
	struct task_struct *t = swait_kernel_current();

	if (state & TASK_INTERRUPTIBLE) {
		open_section(t);
		if (swait_kernel_signal_pending(t)) {
			/* The kernel's list_del_init(); the caller finishes. */
			swait_finish(q, w);
			return -SWAIT_KERNEL_ERESTART;
		}
	}
	swait_kernel_prepare(q, w);
	swait_kernel_set_state(state);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * A day: the deadline that stands for "none" in an interruptible sleep, and
 * the longest one sleep waits (a longer timeout sleeps again).
 */
#define FAR_MS (24 * 3600 * 1000L)

SWAIT_EXPORT long swait_kernel_schedule_timeout(long timeout)
{
	struct task_struct *t = swait_kernel_current();
	unsigned int state = t->__state;
	bool intr = state & TASK_INTERRUPTIBLE;
	bool forever = timeout == MAX_SCHEDULE_TIMEOUT;
	struct swait_head *q = t->swait_q;
	struct swait_waiter *w = t->swait_w;
	bool self = false;
	int64_t start, left;
	int r;

	if (timeout < 0) {
		/* The kernel logs "schedule_timeout: wrong timeout value". */
		store_state(t, TASK_RUNNING);
		return 0;
	}
	if (state == TASK_RUNNING)
		return timeout;	/* schedule() returns at once */
	if (!q) {
		q = &t->swait_self;
		w = &t->swait_selfw;
		self = true;
	}
	/*
	 * The time left is timeout less the time elapsed, never start +
	 * timeout: a finite timeout may be as large as LONG_MAX - 1 (the
	 * kernel's MAX_JIFFY_OFFSET, LONG_MAX / 2 - 1, is a common one),
	 * which overflows that sum, and its nanoseconds overflow the
	 * deadline's arithmetic (swait_deadline_after() refused them, and
	 * every wait spun).  So one sleep waits at most FAR_MS, and one that
	 * times out with time left sleeps again.
	 */
	start = now_ms();
	for (;;) {
		struct timespec dl;
		const struct timespec *dlp = NULL;
		int64_t ms = forever ? FAR_MS : timeout - (now_ms() - start);

		if (intr && swait_kernel_signal_pending(t))
			break;	/* the kernel's signal_pending_state() */
		if (ms < 0)
			ms = 0;
		if (ms > FAR_MS)
			ms = FAR_MS;
		if (intr || !forever) {
			swait_deadline_after(&dl, CLOCK_MONOTONIC, ms * 1000000);
			dlp = &dl;
		}
		if (intr)	/* K2 */
			pthread_sigmask(SIG_SETMASK, &swait_saved_mask, NULL);
		r = swait_sleep(q, w, intr ? SWAIT_INTERRUPTIBLE | SWAIT_NOSPIN
				: 0, CLOCK_MONOTONIC, dlp);
		if (intr) {
			sigset_t all;

			sigfillset(&all);
			pthread_sigmask(SIG_BLOCK, &all, NULL);
		}
		if (r == EINTR)
			t->swait_signalled = 1;
		if (r == ETIMEDOUT &&
		    (forever || timeout - (now_ms() - start) > 0))
			continue;
		break;
	}
	store_state(t, TASK_RUNNING);
	if (self) {
		swait_finish(q, w);
		t->swait_self_queued = 0;
		close_section(t, true);	/* K4 */
	}
	if (forever)
		return timeout;
	left = timeout - (now_ms() - start);
	return left > 0 ? (long)left : 0;
}

SWAIT_EXPORT int swait_kernel_wake_up_process(struct task_struct *p)
{
	int queued = swait_active(&p->swait_self);

	swait_wake_one(&p->swait_self);
	return queued;
}

/*
 * raw_spin_lock() on any address: a stripe of recursive mutexes keyed by
 * it.  Recursive, because two locks one thread nests may share a stripe.
 */
#define STRIPES 64u
static pthread_mutex_t stripe[STRIPES];
static pthread_once_t stripe_once = PTHREAD_ONCE_INIT;

static void stripe_init(void)
{
	pthread_mutexattr_t a;
	unsigned i;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	for (i = 0; i < STRIPES; i++)
		pthread_mutex_init(&stripe[i], &a);
	pthread_mutexattr_destroy(&a);
}

static pthread_mutex_t *stripe_of(const volatile void *lock)
{
	uintptr_t a = (uintptr_t)lock;

	pthread_once(&stripe_once, stripe_init);
	a ^= a >> 12;
	return &stripe[(a >> 3) % STRIPES];
}

SWAIT_EXPORT void swait_kernel_lock(const volatile void *lock)
{
	pthread_mutex_lock(stripe_of(lock));
}

SWAIT_EXPORT void swait_kernel_unlock(const volatile void *lock)
{
	pthread_mutex_unlock(stripe_of(lock));
}
