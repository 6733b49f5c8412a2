// SPDX-License-Identifier: MIT
/*
 * no-waitv [--eperm] PROGRAM [ARGS...] - run PROGRAM on a kernel without
 * futex_waitv.
 *
 * lib/swait.c's wake_all makes one system call for all its sleepers where
 * the kernel has futex_waitv() (Linux 5.16), and falls back to one
 * FUTEX_WAKE per sleeper where it answers ENOSYS (W3).  CI's kernel has
 * the call, so the fallback would go untested; this wrapper takes it away.
 * It installs a seccomp filter that answers futex_waitv with ENOSYS, as an
 * older kernel does, and then execs PROGRAM: the filter survives execve()
 * (with no_new_privs, which also lets an unprivileged user install it).
 * Every other system call is allowed.  With --eperm the filter answers
 * EPERM instead, as container runtimes' filters answer a call newer than
 * their profile; the library must fall back the same way.
 *
 * Exit status: PROGRAM's; 1 if the filter cannot be installed, or 77
 * (skipped) under an emulator (MESON_EXE_WRAPPER): qemu-user does not
 * implement seccomp for its guest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deny.h"

int main(int argc, char **argv)
{
	int err = ENOSYS;

	if (argc > 1 && strcmp(argv[1], "--eperm") == 0) {
		err = EPERM;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: no-waitv [--eperm] PROGRAM [ARGS...]\n");
		return 2;
	}
	if (getenv("MESON_EXE_WRAPPER")) {
		fprintf(stderr, "no-waitv: skipped under an emulator\n");
		return 77;
	}
#ifdef SYS_futex_waitv
	{
		int e = tu_deny_syscall(SYS_futex_waitv, err);

		if (e != 0) {
			fprintf(stderr, "no-waitv: seccomp filter: %s\n",
				strerror(e));
			return 1;
		}
	}
	/* Prove the filter is in place before handing over. */
	if (syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) != -1 ||
	    errno != err) {
		fprintf(stderr, "no-waitv: futex_waitv still answers\n");
		return 1;
	}
#endif
	execv(argv[1], argv + 1);
	fprintf(stderr, "no-waitv: %s: %s\n", argv[1], strerror(errno));
	return 1;
}
