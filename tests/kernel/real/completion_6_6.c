// SPDX-License-Identifier: MIT
/*
 * completion_6_6.c - kernel/sched/completion.c as of v6.6, reduced:
 * complete_with_flags() with the two-argument swake_up_locked() of 6.5+,
 * complete_on_current_cpu(), and wait_for_completion_state() over the
 * same do_wait_for_common() as 5.10 (its wait uses the 6.6 names).  The
 * definitions take k_ names; WF_CURRENT_CPU is kernel/sched/sched.h's.
 */
#include "kstub.h"
#include "harness.h"

#undef wait_for_completion_state
#define complete k_complete
#define complete_on_current_cpu k_complete_on_current_cpu
#define wait_for_completion_state k_wait_for_completion_state
#define WF_CURRENT_CPU 0x40
#define complete_acquire(x) ((void)(x))
#define complete_release(x) ((void)(x))

/* ------------------------------------------------- the kernel's code */

static void complete_with_flags(struct completion *x, int wake_flags)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&x->wait.lock, flags);

	if (x->done != UINT_MAX)
		x->done++;
	swake_up_locked(&x->wait, wake_flags);
	raw_spin_unlock_irqrestore(&x->wait.lock, flags);
}

void complete_on_current_cpu(struct completion *x)
{
	return complete_with_flags(x, WF_CURRENT_CPU);
}

void complete(struct completion *x)
{
	complete_with_flags(x, 0);
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

int __sched wait_for_completion_state(struct completion *x, unsigned int state)
{
	long t = wait_for_common(x, MAX_SCHEDULE_TIMEOUT, state);

	if (t == -ERESTARTSYS)
		return t;
	return 0;
}

/* ------------------------------------------------------------ the test */

static struct completion c;

static void *completer(void *arg)
{
	h_sleep_ms(10);
	if (arg)
		complete_on_current_cpu(&c);
	else
		complete(&c);
	return NULL;
}

static void *waiter(void *arg)
{
	return (void *)(intptr_t)wait_for_completion_state(&c,
						(unsigned int)(uintptr_t)arg);
}

int main(void)
{
	pthread_t t;

	h_watchdog(30);
	h_handler(1);
	init_completion(&c);

	h_start(completer, (void *)1);
	CHECK(wait_for_completion_state(&c, TASK_UNINTERRUPTIBLE) == 0);
	h_start(completer, NULL);
	CHECK(wait_for_completion_state(&c, TASK_INTERRUPTIBLE) == 0);
	CHECK(c.done == 0);

	/* TASK_KILLABLE: a handled signal does not end it. */
	h_handled = 0;
	t = h_start(waiter, (void *)(uintptr_t)TASK_KILLABLE);
	while (!swait_active(&c.wait))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	h_sleep_ms(20);
	complete(&c);
	CHECK((intptr_t)h_join(t) == 0 && h_handled == 1);

	/* TASK_INTERRUPTIBLE: it does, with -ERESTARTSYS, under SA_RESTART. */
	t = h_start(waiter, (void *)(uintptr_t)TASK_INTERRUPTIBLE);
	while (!swait_active(&c.wait))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	CHECK((intptr_t)h_join(t) == -ERESTARTSYS && h_handled == 2);
	CHECK(!completion_done(&c));
	return 0;
}
