// SPDX-License-Identifier: MIT
/*
 * completion_any.c - swait_completion_wait_any(): completions among the
 * heads of a wait_any group (lib/completion.c, E1-E4).  One event of a
 * completion member is consumed exactly when the call reports that member,
 * none otherwise; an unreported event stays posted and its wake is passed
 * on; complete_all() ends every call at once.
 *
 * The single-thread cases order the wakes by hand: a wake between the
 * prepare and the call is what the call finds, and a past deadline makes
 * it a poll.  The threaded cases are the daemon's shutdown and a stress
 * loop whose accounting must come out exact.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "tu_unit.h"

static const struct timespec past = { 0, 0 };

/* heads[0]: work (ordinary); heads[1]: ev, counted events; heads[2]: stop. */
#define NH 3
#define EV_BIT (1u << 1)
#define STOP_BIT (1u << 2)
#define COMP_BITS (EV_BIT | STOP_BIT)

static struct swait_head work;
static struct swait_completion ev, stop;
static struct swait_head *heads[NH] = { &work, &ev.wait, &stop.wait };
static struct swait_waiter w[NH];

static void reset(void)
{
	swait_head_init(&work);
	swait_completion_init(&ev);
	swait_completion_init(&stop);
	for (int i = 0; i < NH; i++)
		swait_waiter_init(&w[i]);
}

static int poll_any(unsigned *which)
{
	return swait_completion_wait_any(heads, NH, w, COMP_BITS, 0,
					 CLOCK_MONOTONIC, &past, which);
}

static void all_destroyable(void)
{
	assert_int_equal(swait_head_destroy(&work), 0);
	assert_int_equal(swait_head_destroy(&ev.wait), 0);
	assert_int_equal(swait_head_destroy(&stop.wait), 0);
}

/* EINVAL before anything is consumed, even with an event posted. */
static void test_bad_arguments(void **state)
{
	struct timespec bad = { 0, 1000000000L };
	unsigned which = 99;

	(void)state;
	reset();
	swait_complete(&ev);
	swait_prepare_any(heads, NH, w);
	/* A completion bit at or above n. */
	assert_int_equal(swait_completion_wait_any(heads, 2, w, 1u << 2, 0,
			CLOCK_MONOTONIC, &past, &which), EINVAL);
	assert_int_equal(swait_completion_wait_any(heads, 0, w, 0, 0,
			CLOCK_MONOTONIC, &past, &which), EINVAL);
	assert_int_equal(swait_completion_wait_any(heads, SWAIT_ANY_MAX + 1,
			w, EV_BIT, 0, CLOCK_MONOTONIC, &past, &which), EINVAL);
	assert_int_equal(swait_completion_wait_any(heads, NH, w, COMP_BITS,
			0x80, CLOCK_MONOTONIC, &past, &which), EINVAL);
	assert_int_equal(swait_completion_wait_any(heads, NH, w, COMP_BITS,
			0, CLOCK_MONOTONIC, &bad, &which), EINVAL);
	assert_int_equal(swait_completion_wait_any(heads, NH, w, COMP_BITS,
			0, (clockid_t)77, &past, &which), EINVAL);
	assert_int_equal(which, 99);
	swait_finish_any(heads, NH, w);
	assert_true(swait_completion_try_wait(&ev));	/* still posted */
	assert_false(swait_completion_try_wait(&ev));
	all_destroyable();
}

/* Events posted before the wait: one consumed per call, then ETIMEDOUT. */
static void test_posted_events_one_per_call(void **state)
{
	unsigned which;

	(void)state;
	reset();
	for (int i = 0; i < 3; i++)
		swait_complete(&ev);
	for (int i = 0; i < 3; i++) {
		swait_prepare_any(heads, NH, w);
		which = 99;
		assert_int_equal(poll_any(&which), 0);
		assert_int_equal(which, 1);
	}
	swait_prepare_any(heads, NH, w);
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	swait_finish_any(heads, NH, w);
	assert_false(swait_completion_done(&ev));
	all_destroyable();
}

/* complete_all: done for ever, every call returns at once, nothing used. */
static void test_complete_all_returns_at_once(void **state)
{
	unsigned which;

	(void)state;
	reset();
	tu_watchdog("a done completion member ends the call at once");
	swait_complete_all(&stop);
	for (int i = 0; i < 4; i++) {
		swait_prepare_any(heads, NH, w);
		which = 99;
		/* No deadline: must not sleep. */
		assert_int_equal(swait_completion_wait_any(heads, NH, w,
				COMP_BITS, 0, CLOCK_MONOTONIC, NULL, &which),
				0);
		assert_int_equal(which, 2);
	}
	swait_finish_any(heads, NH, w);
	tu_watchdog_done();
	assert_true(swait_completion_done(&stop));
	all_destroyable();
}

/*
 * The group's completion node is woken with the work node while the group
 * sleeps: the call reports work (the lower index), so the event is not
 * consumed, and finish_any passes its wake to the completion's next
 * waiter (E3), who takes the event.  Both wakes come from a signal handler
 * on the sleeping thread itself (the two calls are async-signal-safe), so
 * both are in before the thread looks at its group word again.
 */
static struct {
	int tid;
	int result;
	unsigned which;
	int ev_done_after;	/* swait_completion_done(&ev) on return */
	int returned;
} un;

static void post_both(int sig)
{
	(void)sig;
	swait_complete(&ev);
	swait_wake_one(&work);
}

static void *unreported_main(void *arg)
{
	struct swait_waiter ws[NH];

	(void)arg;
	memset(ws, 0, sizeof(ws));
	TU_STORE(&un.tid, (int)tu_gettid());
	swait_prepare_any(heads, NH, ws);
	un.result = swait_completion_wait_any(heads, NH, ws, COMP_BITS, 0,
					      CLOCK_MONOTONIC, NULL, &un.which);
	un.ev_done_after = swait_completion_done(&ev);
	swait_finish_any(heads, NH, ws);
	TU_STORE(&un.returned, 1);
	return NULL;
}

static void test_unreported_event_passed_on(void **state)
{
	struct swait_waiter single = SWAIT_WAITER_INITIALIZER;
	struct sigaction old;
	pthread_t t;

	(void)state;
	reset();
	memset(&un, 0, sizeof(un));
	tu_watchdog("an unreported completion event stays and is passed on");
	assert_int_equal(tu_signal_handler(SIGUSR1, post_both, 0, &old), 0);
	assert_int_equal(pthread_create(&t, NULL, unreported_main, NULL), 0);
	assert_true(tu_poll(TU_LOAD(&un.tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&un.tid), &ev.wait));
	swait_prepare(&ev.wait, &single);	/* behind the group's node */
	assert_int_equal(pthread_kill(t, SIGUSR1), 0);
	assert_true(tu_poll(TU_LOAD(&un.returned)));
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
	assert_int_equal(un.result, 0);
	assert_int_equal(un.which, 0);		/* work: the lower index */
	assert_true(un.ev_done_after);		/* not consumed */
	/* Passed on: the single waiter was woken, and the event is there. */
	assert_int_equal(swait_sleep(&ev.wait, &single, 0, CLOCK_MONOTONIC,
				     &past), 0);
	assert_true(swait_completion_try_wait(&ev));
	swait_finish(&ev.wait, &single);
	assert_false(swait_completion_try_wait(&ev));
	tu_watchdog_done();
	all_destroyable();
}

/*
 * The reported wake's event was taken by another consumer first: the call
 * returns 0 with *which == n and consumes nothing (E2); the next prepare
 * counts that wake consumed, so the next call just times out.
 */
static void test_event_taken_first_reports_n(void **state)
{
	unsigned which = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_complete(&ev);			/* flips the group's node */
	assert_true(swait_completion_try_wait(&ev));	/* another consumer */
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, NH);
	swait_complete(&ev);	/* a second event: the node is off the list */
	swait_prepare_any(heads, NH, w);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 1);		/* found by the check (E4) */
	swait_prepare_any(heads, NH, w);
	assert_int_equal(poll_any(&which), ETIMEDOUT);
	swait_finish_any(heads, NH, w);
	assert_false(swait_completion_done(&ev));
	all_destroyable();
}

/* An ordinary head's wake is reported as swait_wait_any() reports it. */
static void test_work_wake_reported(void **state)
{
	unsigned which = 99;

	(void)state;
	reset();
	swait_prepare_any(heads, NH, w);
	swait_wake_one(&work);
	assert_int_equal(poll_any(&which), 0);
	assert_int_equal(which, 0);
	swait_finish_any(heads, NH, w);
	all_destroyable();
}

/* ------------------------------------------------- the daemon's shutdown */

static struct {
	int tid;
	int prepared;
	int works;
	int result;
	unsigned which;
	int returned;
} dm;
static int queued_work;

static bool take_work(void)
{
	int v = TU_LOAD(&queued_work);

	while (v > 0)
		if (__atomic_compare_exchange_n(&queued_work, &v, v - 1, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return true;
	return false;
}

/* The pattern of swait.h: work head and shutdown completion, one wait. */
static void *daemon_main(void *arg)
{
	struct swait_head *hs[2] = { &work, &stop.wait };
	struct swait_waiter ws[2];
	unsigned which = 99;
	int r = 0;

	(void)arg;
	memset(ws, 0, sizeof(ws));
	TU_STORE(&dm.tid, (int)tu_gettid());
	for (;;) {
		swait_prepare_any(hs, 2, ws);
		TU_STORE(&dm.prepared, 1);
		if (take_work()) {
			TU_ADD(&dm.works, 1);
			continue;
		}
		r = swait_completion_wait_any(hs, 2, ws, 1u << 1, 0,
					      CLOCK_MONOTONIC, NULL, &which);
		if (r != 0 || which == 1)
			break;
	}
	swait_finish_any(hs, 2, ws);
	dm.result = r;
	dm.which = which;
	TU_STORE(&dm.returned, 1);
	return NULL;
}

static void test_shutdown_ends_the_wait(void **state)
{
	pthread_t t;

	(void)state;
	reset();
	memset(&dm, 0, sizeof(dm));
	TU_STORE(&queued_work, 0);
	tu_watchdog("complete_all ends a daemon's wait_any");
	assert_int_equal(pthread_create(&t, NULL, daemon_main, NULL), 0);
	assert_true(tu_poll(TU_LOAD(&dm.prepared)));
	for (int i = 1; i <= 3; i++) {
		assert_true(tu_wait_asleep((pid_t)TU_LOAD(&dm.tid), &work));
		TU_ADD(&queued_work, 1);
		swait_wake_one(&work);
		assert_true(tu_poll(TU_LOAD(&dm.works) == i));
	}
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&dm.tid), &stop.wait));
	assert_false(TU_LOAD(&dm.returned));
	swait_complete_all(&stop);
	assert_true(tu_poll(TU_LOAD(&dm.returned)));
	assert_int_equal(pthread_join(t, NULL), 0);
	tu_watchdog_done();
	assert_int_equal(dm.result, 0);
	assert_int_equal(dm.which, 1);
	assert_true(swait_completion_done(&stop));	/* done for ever */
	all_destroyable();
}

/* ------------------------------------------------------- exact accounting */

/*
 * Producers post NEV completes on ev and NWORK work items (count, then
 * wake_one on work).  Two daemons wait on {work, ev, stop}, a third on
 * {ev, stop} alone, so events race the work wakes and each other: each
 * event must be consumed exactly once (the reported counts sum to NEV and
 * ev is empty at the end), and none lost (the counts reach NEV while the
 * consumers sleep, before the stop).
 */
#define NCONS 3

struct consumer {
	pthread_t thread;
	int group;		/* 0: work, ev, stop; 1: ev, stop */
	long events;		/* reports of ev (each consumed one) */
	long works;
	long spurious;		/* *which == n */
	int result;
};

static long events_total;	/* all consumers' reports of ev */
static long works_total;

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct swait_head *hs[3] = { &work, &ev.wait, &stop.wait };
	struct swait_head *const *h = c->group ? hs + 1 : hs;
	unsigned n = c->group ? 2 : 3;
	unsigned evi = c->group ? 0 : 1, comps = c->group ? 3u : 6u;
	struct swait_waiter ws[3];
	unsigned which;
	int r = 0;

	memset(ws, 0, sizeof(ws));
	for (;;) {
		swait_prepare_any(h, n, ws);
		if (!c->group && take_work()) {
			c->works++;
			TU_ADD(&works_total, 1);
			continue;
		}
		r = swait_completion_wait_any(h, n, ws, comps, 0,
					      CLOCK_MONOTONIC, NULL, &which);
		if (r != 0 || which == evi + 1)
			break;			/* stop */
		if (which == evi) {
			c->events++;
			TU_ADD(&events_total, 1);
		} else if (which == n) {
			c->spurious++;
		}
	}
	swait_finish_any(h, n, ws);
	c->result = r;
	return NULL;
}

struct producer {
	pthread_t thread;
	long n;
	bool is_work;
};

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	for (long i = 0; i < p->n; i++) {
		if (p->is_work) {
			TU_ADD(&queued_work, 1);
			swait_wake_one(&work);
		} else {
			swait_complete(&ev);
		}
		if ((i & 63) == 0)
			sched_yield();
	}
	return NULL;
}

static void test_stress_exact_accounting(void **state)
{
	long nev = tu_scale(100000), nwork = tu_scale(100000);
	struct consumer cs[NCONS];
	struct producer ps[2] = { { 0, nev, false }, { 0, nwork, true } };
	long ev_sum = 0, work_sum = 0, spurious = 0;

	(void)state;
	reset();
	memset(cs, 0, sizeof(cs));
	TU_STORE(&queued_work, 0);
	TU_STORE(&events_total, 0);
	TU_STORE(&works_total, 0);
	tu_watchdog("completes racing work wakes in wait_any");
	for (int i = 0; i < NCONS; i++) {
		cs[i].group = i == NCONS - 1;
		assert_int_equal(pthread_create(&cs[i].thread, NULL,
						consumer_main, &cs[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&ps[i].thread, NULL,
						producer_main, &ps[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(ps[i].thread, NULL), 0);
	/* No event lost: all consumed while the stop is not yet posted. */
	tu_test_phase("every event and work item consumed before the stop");
	assert_true(tu_poll_ns(TU_LOAD(&events_total) == nev &&
			       TU_LOAD(&works_total) == nwork,
			       10 * 1e9));
	swait_complete_all(&stop);
	for (int i = 0; i < NCONS; i++) {
		assert_int_equal(pthread_join(cs[i].thread, NULL), 0);
		assert_int_equal(cs[i].result, 0);
		ev_sum += cs[i].events;
		work_sum += cs[i].works;
		spurious += cs[i].spurious;
	}
	tu_watchdog_done();
	/* Every complete consumed exactly once. */
	assert_int_equal(ev_sum, nev);
	assert_int_equal(work_sum, nwork);
	assert_false(swait_completion_try_wait(&ev));
	assert_int_equal(TU_LOAD(&queued_work), 0);
	print_message("%ld events, %ld work items, %ld spurious returns\n",
		      nev, nwork, spurious);
	all_destroyable();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_posted_events_one_per_call),
		cmocka_unit_test(test_complete_all_returns_at_once),
		cmocka_unit_test(test_unreported_event_passed_on),
		cmocka_unit_test(test_event_taken_first_reports_n),
		cmocka_unit_test(test_work_wake_reported),
		cmocka_unit_test(test_shutdown_ends_the_wait),
		cmocka_unit_test(test_stress_exact_accounting),
	};

	TU_SYNC_VAR(queued_work);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
