/* SPDX-License-Identifier: MIT */
/*
 * deny.h - take a system call away from this process, as an older kernel
 * or a container's seccomp profile would.
 */
#ifndef TU_DENY_H
#define TU_DENY_H

/*
 * Install a seccomp filter on the calling thread (and the threads and
 * programs it creates from now on: the filter survives fork() and
 * execve()) that answers system call nr with err and allows every other
 * call.  Sets no_new_privs, so an unprivileged process may do it.  0, or
 * an error number: ENOSYS where this architecture's filter is not built,
 * or prctl()'s error.  Not under qemu-user, which does not implement
 * seccomp for its guest: callers check MESON_EXE_WRAPPER first.
 */
int tu_deny_syscall(long nr, int err);

#endif
