/* SPDX-License-Identifier: MIT */
/*
 * check.h - fatal errors and the debug checks.
 *
 * SWAIT_DEBUG_CHECKS is set by the build (Meson option debug_checks).  With
 * it, misuse that would otherwise corrupt a queue or lose a wakeup aborts
 * with a message naming the misuse.  Without it the checks compile away and
 * the hot paths stay branch-light.
 *
 * The messages are written with write(2), not stdio: they may be printed
 * from a signal handler or with the head lock held.
 */
#ifndef SWAIT_CHECK_H
#define SWAIT_CHECK_H

#include <stdint.h>

#ifndef SWAIT_DEBUG_CHECKS
#define SWAIT_DEBUG_CHECKS 0
#endif

#define swait_likely(x) __builtin_expect(!!(x), 1)
#define swait_unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Abort after printing "libswait: <what>" with up to three pointers
 * appended.  Never returns.
 */
__attribute__((noreturn, cold))
void swait_fatal(const char *what, const void *a, const void *b,
		 const void *c);

/*
 * Abort after printing a futex error that no correct program meets: ENOSYS
 * (a kernel without the operation), or one that only a word overwritten or
 * freed while in use causes (EFAULT, EINVAL after the library's own
 * validation, EPERM).  Errors a correct program can meet are handled or
 * named where they occur.
 */
__attribute__((noreturn, cold))
void swait_fatal_errno(const char *call, int err, const char *file, int line);

/*
 * Abort after printing "libswait: <what> (errno <err>)": a system call that
 * failed where going on could lose a wakeup, with the error it returned.
 */
__attribute__((noreturn, cold))
void swait_fatal_call(const char *what, int err);

/* In debug builds: abort with msg and the pointers unless cond holds. */
#define swait_check(cond, msg, a, b, c)					\
	do {								\
		if (SWAIT_DEBUG_CHECKS && swait_unlikely(!(cond)))	\
			swait_fatal(msg, a, b, c);			\
	} while (0)

#endif /* SWAIT_CHECK_H */
