// SPDX-License-Identifier: MIT
// README.md's first example, exactly as printed there below these comment
// lines (test example-first-matches-readme): keep the two in step.
#include <pthread.h>
#include <stdio.h>
#include <swait.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct swait_head ready_q;	/* all-zero is a valid empty head */
static int ready;			/* under lock */

static void *worker(void *arg)
{
	pthread_mutex_lock(&lock);
	swait_event_mutex(&ready_q, ready, &lock);	/* sleeps unlocked */
	pthread_mutex_unlock(&lock);
	puts("worker: go");
	swait_complete(arg);		/* tell main we are done */
	return NULL;
}

int main(void)
{
	struct swait_completion done = SWAIT_COMPLETION_INITIALIZER;
	pthread_t t;

	pthread_create(&t, NULL, worker, &done);
	pthread_mutex_lock(&lock);
	ready = 1;
	swait_wake_all(&ready_q);	/* under the lock: see "Porting" */
	pthread_mutex_unlock(&lock);
	swait_completion_wait(&done);	/* done may live on this stack */
	return pthread_join(t, NULL);
}
