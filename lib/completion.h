/* SPDX-License-Identifier: MIT */
/*
 * completion.h - what lib/completion.c offers lib/defer.c beyond the public
 * API: posting n events at once, for a holder performing n completes that
 * signal handlers posted to it (S4).
 */
#ifndef SWAIT_COMPLETION_H
#define SWAIT_COMPLETION_H

#include "headlock.h"

/*
 * Post n events to c and wake up to n of its waiters, one per lock hold,
 * each event posted in the hold that wakes its waiter (so that a waiter
 * never consumes an event before the completer is done with the memory).
 * swait_complete() is n = 1.
 */
void swait_complete_n(struct swait_completion *c, swait_posted_t n);

#endif /* SWAIT_COMPLETION_H */
