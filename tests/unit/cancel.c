// SPDX-License-Identifier: MIT
/*
 * cancel.c - pthread cancellation.  swait_sleep() and every wait that
 * sleeps are cancellation points; a cancelled waiter leaves the queue
 * intact: it is dequeued, and a wake_one that had selected it is passed on
 * to the next waiter.
 *
 * The pass-on case needs a waiter that is selected but has not slept yet.
 * The test parks it on a barrier right after swait_prepare():
 * pthread_barrier_wait() is not a cancellation point, so the cancel stays
 * pending until the waiter reaches swait_sleep().
 *
 * Each scenario runs in a forked child (tu_run_child): a cleanup handler
 * that goes wrong can crash the process, and that must fail one test with
 * the child's story, not end the suite.  The parent stays single-threaded,
 * so that fork() is clean (ThreadSanitizer refuses threads created after
 * a multi-threaded fork): the child arms the watchdog itself, and its
 * alarm is the backstop.
 */
#include <pthread.h>
#include <string.h>

#include "tu_unit.h"

enum cancel_kind {
	C_EVENT,
	C_EVENT_TIMEOUT,
	C_EVENT_INTERRUPTIBLE,
	C_SLEEP,
	C_SLEEP_DEADLINE,
	C_COMPLETION,
	C_COMPLETION_TIMEOUT,
	C_NKINDS,
};

static const char *const kind_name[C_NKINDS] = {
	"swait_event", "swait_event_timeout", "swait_event_interruptible",
	"swait_sleep", "swait_sleep with a deadline", "swait_completion_wait",
	"swait_completion_wait_timeout",
};

#define FAR_NS (30LL * 1000000000LL)
#define CHILD_SECONDS 60

struct victim {
	pthread_t thread;
	int kind;
	struct swait_head *head;
	struct swait_completion *comp;
	int tid;
	int result;
	int returned;
};

/* Static: a thread may still sleep on them if a check fails. */
static struct swait_head head;
static struct swait_completion comp;
static struct victim victims[2];

static void *victim_main(void *arg)
{
	struct victim *v = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl;
	int never = 0;
	int r = -1;

	TU_STORE(&v->tid, (int)tu_gettid());
	switch (v->kind) {
	case C_EVENT:
		swait_event(v->head, TU_LOAD(&never));
		r = 0;
		break;
	case C_EVENT_TIMEOUT:
		dl = tu_deadline(CLOCK_MONOTONIC, FAR_NS);
		r = swait_event_timeout(v->head, TU_LOAD(&never),
					CLOCK_MONOTONIC, &dl);
		break;
	case C_EVENT_INTERRUPTIBLE:
		r = swait_event_interruptible(v->head, TU_LOAD(&never));
		break;
	case C_SLEEP:
	case C_SLEEP_DEADLINE:
		dl = tu_deadline(CLOCK_REALTIME, FAR_NS);
		swait_prepare(v->head, &w);
		r = swait_sleep(v->head, &w, 0, CLOCK_REALTIME,
				v->kind == C_SLEEP ? NULL : &dl);
		swait_finish(v->head, &w);
		break;
	case C_COMPLETION:
		swait_completion_wait(v->comp);
		r = 0;
		break;
	case C_COMPLETION_TIMEOUT:
		dl = tu_deadline(CLOCK_REALTIME, FAR_NS);
		r = swait_completion_wait_timeout(v->comp, CLOCK_REALTIME,
						  &dl);
		break;
	}
	v->result = r;
	TU_STORE(&v->returned, 1);
	return NULL;
}

static struct swait_head *victim_head(const struct victim *v)
{
	return v->comp ? &v->comp->wait : v->head;
}

static void start_victim(struct victim *v, int kind)
{
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	if (kind == C_COMPLETION || kind == C_COMPLETION_TIMEOUT)
		v->comp = &comp;
	else
		v->head = &head;
	tu_check(pthread_create(&v->thread, NULL, victim_main, v) == 0);
	tu_check(tu_poll(TU_LOAD(&v->tid) != 0));
	tu_check(tu_wait_asleep((pid_t)TU_LOAD(&v->tid), victim_head(v)));
}

/* In the child: cancel a thread asleep in a wait of the given kind. */
static void cancel_sleeping(void *arg)
{
	struct victim *v = &victims[0];
	int kind = *(int *)arg;
	void *ret;

	tu_watchdog(kind_name[kind]);
	swait_head_init(&head);
	swait_completion_init(&comp);
	start_victim(v, kind);
	tu_check(pthread_cancel(v->thread) == 0);
	tu_check(pthread_join(v->thread, &ret) == 0);
	tu_check(ret == PTHREAD_CANCELED);
	tu_check(!TU_LOAD(&v->returned));
	/* Dequeued by the cleanup handler: nothing left on the head. */
	tu_check(!swait_active(victim_head(v)));
	tu_check(swait_head_destroy(victim_head(v)) == 0);
	if (v->comp) {
		/* The cancelled wait consumed nothing. */
		tu_check(!swait_completion_done(&comp));
		swait_complete(&comp);
		tu_check(swait_completion_try_wait(&comp));
	}
}

static void test_cancel_sleeping(void **state)
{
	struct tu_child res;
	int kind, failed = 0;

	(void)state;
	/* Every kind, so that the report says which ones fail. */
	for (kind = 0; kind < C_NKINDS; kind++) {
		assert_int_equal(tu_run_child(cancel_sleeping, &kind,
					      CHILD_SECONDS, &res), 0);
		failed += !tu_child_ok(&res, kind_name[kind]);
	}
	assert_int_equal(failed, 0);
}

/*
 * In the child: cancelling the first of two sleepers dequeues it, so the
 * next wake_one (or complete) goes to the second, still queued.
 */
static void cancel_keeps_queue(void *arg)
{
	struct victim *v1 = &victims[0], *v2 = &victims[1];
	int kind = *(int *)arg;
	void *ret;

	tu_watchdog(kind_name[kind]);
	swait_head_init(&head);
	swait_completion_init(&comp);
	start_victim(v1, kind);
	start_victim(v2, kind == C_COMPLETION ? C_COMPLETION_TIMEOUT
					      : C_SLEEP_DEADLINE);
	tu_check(pthread_cancel(v1->thread) == 0);
	tu_check(pthread_join(v1->thread, &ret) == 0);
	tu_check(ret == PTHREAD_CANCELED);
	tu_check(swait_active(victim_head(v2)));
	if (v2->comp)
		swait_complete(&comp);
	else
		swait_wake_one(&head);
	tu_check(pthread_join(v2->thread, &ret) == 0);
	tu_check(ret == NULL);
	tu_check(v2->result == 0);
	tu_check(swait_head_destroy(&head) == 0);
	tu_check(swait_head_destroy(&comp.wait) == 0);
}

static void test_cancel_keeps_queue(void **state)
{
	static int kinds[] = { C_EVENT, C_SLEEP, C_COMPLETION };
	struct tu_child res;
	int failed = 0;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		assert_int_equal(tu_run_child(cancel_keeps_queue,
					      &kinds[i],
					      CHILD_SECONDS, &res), 0);
		failed += !tu_child_ok(&res, kind_name[kinds[i]]);
	}
	assert_int_equal(failed, 0);
}

/* ---------------------------------------------------------- pass-on */

struct pass_on {
	pthread_barrier_t barrier;
	bool cancel;		/* cancel W1, else W1 just calls finish */
	pthread_t w1, w2;
	int w1_prepared, w1_returned, w1_result;
	int w2_tid, w2_prepared, w2_returned, w2_result;
};

static struct pass_on po;

static void *pass_w1_main(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int r = 0;

	(void)arg;
	swait_prepare(&head, &w);
	TU_STORE(&po.w1_prepared, 1);
	/* Not a cancellation point: a cancel stays pending across it. */
	pthread_barrier_wait(&po.barrier);
	if (po.cancel)
		r = swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, NULL);
	/* Selected but never slept on it: finish passes the wake on. */
	swait_finish(&head, &w);
	po.w1_result = r;
	TU_STORE(&po.w1_returned, 1);
	return NULL;
}

static void *pass_w2_main(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	int r;

	(void)arg;
	TU_STORE(&po.w2_tid, (int)tu_gettid());
	swait_prepare(&head, &w);
	TU_STORE(&po.w2_prepared, 1);
	r = swait_sleep(&head, &w, 0, CLOCK_MONOTONIC, NULL);
	swait_finish(&head, &w);
	po.w2_result = r;
	TU_STORE(&po.w2_returned, 1);
	return NULL;
}

/* In the child: W1 is selected before it sleeps, then leaves. */
static void pass_on(void *arg)
{
	void *ret;

	memset(&po, 0, sizeof(po));
	po.cancel = *(bool *)arg;
	tu_watchdog(po.cancel ? "cancel pass-on" : "finish pass-on");
	swait_head_init(&head);
	tu_check(pthread_barrier_init(&po.barrier, NULL, 2) == 0);

	tu_test_phase("queueing W1, then W2");
	tu_check(pthread_create(&po.w1, NULL, pass_w1_main, NULL) == 0);
	tu_check(tu_poll(TU_LOAD(&po.w1_prepared)));
	tu_check(pthread_create(&po.w2, NULL, pass_w2_main, NULL) == 0);
	tu_check(tu_poll(TU_LOAD(&po.w2_prepared)));
	tu_check(tu_wait_asleep((pid_t)TU_LOAD(&po.w2_tid), &head));

	tu_test_phase("wake_one selects W1, which has not slept");
	swait_wake_one(&head);
	tu_check(swait_active(&head));		/* W2 still queued */
	tu_check(!TU_LOAD(&po.w2_returned));
	if (po.cancel)
		tu_check(pthread_cancel(po.w1) == 0);
	pthread_barrier_wait(&po.barrier);

	tu_test_phase("W1 leaves; W2 must get the wake");
	tu_check(pthread_join(po.w1, &ret) == 0);
	if (po.cancel) {
		tu_check(ret == PTHREAD_CANCELED);
		tu_check(!TU_LOAD(&po.w1_returned));
	} else {
		tu_check(ret == NULL);
		tu_check(TU_LOAD(&po.w1_returned));
	}
	tu_check(tu_poll(TU_LOAD(&po.w2_returned)));	/* W2 was woken */
	tu_check(pthread_join(po.w2, NULL) == 0);
	tu_check(po.w2_result == 0);
	tu_check(!swait_active(&head));
	tu_check(swait_head_destroy(&head) == 0);
	pthread_barrier_destroy(&po.barrier);
}

static void test_cancel_passes_wake_on(void **state)
{
	struct tu_child res;
	bool cancel = true;

	(void)state;
	assert_int_equal(tu_run_child(pass_on, &cancel, CHILD_SECONDS, &res),
			 0);
	assert_true(tu_child_ok(&res, "cancel pass-on"));
}

/*
 * In the child: a cancel that is pending when a queued, unwoken W1 calls
 * swait_sleep() is acted on there (the sleep opens its asynchronous
 * window, which acts on a pending cancel: no separate testcancel), and the
 * cleanup leaves the head empty.
 */
static void pending_before_sleep(void *arg)
{
	void *ret;

	(void)arg;
	memset(&po, 0, sizeof(po));
	po.cancel = true;
	tu_watchdog("cancel pending before the sleep");
	swait_head_init(&head);
	tu_check(pthread_barrier_init(&po.barrier, NULL, 2) == 0);

	tu_test_phase("W1 queued, a cancel pending, then it sleeps");
	tu_check(pthread_create(&po.w1, NULL, pass_w1_main, NULL) == 0);
	tu_check(tu_poll(TU_LOAD(&po.w1_prepared)));
	tu_check(pthread_cancel(po.w1) == 0);
	pthread_barrier_wait(&po.barrier);
	tu_check(pthread_join(po.w1, &ret) == 0);
	tu_check(ret == PTHREAD_CANCELED);
	tu_check(!TU_LOAD(&po.w1_returned));
	tu_check(!swait_active(&head));
	tu_check(swait_head_destroy(&head) == 0);
	pthread_barrier_destroy(&po.barrier);
}

static void test_cancel_pending_before_sleep(void **state)
{
	struct tu_child res;

	(void)state;
	assert_int_equal(tu_run_child(pending_before_sleep, NULL,
				      CHILD_SECONDS, &res), 0);
	assert_true(tu_child_ok(&res, "cancel pending before the sleep"));
}

static void test_finish_passes_wake_on(void **state)
{
	struct tu_child res;
	bool cancel = false;

	(void)state;
	assert_int_equal(tu_run_child(pass_on, &cancel, CHILD_SECONDS, &res),
			 0);
	assert_true(tu_child_ok(&res, "finish pass-on"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cancel_sleeping),
		cmocka_unit_test(test_cancel_keeps_queue),
		cmocka_unit_test(test_cancel_passes_wake_on),
		cmocka_unit_test(test_finish_passes_wake_on),
		cmocka_unit_test(test_cancel_pending_before_sleep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
