/* SPDX-License-Identifier: MIT */
/*
 * asym.h - the waiter's half of O1's barrier pair (lib/swait.c), in its
 * ordinary form and in the asymmetric form of a head made by
 * swait_head_init_asym(), whose wakers' half is inline in <swait.h>
 * (lib/asym.c says why that form is sound).
 */
#ifndef SWAIT_ASYM_H
#define SWAIT_ASYM_H

#include <stdbool.h>
#include <stdint.h>

#include "check.h"
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
 * The waiter's half of O1, after its enqueue and before the caller reads its
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
