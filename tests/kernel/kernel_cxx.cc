// SPDX-License-Identifier: MIT
// kernel_cxx.cc - <swait/kernel.h> compiles as C++ and its names work there.
#include <swait/kernel.h>

static DECLARE_SWAIT_QUEUE_HEAD(wq);
static DECLARE_COMPLETION(done);

int main()
{
	DECLARE_SWAITQUEUE(wait);
	struct completion c;
	int flag = 1;
	long left;

	init_completion(&c);
	complete(&c);
	if (wait_for_completion_timeout(&c, 10) != 10)
		return 1;
	complete_all(&done);
	wait_for_completion(&done);
	if (wait_for_completion_interruptible(&done) != 0 ||
	    wait_for_completion_interruptible_timeout(&done, 1) != 1 ||
	    !try_wait_for_completion(&done) || !completion_done(&done))
		return 1;
	reinit_completion(&done);

	swait_event_exclusive(wq, flag);
	left = swait_event_timeout_exclusive(wq, flag == 0, 1);
	if (left != 0 || swait_event_interruptible_exclusive(wq, flag) != 0 ||
	    swait_event_interruptible_timeout_exclusive(wq, flag, 7) != 7)
		return 1;
	prepare_to_swait_exclusive(&wq, &wait, TASK_INTERRUPTIBLE);
	if (!swait_active(&wq) || !swq_has_sleeper(&wq))
		return 1;
	finish_swait(&wq, &wait);
	swake_up_one(&wq);
	swake_up_all(&wq);
	return 0;
}
