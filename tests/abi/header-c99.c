// SPDX-License-Identifier: MIT
/*
 * header-c99.c - <swait.h> alone, as ISO C99 with -pedantic-errors.
 *
 * The header promises C99: plain integer fields (no _Atomic), the GNU
 * statement expressions of the macros behind __extension__, nothing but
 * standard and POSIX headers.  It is a POSIX header (clockid_t,
 * CLOCK_MONOTONIC), so a strict ISO mode needs the usual feature test
 * macro, as every POSIX program built with -std=c99 does.
 *
 * Built with -std=c99 -pedantic-errors -Wall -Wextra -Werror; run, it also
 * checks that each macro form expands to something that works.
 */
#define _POSIX_C_SOURCE 200809L

#include <swait.h>

/* Static initialisation of every type, at file scope. */
static struct swait_head head = SWAIT_HEAD_INITIALIZER;
static struct swait_completion done = SWAIT_COMPLETION_INITIALIZER;
static int ready = 1;

int main(void)
{
	struct swait_waiter waiter = SWAIT_WAITER_INITIALIZER;
	struct timespec past = { 0, 0 };
	int failures = 0;
	int err;

	/* Statement form, then every expression form, on a true condition. */
	swait_event(&head, ready);
	failures += swait_event_interruptible(&head, ready) != 0;
	failures += swait_event_timeout(&head, ready, CLOCK_MONOTONIC,
					&past) != 0;
	failures += swait_event_interruptible_timeout(&head, ready,
					CLOCK_REALTIME, &past) != 0;
	failures += swait_event_timeout_ns(&head, ready, 1000) != 0;
	failures += swait_event_generic(&head, ready, 0, CLOCK_MONOTONIC,
					(const struct timespec *)0) != 0;

	/* A false condition with a past deadline times out at once. */
	err = swait_event_timeout(&head, !ready, CLOCK_MONOTONIC, &past);
	failures += err != ETIMEDOUT;

	/* The low-level calls and a completion. */
	swait_prepare(&head, &waiter);
	failures += !swait_active(&head);
	swait_finish(&head, &waiter);
	failures += swait_has_sleeper(&head);
	swait_complete(&done);
	failures += !swait_completion_try_wait(&done);
	failures += swait_head_destroy(&head) != 0;

	return failures ? 1 : 0;
}
