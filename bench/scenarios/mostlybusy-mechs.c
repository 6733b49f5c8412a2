// SPDX-License-Identifier: MIT
/*
 * mostlybusy-mechs.c - the wake/wait pairs of the mostlybusy scenario on
 * its queue (mostlybusy.c explains the queue and swait-asym's Dekker).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <swait.h>

#include "mostlybusy.h"

/*
 * Take one item if there is one.  Acquire: pairs with the producer's
 * release store of tail, so a claimed item's push (and stop_workers,
 * stored before the last pushes) is visible.  head never passes tail: an
 * item is claimed only below a tail that was read after head.
 */
bool mb_claim(struct mb *q)
{
	uint32_t h = __atomic_load_n(&q->head, __ATOMIC_RELAXED);

	while (h != __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE))
		if (__atomic_compare_exchange_n(&q->head, &h, h + 1, true,
				__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	return false;
}

static int claim_cb(void *arg)
{
	return mb_claim(arg);
}

int mb_membarrier(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

/* ------------------------------------------------------------------ swait */

static void sw_setup(struct mb *q)
{
	swait_head_init(&q->sh);
}

static void sw_teardown(struct mb *q)
{
	if (swait_head_destroy(&q->sh) != 0)
		die("mostlybusy: swait head busy at teardown");
}

/* The wake's own fence orders the push before its peek at the queue. */
static void sw_wake(struct mb *q)
{
	swait_wake_one(&q->sh);
}

static void sw_wait(struct mb *q)
{
	swait_event(&q->sh, mb_claim(q));
}

/* ------------------------------------------------------------- swait-asym */

/* sw_wake and sw_wait on it: the wake has no fence, the prepare a membarrier. */
static void asym_setup(struct mb *q)
{
	int err = swait_head_init_asym(&q->sh);

	if (err != 0)
		die("mostlybusy: swait_head_init_asym: %s", strerror(err));
}

/* ------------------------------------------------------------------- cond */

static void cv_setup(struct mb *q)
{
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
}

static void cv_teardown(struct mb *q)
{
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
}

/*
 * Under the mutex: a worker tests the queue and sleeps holding it, so the
 * push is either seen by that test or made before a signal that finds the
 * worker asleep.
 */
static void cv_wake(struct mb *q)
{
	pthread_mutex_lock(&q->mu);
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

static void cv_wait(struct mb *q)
{
	pthread_mutex_lock(&q->mu);
	while (!mb_claim(q))
		pthread_cond_wait(&q->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
}

/* ---------------------------------------------------------- futex-sleeper */

static void fs_setup(struct mb *q)
{
	q->sleepers = 0;
}

static void fs_teardown(struct mb *q)
{
	(void)q;
}

/*
 * A Dekker pair, as fsleep_post() in mech.c: the fence orders the push
 * before the load of sleepers, the worker's seq_cst increment orders its
 * announcement before FUTEX_WAIT reads tail.  Either the load sees the
 * sleeper, or the kernel's compare sees the new tail.
 */
static void fs_wake(struct mb *q)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->sleepers, __ATOMIC_SEQ_CST) != 0)
		bench_futex_wake(&q->tail, 1);
}

static void fs_wait(struct mb *q)
{
	for (;;) {
		/* Read before mb_claim(): a later push changes it. */
		uint32_t t = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);

		if (mb_claim(q))
			return;
		__atomic_fetch_add(&q->sleepers, 1, __ATOMIC_SEQ_CST);
		bench_futex_wait(&q->tail, t, CLOCK_MONOTONIC, NULL);
		__atomic_fetch_sub(&q->sleepers, 1, __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------------------------ peers */

static void peer_setup(struct mb *q)
{
	q->pc = chan_new(q->m->peer);
}

static void peer_teardown(struct mb *q)
{
	chan_free(q->m->peer, q->pc);
}

/* One more indirect call than the others pay: a nanosecond or two. */
static void peer_wake(struct mb *q)
{
	q->m->peer->cwake(q->pc, &q->tail);
}

static void peer_wait(struct mb *q)
{
	q->m->peer->cwait(q->pc, &q->tail, claim_cb, q);
}

const struct mb_mech mb_mechs[] = {
	{ .name = "swait", .setup = sw_setup, .teardown = sw_teardown,
	  .wake = sw_wake, .wait = sw_wait },
	{ .name = "swait-asym", .setup = asym_setup, .teardown = sw_teardown,
	  .wake = sw_wake, .wait = sw_wait },
	{ .name = "cond", .setup = cv_setup, .teardown = cv_teardown,
	  .wake = cv_wake, .wait = cv_wait },
	{ .name = "futex-sleeper", .setup = fs_setup, .teardown = fs_teardown,
	  .wake = fs_wake, .wait = fs_wait, .own_futex_count = true },
};
const size_t mb_nmechs = sizeof(mb_mechs) / sizeof(mb_mechs[0]);

struct mb_mech mb_peer(const struct mech *peer)
{
	return (struct mb_mech){ .name = peer->name, .setup = peer_setup,
				 .teardown = peer_teardown, .wake = peer_wake,
				 .wait = peer_wait, .peer = peer };
}
