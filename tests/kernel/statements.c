// SPDX-License-Identifier: MIT
/*
 * statements.c - every macro of <swait/kernel.h> as a statement and as an
 * expression under -Werror, and ERESTARTSYS defined by the includer after
 * the header (no "redefined"; the macros read the includer's value).
 */
#include <signal.h>

#include <swait/kernel.h>

#define ERESTARTSYS 999	/* after the include: not <linux/errno.h>'s */

static DECLARE_SWAIT_QUEUE_HEAD(wq);
static DECLARE_COMPLETION(done);

static void on_signal(int sig)
{
	(void)sig;
}

int main(void)
{
	struct sigaction sa;
	struct timespec dl;
	int flag = 1;
	long r;

	swait_event_exclusive(wq, flag);
	swait_event_idle_exclusive(wq, flag);
	swait_event_interruptible_exclusive(wq, flag);
	swait_event_timeout_exclusive(wq, flag, 5);
	swait_event_idle_timeout_exclusive(wq, flag, 5);
	swait_event_interruptible_timeout_exclusive(wq, flag, 5);
	swait_deadline_after(&dl, CLOCK_MONOTONIC, 1000000);
	swait_event_timeout_exclusive_ts(wq, flag, CLOCK_MONOTONIC, &dl);
	swait_event_interruptible_timeout_exclusive_ts(wq, flag,
						       CLOCK_MONOTONIC, &dl);
	complete_all(&done);
	wait_for_completion_interruptible(&done);
	wait_for_completion_interruptible_timeout(&done, 5);
	wait_for_completion_state(&done, TASK_INTERRUPTIBLE);
	reinit_completion(&done);

	/* A signal pending when the wait starts: the includer's value. */
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	set_current_state(TASK_INTERRUPTIBLE);
	raise(SIGUSR1);
	r = swait_event_interruptible_exclusive(wq, flag == 0);
	if (r != -999)
		return 1;
	set_current_state(TASK_INTERRUPTIBLE);
	raise(SIGUSR1);
	if (wait_for_completion_interruptible(&done) != -999)
		return 2;
	set_current_state(TASK_INTERRUPTIBLE);
	raise(SIGUSR1);
	if (wait_for_completion_interruptible_timeout(&done, 1000) != -999)
		return 3;
	return 0;
}
