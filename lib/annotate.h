/* SPDX-License-Identifier: MIT */
/*
 * annotate.h - teach Helgrind, DRD and ThreadSanitizer what the protocol
 * synchronises with.
 *
 * Both tools understand pthread objects, not atomics or futexes, so without
 * help every access to the lock word and to a waiter's futex word looks like
 * a race, and the handoff from waker to woken waiter is invisible.  With
 * SWAIT_ANNOTATE (Meson option valgrind, auto) the library issues Valgrind
 * client requests; natively each is a few register moves and no branch.
 *
 * What is said, and why each is true (the numbers are lib/swait.c's):
 *
 *  - The head lock orders its critical sections (O4): a happens-before arc
 *    on the head's address, sent before the releasing store and received
 *    after the acquiring one.  Not the tools' rwlock annotations: heads
 *    live on stacks, and DRD aborts when an address it knew as an rwlock
 *    comes back as an arc object (a waiter's word), or the reverse.  With
 *    arcs only, every object is of one kind.
 *  - The lock word and head->list.next are synchronisation words, read and
 *    written atomically outside the lock by design (the lock itself, and the
 *    lockless emptiness peek of O1): exempt from race checking.
 *  - A waiter's state word is a synchronisation word from its first
 *    enqueue on, and stays one.  Checking it again once the waiter is idle
 *    looks tidier but is wrong: Valgrind models FUTEX_WAKE as a read of the
 *    word, and a waker may issue that wake after the waiter has returned
 *    (I3, harmless to the kernel), so Helgrind reported it against whatever
 *    next used the memory (seen in the stress suite).  For waiters on the
 *    stack that is not enough, because Helgrind re-tracks stack memory as
 *    frames grow into it; the Helgrind setup therefore skips stack
 *    references, as DRD does by default (tests/meson.build says more).
 *    The word's happens-before history is dropped when the waiter goes
 *    idle, so a later waiter at the same address inherits no old arcs.
 *  - The waker's exchange to WOKEN_* happens before the woken thread's return
 *    (O3): a happens-before arc on the word's address.
 *
 * ThreadSanitizer: a program built with -fsanitize=thread against the
 * default (uninstrumented) library sees none of the library's atomics, so
 * plain data handed over by a wake or a completion looked racy to it.  The
 * same arcs are therefore also said in TSan's own interface,
 * __tsan_release(addr) before the releasing store and __tsan_acquire(addr)
 * after the acquiring load, on the same addresses as above.  Active only in
 * a program that runs under TSan: the two functions are weak references,
 * bound at load time to the TSan runtime the program brought, and null
 * otherwise; natively the cost is one load of the GOT entry and one
 * predictable branch per annotation (README, "Using the library", has the
 * callgrind counts).  The lock-word and waiter-word exemptions have no TSan
 * counterpart: TSan does not see an uninstrumented library's accesses.
 *
 * A library built with TSan itself (-Db_sanitize=thread) gets none of the
 * TSan calls: there TSan models the __atomic builtins, and extra arcs would
 * hide an ordering bug of the library's own atomics.  It does not model
 * stand-alone fences, but the protocol's fences only order the Dekker pair
 * of O1 (a lost-wakeup property, not a data race), and every data access
 * the library makes is ordered by the lock or by the release/acquire pair
 * of O3, which TSan sees.
 */
#ifndef SWAIT_ANNOTATE_H
#define SWAIT_ANNOTATE_H

#ifndef SWAIT_ANNOTATE
#define SWAIT_ANNOTATE 0
#endif

#if SWAIT_ANNOTATE
#include <valgrind/helgrind.h>
#include <valgrind/drd.h>

#define swait_vg_happens_before(a)	ANNOTATE_HAPPENS_BEFORE(a)
#define swait_vg_happens_after(a)	ANNOTATE_HAPPENS_AFTER(a)
#define swait_ann_sync_word(a, n)					\
	do {								\
		VALGRIND_HG_DISABLE_CHECKING((a), (n));			\
		VALGRIND_DO_CLIENT_REQUEST_STMT(			\
			VG_USERREQ__DRD_START_SUPPRESSION,		\
			(a), (n), 0, 0, 0);				\
	} while (0)
/*
 * DRD ignores FORGET_ALL: its happens-before object would outlive the
 * waiter, and a pthread object later placed at that address is then
 * reported as "wrong type of synchronization object".  Cleaning the word's
 * memory deletes DRD's objects there (the word stays exempt), except on a
 * stack, where DRD deletes nothing unless run with --check-stack-var=yes:
 * tests/valgrind.supp covers the one such collision a correct program
 * meets by default, DRD's own pthread_create() wrapper, whose condvar
 * lives on the creator's stack.
 */
#define swait_ann_idle_word(a)						\
	do {								\
		ANNOTATE_HAPPENS_BEFORE_FORGET_ALL(a);			\
		VALGRIND_DO_CLIENT_REQUEST_STMT(			\
			VG_USERREQ__DRD_CLEAN_MEMORY,			\
			(a), sizeof(*(a)), 0, 0, 0);			\
		VALGRIND_DO_CLIENT_REQUEST_STMT(			\
			VG_USERREQ__DRD_START_SUPPRESSION,		\
			(a), sizeof(*(a)), 0, 0, 0);			\
	} while (0)
#else
#define swait_vg_happens_before(a)	((void)(a))
#define swait_vg_happens_after(a)	((void)(a))
#define swait_ann_sync_word(a, n)	((void)(a), (void)(n))
#define swait_ann_idle_word(a)		((void)(a))
#endif

/*
 * SWAIT_TSAN_HOOKS: 1 where the weak references work (GCC or Clang, ELF)
 * and the library is not itself built with TSan.
 */
#ifndef SWAIT_TSAN_HOOKS
#if defined(__SANITIZE_THREAD__)
#define SWAIT_TSAN_HOOKS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SWAIT_TSAN_HOOKS 0
#endif
#endif
#endif
#ifndef SWAIT_TSAN_HOOKS
#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__)
#define SWAIT_TSAN_HOOKS 1
#else
#define SWAIT_TSAN_HOOKS 0
#endif
#endif

#if SWAIT_TSAN_HOOKS
/*
 * The TSan runtime's interface (<sanitizer/tsan_interface.h>, which is
 * not installed everywhere, so declared here with its exact prototypes).
 * Weak and undefined in libswait.so: no DT_NEEDED, resolved by the
 * dynamic linker to the runtime a -fsanitize=thread program loads, and
 * null in every other program.  The branch on the address is the whole
 * native cost.
 */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

#define swait_tsan_acquire(a)						\
	do {								\
		if (__builtin_expect(__tsan_acquire != 0, 0))		\
			__tsan_acquire((void *)(a));			\
	} while (0)
#define swait_tsan_release(a)						\
	do {								\
		if (__builtin_expect(__tsan_release != 0, 0))		\
			__tsan_release((void *)(a));			\
	} while (0)
#else
#define swait_tsan_acquire(a)	((void)(a))
#define swait_tsan_release(a)	((void)(a))
#endif

/*
 * The arcs, for every tool at once.  Each is sent before the releasing
 * store and received after the acquiring load or CAS it annotates.
 */
#define swait_ann_happens_before(a)					\
	do {								\
		swait_vg_happens_before(a);				\
		swait_tsan_release(a);					\
	} while (0)
#define swait_ann_happens_after(a)					\
	do {								\
		swait_vg_happens_after(a);				\
		swait_tsan_acquire(a);					\
	} while (0)
#define swait_ann_lock_released(l)	swait_ann_happens_before(l)
#define swait_ann_lock_acquired(l)	swait_ann_happens_after(l)

#endif /* SWAIT_ANNOTATE_H */
