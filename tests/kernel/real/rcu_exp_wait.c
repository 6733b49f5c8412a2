// SPDX-License-Identifier: MIT
/*
 * rcu_exp_wait.c - kernel/rcu/tree_exp.h as of v5.10, reduced:
 * synchronize_rcu_expedited_wait()'s loop (swait_event_timeout_exclusive
 * on rcu_state.expedited_wq with a stall timeout in jiffies, the stall
 * report, the next timeout 3 * rcu_jiffies_till_stall_check() + 3) and
 * rcu_report_exp_cpu_mult()'s wake (swake_up_one).  The node tree is one
 * mask.
 *
 * Only lower bounds on time are checked: on a loaded machine a thread may
 * run tens of milliseconds late, so "the CPU reports before the first
 * timeout" is made certain by a long stall timeout, and "after it" by the
 * reporting thread waiting for the first stall report.
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
static int stalls;		/* written by the waiter, polled by cpu() */
static int stall_check = 10;	/* jiffies: 21 s in the kernel, shortened */

#define rcu_get_root() (&root)
static bool sync_rcu_exp_done_unlocked(struct rcu_node *rnp)
{
	return !READ_ONCE(rnp->expmask);
}
static int rcu_jiffies_till_stall_check(void)
{
	return stall_check;	/* CONFIG_RCU_CPU_STALL_TIMEOUT */
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
		WRITE_ONCE(stalls, stalls + 1);
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

/* A CPU's quiescent state, after ms, and after the first stall report. */
static void *cpu(void *arg)
{
	h_sleep_ms((long)(intptr_t)arg);
	while (stall_check < 1000 && READ_ONCE(stalls) == 0)
		h_sleep_ms(1);
	rcu_report_exp_cpu_mult(&root, 1);
	return NULL;
}

int main(void)
{
	long long t0, waited;
	int n;

	h_watchdog(30);
	root.expmask = 0;
	synchronize_rcu_expedited_wait();	/* done: no sleep, no stall */
	CHECK(stalls == 0);

	/* A prompt CPU: its wake ends the first wait (a 10 s timeout). */
	stall_check = 10000;
	root.expmask = 1;
	h_start(cpu, (void *)(intptr_t)2);
	synchronize_rcu_expedited_wait();
	CHECK(stalls == 0 && root.expmask == 0);

	/*
	 * A slow CPU: a stall report after 10 jiffies, then the wake.  If
	 * the reporting thread runs late, more reports, each a whole
	 * 33-jiffy timeout later.
	 */
	stall_check = 10;
	root.expmask = 1;
	t0 = h_now_ms();
	h_start(cpu, (void *)(intptr_t)5);
	synchronize_rcu_expedited_wait();
	waited = h_now_ms() - t0;
	n = READ_ONCE(stalls);
	CHECK(n >= 1 && root.expmask == 0);
	CHECK(waited >= 10 + (long long)(n - 1) * (3 * 10 + 3));
	return 0;
}
