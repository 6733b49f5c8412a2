// SPDX-License-Identifier: MIT
/*
 * peer-nsync.c - Google nsync (Debian libnsync-dev): nsync_mu and nsync_cv.
 *
 * Written as nsync_cv.h's own example: the count is guarded by the mutex,
 * the waiter loops on nsync_cv_wait, and the poster signals while holding
 * the mutex, which nsync recommends (a woken waiter is moved onto the
 * mutex's queue instead of being woken only to block on the mutex).
 */
#include <assert.h>
#include <nsync.h>

#include "peers.h"

struct nsync_chan {
	nsync_mu mu;
	nsync_cv cv;
	uint32_t count;		/* units, under mu */
	uint32_t gen;		/* broadcast rounds released, under mu */
};

static_assert(sizeof(struct nsync_chan) <= PEER_AREA, "PEER_AREA too small");

static struct nsync_chan *nc(struct chan *c)
{
	return (struct nsync_chan *)(void *)c;
}

void peer_nsync_setup(struct chan *c)
{
	nsync_mu_init(&nc(c)->mu);
	nsync_cv_init(&nc(c)->cv);
	nc(c)->count = 0;
	nc(c)->gen = 0;
}

void peer_nsync_teardown(struct chan *c)
{
	(void)c;	/* nsync objects need no destruction */
}

void peer_nsync_post(struct chan *c)
{
	struct nsync_chan *n = nc(c);

	nsync_mu_lock(&n->mu);
	n->count++;
	nsync_cv_signal(&n->cv);
	nsync_mu_unlock(&n->mu);
}

void peer_nsync_wait(struct chan *c)
{
	struct nsync_chan *n = nc(c);

	nsync_mu_lock(&n->mu);
	while (n->count == 0)
		nsync_cv_wait(&n->cv, &n->mu);
	n->count--;
	nsync_mu_unlock(&n->mu);
}

void peer_nsync_wake_empty(struct chan *c)
{
	nsync_cv_signal(&nc(c)->cv);
}

void peer_nsync_bwait(struct chan *c, uint32_t r)
{
	struct nsync_chan *n = nc(c);

	nsync_mu_lock(&n->mu);
	while (n->gen <= r)
		nsync_cv_wait(&n->cv, &n->mu);
	nsync_mu_unlock(&n->mu);
}

void peer_nsync_bwake(struct chan *c, uint32_t r)
{
	struct nsync_chan *n = nc(c);

	nsync_mu_lock(&n->mu);
	n->gen = r + 1;
	nsync_cv_broadcast(&n->cv);
	nsync_mu_unlock(&n->mu);
}

/*
 * The queue is lock-free and not under mu, so the wake takes mu: a waiter
 * tests cond and sleeps while holding mu, so the push is either seen by
 * that test or made before a signal that finds the waiter asleep.
 */
void peer_nsync_cwake(struct chan *c, uint32_t *word)
{
	struct nsync_chan *n = nc(c);

	(void)word;
	nsync_mu_lock(&n->mu);
	nsync_cv_signal(&n->cv);
	nsync_mu_unlock(&n->mu);
}

void peer_nsync_cwait(struct chan *c, uint32_t *word, int (*cond)(void *),
		      void *arg)
{
	struct nsync_chan *n = nc(c);

	(void)word;
	nsync_mu_lock(&n->mu);
	while (!cond(arg))
		nsync_cv_wait(&n->cv, &n->mu);
	nsync_mu_unlock(&n->mu);
}
