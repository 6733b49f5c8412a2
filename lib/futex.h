/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the only place libswait talks to the kernel.
 *
 * Policy:
 *  - Private futexes only (FUTEX_PRIVATE_FLAG): heads are process-private.
 *    This also makes a FUTEX_WAKE on memory that has since been freed or
 *    unmapped harmless: the kernel keys a private futex by (mm, address) and
 *    never touches the page, so a late wake on a departed waiter's word can
 *    at worst wake some unrelated futex waiter at the same address, which
 *    every futex user must already tolerate as a spurious wakeup, or find a PI
 *    futex there, which the kernel reports and swait_futex_wake() ignores.
 *  - errno is never changed: the library returns errors, pthread style.
 *  - Errors that a correct program cannot see (EFAULT, ENOSYS, EINVAL from
 *    the kernel after our own validation) abort with file, line and errno,
 *    except where the call may legitimately land on reused memory: see
 *    swait_futex_wake().
 *  - One system call per ABI, decided here (swait_futex_timed() and
 *    SWAIT_SYS_FUTEX).  A 64-bit ABI has one futex call, whose timeout is
 *    its own struct timespec.  A 32-bit ABI (i386, armhf, riscv32 ...) has
 *    two: SYS_futex reads a timeout of two 32-bit fields, SYS_futex_time64
 *    (Linux 5.1) one of two 64-bit fields.  Its struct timespec is either
 *    layout, by _TIME_BITS, so a deadline is never passed through as it is:
 *    it is copied into the layout of the call made.  futex_time64 comes
 *    first, so deadlines past 2038 work; SYS_futex only after the kernel
 *    said ENOSYS, with a deadline that does not fit clamped (its expiry is
 *    then reported as a spurious wakeup, never as ETIMEDOUT).  Calls without
 *    a timeout do not care: SWAIT_SYS_FUTEX is whichever call exists
 *    (riscv32 has no SYS_futex).
 */
#ifndef SWAIT_FUTEX_H
#define SWAIT_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

#ifdef SYS_futex
#define SWAIT_SYS_FUTEX SYS_futex
#else
#define SWAIT_SYS_FUTEX SYS_futex_time64
#endif

/* Not an errno value: a clamped deadline expired (see the policy above). */
#define SWAIT_ECLAMPED (-1)

#if defined(SYS_futex_time64)
/* The kernel's struct __kernel_timespec and struct old_timespec32. */
struct swait_kts64 {
	int64_t tv_sec;
	int64_t tv_nsec;
};

struct swait_kts32 {
	int32_t tv_sec;
	int32_t tv_nsec;
};
#endif

/*
 * The futex call op, with an absolute timeout ts (NULL: none) and a bitset
 * in val3.  Returns what syscall() returns, errno set.  A negative tv_sec
 * (already checked for a valid tv_nsec) is long past: the kernel would
 * refuse it with EINVAL, so it is passed as the epoch, which has the same
 * meaning.  On 32-bit ABIs, errno SWAIT_ECLAMPED: see the policy above.
 */
static inline long swait_futex_timed(uint32_t *word, int op, uint32_t val,
				     const struct timespec *ts, uint32_t val3)
{
#if defined(SYS_futex_time64)
	/*
	 * The kernel said ENOSYS (< 5.1).  Relaxed: a hint that orders
	 * nothing; a thread that reads it stale makes one more call that
	 * fails with ENOSYS.
	 */
	static int time64_missing;
	struct swait_kts64 t64;
	struct swait_kts32 t32;
	long r;

	if (!ts)
		return syscall(SWAIT_SYS_FUTEX, word, op, val, NULL, NULL,
			       val3);
	t64.tv_sec = ts->tv_sec < 0 ? 0 : (int64_t)ts->tv_sec;
	t64.tv_nsec = ts->tv_sec < 0 ? 0 : ts->tv_nsec;
	if (!__atomic_load_n(&time64_missing, __ATOMIC_RELAXED)) {
		r = syscall(SYS_futex_time64, word, op, val, &t64, NULL, val3);
		if (r == 0 || errno != ENOSYS)
			return r;
		__atomic_store_n(&time64_missing, 1, __ATOMIC_RELAXED);
	}
#ifdef SYS_futex
	/* Linux < 5.1: 32-bit seconds, so clamp at 2038. */
	t32.tv_sec = t64.tv_sec > INT32_MAX ? INT32_MAX : (int32_t)t64.tv_sec;
	t32.tv_nsec = (int32_t)t64.tv_nsec;
	r = syscall(SYS_futex, word, op, val, &t32, NULL, val3);
	if (r != 0 && errno == ETIMEDOUT && t64.tv_sec > INT32_MAX)
		errno = SWAIT_ECLAMPED;
	return r;
#else
	(void)t32;
	errno = ENOSYS;
	return -1;
#endif
#else
	static const struct timespec past = { 0, 0 };

	if (ts && ts->tv_sec < 0)
		ts = &past;
	return syscall(SYS_futex, word, op, val, ts, NULL, val3);
#endif
}

/*
 * The system call without glibc's syscall() wrapper, on the two ABIs where
 * handoffs are measured (x86-64, AArch64): the kernel's result, -errno on
 * failure, and errno never touched, which spares the wrapper and the errno
 * save and restore around each futex call (about 48 instructions per
 * blocking handoff: bench/README.md).  Both have 64-bit time_t and
 * SYS_futex, so a struct timespec is the kernel's own.  A cancellation
 * signal that lands in it unwinds as from syscall(): the library's cleanup
 * is the setjmp form, which needs no unwind tables (lib/meson.build).
 */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SWAIT_RAW_SYSCALL 1
static inline long swait_raw_syscall6(long nr, long a, long b, long c,
				      long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	/*
	 * "memory": the compiler may keep no value of a futex word (or of
	 * anything the kernel reads, such as the deadline) in a register
	 * across the call; the kernel's own barriers order the rest.
	 */
	__asm__ volatile ("syscall"
			  : "=a"(ret)
			  : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10),
			    "r"(r8), "r"(r9)
			  : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__) && !defined(__ILP32__)
#define SWAIT_RAW_SYSCALL 1
static inline long swait_raw_syscall6(long nr, long a, long b, long c,
				      long d, long e, long f)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	/* "memory": as on x86-64. */
	__asm__ volatile ("svc 0"
			  : "+r"(x0)
			  : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
			    "r"(x5)
			  : "memory");
	return x0;
}
#else
#define SWAIT_RAW_SYSCALL 0
#endif

/*
 * The futex call op with an absolute timeout ts (NULL: none): the kernel's
 * non-negative result, or minus the error number; a clamped deadline's
 * expiry on the 32-bit fallback is 0, a spurious wakeup (see the policy
 * above).  errno is left as it was.
 */
static inline long swait_futex_call(uint32_t *word, int op, uint32_t val,
				    const struct timespec *ts, uint32_t val3)
{
#if SWAIT_RAW_SYSCALL
	static const struct timespec past = { 0, 0 };

	if (ts && ts->tv_sec < 0)
		ts = &past;	/* long past: the kernel would say EINVAL */
	return swait_raw_syscall6(SYS_futex, (long)(uintptr_t)word, op,
				  (long)val, (long)(uintptr_t)ts, 0,
				  (long)val3);
#else
	int saved = errno;
	long r = swait_futex_timed(word, op, val, ts, val3);

	if (r < 0)
		r = errno == SWAIT_ECLAMPED ? 0 : -errno;
	errno = saved;
	return r;
#endif
}

/*
 * Sleep while *word == expected, until a FUTEX_WAKE on word, a signal, or the
 * absolute deadline on clock (NULL: none).  Returns 0 (woken, possibly
 * spuriously), EAGAIN (*word != expected on entry), ETIMEDOUT or EINTR.
 */
static inline int swait_futex_wait(uint32_t *word, uint32_t expected,
				   clockid_t clock,
				   const struct timespec *deadline)
{
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	long r;
	int err = 0;

#if SWAIT_TEST_HOOKS
	__atomic_fetch_add(&swait_hook_futex_waits, 1, __ATOMIC_RELAXED);
#endif
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	r = swait_futex_call(word, op, expected, deadline,
			     FUTEX_BITSET_MATCH_ANY);
	if (r < 0)
		err = (int)-r;
	if (err != 0 && err != EAGAIN && err != ETIMEDOUT && err != EINTR)
		swait_fatal_errno("FUTEX_WAIT_BITSET", err, __FILE__, __LINE__);
	return err;
}

/*
 * Wait for another thread to move *word off v, when nothing will
 * FUTEX_WAKE it (a decider's store, a count that others drop): yield for
 * the first 8 rounds (round counts from 0), then sleep on the word with a
 * timeout of 2 us doubling to 1 ms.  Nobody wakes the word, so a sleep
 * ends at its timeout (or at once, if the word moved before the kernel
 * compared it): the wait outlasts the change by at most the round's
 * timeout, about as long as the other thread took.  Yielding alone could
 * wait forever for a thread of lower priority on the same CPU (SCHED_FIFO
 * yields to equal and higher priorities only); a sleep lets any priority
 * run.  Not a cancellation point.
 */
static inline void swait_backoff_wait(uint32_t *word, uint32_t v,
				      unsigned round)
{
	struct timespec t;
	long ns;

	if (round < 8) {
		sched_yield();
		return;
	}
	ns = 2000L << (round - 8 < 9 ? round - 8 : 9);
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ns;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	(void)swait_futex_wait(word, v, CLOCK_MONOTONIC, &t);
}

/*
 * futex_waitv() (Linux 5.16): sleep while *bcast == bcast_val and *word ==
 * expected, until a FUTEX_WAKE on either word, a signal, or the absolute
 * deadline on clock (NULL: none).  Returns 0 (woken through either word,
 * possibly spuriously), EAGAIN (a word differed on entry), ETIMEDOUT,
 * EINTR, EFAULT (bcast unmapped), or ENOSYS where the kernel lacks the
 * call (or a seccomp filter refuses it with EPERM); the caller remembers
 * that (lib/swait.c, W3).
 *
 * bcast comes first in the vector on purpose.  The kernel takes the words
 * in order, each under its hash bucket's lock: queue, then compare.  So the
 * thread is on bcast's queue before it reads *word, and a waker that
 * changes *word and then wakes bcast finds it there, or it reads the
 * changed *word and returns EAGAIN (lib/swait.c, W2).
 *
 * The timeout is always the kernel's 64-bit timespec, on every ABI, so no
 * clamping; a negative tv_sec (long past) is passed as the epoch.
 */
static inline int swait_futex_waitv(uint32_t *bcast, uint32_t bcast_val,
				    uint32_t *word, uint32_t expected,
				    clockid_t clock,
				    const struct timespec *deadline)
{
#if defined(SYS_futex_waitv) && defined(FUTEX_32)
	struct futex_waitv v[2];
	struct {
		int64_t tv_sec;
		int64_t tv_nsec;
	} ts;
	int err = 0;

#if SWAIT_TEST_HOOKS
	__atomic_fetch_add(&swait_hook_futex_waits, 1, __ATOMIC_RELAXED);
#endif
	memset(v, 0, sizeof(v));
	/*
	 * The caller's value, never read here: *bcast belongs to a head that
	 * may be freed once the caller is woken (lib/swait.c W4).  W2 does
	 * not rest on it; a stale one costs an EAGAIN.
	 */
	v[0].val = bcast_val;
	v[0].uaddr = (uintptr_t)bcast;
	v[0].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
	v[1].val = expected;
	v[1].uaddr = (uintptr_t)word;
	v[1].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
	if (deadline) {
		ts.tv_sec = deadline->tv_sec < 0 ? 0 :
			    (int64_t)deadline->tv_sec;
		ts.tv_nsec = deadline->tv_sec < 0 ? 0 : deadline->tv_nsec;
	}
#if SWAIT_RAW_SYSCALL
	long r = swait_raw_syscall6(SYS_futex_waitv, (long)(uintptr_t)v, 2, 0,
				    (long)(uintptr_t)(deadline ? &ts : NULL),
				    (long)clock, 0);

	if (r < 0)
		err = (int)-r;
#else
	int saved = errno;

	if (syscall(SYS_futex_waitv, v, 2, 0, deadline ? &ts : NULL,
		    clock) < 0)
		err = errno;
	errno = saved;
#endif
	/*
	 * EPERM: a seccomp filter that predates the call (container runtimes
	 * answer unknown system calls so).  Either way, today's path works.
	 */
	/*
	 * EFAULT: the head's walks word is unmapped: its head was destroyed
	 * and freed after a walk woke the caller, which then finds itself
	 * woken (lib/swait.c W3).
	 */
	if (err == EPERM)
		err = ENOSYS;
	else if (err != 0 && err != EAGAIN && err != ETIMEDOUT &&
		 err != EINTR && err != ENOSYS && err != EFAULT)
		swait_fatal_errno("futex_waitv", err, __FILE__, __LINE__);
	return err;
#else
	(void)bcast;
	(void)bcast_val;
	(void)word;
	(void)expected;
	(void)clock;
	(void)deadline;
	return ENOSYS;	/* built without the call: today's path */
#endif
}

/*
 * Wake up to n threads sleeping on word.  Never blocks, never fails.
 *
 * A wake may land late: the protocol lets a waker issue its FUTEX_WAKE
 * after the waiter it flipped has returned (I3), after an unlocker has
 * released a lock word whose head was then freed, after a wake_all walk
 * ended.  By then the memory may hold anything, including a PI futex that
 * a thread is blocked on (an on-stack PI head, a PTHREAD_PRIO_INHERIT
 * mutex), and the kernel answers FUTEX_WAKE on a PI futex with EINVAL.
 * That wake had nobody left to wake, so EINVAL and EFAULT are ignored,
 * as glibc's futex_wake() ignores them for the same reason.  Only ENOSYS
 * (no futexes at all) is fatal.
 */
static inline void swait_futex_wake(uint32_t *word, int n)
{
	long r;

#if SWAIT_TEST_HOOKS
	void (*hook)(uint32_t *) = __atomic_load_n(&swait_hook_futex_wake,
						   __ATOMIC_ACQUIRE);

	if (hook)
		hook(word);
#endif
	r = swait_futex_call(word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG,
			     (uint32_t)n, NULL, 0);
	if (r == -ENOSYS)
		swait_fatal_errno("FUTEX_WAKE", ENOSYS, __FILE__, __LINE__);
}

#endif /* SWAIT_FUTEX_H */
