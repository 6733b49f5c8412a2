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

static inline pthread_t h_start(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, fn, arg) == 0);
	return t;
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
