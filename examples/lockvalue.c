// SPDX-License-Identifier: MIT
/*
 * lockvalue.c - a "lock with a value" ported from pthread_cond to libswait:
 * a value under a mutex, with "wait until the value reaches x" and "add
 * and wake".  Condition-variable layers of this shape are common; this is
 * the port, with the pthread_cond original beside each call.
 *
 * Four workers each wait until the value reaches their turn, do their step
 * and advance the value; the main thread waits until every step is done
 * and frees the object before it joins the workers: the wake under the
 * lock is what makes that safe.
 *
 * Exits 0 when every step ran once and in order.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <swait.h>

struct lockval {
	pthread_mutex_t mutex;
	struct swait_head changed;	/* was: pthread_cond_t changed; */
	long value;			/* under mutex: no atomics needed */
};

static void lv_init(struct lockval *lv)
{
	pthread_mutex_init(&lv->mutex, NULL);
	swait_head_init(&lv->changed);	/* was: pthread_cond_init() */
	lv->value = 0;
}

static void lv_destroy(struct lockval *lv)
{
	/* was: pthread_cond_destroy(); EBUSY would mean a waiter is left */
	if (swait_head_destroy(&lv->changed) != 0)
		abort();
	pthread_mutex_destroy(&lv->mutex);
}

/* Wait until value >= want; returns with the mutex held ("possess"). */
static void lv_wait_ge(struct lockval *lv, long want)
{
	pthread_mutex_lock(&lv->mutex);
	/* was: while (lv->value < want)
	 *		pthread_cond_wait(&lv->changed, &lv->mutex);
	 */
	swait_event_mutex(&lv->changed, lv->value >= want, &lv->mutex);
}

/*
 * Add to the value and wake every waiter, then release.  The wake comes
 * before the unlock ("wake under the lock"): a waiter that sees its value
 * may free the object at once, and it cannot see it before it has the
 * mutex.  With pthread_cond, waking after the unlock is a use-after-free
 * for the same reason.
 */
static void lv_add_release(struct lockval *lv, long n)
{
	lv->value += n;
	swait_wake_all(&lv->changed);	/* was: pthread_cond_broadcast() */
	pthread_mutex_unlock(&lv->mutex);
}

#define WORKERS 4
#define ROUNDS 250

struct worker {
	struct lockval *lv;
	int id;
	int order_errors;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	for (long r = 0; r < ROUNDS; r++) {
		long turn = r * WORKERS + w->id;

		lv_wait_ge(w->lv, turn);
		if (w->lv->value != turn)	/* someone ran out of turn */
			w->order_errors++;
		lv_add_release(w->lv, 1);
	}
	return NULL;
}

int main(void)
{
	struct lockval *lv = malloc(sizeof(*lv));
	struct worker w[WORKERS];
	pthread_t t[WORKERS];
	int errors = 0;
	long final;

	if (!lv)
		return 1;
	lv_init(lv);
	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ lv, i, 0 };
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			return 1;
	}
	lv_wait_ge(lv, (long)WORKERS * ROUNDS);
	final = lv->value;
	pthread_mutex_unlock(&lv->mutex);
	/*
	 * Every step is done, so every worker has made its last wake; free
	 * the object before joining them.  Safe because each woke under the
	 * lock; had they woken after unlocking, the last one could still be
	 * inside swait_wake_all() on freed memory.
	 */
	lv_destroy(lv);
	free(lv);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(t[i], NULL);
		errors += w[i].order_errors;
	}
	printf("lockvalue: %ld steps, %d out of order\n", final, errors);
	return final == (long)WORKERS * ROUNDS && errors == 0 ? 0 : 1;
}
