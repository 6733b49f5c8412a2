/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - what every threaded test needs: a watchdog that turns a hang
 * (a lost wakeup) into a failure with a message, and iteration counts that
 * scale with SWAIT_STRESS_SCALE so CI runs short and soak runs long.
 */
#ifndef SWAIT_TESTUTIL_H
#define SWAIT_TESTUTIL_H

#include <stdio.h>

/*
 * Arm the watchdog: if tu_watchdog_disarm() is not called within seconds
 * (scaled up under Valgrind, see tu_slowdown()), print "WATCHDOG: <what>"
 * and whatever describe() prints (which thread waits on what), then exit
 * with status 1.  One watchdog per process; arming again re-arms it.
 */
void tu_watchdog_arm(double seconds, const char *what,
		     void (*describe)(FILE *out));
void tu_watchdog_disarm(void);

/*
 * base scaled by the environment variable SWAIT_STRESS_SCALE (a positive
 * float, default 1), at least 1.  CI sets a small scale under Valgrind; a
 * soak run sets a large one.
 */
long tu_scale(long base);

/* Factor by which timeouts stretch: SWAIT_TEST_SLOWDOWN (default 1). */
double tu_slowdown(void);

/* CLOCK_MONOTONIC in nanoseconds. */
long long tu_now_ns(void);

/*
 * Declare a test variable that threads access only with __atomic builtins
 * (flags, counters read by swait_event conditions).  Helgrind and DRD do not
 * model atomics and would report each such access as a race; this exempts
 * exactly that variable, in the spirit of the library's own annotations.
 * A no-op outside Valgrind.
 */
void tu_sync_var(const volatile void *addr, unsigned long size);
#define TU_SYNC_VAR(v) tu_sync_var(&(v), sizeof(v))

/*
 * The happens-before arc of a release store / acquire load on addr, for
 * Helgrind and DRD: call tu_release(addr) just before the store and
 * tu_acquire(addr) just after the load that reads it.  No-ops natively.
 */
void tu_release(const volatile void *addr);
void tu_acquire(const volatile void *addr);

/* Pin the calling thread to CPU cpu (modulo the CPUs available); 0 or -1. */
int tu_pin_self(int cpu);

#endif
