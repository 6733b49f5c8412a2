/* SPDX-License-Identifier: MIT */
/*
 * harness.h - what the real-kernel tests (tests/kernel/real/) need around
 * the reduced kernel functions: checks that fail with a message, threads,
 * a SIGUSR1 handler installed with or without SA_RESTART that counts its
 * runs, and a watchdog (SIGALRM's default action ends a hung test).
 */
#ifndef REAL_HARNESS_H
#define REAL_HARNESS_H

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"	/* tu_gettid(), tu_task_state() */

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #c);		\
			exit(1);					\
		}							\
	} while (0)

static inline void h_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static inline long long h_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The threads h_start() started, and their kernel ids (h_wait_asleep). */
#define H_MAX_THREADS 32

static struct h_thread {
	pthread_t t;
	pid_t tid;		/* atomic: set by the thread when it runs */
	void *(*fn)(void *);
	void *arg;
} h_threads[H_MAX_THREADS];
static int h_nthreads;

static inline void *h_run(void *p)
{
	struct h_thread *h = p;

	/* Relaxed: the id alone is read through it, nothing it guards. */
	__atomic_store_n(&h->tid, tu_gettid(), __ATOMIC_RELAXED);
	return h->fn(h->arg);
}

static inline pthread_t h_start(void *(*fn)(void *), void *arg)
{
	struct h_thread *h;

	CHECK(h_nthreads < H_MAX_THREADS);
	h = &h_threads[h_nthreads++];
	h->fn = fn;
	h->arg = arg;
	CHECK(pthread_create(&h->t, NULL, h_run, h) == 0);
	return h->t;
}

/*
 * Until thread t (from h_start) sleeps: its state in /proc is S.  A test
 * that signals or wakes a waiter "once it waits" needs this, not a fixed
 * sleep: on a loaded machine a new thread may not run for tens of
 * milliseconds, and a signal sent before its wait is handled at once and
 * ends nothing.  The tests' waiters block nowhere else.
 */
static inline void h_wait_asleep(pthread_t t)
{
	struct h_thread *h = NULL;
	pid_t tid;

	for (int i = 0; i < h_nthreads; i++)
		if (pthread_equal(h_threads[i].t, t))
			h = &h_threads[i];
	CHECK(h != NULL);
	while ((tid = __atomic_load_n(&h->tid, __ATOMIC_RELAXED)) == 0 ||
	       tu_task_state(tid) != 'S')
		h_sleep_ms(1);
}

static inline void *h_join(pthread_t t)
{
	void *ret;

	CHECK(pthread_join(t, &ret) == 0);
	return ret;
}

static volatile sig_atomic_t h_handled;

static inline void h_on_signal(int sig)
{
	(void)sig;
	h_handled++;
}

/* glibc's signal() installs with SA_RESTART: restart != 0 does the same. */
static inline void h_handler(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h_on_signal;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
}

/* Ends the test (SIGALRM's default action) if it hangs. */
static inline void h_watchdog(unsigned seconds)
{
	alarm(seconds);
}

#endif
