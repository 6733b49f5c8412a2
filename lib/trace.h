/* SPDX-License-Identifier: MIT */
/*
 * trace.h - USDT probes (Meson option tracing, auto: on when <sys/sdt.h>,
 * Debian's systemtap-sdt-dev, is found).  Each probe is a nop plus an ELF
 * note (readelf -n shows the "stapsdt" notes); bpftrace, perf probe and
 * SystemTap attach to them in a running process.  Provider "libswait":
 *
 *	wait_start(head, waiter)        swait_sleep() is about to sleep
 *	wait_end(head, waiter, reason)  it returns: 0 woken, 1 timeout, 2 signal
 *	wake(head, waiter, how)         a waker flips a waiter: how 3 = wake_one,
 *	                                4 = wake_all (the state values)
 *	wake_all(head, count)           a wake_all walk ends, count waiters woken
 *	lock_contended(head)            the head lock's fast path failed
 *
 * Arguments are register values only: the wake probe fires before the
 * waker's last access to the waiter (I3), and no probe reads memory.
 */
#ifndef SWAIT_TRACE_H
#define SWAIT_TRACE_H

#ifndef SWAIT_TRACING
#define SWAIT_TRACING 0
#endif

#if SWAIT_TRACING
#include <sys/sdt.h>
#define swait_trace1(name, a)		STAP_PROBE1(libswait, name, a)
#define swait_trace2(name, a, b)	STAP_PROBE2(libswait, name, a, b)
#define swait_trace3(name, a, b, c)	STAP_PROBE3(libswait, name, a, b, c)
#else
#define swait_trace1(name, a)		((void)(a))
#define swait_trace2(name, a, b)	((void)(a), (void)(b))
#define swait_trace3(name, a, b, c)	((void)(a), (void)(b), (void)(c))
#endif

#endif /* SWAIT_TRACE_H */
