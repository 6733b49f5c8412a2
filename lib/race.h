/* SPDX-License-Identifier: MIT */
/*
 * race.h - the race-widening build (Meson option race_window, never in
 * release builds).
 *
 * SWAIT_RACE() marks a step of the protocol where another thread's step
 * could interleave.  In a race-window build it sometimes yields the CPU or
 * spins for a random while there, so that interleavings which need a
 * preemption at exactly that instruction, rare in a normal run, happen many
 * times a second under the stress suite.  Otherwise it compiles to nothing.
 */
#ifndef SWAIT_RACE_H
#define SWAIT_RACE_H

#ifndef SWAIT_RACE_WINDOW
#define SWAIT_RACE_WINDOW 0
#endif

#if SWAIT_RACE_WINDOW
void swait_race_window(void);
#define SWAIT_RACE() swait_race_window()
#else
#define SWAIT_RACE() ((void)0)
#endif

#endif /* SWAIT_RACE_H */
