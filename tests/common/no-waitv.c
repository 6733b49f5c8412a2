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
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The architecture whose system call numbers the filter compares. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#elif defined(__arm__)
#define ARCH AUDIT_ARCH_ARM
#endif

int main(int argc, char **argv)
{
	int err = ENOSYS;

	if (argc > 1 && strcmp(argv[1], "--eperm") == 0) {
		err = EPERM;
		argv++;
		argc--;
	}
#if defined(SYS_futex_waitv) && defined(ARCH)
	struct sock_filter f[] = {
		/* Another ABI's numbers mean other calls: allow them. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex_waitv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (unsigned)(err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};
#endif

	if (argc < 2) {
		fprintf(stderr, "usage: no-waitv [--eperm] PROGRAM [ARGS...]\n");
		return 2;
	}
	if (getenv("MESON_EXE_WRAPPER")) {
		fprintf(stderr, "no-waitv: skipped under an emulator\n");
		return 77;
	}
#if defined(SYS_futex_waitv) && defined(ARCH)
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		fprintf(stderr, "no-waitv: seccomp filter: %s\n",
			strerror(errno));
		return 1;
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
