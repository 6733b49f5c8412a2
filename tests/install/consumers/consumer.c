// SPDX-License-Identifier: MIT
/*
 * consumer.c - a program that uses an installed libswait, built by the
 * install suite through pkg-config (shared and static), Meson and CMake.
 *
 * One thread sleeps on a head until the main thread sets a flag and wakes
 * it; the sleeper then completes a completion the main thread waits on.
 * Every wait has a deadline, so a broken build fails instead of hanging.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <swait.h>

#define TEN_SECONDS (10 * 1000000000LL)

static struct swait_head head = SWAIT_HEAD_INITIALIZER;
static struct swait_completion woken = SWAIT_COMPLETION_INITIALIZER;
static atomic_bool ready;

static void *sleeper(void *arg)
{
	int *err = arg;

	*err = swait_event_timeout_ns(&head, atomic_load(&ready), TEN_SECONDS);
	swait_complete(&woken);
	return NULL;
}

int main(void)
{
	struct timespec deadline, tick = { 0, 1000000 };
	pthread_t thread;
	int i, err = -1, sleeper_err = -1;

	if (pthread_create(&thread, NULL, sleeper, &sleeper_err)) {
		fprintf(stderr, "consumer: pthread_create failed\n");
		return 1;
	}
	/* Let the sleeper queue, so the wake below crosses threads. */
	for (i = 0; i < 10000 && !swait_active(&head); i++)
		nanosleep(&tick, NULL);

	atomic_store(&ready, true);
	swait_wake_one(&head);

	swait_deadline_after(&deadline, CLOCK_MONOTONIC, TEN_SECONDS);
	err = swait_completion_wait_timeout(&woken, CLOCK_MONOTONIC,
					    &deadline);
	pthread_join(thread, NULL);
	if (err || sleeper_err) {
		fprintf(stderr, "consumer: wait failed (%d, %d)\n",
			sleeper_err, err);
		return 1;
	}
	printf("consumer: ok, libswait %d.%d.%d\n", SWAIT_VERSION_MAJOR,
	       SWAIT_VERSION_MINOR, SWAIT_VERSION_PATCH);
	return 0;
}
