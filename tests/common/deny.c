// SPDX-License-Identifier: MIT
/*
 * deny.c - tu_deny_syscall(): a one-call seccomp filter (deny.h).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>

#include "deny.h"

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

int tu_deny_syscall(long nr, int err)
{
#ifdef ARCH
	struct sock_filter f[] = {
		/* Another ABI's numbers mean other calls: allow them. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (unsigned)(err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(f) / sizeof(f[0]),
		.filter = f,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return errno;
	return 0;
#else
	(void)nr;
	(void)err;
	return ENOSYS;
#endif
}
