/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - the one helper layer every test builds on (prefix tu_):
 *
 *   - a watchdog that turns a hang (a lost wakeup) into a failure with a
 *     message, and iteration counts and timeouts that scale with
 *     SWAIT_STRESS_SCALE and SWAIT_TEST_SLOWDOWN;
 *   - the tests' own atomics, annotated for Helgrind and DRD (TU_LOAD,
 *     TU_STORE, TU_XCHG, TU_ADD): the one place that knows about Valgrind
 *     (TU_VALGRIND, set by tests/meson.build);
 *   - bounded polling, deadlines, a random number generator, busy waits;
 *   - installing a signal handler the way the tests need it.
 *
 * Suite-specific helpers are built on this one: tu_unit.h (cmocka, forked
 * children, "is this thread asleep in the futex?", a phase watchdog) and
 * tu_stress.h (a thread table with a progress monitor, token pools, the
 * rounds that leavers park in).
 */
#ifndef SWAIT_TESTUTIL_H
#define SWAIT_TESTUTIL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/*
 * Arm the watchdog: if tu_watchdog_disarm() is not called within seconds
 * (scaled up under Valgrind, see tu_slowdown(); down by
 * SWAIT_WATCHDOG_SCALE, a factor in (0, 1]), print "WATCHDOG: <what>"
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

/* A deadline on clock offset by nsec (may be negative) from now. */
struct timespec tu_deadline(clockid_t clock, long long nsec);

/* Whether clock has reached the absolute time *ts. */
bool tu_reached(clockid_t clock, const struct timespec *ts);

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

/*
 * Atomic accesses to the tests' own shared words, of any integer or
 * pointer type.  Helgrind and DRD do not model atomics: each access marks
 * the word as a synchronisation word (tu_sync_var) and gives a
 * release/acquire arc (tu_release, tu_acquire), so that what the tools
 * report is about the library.  All of these are no-ops natively, apart
 * from the atomic itself.
 */
#define TU_LOAD(p)							\
	__extension__ ({						\
		__typeof__(*(p) + 0) tu_v_;	/* unqualified */	\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_v_ = __atomic_load_n((p), __ATOMIC_ACQUIRE);		\
		tu_acquire(p);						\
		tu_v_;							\
	})

#define TU_STORE(p, v)							\
	do {								\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		__atomic_store_n((p), (v), __ATOMIC_RELEASE);		\
	} while (0)

#define TU_XCHG(p, v)							\
	__extension__ ({						\
		__typeof__(*(p)) tu_v_;					\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		tu_v_ = __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL); \
		tu_acquire(p);						\
		tu_v_;							\
	})

/* Add n to *p; the value is the new one. */
#define TU_ADD(p, n)							\
	__extension__ ({						\
		__typeof__(*(p)) tu_v_;					\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		tu_v_ = __atomic_add_fetch((p), (n), __ATOMIC_ACQ_REL);	\
		tu_acquire(p);						\
		tu_v_;							\
	})

/* Back off politely: yield first, then nap briefly (2 shared CPUs). */
void tu_pause(unsigned long n);

/*
 * Evaluate cond until it is true or ns nanoseconds (scaled by
 * tu_slowdown()) pass; the value is whether it became true.  For ordering
 * threads by observed state, never by sleeping.
 */
#define tu_poll_ns(cond, ns)						\
	__extension__ ({						\
		long long tu_dl_ = tu_now_ns() +			\
			(long long)((double)(ns) * tu_slowdown());	\
		unsigned long tu_n_ = 0;				\
		bool tu_ok_;						\
		while (!(tu_ok_ = (cond)) && tu_now_ns() < tu_dl_)	\
			tu_pause(tu_n_++);				\
		tu_ok_;							\
	})

/* How long a bounded poll may take before the test fails (unscaled). */
#define TU_POLL_SECONDS 5.0

/* The same, bounded by TU_POLL_SECONDS: failing it fails the test. */
#define tu_poll(cond) tu_poll_ns(cond, TU_POLL_SECONDS * 1e9)

/* A xorshift generator; each thread keeps its own state. */
static inline uint64_t tu_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* Busy-wait for about n iterations: widens races without a system call. */
void tu_spin(unsigned n);

pid_t tu_gettid(void);

/*
 * For a watchdog's report: what the kernel says of thread tid of this
 * process, on one line (its state, pending, shared-pending and blocked
 * signal masks, the system call it sits in).  Under qemu-user these are
 * the host thread's: the guest's pending signals are qemu's own.
 */
void tu_task_describe(FILE *out, pid_t tid);

/*
 * Whether system call number nr (as /proc/.../syscall shows it) is a futex
 * call: SYS_futex, or SYS_futex_time64 on 32-bit ABIs.  Under an emulator
 * (Meson's exe wrapper, qemu-user for the cross builds, sets
 * MESON_EXE_WRAPPER) /proc shows the host's number, which this build
 * cannot name: every number counts, and the caller's other evidence (the
 * thread's 'S' state, a queued waiter) has to do.
 */
bool tu_is_futex_call(long nr);

/* The state letter of a thread of this process ('R', 'S', ...), or '?'. */
char tu_task_state(pid_t tid);

/*
 * The number of the system call tid is blocked in (/proc/self/task/TID/
 * syscall), or -1 if /proc does not say (ptrace restrictions, running).
 */
long tu_task_syscall(pid_t tid);
/*
 * Argument k (1-6) of the system call thread tid is blocked in, from
 * /proc; 0 when unreadable.  For a futex call, argument 1 is the word: a
 * thread parked on a head's lock word is not one of its sleepers.
 */
unsigned long tu_task_syscall_arg(pid_t tid, int k);

/*
 * Whether the tests run under qemu-i386, whose threads lose their own
 * thread-local storage once a signal handler has run (cross/qemu-i386.ini).
 * The tests that take signals while other threads run exit 77 there (a
 * skip, for Meson) with a line saying why.
 */
bool tu_emulator_shares_tls(void);

/* Pin the calling thread to CPU cpu (modulo the CPUs available); 0 or -1. */
int tu_pin_self(int cpu);

/*
 * Install fn as the handler of sig with sa_flags flags and an empty mask;
 * the previous action goes to *old unless old is NULL.  Pass flags 0 (no
 * SA_RESTART) for handlers that must interrupt waits with EINTR, as the
 * header asks.  The value is sigaction()'s: 0 or -1.
 */
int tu_signal_handler(int sig, void (*fn)(int), int flags,
		      struct sigaction *old);

/*
 * What one signal costs on the machine running the test: fn installed for
 * sig, raised 5 rounds of 200 times, the median round's time per signal in
 * ns; then sig's action is restored.  For timer storms, whose period must
 * leave the loop under test time to run (a period below the cost livelocks
 * it: qemu-user, a 32-bit program on a 64-bit kernel and the sanitizers
 * pay far more per signal than a native one).  fn runs 1,000 times in the
 * calling thread; -1 if the handler could not be installed or a raise()
 * failed.
 */
long long tu_signal_cost_ns(int sig, void (*fn)(int));

/*
 * A spy on a priority-inheriting mutex, for "nothing released it": a
 * thread blocked on m, to which the kernel hands m at any unlock
 * (FUTEX_UNLOCK_PI), however short, so that the releaser's relock then
 * waits for the spy.  tu_pi_mutex_init() makes such a mutex (error-
 * checking, PTHREAD_PRIO_INHERIT).  With m held by the caller,
 * tu_spy_start() returns true once the spy sleeps on it; tu_spy_got()
 * says how often the spy has had m so far; after the caller's unlock,
 * tu_spy_join() waits for the spy and returns the same count (1).
 */
struct tu_spy {
	pthread_t thread;
	pthread_mutex_t *mutex;
	pid_t tid;
	int got;
};

int tu_pi_mutex_init(pthread_mutex_t *m);
bool tu_spy_start(struct tu_spy *spy, pthread_mutex_t *m);
int tu_spy_got(struct tu_spy *spy);
int tu_spy_join(struct tu_spy *spy);

#endif
