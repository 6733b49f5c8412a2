/* SPDX-License-Identifier: MIT */
/*
 * defer.h - wakes from signal handlers handed to the interrupted lock holder
 * (lib/defer.c, S1-S5): the encoding of a posted set, the check each of the
 * four async-signal-safe wakes makes first, and the holder's side.
 */
#ifndef SWAIT_DEFER_H
#define SWAIT_DEFER_H

#include <limits.h>
#include <stdbool.h>

#include "headlock.h"

/*
 * A posted set (swait_posted_t): counts of wake_one and complete calls, and
 * flags for the _all calls.
 */
#if ULONG_MAX > 0xffffffffUL
#define POST_WAKE_ONE		0x0000000000000001UL
#define POST_ONE_MASK		0x0000000000ffffffUL	/* 24 bits */
#define POST_COMPLETE		0x0000000001000000UL
#define POST_COMPLETE_MASK	0x00ffffffff000000UL	/* 32 bits */
#define POST_WAKE_ALL		0x0100000000000000UL
#define POST_COMPLETE_ALL	0x0200000000000000UL
#else
#define POST_WAKE_ONE		0x00000001UL
#define POST_ONE_MASK		0x00003fffUL		/* 14 bits */
#define POST_COMPLETE		0x00004000UL
#define POST_COMPLETE_MASK	0x0fffc000UL		/* 14 bits */
#define POST_WAKE_ALL		0x10000000UL
#define POST_COMPLETE_ALL	0x20000000UL
#endif

/*
 * S1: if this thread is taking or holding head's lock (so the caller is a
 * signal handler that interrupted it), post what to that hold and return
 * true.  Call swait_post_to_holder() instead.
 */
bool swait_post_to_holder_slow(struct swait_head *head, swait_posted_t what);

/*
 * The first thing each of the four async-signal-safe wakes does: true if
 * the wake was posted to this thread's lock holder (S1) and the caller
 * must return.  One thread-local load on the usual path.
 */
static inline bool swait_post_to_holder(struct swait_head *head,
					swait_posted_t what)
{
	return __builtin_expect(swait_tls.depth != 0, 0) &&
	       swait_post_to_holder_slow(head, what);
}

/*
 * S2, S5: the holder's side.  swait_head_unlock() calls it, after the
 * release, with the set its handlers posted to that hold; it performs the
 * set as the calls it stands for before returning.
 */
void swait_run_posted(struct swait_head *head, swait_posted_t set);

#endif /* SWAIT_DEFER_H */
