/* SPDX-License-Identifier: MIT */
/*
 * tu_stress.h - the stress tests' part of the helper layer, built on
 * testutil.h: a table of worker threads with the phase each one is in (so
 * that a watchdog report says who waits on what), a monitor loop that
 * re-arms the watchdog while the test makes progress, a token pool, and
 * the rounds that "leavers" park in.
 *
 * The watchdog is a stall detector, not a time budget: the main thread
 * re-arms it whenever the workers' counts move, so a soak run at
 * SWAIT_STRESS_SCALE=100 may run for as long as it needs, while a lost
 * wakeup (nothing moves any more) fails after TU_STALL_SECONDS.
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
#ifndef SWAIT_TU_STRESS_H
#define SWAIT_TU_STRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "swait.h"
#include "testutil.h"

/* Seconds without progress before the watchdog fires (times slowdown). */
#define TU_STALL_SECONDS 20.0

#define TU_MAX_THREADS 64

/*
 * One worker.  phase and count are written by the worker and read by the
 * watchdog's describe() and the monitor, so both are accessed atomically.
 */
struct tu_thread {
	const char *role;	/* "consumer", "waker", ... */
	int idx;
	const char *phase;	/* what it is doing now, a string literal */
	long count;		/* items consumed, rounds done, ... */
	long aux;		/* timeouts, EINTRs, ... (test-defined) */
	int exited;		/* the thread function has returned */
	pthread_t tid;
	pid_t ktid;		/* atomic, relaxed: its kernel id once it
				   runs, only printed (describe()) */
};

/*
 * Start a test: clear the thread table and arm the watchdog.  describe()
 * prints the table, then extra() (test-wide state such as the token count)
 * if it is not NULL.
 */
void tu_begin(const char *what, void (*extra)(FILE *out));

/* End a test: disarm the watchdog. */
void tu_end(void);

/* Take a table slot (main thread only). */
struct tu_thread *tu_slot(const char *role, int idx);

static inline void tu_phase(struct tu_thread *t, const char *phase)
{
	TU_STORE(&t->phase, phase);
}

/* A worker's last act: mark its slot exited (the monitor joins on this). */
void tu_thread_exit(struct tu_thread *t);

/* Note progress made outside any slot's count (e.g. by the main thread). */
void tu_progress(void);

/*
 * Run the monitor until done(arg) is true: sleep a little between checks,
 * re-arm the watchdog whenever any slot's count or tu_progress() moved.
 */
void tu_wait(bool (*done)(void *arg), void *arg);

/*
 * For a main thread that waits some other way (in a loop with a timeout):
 * re-arm the watchdog if there was progress since the last call.  Cheap;
 * call it often.
 */
void tu_tick(void);

/* tu_wait() until every slot taken so far (or slot t) has exited. */
void tu_wait_exited(void);
void tu_wait_slot_exited(struct tu_thread *t);

/* Create a thread for slot t; aborts on failure (never expected here). */
void tu_spawn(struct tu_thread *t, void *(*fn)(void *), void *arg);

/*
 * Make h an empty head: ordinary, or asymmetric (swait_head_init_asym,
 * which must succeed: the test fails if membarrier is missing).
 */
void tu_head_init(struct swait_head *h, bool asym);

/* A seed that differs between threads and runs, printed by tu_begin(). */
uint64_t tu_seed(int salt);

/*
 * A token pool: a waker posts a token then wakes one waiter; a waiter's
 * condition takes one with a CAS, so the condition consumes what it waits
 * for and each token is consumed exactly once.
 */
struct tu_tokens {
	long avail;	/* posted, not yet taken */
	long posted;	/* total posted */
	long taken;	/* total taken */
};

static inline void tu_token_post(struct tu_tokens *p, long n)
{
	(void)TU_ADD(&p->posted, n);
	/* Pairs with the CAS in tu_token_take(). */
	(void)TU_ADD(&p->avail, n);
}

static inline bool tu_token_take(struct tu_tokens *p)
{
	long v = TU_LOAD(&p->avail);

	while (v > 0) {
		tu_release(&p->avail);
		if (__atomic_compare_exchange_n(&p->avail, &v, v - 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			tu_acquire(&p->avail);
			(void)TU_ADD(&p->taken, 1);
			return true;
		}
	}
	return false;
}

/* Every posted token was taken (main thread, at a checkpoint). */
static inline bool tu_tokens_drained(void *arg)
{
	struct tu_tokens *p = arg;

	return TU_LOAD(&p->taken) == TU_LOAD(&p->posted);
}

void tu_tokens_describe(FILE *out, const char *name,
			const struct tu_tokens *p);

/*
 * Rounds, for tests that hunt a dropped wake (stress_leave.c,
 * stress_any.c).  The main thread starts round r; posters wait for it,
 * post, and count their round done in posters_done; "leavers" (threads
 * that stop waiting on a timeout, a signal, ...) park until the next round
 * starts, so that they cannot come back and rescue a token whose wake they
 * dropped.  At the end of a round the main thread pauses the leavers and
 * waits until all of them are parked; the test then waits until the steady
 * threads alone have taken every token.  Nothing else wakes them then: a
 * dropped wake strands its token while everyone sleeps, and the watchdog
 * names the sleepers.  One set of rounds per test.
 */
struct tu_rounds {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	long round;		/* written under lock; atomic */
	int pause;		/* atomic: leavers park when they can */
	int parked;		/* atomic: leavers parked this round */
	int done;		/* atomic: everybody leaves */
	long posters_done;	/* atomic: poster rounds done, cumulative */
};

void tu_rounds_init(struct tu_rounds *g);
void tu_rounds_destroy(struct tu_rounds *g);

/* Start round r: clear pause and parked, release posters and the parked. */
void tu_rounds_start(struct tu_rounds *g, long r);

/* A poster: wait until round r has started. */
void tu_rounds_wait(struct tu_rounds *g, long r);

/* A poster: round done. */
static inline void tu_rounds_posted(struct tu_rounds *g)
{
	(void)TU_ADD(&g->posters_done, 1);
}

/*
 * A leaver, off every head: stay away for the rest of the round (or until
 * done).  A retry would take a token whose wake it dropped, and hide the
 * bug.
 */
void tu_rounds_park(struct tu_rounds *g, struct tu_thread *t);

/*
 * Main thread: run round r up to its drain.  Start it, wait until the
 * nposters posters have done it, then pause the leavers (kick(), if not
 * NULL, wakes those that sleep without a deadline) and wait until all
 * nleavers are parked.  The caller then drains.
 */
void tu_rounds_run(struct tu_rounds *g, long r, long nposters, int nleavers,
		   void (*kick)(void));

/* After the last round: let every thread go (the caller wakes the heads). */
void tu_rounds_finish(struct tu_rounds *g, long rounds);

void tu_rounds_describe(FILE *out, const struct tu_rounds *g);

/*
 * Cancellation racing the wakes, one thread at most per round: a poster
 * cancels a worker (tu_strike) right after a wake that may have selected
 * it; the main thread joins it after the posters' round (tu_reap) and
 * starts its replacement only after the drain (tu_respawn), since a new
 * thread looks at the condition first and would take a token whose wake
 * was swallowed.  The workers' slots must have idx = their index in the
 * array passed to tu_reap().
 */
struct tu_strikes {
	int struck;		/* atomic: 1 + the slot cancelled this round */
	long cancels;		/* main thread only */
	long recancels;		/* main thread only: resent (tu_reap) */
	long cancels_waiting;	/* atomic: of threads inside a wait */
	long ticket_next;	/* atomic: order in which workers queue */
	long ticket[TU_MAX_THREADS];	/* atomic: 0 while not waiting */
};

/* Worker idx is about to queue (roughly its place in the FIFO) / is off. */
static inline void tu_ticket_take(struct tu_strikes *s, int idx)
{
	TU_STORE(&s->ticket[idx], TU_ADD(&s->ticket_next, 1));
}

static inline void tu_ticket_drop(struct tu_strikes *s, int idx)
{
	TU_STORE(&s->ticket[idx], 0);
}

/* Of workers [0, n), the one queued longest (the next wake_one's); or -1. */
int tu_ticket_oldest(struct tu_strikes *s, int n);

/* A poster: cancel t; waiting says it was inside a wait (for the log). */
void tu_strike(struct tu_strikes *s, struct tu_thread *t, bool waiting);

/* Main thread: join the thread cancelled this round, if any. */
struct tu_thread *tu_reap(struct tu_strikes *s,
			  struct tu_thread *const *workers);

/* Main thread: restart a reaped slot with fn; it keeps its count. */
void tu_respawn(struct tu_thread *t, void *(*fn)(void *));

/*
 * Frame reuse check for the use-after-return hunts: fill a stack buffer
 * that overlaps the frame a just-returned call used, give a late writer a
 * moment, and report whether the pattern survived.  Call it from the same
 * caller, at the same depth, as the call whose frame it should cover.
 */
bool tu_scribble_check(unsigned spins);

/*
 * The start of every stress program's main(): print the header of its
 * output ("SWAIT_STRESS_SCALE=..") and, if argv[1] is given, run only the
 * test of that name (stress/meson.build registers each test on its own).
 */
void tu_stress_main(int argc, char **argv);

#endif
