// SPDX-License-Identifier: MIT
/*
 * spin.c - adaptive spinning before a sleep: a waiter polls its own word for
 * a bounded time before it announces SLEEPING, so that a wake arriving from
 * another CPU within that time costs no system call on either side.
 *
 * Why.  A blocking handoff between two CPUs pays for waking a halted CPU:
 * 20-80 us on a virtual machine, a few us on bare metal.  A waiter still
 * QUEUED when its wake arrives takes the wake with no system call, and its
 * waker, which finds QUEUED, makes none either (lib/swait.c O2).  Polling
 * the word keeps the waiter QUEUED for the few microseconds in which a
 * partner on another CPU typically answers.
 *
 * RULES
 *
 *  S1. The spin reads the waiter's own word only (acquire loads) and writes
 *      nothing shared.  It sits between the caller's prepare (and condition
 *      check) and its announce, where any delay is already allowed: the
 *      thread could be preempted there for as long.  So it adds no protocol
 *      state.  A wake seen while spinning is taken exactly as the failed
 *      announce CAS takes it (O2, O3: the acquire load publishes the
 *      waker's writes), and its waker, which found QUEUED, made no
 *      FUTEX_WAKE.  tests/model/swait.pml checks the path (SPIN=1: the
 *      waiter may take its wake from the spin; a waker that flipped a
 *      waiter still QUEUED must not count a FUTEX_WAKE).
 *
 *  S2. Bounded.  A spin lasts at most the thread's cap (default
 *      SWAIT_SPIN_NS_DEFAULT, the build's spin_ns option; environment
 *      SWAIT_SPIN_NS; swait_set_spin() per thread), at most
 *      SWAIT_SPIN_MAX_NS, and never past the caller's deadline.  The clock
 *      (CLOCK_MONOTONIC, the vDSO) is read every SPIN_CHECK polls, so it
 *      ends within one such batch (well under a microsecond) of the bound,
 *      unless the thread is preempted, which ends any spin's usefulness but
 *      not its bound: the next clock read ends it.
 *
 *  S3. Adaptive, per thread.  A spin that ends without a wake makes the
 *      thread skip spinning for its next 2^(k-1) - 1 sleeps after k failures
 *      in a row (k <= SPIN_FAIL_MAX: at most 1,023 skipped), so a thread
 *      whose spins never find a wake (its waits are long, or its wakers
 *      share its CPU and cannot run while it spins) spends about cap/1024
 *      per sleep: 10 ns at the default cap, under 1 % of a one-CPU handoff.
 *      A wake caught by a spin resets k.  Per thread, not per head: the
 *      head's layout is ABI, and a thread's pattern (server loop, worker)
 *      is what predicts its waits.
 *
 *  S4. No spinning where it cannot help: when the process may run on one
 *      CPU only (this thread's affinity mask and the main thread's together
 *      hold one CPU, re-read every SPIN_AFFINITY_EVERY sleeps and by
 *      swait_set_spin()), no waker can run while the waiter spins.  A
 *      thread pinned to one CPU is not enough: its wakers may be pinned to
 *      others (S3 learns the case where they share its CPU).  Nor with
 *      SWAIT_NOSPIN in the call's flags, nor with a cap of 0.
 *
 *  S5. No spinning by default in a real-time thread (SCHED_FIFO or
 *      SCHED_RR) whose own affinity mask holds one CPU, re-read with the
 *      masks (S4).  If its waker shares that CPU, the waker cannot run at
 *      all while it spins, so each spin there is a full cap of delay, and
 *      S3's back-off still lets one in 1,024 sleeps pay it: that lands on
 *      the p99.9 a pinned real-time thread is judged by.  Such a thread
 *      whose wakers run elsewhere opts in with its own swait_set_spin()
 *      cap; only the process default is withheld.
 *
 *  S6. Only the waiter at the front of its queue spins.  wake_one and
 *      complete wake the oldest waiter, so one behind another is not woken
 *      by the next of them, and a crowd that re-sleeps after a wake_all (a
 *      broadcast head's waiters, more of them than CPUs) would otherwise
 *      each burn the cap on the CPUs the rest of the crowd needs to run:
 *      one spins at a time instead.  A swait_wait_any() group spins when
 *      it is first on any of its heads.  The prepare notes, under the
 *      head's lock, whether its waiter is first, and the thread's next
 *      spin reads that note, not the head (a woken waiter's head may
 *      already be freed).  A hint: a waiter that becomes first between its
 *      prepare and its sleep does not spin that once, and a thread that
 *      prepares on two heads before sleeping on one gets the second's
 *      note; either only changes whether a spin happens.
 *
 * The state is thread-local (initial-exec TLS, lib/internal.h), touched
 * only by the thread's own sleeps and swait_set_spin().
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "lock.h"
#include "spin.h"

#ifndef SWAIT_SPIN_NS_DEFAULT
#define SWAIT_SPIN_NS_DEFAULT 10000
#endif

enum {
	SPIN_CHECK = 16,		/* polls between clock reads (S2) */
	SPIN_FAIL_MAX = 11,		/* 2^10 - 1 = 1,023 sleeps skipped (S3) */
	/*
	 * Sleeps between reads of the masks and policy (S4, S5): three
	 * system calls, about 3 us, so 1 in 128 showed at the p99 of
	 * swait-bench latency --rt; 1 in 4,096 stays under the p99.9 a
	 * real-time thread is judged by.  swait_set_spin() reads at once.
	 */
	SPIN_AFFINITY_EVERY = 4096,
};

struct spin_thread {
	long cap;		/* ns; SWAIT_SPIN_DEFAULT: the process's */
	uint32_t skip;		/* sleeps left to skip (S3) */
	uint8_t fails;		/* spins in a row that found nothing (S3) */
	uint8_t affinity_known;
	uint8_t one_cpu;	/* S4 */
	uint8_t rt_pinned;	/* S5 */
	uint16_t affinity_age;
	uint8_t front;		/* S6: the last prepare's note */
};

static SWAIT_TLS struct spin_thread me = {
	SWAIT_SPIN_DEFAULT, 0, 0, 0, 0, 0, 0, 1
};

/*
 * The process default: the build's, or SWAIT_SPIN_NS.  Read when the
 * library is loaded, before the program's threads (or, when it is
 * dlopen()ed, before any of its calls), so that no sleep races to set it.
 */
static long process_cap = SWAIT_SPIN_NS_DEFAULT;

#if SWAIT_TEST_HOOKS
void (*swait_hook_spin)(const uint32_t *word);
int64_t (*swait_hook_spin_clock)(void);
#endif

__attribute__((constructor))
static void read_process_default(void)
{
	const char *env = getenv("SWAIT_SPIN_NS");
	char *end;
	long v;

	if (!env || !*env)
		return;
	errno = 0;
	v = strtol(env, &end, 10);
	/* Anything else is ignored: the build's default stands. */
	if (errno == 0 && *end == '\0' && v >= 0 && v <= SWAIT_SPIN_MAX_NS)
		process_cap = v;
}

static long thread_cap(void)
{
	return me.cap == SWAIT_SPIN_DEFAULT ? process_cap : me.cap;
}

static void read_affinity(void)
{
	cpu_set_t mine, main_thread;
	int policy;

	/* Unknown masks count as many CPUs: spinning stays bounded (S2). */
	me.one_cpu = 0;
	me.rt_pinned = 0;
	if (sched_getaffinity(0, sizeof(mine), &mine) != 0)
		goto out;
	policy = sched_getscheduler(0);
	me.rt_pinned = CPU_COUNT(&mine) <= 1 &&
		       (policy == SCHED_FIFO || policy == SCHED_RR);
	if (sched_getaffinity(getpid(), sizeof(main_thread),
			      &main_thread) == 0) {
		CPU_OR(&mine, &mine, &main_thread);
		me.one_cpu = CPU_COUNT(&mine) <= 1;
	}
out:
	me.affinity_known = 1;
	me.affinity_age = 0;
}

SWAIT_EXPORT int swait_set_spin(long ns, long *old_ns)
{
	if (ns != SWAIT_SPIN_DEFAULT && (ns < 0 || ns > SWAIT_SPIN_MAX_NS))
		return EINVAL;
	if (old_ns)
		*old_ns = me.cap;
	me.cap = ns;
	me.fails = 0;
	me.skip = 0;
	read_affinity();
	return 0;
}

SWAIT_EXPORT long swait_spin_cap(void)
{
	return thread_cap();
}

/* int64_t: a long of ns overflows in 2 s on ILP32 (armhf, i386). */
static int64_t now_ns(clockid_t clock)
{
	struct timespec t;

#if SWAIT_TEST_HOOKS
	int64_t (*hook)(void) = __atomic_load_n(&swait_hook_spin_clock,
						__ATOMIC_RELAXED);

	if (hook)
		return hook();
#endif
	clock_gettime(clock, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void swait_spin_note_front(bool front)
{
	me.front = front;
}

/* How long this spin may last, in ns: 0 for none (S2-S6). */
static long budget(unsigned flags, clockid_t clock,
		   const struct timespec *deadline)
{
	long cap;

	if ((flags & SWAIT_NOSPIN) || !me.front)
		return 0;
	cap = thread_cap();
	if (cap == 0)
		return 0;
	if (me.skip) {
		me.skip--;
		return 0;
	}
	if (!me.affinity_known || ++me.affinity_age >= SPIN_AFFINITY_EVERY)
		read_affinity();
	if (me.one_cpu || (me.rt_pinned && me.cap == SWAIT_SPIN_DEFAULT))
		return 0;
	/*
	 * A deadline beyond 2262 (swait_deadline_after() saturates there,
	 * and callers may pass any tv_sec) is further than any cap: only a
	 * nearer one can shorten the spin, and only its nanoseconds fit an
	 * int64_t.
	 */
	if (deadline && deadline->tv_sec < INT64_MAX / 1000000000 - 1) {
		/* One read of the deadline's clock (the vDSO). */
		int64_t left;

		if (deadline->tv_sec < 0)
			return 0;
		left = (int64_t)deadline->tv_sec * 1000000000 +
		       deadline->tv_nsec - now_ns(clock);
		if (left <= 0)
			return 0;
		if (left < cap)
			cap = (long)left;
	}
	return cap;
}

uint32_t swait_spin(const uint32_t *word, uint32_t mask, uint32_t stay,
		    unsigned flags, clockid_t clock,
		    const struct timespec *deadline)
{
	uint32_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
	int64_t limit;
	long left;

	if ((v & mask) != stay)
		return v;
	left = budget(flags, clock, deadline);
	if (left == 0)
		return v;
	limit = now_ns(CLOCK_MONOTONIC) + left;
	for (unsigned i = 1;; i++) {
#if SWAIT_TEST_HOOKS
		void (*hook)(const uint32_t *) =
			__atomic_load_n(&swait_hook_spin, __ATOMIC_RELAXED);

		if (hook)
			hook(word);
#endif
		swait_cpu_relax();
		v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
		if ((v & mask) != stay) {
			me.fails = 0;
			return v;
		}
		if (i % SPIN_CHECK == 0 && now_ns(CLOCK_MONOTONIC) >= limit)
			break;
	}
	if (me.fails < SPIN_FAIL_MAX)
		me.fails++;
	me.skip = (1u << (me.fails - 1)) - 1;
	return v;
}
