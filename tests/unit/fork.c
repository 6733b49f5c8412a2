// SPDX-License-Identifier: MIT
/*
 * fork.c - heads in a child process.
 *
 * A PI head's lock word holds the owner's thread id, which the library
 * caches per thread.  The forking thread's cache holds its parent's id in
 * the child.  A pthread_atfork handler used to clear it, but _Fork() (and
 * clone() without CLONE_VM) run no handlers: two threads contending on a PI
 * head in such a child made the kernel refuse FUTEX_LOCK_PI/UNLOCK_PI, and
 * the library aborted.  Here the parent caches its id on a PI head, then
 * the child (by fork() and by _Fork()) contends on it from three threads;
 * the child must exit 0.
 *
 * An asymmetric head's sleeps need the process registered for
 * membarrier() (lib/asym.c O1b); the registration is the parent's, made
 * by swait_head_init_asym(), and the child must inherit it: two of its
 * threads hand a turn back and forth on asymmetric heads the parent made,
 * and a sleep that found the process unregistered would abort.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tu_unit.h"

/* Each thread's rounds, scaled by SWAIT_STRESS_SCALE (0.02 under Valgrind,
 * where 100,000 took 12 s a tool while threads contend from the first). */
#define ROUNDS 100000

static struct swait_head pi_head = SWAIT_HEAD_PI_INITIALIZER;
static int started;
static long rounds;
/* Lock and unlock the PI head: a prepare and a finish each take it. */
static void *contend(void *arg)
{
	(void)arg;
	/*
	 * Start together, so that the three really contend.  Yielding: a
	 * bare spin holds Valgrind's one running thread for a whole time
	 * slice, which made this test take 2 to 30 s under DRD.
	 */
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < 3)
		sched_yield();
	for (long i = 0; i < rounds; i++) {
		struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

		swait_prepare(&pi_head, &w);
		swait_finish(&pi_head, &w);
		swait_wake_one(&pi_head);
	}
	return NULL;
}

static void child_main(void)
{
	pthread_t t[2];

	alarm(30);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, contend, NULL) != 0)
			_exit(3);
	contend(NULL);	/* the forking thread, whose id was cached */
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	_exit(swait_head_destroy(&pi_head) == 0 ? 0 : 4);
}

enum how { FORK, UNDERSCORE_FORK, RAW_CLONE };

static void run(enum how how)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int status;
	pid_t pid;

	rounds = tu_scale(ROUNDS);
	/* The parent's thread caches its id in a PI lock. */
	swait_prepare(&pi_head, &w);
	swait_finish(&pi_head, &w);
	switch (how) {
	case FORK:
		pid = fork();
		break;
	case UNDERSCORE_FORK:
		pid = _Fork();
		break;
	default:
		/*
		 * clone() without CLONE_VM, as a raw system call: no atfork
		 * handler, and glibc's own record of the thread id left
		 * stale.  With only flags given the argument order, which
		 * differs between architectures, does not matter.
		 */
		pid = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		break;
	}
	assert_true(pid >= 0);
	if (pid == 0)
		child_main();
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_error("child status %#x\n", status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* The parent's own cache still works. */
	swait_prepare(&pi_head, &w);
	swait_finish(&pi_head, &w);
	assert_int_equal(swait_head_destroy(&pi_head), 0);
}

/* ------------------------------------------------- asymmetric heads */

static struct swait_head asym_heads[2];
static int asym_turn;

static void *asym_player(void *arg)
{
	int me = (int)(intptr_t)arg;

	for (long i = 0; i < rounds; i++) {
		/* Annotated atomics: Helgrind and DRD see the hand-over. */
		swait_event(&asym_heads[me], TU_LOAD(&asym_turn) == me);
		TU_STORE(&asym_turn, !me);
		swait_wake_one(&asym_heads[!me]);
	}
	return NULL;
}

static void test_asym_heads_after_fork(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	if (getenv("MESON_EXE_WRAPPER"))
		skip();		/* qemu-user's fork() is not the point here */
	rounds = tu_scale(2000);
	for (int i = 0; i < 2; i++)
		assert_int_equal(swait_head_init_asym(&asym_heads[i]), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t;

		alarm(30);
		if (pthread_create(&t, NULL, asym_player, (void *)1) != 0)
			_exit(3);
		asym_player((void *)0);
		pthread_join(t, NULL);
		_exit(swait_head_destroy(&asym_heads[0]) == 0 &&
		      swait_head_destroy(&asym_heads[1]) == 0 ? 0 : 4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_error("child status %#x\n", status);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_pi_head_after_fork(void **state)
{
	(void)state;
	run(FORK);
}

static void test_pi_head_after__Fork(void **state)
{
	(void)state;
	/*
	 * qemu-user (the cross builds' exe wrapper) answers MADV_WIPEONFORK
	 * with 0 and does not carry it out, and _Fork() runs no atfork
	 * handler: nothing can tell the child it is new.  A real kernel can.
	 */
	if (getenv("MESON_EXE_WRAPPER"))
		skip();
	run(UNDERSCORE_FORK);
}

/* The third kind of child swait.h names: "PI heads work in all three". */
static void test_pi_head_after_clone(void **state)
{
	(void)state;
	/* As for _Fork(); and ThreadSanitizer does not see a raw clone. */
	if (getenv("MESON_EXE_WRAPPER"))
		skip();
#ifdef __SANITIZE_THREAD__
	skip();
#endif
	run(RAW_CLONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pi_head_after_fork),
		cmocka_unit_test(test_pi_head_after__Fork),
		cmocka_unit_test(test_pi_head_after_clone),
		cmocka_unit_test(test_asym_heads_after_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
