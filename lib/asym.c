// SPDX-License-Identifier: MIT
/*
 * asym.c - asymmetric heads: O1's barrier moved from every wake to the
 * sleeps, for heads that are woken far more often than they are slept on.
 *
 * Why.  O1 (lib/swait.c) is a Dekker pair: the waker fences between its
 * store of the condition and its peek at the list, the waiter between its
 * enqueue and its read of the condition.  So swait_wake_one() with nobody
 * waiting is a fence and a load (6.2 ns on the reference machine), where
 * C++20's notify_one() is a load (1.8 ns), because its caller's store was
 * sequentially consistent and paid the fence.  A producer that wakes after
 * every item, to nobody nearly every time, pays the fence and a call per
 * item; its consumers sleep seldom.  On such a head the waiter can pay
 * for both sides with membarrier(2), as liburcu's memb flavour does for
 * its readers: its cost, a system call and an interrupt to every CPU running a
 * thread of the process (about 1.2 us alone; 10-15 us on a virtual
 * machine with the other CPU busy), lands on the sleeps.
 *
 * RULES
 *
 *  O1a. On an asymmetric head, the waker's half of O1 is a compiler barrier
 *       (in <swait.h>'s inline swait_wake_one(); the library's own wakes
 *       and swait_has_sleeper() keep their full fence, which is stronger,
 *       so that an ordinary head pays no test for the kind there: they are
 *       reached with a waiter queued, from a caller built without the
 *       inline, or for a broadcast, rare on such a head), and the
 *       waiter's half is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)
 *       after its enqueue.  That call returns only after every thread of
 *       the process that was running executed a full barrier (one that was
 *       not running passes a context switch, also a full barrier).  Take a
 *       waker's program-order "store cond; peek list" and the barrier it
 *       executed: if the barrier came before the store, the peek also
 *       comes after the waiter's enqueue, which the system call ordered
 *       before the barrier, and sees the waiter; if it came after the
 *       store, the store is visible before membarrier() returns, so the
 *       waiter's read of cond sees it.  Either way one side sees the
 *       other's store, as with two fences.  The compiler barrier keeps the
 *       store before the peek in the waker's program order, which the
 *       argument needs.
 *  O1b. The head's kind is fixed at init (SWAIT_WALKS_ASYM in the walks
 *       word, never changed after) and read by both sides, so a waker and
 *       a waiter never disagree on which form the pair takes.  A head
 *       becomes asymmetric only once the process is registered for the
 *       call: membarrier() then never fails for a lack of registration
 *       (a forked child inherits it; execve() starts a new image that has
 *       no such head).  Where the kernel lacks the command (Linux < 4.14)
 *       or a seccomp filter denies it, swait_head_init_asym() makes an
 *       ordinary head and says so.  A filter installed after that is the
 *       one way to make the call fail later; the sleep then aborts naming
 *       it and the error, since going on would risk a lost wakeup.
 *       ENOMEM (the kernel's allocation of a CPU mask for the call, on
 *       kernels that keep masks off the stack) is memory pressure, which
 *       the sleep waits out.  A filter or tracer that fakes the call's
 *       success is outside what any barrier can survive: swait_head_init(3)
 *       says so.
 *
 * tests/model/swait.pml checks O1a with -DASYM (a waker's store of the
 * condition may sit in its store buffer until a sleeper's membarrier
 * drains it); mutant asym_no_membarrier shows the check can fail.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asym.h"
#include "check.h"
#include "futex.h"
#include "internal.h"
#include "queue.h"

#ifndef SYS_membarrier
#error "libswait needs the membarrier system call number (Linux 4.3)"
#endif

/* membarrier(cmd): 0 or more on success, minus the error number. */
static long membarrier_call(int cmd)
{
#if SWAIT_RAW_SYSCALL
	return swait_raw_syscall6(SYS_membarrier, cmd, 0, 0, 0, 0, 0);
#else
	int saved = errno;
	long r = syscall(SYS_membarrier, cmd, 0, 0);

	if (r < 0)
		r = -errno;
	errno = saved;
	return r;
#endif
}

/* Register the process for private expedited barriers (O1b). */
static int register_process(void)
{
	long r = membarrier_call(MEMBARRIER_CMD_QUERY);

	if (r < 0)
		return (int)-r;		/* ENOSYS, or a filter's error */
	if (!(r & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return ENOSYS;		/* before Linux 4.14 */
	r = membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED);
	return r < 0 ? (int)-r : 0;
}

SWAIT_EXPORT int swait_head_init_asym(struct swait_head *h)
{
	int err = register_process();

	swait_head_init_checked(h, err ? 0 : SWAIT_WALKS_ASYM,
		"swait_head_init_asym: the head still has waiters, who would "
		"never be woken (re-initialised while in use?) "
		"[head, first waiter]");
	/*
	 * Empty is NULL links on every head, never used or emptied
	 * (lib/list.h), so <swait.h>'s inline wake tests one pointer.
	 */
	return err;
}

void swait_asym_barrier(void)
{
	long r;

	/*
	 * ENOMEM: the kernel allocates a CPU mask for the call where masks
	 * are not on its stack (CONFIG_CPUMASK_OFFSTACK).  That is memory
	 * pressure, which passes, not a misuse: the sleep waits for it, as
	 * it would for any allocation, rather than give up the barrier.
	 */
	while ((r = membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED)) ==
	       -ENOMEM)
		sched_yield();
	if (swait_likely(r == 0))
		return;
	swait_fatal_call("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) "
			 "failed in a sleep on a head made by "
			 "swait_head_init_asym(), which needs it to order the "
			 "sleep against its wakes: a seccomp filter installed "
			 "since denies it?", (int)-r);
}
