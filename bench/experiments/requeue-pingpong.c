// SPDX-License-Identifier: MIT
/*
 * requeue-pingpong - what wait morphing could buy the condvar face, measured
 * before building it (issue 21's ping-pong goal: the face at <= 0.50x glibc's
 * pthread_cond with the signal under the lock).
 *
 *	requeue-pingpong [--split] [--mode NAME] [ROUND_TRIPS]
 *
 * Two threads hand a turn back and forth under one glibc mutex, each
 * signalling the other while it holds the mutex (swait-bench pingpong's
 * shape).  Four ways to wait and wake, run one after another in one process:
 *
 *   cond     glibc's pthread_cond_wait / pthread_cond_signal.
 *   wake     the face's shape: the waiter sleeps on a futex word of its own,
 *            the signaller flips it and FUTEX_WAKEs it under the lock.  The
 *            woken thread preempts its signaller, finds the mutex held and
 *            sleeps again on the mutex.
 *   requeue  wait morphing: the signaller sets the mutex word to 2 (it holds
 *            the mutex, so it is 1 or 2) and FUTEX_CMP_REQUEUEs the waiter
 *            from its word onto the mutex's, where the unlock's FUTEX_WAKE
 *            finds it.  A woken waiter keeps the word at 2 after its relock,
 *            since more morphed waiters may sleep there.  It runs once, at
 *            the unlock, at the price of the requeue's system call.
 *   after    the floor the goal points at: the same wake issued after the
 *            unlock (what a signal under the lock would cost if a library
 *            could delay its wake to the caller's unlock).
 *
 * Per round trip it prints the time, the context switches (getrusage) and
 * the futex calls the experiment's own code made (not glibc's: the mutex's
 * and pthread_cond's are left out; count every one with --mode NAME under
 * perf stat -e syscalls:sys_enter_futex).  One CPU unless --split.  Not a product
 * and not a protocol: one waiter per side, no timeouts, no cancellation, a
 * glibc mutex read through its private fields.  The verdict is in
 * bench/README.md ("The condvar face and unmodified programs").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { COND, WAKE, REQUEUE, AFTER, NMODES };
static const char *const mode_name[NMODES] = { "cond", "wake", "requeue",
					       "after" };

static enum mode mode;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;			/* under mutex */
static uint32_t *waiting[2];		/* under mutex: a side's word */
static long rounds;
static bool split;

struct side {
	int me;
	unsigned long futex_calls;
	long csw;
};

static long futex(uint32_t *word, int op, uint32_t val, unsigned long val2,
		  uint32_t *word2, uint32_t val3, struct side *s)
{
	s->futex_calls++;
	return syscall(SYS_futex, word, op | FUTEX_PRIVATE_FLAG, val, val2,
		       word2, val3);
}

/* glibc's lock word: 0 free, 1 held, 2 held and maybe contended. */
static int *mutex_word(void)
{
	return &mutex.__data.__lock;
}

static void keep_contended(void)
{
	int one = 1;

	__atomic_compare_exchange_n(mutex_word(), &one, 2, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Mutex held; returns with it held again. */
static void wait_turn(struct side *s)
{
	uint32_t word = 1;

	if (mode == COND) {
		pthread_cond_wait(&cond, &mutex);
		return;
	}
	waiting[s->me] = &word;
	pthread_mutex_unlock(&mutex);
	while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 1)
		futex(&word, FUTEX_WAIT, 1, 0, NULL, 0, s);
	pthread_mutex_lock(&mutex);
	if (mode == REQUEUE)
		keep_contended();
}

/* Mutex held: the other side's word, to wake now or after the unlock. */
static uint32_t *signal_other(struct side *s)
{
	uint32_t *word = waiting[!s->me];

	if (mode == COND) {
		pthread_cond_signal(&cond);
		return NULL;
	}
	if (!word)
		return NULL;
	waiting[!s->me] = NULL;
	if (mode == REQUEUE)
		keep_contended();
	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
	if (mode == WAKE)
		futex(word, FUTEX_WAKE, 1, 0, NULL, 0, s);
	else if (mode == REQUEUE)
		futex(word, FUTEX_CMP_REQUEUE, 0, 1, (uint32_t *)mutex_word(),
		      0, s);
	return mode == AFTER ? word : NULL;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("requeue-pingpong: sched_setaffinity");
		exit(2);
	}
}

static void *side_main(void *arg)
{
	struct side *s = arg;
	struct rusage ru;

	pin(split ? s->me : 0);
	for (long i = 0; i < rounds; i++) {
		uint32_t *later;

		pthread_mutex_lock(&mutex);
		while (turn != s->me)
			wait_turn(s);
		turn = !s->me;
		later = signal_other(s);
		pthread_mutex_unlock(&mutex);
		if (later)
			futex(later, FUTEX_WAKE, 1, 0, NULL, 0, s);
	}
	getrusage(RUSAGE_THREAD, &ru);
	s->csw = ru.ru_nvcsw + ru.ru_nivcsw;
	return NULL;
}

static double run(enum mode m, long n, double *csw, double *calls)
{
	struct side sides[2] = { { .me = 0 }, { .me = 1 } };
	pthread_t t[2];
	struct timespec a, b;

	mode = m;
	rounds = n;
	turn = 0;
	waiting[0] = waiting[1] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, side_main, &sides[i]) != 0) {
			fprintf(stderr, "requeue-pingpong: pthread_create "
				"failed\n");
			exit(2);
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*csw = (double)(sides[0].csw + sides[1].csw) / (double)n;
	*calls = (double)(sides[0].futex_calls + sides[1].futex_calls) /
		 (double)n;
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 +
		(double)(b.tv_nsec - a.tv_nsec)) / (double)n / 1000.0;
}

int main(int argc, char **argv)
{
	long n = 100000;
	double us[NMODES], csw, calls;
	int only = -1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--split") == 0) {
			split = true;
		} else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
			i++;
			for (int m = 0; m < NMODES; m++)
				if (strcmp(argv[i], mode_name[m]) == 0)
					only = m;
			if (only < 0) {
				fprintf(stderr, "requeue-pingpong: no mode "
					"'%s' (cond, wake, requeue, after)\n",
					argv[i]);
				return 2;
			}
		} else {
			char *end;

			errno = 0;
			n = strtol(argv[i], &end, 10);
			if (errno || *end || n < 1) {
				fprintf(stderr, "usage: requeue-pingpong "
					"[--split] [--mode NAME] "
					"[ROUND_TRIPS]\n");
				return 2;
			}
		}
	}
	printf("# %ld round trips, %s; per round trip:\n", n,
	       split ? "two CPUs" : "one CPU");
	printf("%-8s %9s %8s %10s %8s\n", "mode", "us", "csw", "own futex",
	       "x cond");
	for (int m = 0; m < NMODES; m++) {
		if (only >= 0 && m != only)
			continue;
		us[m] = run((enum mode)m, n, &csw, &calls);
		printf("%-8s %9.2f %8.2f %10.2f", mode_name[m], us[m], csw,
		       calls);
		if (only < 0)
			printf(" %8.2f", us[m] / us[COND]);
		printf("\n");
	}
	return 0;
}
