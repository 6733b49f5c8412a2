// SPDX-License-Identifier: MIT
/*
 * handshake.c - start threads and release them together, with completions.
 *
 * The kernel's kthread_create() idiom: the parent puts a completion in its
 * own stack frame, hands it to the new thread and waits on it; the thread
 * completes it once it is initialised.  The parent's frame may go away as
 * soon as its wait returns, because complete() is the thread's last access
 * to the completion (see the completion section of <swait.h>).
 *
 * Then every thread waits on one shared "go" completion, and the parent
 * releases them all at once with swait_complete_all().
 *
 * Exits 0 if every thread was initialised before go and ran after it.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <swait.h>

#define NR_THREADS 8

/* What the parent hands to a starting thread.  Lives in the parent's frame. */
struct start_info {
	unsigned int id;
	struct swait_completion started;
};

static struct swait_completion go = SWAIT_COMPLETION_INITIALIZER;
static atomic_bool go_given;		/* set by the parent just before go */
static atomic_uint nr_initialised;
static atomic_uint nr_early;		/* threads that ran before go: bugs */
static unsigned int results[NR_THREADS];

static void *worker(void *arg)
{
	struct start_info *info = arg;
	unsigned int id = info->id;	/* copy: info dies after complete */

	/* ... per-thread setup would go here ... */
	atomic_fetch_add(&nr_initialised, 1);

	/*
	 * "I'm initialised."  From here on info may be gone: the parent
	 * returns from its wait and reuses that stack memory.
	 */
	swait_complete(&info->started);

	/* Wait for the parent's go; complete_all() releases every waiter. */
	swait_completion_wait(&go);
	if (!atomic_load(&go_given))
		atomic_fetch_add(&nr_early, 1);
	results[id] = id + 1;		/* the "work"; read after join */
	return NULL;
}

/* Start one thread and return once it has said it is initialised. */
static int start_thread(pthread_t *thread, unsigned int id)
{
	struct start_info info = {
		.id = id,
		.started = SWAIT_COMPLETION_INITIALIZER,
	};
	int err;

	err = pthread_create(thread, NULL, worker, &info);
	if (err)
		return err;
	/*
	 * Returning from this function frees info.  That is safe once the
	 * wait has returned: the completion's lock is released as the last
	 * step of swait_complete(), and the wait takes that lock.
	 */
	swait_completion_wait(&info.started);
	return 0;
}

int main(void)
{
	pthread_t threads[NR_THREADS];
	unsigned int i, ok = 0;

	for (i = 0; i < NR_THREADS; i++) {
		if (start_thread(&threads[i], i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	/* Every thread is initialised now, and every one waits on go. */
	if (atomic_load(&nr_initialised) != NR_THREADS) {
		fprintf(stderr, "a thread did not initialise\n");
		return 1;
	}

	atomic_store(&go_given, true);
	swait_complete_all(&go);

	for (i = 0; i < NR_THREADS; i++) {
		pthread_join(threads[i], NULL);
		ok += results[i] == i + 1;
	}

	printf("handshake: %u threads initialised, %u released by go, %u early\n",
	       atomic_load(&nr_initialised), ok, atomic_load(&nr_early));
	return ok == NR_THREADS && atomic_load(&nr_early) == 0 ? 0 : 1;
}
