/* SPDX-License-Identifier: MIT */
/*
 * state.h - how the protocol's words are encoded: a waiter's state (the
 * futex word of a single waiter), a grouped node's state and its group's
 * word (lib/any.c), and a head's walks word.  The rules that govern them
 * are in lib/swait.c (I1-I6, O1-O4) and lib/any.c (G1-G5).
 */
#ifndef SWAIT_STATE_H
#define SWAIT_STATE_H

#include "swait.h"

/* A waiter's state (w->state); lib/swait.c says who moves it where. */
enum {
	SWAIT_IDLE = 0,
	SWAIT_QUEUED = 1,
	SWAIT_SLEEPING = 2,
	SWAIT_WOKEN_ONE = 3,
	SWAIT_WOKEN_ALL = 4,
};

/*
 * A grouped node's state: GROUP | index << GROUP_SHIFT | QUEUED or WOKEN_*,
 * or IDLE.  No single waiter's state ever has GROUP set, so a waker tells
 * the two apart by the state alone.
 */
#define SWAIT_GROUP		0x80000000u
#define SWAIT_GROUP_SHIFT	8
#define SWAIT_SUBSTATE		0xffu

/*
 * The group word G: waiters[0].group of a swait_wait_any() group, the futex
 * word the whole group sleeps on.
 */
#define G_WOKEN_MASK		0x0000ffffu	/* bit i: node i woken */
#define G_CONSUMED_SHIFT	16		/* index + 1 of the consumed node */
#define G_CONSUMED_MASK		0x001f0000u
#define G_SLEEPING		0x80000000u

/* w->group of a queued single waiter in debug builds: "swai". */
#define SWAIT_MAGIC		0x73776169u

/*
 * head->walks: the count of wake_all walks in progress (destroy's EBUSY and
 * the completions' quiesce), whether the head is a PI head (fixed at init;
 * the public SWAIT_HEAD_PI_BIT, which SWAIT_HEAD_PI_INITIALIZER spells), and
 * whether a thread sleeps on this word in
 * swait_quiesce_dropping_lock().
 * Written under the head lock.
 */
#define SWAIT_WALKS_MASK	0x3fffffffu
#define SWAIT_WALKS_PI		SWAIT_HEAD_PI_BIT
#define SWAIT_WALKS_QUIESCER	0x80000000u

_Static_assert((SWAIT_WALKS_PI & (SWAIT_WALKS_MASK | SWAIT_WALKS_QUIESCER))
	       == 0, "the PI bit overlaps the walk count or the quiescer flag");

#endif /* SWAIT_STATE_H */
