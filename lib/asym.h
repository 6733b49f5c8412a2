/* SPDX-License-Identifier: MIT */
/*
 * asym.h - the two halves of O1's barrier pair (lib/swait.c), in their
 * ordinary form and in the asymmetric form of a head made by
 * swait_head_init_asym() (lib/asym.c says why that form is sound).
 */
#ifndef SWAIT_ASYM_H
#define SWAIT_ASYM_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "list.h"
#include "state.h"

/*
 * Whether a head's walks word says it is asymmetric.  A PI head's walks
 * word uses the ASYM bit for its posted set, so PI is checked too; no head
 * is both.
 */
static inline bool swait_walks_asym(uint32_t walks)
{
	return (walks & (SWAIT_WALKS_ASYM | SWAIT_WALKS_PI)) ==
	       SWAIT_WALKS_ASYM;
}

/* The waiter's half on an asymmetric head: membarrier(), or abort. */
void swait_asym_barrier(void);

/*
 * The waker's half of O1, between the caller's store of its condition and
 * the lockless peek of h's list: a full fence, or on an asymmetric head
 * only a compiler barrier (the sleeper's membarrier() stands in for it).
 */
static inline void swait_o1_waker(const struct swait_head *h)
{
	if (swait_walks_asym(load_relaxed(&h->walks)))
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * The waiter's half, after its enqueue and before the caller reads its
 * condition; asym: whether any head it just queued on is asymmetric.
 */
static inline void swait_o1_waiter(bool asym)
{
	if (swait_unlikely(asym))
		swait_asym_barrier();
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif /* SWAIT_ASYM_H */
