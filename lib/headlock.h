/* SPDX-License-Identifier: MIT */
/*
 * headlock.h - taking and releasing a head's lock (lib/headlock.c), and the
 * per-thread held-heads stack that lets a signal handler hand its wake to
 * the thread it interrupted (lib/defer.c, S1-S5).
 */
#ifndef SWAIT_HEADLOCK_H
#define SWAIT_HEADLOCK_H

#include <stdint.h>

#include "internal.h"
#include "swait.h"

/*
 * A set of wakes that signal handlers posted to a lock holder, in one word:
 * lib/defer.h gives the encoding.  Word-sized because atomics on it must be
 * lock-free (a handler uses them).
 */
typedef unsigned long swait_posted_t;

/* Handlers nested deeper than this while heads are held abort. */
#define SWAIT_HELD_MAX 8

/*
 * Heads other than its own that handlers may post wakes to during one
 * outermost lock hold of their thread (S6); more abort.
 */
#define SWAIT_FOREIGN_MAX 8

/*
 * A head this thread is taking or holding (S1-S2), or, in foreign[], a head
 * it does not hold that its handlers posted wakes to (S6).
 */
struct swait_held {
	struct swait_head *head;	/* NULL once closed */
	swait_posted_t pending;		/* posted by handlers (S1, S6) */
};

/*
 * This thread's state for wakes from signal handlers, in one thread-local
 * object so that every access is one %fs-relative address.
 */
struct swait_tls {
	unsigned depth;			/* entries in held[] */
	unsigned async_window;		/* in a sleep's async-cancel window */
	struct swait_head *running;	/* head swait_run_posted() works on */
	swait_posted_t backlog;		/* sets handed to that loop (S5) */
	unsigned nforeign;		/* entries in foreign[] */
	unsigned draining;		/* swait_run_posted() drains them */
	struct swait_held held[SWAIT_HELD_MAX];
	struct swait_held foreign[SWAIT_FOREIGN_MAX];
};

extern SWAIT_TLS struct swait_tls swait_tls;

/*
 * Take head's lock: the ordinary spin-then-park lock, or the PI futex of a
 * PI head.  Pushes head on the held-heads stack first.
 */
void swait_head_lock(struct swait_head *head);

/*
 * Release head's lock and pop it; then, if a signal handler posted wakes
 * to this hold (or, once the thread holds no lock, to other heads), perform
 * them before returning (swait_run_posted(), the one up-call into
 * lib/defer.c).  So an unlock may take head's lock again, or other heads'
 * locks, after it has released it, to run those wakes or completes.
 */
void swait_head_unlock(struct swait_head *head);

#endif /* SWAIT_HEADLOCK_H */
