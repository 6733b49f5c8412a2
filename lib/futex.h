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
 *    every futex user must already tolerate as a spurious wakeup.
 *  - errno is never changed: the library returns errors, pthread style.
 *  - Errors that a correct program cannot see (EFAULT, ENOSYS, EINVAL from
 *    the kernel after our own validation) abort with file, line and errno.
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

/* Wake up to n threads sleeping on word.  Never blocks. */
static inline void swait_futex_wake(uint32_t *word, int n)
{
	int saved = errno;

	if (syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		    NULL, NULL, 0) < 0)
		swait_fatal_errno("FUTEX_WAKE", errno, __FILE__, __LINE__);
	errno = saved;
}

#endif /* SWAIT_FUTEX_H */
