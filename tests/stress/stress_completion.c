// SPDX-License-Identifier: MIT
/*
 * stress_completion.c - completions between real threads: counted
 * complete/wait, complete_all/reinit cycles, and on-stack handshakes where
 * the waiter reuses the completion's frame the moment its wait returns while
 * the completer's thread is still running (the kernel's on-stack completion
 * pattern; swait.h, "Lifetime").
 *
 * A completer that touched the completion after the waiter could see the
 * count (an unlock store, a walk of the wake_all batch) would write into a
 * frame that now holds other data: tu_scribble_check() fills that frame with
 * a pattern and checks it, and the ASan build of this file
 * (detect_stack_use_after_return) reports the write itself.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tu_stress.h"

/* Wait on c with the watchdog re-armed while other threads progress. */
static void cw_wait(struct swait_completion *c)
{
	struct timespec dl;

	for (;;) {
		swait_deadline_after(&dl, CLOCK_MONOTONIC, 50 * 1000000LL);
		if (swait_completion_wait_timeout(c, CLOCK_MONOTONIC, &dl) == 0)
			return;
		tu_tick();
	}
}

/* ------------------------------------------------------ counted complete */

#define CC_COMPLETERS 2
#define CC_WAITERS 3

static struct {
	struct swait_completion c;
	long per_completer;		/* per_waiter * 3 / 2 */
	long per_waiter;
	long posted;			/* atomic, counted before the post */
	long consumed;			/* atomic */
	long bad;			/* atomic */
	struct tu_thread *completer[CC_COMPLETERS], *waiter[CC_WAITERS];
} cc;

static void *cc_completer(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(800 + t->idx);
	long left = cc.per_completer, want;

	while (left > 0) {
		long burst = 1 + (long)(tu_rand(&rnd) % 8);

		if (burst > left)
			burst = left;
		tu_phase(t, "in swait_complete (a burst)");
		for (long i = 0; i < burst; i++) {
			(void)TU_ADD(&cc.posted, 1);
			swait_complete(&cc.c);
			(void)TU_ADD(&t->count, 1);
		}
		left -= burst;
		if (tu_rand(&rnd) % 4 == 0) {
			/*
			 * Checkpoint: the waiters take everything posted so
			 * far (their quotas add up to all posts, so they can).
			 */
			tu_phase(t, "at a checkpoint: waits for consumed >= "
				    "posted");
			want = TU_LOAD(&cc.posted);
			while (TU_LOAD(&cc.consumed) < want)
				sched_yield();
		}
	}
	tu_thread_exit(t);
	return NULL;
}

/* Waiters use all three waits; the result must always be 0. */
static void *cc_waiter(void *arg)
{
	struct tu_thread *t = arg;
	struct timespec dl;

	for (long i = 0; i < cc.per_waiter; i++) {
		switch (i % 3) {
		case 0:
			tu_phase(t, "in swait_completion_wait");
			swait_completion_wait(&cc.c);
			break;
		case 1:
			tu_phase(t, "in swait_completion_wait_timeout (60 s)");
			swait_deadline_after(&dl, CLOCK_MONOTONIC,
					     60 * 1000000000LL);
			if (swait_completion_wait_timeout(&cc.c,
					CLOCK_MONOTONIC, &dl) != 0)
				(void)TU_ADD(&cc.bad, 1);
			break;
		default:
			tu_phase(t, "in swait_completion_wait_interruptible");
			if (swait_completion_wait_interruptible(&cc.c) != 0)
				(void)TU_ADD(&cc.bad, 1);
			break;
		}
		(void)TU_ADD(&cc.consumed, 1);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

static void cc_describe(FILE *out)
{
	fprintf(out, "done %u, posted %ld, consumed %ld of %ld\n",
		__atomic_load_n(&cc.c.done, __ATOMIC_RELAXED),
		TU_LOAD(&cc.posted), TU_LOAD(&cc.consumed),
		CC_WAITERS * cc.per_waiter);
}

static void test_completion_count(void **state)
{
	(void)state;
	memset(&cc, 0, sizeof(cc));
	swait_completion_init(&cc.c);
	cc.per_waiter = 2 * tu_scale(80000);
	cc.per_completer = cc.per_waiter * CC_WAITERS / CC_COMPLETERS;

	tu_begin("completion count", cc_describe);
	for (int i = 0; i < CC_WAITERS; i++) {
		cc.waiter[i] = tu_slot("waiter", i);
		tu_spawn(cc.waiter[i], cc_waiter, cc.waiter[i]);
	}
	for (int i = 0; i < CC_COMPLETERS; i++) {
		cc.completer[i] = tu_slot("completer", i);
		tu_spawn(cc.completer[i], cc_completer, cc.completer[i]);
	}
	tu_wait_exited();
	tu_end();

	assert_int_equal(TU_LOAD(&cc.bad), 0);
	assert_int_equal(TU_LOAD(&cc.consumed), CC_WAITERS * cc.per_waiter);
	for (int i = 0; i < CC_COMPLETERS; i++)
		assert_int_equal(TU_LOAD(&cc.completer[i]->count),
				 cc.per_completer);
	/* Every post consumed, none left over, none consumed twice. */
	assert_false(swait_completion_done(&cc.c));
	assert_false(swait_completion_try_wait(&cc.c));
	assert_int_equal(swait_head_destroy(&cc.c.wait), 0);
}

/* ------------------------------------------ complete_all / reinit cycles */

#define CA_WAITERS 4

static struct {
	struct swait_completion go;	/* one post per waiter per round */
	struct swait_completion all;	/* complete_all'ed once per round */
	struct swait_completion fire;	/* tells the firer to complete_all */
	struct swait_completion ack;	/* one post per waiter per round */
	long rounds;
	long bad;			/* atomic */
	struct tu_thread *waiter[CA_WAITERS], *firer;
} ca;

static void *ca_waiter(void *arg)
{
	struct tu_thread *t = arg;
	struct timespec dl;

	for (long r = 0; r < ca.rounds; r++) {
		tu_phase(t, "in swait_completion_wait(go)");
		swait_completion_wait(&ca.go);
		if (t->idx % 2) {
			tu_phase(t, "in swait_completion_wait(all)");
			swait_completion_wait(&ca.all);
		} else {
			tu_phase(t, "in swait_completion_wait_timeout(all)");
			swait_deadline_after(&dl, CLOCK_MONOTONIC,
					     60 * 1000000000LL);
			if (swait_completion_wait_timeout(&ca.all,
					CLOCK_MONOTONIC, &dl) != 0)
				(void)TU_ADD(&ca.bad, 1);
		}
		/* complete_all: done for everybody, and consumes nothing. */
		if (!swait_completion_done(&ca.all) ||
		    !swait_completion_try_wait(&ca.all))
			(void)TU_ADD(&ca.bad, 1);
		(void)TU_ADD(&t->count, 1);
		tu_phase(t, "in swait_complete(ack)");
		swait_complete(&ca.ack);
	}
	tu_thread_exit(t);
	return NULL;
}

static void *ca_firer(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(900);

	for (long r = 0; r < ca.rounds; r++) {
		tu_phase(t, "in swait_completion_wait(fire)");
		swait_completion_wait(&ca.fire);
		/* Let some waiters get to sleep, and others not. */
		tu_spin((unsigned)(tu_rand(&rnd) % 20000));
		tu_phase(t, "in swait_complete_all(all)");
		swait_complete_all(&ca.all);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

static void ca_describe(FILE *out)
{
	fprintf(out, "done: go %u, all %u, fire %u, ack %u\n",
		__atomic_load_n(&ca.go.done, __ATOMIC_RELAXED),
		__atomic_load_n(&ca.all.done, __ATOMIC_RELAXED),
		__atomic_load_n(&ca.fire.done, __ATOMIC_RELAXED),
		__atomic_load_n(&ca.ack.done, __ATOMIC_RELAXED));
}

static void test_completion_all_reinit(void **state)
{
	(void)state;
	memset(&ca, 0, sizeof(ca));
	swait_completion_init(&ca.go);
	swait_completion_init(&ca.all);
	swait_completion_init(&ca.fire);
	swait_completion_init(&ca.ack);
	ca.rounds = tu_scale(30000);

	tu_begin("complete_all/reinit cycles", ca_describe);
	for (int i = 0; i < CA_WAITERS; i++) {
		ca.waiter[i] = tu_slot("waiter", i);
		tu_spawn(ca.waiter[i], ca_waiter, ca.waiter[i]);
	}
	ca.firer = tu_slot("firer", 0);
	tu_spawn(ca.firer, ca_firer, ca.firer);

	for (long r = 0; r < ca.rounds; r++) {
		/*
		 * Every waiter acked the last round and waits on go, and the
		 * firer's complete_all returned: nothing races with reinit.
		 */
		while (TU_LOAD(&ca.firer->count) < r) {
			sched_yield();
			tu_tick();
		}
		swait_completion_reinit(&ca.all);
		for (int i = 0; i < CA_WAITERS; i++)
			swait_complete(&ca.go);
		swait_complete(&ca.fire);
		for (int i = 0; i < CA_WAITERS; i++)
			cw_wait(&ca.ack);
		tu_progress();
	}
	tu_wait_exited();
	tu_end();

	assert_int_equal(TU_LOAD(&ca.bad), 0);
	for (int i = 0; i < CA_WAITERS; i++)
		assert_int_equal(TU_LOAD(&ca.waiter[i]->count), ca.rounds);
	assert_int_equal(TU_LOAD(&ca.firer->count), ca.rounds);
	assert_false(swait_completion_try_wait(&ca.go));
	assert_false(swait_completion_try_wait(&ca.fire));
	assert_false(swait_completion_try_wait(&ca.ack));
	assert_int_equal(swait_head_destroy(&ca.all.wait), 0);
	assert_int_equal(swait_head_destroy(&ca.ack.wait), 0);
}

/* -------------------------------------------------- on-stack handshakes */

/* What a waiter puts on its stack and hands to a completer. */
struct hs_req {
	struct swait_completion done;
	long id;
	long reply;		/* written by the completer before completing */
	int all;		/* complete with complete_all */
};

#define HS_HELPERS 2
#define HS_REQUESTERS 2

static struct {
	struct hs_req *mbox;		/* atomic: one request in flight */
	struct swait_head mbox_full, mbox_empty;
	int done;			/* atomic */
	long per_requester, spawns;
	long bad_reply, bad_frame;	/* atomic */
	struct tu_thread *helper[HS_HELPERS], *req[HS_REQUESTERS];
	struct tu_thread *spawner;
} hs;

/* A pool thread: take a request, answer it, complete it, carry on. */
static void *hs_helper(void *arg)
{
	struct tu_thread *t = arg;

	for (;;) {
		struct hs_req *r = NULL;
		int all;

		tu_phase(t, "in swait_event on mbox_full");
		swait_event(&hs.mbox_full,
			    (r = TU_XCHG(&hs.mbox, NULL)) ||
			    TU_LOAD(&hs.done));
		if (!r)
			break;
		swait_wake_one(&hs.mbox_empty);
		all = r->all;
		r->reply = r->id * 3 + 1;
		tu_phase(t, all ? "in swait_complete_all(req->done)" :
				  "in swait_complete(req->done)");
		/* After this call *r may be gone: the requester's frame. */
		if (all)
			swait_complete_all(&r->done);
		else
			swait_complete(&r->done);
		(void)TU_ADD(&t->count, 1);
		/* Keep running while the requester reuses its frame. */
		tu_spin(200);
	}
	tu_thread_exit(t);
	return NULL;
}

/* Condition: put r in the empty mailbox. */
static bool hs_post(struct hs_req *r)
{
	struct hs_req *empty = NULL;
	bool ok;

	/* Release: the helper's acquire exchange sees *r initialised. */
	tu_sync_var(&hs.mbox, sizeof(hs.mbox));
	tu_release(&hs.mbox);
	ok = __atomic_compare_exchange_n(&hs.mbox, &empty, r, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	return ok;
}

__attribute__((noinline))
static long hs_request(struct tu_thread *t, long id)
{
	struct hs_req r;

	swait_completion_init(&r.done);
	r.id = id;
	r.reply = 0;
	r.all = (int)(id & 1);
	tu_phase(t, "in swait_event on mbox_empty (posting a request)");
	swait_event(&hs.mbox_empty, hs_post(&r));
	swait_wake_one(&hs.mbox_full);
	tu_phase(t, "in swait_completion_wait(on-stack request)");
	swait_completion_wait(&r.done);
	/* Returning frees r: the helper must be done with it. */
	return r.reply;
}

static void *hs_requester(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(1000 + t->idx);

	for (long i = 0; i < hs.per_requester; i++) {
		/* < 2^31, so that id * 3 + 1 cannot overflow a long. */
		long id = (long)(tu_rand(&rnd) >> 33);

		if (hs_request(t, id) != id * 3 + 1)
			(void)TU_ADD(&hs.bad_reply, 1);
		/* Same depth as hs_request: reuses its frame at once. */
		if (!tu_scribble_check(100))
			(void)TU_ADD(&hs.bad_frame, 1);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

/* Thread start: the new thread completes the creator's on-stack start. */
struct ts_arg {
	struct swait_completion started;
	long id;
	long copied;
};

static void *ts_thread(void *arg)
{
	struct ts_arg *a = arg;
	long id = a->id;

	a->copied = id;
	swait_complete(&a->started);
	/* a is gone now; this thread keeps running for a little while. */
	tu_spin((unsigned)(id % 3000));
	return NULL;
}

__attribute__((noinline))
static int ts_start(pthread_t *tid, long id, long *copied)
{
	struct ts_arg a;
	int err;

	swait_completion_init(&a.started);
	a.id = id;
	a.copied = -1;
	err = pthread_create(tid, NULL, ts_thread, &a);
	if (err)
		return err;
	swait_completion_wait(&a.started);
	*copied = a.copied;
	return 0;
}

#define TS_RING 8

static void *hs_spawner(void *arg)
{
	struct tu_thread *t = arg;
	pthread_t ring[TS_RING];
	long n = 0;

	for (long i = 0; i < hs.spawns; i++) {
		long copied = -1;

		if (n >= TS_RING) {
			tu_phase(t, "joining a started thread");
			pthread_join(ring[n % TS_RING], NULL);
		}
		tu_phase(t, "in ts_start (swait_completion_wait on its "
			    "stack)");
		if (ts_start(&ring[n % TS_RING], i, &copied) != 0) {
			(void)TU_ADD(&hs.bad_reply, 1);
			break;
		}
		n++;
		if (copied != i)
			(void)TU_ADD(&hs.bad_reply, 1);
		if (!tu_scribble_check(100))
			(void)TU_ADD(&hs.bad_frame, 1);
		(void)TU_ADD(&t->count, 1);
	}
	tu_phase(t, "joining the last started threads");
	for (long i = n > TS_RING ? n - TS_RING : 0; i < n; i++)
		pthread_join(ring[i % TS_RING], NULL);
	tu_thread_exit(t);
	return NULL;
}

static void hs_describe(FILE *out)
{
	fprintf(out, "mbox %s, done %d\n",
		__atomic_load_n(&hs.mbox, __ATOMIC_RELAXED) ? "full" :
		"empty", __atomic_load_n(&hs.done, __ATOMIC_RELAXED));
}

static bool hs_requests_done(void *arg)
{
	(void)arg;
	for (int i = 0; i < HS_REQUESTERS; i++)
		if (!TU_LOAD(&hs.req[i]->exited))
			return false;
	return TU_LOAD(&hs.spawner->exited) != 0;
}

static void test_completion_on_stack(void **state)
{
	long answered = 0;

	(void)state;
	memset(&hs, 0, sizeof(hs));
	swait_head_init(&hs.mbox_full);
	swait_head_init(&hs.mbox_empty);
	hs.per_requester = tu_scale(100000);
	hs.spawns = tu_scale(5000);

	tu_begin("on-stack completion handshakes", hs_describe);
	for (int i = 0; i < HS_HELPERS; i++) {
		hs.helper[i] = tu_slot("helper", i);
		tu_spawn(hs.helper[i], hs_helper, hs.helper[i]);
	}
	for (int i = 0; i < HS_REQUESTERS; i++) {
		hs.req[i] = tu_slot("requester", i);
		tu_spawn(hs.req[i], hs_requester, hs.req[i]);
	}
	hs.spawner = tu_slot("spawner", 0);
	tu_spawn(hs.spawner, hs_spawner, hs.spawner);

	tu_wait(hs_requests_done, NULL);
	TU_STORE(&hs.done, 1);
	swait_wake_all(&hs.mbox_full);
	tu_wait_exited();
	tu_end();

	assert_int_equal(TU_LOAD(&hs.bad_reply), 0);
	assert_int_equal(TU_LOAD(&hs.bad_frame), 0);
	for (int i = 0; i < HS_REQUESTERS; i++)
		assert_int_equal(TU_LOAD(&hs.req[i]->count), hs.per_requester);
	for (int i = 0; i < HS_HELPERS; i++)
		answered += TU_LOAD(&hs.helper[i]->count);
	assert_int_equal(answered, HS_REQUESTERS * hs.per_requester);
	assert_int_equal(TU_LOAD(&hs.spawner->count), hs.spawns);
	assert_null(hs.mbox);
	assert_int_equal(swait_head_destroy(&hs.mbox_full), 0);
	assert_int_equal(swait_head_destroy(&hs.mbox_empty), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completion_count),
		cmocka_unit_test(test_completion_all_reinit),
		cmocka_unit_test(test_completion_on_stack),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-completion", tests, NULL,
					   NULL);
}
