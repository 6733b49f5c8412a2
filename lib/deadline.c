// SPDX-License-Identifier: MIT
/*
 * deadline.c - absolute deadlines for the timed waits.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "internal.h"

/* The largest time_t: 2^31 - 1 (2038) with a 32-bit time_t. */
#define TIME_T_MAX (sizeof(time_t) == 8 ? (int64_t)INT64_MAX : \
		    (int64_t)INT32_MAX)

/*
 * The sum is formed in int64_t and saturates at the largest time_t, where
 * a 32-bit time_t would wrap to 1901 (an expired deadline) and a 64-bit
 * one cannot be reached in practice.
 */
SWAIT_EXPORT int swait_deadline_after(struct timespec *deadline,
				      clockid_t clock, int64_t nsec)
{
	struct timespec now;
	int64_t sec;
	long ns;

	if ((clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) || nsec < 0)
		return EINVAL;
	clock_gettime(clock, &now);
	sec = nsec / 1000000000;
	ns = now.tv_nsec + (long)(nsec % 1000000000);
	if (ns >= 1000000000L) {
		sec++;
		ns -= 1000000000L;
	}
	if (sec > TIME_T_MAX - (int64_t)now.tv_sec) {
		sec = TIME_T_MAX;
		ns = 999999999L;
	} else {
		sec += now.tv_sec;
	}
	deadline->tv_sec = (time_t)sec;
	deadline->tv_nsec = ns;
	return 0;
}
