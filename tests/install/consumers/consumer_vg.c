// SPDX-License-Identifier: MIT
/*
 * consumer_vg.c - a program with no races of its own, run by the install
 * suite under Helgrind and DRD against the default installed library: any
 * report is one about libswait (or about how it tells the tools what it
 * synchronises with), so any report fails.
 *
 * Its state lives under a pthread mutex (swait_event_mutex), the way a
 * program ported from pthread_cond keeps it: workers take items, the main
 * thread gives them and wakes under the mutex, then every worker completes
 * a completion on the main thread's stack.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <swait.h>

#define WORKERS 3
#define ITEMS 300

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct swait_head more = SWAIT_HEAD_INITIALIZER;
static int items, given_all, taken;	/* under lock */

static void *worker(void *arg)
{
	struct swait_completion *done = arg;

	pthread_mutex_lock(&lock);
	for (;;) {
		swait_event_mutex(&more, items > 0 || given_all, &lock);
		if (items == 0)
			break;
		items--;
		taken++;
	}
	pthread_mutex_unlock(&lock);
	swait_complete(done);
	return NULL;
}

int main(void)
{
	struct swait_completion done = SWAIT_COMPLETION_INITIALIZER;
	pthread_t t[WORKERS];
	int i, err = 0;

	for (i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, &done))
			return 1;
	for (i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&lock);
		items++;
		swait_wake_one(&more);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	given_all = 1;
	swait_wake_all(&more);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < WORKERS; i++) {
		struct timespec dl;

		swait_deadline_after(&dl, CLOCK_MONOTONIC, 60000000000LL);
		err |= swait_completion_wait_timeout(&done, CLOCK_MONOTONIC,
						     &dl);
	}
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	if (err || taken != ITEMS) {
		fprintf(stderr, "consumer_vg: %d of %d taken, err %d\n",
			taken, ITEMS, err);
		return 1;
	}
	printf("consumer_vg: ok\n");
	return 0;
}
