// SPDX-License-Identifier: MIT
/*
 * completion_5_10.c - kernel/sched/completion.c as of v5.10, reduced:
 * complete(), complete_all(), do_wait_for_common(), __wait_for_common(),
 * wait_for_completion_timeout(), wait_for_completion_interruptible(),
 * try_wait_for_completion(), completion_done(), on <swait/kernel.h>'s
 * struct completion (x->done, x->wait.lock), raw spinlocks,
 * swake_up_locked(), __prepare_to_swait(), __finish_swait(), current,
 * signal_pending_state() and schedule_timeout() passed by address.  The
 * kernel's names are taken over by these definitions (k_ prefix), so the
 * header's own are not used.  Lockdep's complete_acquire/release and
 * lockdep_assert_RT_in_threaded_ctx are empty.
 */
#include "kstub.h"
#include "harness.h"

#undef wait_for_completion_interruptible
#define complete k_complete
#define complete_all k_complete_all
#define wait_for_completion_timeout k_wait_for_completion_timeout
#define wait_for_completion_interruptible k_wait_for_completion_interruptible
#define try_wait_for_completion k_try_wait_for_completion
#define completion_done k_completion_done
#define complete_acquire(x) ((void)(x))
#define complete_release(x) ((void)(x))
#define lockdep_assert_RT_in_threaded_ctx() do { } while (0)

/* ------------------------------------------------- the kernel's code */

void complete(struct completion *x)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&x->wait.lock, flags);

	if (x->done != UINT_MAX)
		x->done++;
	swake_up_locked(&x->wait);
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
}

void complete_all(struct completion *x)
{
	unsigned long flags;

	lockdep_assert_RT_in_threaded_ctx();

	raw_spin_lock_irqsave(&x->wait.lock, flags);
	x->done = UINT_MAX;
	swake_up_all_locked(&x->wait);
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
}

static inline long __sched
do_wait_for_common(struct completion *x,
		   long (*action)(long), long timeout, int state)
{
	if (!x->done) {
		DECLARE_SWAITQUEUE(wait);

		do {
			if (signal_pending_state(state, current)) {
				timeout = -ERESTARTSYS;
				break;
			}
			__prepare_to_swait(&x->wait, &wait);
			__set_current_state(state);
			raw_spin_unlock_irq(&x->wait.lock);
			timeout = action(timeout);
			raw_spin_lock_irq(&x->wait.lock);
		} while (!x->done && timeout);
		__finish_swait(&x->wait, &wait);
		if (!x->done)
			return timeout;
	}
	if (x->done != UINT_MAX)
		x->done--;
	return timeout ?: 1;
}

static inline long __sched
__wait_for_common(struct completion *x,
		  long (*action)(long), long timeout, int state)
{
	might_sleep();

	complete_acquire(x);

	raw_spin_lock_irq(&x->wait.lock);
	timeout = do_wait_for_common(x, action, timeout, state);
	raw_spin_unlock_irq(&x->wait.lock);

	complete_release(x);

	return timeout;
}

static long __sched
wait_for_common(struct completion *x, long timeout, int state)
{
	return __wait_for_common(x, schedule_timeout, timeout, state);
}

unsigned long __sched
wait_for_completion_timeout(struct completion *x, unsigned long timeout)
{
	return wait_for_common(x, timeout, TASK_UNINTERRUPTIBLE);
}

int __sched wait_for_completion_interruptible(struct completion *x)
{
	long t = wait_for_common(x, MAX_SCHEDULE_TIMEOUT, TASK_INTERRUPTIBLE);
	if (t == -ERESTARTSYS)
		return t;
	return 0;
}

bool try_wait_for_completion(struct completion *x)
{
	unsigned long flags;
	bool ret = true;

	if (!READ_ONCE(x->done))
		return false;

	raw_spin_lock_irqsave(&x->wait.lock, flags);
	if (!x->done)
		ret = false;
	else if (x->done != UINT_MAX)
		x->done--;
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
	return ret;
}

bool completion_done(struct completion *x)
{
	unsigned long flags;

	if (!READ_ONCE(x->done))
		return false;

	raw_spin_lock_irqsave(&x->wait.lock, flags);
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
	return true;
}

/* ------------------------------------------------------------ the test */

static struct completion c;

static void *complete_after(void *arg)
{
	h_sleep_ms((long)(intptr_t)arg);
	complete(&c);
	return NULL;
}

static void *interruptible(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)wait_for_completion_interruptible(&c);
}

/* Signals the waiter until it returns. */
static long interrupt_waiter(void)
{
	pthread_t t = h_start(interruptible, NULL);
	void *ret;

	while (!swait_active(&c.wait))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	ret = h_join(t);
	return (long)(intptr_t)ret;
}

int main(void)
{
	long long t0;
	unsigned long left;
	long r;

	h_watchdog(30);
	init_completion(&c);

	/* Timeout: 0 after at least the jiffies asked for. */
	t0 = h_now_ms();
	CHECK(wait_for_completion_timeout(&c, msecs_to_jiffies(30)) == 0);
	CHECK(h_now_ms() - t0 >= 30);

	/* Woken: the jiffies left, between 1 and the timeout. */
	h_join(h_start(complete_after, (void *)(intptr_t)0));
	CHECK(wait_for_completion_timeout(&c, 1000) == 1000);
	h_start(complete_after, (void *)(intptr_t)20);
	left = wait_for_completion_timeout(&c, 1000);
	CHECK(left >= 1 && left < 1000);
	CHECK(!try_wait_for_completion(&c) && !completion_done(&c));

	/* complete_all(): every wait succeeds, done stays UINT_MAX. */
	complete_all(&c);
	CHECK(wait_for_completion_interruptible(&c) == 0);
	CHECK(try_wait_for_completion(&c) && completion_done(&c));
	CHECK(c.done == UINT_MAX);
	reinit_completion(&c);

	/* A signal under SA_RESTART ends the wait: -ERESTARTSYS, once. */
	h_handler(1);
	h_handled = 0;
	r = interrupt_waiter();
	CHECK(r == -ERESTARTSYS && r == -512);
	CHECK(h_handled == 1);

	/* Pending before the wait (sent while blocked): at once. */
	set_current_state(TASK_INTERRUPTIBLE);	/* signals now held */
	h_handled = 0;
	raise(SIGUSR1);
	CHECK(h_handled == 0);	/* pending, not handled */
	CHECK(signal_pending(current));
	CHECK(signal_pending_state(TASK_INTERRUPTIBLE, current));
	CHECK(!signal_pending_state(TASK_KILLABLE, current));
	__set_current_state(TASK_RUNNING);	/* delivered here */
	CHECK(h_handled == 1 && !signal_pending(current));

	/* Raised before a wait's prepare: -ERESTARTSYS without sleeping. */
	h_handled = 0;
	raw_spin_lock_irq(&c.wait.lock);
	__set_current_state(TASK_INTERRUPTIBLE);
	raise(SIGUSR1);
	r = do_wait_for_common(&c, schedule_timeout, 5000,
			       TASK_INTERRUPTIBLE);
	raw_spin_unlock_irq(&c.wait.lock);
	CHECK(r == -ERESTARTSYS && h_handled == 1);

	/* The next wait does not see the consumed signal. */
	h_start(complete_after, (void *)(intptr_t)20);
	CHECK(wait_for_completion_interruptible(&c) == 0);
	return 0;
}
