// SPDX-License-Identifier: MIT
/*
 * race.c - random delays for the race-widening build (see race.h).  A
 * per-thread xorshift generator: no shared state, so the delays themselves
 * add no synchronisation that could hide a race.
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "lock.h"
#include "race.h"

static __thread uint64_t race_state;

static uint64_t race_next(void)
{
	uint64_t x = race_state;

	if (x == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)(uintptr_t)&ts ^
		    0x9e3779b97f4a7c15ull;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	race_state = x;
	return x;
}

void swait_race_window(void)
{
	uint64_t r = race_next();

	switch (r & 7) {
	case 0:
		sched_yield();	/* let the other thread take this CPU */
		break;
	case 1:
	case 2:
		for (unsigned i = (unsigned)(r >> 8) & 1023; i > 0; i--)
			swait_cpu_relax();	/* a window of up to ~10 µs */
		break;
	default:
		break;		/* most steps run at full speed */
	}
}
