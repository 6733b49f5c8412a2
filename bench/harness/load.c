// SPDX-License-Identifier: MIT
/*
 * load.c - the competing load of --load: what a woken thread has to win
 * against, as cyclictest is run beside hackbench or stress-ng.
 *
 * One thread per CPU this process may run on, pinned there, so that no
 * CPU a measured thread may use is ever idle: a wake must then preempt a
 * running thread instead of waking an idle CPU.  The load threads are
 * SCHED_OTHER at the default nice even under --rt, because they are the
 * competition the SCHED_FIFO threads are meant to preempt, not peers.
 *
 * Each load thread never sleeps.  It dirties a 4 MiB buffer (four times
 * the L2 of the project's VM) one cache line at a time, so that a woken
 * thread finds its own lines and TLB entries evicted, and enters the
 * kernel between two strides of it, so that a wake often lands while the
 * CPU is in a system call rather than in user space.  A stride is short
 * (1024 cache lines) so that load_stop() returns promptly.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define LOAD_BUF	(4u << 20)	/* bytes dirtied per pass, per thread */
#define LOAD_STRIDE	(64u << 10)	/* bytes between two stop checks */
#define LINE		64u
#define MAX_LOAD	256		/* threads; CPUs beyond: no load */

static pthread_t load_threads[MAX_LOAD];
static int nload;
static int load_stopping;	/* written by load_stop, read by the threads */
static int load_running;	/* threads past their first stride */
static bool load_on;		/* between load_start and load_stop */

static void *load_thread(void *arg)
{
	/* volatile: stores to a buffer that is freed unread are dead. */
	volatile unsigned char *buf = malloc(LOAD_BUF);
	size_t off = 0;
	bool counted = false;

	(void)arg;
	if (!buf)
		die("--load: out of memory");
	/* Relaxed: the flag only ends the loop, it publishes nothing. */
	while (!__atomic_load_n(&load_stopping, __ATOMIC_RELAXED)) {
		for (size_t i = 0; i < LOAD_STRIDE; i += LINE)
			buf[off + i]++;
		off = (off + LOAD_STRIDE) % LOAD_BUF;
		syscall(SYS_getppid);
		if (!counted) {
			/* Relaxed: a count that load_start() only waits for. */
			__atomic_fetch_add(&load_running, 1, __ATOMIC_RELAXED);
			counted = true;
		}
	}
	free((void *)buf);
	return NULL;
}

void load_start(void)
{
	struct timespec poll = { 0, 100000 };
	cpu_set_t allowed;
	pthread_attr_t a;
	struct sched_param sp = { .sched_priority = 0 };

	if (load_on)
		return;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		die("sched_getaffinity: %s", strerror(errno));
	__atomic_store_n(&load_stopping, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&load_running, 0, __ATOMIC_RELAXED);
	nload = 0;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	/* Explicit, so that the load never inherits SCHED_FIFO. */
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	pthread_attr_setschedparam(&a, &sp);
	for (int c = 0; c < CPU_SETSIZE && nload < MAX_LOAD; c++) {
		cpu_set_t one;
		int err;

		if (!CPU_ISSET(c, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		pthread_attr_setaffinity_np(&a, sizeof(one), &one);
		err = pthread_create(&load_threads[nload], &a, load_thread,
				     NULL);
		if (err)
			die("--load: cannot start a load thread: %s",
			    strerror(err));
		nload++;
	}
	pthread_attr_destroy(&a);
	/*
	 * The loaded phase starts when every CPU is busy, not when the
	 * threads exist: the first samples must not see an idle CPU.
	 */
	while (__atomic_load_n(&load_running, __ATOMIC_RELAXED) < nload)
		nanosleep(&poll, NULL);
	load_on = true;
}

void load_stop(void)
{
	if (!load_on)
		return;
	__atomic_store_n(&load_stopping, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nload; i++)
		pthread_join(load_threads[i], NULL);
	load_on = false;
}

const char *load_current(void)
{
	return load_on ? "cpu" : "none";
}

int load_threads_count(void)
{
	cpu_set_t allowed;
	int n;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return 0;
	n = CPU_COUNT(&allowed);
	return n < MAX_LOAD ? n : MAX_LOAD;
}

const char *load_mode_name(enum load_mode m)
{
	switch (m) {
	case LOAD_CPU:
		return "cpu";
	case LOAD_BOTH:
		return "both";
	default:
		return "none";
	}
}
