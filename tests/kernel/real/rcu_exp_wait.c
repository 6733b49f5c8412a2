// SPDX-License-Identifier: MIT
/*
 * rcu_exp_wait.c - kernel/rcu/tree_exp.h as of v5.10, reduced:
 * synchronize_rcu_expedited_wait()'s loop (swait_event_timeout_exclusive
 * on rcu_state.expedited_wq with a stall timeout in jiffies, the stall
 * report, the next timeout 3 * rcu_jiffies_till_stall_check() + 3) and
 * rcu_report_exp_cpu_mult()'s wake (swake_up_one).  The node tree is one
 * mask.
 */
#include "kstub.h"
#include "harness.h"

struct rcu_node {
	unsigned long expmask;
};

static struct {
	struct swait_queue_head expedited_wq;
} rcu_state = { __SWAIT_QUEUE_HEAD_INITIALIZER(rcu_state.expedited_wq) };

static struct rcu_node root;
static int stalls;

#define rcu_get_root() (&root)
static bool sync_rcu_exp_done_unlocked(struct rcu_node *rnp)
{
	return !READ_ONCE(rnp->expmask);
}
static int rcu_jiffies_till_stall_check(void)
{
	return 10;	/* 21 CONFIG_RCU_CPU_STALL_TIMEOUT seconds, shortened */
}

/* ------------------------------------------------- the kernel's code */

static void synchronize_rcu_expedited_wait(void)
{
	unsigned long jiffies_stall;
	unsigned long jiffies_start;
	struct rcu_node *rnp_root = rcu_get_root();
	int t;

	jiffies_stall = rcu_jiffies_till_stall_check();
	jiffies_start = jiffies;

	for (;;) {
		t = swait_event_timeout_exclusive(
				rcu_state.expedited_wq,
				sync_rcu_exp_done_unlocked(rnp_root),
				jiffies_stall);
		if (t > 0 || sync_rcu_exp_done_unlocked(rnp_root))
			return;
		WARN_ON(t < 0);	/* workqueues should not be signaled. */
		pr_err("INFO: %s detected expedited stalls (t=%lu jiffies)\n",
		       "rcu", jiffies - jiffies_start);
		stalls++;
		jiffies_stall = 3 * rcu_jiffies_till_stall_check() + 3;
	}
}

static void rcu_report_exp_cpu_mult(struct rcu_node *rnp, unsigned long mask)
{
	WRITE_ONCE(rnp->expmask, rnp->expmask & ~mask);
	if (!rnp->expmask)
		swake_up_one(&rcu_state.expedited_wq);
}

/* ------------------------------------------------------------ the test */

static void *cpu(void *arg)
{
	h_sleep_ms((long)(intptr_t)arg);
	rcu_report_exp_cpu_mult(&root, 1);
	return NULL;
}

int main(void)
{
	long long t0;

	h_watchdog(30);
	root.expmask = 0;
	synchronize_rcu_expedited_wait();	/* done: no sleep, no stall */
	CHECK(stalls == 0);

	root.expmask = 1;
	h_start(cpu, (void *)(intptr_t)2);
	synchronize_rcu_expedited_wait();
	CHECK(stalls == 0 && root.expmask == 0);

	/* A slow CPU: one stall report after 10 jiffies, then done. */
	root.expmask = 1;
	t0 = h_now_ms();
	h_start(cpu, (void *)(intptr_t)25);
	synchronize_rcu_expedited_wait();
	CHECK(stalls == 1 && h_now_ms() - t0 >= 25);
	return 0;
}
