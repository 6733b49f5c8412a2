// SPDX-License-Identifier: MIT
/*
 * deadline.c - absolute deadlines for the timed waits.
 */
#include <errno.h>
#include <time.h>

#include "internal.h"

SWAIT_EXPORT int swait_deadline_after(struct timespec *deadline,
				      clockid_t clock, int64_t nsec)
{
	struct timespec now;

	if ((clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME) || nsec < 0)
		return EINVAL;
	clock_gettime(clock, &now);
	deadline->tv_sec = now.tv_sec + (time_t)(nsec / 1000000000);
	deadline->tv_nsec = now.tv_nsec + (long)(nsec % 1000000000);
	if (deadline->tv_nsec >= 1000000000L) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000L;
	}
	return 0;
}
