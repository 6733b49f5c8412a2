/* SPDX-License-Identifier: MIT */
/*
 * spin.h - the bounded poll of a waiter's own word before it announces a
 * sleep (lib/spin.c has the rules, S1-S6).  The queue knows nothing of
 * spinning: lib/swait.c and lib/any.c call swait_spin() between their
 * prepare and their announce, which is a delay every protocol rule already
 * allows there.
 */
#ifndef SWAIT_SPIN_H
#define SWAIT_SPIN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * Poll *word while (*word & mask) == stay, for at most this thread's spin
 * budget (S2, S3) and never past deadline (absolute on clock; NULL: none).
 * Returns the last value read: (v & mask) != stay if the word moved (a
 * wake came, S1), else the word is as it was and the caller sleeps.
 * Acquire loads: a moved word publishes what its writer wrote before.
 * flags are swait_sleep()'s: SWAIT_NOSPIN returns at once.
 */
uint32_t swait_spin(const uint32_t *word, uint32_t mask, uint32_t stay,
		    unsigned flags, clockid_t clock,
		    const struct timespec *deadline);

/*
 * S6: called by a prepare under its head's lock with whether the waiter
 * is now first in the queue (a wait_any group: first on any head); this
 * thread's next spin happens only if it was.  A hint kept per thread, so
 * the sleep that follows need not look at a head a waker may have let go.
 */
void swait_spin_note_front(bool front);

#endif
