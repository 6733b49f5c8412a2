/* SPDX-License-Identifier: MIT */
/*
 * stressutil.h - what the stress tests share: a table of worker threads with
 * the phase each one is in (so that a watchdog report says who waits on
 * what), a monitor loop that re-arms the watchdog while the test makes
 * progress, a token pool, and a random number generator.
 *
 * The watchdog is a stall detector, not a time budget: the main thread
 * re-arms it whenever the workers' counts move, so a soak run at
 * SWAIT_STRESS_SCALE=100 may run for as long as it needs, while a lost
 * wakeup (nothing moves any more) fails after ST_STALL_SECONDS.
 *
 * cmocka's assertions longjmp and are not thread-safe: workers only count,
 * and the main thread asserts after joining them.
 *
 * RUNNING THE STRESS SUITE
 *
 *	meson test -C build --suite stress			CI, scale 1
 *	SWAIT_STRESS_SCALE=100 meson test -C build --suite stress -t 0
 *								soak; -t 0: no
 *								meson timeout
 *	SWAIT_STRESS_SCALE=0.05 SWAIT_TEST_SLOWDOWN=50 meson test -C build \
 *		--suite stress --no-suite asan \
 *		--wrapper 'valgrind --tool=helgrind'	(or drd)
 *	build/tests/stress/stress-leave test_cancel_race	one test
 *
 * SWAIT_STRESS_SCALE multiplies every iteration count; the watchdog only
 * measures stalls, so long runs need no other setting.  SWAIT_TEST_SLOWDOWN
 * stretches the stall limit under Valgrind.  SWAIT_STRESS_SEED=<n> replays
 * a run's random choices (each test prints its seed); the interleavings
 * themselves do not replay.
 */
#ifndef SWAIT_STRESSUTIL_H
#define SWAIT_STRESSUTIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "swait.h"
#include "testutil.h"

/* Seconds without progress before the watchdog fires (times slowdown). */
#define ST_STALL_SECONDS 20.0

#define ST_MAX_THREADS 64

/*
 * One worker.  phase and count are written by the worker and read by the
 * watchdog's describe() and the monitor, so both are accessed atomically.
 */
struct st_thread {
	const char *role;	/* "consumer", "waker", ... */
	int idx;
	const char *phase;	/* what it is doing now, a string literal */
	long count;		/* items consumed, rounds done, ... */
	long aux;		/* timeouts, EINTRs, ... (test-defined) */
	int exited;		/* the thread function has returned */
	pthread_t tid;
};

/*
 * Start a test: clear the thread table and arm the watchdog.  describe()
 * prints the table, then extra() (test-wide state such as the token count)
 * if it is not NULL.
 */
void st_begin(const char *what, void (*extra)(FILE *out));

/* End a test: disarm the watchdog. */
void st_end(void);

/* Take a table slot (main thread only). */
struct st_thread *st_slot(const char *role, int idx);

/*
 * Atomic accesses to the tests' own shared words.  Helgrind and DRD do not
 * model atomics: each access marks the word as a synchronisation word
 * (tu_sync_var) and gives a release/acquire arc (tu_release, tu_acquire),
 * as tests/unit does, so that what the tools report is about the library.
 * All of these are no-ops natively, apart from the atomic itself.
 */
#define ST_LOAD(p)							\
	__extension__ ({						\
		__typeof__(*(p) + 0) st_v_;	/* unqualified */					\
		tu_sync_var((p), sizeof(*(p)));				\
		st_v_ = __atomic_load_n((p), __ATOMIC_ACQUIRE);		\
		tu_acquire(p);						\
		st_v_;							\
	})

#define ST_STORE(p, v)							\
	do {								\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		__atomic_store_n((p), (v), __ATOMIC_RELEASE);		\
	} while (0)

#define ST_XCHG(p, v)							\
	__extension__ ({						\
		__typeof__(*(p)) st_v_;					\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		st_v_ = __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL);	\
		tu_acquire(p);						\
		st_v_;							\
	})

/* Add n to *p; returns the new value. */
#define ST_ADD(p, n)							\
	__extension__ ({						\
		__typeof__(*(p)) st_v_;					\
		tu_sync_var((p), sizeof(*(p)));				\
		tu_release(p);						\
		st_v_ = __atomic_add_fetch((p), (n), __ATOMIC_ACQ_REL);	\
		tu_acquire(p);						\
		st_v_;							\
	})

static inline void st_phase(struct st_thread *t, const char *phase)
{
	ST_STORE(&t->phase, phase);
}

static inline void st_add(long *p, long n)
{
	(void)ST_ADD(p, n);
}

static inline long st_load(const long *p)
{
	return ST_LOAD(p);
}

/* A worker's last act: mark its slot exited (the monitor joins on this). */
void st_exit(struct st_thread *t);

/* Note progress made outside any slot's count (e.g. by the main thread). */
void st_progress(void);

/*
 * Run the monitor until done(arg) is true: sleep a little between checks,
 * re-arm the watchdog whenever any slot's count or st_progress() moved.
 */
void st_wait(bool (*done)(void *arg), void *arg);

/*
 * For a main thread that waits some other way (in a loop with a timeout):
 * re-arm the watchdog if there was progress since the last call.  Cheap;
 * call it often.
 */
void st_tick(void);

/* st_wait() until every slot taken so far (or slot t) has exited. */
void st_wait_exited(void);
void st_wait_slot_exited(struct st_thread *t);

/* Create a thread for slot t; aborts on failure (never expected here). */
void st_spawn(struct st_thread *t, void *(*fn)(void *), void *arg);

/* A xorshift generator; each thread keeps its own state. */
static inline uint64_t st_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* A seed that differs between threads and runs, printed by st_begin(). */
uint64_t st_seed(int salt);

/* Busy-wait for about n iterations: widens races without a system call. */
void st_spin(unsigned n);

/*
 * A token pool: a waker posts a token then wakes one waiter; a waiter's
 * condition takes one with a CAS, so the condition consumes what it waits
 * for and each token is consumed exactly once.
 */
struct st_tokens {
	long avail;	/* posted, not yet taken */
	long posted;	/* total posted */
	long taken;	/* total taken */
};

static inline void st_token_post(struct st_tokens *p, long n)
{
	st_add(&p->posted, n);
	/* Pairs with the CAS in st_token_take(). */
	st_add(&p->avail, n);
}

static inline bool st_token_take(struct st_tokens *p)
{
	long v = st_load(&p->avail);

	while (v > 0) {
		tu_release(&p->avail);
		if (__atomic_compare_exchange_n(&p->avail, &v, v - 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			tu_acquire(&p->avail);
			st_add(&p->taken, 1);
			return true;
		}
	}
	return false;
}

/* Every posted token was taken (main thread, at a checkpoint). */
static inline bool st_tokens_drained(void *arg)
{
	struct st_tokens *p = arg;

	return st_load(&p->taken) == st_load(&p->posted);
}

void st_tokens_describe(FILE *out, const char *name,
			const struct st_tokens *p);

/*
 * Frame reuse check for the use-after-return hunts: fill a stack buffer
 * that overlaps the frame a just-returned call used, give a late writer a
 * moment, and report whether the pattern survived.  Call it from the same
 * caller, at the same depth, as the call whose frame it should cover.
 */
bool st_scribble_check(unsigned spins);

/* "SWAIT_STRESS_SCALE=..": the header of every test's output. */
void st_print_config(void);

#endif
