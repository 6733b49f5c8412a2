/* SPDX-License-Identifier: MIT */
/*
 * swait.h - simple wait queues for threads
 *
 * OVERVIEW
 *
 * A struct swait_head is a queue of sleeping threads guarded by a small lock.
 * A thread that must wait for a condition queues a struct swait_waiter that
 * lives in its own stack frame, checks the condition, and sleeps on a 32-bit
 * futex word inside that waiter.  A thread that makes the condition true
 * calls swait_wake_one() or swait_wake_all(): the waker dequeues waiters
 * under the head's lock, flips each one's word and wakes exactly that word.
 *
 * The semantics are those of the Linux kernel's simple wait queues
 * (include/linux/swait.h) and completions, carried over to threads:
 *
 *   - There is no mutex.  The condition is any C expression; it is read
 *     outside every lock, so data it reads concurrently with its writers
 *     must be atomics (or be read under the caller's own lock).
 *   - Waiters are exclusive and served in FIFO order: swait_wake_one()
 *     wakes exactly one waiter, the one that has waited longest.
 *     pthread_cond_signal() promises "at least one".
 *   - Nothing is allocated.  A wake on an empty head takes no lock and makes
 *     no system call.  Every lock hold is O(1): swait_wake_all() drops the
 *     lock between two wakes, as the kernel's swake_up_all() does.
 *   - Waiters are process-private (FUTEX_PRIVATE_FLAG).  A head must not be
 *     placed in memory shared between processes.  After fork(), _Fork()
 *     or clone() without CLONE_VM the child owns a copy of every head; a
 *     head or completion may be used there exactly when, at the fork, no
 *     other thread was inside a libswait call on it or had a waiter queued
 *     on it (its lock may be held; a wake could select a waiter whose
 *     thread is gone).  PI heads work in all three kinds of child.
 *   - An idle head (no waiter queued, no call on it in progress, every
 *     waiter it woke returned) holds no pointer into itself: it may be
 *     copied or moved, and the copy works at its new address.  A head with
 *     waiters must not be (swait_event_mutex(3), COPYING A HEAD).
 *
 * <swait.h> needs no feature test macro: it compiles in the strict ISO
 * modes (-std=c99, c11, c17 with -pedantic) and as C++11 and later, as
 * <pthread.h> does.  What it uses of POSIX it gets from POSIX headers that
 * declare it in every mode (see the includes below).
 *
 * Use the event macros (swait_event*) and completions in ordinary code; the
 * low-level calls (swait_prepare, swait_sleep, swait_finish) are the
 * building blocks the macros are written with, for waits the macros do not
 * cover.
 *
 * GUARANTEES
 *
 * Ordering.  Everything a thread wrote before it called swait_wake_one(),
 * swait_wake_all(), swait_complete() or swait_complete_all() is visible to
 * a waiter that this call woke, once the waiter's swait_sleep() returns 0.
 * swait_prepare() ends, and swait_wake_one()/swait_wake_all() begin, with a
 * full memory barrier; so in the pattern
 *
 *	waiter				waker
 *	swait_prepare(h, &w);		cond = true;
 *	if (!cond)			swait_wake_one(h);
 *		swait_sleep(h, &w, ...);
 *
 * either the waiter sees cond true, or the waker sees the waiter queued and
 * wakes it: no lost wakeup.  (The waker must store cond before it calls the
 * wake; the wake's barrier orders the two.  On an asymmetric head,
 * swait_head_init_asym(), an empty swait_wake_one() has only a compiler
 * barrier and the sleeper's membarrier() pays for both sides: the same
 * for cond, but no fence for other orderings of the waker's own.)
 *
 * No swallowed wakeups.  A waiter that a swait_wake_one() selected, but that
 * leaves without having slept on that wake (its condition was already true,
 * its deadline passed, a signal arrived, or its thread was cancelled), passes
 * the wake on to the next waiter in swait_finish().  So "one wake per unit of
 * work" never strands a sleeper while work is pending.  The price is, in that
 * race only, one spurious wakeup of the next waiter.
 *
 * Concurrency.  Any calls may run concurrently on one head from any number of
 * threads, with these exceptions: swait_head_init() must not race with any
 * other call on that head; swait_head_destroy() must not race with a call
 * that begins on that head during it, but may overlap the rest of the wakes
 * that woke its last waiters, which it waits out (Lifetime, below); and one
 * waiter is used by one thread at a time and is queued on at most one head
 * at a time.
 *
 * Blocking.  swait_sleep(), the swait_event*() macros and the completion
 * waits may block.  No other call blocks, except for the O(1) critical
 * section of the head lock (spin a bounded number of times, then park on
 * the lock word with FUTEX_WAIT), and swait_head_destroy(), which waits
 * out the threads still on their way out of a head (Lifetime, below).
 *
 * Spinning.  Before it sleeps, a waiter polls its own word for a bounded
 * time (by default 10 us; see swait_set_spin()), so that a wake from
 * another CPU arriving within it costs neither side a system call or a
 * context switch: a handoff between two CPUs then takes about a
 * microsecond instead of the tens a sleeping one costs on a virtual
 * machine.  Every sleep spins (swait_sleep(), the macros, completions, the
 * mutex forms, swait_wait_any()), except with SWAIT_NOSPIN in the flags,
 * on a thread whose cap is 0, in a process that may run on one CPU only
 * (no waker could run meanwhile), on the process default in a SCHED_FIFO
 * or SCHED_RR thread pinned to one CPU (a waker on that CPU could not
 * run; such a thread opts in with a cap of its own), in a waiter queued
 * behind another (the next wake_one is not its), and after spins that found nothing (a
 * thread whose spins keep failing skips up to 1,023 sleeps in 1,024).
 * The price is CPU time: at most the cap per sleep, about cap/1024 per
 * sleep for a thread whose spins never succeed (waits that are long, or
 * wakers that share its CPU and so cannot run while it spins, for whom
 * a failed spin is also that much delay).  It changes no guarantee: FIFO,
 * exactly one per wake_one, deadlines (a spin never runs past one),
 * cancellation (acted on when the sleep starts, after the spin) and EINTR
 * (a handler that runs during the spin is one that ran before the sleep,
 * below).
 *
 * Cancellation.  swait_sleep() is a cancellation point, as
 * pthread_cond_wait() is, and so is every macro or completion wait that
 * has to sleep.  A thread cancelled there leaves the queue intact: its
 * waiter is dequeued and a wake it had been selected for is passed on.
 * A sleeping thread is cancelled asynchronously, and so would be a signal
 * handler that runs while it sleeps; but a cancel that lands while such a
 * handler is inside one of the four async-signal-safe calls is held off
 * until that call has released its locks, and acts as it returns.
 *
 * Lifetime.  A waiter's frame may be reused as soon as swait_finish() has
 * returned (the macros call it).  A waker may still issue a FUTEX_WAKE on
 * the departed waiter's address; that is harmless (futexes are private and
 * keyed by address: at worst a spurious wakeup of whatever lives there
 * next, which every futex user tolerates).
 *
 * A head may be freed once swait_head_destroy() has returned 0, and
 * destroy returns 0 once no waiter is queued on it, even while threads it
 * woke are still on their way out of their waits.  After it returned 0, no
 * thread of the library touches the head again: it performs every wake a
 * signal handler posted to the head's lock holder (below), waits for a
 * swait_wake_all() still walking the head (a few lock holds per waiter
 * left in its batch), and waits for the threads a swait_wake_one() woke
 * (or a wake of a swait_wait_any() group's node) that may still touch the
 * head: one that leaves without having slept on its wake passes the wake on
 * (No swallowed wakeups, above), a group's swait_finish_any() locks each
 * head.  Each of those takes a few steps inside the library, or finishes
 * evaluating its condition first: so a condition must not wait for the
 * thread that destroys its head.  Waiters a swait_wake_all() woke never
 * read the head again, on any path (futex_waitv, PI heads, timeouts,
 * EINTR, cancellation), and destroy does not wait for them.  So POSIX's
 * pattern works: wake the waiters, and the first woken thread (or any
 * thread that knows no waiter is queued and none will queue again)
 * destroys and frees the head.  EBUSY means a waiter is queued; the head
 * is then left as it was.  A thread must finish its own waiter on a head
 * (swait_finish) before it destroys that head.  A completion follows the
 * kernel's rule instead, which makes on-stack handshakes work: it may be
 * freed once every thread that waits on it has returned from its wait;
 * so the thread whose swait_completion_wait*() returned 0 may free it at
 * once if it was the only waiter.  Threads a swait_complete() woke are not
 * counted as leavers (see the completion section).
 *
 * Signals.  swait_wake_one(), swait_wake_all(), swait_complete() and
 * swait_complete_all() are async-signal-safe: a signal handler may call them
 * (a POSIX timer, SIGCHLD, a SIGTERM handler completing a shutdown
 * completion), on any thread, whatever lock that thread holds, nested in
 * other handlers to any depth.  A handler that interrupted its own thread
 * while that thread takes or holds a head lock never waits for a lock: if
 * the head it wakes is free it takes it and wakes at once; if it is held
 * (by its own thread, another thread or another handler) it adds its call
 * to that head's lock word and returns, and the holder performs the call
 * before its release of that lock completes.  So when such a call returns,
 * its wake is either done or pending on the head it targets, and it is
 * done before anyone else can take that head's lock (on a PI head, where
 * a call may also be pending on a free lock while another thread is
 * counted there, before the next hold of it ends): a swait_completion_
 * done() or try_wait() after swait_complete() returned sees the event, and
 * swait_head_destroy() performs what is pending before it returns.  No wake
 * and no completion is lost, none is performed twice, handlers on several
 * threads may wake heads the other threads hold without deadlock, and
 * nothing is reserved per thread: any number of handlers may wake any
 * number of heads during one lock hold.  Past 15 wake_ones pending on one
 * hold (past one on a PI head) they become one wake_all (spurious wakeups,
 * allowed).  Completes are
 * counted exactly.  On a PI head at most 2,047 are pending on one hold; a
 * handler that finds that many adds its event to the completion itself and
 * posts only the wake, so it never waits.  On an ordinary head 16,777,215
 * may be pending, and a handler that finds that many waits for the holder
 * to take them, for good only if the holder's thread is stuck in its own
 * handlers: 16,777,216 of them back to back in one hold (swait(7), Limits).
 * swait_active() and swait_has_sleeper() are async-signal-safe too (a
 * load, and a barrier: no lock, no system call).
 * The other calls are not async-signal-safe.
 * pthread_cond_signal() makes no such promise.
 *
 * Errors are returned as positive errno values (pthread style); errno is
 * never modified.  A futex error that cannot happen in a correct program
 * (EFAULT, ENOSYS) aborts with a message naming the file, line and error.
 * In builds with debug checks (the default unless NDEBUG builds are asked
 * for), misuse such as a waiter queued on two heads or a queued waiter whose
 * memory was reused aborts with a message naming the misuse.
 */
#ifndef SWAIT_H
#define SWAIT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * Strict ISO C without feature test macros: <time.h> then declares neither
 * clockid_t nor CLOCK_MONOTONIC, which POSIX puts under _POSIX_C_SOURCE.
 * <sys/types.h> defines clockid_t whatever the mode, in glibc and musl
 * alike (POSIX makes it that header's type; <pthread.h> uses it, and
 * glibc's spells it __clockid_t).  The two clocks the API accepts are the
 * Linux kernel's ABI numbers, which every Linux C library uses: defined
 * here only where the C library left them out, to the same values.
 */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME 0
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif

/*
 * time_t is 64 bits in every libswait build (deadlines past 2038): on a
 * 32-bit ABI whose own time_t is 32 bits (i386, armhf), users build with
 * _TIME_BITS=64, as the library was.  glibc 2.34 or later.
 */
#if defined(__GLIBC__) && defined(__TIMESIZE) && __TIMESIZE == 32 && \
	!defined(__USE_TIME_BITS64) && \
	(__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#error "libswait needs a 64-bit time_t: build with -D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64 (pkg-config --cflags swait)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SWAIT_NONNULL(...) __attribute__((nonnull(__VA_ARGS__)))
#else
#define SWAIT_NONNULL(...)
#endif

/* The library's version, the same as the Meson project version. */
#define SWAIT_VERSION_MAJOR 0
#define SWAIT_VERSION_MINOR 2
#define SWAIT_VERSION_PATCH 0

/* ------------------------------------------------------------------ types */

/*
 * A doubly linked list link.  An all-zero link in a head means "empty, not
 * yet linked"; the library turns it into a circular list on first use.
 */
struct swait_list {
	struct swait_list *next;
	struct swait_list *prev;
};

/*
 * A wait queue head: 24 bytes on LP64, 16 on ILP32.  All-zero bytes are a
 * valid, empty head, so static and calloc'd heads need no initialisation.
 * The fields are private to the library; they are exposed only so that
 * heads can be embedded and statically initialised.
 */
struct swait_head {
	uint32_t lock;		/* the head lock's futex word */
	uint32_t walks;		/* wake_all walks in progress; PI flag */
	struct swait_list list;	/* queued waiters, FIFO */
};

/*
 * A waiter: 32 bytes on LP64, 20 on ILP32.  Lives in the waiting thread's
 * stack frame.  All-zero bytes are a valid, idle waiter.
 */
struct swait_waiter {
	struct swait_list link;		/* on the head's list while queued */
	struct swait_head *head;	/* the head it is queued on */
	uint32_t state;			/* futex word: the waiter's state */
	uint32_t group;			/* futex word of a wait_any group
					 * (waiters[0]); a debug tag while
					 * a single waiter is queued */
};

/*
 * A completion: the kernel's struct completion.  All-zero bytes are a
 * valid completion that is not done.
 */
struct swait_completion {
	unsigned int done;	/* completions posted; UINT_MAX after complete_all */
	struct swait_head wait;
};

#define SWAIT_HEAD_INITIALIZER { 0, 0, { 0, 0 } }
/* The bit of swait_head.walks that marks a PI head; fixed at init. */
#define SWAIT_HEAD_PI_BIT 0x40000000u

#define SWAIT_HEAD_PI_INITIALIZER { 0, SWAIT_HEAD_PI_BIT, { 0, 0 } }
#define SWAIT_WAITER_INITIALIZER { { 0, 0 }, 0, 0, 0 }
#define SWAIT_COMPLETION_INITIALIZER { 0, SWAIT_HEAD_INITIALIZER }

/* Flags for swait_sleep() and swait_wait_any(). */
#define SWAIT_INTERRUPTIBLE 0x1u	/* return EINTR when a signal handler ran */
#define SWAIT_NOSPIN 0x2u		/* sleep at once, without spinning first */

/* swait_set_spin(): the process default, and the largest cap. */
#define SWAIT_SPIN_DEFAULT (-1L)
#define SWAIT_SPIN_MAX_NS 1000000L

/* ------------------------------------------------------------ init, destroy */

/*
 * Make *head an empty head.  Equivalent to SWAIT_HEAD_INITIALIZER.  Debug
 * builds abort if *head still has waiters (they would never be woken).
 */
void swait_head_init(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * Make *head an empty priority-inheritance head.  Equivalent to
 * SWAIT_HEAD_PI_INITIALIZER.  Its lock is a PI futex: the lock word holds
 * the owner's thread id, an uncontended lock or unlock is one
 * compare-and-swap with no system call, and a contended lock sleeps in
 * FUTEX_LOCK_PI, which lends the sleeper's priority to the owner.  So a
 * low-priority thread preempted while it holds the head lock (for its O(1)
 * critical section) is boosted instead of starving a high-priority thread
 * that wakes or waits on the head.  Use it when threads of different
 * SCHED_FIFO/SCHED_RR priorities share a head.  The rest of the API is the
 * same; waiters still sleep on their own words, not on the lock.  Not
 * covered: the wait of a completion's waits, try_wait, done and
 * swait_head_destroy() for threads still leaving the head lends no
 * priority, so a preempted low-priority leaver can make a high-priority
 * caller wait behind a middle-priority thread (swait(7), REAL-TIME NOTES).
 */
void swait_head_init_pi(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * Make *head an empty asymmetric head: for a head that is woken far more
 * often than slept on (a producer that wakes after every item, consumers
 * that are nearly always busy).  Its wakes skip the full memory barrier
 * that every wake otherwise pays (swait_wake_one() with nobody waiting
 * becomes two loads in the caller, no call), and each sleep on it pays
 * for both sides instead with
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED): a system call that
 * interrupts every CPU running a thread of the process (about a
 * microsecond alone, tens of microseconds on a virtual machine), taken in
 * swait_prepare(), so in every swait_event*() that does not find its
 * condition true at once, spins included.  Not for real-time processes:
 * those interrupts reach their isolated CPUs too.
 *
 * Returns 0, or the error that makes the barrier unavailable (ENOSYS before
 * Linux 4.14, or what a seccomp filter answers); *head is then an ordinary
 * head, correct and usable as such.  The first call registers the process
 * (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED); a forked child inherits
 * that.  A seccomp filter that denies membarrier() installed later makes
 * the next sleep on the head abort with a message.  No static initializer,
 * no PI variant; the rest of the API and every guarantee are unchanged.
 * Only swait_wake_one() skips the barrier; swait_wake_all() and
 * swait_has_sleeper() keep it.  ENOMEM from the barrier (memory pressure)
 * is waited out.  A seccomp filter or tracer that fakes membarrier()'s
 * success removes the barrier the sleeps depend on, and wakeups may then
 * be lost: no library can tell a faked barrier from a real one.
 */
int swait_head_init_asym(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * Check that *head is unused, so that its memory may be freed or reused.
 * Returns 0, or EBUSY while a waiter is queued; nothing is changed then.
 * It first waits out what may still touch the head after its waiters were
 * woken: a swait_wake_all() still walking it, and the threads a
 * swait_wake_one() woke (Lifetime, above).  Must not race with the calls
 * that start a wait (the caller knows that no thread will prepare).
 */
int swait_head_destroy(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * Make *waiter an idle waiter.  Equivalent to SWAIT_WAITER_INITIALIZER.
 * Debug builds abort if it is still queued.
 */
void swait_waiter_init(struct swait_waiter *waiter) SWAIT_NONNULL(1);

/* ------------------------------------------------------- low-level waiting */

/*
 * Queue *waiter at the tail of *head (FIFO, exclusive), the kernel's
 * prepare_to_swait_exclusive().  A waiter still queued on this head from an
 * earlier prepare keeps its place.  A waiter that a wake selected since its
 * last prepare is queued again at the tail, and that wake counts as
 * consumed: the caller re-checks its condition right after this call, which
 * is what the wake asked of it.  Ends with a full memory barrier: the
 * caller's following read of its condition cannot move before the enqueue
 * (pairs with the barrier at the start of every wake; on an asymmetric
 * head the prepare ends in membarrier() instead).  Never blocks.
 * Debug builds abort if *waiter is still queued on another head.
 */
void swait_prepare(struct swait_head *head, struct swait_waiter *waiter)
	SWAIT_NONNULL(1, 2);

/*
 * Block until *waiter is woken, the deadline passes or (with
 * SWAIT_INTERRUPTIBLE in flags) a signal handler runs.
 *
 * deadline is absolute on clock, which is CLOCK_MONOTONIC or CLOCK_REALTIME;
 * NULL means no deadline.  A deadline already past returns ETIMEDOUT at once
 * unless the waiter was woken; a negative tv_sec counts as past.
 *
 * Returns
 *   0          woken.  Spurious returns are allowed: callers re-check their
 *              condition in a loop (the macros do).  If the waiter was not
 *              woken, it is still queued and keeps its place.
 *   ETIMEDOUT  the deadline passed; the waiter is still queued.
 *   EINTR      SWAIT_INTERRUPTIBLE was given and a signal handler
 *              interrupted the sleep in the kernel; the waiter is still
 *              queued.  Exactly then: a handler that runs before the thread
 *              is in the system call (while the caller evaluates its
 *              condition, or prepares) produces no EINTR, and without a
 *              deadline a handler installed with SA_RESTART makes the kernel
 *              restart the sleep silently.  With a deadline, any handler
 *              that interrupts the sleep yields EINTR.  To interrupt a
 *              waiter reliably, make the handler set something the
 *              condition tests and wake the head (the wakes are
 *              async-signal-safe).
 *   EINVAL     bad clock, tv_nsec outside [0, 1e9), or unknown flags.
 *
 * A cancellation point.  Call swait_finish() afterwards in every case.
 */
int swait_sleep(struct swait_head *head, struct swait_waiter *waiter,
		unsigned flags, clockid_t clock,
		const struct timespec *deadline) SWAIT_NONNULL(1, 2);

/*
 * Dequeue *waiter if it is still queued (the kernel's finish_swait()), and
 * pass on a swait_wake_one() that selected it after its last prepare but did
 * not end one of its sleeps.  Safe after a wake, a timeout, a signal or no
 * sleep at all; a no-op on an idle waiter.  Once it returns, *waiter's memory
 * may be reused.  Never blocks.
 */
void swait_finish(struct swait_head *head, struct swait_waiter *waiter)
	SWAIT_NONNULL(1, 2);

/* ------------------------------------------------------------------ waking */

/*
 * Dequeue and wake the waiter that has waited longest, if any.  Begins with
 * a full memory barrier (pairs with the one ending swait_prepare()).  On an
 * empty head: that barrier and one load, no lock, no system call; on an
 * empty asymmetric head (swait_head_init_asym) two loads, made inline in
 * the caller (below), no call.  Never blocks.  Async-signal-safe (see
 * Signals above).
 */
void swait_wake_one(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * swait_wake_one() under the name the inline half below calls, which only
 * a library that knows SWAIT_HEAD_ASYM_BIT exports: a program built with
 * this header then refuses to start on an older libswait.so.0 (whose walks
 * word used that bit otherwise) instead of misreading its heads.  Not a
 * name to call.
 */
void swait_wake_one_slow(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * Wake every waiter queued when the call starts; waiters that arrive during
 * it are not woken by it.  The queued set is detached in O(1) and woken one
 * by one, with the head lock dropped between two wakes, so a thread that
 * wants the lock never waits behind the whole walk.  Begins with a full
 * memory barrier.  On an empty head: no lock, no system call.  Never blocks.
 * Async-signal-safe.
 */
void swait_wake_all(struct swait_head *head) SWAIT_NONNULL(1);

/*
 * The bit of a head's walks word that marks an asymmetric head, fixed by
 * swait_head_init_asym(); a PI head's word uses it for other things, so
 * it counts only with SWAIT_HEAD_PI_BIT clear.
 */
#define SWAIT_HEAD_ASYM_BIT 0x00800000u

/*
 * swait_wake_one() as the callers' compiler sees it: on an empty
 * asymmetric head the wake is over once two loads said so, without a call
 * into the library, as C++'s notify_one() is inlined; any other head, or a
 * waiter found, goes to the library's swait_wake_one() (which checks
 * again), as swait_wake_one_slow().  The compiler barrier (an empty asm
 * that clobbers memory, as the kernel's barrier(): a signal fence orders
 * only what a signal handler could see) keeps the caller's store of its
 * condition, atomic or plain, before the peek in program order, which the
 * sleeper's membarrier() needs (lib/asym.c, O1a).  Define SWAIT_NO_INLINE
 * to call the library always; (swait_wake_one)(head) does so for one
 * call.  Not a name to use.
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(SWAIT_NO_INLINE) && \
	!defined(SWAIT_BUILDING_LIBRARY)
/*
 * GCC 11-12 under -fsanitize=undefined follow the sanitizer's null-check
 * path and call the atomic loads below writes "into a region of size 0"
 * (-Wstringop-overflow), a false positive that -Werror makes fatal in the
 * caller's build; nonnull alone did not always silence it.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline __attribute__((__always_inline__, __nonnull__(1))) void
swait_wake_one_inline(struct swait_head *head)
{
	const struct swait_list *first;
	uint32_t walks = __atomic_load_n(&head->walks, __ATOMIC_RELAXED);

	/*
	 * An ordinary head: a test of one bit, then the library's full wake.
	 * A PI head's posts may set the bit too; it rarely gets this far.
	 */
	if (__builtin_expect((walks & SWAIT_HEAD_ASYM_BIT) != 0, 0) &&
	    !(walks & SWAIT_HEAD_PI_BIT)) {
		__asm__ __volatile__("" ::: "memory");
		/*
		 * NULL when empty, never used or emptied (lib/list.h); the
		 * anchor's own address only for a moment inside an enqueue,
		 * which the library's test then sees.
		 */
		first = __atomic_load_n(&head->list.next, __ATOMIC_RELAXED);
		if (first == NULL)
			return;
	}
	swait_wake_one_slow(head);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
#define swait_wake_one(head) swait_wake_one_inline(head)
#endif

/*
 * Whether a waiter is queued: a lockless peek with no barrier, as in the
 * kernel.  Only a hint unless the caller orders it (see swait_has_sleeper).
 * Async-signal-safe.
 */
bool swait_active(const struct swait_head *head) SWAIT_NONNULL(1);

/*
 * A full memory barrier, then swait_active(): the kernel's
 * swq_has_sleeper().  A waker that stored its condition and then sees false
 * may skip the wake: any waiter queued later will see the condition.
 * Async-signal-safe.
 */
bool swait_has_sleeper(struct swait_head *head) SWAIT_NONNULL(1);

/* ------------------------------------------- waiting on several heads */

/*
 * The most heads one swait_wait_any() can wait on.
 */
#define SWAIT_ANY_MAX 16u

/*
 * Wait on several heads at once: for work, a shutdown or a configuration
 * change, say, each announced on its own head.  waiters[i] is queued on
 * heads[i]; all n nodes share one futex word (in waiters[0]), so a wake on
 * any of the heads ends the sleep.  The pattern is the single-head one:
 *
 *	struct swait_head *heads[2] = { &work, &shutdown };
 *	struct swait_waiter w[2] = { SWAIT_WAITER_INITIALIZER,
 *				     SWAIT_WAITER_INITIALIZER };
 *	unsigned which;
 *
 *	for (;;) {
 *		swait_prepare_any(heads, 2, w);
 *		if (have_work() || stopping)
 *			break;
 *		if (swait_wait_any(heads, 2, w, 0, CLOCK_MONOTONIC, NULL,
 *				   &which) != 0)
 *			break;	(ETIMEDOUT, EINTR)
 *	}
 *	swait_finish_any(heads, 2, w);
 *
 * Only the wake that swait_wait_any() reports (*which) is consumed.  A
 * wake_one that selected another node (several heads woke the group, or
 * one came after the deadline passed) is passed on to the next waiter of
 * that head by swait_prepare_any() or swait_finish_any(), never lost.  The
 * one rule for the caller: the reported wake stands for heads[*which]'s
 * work, so a caller that takes one thing and leaves takes it from
 * heads[*which] when that head has any (the library's model checker
 * proves the protocol under this rule).
 * A completion may be a member through its head (&c->wait): wait with
 * swait_completion_wait_any() (below), which consumes its events.
 * n is 1 to SWAIT_ANY_MAX; the heads must be distinct.  The nodes form one
 * group from swait_prepare_any() to swait_finish_any(): do not pass them
 * to the single-head calls in between.  Heads may be PI heads or not.
 */

/*
 * Queue waiters[i] on heads[i] for every i (FIFO, as swait_prepare()), as
 * one group.  Nodes still queued from an earlier swait_prepare_any() keep
 * their places; nodes woken since are queued again.  The wake the last
 * swait_wait_any() reported counts as consumed (the caller re-checks its
 * conditions next); any other wake_one that selected a node is passed on,
 * because the caller may take one thing and leave.  Ends with a full
 * memory barrier.  Never blocks.  Debug builds abort on n == 0,
 * n > SWAIT_ANY_MAX, or a node that belongs to another wait.
 */
void swait_prepare_any(struct swait_head *const heads[], unsigned n,
		       struct swait_waiter waiters[]) SWAIT_NONNULL(1, 3);

/*
 * Sleep until a wake on any of the heads, the deadline or (with
 * SWAIT_INTERRUPTIBLE) a signal, as swait_sleep().  Returns 0 with *which
 * set to the index of the head whose wake ended the wait (the lowest index
 * if several heads woke it), ETIMEDOUT, EINTR, or EINVAL for a bad clock,
 * deadline, flags or n.  Spurious returns of 0 are allowed.  A cancellation
 * point.  Call swait_finish_any() afterwards in every case.
 */
int swait_wait_any(struct swait_head *const heads[], unsigned n,
		   struct swait_waiter waiters[], unsigned flags,
		   clockid_t clock, const struct timespec *deadline,
		   unsigned *which) SWAIT_NONNULL(1, 3, 7);

/*
 * Dequeue every node of the group that is still queued, and pass on each
 * wake_one that selected a node but did not end a swait_wait_any() (as
 * swait_finish()).  Afterwards the waiters are idle and their memory may be
 * reused.  Never blocks.
 */
void swait_finish_any(struct swait_head *const heads[], unsigned n,
		      struct swait_waiter waiters[]) SWAIT_NONNULL(1, 3);

/* ------------------------------------------------------------- deadlines */

/*
 * Store in *deadline the time nsec nanoseconds from now on clock.  Returns
 * 0, or EINVAL for a bad clock or a negative nsec.  For relative timeouts:
 *
 *	struct timespec dl;
 *	swait_deadline_after(&dl, CLOCK_MONOTONIC, 50 * 1000000LL);
 *	err = swait_event_timeout(&h, ready, CLOCK_MONOTONIC, &dl);
 */
int swait_deadline_after(struct timespec *deadline, clockid_t clock,
			 int64_t nsec) SWAIT_NONNULL(1);

/* ---------------------------------------------------- spinning before sleep */

/*
 * Set how long the calling thread's sleeps may spin before they block (see
 * Spinning, above): ns nanoseconds, at most SWAIT_SPIN_MAX_NS; 0 never
 * spins; SWAIT_SPIN_DEFAULT follows the process default, which is the
 * build's (Meson option spin_ns, 10000 unless changed) or the environment
 * variable SWAIT_SPIN_NS (0 to SWAIT_SPIN_MAX_NS, read when the library is
 * loaded; other values are ignored).  Stores the previous setting in *old_ns unless
 * it is NULL.  Also forgets the thread's record of failed spins and
 * re-reads its CPU affinity and scheduling policy.  Returns 0, or EINVAL for an ns out of range.
 *
 * Strict real-time threads that want every sleep to block at once, and
 * threads that share a CPU with their wakers without being pinned, set 0.
 */
int swait_set_spin(long ns, long *old_ns);

/* The cap in ns the calling thread's sleeps spin for now (0: none). */
long swait_spin_cap(void);

/* ------------------------------------------------------------ event macros */

/*
 * swait_event(head, cond)
 *	Sleep until cond is true.  A statement.
 * swait_event_interruptible(head, cond)
 *	0 once cond is true, or EINTR if a signal handler interrupted its
 *	sleep first (exactly as swait_sleep() says).
 * swait_event_timeout(head, cond, clock, deadline)
 *	0 once cond is true, or ETIMEDOUT when the absolute deadline on clock
 *	(a const struct timespec *) passes first.
 * swait_event_interruptible_timeout(head, cond, clock, deadline)
 *	0, ETIMEDOUT or EINTR.
 * swait_event_timeout_ns(head, cond, nsec)
 *	swait_event_timeout with a deadline nsec nanoseconds from now on
 *	CLOCK_MONOTONIC.
 *
 * cond is evaluated first without touching the head (a true cond costs
 * nothing), then after each prepare, and after each wake before the waiter
 * queues again (a woken waiter is already off the queue, so a true cond
 * then returns without taking the head lock).  When the deadline passes or a signal
 * arrives, the waiter is dequeued and cond is evaluated one last time: a true
 * cond returns 0.  A wake the waiter had been selected for is passed on by
 * swait_finish(), never swallowed.  The macros return EINVAL for a bad clock,
 * deadline or flags, checked before cond.  cond may be evaluated any number of
 * times; it must not have side effects beyond consuming what it waits for.
 *
 * The expression forms use GNU statement expressions (GCC and Clang, in C
 * and C++).
 */
#define swait_event(head, cond)						\
	do {								\
		(void)swait_event_generic(head, cond, 0,		\
					  CLOCK_MONOTONIC, 0);		\
	} while (0)

#define swait_event_interruptible(head, cond)				\
	swait_event_generic(head, cond, SWAIT_INTERRUPTIBLE,		\
			    CLOCK_MONOTONIC, 0)

#define swait_event_timeout(head, cond, clock, deadline)		\
	swait_event_generic(head, cond, 0, clock, deadline)

#define swait_event_interruptible_timeout(head, cond, clock, deadline)	\
	swait_event_generic(head, cond, SWAIT_INTERRUPTIBLE, clock, deadline)

#define swait_event_timeout_ns(head, cond, nsec)			\
	__extension__ ({						\
		struct timespec swait_dl_;				\
		int swait_err_ = swait_deadline_after(&swait_dl_,	\
					CLOCK_MONOTONIC, (nsec));	\
		if (swait_err_ == 0)					\
			swait_err_ = swait_event_timeout(head, cond,	\
					CLOCK_MONOTONIC, &swait_dl_);	\
		swait_err_;						\
	})

/*
 * The loop every macro expands to; usable directly.  Returns 0, ETIMEDOUT,
 * EINTR or EINVAL, as documented above.
 */
#define swait_event_generic(head, cond, flags, clock, deadline)	\
	__extension__ ({						\
		struct swait_head *swait_h_ = (head);			\
		const struct timespec *swait_d_ = (deadline);		\
		clockid_t swait_c_ = (clock);				\
		unsigned swait_f_ = (flags);				\
		int swait_r_ = swait_deadline_valid(swait_c_, swait_d_)	\
			&& !(swait_f_ & ~(SWAIT_INTERRUPTIBLE |		\
					  SWAIT_NOSPIN)) ? 0 : EINVAL;	\
		if (swait_r_ == 0 && !(cond)) {				\
			struct swait_waiter swait_w_ =			\
				SWAIT_WAITER_INITIALIZER;		\
			for (;;) {					\
				swait_prepare(swait_h_, &swait_w_);	\
				if (cond)				\
					break;				\
				swait_r_ = swait_sleep(swait_h_,	\
						&swait_w_, swait_f_,	\
						swait_c_, swait_d_);	\
				if (swait_r_ != 0)			\
					break;				\
				/* Woken, so dequeued: check before	\
				 * queueing again, which consumes the	\
				 * wake. */				\
				if (cond)				\
					break;				\
			}						\
			swait_finish(swait_h_, &swait_w_);		\
			if (swait_r_ != 0 && (cond))			\
				swait_r_ = 0;				\
		}							\
		swait_r_;						\
	})

/* ------------------------------------------------ waiting with a mutex */

/*
 * For state that lives under a pthread mutex: pthread_cond_wait()'s shape
 * and the kernel's wait_event_lock_irq().
 *
 * swait_event_mutex(head, cond, mutex)
 *	Called with mutex (a pthread_mutex_t *) locked by this thread.
 *	Evaluates cond with it held; while cond is false, queues on head,
 *	unlocks mutex, sleeps until a wake, locks mutex again (once per wake)
 *	and evaluates cond again.  A statement: it ends with mutex held and
 *	cond true, or not at all (see the statement form below).
 * swait_event_mutex_timeout(head, cond, mutex, clock, deadline)
 *	0, or ETIMEDOUT when the absolute deadline passed with cond still
 *	false; mutex is held on return either way.
 * swait_event_mutex_interruptible(head, cond, mutex)
 * swait_event_mutex_interruptible_timeout(head, cond, mutex, clock,
 *					   deadline)
 *	As above, and EINTR as for swait_event_interruptible().
 *
 * The expression forms also return
 *   EINVAL	a bad clock, deadline or flags, before cond is evaluated;
 *		mutex untouched.
 *   EPERM	pthread_mutex_unlock() failed (an error-checking, recursive
 *		or robust mutex this thread does not hold); nothing slept,
 *		mutex is as the caller left it.
 *   EOWNERDEAD	mutex is robust and its owner died while this thread slept:
 *		as from pthread_mutex_lock(), this thread holds mutex and the
 *		state may be inconsistent.  cond was not evaluated after the
 *		relock.  Repair the state, call pthread_mutex_consistent(),
 *		then evaluate cond (wait again) before relying on it.  Unlocking
 *		without pthread_mutex_consistent() makes mutex unrecoverable.
 *   ENOTRECOVERABLE
 *		mutex is robust and not recoverable; it is not held.
 * The relock's error takes precedence over 0, ETIMEDOUT and EINTR from
 * the sleep, as it does in glibc's pthread_cond_timedwait().
 *
 * The statement form, swait_event_mutex(), cannot return an error.  After
 * EOWNERDEAD or ENOTRECOVERABLE it aborts with a message, in every build:
 * it cannot keep its promise, and carrying on would run the caller's
 * critical section on state that a dead thread left half-written.  Wait on
 * a robust mutex with an expression form.  After any other error (EPERM:
 * mutex not held) builds with debug checks abort with a message naming the
 * misuse; other builds end the statement with cond false.
 *
 * The sleep is a cancellation point; as with pthread_cond_wait(), mutex is
 * locked again before the cancellation cleanup handlers run, and that
 * relock's error cannot be returned.  So, as with glibc's
 * pthread_cond_wait(), when a robust mutex's owner died the caller's
 * handlers run holding mutex in the inconsistent state EOWNERDEAD
 * announces: a handler that unlocks it must call pthread_mutex_consistent()
 * first (it returns 0 exactly in that case, EINVAL when the mutex is
 * consistent), or mutex becomes unrecoverable.  After ENOTRECOVERABLE the
 * handlers run without mutex, and pthread_mutex_unlock() returns EPERM.
 *
 * mutex must be a pthread_mutex_t *, and cond must not be one: passing
 * the mutex where the condition belongs (pthread_cond_wait()'s (cv, m)
 * order: swait_event_mutex(&h, &m, ready)) is a compile error whose
 * message says "swait_event_mutex: cond is a pthread_mutex_t *" or
 * "... mutex is not a pthread_mutex_t *".  C++ checks only mutex (every
 * swapped call fails that), so that cond stays free to hold a lambda
 * before C++20.
 *
 * The writer changes the state cond reads with the mutex held, then wakes
 * head.  cond needs no atomics: the mutex orders it, and no wakeup is lost
 * (the waiter is queued before it unlocks).  Wake under the lock when a
 * waiter may free the object that holds the head as soon as cond is true
 * (an on-stack object, the last reference): call swait_wake_one() or
 * swait_wake_all() before pthread_mutex_unlock().  The waiter cannot see
 * cond until it has the mutex, and by then the wake has returned.  Waking
 * after the unlock is fine only while the head outlives every waker.
 */
#define swait_event_mutex(head, cond, mutex)				\
	do {								\
		pthread_mutex_t *swait_sm_ = (mutex);			\
		int swait_se_;						\
		SWAIT_MUTEX_ARG_CHECK(cond, mutex);			\
		swait_se_ = swait_event_mutex_generic(head, cond,	\
				swait_sm_, 0, CLOCK_MONOTONIC, 0);	\
		if (swait_se_ != 0)					\
			swait_event_mutex_failed(swait_sm_, swait_se_);	\
	} while (0)

#define swait_event_mutex_timeout(head, cond, mutex, clock, deadline)	\
	swait_event_mutex_generic(head, cond, mutex, 0, clock, deadline)

#define swait_event_mutex_interruptible(head, cond, mutex)		\
	swait_event_mutex_generic(head, cond, mutex, SWAIT_INTERRUPTIBLE,	\
				  CLOCK_MONOTONIC, 0)

#define swait_event_mutex_interruptible_timeout(head, cond, mutex, clock, \
						deadline)		\
	swait_event_mutex_generic(head, cond, mutex, SWAIT_INTERRUPTIBLE,	\
				  clock, deadline)

/*
 * Unlock mutex, swait_sleep(), lock mutex again (also when cancelled).
 * The loop of the macros above; the waiter must be prepared, with mutex
 * held.  Returns pthread_mutex_unlock()'s error without sleeping (EPERM);
 * else the relock's error if it failed (EOWNERDEAD: held, inconsistent;
 * ENOTRECOVERABLE: not held), else swait_sleep()'s value.  Call
 * swait_finish() afterwards in every case.
 */
int swait_sleep_mutex(struct swait_head *head, struct swait_waiter *waiter,
		      pthread_mutex_t *mutex, unsigned flags, clockid_t clock,
		      const struct timespec *deadline) SWAIT_NONNULL(1, 2, 3);

/*
 * What swait_event_mutex() (the statement form) calls with a non-zero
 * result it cannot return: err is EOWNERDEAD or ENOTRECOVERABLE: abort
 * with a message, in every build; any other err: abort in builds with
 * debug checks, return otherwise.  0: return.
 */
void swait_event_mutex_failed(pthread_mutex_t *mutex, int err);

/*
 * SWAIT_MUTEX_ARG_CHECK(cond, mutex); a declaration that is a compile
 * error, with a message saying which, unless mutex is a pthread_mutex_t *
 * and (in C) cond is not one.  Neither is evaluated.  In C,
 * __builtin_types_compatible_p ignores top-level qualifiers, and
 * "1 ? x : x" decays arrays and promotes bit-fields (which __typeof__
 * refuses); __extension__ lets C99 have C11's _Static_assert.  In C++ the
 * exact match pthread_mutex_t * wins over the template, which everything
 * else (0, NULL and nullptr included) picks, and the two return types
 * differ in size.
 */
#ifdef __cplusplus
extern "C++" {
template <typename T>
char (&swait_mutex_arg_check(const T &))[2];
char (&swait_mutex_arg_check(pthread_mutex_t *))[1];
}
#if __cplusplus >= 201103L
#define SWAIT_MUTEX_ARG_CHECK(cond, mutex)				\
	static_assert(sizeof(swait_mutex_arg_check(mutex)) == 1,	\
		      "swait_event_mutex: mutex is not a pthread_mutex_t *" \
		      " (the order is head, cond, mutex)")
#else
#define SWAIT_MUTEX_ARG_CHECK(cond, mutex)				\
	(void)sizeof(char[sizeof(swait_mutex_arg_check(mutex)) == 1 ? 1 : -1])
#endif
#else
#define SWAIT_MUTEX_ARG_CHECK(cond, mutex)				\
	__extension__ _Static_assert(!__builtin_types_compatible_p(	\
		__typeof__(1 ? (cond) : (cond)), pthread_mutex_t *),	\
		"swait_event_mutex: cond is a pthread_mutex_t *"	\
		" (the order is head, cond, mutex)");			\
	__extension__ _Static_assert(__builtin_types_compatible_p(	\
		__typeof__(1 ? (mutex) : (mutex)), pthread_mutex_t *),	\
		"swait_event_mutex: mutex is not a pthread_mutex_t *"	\
		" (the order is head, cond, mutex)")
#endif

/* The loop every mutex macro expands to; usable directly. */
#define swait_event_mutex_generic(head, cond, mutex, flags, clock,	\
				  deadline)				\
	__extension__ ({						\
		struct swait_head *swait_h_ = (head);			\
		pthread_mutex_t *swait_m_ = (mutex);			\
		const struct timespec *swait_d_ = (deadline);		\
		clockid_t swait_c_ = (clock);				\
		unsigned swait_f_ = (flags);				\
		SWAIT_MUTEX_ARG_CHECK(cond, mutex);			\
		int swait_r_ = swait_deadline_valid(swait_c_, swait_d_)	\
			&& !(swait_f_ & ~(SWAIT_INTERRUPTIBLE |		\
					  SWAIT_NOSPIN)) ? 0 : EINVAL;	\
		if (swait_r_ == 0 && !(cond)) {				\
			struct swait_waiter swait_w_ =			\
				SWAIT_WAITER_INITIALIZER;		\
			for (;;) {					\
				swait_prepare(swait_h_, &swait_w_);	\
				swait_r_ = swait_sleep_mutex(swait_h_,	\
						&swait_w_, swait_m_,	\
						swait_f_, swait_c_,	\
						swait_d_);		\
				/* One evaluation per wake, held; none	\
				 * after EOWNERDEAD (inconsistent	\
				 * state) or ENOTRECOVERABLE (not	\
				 * held). */				\
				if (swait_r_ != 0 || (cond))		\
					break;				\
			}						\
			swait_finish(swait_h_, &swait_w_);		\
			if ((swait_r_ == ETIMEDOUT ||			\
			     swait_r_ == EINTR) && (cond))		\
				swait_r_ = 0;				\
		}							\
		swait_r_;						\
	})

/* ------------------------------------------------------------- completions */

/*
 * A completion counts posted events: swait_complete() posts one and wakes
 * one waiter; a wait consumes one.  swait_complete_all() makes the
 * completion done for every present and future waiter until
 * swait_completion_reinit().
 *
 * Lifetime: as in the kernel, a completion may live in the waiter's stack
 * frame and be freed by the waiter as soon as its wait (or try_wait, or
 * completion_done returning true) has returned, if no other thread is
 * still inside a wait on it: done is read and written under the head
 * lock, complete()/complete_all() release that lock as their last access
 * to the completion (a complete posted by a signal handler is performed
 * by the lock's holder before the event can be consumed), and a waiter
 * returns only after a complete_all() walk has left the completion.  With
 * several waiters, free it after the last one's wait has returned: a
 * waiter a complete() woke may still pass a surplus wake on to the next
 * waiter on its way out, and swait_head_destroy() does not wait for it
 * (counting it would make a waiter that waits out a complete_all() walk
 * wait for itself).
 *
 * swait_completion_init(): debug builds abort if c still has waiters.
 */
void swait_completion_init(struct swait_completion *c) SWAIT_NONNULL(1);

/*
 * Make a completion not done again.  Must not race with waits or completes:
 * call it when no thread waits on c.
 */
void swait_completion_reinit(struct swait_completion *c) SWAIT_NONNULL(1);

/* Post one event and wake one waiter.  Never blocks.  Async-signal-safe. */
void swait_complete(struct swait_completion *c) SWAIT_NONNULL(1);

/*
 * Make c done for every present and future waiter.  Never blocks.
 * Async-signal-safe: a SIGTERM handler may complete a shutdown completion.
 */
void swait_complete_all(struct swait_completion *c) SWAIT_NONNULL(1);

/* Wait for and consume one event.  A cancellation point when it sleeps. */
void swait_completion_wait(struct swait_completion *c) SWAIT_NONNULL(1);

/*
 * As swait_completion_wait(), with an absolute deadline on clock.
 * Returns 0, ETIMEDOUT, or EINVAL for a bad clock or deadline.
 */
int swait_completion_wait_timeout(struct swait_completion *c, clockid_t clock,
				  const struct timespec *deadline)
	SWAIT_NONNULL(1);

/*
 * As swait_completion_wait(); returns 0, or EINTR if a signal handler
 * interrupted its sleep (exactly as swait_sleep() says).
 */
int swait_completion_wait_interruptible(struct swait_completion *c)
	SWAIT_NONNULL(1);

/*
 * As swait_completion_wait_timeout(), with a relative timeout: ns
 * nanoseconds from now on CLOCK_MONOTONIC (immune to changes of the wall
 * clock).  Named after C++'s condition_variable::wait_for (a duration),
 * since _timeout here already means an absolute deadline (the kernel's
 * wait_for_completion_timeout() takes a relative count of jiffies and
 * returns what is left, which <swait/kernel.h> keeps).  Returns 0 with an event consumed,
 * ETIMEDOUT when ns passed first, or EINVAL for a negative ns (nothing
 * consumed).  ns == 0 is a poll: 0 exactly when an event is posted.
 */
int swait_completion_wait_for(struct swait_completion *c, int64_t ns)
	SWAIT_NONNULL(1);

/* Consume one event if there is one, without blocking. */
bool swait_completion_try_wait(struct swait_completion *c) SWAIT_NONNULL(1);

/* Whether an event is posted (none is consumed).  Never blocks. */
bool swait_completion_done(struct swait_completion *c) SWAIT_NONNULL(1);

/*
 * swait_wait_any() with completions among the heads: a daemon waits for
 * work and for its shutdown completion in one wait.  A completion takes
 * part through its head, heads[i] = &c->wait, and bit i of completions
 * says that heads[i] is a completion's (completions has no bit at or
 * above n).  The loop is swait_wait_any()'s, with this call in its place:
 *
 *	struct swait_head *heads[2] = { &work, &stop.wait };
 *	...
 *	for (;;) {
 *		swait_prepare_any(heads, 2, w);
 *		if (have_work())
 *			break;
 *		err = swait_completion_wait_any(heads, 2, w, 1u << 1, 0,
 *						CLOCK_MONOTONIC, NULL, &which);
 *		if (err != 0 || which == 1)
 *			break;	(ETIMEDOUT, EINTR; or stop's event)
 *	}
 *	swait_finish_any(heads, 2, w);
 *
 * A completion member is what swait_completion_wait() would be: before it
 * sleeps, the call takes an event from each completion member in index
 * order (swait_completion_try_wait()), so an event posted earlier, or a
 * swait_complete_all() (done for ever), ends the call at once; after a
 * wake that swait_wait_any() reports on a completion member, it takes
 * that member's event.  Exactly one event of heads[*which]'s completion
 * is consumed when the call returns 0 with *which naming a completion
 * member, and none otherwise: not on a return naming an ordinary head,
 * nor on ETIMEDOUT or EINTR.  An event whose wake reached this group but
 * was not reported stays posted, and its wake is passed on to the next
 * waiter of that completion by swait_prepare_any() or swait_finish_any(),
 * as every unreported wake_one is: no event is lost.
 *
 * Returns
 *   0		*which < n: heads[*which]'s wake ended the wait (the lowest
 *		index if several did); a completion member's event is
 *		consumed.  *which == n: a spurious return, nothing consumed:
 *		a completion's wake came, but another thread took its event
 *		first.  Spurious returns naming an ordinary head are allowed,
 *		as from swait_wait_any(): re-check its condition.
 *   ETIMEDOUT, EINTR
 *		as swait_wait_any(); no event was posted on any completion
 *		member when the call gave up (it checks them one last time).
 *   EINVAL	a bad clock, deadline, flags, n, or a bit of completions at
 *		or above n; checked before anything is consumed.
 * Prepare with swait_prepare_any() before every call and finish with
 * swait_finish_any() afterwards, as for swait_wait_any(); a completion
 * may be freed once every thread waiting on it has returned from
 * swait_finish_any() (which takes its lock).  A cancellation point.
 *
 * Why a call of its own rather than completions inside swait_wait_any():
 * the wait queue layer knows nothing of completions, and consuming inside
 * the group's wait would need a new step of its protocol.  This call uses
 * that protocol as it stands and consumes only through
 * swait_completion_try_wait(), under the completion's lock.  It does not
 * sleep again by itself after an event was taken first: only the caller
 * re-checks the other heads' conditions, which a swait_wake_all() on them
 * may have made true meanwhile (lib/completion.c, E1-E4).
 */
int swait_completion_wait_any(struct swait_head *const heads[], unsigned n,
			      struct swait_waiter waiters[],
			      unsigned completions, unsigned flags,
			      clockid_t clock, const struct timespec *deadline,
			      unsigned *which) SWAIT_NONNULL(1, 3, 8);

/* ----------------------------------------------------------------- inlines */

/*
 * Whether (clock, deadline) is acceptable to swait_sleep().  The macros
 * check it before the condition so that bad input fails the same way
 * whether or not the wait would have slept.
 */
static inline bool swait_deadline_valid(clockid_t clock,
					const struct timespec *deadline)
{
	if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME)
		return false;
	return !deadline ||
	       (deadline->tv_nsec >= 0 && deadline->tv_nsec < 1000000000L);
}

#ifdef __cplusplus
}
#endif

#endif /* SWAIT_H */
