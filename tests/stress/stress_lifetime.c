// SPDX-License-Identifier: MIT
/*
 * stress_lifetime.c - the use-after-return hunt: heads created and
 * destroyed at a high rate in function frames.
 *
 * An owner puts a head in its stack frame, hands it to a helper thread that
 * waits on it, wakes the helper, learns (through a second, long-lived head)
 * that the helper's wait has returned, and then swait_head_destroy() must
 * return 0: nothing is queued and no wake is still walking the head.  The
 * owner returns and at once reuses the frame (tu_scribble_check), and so
 * does the helper with the frame its waiter lived in.  A library that
 * touched the head or the waiter after that point would change the
 * scribbled pattern; the ASan build of this file with
 * detect_stack_use_after_return reports the access itself.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tu_stress.h"

#define LT_PAIRS 2

/* What an owner keeps on its stack for one round. */
struct lt_frame {
	struct swait_head head;
	int go;			/* atomic: the helper may leave */
	long seq;
};

/* One owner and its helper; everything here outlives the rounds. */
struct lt_pair {
	struct lt_frame *mbox;		/* atomic: the frame handed over */
	struct swait_head mbox_head;	/* helper waits for mbox */
	long acked;			/* atomic: last seq the helper left */
	struct swait_head ack_head;	/* owner waits for acked */
	long rounds;
	long busy;			/* destroy returned EBUSY */
	long bad_frame;			/* scribbled frames that changed */
	long waited_queued;		/* rounds the helper was seen queued */
	struct tu_thread *owner, *helper;
};

static struct lt_pair lt[LT_PAIRS];

/* The helper's wait, in its own frame so that the caller can reuse it. */
__attribute__((noinline))
static long lt_help_once(struct lt_pair *p, struct tu_thread *t)
{
	struct lt_frame *f = NULL;
	long seq;

	tu_phase(t, "in swait_event on pair.mbox_head (waiting for a frame)");
	swait_event(&p->mbox_head,
		    (f = TU_XCHG(&p->mbox, NULL)) != NULL);
	seq = f->seq;
	if (seq < 0)
		return seq;	/* the owner is finished */
	tu_phase(t, "in swait_event on the owner's on-stack head");
	if (seq % 2) {
		swait_event(&f->head, TU_LOAD(&f->go));
	} else {
		struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

		/* The low-level calls, as a hand-written wait would. */
		for (;;) {
			swait_prepare(&f->head, &w);
			if (TU_LOAD(&f->go))
				break;
			(void)swait_sleep(&f->head, &w, 0, CLOCK_MONOTONIC,
					  NULL);
		}
		swait_finish(&f->head, &w);
	}
	/* f may be gone from here on: only seq is used. */
	return seq;
}

static void *lt_helper(void *arg)
{
	struct lt_pair *p = arg;
	struct tu_thread *t = p->helper;

	for (;;) {
		long seq = lt_help_once(p, t);

		if (seq < 0)
			break;
		/* Reuse the frame the waiter lived in before the ack. */
		if (!tu_scribble_check(50))
			(void)TU_ADD(&p->bad_frame, 1);
		tu_phase(t, "acking (store acked, swait_wake_one ack_head)");
		TU_STORE(&p->acked, seq);
		swait_wake_one(&p->ack_head);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

static void lt_hand_over(struct lt_pair *p, struct lt_frame *f)
{
	/* Release: the helper's acquire exchange sees *f initialised. */
	TU_STORE(&p->mbox, f);
	swait_wake_one(&p->mbox_head);
}

/* One round with the head in this frame; returns destroy's result. */
__attribute__((noinline))
static int lt_round(struct lt_pair *p, struct tu_thread *t, long seq,
		    uint64_t *rnd)
{
	struct lt_frame f;
	uint64_t how = tu_rand(rnd);

	swait_head_init(&f.head);
	f.go = 0;
	f.seq = seq;
	tu_phase(t, "handing its frame to the helper");
	lt_hand_over(p, &f);
	if (how % 2) {
		/* Often wake a sleeper, sometimes race its prepare. */
		for (int i = 0; i < 2000 && !swait_active(&f.head); i++)
			sched_yield();
		if (swait_active(&f.head))
			p->waited_queued++;
	} else {
		tu_spin((unsigned)(how >> 8) % 2000);
	}
	tu_phase(t, "waking the helper on its on-stack head");
	TU_STORE(&f.go, 1);
	if ((how >> 4) % 2)
		swait_wake_one(&f.head);
	else
		swait_wake_all(&f.head);
	tu_phase(t, "in swait_event on pair.ack_head (helper to leave)");
	swait_event(&p->ack_head,
		    TU_LOAD(&p->acked) == seq);
	tu_phase(t, "in swait_head_destroy on its on-stack head");
	return swait_head_destroy(&f.head);
}

static void *lt_owner(void *arg)
{
	struct lt_pair *p = arg;
	struct tu_thread *t = p->owner;
	uint64_t rnd = tu_seed(1100 + t->idx);
	struct lt_frame last = { .seq = -1 };

	for (long seq = 1; seq <= p->rounds; seq++) {
		if (lt_round(p, t, seq, &rnd) != 0)
			p->busy++;
		/* Same depth as lt_round: overwrite the dead frame now. */
		if (!tu_scribble_check(50))
			(void)TU_ADD(&p->bad_frame, 1);
		(void)TU_ADD(&t->count, 1);
	}
	/* last stays valid: this thread waits for the helper's exit. */
	lt_hand_over(p, &last);
	tu_phase(t, "waiting for its helper to exit");
	while (!TU_LOAD(&p->helper->exited))
		sched_yield();
	tu_thread_exit(t);
	return NULL;
}

static void lt_describe(FILE *out)
{
	for (int i = 0; i < LT_PAIRS; i++)
		fprintf(out, "pair %d: mbox %s, acked %ld of %ld\n", i,
			__atomic_load_n(&lt[i].mbox, __ATOMIC_RELAXED) ?
			"full" : "empty",
			__atomic_load_n(&lt[i].acked, __ATOMIC_RELAXED),
			lt[i].rounds);
}

static void test_stack_heads(void **state)
{
	(void)state;
	memset(lt, 0, sizeof(lt));
	tu_begin("on-stack heads created and destroyed", lt_describe);
	for (int i = 0; i < LT_PAIRS; i++) {
		swait_head_init(&lt[i].mbox_head);
		swait_head_init(&lt[i].ack_head);
		lt[i].rounds = tu_scale(100000);
		lt[i].helper = tu_slot("helper", i);
		lt[i].owner = tu_slot("owner", i);
	}
	for (int i = 0; i < LT_PAIRS; i++) {
		tu_spawn(lt[i].helper, lt_helper, &lt[i]);
		tu_spawn(lt[i].owner, lt_owner, &lt[i]);
	}
	tu_wait_exited();
	tu_end();

	for (int i = 0; i < LT_PAIRS; i++) {
		print_message("pair %d: %ld rounds, helper seen queued in "
			      "%ld\n", i, lt[i].rounds, lt[i].waited_queued);
		assert_int_equal(lt[i].busy, 0);
		assert_int_equal(TU_LOAD(&lt[i].bad_frame), 0);
		assert_int_equal(TU_LOAD(&lt[i].owner->count), lt[i].rounds);
		assert_int_equal(TU_LOAD(&lt[i].helper->count), lt[i].rounds);
		assert_int_equal(swait_head_destroy(&lt[i].mbox_head), 0);
		assert_int_equal(swait_head_destroy(&lt[i].ack_head), 0);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_heads),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-lifetime", tests, NULL,
					   NULL);
}
