// SPDX-License-Identifier: MIT
/*
 * rcu_gp_fqs_loop.c - kernel/rcu/tree.c as of v5.10, reduced: the grace-
 * period kthread's wait for a request (swait_event_idle_exclusive on
 * rcu_state.gp_wq), rcu_gp_fqs_loop() (jiffies_force_qs, swait_event_
 * idle_timeout_exclusive with rcu_gp_fqs_check_wake(), time_after(), the
 * remaining j = jiffies_force_qs - jiffies) and rcu_gp_kthread_wake()
 * (swake_up_one).  Quiescent states are one mask; rcu_gp_fqs() counts.
 */
#include "kstub.h"
#include "harness.h"

#define RCU_GP_FLAG_INIT 0x1
#define RCU_GP_FLAG_FQS 0x2

static struct {
	struct swait_queue_head gp_wq;
	short gp_flags;
	unsigned long jiffies_force_qs;
	unsigned long qsmask;	/* the root rcu_node's */
	int fqs_count;
} rcu_state = { __SWAIT_QUEUE_HEAD_INITIALIZER(rcu_state.gp_wq), 0, 0, 0, 0 };

static unsigned long jiffies_till_first_fqs = 5;
static unsigned long jiffies_till_next_fqs = 5;

static bool rcu_preempt_blocked_readers_cgp(void)
{
	return false;
}

static void rcu_gp_fqs(bool first_time)
{
	(void)first_time;
	rcu_state.fqs_count++;
}

/* ------------------------------------------------- the kernel's code */

static bool rcu_gp_fqs_check_wake(int *gfp)
{
	*gfp = READ_ONCE(rcu_state.gp_flags);
	if (*gfp & RCU_GP_FLAG_FQS)
		return true;

	if (!READ_ONCE(rcu_state.qsmask) && !rcu_preempt_blocked_readers_cgp())
		return true;

	return false;
}

static void rcu_gp_fqs_loop(void)
{
	bool first_gp_fqs;
	int gf = 0;
	unsigned long j;
	int ret;

	first_gp_fqs = true;
	j = READ_ONCE(jiffies_till_first_fqs);
	ret = 0;
	for (;;) {
		if (!ret) {
			rcu_state.jiffies_force_qs = jiffies + j;
		}
		swait_event_idle_timeout_exclusive(
				rcu_state.gp_wq, rcu_gp_fqs_check_wake(&gf), j);
		/* Locking provides needed memory barriers. */
		/* If grace period done, leave loop. */
		if (!READ_ONCE(rcu_state.qsmask) &&
		    !rcu_preempt_blocked_readers_cgp())
			break;
		/* If time for quiescent-state forcing, do it. */
		if (!time_after(rcu_state.jiffies_force_qs, jiffies) ||
		    (gf & RCU_GP_FLAG_FQS)) {
			rcu_gp_fqs(first_gp_fqs);
			gf = 0;
			if (first_gp_fqs)
				first_gp_fqs = false;
			WRITE_ONCE(rcu_state.gp_flags,
				   READ_ONCE(rcu_state.gp_flags) & ~RCU_GP_FLAG_FQS);
			ret = 0; /* Force full wait till next FQS. */
			j = READ_ONCE(jiffies_till_next_fqs);
		} else {
			/* Deal with stray signal. */
			ret = 1; /* Keep old FQS timing. */
			j = jiffies;
			if (time_after(jiffies, rcu_state.jiffies_force_qs))
				j = 1;
			else
				j = rcu_state.jiffies_force_qs - j;
			gf = 0;
		}
	}
}

static void rcu_gp_kthread_wake(void)
{
	swake_up_one(&rcu_state.gp_wq);
}

/* One grace period of rcu_gp_kthread(): wait for a request, then FQS. */
static void rcu_gp_kthread_once(void)
{
	swait_event_idle_exclusive(rcu_state.gp_wq,
				   READ_ONCE(rcu_state.gp_flags) &
				   RCU_GP_FLAG_INIT);
	WRITE_ONCE(rcu_state.gp_flags, 0);
	rcu_gp_fqs_loop();
}

/* ------------------------------------------------------------ the test */

static void *gp_kthread(void *arg)
{
	(void)arg;
	rcu_gp_kthread_once();
	return NULL;
}

int main(void)
{
	long long t0;
	pthread_t t;

	h_watchdog(30);
	CHECK(time_after(SWAIT_KERNEL_INITIAL_JIFFIES + 10,
			 SWAIT_KERNEL_INITIAL_JIFFIES - 10));
	CHECK(time_before((unsigned long)-5, 5UL));	/* across the wrap */
	CHECK(time_after_eq(jiffies, jiffies - 1));

	/* A request wakes the kthread; four FQS rounds pass before the CPU
	 * reports its quiescent state. */
	rcu_state.qsmask = 1;
	t = h_start(gp_kthread, NULL);
	h_sleep_ms(5);
	WRITE_ONCE(rcu_state.gp_flags, RCU_GP_FLAG_INIT);
	rcu_gp_kthread_wake();
	t0 = h_now_ms();
	while (READ_ONCE(rcu_state.fqs_count) < 4)
		h_sleep_ms(1);
	CHECK(h_now_ms() - t0 >= 4 * 5 - 5);
	WRITE_ONCE(rcu_state.qsmask, 0);
	rcu_gp_kthread_wake();
	h_join(t);
	/*
	 * No round before its 5-jiffy timeout (a round may be a jiffy short:
	 * jiffies ticks on millisecond boundaries).  A bound in time, not a
	 * count: on a loaded machine this thread may run late.
	 */
	CHECK(rcu_state.fqs_count >= 4 &&
	      rcu_state.fqs_count <= (h_now_ms() - t0) / 4 + 2);
	return 0;
}
