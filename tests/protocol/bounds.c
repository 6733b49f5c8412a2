// SPDX-License-Identifier: MIT
/*
 * bounds.c - the held-heads stack's bound holds in every build.
 *
 * Each thread's stack of the heads it is locking (lib/headlock.c) has
 * SWAIT_HELD_MAX (8) entries.  Signal handlers that lock heads nested
 * deeper than that used to be caught only by the debug checks: a release
 * build wrote past the stack.  Now every build aborts with a message that
 * names the limit.  A test hook raises the signal inside each prepare's
 * critical section, and the handler (installed with SA_NODEFER) prepares
 * on the next head, so the locks nest one level per handler.  The child
 * process that does it must die of SIGABRT saying so; this test runs in
 * the release stage of CI as well as in the debug builds.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_prepare_locked)(struct swait_head *head);

#define LEVELS 12			/* more than SWAIT_HELD_MAX */

static struct swait_head heads[LEVELS];
static struct swait_waiter waiters[LEVELS];
static volatile sig_atomic_t level;

static void nest(int sig)
{
	int i = level++;

	(void)sig;
	if (i < LEVELS)
		swait_prepare(&heads[i], &waiters[i]);
}

/* Inside prepare's critical section: interrupt it with the next level. */
static void raise_hook(struct swait_head *h)
{
	(void)h;
	if (level < LEVELS)
		raise(SIGUSR1);
}

static void nest_too_deep(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nest;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		_exit(3);
	__atomic_store_n(&swait_hook_prepare_locked, raise_hook,
			 __ATOMIC_RELEASE);
	nest(SIGUSR1);
	_exit(0);	/* not reached: the ninth level must abort */
}

static void nesting_past_the_bound_aborts(void **state)
{
	char out[4096];
	ssize_t n, len = 0;
	int fds[2], status;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		alarm(20);	/* a hang fails as SIGALRM */
		nest_too_deep();
	}
	close(fds[1]);
	while (len < (ssize_t)sizeof(out) - 1 &&
	       (n = read(fds[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
	    !strstr(out, "nested too deep"))
		print_error("child: status %#x, stderr: %s\n", status, out);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, "nested too deep"));
	assert_non_null(strstr(out, "SWAIT_HELD_MAX"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nesting_past_the_bound_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
