// SPDX-License-Identifier: MIT
/*
 * stress_any.c - threads waiting on several heads at once
 * (swait_prepare_any, swait_wait_any, swait_finish_any) against wake_one and
 * wake_all on each head, deadlines, ordinary single-head waiters on the same
 * head, and cancellation.
 *
 * What is checked is G3 and G5 in lib/swait.c: a wake on any head of a
 * group ends its sleep, and a swait_wake_one() that selected a node its
 * thread no longer needs (a wake on another head ended the wait first, the
 * deadline passed, the thread took other work or was cancelled) is passed
 * on by swait_finish_any(), never lost.
 *
 * All three tests run in rounds, as stress_leave.c does: posters post one
 * to three tokens per round, each with exactly one swait_wake_one().
 * "Leavers" are threads that may stop serving a head: when they leave they
 * park for the rest of the round, so they cannot come back and rescue a
 * token whose wake they dropped.  At the end of a round the main thread
 * pauses the leavers, waits until all of them are parked, then waits until
 * the steady threads alone have taken every token.  Nothing else wakes
 * them then: a dropped wake strands its token while everyone sleeps, and
 * the watchdog names the sleepers.  (Checked with a local copy of the
 * library whose swait_finish_any() drops the wakes it should pass on: each
 * test stalls within seconds; dropping only those left after a timeout is
 * caught by any_work_queues in most runs, as the window is narrow.)
 *
 * One rule of the group API shapes the workers: only the wake that
 * swait_wait_any() reported in which is consumed (prepare_any and
 * finish_any pass the others on), so a worker that takes one token and
 * leaves must take it from heads[which] when that head has one.  These
 * tests were written when prepare_any consumed every wake it re-queued,
 * and their leavers are stricter than the rule needs: they leave only
 * after a check that found no token, after a timeout, or after taking one
 * token in the check made right after swait_wait_any() returned.  The
 * prepare_any pass-on itself is checked by tests/unit/any.c and the model
 * (tests/model/group.pml, mutant group_prepare_consumes).
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

#include "tu_stress.h"

/* ------------------------------------------------------------ the rounds */

/* Shared by the three tests (one runs at a time); see tu_stress.h. */
static struct tu_rounds gt;

/* A deadline 10-100 us ahead, where a round's posts land. */
static void short_deadline(struct timespec *dl, uint64_t *rnd)
{
	(void)swait_deadline_after(dl, CLOCK_MONOTONIC,
				   10000 + (int64_t)(tu_rand(rnd) % 90000));
}

/*
 * Dawdle for 0-10 us between a wait's end and the swait_finish_any() that
 * leaves: a wake_one that selects one of our nodes in that window is the
 * one finish_any must pass on.
 */
static void dawdle(uint64_t *rnd)
{
	tu_spin((unsigned)(tu_rand(rnd) % 32768));
}

/* ------------------------------- the daemon: two work queues and a config */

/*
 * Workers wait on three heads, as examples/rt-daemon.c does: work queues A
 * and B, each with its own producer (post one token, swait_wake_one), and
 * C, where a config thread bumps a generation with swait_wake_all.  Workers
 * take at most one token per check, so that one wake is one token and a
 * dropped wake strands one.  Steady workers never leave; they sleep
 * without a deadline, or with a short one on some waits while the round
 * runs (a timeout keeps their places; the next prepare consumes a wake
 * that raced it).  Leavers always have a short deadline (that is also how
 * a pause reaches them) and leave on a timeout, after a config change with
 * no token, and sometimes after a token taken before a re-queue.
 */

enum { WQ_A, WQ_B, WQ_C, WQ_NHEADS };

#define WQ_WORKERS 4
#define WQ_STEADY 2	/* workers [0, WQ_STEADY) never leave */
#define WQ_POSTERS 3	/* a producer per queue, and the config thread */

static const char wq_phase_check[] =
	"checking A, B, config after swait_prepare_any";
static const char wq_phase_wait[] =
	"in swait_wait_any on A, B, C, no deadline";
static const char wq_phase_wait_timed[] =
	"in swait_wait_any on A, B, C, 10-100 us deadline";

struct wq_worker {
	struct tu_thread *t;	/* count: tokens taken; aux: timeouts */
	long seen;		/* atomic: the config generation last seen */
	/* The worker's own tallies, read after the join. */
	long took[2];
	long ended[WQ_NHEADS];	/* which head's wake ended a wait */
	long direct;		/* tokens taken before a re-queue */
	long parks;
};

static struct {
	struct swait_head head[WQ_NHEADS];
	struct tu_tokens tok[2];	/* the work on A and on B */
	long gen;			/* atomic: config generation */
	long rounds;
	long bad;			/* atomic: unexpected return values */
	struct wq_worker w[WQ_WORKERS];
	struct tu_thread *prod[2], *cfg;
} wq;

/* Take one token, from the preferred queue if it has one; -1 if none. */
static int wq_take(unsigned *pref)
{
	for (unsigned k = 0; k < 2; k++) {
		unsigned q = (*pref + k) % 2;

		if (tu_token_take(&wq.tok[q])) {
			*pref = q ^ 1;	/* alternate: serve both queues */
			return (int)q;
		}
	}
	return -1;
}

/* Record what a check found: a token from queue q (if >= 0), generation g. */
static void wq_note(struct wq_worker *wk, int q, long g, bool direct)
{
	if (q >= 0) {
		wk->took[q]++;
		wk->direct += direct;
		(void)TU_ADD(&wk->t->count, 1);
	}
	TU_STORE(&wk->seen, g);
}

static void wq_park(struct wq_worker *wk)
{
	wk->parks++;
	tu_rounds_park(&gt, wk->t);
}

static void *wq_worker(void *arg)
{
	struct wq_worker *wk = arg;
	struct tu_thread *t = wk->t;
	struct swait_head *const heads[WQ_NHEADS] = {
		&wq.head[WQ_A], &wq.head[WQ_B], &wq.head[WQ_C],
	};
	struct swait_waiter w[WQ_NHEADS];
	bool leaver = t->idx >= WQ_STEADY;
	unsigned pref = (unsigned)t->idx % 2;
	uint64_t rnd = tu_seed(700 + t->idx);
	long seen = 0;

	memset(w, 0, sizeof(w));	/* all-zero: idle waiters */
	/* Deadlines to the microsecond (the default slack is 50 us). */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (;;) {
		struct timespec dl;
		unsigned which = WQ_NHEADS;
		bool timed;
		int q, err, done;
		long g;

		tu_phase(t, wq_phase_check);
		swait_prepare_any(heads, WQ_NHEADS, w);
		/* done first: whoever sees it sees the final generation. */
		done = TU_LOAD(&gt.done);
		q = wq_take(&pref);
		g = TU_LOAD(&wq.gen);
		if (q >= 0 || g != seen) {
			swait_finish_any(heads, WQ_NHEADS, w);
			wq_note(wk, q, g, false);
			seen = g;
			/*
			 * With a token taken, this prepare may have consumed
			 * a wake on A and one on B: check again before
			 * leaving (see the top of the file).
			 */
			if (leaver && q < 0 &&
			    (TU_LOAD(&gt.pause) || tu_rand(&rnd) % 2 == 0))
				wq_park(wk);
			else
				tu_spin((unsigned)(tu_rand(&rnd) % 256));
			continue;
		}
		if (done)
			break;
		if (leaver && TU_LOAD(&gt.pause)) {
			swait_finish_any(heads, WQ_NHEADS, w);
			wq_park(wk);
			continue;
		}
		/*
		 * Steady workers wait with a deadline only while the round
		 * runs: in the drain, a timeout and re-check would rescue a
		 * token whose wake was dropped.
		 */
		timed = leaver ||
			(!TU_LOAD(&gt.pause) && tu_rand(&rnd) % 4 == 0);
		if (timed)
			short_deadline(&dl, &rnd);
		tu_phase(t, timed ? wq_phase_wait_timed : wq_phase_wait);
		err = swait_wait_any(heads, WQ_NHEADS, w, 0, CLOCK_MONOTONIC,
				     timed ? &dl : NULL, &which);
		if (err == ETIMEDOUT) {
			(void)TU_ADD(&t->aux, 1);
			if (leaver) {
				/*
				 * Gone without another look: a wake that
				 * selected a node since the deadline is
				 * swait_finish_any()'s to pass on.
				 */
				dawdle(&rnd);
				swait_finish_any(heads, WQ_NHEADS, w);
				wq_park(wk);
			}
			continue;	/* steady: prepare keeps our places */
		}
		if (err != 0 || which >= WQ_NHEADS) {
			(void)TU_ADD(&wq.bad, 1);
			continue;
		}
		wk->ended[which]++;
		if (tu_rand(&rnd) % 2 == 0)
			continue;	/* re-queue, then check */
		/*
		 * Check before re-queueing: only the wake reported in which
		 * is consumed, so one token covers it; finish passes on any
		 * other wake that selected one of our nodes meanwhile.
		 */
		q = wq_take(&pref);
		g = TU_LOAD(&wq.gen);
		if (q >= 0 || g != seen) {
			swait_finish_any(heads, WQ_NHEADS, w);
			wq_note(wk, q, g, true);
			seen = g;
			if (leaver &&
			    (TU_LOAD(&gt.pause) || tu_rand(&rnd) % 2 == 0))
				wq_park(wk);
		}
	}
	swait_finish_any(heads, WQ_NHEADS, w);
	tu_thread_exit(t);
	return NULL;
}

static void *wq_producer(void *arg)
{
	struct tu_thread *t = arg;
	int q = t->idx;
	uint64_t rnd = tu_seed(720 + q);

	for (long r = 1; r <= wq.rounds; r++) {
		long n;

		tu_phase(t, "waiting for the round to start");
		tu_rounds_wait(&gt, r);
		n = 1 + (long)(tu_rand(&rnd) % 2);
		tu_phase(t, "posting tokens (post, swait_wake_one)");
		for (long i = 0; i < n; i++) {
			/* Land among the leavers' deadlines. */
			tu_spin((unsigned)(tu_rand(&rnd) % 131072));
			tu_token_post(&wq.tok[q], 1);
			swait_wake_one(&wq.head[q]);
			(void)TU_ADD(&t->count, 1);
		}
		tu_rounds_posted(&gt);
	}
	tu_thread_exit(t);
	return NULL;
}

static void *wq_config(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(730);

	for (long r = 1; r <= wq.rounds; r++) {
		tu_phase(t, "waiting for the round to start");
		tu_rounds_wait(&gt, r);
		if (tu_rand(&rnd) % 2 == 0) {
			tu_phase(t, "bumping the generation, swait_wake_all");
			tu_spin((unsigned)(tu_rand(&rnd) % 131072));
			(void)TU_ADD(&wq.gen, 1);
			swait_wake_all(&wq.head[WQ_C]);
			(void)TU_ADD(&t->count, 1);
		}
		tu_rounds_posted(&gt);
	}
	tu_thread_exit(t);
	return NULL;
}

/*
 * The drain: both queues empty, and every steady worker has seen the
 * current generation (one that slept through C's wake_all stays behind).
 */
static bool wq_settled(void *arg)
{
	long g = TU_LOAD(&wq.gen);

	(void)arg;
	if (!tu_tokens_drained(&wq.tok[0]) || !tu_tokens_drained(&wq.tok[1]))
		return false;
	for (int i = 0; i < WQ_STEADY; i++)
		if (TU_LOAD(&wq.w[i].seen) != g)
			return false;
	return true;
}

static void wq_describe(FILE *out)
{
	tu_tokens_describe(out, "tokens A", &wq.tok[0]);
	tu_tokens_describe(out, "tokens B", &wq.tok[1]);
	fprintf(out, "config gen %ld; seen by workers:",
		__atomic_load_n(&wq.gen, __ATOMIC_RELAXED));
	for (int i = 0; i < WQ_WORKERS; i++)
		fprintf(out, " %ld", __atomic_load_n(&wq.w[i].seen,
						     __ATOMIC_RELAXED));
	fprintf(out, "\nswait_active A %d, B %d, C %d\n",
		swait_active(&wq.head[WQ_A]), swait_active(&wq.head[WQ_B]),
		swait_active(&wq.head[WQ_C]));
	tu_rounds_describe(out, &gt);
}

static void test_any_work_queues(void **state)
{
	long ended[WQ_NHEADS] = { 0 }, took[2] = { 0 };
	long timeouts = 0, direct = 0, parks = 0, gen;

	(void)state;
	memset(&wq, 0, sizeof(wq));
	tu_rounds_init(&gt);
	for (int i = 0; i < WQ_NHEADS; i++)
		swait_head_init(&wq.head[i]);
	wq.rounds = tu_scale(4000);

	tu_begin("daemon workers on two work queues and a config head",
		 wq_describe);
	for (int i = 0; i < WQ_WORKERS; i++) {
		struct wq_worker *wk = &wq.w[i];

		wk->t = tu_slot(i < WQ_STEADY ? "steady worker" : "leaver", i);
		tu_spawn(wk->t, wq_worker, wk);
	}
	for (int q = 0; q < 2; q++) {
		wq.prod[q] = tu_slot(q == 0 ? "producer A" : "producer B", q);
		tu_spawn(wq.prod[q], wq_producer, wq.prod[q]);
	}
	wq.cfg = tu_slot("config", 0);
	tu_spawn(wq.cfg, wq_config, wq.cfg);

	for (long r = 1; r <= wq.rounds; r++) {
		tu_rounds_run(&gt, r, WQ_POSTERS, WQ_WORKERS - WQ_STEADY, NULL);
		tu_wait(wq_settled, NULL);
	}
	tu_rounds_finish(&gt, wq.rounds);
	for (int i = 0; i < WQ_NHEADS; i++)
		swait_wake_all(&wq.head[i]);
	tu_wait_exited();
	tu_end();

	gen = TU_LOAD(&wq.gen);
	for (int i = 0; i < WQ_WORKERS; i++) {
		struct wq_worker *wk = &wq.w[i];

		for (int h = 0; h < WQ_NHEADS; h++)
			ended[h] += wk->ended[h];
		took[0] += wk->took[0];
		took[1] += wk->took[1];
		timeouts += TU_LOAD(&wk->t->aux);
		direct += wk->direct;
		parks += wk->parks;
	}
	print_message("work queues: %ld rounds, tokens A %ld B %ld, %ld "
		      "config gens; wait_any ended by A %ld, B %ld, C %ld, "
		      "ETIMEDOUT %ld; %ld tokens taken before a re-queue, "
		      "%ld parks\n", wq.rounds, took[0], took[1], gen,
		      ended[WQ_A], ended[WQ_B], ended[WQ_C], timeouts, direct,
		      parks);
	assert_int_equal(TU_LOAD(&wq.bad), 0);
	for (int q = 0; q < 2; q++) {
		assert_int_equal(TU_LOAD(&wq.tok[q].posted),
				 TU_LOAD(&wq.prod[q]->count));
		assert_int_equal(TU_LOAD(&wq.tok[q].taken),
				 TU_LOAD(&wq.tok[q].posted));
		assert_int_equal(TU_LOAD(&wq.tok[q].avail), 0);
		assert_int_equal(took[q], TU_LOAD(&wq.tok[q].posted));
	}
	assert_int_equal(gen, TU_LOAD(&wq.cfg->count));
	for (int i = 0; i < WQ_WORKERS; i++)
		assert_int_equal(TU_LOAD(&wq.w[i].seen), gen);
	assert_true(timeouts > 0);	/* the race was actually run */
	for (int i = 0; i < WQ_NHEADS; i++)
		assert_int_equal(swait_head_destroy(&wq.head[i]), 0);
	tu_rounds_destroy(&gt);
}

/* ----------------------------- grouped and single waiters on one head */

/*
 * Head H carries tokens (one swait_wake_one each).  Single waiters serve
 * only H, one with swait_event, one with the low-level calls (dawdling
 * while queued, so wakes select it before it sleeps); they are the steady
 * ones.  Grouped waiters wait on {H, O} or {O, H} and leave for the rest of
 * the round when a wake on O ends their wait, or a deadline passes.  The
 * poster wakes O (wake_one or wake_all) right before or after some of its
 * H wakes, so that H's wake_one often selects the H node of a grouped
 * waiter that is already on its way out: finish_any must pass it on, to a
 * single waiter or another group alike.  With O at index 0, which reports O
 * even when H's wake came too: the pass-on then is certain.
 */

#define MX_SINGLE 2		/* waiters [0, MX_SINGLE) are single */
#define MX_GROUPED 3
#define MX_WAITERS (MX_SINGLE + MX_GROUPED)

static struct {
	struct swait_head h, o;
	struct tu_tokens tok;
	long rounds;
	long kicks;		/* atomic: wakes on O */
	long bad;		/* atomic: unexpected return values */
	struct tu_thread *waiter[MX_WAITERS], *poster;
	/* Each grouped waiter's own tallies, read after the join. */
	long ended_h[MX_WAITERS], ended_o[MX_WAITERS], parks[MX_WAITERS];
} mx;

static bool mx_cond(bool *got)
{
	return (*got = tu_token_take(&mx.tok)) || TU_LOAD(&gt.done);
}

static void *mx_single(void *arg)
{
	struct tu_thread *t = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	uint64_t rnd = tu_seed(740 + t->idx);

	for (;;) {
		bool got = false;

		if (t->idx == 0) {
			tu_phase(t, "in swait_event on H, waiting for a token");
			swait_event(&mx.h, mx_cond(&got));
		} else {
			tu_phase(t, "in swait_prepare/sleep/finish on H "
				    "(dawdles while queued)");
			for (;;) {
				swait_prepare(&mx.h, &w);
				if (mx_cond(&got))
					break;
				tu_spin((unsigned)(tu_rand(&rnd) % 4096));
				(void)swait_sleep(&mx.h, &w, 0,
						  CLOCK_MONOTONIC, NULL);
			}
			swait_finish(&mx.h, &w);
		}
		if (!got)
			break;
		(void)TU_ADD(&t->count, 1);
		/*
		 * Work for 0-40 us, off the queue: the grouped waiters'
		 * nodes move ahead of ours on H, so that H's wakes select
		 * them too.
		 */
		tu_phase(t, "working on a token");
		tu_spin((unsigned)(tu_rand(&rnd) % 131072));
	}
	tu_thread_exit(t);
	return NULL;
}

static void mx_park(struct tu_thread *t)
{
	mx.parks[t->idx]++;
	tu_rounds_park(&gt, t);
}

static void *mx_grouped(void *arg)
{
	struct tu_thread *t = arg;
	unsigned hi = (unsigned)t->idx % 2, oi = hi ^ 1;
	struct swait_head *heads[2];
	struct swait_waiter w[2];
	uint64_t rnd = tu_seed(750 + t->idx);

	heads[hi] = &mx.h;
	heads[oi] = &mx.o;
	memset(w, 0, sizeof(w));
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (;;) {
		struct timespec dl;
		unsigned which = 2;
		bool timed;
		int err, done;

		tu_phase(t, "checking H after swait_prepare_any");
		swait_prepare_any(heads, 2, w);
		done = TU_LOAD(&gt.done);
		if (tu_token_take(&mx.tok)) {
			swait_finish_any(heads, 2, w);
			(void)TU_ADD(&t->count, 1);
			/*
			 * Only one of our nodes is on H, so the prepare
			 * consumed at most one token's wake: we may leave.
			 */
			if (tu_rand(&rnd) % 4 == 0)
				mx_park(t);
			continue;
		}
		if (done)
			break;
		if (TU_LOAD(&gt.pause)) {
			swait_finish_any(heads, 2, w);
			mx_park(t);
			continue;
		}
		timed = tu_rand(&rnd) % 4 == 0;
		if (timed)
			short_deadline(&dl, &rnd);
		tu_phase(t, timed ? "in swait_wait_any on H, O, 10-100 us "
				    "deadline" :
				    "in swait_wait_any on H, O, no deadline");
		err = swait_wait_any(heads, 2, w, 0, CLOCK_MONOTONIC,
				     timed ? &dl : NULL, &which);
		if (err == ETIMEDOUT) {
			(void)TU_ADD(&t->aux, 1);
			dawdle(&rnd);
			swait_finish_any(heads, 2, w);
			mx_park(t);
			continue;
		}
		if (err != 0 || which >= 2) {
			(void)TU_ADD(&mx.bad, 1);
			continue;
		}
		if (which == hi) {
			mx.ended_h[t->idx]++;
			continue;
		}
		/*
		 * Called away by O: leave H without looking at it.  A wake
		 * on H that selected our node meanwhile is passed on.
		 */
		mx.ended_o[t->idx]++;
		dawdle(&rnd);
		swait_finish_any(heads, 2, w);
		mx_park(t);
	}
	swait_finish_any(heads, 2, w);
	tu_thread_exit(t);
	return NULL;
}

static void mx_kick(struct tu_thread *t, bool all)
{
	(void)TU_ADD(&mx.kicks, 1);
	tu_phase(t, all ? "swait_wake_all on O" : "swait_wake_one on O");
	if (all)
		swait_wake_all(&mx.o);
	else
		swait_wake_one(&mx.o);
}

static void *mx_poster(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(760);

	for (long r = 1; r <= mx.rounds; r++) {
		long n;

		tu_phase(t, "waiting for the round to start");
		tu_rounds_wait(&gt, r);
		n = 1 + (long)(tu_rand(&rnd) % 3);
		for (long i = 0; i < n; i++) {
			unsigned kick = (unsigned)(tu_rand(&rnd) % 8);

			tu_spin((unsigned)(tu_rand(&rnd) % 65536));
			/* 0, 1: O first, so H's wake finds them leaving. */
			if (kick < 2)
				mx_kick(t, kick == 1);
			tu_phase(t, "posting a token (post, swait_wake_one H)");
			tu_token_post(&mx.tok, 1);
			swait_wake_one(&mx.h);
			(void)TU_ADD(&t->count, 1);
			if (kick == 2 || kick == 3)
				mx_kick(t, kick == 3);
		}
		tu_rounds_posted(&gt);
	}
	tu_thread_exit(t);
	return NULL;
}

/* The pause reaches grouped waiters asleep without a deadline through O. */
static void mx_pause_kick(void)
{
	swait_wake_all(&mx.o);
}

static void mx_describe(FILE *out)
{
	tu_tokens_describe(out, "tokens", &mx.tok);
	fprintf(out, "kicks on O %ld, swait_active H %d, O %d\n",
		__atomic_load_n(&mx.kicks, __ATOMIC_RELAXED),
		swait_active(&mx.h), swait_active(&mx.o));
	tu_rounds_describe(out, &gt);
}

static void test_any_mixed_with_single(void **state)
{
	long taken = 0, by_groups = 0, ended_h = 0, ended_o = 0;
	long timeouts = 0, parks = 0;

	(void)state;
	memset(&mx, 0, sizeof(mx));
	tu_rounds_init(&gt);
	swait_head_init(&mx.h);
	swait_head_init(&mx.o);
	mx.rounds = tu_scale(6000);

	tu_begin("grouped and single waiters on one head", mx_describe);
	for (int i = 0; i < MX_WAITERS; i++) {
		bool single = i < MX_SINGLE;

		mx.waiter[i] = tu_slot(single ? "single" :
				       i % 2 ? "grouped {O, H}" :
					       "grouped {H, O}", i);
		tu_spawn(mx.waiter[i], single ? mx_single : mx_grouped,
			 mx.waiter[i]);
	}
	mx.poster = tu_slot("poster", 0);
	tu_spawn(mx.poster, mx_poster, mx.poster);

	for (long r = 1; r <= mx.rounds; r++) {
		tu_rounds_run(&gt, r, 1, MX_GROUPED, mx_pause_kick);
		/* The check: the single waiters alone take every token. */
		tu_wait(tu_tokens_drained, &mx.tok);
	}
	tu_rounds_finish(&gt, mx.rounds);
	swait_wake_all(&mx.h);
	swait_wake_all(&mx.o);
	tu_wait_exited();
	tu_end();

	for (int i = 0; i < MX_WAITERS; i++) {
		taken += TU_LOAD(&mx.waiter[i]->count);
		if (i < MX_SINGLE)
			continue;
		by_groups += TU_LOAD(&mx.waiter[i]->count);
		timeouts += TU_LOAD(&mx.waiter[i]->aux);
		ended_h += mx.ended_h[i];
		ended_o += mx.ended_o[i];
		parks += mx.parks[i];
	}
	print_message("mixed: %ld rounds, %ld tokens (%ld by grouped "
		      "waiters), %ld kicks on O; grouped wait_any ended by H "
		      "%ld, O %ld, ETIMEDOUT %ld; %ld parks\n", mx.rounds,
		      TU_LOAD(&mx.tok.posted), by_groups, TU_LOAD(&mx.kicks),
		      ended_h, ended_o, timeouts, parks);
	assert_int_equal(TU_LOAD(&mx.bad), 0);
	assert_int_equal(TU_LOAD(&mx.tok.posted), TU_LOAD(&mx.poster->count));
	assert_int_equal(TU_LOAD(&mx.tok.taken), TU_LOAD(&mx.tok.posted));
	assert_int_equal(TU_LOAD(&mx.tok.avail), 0);
	assert_int_equal(taken, TU_LOAD(&mx.tok.posted));
	assert_true(ended_o > 0);	/* the race was actually run */
	assert_int_equal(swait_head_destroy(&mx.h), 0);
	assert_int_equal(swait_head_destroy(&mx.o), 0);
	tu_rounds_destroy(&gt);
}

/* -------------------------------------- cancellation inside wait_any */

/*
 * Workers wait on queues A and B.  Each round one token goes to A or B
 * with one swait_wake_one, and the poster then cancels the worker that
 * wake most likely selected (the one queued longest), while it is on its
 * way out of swait_wait_any().  Its cleanup (swait_finish_any, run by the
 * library's cancellation handler) must pass the wake on to a survivor.  The
 * replacement starts only after the drain: a new thread looks at the
 * queues first and would take a token whose wake was lost.
 */

#define CX_WORKERS 5

static const char cx_phase_wait[] = "in swait_wait_any on A, B";

static struct {
	struct swait_head head[2];
	struct tu_tokens tok[2];
	long rounds;
	long bad;			/* atomic: unexpected return values */
	struct tu_strikes sk;
	struct tu_thread *w[CX_WORKERS], *poster;
} cx;

/* Cleanup handler: cancelled in swait_wait_any, after the library's own. */
static void cx_cancelled(void *arg)
{
	struct tu_thread *t = arg;

	tu_phase(t, "cancelled");
	tu_ticket_drop(&cx.sk, t->idx);
	TU_STORE(&t->exited, 1);
}

/*
 * Serve A and B until done.  Its own function, so that its locals live
 * outside the frame of cx_worker()'s cleanup block (glibc's setjmp-based
 * cancellation would otherwise have the compiler warn about them).
 */
static void cx_serve(struct tu_thread *t, struct swait_head *const heads[],
		     struct swait_waiter w[])
{
	unsigned pref = (unsigned)t->idx % 2;
	uint64_t rnd = tu_seed(800 + t->idx + 16 * (int)t->aux);

	for (;;) {
		unsigned which = 2;
		int q = -1, done;

		/* Roughly our place in the queues, for the canceller. */
		tu_ticket_take(&cx.sk, t->idx);
		tu_phase(t, "checking A, B after swait_prepare_any");
		swait_prepare_any(heads, 2, w);
		done = TU_LOAD(&gt.done);
		/*
		 * No cancellation point from here to the next wait: a token
		 * taken is always counted, even by a thread cancelled later.
		 */
		for (unsigned k = 0; k < 2 && q < 0; k++)
			if (tu_token_take(&cx.tok[(pref + k) % 2]))
				q = (int)((pref + k) % 2);
		if (q >= 0) {
			tu_ticket_drop(&cx.sk, t->idx);
			swait_finish_any(heads, 2, w);
			(void)TU_ADD(&t->count, 1);
			pref = (unsigned)q ^ 1;
			tu_spin((unsigned)(tu_rand(&rnd) % 256));
			continue;
		}
		if (done)
			return;
		tu_phase(t, cx_phase_wait);
		if (swait_wait_any(heads, 2, w, 0, CLOCK_MONOTONIC, NULL,
				   &which) != 0 || which >= 2)
			(void)TU_ADD(&cx.bad, 1);
	}
}

static void *cx_worker(void *arg)
{
	struct tu_thread *t = arg;
	struct swait_head *const heads[2] = { &cx.head[0], &cx.head[1] };
	struct swait_waiter w[2];

	memset(w, 0, sizeof(w));
	pthread_cleanup_push(cx_cancelled, t);
	cx_serve(t, heads, w);
	pthread_cleanup_pop(0);
	tu_ticket_drop(&cx.sk, t->idx);
	swait_finish_any(heads, 2, w);
	tu_thread_exit(t);
	return NULL;
}

static void *cx_poster(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(810);

	for (long r = 1; r <= cx.rounds; r++) {
		unsigned q;
		bool strike;
		int oldest;

		tu_phase(t, "waiting for the round to start");
		tu_rounds_wait(&gt, r);
		tu_phase(t, "posting a token (post, swait_wake_one)");
		q = (unsigned)(tu_rand(&rnd) % 2);
		tu_spin((unsigned)(tu_rand(&rnd) % 65536));
		oldest = tu_ticket_oldest(&cx.sk, CX_WORKERS);
		strike = oldest >= 0 && tu_rand(&rnd) % 4 != 0;
		tu_token_post(&cx.tok[q], 1);
		swait_wake_one(&cx.head[q]);
		if (strike)
			tu_strike(&cx.sk, cx.w[oldest],
				  TU_LOAD(&cx.w[oldest]->phase) ==
				  cx_phase_wait);
		(void)TU_ADD(&t->count, 1);
		tu_rounds_posted(&gt);
	}
	tu_thread_exit(t);
	return NULL;
}

static bool cx_drained(void *arg)
{
	(void)arg;
	return tu_tokens_drained(&cx.tok[0]) && tu_tokens_drained(&cx.tok[1]);
}

static void cx_describe(FILE *out)
{
	tu_tokens_describe(out, "tokens A", &cx.tok[0]);
	tu_tokens_describe(out, "tokens B", &cx.tok[1]);
	fprintf(out, "struck %d, swait_active A %d, B %d\n",
		__atomic_load_n(&cx.sk.struck, __ATOMIC_RELAXED) - 1,
		swait_active(&cx.head[0]), swait_active(&cx.head[1]));
	tu_rounds_describe(out, &gt);
}

static void test_any_cancel(void **state)
{
	long taken = 0;

	/*
	 * Cancellation is a signal, and qemu-i386 moves a thread's TLS once
	 * a handler has run (TESTING.md): the lock depth is misread there.
	 */
	if (tu_emulator_shares_tls()) {
		puts("# skipped: qemu-i386 moves a thread's thread-local "
		     "storage once a signal handler has run");
		skip();
	}

	(void)state;
	memset(&cx, 0, sizeof(cx));
	tu_rounds_init(&gt);
	swait_head_init(&cx.head[0]);
	swait_head_init(&cx.head[1]);
	cx.rounds = tu_scale(4000);

	tu_begin("cancellation inside swait_wait_any racing wake_one",
		 cx_describe);
	for (int i = 0; i < CX_WORKERS; i++) {
		cx.w[i] = tu_slot("worker", i);
		tu_spawn(cx.w[i], cx_worker, cx.w[i]);
	}
	cx.poster = tu_slot("poster", 0);
	tu_spawn(cx.poster, cx_poster, cx.poster);

	for (long r = 1; r <= cx.rounds; r++) {
		struct tu_thread *dead;

		tu_rounds_run(&gt, r, 1, 0, NULL);
		dead = tu_reap(&cx.sk, cx.w);
		/* The check: the survivors take the token. */
		tu_wait(cx_drained, NULL);
		if (dead)
			tu_respawn(dead, cx_worker);
	}
	tu_rounds_finish(&gt, cx.rounds);
	swait_wake_all(&cx.head[0]);
	swait_wake_all(&cx.head[1]);
	tu_wait_exited();
	tu_end();

	for (int i = 0; i < CX_WORKERS; i++)
		taken += TU_LOAD(&cx.w[i]->count);
	print_message("cancel: %ld rounds, tokens A %ld B %ld, %ld cancels "
		      "(%ld while in swait_wait_any, %ld sent again under "
		      "qemu)\n", cx.rounds,
		      TU_LOAD(&cx.tok[0].posted), TU_LOAD(&cx.tok[1].posted),
		      cx.sk.cancels, TU_LOAD(&cx.sk.cancels_waiting),
		      cx.sk.recancels);
	assert_int_equal(TU_LOAD(&cx.bad), 0);
	assert_int_equal(TU_LOAD(&cx.tok[0].posted) +
			 TU_LOAD(&cx.tok[1].posted), cx.rounds);
	for (int q = 0; q < 2; q++) {
		assert_int_equal(TU_LOAD(&cx.tok[q].taken),
				 TU_LOAD(&cx.tok[q].posted));
		assert_int_equal(TU_LOAD(&cx.tok[q].avail), 0);
	}
	assert_int_equal(taken, cx.rounds);
	assert_true(cx.sk.cancels > 0);
	assert_int_equal(swait_head_destroy(&cx.head[0]), 0);
	assert_int_equal(swait_head_destroy(&cx.head[1]), 0);
	tu_rounds_destroy(&gt);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_any_work_queues),
		cmocka_unit_test(test_any_mixed_with_single),
		cmocka_unit_test(test_any_cancel),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-any", tests, NULL, NULL);
}
