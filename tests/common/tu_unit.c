// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_unit.h"

static const char *tu_cur_what;
static const char *tu_cur_phase;

/*
 * Whether tid is inside the futex system call.  .../syscall may be
 * unreadable (ptrace restrictions); then the 'S' state alone has to do.
 */
static bool in_futex(pid_t tid)
{
	long nr = tu_task_syscall(tid);

	return nr == -1 || tu_is_futex_call(nr);
}

bool tu_wait_asleep(pid_t tid, const struct swait_head *head)
{
	/* Not parked on the head's own lock word (a contended prepare). */
	return tu_poll(swait_active(head) && tu_task_state(tid) == 'S' &&
		       in_futex(tid) &&
		       tu_task_syscall_arg(tid, 1) !=
		       (unsigned long)(uintptr_t)&head->lock);
}

static void describe(FILE *out)
{
	const char *phase = __atomic_load_n(&tu_cur_phase, __ATOMIC_RELAXED);

	fprintf(out, "  test: %s\n  last phase: %s\n",
		tu_cur_what ? tu_cur_what : "?",
		phase ? phase : "(none)");
}

void tu_test_phase(const char *phase)
{
	TU_SYNC_VAR(tu_cur_phase);
	__atomic_store_n(&tu_cur_phase, phase, __ATOMIC_RELAXED);
}

void tu_watchdog(const char *what)
{
	tu_cur_what = what;
	tu_test_phase("start");
	tu_watchdog_arm(TU_WATCHDOG_SECONDS, what, describe);
}

void tu_watchdog_round(long r)
{
	/* Two: describe() may still be printing the last round's. */
	static char phase[2][32];
	char *p = phase[r & 1];

	snprintf(p, sizeof(phase[0]), "round %ld", r);
	tu_test_phase(p);
	tu_watchdog_arm(TU_WATCHDOG_SECONDS, tu_cur_what, describe);
}

void tu_watchdog_done(void)
{
	tu_watchdog_disarm();
}

void tu_check_failed(const char *what, const char *file, int line)
{
	char buf[512];
	int n;

	n = snprintf(buf, sizeof(buf), "%s:%d: check failed: %s\n", file,
		     line, what);
	if (n > 0)
		(void)write(STDERR_FILENO, buf,
			    (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
	_exit(1);
}

int tu_run_child(void (*fn)(void *), void *arg, unsigned seconds,
		 struct tu_child *res)
{
	char sink[256];
	size_t len = 0;
	int fds[2];
	pid_t pid;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	if (pipe(fds) != 0)
		return -1;
	/* cmocka's buffered output must not be written twice. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		signal(SIGABRT, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		signal(SIGALRM, SIG_DFL);
		alarm((unsigned)(seconds * tu_slowdown()));
		fn(arg);
		_exit(0);	/* not exit(): no atexit, no stdio flush */
	}
	close(fds[1]);
	/* Until EOF: the child's threads share the pipe and die with it. */
	for (;;) {
		n = read(fds[0], res->out + len, sizeof(res->out) - 1 - len);
		if (n > 0) {
			len += (size_t)n;
			if (len < sizeof(res->out) - 1)
				continue;
			/* Full: drain the rest so the child never blocks. */
			while (read(fds[0], sink, sizeof(sink)) > 0)
				;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	res->out[len] = '\0';
	close(fds[0]);
	while (waitpid(pid, &res->status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

bool tu_child_ok(const struct tu_child *res, const char *what)
{
	int sig;

	if (WIFEXITED(res->status) && WEXITSTATUS(res->status) == 0)
		return true;
	if (WIFSIGNALED(res->status)) {
		sig = WTERMSIG(res->status);
		print_error("%s: child killed by signal %d (%s)%s\n", what, sig,
			    strsignal(sig), sig == SIGALRM ?
			    ": it hung (lost wakeup?)" : "");
	} else {
		print_error("%s: child exited with status %d\n", what,
			    WEXITSTATUS(res->status));
	}
	if (res->out[0])
		print_error("%s: child's stderr:\n%s", what, res->out);
	return false;
}

bool tu_child_aborted(const struct tu_child *res, const char *const *words)
{
	unsigned i;

	if (!WIFSIGNALED(res->status) || WTERMSIG(res->status) != SIGABRT) {
		if (WIFSIGNALED(res->status))
			print_error("expected SIGABRT, child got signal %d\n",
				    WTERMSIG(res->status));
		else
			print_error("expected SIGABRT, child exited with %d\n",
				    WEXITSTATUS(res->status));
		print_error("child's stderr:\n%s\n", res->out);
		return false;
	}
	for (i = 0; words[i]; i++)
		if (strstr(res->out, words[i]))
			return true;
	print_error("abort message lacks \"%s\":\n%s\n", words[0], res->out);
	return false;
}

/*
 * Take the mutex and exit holding it: the kernel walks the exiting
 * thread's robust list and marks the mutex's owner dead.
 */
static void *lock_and_exit(void *arg)
{
	return (void *)(intptr_t)pthread_mutex_lock(arg);
}

/*
 * Robust mutexes need the kernel's robust list; qemu-user answers
 * set_robust_list with ENOSYS, and then either the init fails with
 * ENOTSUP or an owner's death is never noticed.  So ask once: a thread
 * exits holding a probe mutex, and a timed lock must return EOWNERDEAD.
 */
const char *tu_robust_skip_why(void)
{
	static int done;
	static const char *why;
	pthread_mutexattr_t a;
	pthread_mutex_t m;
	struct timespec dl;
	pthread_t t;
	void *res;
	int r;

	if (done)
		return why;
	done = 1;
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer has no model of an owner dying. */
	return why = "ThreadSanitizer does not model robust mutexes";
#endif
	/* Helgrind and DRD report a thread that exits holding a lock. */
	if (getenv("SWAIT_UNDER_VALGRIND"))
		return why = "Valgrind reports the owner's exit with the lock";
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	r = pthread_mutex_init(&m, &a);
	pthread_mutexattr_destroy(&a);
	if (r != 0)
		return why = "no robust mutexes (pthread_mutex_init failed)";
	if (pthread_create(&t, NULL, lock_and_exit, &m) != 0 ||
	    pthread_join(t, &res) != 0 || res != NULL)
		return why = "the probe thread failed";
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 2;
	r = pthread_mutex_timedlock(&m, &dl);
	if (r != EOWNERDEAD)
		return why = "the kernel does not mark a dead owner "
			     "(no robust list: qemu-user?)";
	pthread_mutex_consistent(&m);
	pthread_mutex_unlock(&m);
	pthread_mutex_destroy(&m);
	return why = NULL;
}
