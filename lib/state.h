/* SPDX-License-Identifier: MIT */
/*
 * state.h - how the protocol's words are encoded: a waiter's state (the
 * futex word of a single waiter), a grouped node's state and its group's
 * word (lib/any.c), and a head's walks word.  The rules that govern them
 * are in lib/swait.c (I1-I6, O1-O4) and lib/any.c (G1-G5).
 */
#ifndef SWAIT_STATE_H
#define SWAIT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "swait.h"

/* A waiter's state (w->state); lib/swait.c says who moves it where. */
enum {
	SWAIT_IDLE = 0,
	SWAIT_QUEUED = 1,
	SWAIT_SLEEPING = 2,
	SWAIT_WOKEN_ONE = 3,
	SWAIT_WOKEN_ALL = 4,
	/*
	 * SLEEPING, in futex_waitv() on its own state and on its head's walks
	 * word: a wake_all walk that flips it owes it no FUTEX_WAKE of its
	 * own, one FUTEX_WAKE of the walks word at the walk's end covers
	 * every such waiter of the walk (lib/swait.c, W1-W3).
	 */
	SWAIT_SLEEPING_V = 5,
	/*
	 * WOKEN_ONE, by a wake of a completion's head: not counted as a
	 * leaver (lib/wake.c, LEAVERS), since a completion's waiters check
	 * done under its lock and wait out a complete_all's walk there
	 * (lib/completion.c), which must not wait for themselves.  Grouped
	 * nodes have WOKEN_EVENT and WOKEN_ALL_EV for the same.
	 */
	SWAIT_WOKEN_EVENT = 6,
	SWAIT_WOKEN_ALL_EV = 7,
};

/* Whether a single waiter's state says it is on a list (I1). */
static inline bool swait_state_queued(uint32_t s)
{
	return s == SWAIT_QUEUED || s == SWAIT_SLEEPING ||
	       s == SWAIT_SLEEPING_V;
}

/* Whether a single waiter's state says its thread announced a sleep. */
static inline bool swait_state_sleeping(uint32_t s)
{
	return s == SWAIT_SLEEPING || s == SWAIT_SLEEPING_V;
}

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

/*
 * w->group of a queued single waiter: "swai", or, if it will sleep in
 * futex_waitv() (W4), the value of its head's walks word when it queued
 * (W2: what the kernel compares), which has BCAST set and PI clear; the
 * tag has PI set.  A waker checks it to catch overwritten waiter memory.
 */
#define SWAIT_MAGIC		0x73776169u

/*
 * head->walks: the count of wake_all walks in progress and of leavers
 * (waiters a wake_one woke, and grouped nodes any wake woke, that may still
 * touch the head on their way out: lib/wake.c), which destroy waits out; a
 * generation that every walk's end advances
 * (so the word does not return to a value a sleeper in futex_waitv() read
 * before the walk ended: W2 in lib/swait.c), whether a walk on this head
 * has found several sleepers (W4: sleepers then use futex_waitv), whether
 * the head is asymmetric (fixed at init: O1a in lib/asym.c), whether
 * the head is a PI head
 * (fixed at init; the public SWAIT_HEAD_PI_BIT, which
 * SWAIT_HEAD_PI_INITIALIZER spells), and whether a thread sleeps on this
 * word in swait_quiesce_dropping_lock().  Written with atomic
 * read-modify-writes: under the head lock, but for a leaver's decrement.
 *
 * 22 bits of count: a thread counts at most once as a walker (only a walk
 * at depth 1 spans lock holds, lib/headlock.c L5) and once as a leaver
 * (its one waiter on this head), and Linux gives a process fewer than
 * PID_MAX_LIMIT (2^22) threads, each with at least a 16 KiB kernel stack:
 * 2^21 threads, the most two counts each could fill, need 32 GiB of
 * kernel stacks for one head's waiters and wakers alone.
 */
#define SWAIT_WALKS_MASK	0x003fffffu
#define SWAIT_WALKS_EVENTS	0x00400000u	/* a completion's head */
/*
 * An asymmetric head (swait_head_init_asym, fixed at init): its wakes
 * peek without a fence and its prepares end in membarrier() instead
 * (lib/asym.c O1a).  ABI: <swait.h>'s inline swait_wake_one() compiles
 * this bit, the PI bit and the list's layout into callers, so none of
 * them may move without a new soname.
 */
#define SWAIT_WALKS_ASYM	SWAIT_HEAD_ASYM_BIT
#define SWAIT_WALKS_GEN		0x1f000000u	/* 5 bits */
#define SWAIT_WALKS_GEN_ONE	0x01000000u
#define SWAIT_WALKS_BCAST	0x20000000u
#define SWAIT_WALKS_PI		SWAIT_HEAD_PI_BIT
#define SWAIT_WALKS_QUIESCER	0x80000000u

/*
 * A PI head's walks word is laid out differently (lib/headlock.c L7): its
 * low bits count the threads taking, holding or leaving its lock (REFS),
 * and the posted set takes the rest but the PI flag.  It has no walk
 * count, generation, BCAST or quiescer: walks are counted in REFS.
 */
#define SWAIT_PI_REFS_MASK	0x0000ffffu
#define SWAIT_PI_REFS_TAKERS	0x00008000u	/* takers wait from here */
#define SWAIT_PI_EVENTS		0x08000000u	/* a completion's head */

/* Whether h is a PI head: the bit never changes after init, others may. */
static inline bool swait_head_is_pi(const struct swait_head *h)
{
	return (__atomic_load_n(&h->walks, __ATOMIC_RELAXED) &
		SWAIT_WALKS_PI) != 0;
}

/*
 * Whether h's walks word says it is a completion's head (set by
 * swait_completion_init and by every complete): its wakes count no
 * leavers.
 */
static inline uint32_t swait_events_bit(uint32_t walks)
{
	return (walks & SWAIT_WALKS_PI) ? SWAIT_PI_EVENTS : SWAIT_WALKS_EVENTS;
}

_Static_assert((SWAIT_WALKS_PI & (SWAIT_WALKS_MASK | SWAIT_WALKS_GEN |
				  SWAIT_WALKS_BCAST | SWAIT_WALKS_QUIESCER |
				  SWAIT_WALKS_EVENTS | SWAIT_WALKS_ASYM))
	       == 0 &&
	       (SWAIT_WALKS_ASYM & (SWAIT_WALKS_MASK | SWAIT_WALKS_GEN |
				    SWAIT_WALKS_BCAST | SWAIT_WALKS_QUIESCER |
				    SWAIT_WALKS_EVENTS)) == 0 &&
	       (SWAIT_WALKS_EVENTS & (SWAIT_WALKS_MASK | SWAIT_WALKS_GEN |
				      SWAIT_WALKS_BCAST |
				      SWAIT_WALKS_QUIESCER)) == 0 &&
	       (SWAIT_WALKS_GEN & (SWAIT_WALKS_MASK | SWAIT_WALKS_BCAST |
				   SWAIT_WALKS_QUIESCER)) == 0 &&
	       (SWAIT_WALKS_BCAST & (SWAIT_WALKS_MASK |
				     SWAIT_WALKS_QUIESCER)) == 0,
	       "the fields of the walks word overlap");

/* Whether a queued single waiter's group word is a tag it could hold. */
static inline bool swait_waiter_tag_ok(uint32_t group)
{
	return group == SWAIT_MAGIC ||
	       (group & (SWAIT_WALKS_PI | SWAIT_WALKS_BCAST)) ==
	       SWAIT_WALKS_BCAST;
}

/* Whether a queued single waiter sleeps in futex_waitv() (W4). */
static inline bool swait_waiter_uses_waitv(uint32_t group)
{
	return group != SWAIT_MAGIC && swait_waiter_tag_ok(group);
}

#endif /* SWAIT_STATE_H */
