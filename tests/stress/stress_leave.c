// SPDX-License-Identifier: MIT
/*
 * stress_leave.c - waiters that leave without sleeping on their wake: a
 * deadline passes (timeouts), a signal handler runs (interruptible waits),
 * or the thread is cancelled.  The library promises that a waiter selected
 * by swait_wake_one() which leaves that way passes the wake on (swait.h,
 * "No swallowed wakeups"); these tests check that no token is stranded.
 *
 * All three share one shape: many short rounds with one token and one
 * swait_wake_one() each (wakers take turns).  A steady waiter (plain
 * swait_event) takes every token it sees, so any later wake would rescue a
 * token whose wake was swallowed; with one wake per round, the drain at the
 * end of the round checks exactly that wake.  "Leavers" time out or are
 * interrupted, and then stay away for the rest of the round (parked), so
 * they cannot rescue the token either; half of them use the low-level calls
 * and give up without the macros' last look at the condition.  In the
 * cancellation test the waker cancels the waiter its wake most likely
 * selected (the one queued longest), right after the wake, and the
 * replacement starts only after the drain.  A stranded token stops the
 * drain and the watchdog names the sleepers.
 *
 * How sharp each is (checked with a library whose swait_finish() drops the
 * wake, a local experiment): the cancellation test catches it within
 * seconds.  The timeout and signal tests rarely hit the window (a wake that
 * selects a waiter between its timeout or EINTR and its swait_finish()),
 * so there they mostly check exact counts and that nothing hangs.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

#include "tu_stress.h"

enum lv_mode { LV_TIMEOUT, LV_SIGNAL, LV_CANCEL };

#define LV_MAX_WAITERS 8
#define LV_WAKERS 2

static const char lv_phase_steady[] =
	"in swait_event on head, waiting for a token";
static const char lv_phase_timed[] =
	"in swait_event_timeout_ns (5-40 us) on head, waiting for a token";
static const char lv_phase_intr[] =
	"in swait_event_interruptible on head, waiting for a token";
static const char lv_phase_steady_dawdle[] =
	"in swait_prepare/sleep (dawdles while queued) on head";
static const char lv_phase_timed_give_up[] =
	"in swait_prepare/sleep (5-40 us deadline, gives up) on head";
static const char lv_phase_intr_give_up[] =
	"in swait_prepare/sleep (interruptible, gives up) on head";

static struct {
	enum lv_mode mode;
	struct swait_head head;
	struct tu_tokens tok;
	int nwaiters, nleavers;	/* waiters [0, nleavers) are leavers */
	long rounds, per_round;
	unsigned waker_spin;	/* most iterations between two posts */
	struct tu_rounds g;	/* the wakers are its posters */
	int stop_signals;	/* atomic */
	long bad;		/* atomic: unexpected return values */
	struct tu_strikes sk;	/* the cancellation test's */
	int queued;		/* atomic: leavers that began a wait this round */
	struct tu_thread *waiter[LV_MAX_WAITERS], *waker[LV_WAKERS], *sig;
} lv;

/* Cleanup handler: the thread was cancelled (in swait_sleep). */
static void lv_cancelled(void *arg)
{
	struct tu_thread *t = arg;

	tu_phase(t, "cancelled");
	tu_ticket_drop(&lv.sk, t->idx);	/* no longer queued */
	TU_STORE(&t->exited, 1);
}

static bool lv_cond(bool *got)
{
	return (*got = tu_token_take(&lv.tok)) || TU_LOAD(&lv.g.done);
}

/*
 * A leaver that gives up: the low-level calls, and after a timeout or a
 * signal no last look at the condition (the macros take one, which would
 * rescue a token whose wake the library swallowed).  It dawdles while
 * queued, before it sleeps and before it finishes, so that wakes select it
 * in those windows: a cancellation acted on at the start of the sleep, or a
 * timeout or signal followed by a wake, then leaves with a wake that only
 * swait_finish() can pass on.  In the cancellation test it never gives up;
 * only the dawdling is used.
 */
static int lv_wait_give_up(bool *got, unsigned flags,
			   const struct timespec *deadline, uint64_t *rnd)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int err = 0;

	if (lv_cond(got))
		return 0;
	for (;;) {
		swait_prepare(&lv.head, &w);
		if (lv_cond(got))
			break;
		tu_spin((unsigned)(tu_rand(rnd) % 8192));
		err = swait_sleep(&lv.head, &w, flags, CLOCK_MONOTONIC,
				  deadline);
		if (err)
			break;
	}
	if (err)
		tu_spin((unsigned)(tu_rand(rnd) % 32768));
	swait_finish(&lv.head, &w);
	return err;
}

static void *lv_waiter(void *arg)
{
	struct tu_thread *t = arg;
	bool leaver = t->idx < lv.nleavers;
	bool give_up = t->idx % 2 == 1;
	uint64_t rnd = tu_seed(400 + t->idx + 16 * (int)t->aux);

	/*
	 * Deadlines to the microsecond: with the default 50 us timer slack a
	 * 5-40 us deadline would expire anywhere in 5-90 us.
	 */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	pthread_cleanup_push(lv_cancelled, t);
	for (;;) {
		bool got = false;
		int err = 0;
		long r0;	/* the round this wait began in */

		/* Roughly our place in the FIFO, for the canceller. */
		tu_ticket_take(&lv.sk, t->idx);
		r0 = TU_LOAD(&lv.g.round);

		if (leaver)
			(void)TU_ADD(&lv.queued, 1);
		if (!leaver && (lv.mode != LV_CANCEL || !give_up)) {
			tu_phase(t, lv_phase_steady);
			swait_event(&lv.head, lv_cond(&got));
		} else if (!leaver) {
			tu_phase(t, lv_phase_steady_dawdle);
			(void)lv_wait_give_up(&got, 0, NULL, &rnd);
		} else if (lv.mode == LV_TIMEOUT) {
			int64_t ns = 5000 + (int64_t)(tu_rand(&rnd) % 35000);
			struct timespec dl;

			if (give_up) {
				tu_phase(t, lv_phase_timed_give_up);
				swait_deadline_after(&dl, CLOCK_MONOTONIC, ns);
				err = lv_wait_give_up(&got, 0, &dl, &rnd);
			} else {
				tu_phase(t, lv_phase_timed);
				err = swait_event_timeout_ns(&lv.head,
						lv_cond(&got), ns);
			}
		} else if (give_up) {
			tu_phase(t, lv_phase_intr_give_up);
			err = lv_wait_give_up(&got, SWAIT_INTERRUPTIBLE, NULL,
					      &rnd);
		} else {
			tu_phase(t, lv_phase_intr);
			err = swait_event_interruptible(&lv.head,
							lv_cond(&got));
		}
		tu_ticket_drop(&lv.sk, t->idx);
		/*
		 * No cancellation point from here to the next wait: a token
		 * taken is always counted, even in a thread cancelled later.
		 */
		if (got) {
			if (err != 0)	/* cond true must return 0 */
				(void)TU_ADD(&lv.bad, 1);
			(void)TU_ADD(&t->count, 1);
			/*
			 * Let some leavers queue ahead of us, so that the
			 * next wake selects a leaver about to give up, with
			 * us behind it to pass the wake on to.
			 */
			if (lv.mode == LV_TIMEOUT) {
				int k = 1 + (int)(tu_rand(&rnd) %
						  (uint64_t)lv.nleavers);

				tu_phase(t, "letting leavers queue ahead");
				for (int n = 0; n < 200 &&
				     (TU_LOAD(&lv.g.round) == r0 ||
				      TU_LOAD(&lv.queued) < k); n++)
					sched_yield();
			}
		} else if ((err == ETIMEDOUT && lv.mode == LV_TIMEOUT) ||
			   (err == EINTR && lv.mode == LV_SIGNAL)) {
			/*
			 * Gone for the rest of the round: a retry would take
			 * a token whose wake we swallowed, and hide the bug.
			 */
			(void)TU_ADD(&t->aux, 1);
			tu_rounds_park(&lv.g, t);
			continue;
		} else if (err != 0) {
			(void)TU_ADD(&lv.bad, 1);
		} else {
			break;	/* the condition was true: done */
		}
		if (leaver && TU_LOAD(&lv.g.pause))
			tu_rounds_park(&lv.g, t);
	}
	pthread_cleanup_pop(0);
	tu_thread_exit(t);
	return NULL;
}

/* Cancel waiter i; the main thread reaps it (tu_reap). */
static void lv_strike(int i)
{
	struct tu_thread *t = lv.waiter[i];
	const char *ph = TU_LOAD(&t->phase);

	tu_strike(&lv.sk, t,
		  ph == lv_phase_steady || ph == lv_phase_steady_dawdle);
}

static void *lv_waker(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(500 + t->idx);

	for (long r = 1; r <= lv.rounds; r++) {
		tu_phase(t, "waiting for the round to start");
		tu_rounds_wait(&lv.g, r);
		/* One waker per round: a second wake would rescue the first. */
		if (r % LV_WAKERS == t->idx) {
			tu_phase(t, "posting tokens (post, swait_wake_one)");
			for (long i = 0; i < lv.per_round; i++) {
				int oldest;
				bool strike;

				/* Land at a random point of the round. */
				tu_spin((unsigned)(tu_rand(&rnd) %
						   lv.waker_spin));
				oldest = tu_ticket_oldest(&lv.sk, lv.nwaiters);
				strike = lv.mode == LV_CANCEL && oldest >= 0 &&
					 tu_rand(&rnd) % 4 != 0;

				tu_token_post(&lv.tok, 1);
				swait_wake_one(&lv.head);
				/*
				 * Cancel the one this wake most likely
				 * selected, while it is still on its way out
				 * of the futex: its cleanup must pass the wake
				 * on.
				 */
				if (strike)
					lv_strike(oldest);
				(void)TU_ADD(&t->count, 1);
			}
		}
		tu_rounds_posted(&lv.g);
	}
	tu_thread_exit(t);
	return NULL;
}

/* The signal storm: SIGUSR1 at random waiters as fast as it can. */
static void *lv_signaller(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(600);

	tu_phase(t, "sending SIGUSR1 to random waiters");
	while (!TU_LOAD(&lv.stop_signals)) {
		int i = (int)(tu_rand(&rnd) % (uint64_t)lv.nwaiters);

		/* Waiters exit only after stop_signals: the ids are live. */
		if (pthread_kill(lv.waiter[i]->tid, SIGUSR1) != 0)
			(void)TU_ADD(&lv.bad, 1);
		(void)TU_ADD(&t->count, 1);
		if (tu_rand(&rnd) % 4 == 0)
			sched_yield();
		else
			tu_spin((unsigned)(tu_rand(&rnd) % 2048));
	}
	tu_thread_exit(t);
	return NULL;
}

static void lv_on_signal(int sig)
{
	(void)sig;	/* Only to make the futex wait return EINTR. */
}

static void lv_describe(FILE *out)
{
	tu_tokens_describe(out, "tokens", &lv.tok);
	tu_rounds_describe(out, &lv.g);
	fprintf(out, "of %ld rounds, %d leavers, swait_active %d\n",
		lv.rounds, lv.nleavers, swait_active(&lv.head));
	if (lv.mode == LV_CANCEL)	/* cancels: racy, only a hint */
		fprintf(out, "cancelled this round: waiter slot %d (-1: none), "
			"%ld reaped before\n", TU_LOAD(&lv.sk.struck) - 1,
			lv.sk.cancels);
}

static void lv_run(enum lv_mode mode, const char *what, int nwaiters,
		   int nleavers, bool asym)
{
	struct sigaction old_sa;
	struct tu_thread *dead = NULL;
	long taken = 0, left = 0;

	memset(&lv, 0, sizeof(lv));
	tu_rounds_init(&lv.g);
	tu_head_init(&lv.head, asym);
	lv.mode = mode;
	lv.nwaiters = nwaiters;
	lv.nleavers = nleavers;
	/*
	 * Many rounds of one wake each.  A steady waiter takes every token it
	 * sees, so any later wake would rescue a token whose wake a leaver
	 * swallowed: the drain at the end of a round checks its one wake.
	 */
	lv.rounds = tu_scale(mode == LV_SIGNAL ? 6000 : 4000);
	lv.per_round = 1;
	/*
	 * The post lands 0-40 us into the round (0-10 us under the signal
	 * storm), where the leavers' 5-40 us deadlines expire.
	 */
	lv.waker_spin = mode == LV_SIGNAL ? 16384 : 65536;

	if (mode == LV_SIGNAL) {
		/* No SA_RESTART: waits see EINTR. */
		assert_int_equal(tu_signal_handler(SIGUSR1, lv_on_signal, 0,
						   &old_sa), 0);
	}

	tu_begin(what, lv_describe);
	for (int i = 0; i < nwaiters; i++) {
		lv.waiter[i] = tu_slot(i < nleavers ? "leaver" : "steady", i);
		tu_spawn(lv.waiter[i], lv_waiter, lv.waiter[i]);
	}
	for (int i = 0; i < LV_WAKERS; i++) {
		lv.waker[i] = tu_slot("waker", i);
		tu_spawn(lv.waker[i], lv_waker, lv.waker[i]);
	}
	if (mode == LV_SIGNAL) {
		lv.sig = tu_slot("signaller", 0);
		tu_spawn(lv.sig, lv_signaller, lv.sig);
	}

	for (long r = 1; r <= lv.rounds; r++) {
		/*
		 * Every leaver is parked (or there are none): nobody counts
		 * itself in queued until the round starts.
		 */
		TU_STORE(&lv.queued, 0);
		tu_rounds_run(&lv.g, r, LV_WAKERS, nleavers, NULL);
		if (mode == LV_CANCEL)
			dead = tu_reap(&lv.sk, lv.waiter);
		/* The check: the steady waiters alone take every token. */
		tu_wait(tu_tokens_drained, &lv.tok);
		if (dead) {
			tu_respawn(dead, lv_waiter);
			dead = NULL;
		}
	}

	if (mode == LV_SIGNAL) {
		TU_STORE(&lv.stop_signals, 1);
		tu_wait_slot_exited(lv.sig);
	}
	tu_rounds_finish(&lv.g, lv.rounds);
	swait_wake_all(&lv.head);
	tu_wait_exited();
	tu_end();
	if (mode == LV_SIGNAL)
		assert_int_equal(sigaction(SIGUSR1, &old_sa, NULL), 0);

	for (int i = 0; i < nwaiters; i++) {
		taken += TU_LOAD(&lv.waiter[i]->count);
		if (i < nleavers)
			left += TU_LOAD(&lv.waiter[i]->aux);
	}
	print_message("%s: %ld tokens, %ld early returns by leavers, "
		      "%ld cancels (%ld while in swait_event, %ld sent again "
		      "under qemu), %ld signals\n",
		      what, TU_LOAD(&lv.tok.posted), left, lv.sk.cancels,
		      TU_LOAD(&lv.sk.cancels_waiting), lv.sk.recancels,
		      lv.sig ? TU_LOAD(&lv.sig->count) : 0);
	assert_int_equal(TU_LOAD(&lv.bad), 0);
	assert_int_equal(TU_LOAD(&lv.tok.posted),
			 lv.rounds * lv.per_round);
	assert_int_equal(TU_LOAD(&lv.tok.taken), TU_LOAD(&lv.tok.posted));
	assert_int_equal(TU_LOAD(&lv.tok.avail), 0);
	assert_int_equal(taken, TU_LOAD(&lv.tok.posted));
	if (mode == LV_CANCEL)
		assert_true(lv.sk.cancels > 0);
	else
		assert_true(left > 0);	/* the race was actually run */
	assert_int_equal(swait_head_destroy(&lv.head), 0);
	tu_rounds_destroy(&lv.g);
}

static void test_timeout_race(void **state)
{
	(void)state;
	lv_run(LV_TIMEOUT, "timeouts racing wake_one", 7, 6, false);
}

static void test_signal_storm(void **state)
{
	(void)state;
	/*
	 * The library keeps a per-thread lock depth (lib/headlock.c L1),
	 * which qemu-i386 may read from another thread once a handler ran:
	 * a false "not async-signal-safe" abort there (TESTING.md).
	 */
	if (tu_emulator_shares_tls()) {
		puts("# skipped: qemu-i386 moves a thread's thread-local "
		     "storage once a signal handler has run");
		skip();
	}
	lv_run(LV_SIGNAL, "interruptible waits under a signal storm", 5, 4,
	       false);
}

static void test_cancel_race(void **state)
{
	(void)state;
	/* Cancellation is a signal: signal_storm's reason, above. */
	if (tu_emulator_shares_tls()) {
		puts("# skipped: qemu-i386 moves a thread's thread-local "
		     "storage once a signal handler has run");
		skip();
	}
	lv_run(LV_CANCEL, "cancellation racing wake_one", 6, 0, false);
}

/*
 * The three leaves again on an asymmetric head (lib/asym.c): every
 * prepare ends in membarrier(), every empty wake is <swait.h>'s inline
 * peek, and a wake still may not be swallowed by a waiter that leaves.
 * One test for the three, so that the suites' lists grow by one.
 */
static void test_leave_races_asym(void **state)
{
	(void)state;
	lv_run(LV_TIMEOUT, "timeouts racing wake_one, asymmetric head", 7, 6,
	       true);
	if (tu_emulator_shares_tls()) {	/* signal_storm's reason, above */
		puts("# signals and cancellation skipped: qemu-i386 moves a "
		     "thread's thread-local storage once a handler has run");
		return;
	}
	lv_run(LV_SIGNAL, "a signal storm, asymmetric head", 5, 4, true);
	lv_run(LV_CANCEL, "cancellation racing wake_one, asymmetric head", 6,
	       0, true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_race),
		cmocka_unit_test(test_signal_storm),
		cmocka_unit_test(test_cancel_race),
		cmocka_unit_test(test_leave_races_asym),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-leave", tests, NULL, NULL);
}
