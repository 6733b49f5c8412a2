// SPDX-License-Identifier: MIT
/*
 * bounds.c - what has a bound, and what must not have one any more.
 *
 * The first test is nesting without a limit.  The old design kept a stack
 * of 8 held heads per thread (SWAIT_HELD_MAX) and aborted when signal
 * handlers nested deeper.  Now a wake from a handler takes a free lock or
 * posts into the held head's word (lib/headlock.c L2), so nothing per
 * thread fills up.  A test hook raises the signal inside each hold of a
 * completion, and the handler (installed with SA_NODEFER) completes the
 * next completion, whose hold raises the next level: 16 handlers deep,
 * each also completing the completion its interrupted hold is in (a post)
 * and waking a queued waiter on a free head (taken at once).  The child
 * that does it must exit normally with every call performed exactly once;
 * this test runs in the release stage of CI as well as in the debug
 * builds.
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
extern void (*swait_hook_head_locked)(struct swait_head *head);
extern unsigned long swait_hook_deferred;

#define LEVELS 16			/* twice the old SWAIT_HELD_MAX */

static struct swait_completion levels[LEVELS];
static struct swait_head free_heads[LEVELS];
static struct swait_waiter free_waiters[LEVELS];
static volatile sig_atomic_t level;	/* handlers entered */

/*
 * Level n (1..LEVELS) interrupts the hold of levels[n - 1], made by level
 * n - 1 (the thread for n = 1): it completes levels[n] (free, so taken;
 * its hold raises level n + 1), then levels[n - 1] (held below: posted),
 * then wakes the waiter on free_heads[n - 1] (free: taken at once).
 */
static void nest(int sig)
{
	int n = ++level;

	(void)sig;
	if (n < LEVELS)
		swait_complete(&levels[n]);
	swait_complete(&levels[n - 1]);
	swait_wake_one(&free_heads[n - 1]);
}

/* Inside each hold of a completion: interrupt it with the next level. */
static void raise_hook(struct swait_head *h)
{
	for (int i = 0; i < LEVELS; i++)
		if (h == &levels[i].wait && level < LEVELS)
			raise(SIGUSR1);
}

/* A failed check in the child: say which, exit 1. */
#define child_check(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s\n", __FILE__,	\
				__LINE__, #cond);			\
			_exit(1);					\
		}							\
	} while (0)

/* A sleep with a past deadline: 0 iff the waiter had been woken. */
static int poll_sleep(struct swait_head *h, struct swait_waiter *w)
{
	static const struct timespec past = { 0, 0 };

	return swait_sleep(h, w, 0, CLOCK_MONOTONIC, &past);
}

static void nest_deep(void)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long before = swait_hook_deferred;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = nest;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		_exit(3);
	for (int i = 0; i < LEVELS; i++) {
		swait_completion_init(&levels[i]);
		swait_head_init(&free_heads[i]);
		swait_prepare(&free_heads[i], &free_waiters[i]);
	}
	__atomic_store_n(&swait_hook_head_locked, raise_hook,
			 __ATOMIC_RELEASE);
	swait_prepare(&levels[0].wait, &w);	/* level 1 lands in here */
	__atomic_store_n(&swait_hook_head_locked, NULL, __ATOMIC_RELEASE);

	child_check(level == LEVELS);
	/* One post per level, to the hold below it. */
	child_check(swait_hook_deferred - before >= LEVELS);
	/* The post to the thread's own hold woke its waiter. */
	child_check(poll_sleep(&levels[0].wait, &w) == 0);
	swait_finish(&levels[0].wait, &w);
	for (int i = 0; i < LEVELS; i++) {
		/* levels[0] once, by level 1; the others by two levels. */
		int expect = i == 0 ? 1 : 2;

		for (int k = 0; k < expect; k++)
			child_check(swait_completion_try_wait(&levels[i]));
		child_check(!swait_completion_try_wait(&levels[i]));
		child_check(swait_head_destroy(&levels[i].wait) == 0);
		child_check(poll_sleep(&free_heads[i], &free_waiters[i]) == 0);
		swait_finish(&free_heads[i], &free_waiters[i]);
		child_check(swait_head_destroy(&free_heads[i]) == 0);
	}
	_exit(0);
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

/* fn must make the child exit 0. */
static void expect_clean_exit(void (*fn)(void))
{
	char out[4096];
	int status = run_child(fn, out, sizeof(out));

	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_error("child: status %#x, stderr: %s\n", status, out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void nesting_has_no_bound(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	/* TSan defers signals to its own safe points: raise() nests nothing. */
	skip();
#endif
	expect_clean_exit(nest_deep);
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
		cmocka_unit_test(nesting_has_no_bound),
		cmocka_unit_test(misuse_in_handler_is_named),
		cmocka_unit_test(pi_owner_gone_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
