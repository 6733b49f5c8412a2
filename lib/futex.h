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
 */
#ifndef SWAIT_FUTEX_H
#define SWAIT_FUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

/*
 * Sleep while *word == expected, until a FUTEX_WAKE on word, a signal, or the
 * absolute deadline on clock (NULL: none).  Returns 0 (woken, possibly
 * spuriously), EAGAIN (*word != expected on entry), ETIMEDOUT or EINTR.
 * A deadline with a negative tv_sec (already checked for a valid tv_nsec)
 * is long past: the kernel would refuse it with EINVAL, so it is passed as
 * the epoch, which has the same meaning.
 */
static inline int swait_futex_wait(uint32_t *word, uint32_t expected,
				   clockid_t clock,
				   const struct timespec *deadline)
{
	static const struct timespec past = { 0, 0 };
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	int saved = errno;
	int err = 0;

	if (deadline && deadline->tv_sec < 0)
		deadline = &past;
	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	if (syscall(SYS_futex, word, op, expected, deadline, NULL,
		    FUTEX_BITSET_MATCH_ANY) != 0)
		err = errno;
	errno = saved;
	if (err != 0 && err != EAGAIN && err != ETIMEDOUT && err != EINTR)
		swait_fatal_errno("FUTEX_WAIT_BITSET", err, __FILE__, __LINE__);
	return err;
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
	int saved = errno;

#if SWAIT_TEST_HOOKS
	void (*hook)(uint32_t *) = __atomic_load_n(&swait_hook_futex_wake,
						   __ATOMIC_ACQUIRE);

	if (hook)
		hook(word);
#endif
	if (syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		    NULL, NULL, 0) < 0 && errno == ENOSYS)
		swait_fatal_errno("FUTEX_WAKE", errno, __FILE__, __LINE__);
	errno = saved;
}

#endif /* SWAIT_FUTEX_H */
