// SPDX-License-Identifier: MIT
/*
 * prodcons.c - a bounded producer/consumer queue on two swait heads.
 *
 * The ring is an ordinary array guarded by a pthread mutex.  Threads that
 * cannot proceed sleep on one of two heads: consumers on not_empty,
 * producers on not_full.  Each push wakes one consumer and each pop wakes
 * one producer: swait_wake_one() wakes exactly one waiter, so one wake per
 * item is enough and nobody is woken for nothing.  The wakes are
 * unconditional because a wake on a head that nobody waits on costs a
 * fence and a load: no lock, no system call.
 *
 * Run: prodcons [items-per-producer]
 * Exits 0 only if every item was consumed exactly once.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <swait.h>

#define QUEUE_SLOTS	8
#define NR_PRODUCERS	2
#define NR_CONSUMERS	2

struct queue {
	pthread_mutex_t lock;		/* guards everything up to closed */
	unsigned int ring[QUEUE_SLOTS];
	unsigned int first;		/* index of the oldest item */
	unsigned int count;		/* items in the ring */
	bool closed;			/* no more pushes: consumers drain, exit */
	struct swait_head not_empty;	/* consumers wait here */
	struct swait_head not_full;	/* producers wait here */
};

enum pop_result { POP_EMPTY, POP_ITEM, POP_CLOSED };

static struct queue queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = SWAIT_HEAD_INITIALIZER,
	.not_full = SWAIT_HEAD_INITIALIZER,
};

static unsigned int items_per_producer = 50000;
static atomic_uint *times_seen;		/* times_seen[item], checked at the end */
static unsigned int consumed[NR_CONSUMERS];

/*
 * The wait conditions.  swait_event() evaluates its condition outside every
 * lock, so each one takes the queue's mutex itself.  Taking the item inside
 * the condition is what makes it race-free: a condition that only looked
 * ("count > 0") could see an item that another consumer takes before we do.
 * The header allows a condition to consume what it waits for.
 */
static bool try_push(struct queue *q, unsigned int item)
{
	bool pushed = false;

	pthread_mutex_lock(&q->lock);
	if (q->count < QUEUE_SLOTS) {
		q->ring[(q->first + q->count) % QUEUE_SLOTS] = item;
		q->count++;
		pushed = true;
	}
	pthread_mutex_unlock(&q->lock);
	return pushed;
}

static enum pop_result try_pop(struct queue *q, unsigned int *item)
{
	enum pop_result r = POP_EMPTY;

	pthread_mutex_lock(&q->lock);
	if (q->count > 0) {
		*item = q->ring[q->first];
		q->first = (q->first + 1) % QUEUE_SLOTS;
		q->count--;
		r = POP_ITEM;
	} else if (q->closed) {
		r = POP_CLOSED;		/* closed and drained */
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

static void *producer(void *arg)
{
	unsigned int base = (unsigned int)(uintptr_t)arg * items_per_producer;
	unsigned int i;

	for (i = 0; i < items_per_producer; i++) {
		swait_event(&queue.not_full, try_push(&queue, base + i));
		/*
		 * Wake after the mutex is dropped (try_push did), so the
		 * consumer does not wake up into a held lock.  The wake's
		 * barrier pairs with the one ending the consumer's prepare:
		 * it sees the item or we see it queued.
		 */
		swait_wake_one(&queue.not_empty);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	unsigned int *nr = arg;
	unsigned int item = 0;
	enum pop_result r = POP_EMPTY;

	for (;;) {
		swait_event(&queue.not_empty,
			    (r = try_pop(&queue, &item)) != POP_EMPTY);
		if (r == POP_CLOSED)
			return NULL;
		swait_wake_one(&queue.not_full);	/* a slot is free */
		atomic_fetch_add_explicit(&times_seen[item], 1,
					  memory_order_relaxed);
		(*nr)++;
	}
}

/* Items per producer: the count must fit the bookkeeping array. */
#define MAX_ITEMS 10000000u

/* A decimal count in [1, MAX_ITEMS]: no sign, no junk, no overflow. */
static bool parse_count(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;	/* strtoul would accept "-1" and " 1" */
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > MAX_ITEMS)
		return false;
	*out = (unsigned int)v;
	return true;
}

int main(int argc, char **argv)
{
	pthread_t producers[NR_PRODUCERS], consumers[NR_CONSUMERS];
	unsigned int total, i, bad = 0;
	uintptr_t p;

	if (argc > 2 || (argc == 2 && !parse_count(argv[1],
						    &items_per_producer))) {
		fprintf(stderr, "usage: prodcons [items-per-producer]\n"
			"  items-per-producer: a whole number from 1 to %u\n",
			MAX_ITEMS);
		return 2;
	}
	total = NR_PRODUCERS * items_per_producer;
	times_seen = calloc(total ? total : 1, sizeof(*times_seen));
	if (!times_seen) {
		perror("calloc");
		return 1;
	}

	for (i = 0; i < NR_CONSUMERS; i++)
		pthread_create(&consumers[i], NULL, consumer, &consumed[i]);
	for (p = 0; p < NR_PRODUCERS; p++)
		pthread_create(&producers[p], NULL, producer, (void *)p);

	/*
	 * Clean shutdown: once every item is pushed, mark the queue closed
	 * and wake every consumer.  closed is read under the mutex inside
	 * the condition, so a consumer that queues after the wake_all sees
	 * it, and one queued before is woken by it.
	 */
	for (p = 0; p < NR_PRODUCERS; p++)
		pthread_join(producers[p], NULL);
	pthread_mutex_lock(&queue.lock);
	queue.closed = true;
	pthread_mutex_unlock(&queue.lock);
	swait_wake_all(&queue.not_empty);
	for (i = 0; i < NR_CONSUMERS; i++)
		pthread_join(consumers[i], NULL);

	for (i = 0; i < total; i++) {
		unsigned int n = atomic_load_explicit(&times_seen[i],
						      memory_order_relaxed);
		if (n != 1) {
			if (bad++ < 10)
				fprintf(stderr, "item %u consumed %u times\n",
					i, n);
		}
	}
	/* Nobody waits any more, so both heads must be idle. */
	if (swait_head_destroy(&queue.not_empty) ||
	    swait_head_destroy(&queue.not_full)) {
		fprintf(stderr, "a head still has waiters\n");
		bad++;
	}

	printf("prodcons: %d producers, %d consumers, %u items through %d slots\n",
	       NR_PRODUCERS, NR_CONSUMERS, total, QUEUE_SLOTS);
	for (i = 0; i < NR_CONSUMERS; i++)
		printf("  consumer %u took %u items\n", i, consumed[i]);
	printf("%s\n", bad ? "FAILED: not every item consumed exactly once"
			   : "every item consumed exactly once");
	free(times_seen);
	return bad ? 1 : 0;
}
