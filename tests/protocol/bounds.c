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
 *
 * The second test is the misuse that hangs silently: a call that is not
 * async-signal-safe (here swait_completion_try_wait()) from a handler that
 * interrupted its own thread's hold of the same head.  Debug builds must
 * abort naming it; without the debug checks the child would hang, so the
 * test is skipped there.
 *
 * The third is a PI head lock whose holder ended inside the critical
 * section: every build must abort saying so (it used to say "impossible
 * in a correct program").
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
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

static struct swait_completion comp;

static void try_wait_in_handler(int sig)
{
	(void)sig;
	(void)swait_completion_try_wait(&comp);	/* not async-signal-safe */
}

static void raise_on_comp(struct swait_head *h)
{
	if (h == &comp.wait)
		raise(SIGUSR1);
}

static void misuse_in_handler(void)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = try_wait_in_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		_exit(3);
	swait_completion_init(&comp);
	swait_complete(&comp);	/* try_wait's peek must not return early */
	__atomic_store_n(&swait_hook_prepare_locked, raise_on_comp,
			 __ATOMIC_RELEASE);
	swait_prepare(&comp.wait, &w);
	_exit(0);	/* not reached: debug builds abort in the handler */
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

/*
 * A thread that ends inside a PI head's critical section (here by a raw
 * exit from the test hook: what a longjmp or pthread_exit out of a handler
 * would do) leaves its thread id in the lock word.  The next locker's
 * FUTEX_LOCK_PI gets ESRCH; the abort must say what happened, not call it
 * impossible.
 */
static struct swait_head pi_head = SWAIT_HEAD_PI_INITIALIZER;

static pid_t dead_tid;

static void exit_in_hook(struct swait_head *h)
{
	if (h == &pi_head)
		syscall(SYS_exit, 0);	/* the thread only; no unwinding */
}

static void *die_holding(void *arg)
{
	static struct swait_waiter w;	/* stays valid: it stays queued */

	(void)arg;
	__atomic_store_n(&dead_tid, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	swait_prepare(&pi_head, &w);
	return NULL;
}

static void owner_gone(void)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	char task[64];
	pthread_t t;

	__atomic_store_n(&swait_hook_prepare_locked, exit_in_hook,
			 __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, die_holding, NULL) != 0 ||
	    pthread_join(t, NULL) != 0)
		_exit(3);
	__atomic_store_n(&swait_hook_prepare_locked, NULL, __ATOMIC_RELEASE);
	/*
	 * The join returns when the thread id is cleared; under qemu-user
	 * that can precede the host thread's exit, and a FUTEX_LOCK_PI in
	 * between finds a live owner and waits for its exit instead.  Wait
	 * until the kernel has no such task (the alarm bounds it).
	 */
	snprintf(task, sizeof(task), "/proc/self/task/%d",
		 (int)__atomic_load_n(&dead_tid, __ATOMIC_ACQUIRE));
	while (access(task, F_OK) == 0)
		sched_yield();
	swait_prepare(&pi_head, &w);
	_exit(0);	/* not reached: the lock's owner is gone */
}

/* Run fn in a child with stderr captured; its wait status and stderr. */
static int run_child(void (*fn)(void), char *out, size_t size)
{
	ssize_t n, len = 0;
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		alarm(20);	/* a hang fails as SIGALRM */
		fn();
	}
	close(fds[1]);
	while (len < (ssize_t)size - 1 &&
	       (n = read(fds[0], out + len, size - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

/* fn must make the child abort with a message containing both words. */
static void expect_abort(void (*fn)(void), const char *word1,
			 const char *word2)
{
	char out[4096];
	int status = run_child(fn, out, sizeof(out));

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT ||
	    !strstr(out, word1) || !strstr(out, word2))
		print_error("child: status %#x, stderr: %s\n", status, out);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(out, word1));
	assert_non_null(strstr(out, word2));
}

static void nesting_past_the_bound_aborts(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	/* TSan defers signals to its own safe points: raise() nests nothing. */
	skip();
#endif
	expect_abort(nest_too_deep, "nested too deep", "SWAIT_HELD_MAX");
}

static void misuse_in_handler_is_named(void **state)
{
	(void)state;
	if (!SWAIT_TEST_DEBUG_CHECKS)
		skip();		/* without the checks the child hangs */
	expect_abort(misuse_in_handler, "not async-signal-safe",
		     "only the four wakes");
}

static void pi_owner_gone_is_named(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	skip();		/* TSan cannot follow a thread's raw exit */
#endif
	expect_abort(owner_gone, "the thread that holds it is gone",
		     "PI head lock");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nesting_past_the_bound_aborts),
		cmocka_unit_test(misuse_in_handler_is_named),
		cmocka_unit_test(pi_owner_gone_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
