// SPDX-License-Identifier: MIT
/*
 * macros.c - the swait_event*() macros: a true condition costs nothing,
 * another thread can make it true, deadlines time out, bad input is
 * refused before the condition is looked at, and the last re-check after a
 * timeout turns "true exactly at the deadline" into success.
 *
 * Conditions that count their evaluations make the macros' loop visible:
 * with a deadline already past the sequence is fixed (check, prepare,
 * check, sleep -> ETIMEDOUT, finish, final check), so the tests can say on
 * which evaluation the condition turns true.
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

static const struct timespec past = { 0, 0 };

/* Counts its evaluations; true from the k-th on (never if k <= 0). */
static bool true_from(int *evals, int k)
{
	++*evals;
	return k > 0 && *evals >= k;
}

enum macro_kind {
	EV_PLAIN,
	EV_INTERRUPTIBLE,
	EV_TIMEOUT,
	EV_INTERRUPTIBLE_TIMEOUT,
	EV_TIMEOUT_NS,
	EV_GENERIC_REALTIME,
	EV_NKINDS,
};

static const char *const kind_name[EV_NKINDS] = {
	"swait_event", "swait_event_interruptible", "swait_event_timeout",
	"swait_event_interruptible_timeout", "swait_event_timeout_ns",
	"swait_event_generic(CLOCK_REALTIME)",
};

/*
 * Wait with the macro of the given kind; the timed kinds use a deadline
 * far enough away that only the condition can end the wait.
 */
#define wait_kind(kind, h, cond, far_ns)				\
	__extension__ ({						\
		struct timespec mdl_;					\
		int mr_ = -1;						\
		switch (kind) {						\
		case EV_PLAIN:						\
			swait_event(h, cond);				\
			mr_ = 0;					\
			break;						\
		case EV_INTERRUPTIBLE:					\
			mr_ = swait_event_interruptible(h, cond);	\
			break;						\
		case EV_TIMEOUT:					\
			mdl_ = tu_deadline(CLOCK_MONOTONIC, far_ns);	\
			mr_ = swait_event_timeout(h, cond,		\
					CLOCK_MONOTONIC, &mdl_);	\
			break;						\
		case EV_INTERRUPTIBLE_TIMEOUT:				\
			mdl_ = tu_deadline(CLOCK_MONOTONIC, far_ns);	\
			mr_ = swait_event_interruptible_timeout(h, cond, \
					CLOCK_MONOTONIC, &mdl_);	\
			break;						\
		case EV_TIMEOUT_NS:					\
			mr_ = swait_event_timeout_ns(h, cond, far_ns);	\
			break;						\
		default:						\
			mdl_ = tu_deadline(CLOCK_REALTIME, far_ns);	\
			mr_ = swait_event_generic(h, cond, 0,		\
					CLOCK_REALTIME, &mdl_);		\
			break;						\
		}							\
		mr_;							\
	})

#define FAR_NS (30LL * 1000000000LL)

static void test_true_cond_returns_at_once(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	int kind, evals, r;

	(void)state;
	tu_watchdog("true condition");
	for (kind = 0; kind < EV_NKINDS; kind++) {
		tu_test_phase(kind_name[kind]);
		evals = 0;
		r = wait_kind(kind, &h, true_from(&evals, 1), FAR_NS);
		assert_int_equal(r, 0);
		/* Evaluated once, before touching the head. */
		assert_int_equal(evals, 1);
		assert_false(swait_active(&h));
	}
	/* A true condition wins over a deadline already past. */
	evals = 0;
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 1),
					     CLOCK_MONOTONIC, &past), 0);
	assert_int_equal(evals, 1);
	evals = 0;
	assert_int_equal(swait_event_timeout_ns(&h, true_from(&evals, 1), 0),
			 0);
	assert_int_equal(evals, 1);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/* True on the check right after the first prepare: no sleep, head empty. */
static void test_true_after_prepare(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	int kind, evals, r;

	(void)state;
	tu_watchdog("condition true after prepare");
	for (kind = 0; kind < EV_NKINDS; kind++) {
		tu_test_phase(kind_name[kind]);
		evals = 0;
		r = wait_kind(kind, &h, true_from(&evals, 2), FAR_NS);
		assert_int_equal(r, 0);
		assert_int_equal(evals, 2);
		assert_false(swait_active(&h));
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

struct macro_thread {
	pthread_t thread;
	struct swait_head *head;
	int kind;
	int tid;
	int flag;
	int evals;
	int result;
	int done;
};

static void *macro_thread_main(void *arg)
{
	struct macro_thread *m = arg;
	int r;

	TU_STORE(&m->tid, (int)tu_gettid());
	r = wait_kind(m->kind, m->head,
		      (TU_ADD(&m->evals, 1), TU_LOAD(&m->flag)), FAR_NS);
	m->result = r;
	TU_STORE(&m->done, 1);
	return NULL;
}

static void start_macro_thread(struct macro_thread *m, struct swait_head *h,
			       int kind)
{
	memset(m, 0, sizeof(*m));
	m->head = h;
	m->kind = kind;
	assert_int_equal(pthread_create(&m->thread, NULL, macro_thread_main,
					m), 0);
	assert_true(tu_poll(TU_LOAD(&m->tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&m->tid), h));
}

static void test_cond_set_by_other_thread(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct macro_thread m;
	int kind;

	(void)state;
	tu_watchdog("condition set by another thread");
	for (kind = 0; kind < EV_NKINDS; kind++) {
		tu_test_phase(kind_name[kind]);
		start_macro_thread(&m, &h, kind);
		assert_false(TU_LOAD(&m.done));
		TU_STORE(&m.flag, 1);
		swait_wake_one(&h);
		assert_int_equal(pthread_join(m.thread, NULL), 0);
		assert_int_equal(m.result, 0);
		assert_false(swait_active(&h));
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * A wake with the condition still false: the macro consumes it, queues
 * again and goes back to sleep; it returns only when the condition holds.
 */
static void test_wake_without_cond_keeps_waiting(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct macro_thread m;
	int kind, i;

	(void)state;
	tu_watchdog("wake without condition");
	for (kind = 0; kind < EV_NKINDS; kind++) {
		tu_test_phase(kind_name[kind]);
		start_macro_thread(&m, &h, kind);
		for (i = 0; i < 3; i++) {
			if (i & 1)
				swait_wake_all(&h);
			else
				swait_wake_one(&h);
			/* The wake dequeued it: asleep again means requeued. */
			assert_true(tu_wait_asleep((pid_t)TU_LOAD(&m.tid),
						   &h));
			assert_false(TU_LOAD(&m.done));
		}
		/* Initial check, then one per prepare: 1 + 4 at least. */
		assert_true(TU_LOAD(&m.evals) >= 5);
		TU_STORE(&m.flag, 1);
		swait_wake_one(&h);
		assert_int_equal(pthread_join(m.thread, NULL), 0);
		assert_int_equal(m.result, 0);
		assert_false(swait_active(&h));
	}
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

static void test_timeouts(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct timespec dl;
	long long t0;
	int flag = 0;

	(void)state;
	tu_watchdog("macro timeouts");
	tu_test_phase("swait_event_timeout");
	dl = tu_deadline(CLOCK_MONOTONIC, 20 * 1000000LL);
	assert_int_equal(swait_event_timeout(&h, TU_LOAD(&flag),
					     CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	assert_true(tu_reached(CLOCK_MONOTONIC, &dl));
	assert_false(swait_active(&h));

	tu_test_phase("swait_event_timeout realtime");
	dl = tu_deadline(CLOCK_REALTIME, 20 * 1000000LL);
	assert_int_equal(swait_event_timeout(&h, TU_LOAD(&flag),
					     CLOCK_REALTIME, &dl), ETIMEDOUT);
	assert_true(tu_reached(CLOCK_REALTIME, &dl));
	assert_false(swait_active(&h));

	tu_test_phase("swait_event_interruptible_timeout");
	dl = tu_deadline(CLOCK_MONOTONIC, 20 * 1000000LL);
	assert_int_equal(swait_event_interruptible_timeout(&h,
				TU_LOAD(&flag), CLOCK_MONOTONIC, &dl),
			 ETIMEDOUT);
	assert_true(tu_reached(CLOCK_MONOTONIC, &dl));
	assert_false(swait_active(&h));

	tu_test_phase("swait_event_timeout_ns");
	t0 = tu_now_ns();
	assert_int_equal(swait_event_timeout_ns(&h, TU_LOAD(&flag),
						20 * 1000000LL), ETIMEDOUT);
	assert_true(tu_now_ns() - t0 >= 20 * 1000000LL);
	assert_false(swait_active(&h));

	tu_test_phase("past and negative deadlines");
	assert_int_equal(swait_event_timeout(&h, TU_LOAD(&flag),
					     CLOCK_MONOTONIC, &past),
			 ETIMEDOUT);
	dl.tv_sec = -5;
	dl.tv_nsec = 0;
	assert_int_equal(swait_event_timeout(&h, TU_LOAD(&flag),
					     CLOCK_MONOTONIC, &dl), ETIMEDOUT);
	assert_int_equal(swait_event_interruptible_timeout(&h,
				TU_LOAD(&flag), CLOCK_REALTIME, &dl),
			 ETIMEDOUT);
	assert_int_equal(swait_event_timeout_ns(&h, TU_LOAD(&flag), 0),
			 ETIMEDOUT);
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/* Bad input is refused before cond is evaluated, even a true cond. */
static void test_einval_before_cond(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct timespec neg_ns = { 1, -1 }, big_ns = { 1, 1000000000L };
	int evals = 0;

	(void)state;
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 1),
					     CLOCK_PROCESS_CPUTIME_ID, &past),
			 EINVAL);
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 1),
					     CLOCK_THREAD_CPUTIME_ID, NULL),
			 EINVAL);
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 1),
					     CLOCK_MONOTONIC, &neg_ns), EINVAL);
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 1),
					     CLOCK_REALTIME, &big_ns), EINVAL);
	assert_int_equal(swait_event_interruptible_timeout(&h,
				true_from(&evals, 1), CLOCK_BOOTTIME, &past),
			 EINVAL);
	assert_int_equal(swait_event_interruptible_timeout(&h,
				true_from(&evals, 1), CLOCK_MONOTONIC,
				&big_ns), EINVAL);
	assert_int_equal(swait_event_generic(&h, true_from(&evals, 1), 0,
					     CLOCK_PROCESS_CPUTIME_ID, NULL),
			 EINVAL);
	assert_int_equal(swait_event_timeout_ns(&h, true_from(&evals, 1),
						-1), EINVAL);
	assert_int_equal(evals, 0);
	assert_false(swait_active(&h));
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * Unknown flags are refused with the clock and deadline, before cond is
 * evaluated, and leave nothing queued; swait_sleep()'s own flags are
 * taken, SWAIT_NOSPIN among them (once refused here).
 */
static void test_generic_bad_flags(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	int evals = 0;

	(void)state;
	tu_watchdog("generic with bad flags");
	assert_int_equal(swait_event_generic(&h, true_from(&evals, 0), 0x80u,
					     CLOCK_MONOTONIC, NULL), EINVAL);
	assert_int_equal(evals, 0);
	assert_false(swait_active(&h));
	assert_int_equal(swait_event_generic(&h, true_from(&evals, 0),
					     SWAIT_NOSPIN, CLOCK_MONOTONIC,
					     &past), ETIMEDOUT);
	assert_int_equal(swait_event_generic(&h, true_from(&evals, 0),
					     SWAIT_NOSPIN | SWAIT_INTERRUPTIBLE,
					     CLOCK_MONOTONIC, &past), ETIMEDOUT);
	assert_false(swait_active(&h));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

/*
 * The final re-check: with a past deadline the evaluations are (1) before
 * the head is touched, (2) after prepare, then the sleep times out, and
 * (3) the last one after finish.  A cond that first holds on (3) became
 * true exactly at the timeout: the macro must return 0, not ETIMEDOUT.
 */
static void test_final_recheck(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct timespec neg = { -1, 0 };
	int evals;

	(void)state;
	tu_watchdog("final re-check");

	evals = 0;
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 3),
					     CLOCK_MONOTONIC, &past), 0);
	assert_int_equal(evals, 3);
	assert_false(swait_active(&h));

	evals = 0;
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 3),
					     CLOCK_REALTIME, &neg), 0);
	assert_int_equal(evals, 3);

	evals = 0;
	assert_int_equal(swait_event_interruptible_timeout(&h,
				true_from(&evals, 3), CLOCK_MONOTONIC, &past),
			 0);
	assert_int_equal(evals, 3);

	evals = 0;
	assert_int_equal(swait_event_timeout_ns(&h, true_from(&evals, 3), 0),
			 0);
	assert_int_equal(evals, 3);

	evals = 0;
	assert_int_equal(swait_event_generic(&h, true_from(&evals, 3),
					     SWAIT_INTERRUPTIBLE,
					     CLOCK_REALTIME, &past), 0);
	assert_int_equal(evals, 3);

	/* Never true: ETIMEDOUT, and the re-check still happened. */
	evals = 0;
	assert_int_equal(swait_event_timeout(&h, true_from(&evals, 0),
					     CLOCK_MONOTONIC, &past),
			 ETIMEDOUT);
	assert_int_equal(evals, 3);
	assert_false(swait_active(&h));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

struct at_deadline {
	long long deadline_ns;
	int evals;
	int true_evals;
};

/* True once the deadline has passed: a condition "made true by time". */
static bool deadline_passed(struct at_deadline *a)
{
	a->evals++;
	if (tu_now_ns() < a->deadline_ns)
		return false;
	a->true_evals++;
	return true;
}

/* The same with a real sleep: the condition becomes true at the timeout. */
static void test_final_recheck_real_timeout(void **state)
{
	struct swait_head h = SWAIT_HEAD_INITIALIZER;
	struct at_deadline a = { 0, 0, 0 };
	struct timespec dl;

	(void)state;
	tu_watchdog("final re-check, real timeout");
	dl = tu_deadline(CLOCK_MONOTONIC, 20 * 1000000LL);
	a.deadline_ns = (long long)dl.tv_sec * 1000000000LL + dl.tv_nsec;
	assert_int_equal(swait_event_timeout(&h, deadline_passed(&a),
					     CLOCK_MONOTONIC, &dl), 0);
	assert_int_equal(a.true_evals, 1);
	assert_true(a.evals >= 2);
	assert_false(swait_active(&h));
	tu_watchdog_done();
	assert_int_equal(swait_head_destroy(&h), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_true_cond_returns_at_once),
		cmocka_unit_test(test_true_after_prepare),
		cmocka_unit_test(test_cond_set_by_other_thread),
		cmocka_unit_test(test_wake_without_cond_keeps_waiting),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_einval_before_cond),
		cmocka_unit_test(test_generic_bad_flags),
		cmocka_unit_test(test_final_recheck),
		cmocka_unit_test(test_final_recheck_real_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
