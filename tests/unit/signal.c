// SPDX-License-Identifier: MIT
/*
 * signal.c - signals and waits.  With SWAIT_INTERRUPTIBLE (the
 * *_interruptible waits) a signal handler that runs during the sleep ends
 * it with EINTR; without it, signals never end a wait.
 *
 * The handler is installed without SA_RESTART, as the header asks.  A
 * signal interrupts only if it lands while the thread sleeps in the futex,
 * so the main thread first waits until /proc shows the waiter asleep, and
 * then keeps re-sending until the thread returns (the watchdog bounds it).
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "tu_unit.h"

static int sig_count;

static void on_signal(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sig_count, 1, __ATOMIC_RELAXED);
}

static int setup(void **state)
{
	(void)state;
	/* No SA_RESTART: waits must see EINTR. */
	return tu_signal_handler(SIGUSR1, on_signal, 0, NULL);
}

enum wait_kind {
	K_EVENT_INTR,
	K_EVENT_INTR_TIMEOUT,
	K_COMPLETION_INTR,
	K_SLEEP_INTR,
	K_SLEEP_INTR_DEADLINE,
	K_ANY_INTR,
	K_ANY_INTR_DEADLINE,
	K_COMPLETION_ANY_INTR,
	K_EVENT,
	K_EVENT_TIMEOUT,
	K_COMPLETION,
	K_COMPLETION_TIMEOUT,
	K_SLEEP,
	K_ANY,
	K_COMPLETION_ANY,
	K_NKINDS,
};

static const char *const kind_name[K_NKINDS] = {
	"swait_event_interruptible", "swait_event_interruptible_timeout",
	"swait_completion_wait_interruptible",
	"swait_sleep(SWAIT_INTERRUPTIBLE)",
	"swait_sleep(SWAIT_INTERRUPTIBLE, deadline)",
	"swait_wait_any(SWAIT_INTERRUPTIBLE)",
	"swait_wait_any(SWAIT_INTERRUPTIBLE, deadline)",
	"swait_completion_wait_any(SWAIT_INTERRUPTIBLE)",
	"swait_event", "swait_event_timeout", "swait_completion_wait",
	"swait_completion_wait_timeout", "swait_sleep(0)",
	"swait_wait_any(0)", "swait_completion_wait_any(0)",
};

static bool is_any(int kind)
{
	return kind == K_ANY_INTR || kind == K_ANY_INTR_DEADLINE ||
	       kind == K_COMPLETION_ANY_INTR || kind == K_ANY ||
	       kind == K_COMPLETION_ANY;
}

static bool on_completion(int kind)
{
	return kind == K_COMPLETION_INTR || kind == K_COMPLETION ||
	       kind == K_COMPLETION_TIMEOUT || kind == K_COMPLETION_ANY_INTR ||
	       kind == K_COMPLETION_ANY;
}

#define FAR_NS (30LL * 1000000000LL)

struct waiter {
	pthread_t thread;
	int kind;
	struct swait_head head;
	struct swait_head head2;	/* a group's second member */
	struct swait_completion comp;
	int tid;
	int flag;
	int result;
	int queued_after;	/* swait_active() right after the sleep */
	unsigned which;		/* a group wait's report */
	int done;
};

/*
 * A group of two: the waiter's head and, for the completion kinds, its
 * completion (member 1), else a second head.  The nodes stay queued on
 * both until swait_finish_any(), whatever the wait returned.
 */
static int wait_any_kind(struct waiter *t)
{
	struct swait_waiter ws[2] = { SWAIT_WAITER_INITIALIZER,
				      SWAIT_WAITER_INITIALIZER };
	struct swait_head *hs[2] = { &t->head, on_completion(t->kind) ?
				     &t->comp.wait : &t->head2 };
	unsigned flags = t->kind == K_ANY || t->kind == K_COMPLETION_ANY ?
			 0 : SWAIT_INTERRUPTIBLE;
	struct timespec dl = tu_deadline(CLOCK_MONOTONIC, FAR_NS);
	int r = 0;

	t->which = 99;
	do {
		swait_prepare_any(hs, 2, ws);
		if (TU_LOAD(&t->flag) || swait_completion_done(&t->comp))
			break;
		if (on_completion(t->kind))
			r = swait_completion_wait_any(hs, 2, ws, 1u << 1,
					flags, CLOCK_MONOTONIC,
					t->kind == K_ANY_INTR ? NULL : &dl,
					&t->which);
		else
			r = swait_wait_any(hs, 2, ws, flags, CLOCK_MONOTONIC,
					t->kind == K_ANY_INTR_DEADLINE ?
					&dl : NULL, &t->which);
		t->queued_after = swait_active(hs[0]) && swait_active(hs[1]);
	} while (r == 0 && !TU_LOAD(&t->flag) &&
		 t->which != 1);	/* the completion's event, taken */
	swait_finish_any(hs, 2, ws);
	return r;
}

static void *waiter_main(void *arg)
{
	struct waiter *t = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	struct timespec dl;
	int r = -1;

	TU_STORE(&t->tid, (int)tu_gettid());
	switch (t->kind) {
	case K_EVENT_INTR:
		r = swait_event_interruptible(&t->head, TU_LOAD(&t->flag));
		break;
	case K_EVENT_INTR_TIMEOUT:
		dl = tu_deadline(CLOCK_MONOTONIC, FAR_NS);
		r = swait_event_interruptible_timeout(&t->head,
				TU_LOAD(&t->flag), CLOCK_MONOTONIC, &dl);
		break;
	case K_COMPLETION_INTR:
		r = swait_completion_wait_interruptible(&t->comp);
		break;
	case K_ANY_INTR:
	case K_ANY_INTR_DEADLINE:
	case K_COMPLETION_ANY_INTR:
	case K_ANY:
	case K_COMPLETION_ANY:
		r = wait_any_kind(t);
		break;
	case K_SLEEP_INTR:
	case K_SLEEP_INTR_DEADLINE:
	case K_SLEEP:
		dl = tu_deadline(CLOCK_REALTIME, FAR_NS);
		swait_prepare(&t->head, &w);
		r = swait_sleep(&t->head, &w,
				t->kind == K_SLEEP ? 0 : SWAIT_INTERRUPTIBLE,
				CLOCK_REALTIME,
				t->kind == K_SLEEP_INTR ? NULL : &dl);
		t->queued_after = swait_active(&t->head);
		swait_finish(&t->head, &w);
		break;
	case K_EVENT:
		swait_event(&t->head, TU_LOAD(&t->flag));
		r = 0;
		break;
	case K_EVENT_TIMEOUT:
		dl = tu_deadline(CLOCK_MONOTONIC, FAR_NS);
		r = swait_event_timeout(&t->head, TU_LOAD(&t->flag),
					CLOCK_MONOTONIC, &dl);
		break;
	case K_COMPLETION:
		swait_completion_wait(&t->comp);
		r = 0;
		break;
	case K_COMPLETION_TIMEOUT:
		dl = tu_deadline(CLOCK_REALTIME, FAR_NS);
		r = swait_completion_wait_timeout(&t->comp, CLOCK_REALTIME,
						  &dl);
		break;
	}
	t->result = r;
	TU_STORE(&t->done, 1);
	return NULL;
}

static struct swait_head *head_of(struct waiter *t)
{
	/* A group's node 0 is on t->head, which is where /proc shows it. */
	return on_completion(t->kind) && !is_any(t->kind) ? &t->comp.wait
							   : &t->head;
}

static void destroy_all(struct waiter *t)
{
	assert_int_equal(swait_head_destroy(&t->head), 0);
	assert_int_equal(swait_head_destroy(&t->head2), 0);
	assert_int_equal(swait_head_destroy(&t->comp.wait), 0);
}

static void start_waiter(struct waiter *t, int kind)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	assert_int_equal(pthread_create(&t->thread, NULL, waiter_main, t), 0);
	assert_true(tu_poll(TU_LOAD(&t->tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&t->tid), head_of(t)));
}

/* Signal t until it returns; a signal only counts if it hits the sleep. */
static void signal_until_done(struct waiter *t)
{
	int i;

	for (i = 0; i < 1000 && !TU_LOAD(&t->done); i++) {
		assert_int_equal(pthread_kill(t->thread, SIGUSR1), 0);
		(void)tu_poll_ns(TU_LOAD(&t->done), 20 * 1000000LL);
	}
}

static void test_interruptible_eintr(void **state)
{
	struct waiter t;
	int kind;

	(void)state;
	tu_watchdog("interruptible waits end with EINTR");
	for (kind = K_EVENT_INTR; kind <= K_COMPLETION_ANY_INTR; kind++) {
		tu_test_phase(kind_name[kind]);
		start_waiter(&t, kind);
		signal_until_done(&t);
		assert_int_equal(pthread_join(t.thread, NULL), 0);
		assert_int_equal(t.result, EINTR);
		if (kind == K_SLEEP_INTR || kind == K_SLEEP_INTR_DEADLINE ||
		    is_any(kind))
			assert_true(t.queued_after);	/* until finish */
		if (is_any(kind))
			assert_int_equal(t.which, 99);	/* untouched */
		destroy_all(&t);
		if (kind == K_COMPLETION_INTR ||
		    kind == K_COMPLETION_ANY_INTR) {
			/* The interrupted wait consumed nothing. */
			assert_false(swait_completion_done(&t.comp));
			swait_complete(&t.comp);
			assert_true(swait_completion_try_wait(&t.comp));
		}
	}
	tu_watchdog_done();
}

/*
 * Without SWAIT_INTERRUPTIBLE a handler runs and the wait goes on: each
 * signal is seen to be handled and the thread seen asleep again, queued,
 * before the condition is finally made true.
 */
static void test_uninterruptible_ignores_signals(void **state)
{
	struct waiter t;
	int kind, i, base;

	(void)state;
	tu_watchdog("uninterruptible waits ignore signals");
	for (kind = K_EVENT; kind < K_NKINDS; kind++) {
		tu_test_phase(kind_name[kind]);
		start_waiter(&t, kind);
		for (i = 0; i < 3; i++) {
			base = __atomic_load_n(&sig_count, __ATOMIC_RELAXED);
			assert_int_equal(pthread_kill(t.thread, SIGUSR1), 0);
			assert_true(tu_poll(__atomic_load_n(&sig_count,
					__ATOMIC_RELAXED) != base));
			assert_true(tu_wait_asleep((pid_t)TU_LOAD(&t.tid),
						   head_of(&t)));
			assert_false(TU_LOAD(&t.done));
		}
		tu_test_phase("releasing");
		if (on_completion(kind)) {
			swait_complete(&t.comp);
		} else {
			TU_STORE(&t.flag, 1);
			swait_wake_one(&t.head);
		}
		assert_int_equal(pthread_join(t.thread, NULL), 0);
		assert_int_equal(t.result, 0);
		if (kind == K_COMPLETION_ANY)
			assert_int_equal(t.which, 1);
		else if (kind == K_ANY)
			assert_int_equal(t.which, 0);
		destroy_all(&t);
		if (on_completion(kind))
			assert_false(swait_completion_try_wait(&t.comp));
	}
	tu_watchdog_done();
}

struct sig_cond {
	pthread_t thread;
	struct swait_head head;
	int tid;
	int base;
	int result;
	int done;
};

static void *sig_cond_main(void *arg)
{
	struct sig_cond *s = arg;

	TU_STORE(&s->tid, (int)tu_gettid());
	s->result = swait_event_interruptible(&s->head,
			__atomic_load_n(&sig_count, __ATOMIC_RELAXED) !=
			s->base);
	TU_STORE(&s->done, 1);
	return NULL;
}

/*
 * The final re-check after EINTR: the handler itself makes the condition
 * true, so the sleep ends with EINTR and the macro must still return 0.
 */
static void test_eintr_final_recheck(void **state)
{
	struct sig_cond s;

	(void)state;
	tu_watchdog("final re-check after EINTR");
	memset(&s, 0, sizeof(s));
	s.base = __atomic_load_n(&sig_count, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&s.thread, NULL, sig_cond_main, &s),
			 0);
	assert_true(tu_poll(TU_LOAD(&s.tid) != 0));
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&s.tid), &s.head));
	assert_int_equal(pthread_kill(s.thread, SIGUSR1), 0);
	assert_int_equal(pthread_join(s.thread, NULL), 0);
	assert_int_equal(s.result, 0);
	assert_int_equal(swait_head_destroy(&s.head), 0);
	tu_watchdog_done();
}

/*
 * What EINTR means, exactly (swait_sleep(3)): a handler that runs while the
 * thread evaluates its condition, not asleep in the kernel, produces no
 * EINTR; the wait sleeps on until a wake.  The condition raise()s the
 * signal at its first evaluation, so the handler certainly runs there.
 */
struct early {
	pthread_t thread;
	struct swait_head head;
	int tid;
	int raised;
	int go;
	int result;
};

static bool raise_then_check(struct early *e)
{
	if (!e->raised) {
		e->raised = 1;
		raise(SIGUSR1);	/* the handler runs here, before any sleep */
	}
	return TU_LOAD(&e->go) != 0;
}

static void *early_main(void *arg)
{
	struct early *e = arg;

	TU_STORE(&e->tid, (int)tu_gettid());
	e->result = swait_event_interruptible(&e->head, raise_then_check(e));
	return NULL;
}

static void test_handler_before_sleep_is_no_eintr(void **state)
{
	struct early e;
	int before = __atomic_load_n(&sig_count, __ATOMIC_RELAXED);

	(void)state;
	tu_watchdog("a handler before the sleep gives no EINTR");
	memset(&e, 0, sizeof(e));
	assert_int_equal(pthread_create(&e.thread, NULL, early_main, &e), 0);
	assert_true(tu_poll(TU_LOAD(&e.tid) != 0));
	/* Asleep after its handler ran: the signal did not end the wait. */
	assert_true(tu_wait_asleep((pid_t)TU_LOAD(&e.tid), &e.head));
	assert_int_equal(__atomic_load_n(&sig_count, __ATOMIC_RELAXED),
			 before + 1);
	/* The documented way to interrupt it: make cond true, then wake. */
	TU_STORE(&e.go, 1);
	swait_wake_all(&e.head);
	assert_int_equal(pthread_join(e.thread, NULL), 0);
	assert_int_equal(e.result, 0);
	assert_int_equal(swait_head_destroy(&e.head), 0);
	tu_watchdog_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interruptible_eintr),
		cmocka_unit_test(test_uninterruptible_ignores_signals),
		cmocka_unit_test(test_eintr_final_recheck),
		cmocka_unit_test(test_handler_before_sleep_is_no_eintr),
	};

	TU_SYNC_VAR(sig_count);	/* atomics Helgrind cannot see */

	return cmocka_run_group_tests(tests, setup, NULL);
}
