// SPDX-License-Identifier: MIT
/*
 * consumer_tsan.c - plain data handed from thread to thread with nothing
 * but libswait between them, for ThreadSanitizer.  The install suite
 * builds it with -fsanitize=thread against the default installed library
 * (not a TSan build of it): TSan sees none of the library's atomics, so
 * without the library's __tsan_release/__tsan_acquire calls every read
 * below is reported as a race with the write before it (the suite shows
 * that too, against a library built without them).
 *
 *   1. a result on the starter's stack, written by a new thread before it
 *      completes the completion beside it (the kthread_create idiom);
 *   2. a buffer passed back and forth by two completions, many rounds;
 *   3. swait_wait_any on two heads: the waker writes the message, then
 *      wakes one head; the waiter reads it once swait_wait_any reports the
 *      wake, and acknowledges with a completion.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <swait.h>

#define ROUNDS 2000

struct start {
	struct swait_completion done;
	long result;			/* plain: written before done */
};

static void *starter(void *arg)
{
	struct start *s = arg;

	s->result = 42;
	swait_complete(&s->done);	/* s may be gone after this */
	return NULL;
}

static struct swait_completion filled = SWAIT_COMPLETION_INITIALIZER;
static struct swait_completion emptied = SWAIT_COMPLETION_INITIALIZER;
static long buf[4];			/* plain: owned by one side at a time */

static void *filler(void *arg)
{
	long i;

	for (i = 0; i < ROUNDS; i++) {
		buf[0] = i;
		buf[3] = -i;
		swait_complete(&filled);
		swait_completion_wait(&emptied);
	}
	return arg;
}

static struct swait_head work, shutdown;
static struct swait_completion ack = SWAIT_COMPLETION_INITIALIZER;
static long message;			/* plain: written before each wake */

static void *any_waker(void *arg)
{
	struct swait_head *const heads[2] = { &work, &shutdown };
	long r;

	for (r = 0; r < ROUNDS; r++) {
		/* The waiter's node is queued on the head this round wakes. */
		while (!swait_active(heads[r % 2]))
			sched_yield();
		message = r;
		swait_wake_one(heads[r % 2]);
		swait_completion_wait(&ack);
	}
	return arg;
}

static int any_waiter(void)
{
	struct swait_head *const heads[2] = { &work, &shutdown };
	struct swait_waiter nodes[2] = { SWAIT_WAITER_INITIALIZER,
					 SWAIT_WAITER_INITIALIZER };
	unsigned which = 2;
	long r;
	int bad = 0;

	for (r = 0; r < ROUNDS; r++) {
		swait_prepare_any(heads, 2, nodes);
		while (swait_wait_any(heads, 2, nodes, 0, CLOCK_MONOTONIC,
				      NULL, &which) != 0)
			;
		bad |= message != r || which != (unsigned)(r % 2);
		swait_finish_any(heads, 2, nodes);
		swait_complete(&ack);
	}
	return bad;
}

int main(void)
{
	struct start s = { SWAIT_COMPLETION_INITIALIZER, 0 };
	pthread_t t;
	long i;
	int bad = 0;

	/* 1 */
	if (pthread_create(&t, NULL, starter, &s))
		return 1;
	swait_completion_wait(&s.done);
	bad |= s.result != 42;
	pthread_detach(t);

	/* 2 */
	if (pthread_create(&t, NULL, filler, NULL))
		return 1;
	for (i = 0; i < ROUNDS; i++) {
		swait_completion_wait(&filled);
		bad |= buf[0] != i || buf[3] != -i;
		buf[0] = buf[3] = -1;
		swait_complete(&emptied);
	}
	pthread_join(t, NULL);

	/* 3 */
	if (pthread_create(&t, NULL, any_waker, NULL))
		return 1;
	bad |= any_waiter();
	pthread_join(t, NULL);

	if (bad) {
		fprintf(stderr, "consumer_tsan: a handoff delivered wrong data\n");
		return 1;
	}
	printf("consumer_tsan: ok\n");
	return 0;
}
