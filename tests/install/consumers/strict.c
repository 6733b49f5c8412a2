// SPDX-License-Identifier: MIT
/*
 * strict.c - the public headers in strict ISO modes, with no feature test
 * macro of the includer's: the install suite compiles this file, unchanged,
 * as C99, C11 and C17 with -pedantic-errors (pkg-config, and CMake with
 * C_EXTENSIONS OFF) and as C++11 to C++23 (-x c++), then runs it.
 *
 * It defines nothing before the includes on purpose (no _POSIX_C_SOURCE,
 * no _GNU_SOURCE): before <swait.h> supplied clockid_t and the clocks
 * itself, -std=c99 stopped at "unknown type name 'clockid_t'".  It names
 * the POSIX parts of the API a user needs: clockid_t, CLOCK_MONOTONIC,
 * CLOCK_REALTIME, struct timespec, the mutex form, the condvar face.
 */
#include <swait.h>
#include <swait/cond.h>

static struct swait_head head = SWAIT_HEAD_INITIALIZER;
static struct swait_completion done = SWAIT_COMPLETION_INITIALIZER;
static swait_cond_t cv = SWAIT_COND_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	const clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
	struct timespec dl;
	int ready = 1, bad = 0, i;

	for (i = 0; i < 2; i++) {
		bad |= swait_deadline_after(&dl, clocks[i], 1000) != 0;
		bad |= swait_event_timeout(&head, ready, clocks[i], &dl) != 0;
	}
	swait_event(&head, ready);
	pthread_mutex_lock(&lock);
	swait_event_mutex(&head, ready, &lock);
	bad |= swait_deadline_after(&dl, CLOCK_REALTIME, 1000) != 0;
	bad |= swait_cond_timedwait(&cv, &lock, &dl) != ETIMEDOUT;
	pthread_mutex_unlock(&lock);
	swait_wake_all(&head);
	swait_complete(&done);
	swait_completion_wait(&done);
	return bad;
}
