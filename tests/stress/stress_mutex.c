// SPDX-License-Identifier: MIT
/*
 * stress_mutex.c - swait_event_mutex() in the shape a pthread_cond port
 * takes: a "lock with a value".  The value is a plain int under a pthread
 * mutex; takers wait until it is positive and take one, givers add one or
 * several and wake, under the mutex (one or all; timed and untimed waits
 * mixed).  Every unit given must be taken exactly once and no taker may
 * sleep while units are available (a lost wakeup stalls the test and the
 * watchdog names it).
 *
 * The second test is the lifetime rule the header names "wake under the
 * lock": a waiter frees the object that holds the mutex and the head as
 * soon as it sees its condition, so the waker wakes before unlocking.  The
 * object lives in the waiter's stack frame, reused at once by the next
 * round; the ASan build (detect_stack_use_after_return) and the debug
 * list checks catch a waker that touches it late.
 */
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tu_stress.h"

#define MV_TAKERS 3
#define MV_GIVERS 2

static struct {
	pthread_mutex_t m;
	struct swait_head h;
	int value;		/* under m */
	long given, taken;	/* under m */
	long per_giver;
	long bad;		/* a wait that failed */
} mv;

static void *mv_taker(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(t->idx);
	struct timespec dl;

	for (;;) {
		int r = 0;

		pthread_mutex_lock(&mv.m);
		tu_phase(t, "in swait_event_mutex");
		if (tu_rand(&rnd) & 1) {
			swait_event_mutex(&mv.h, mv.value > 0 ||
					  mv.given == MV_GIVERS * mv.per_giver,
					  &mv.m);
		} else {
			swait_deadline_after(&dl, CLOCK_MONOTONIC,
					     60 * 1000000000LL);
			r = swait_event_mutex_timeout(&mv.h, mv.value > 0 ||
					mv.given == MV_GIVERS * mv.per_giver,
					&mv.m, CLOCK_MONOTONIC, &dl);
		}
		if (r != 0)
			mv.bad++;
		if (mv.value == 0) {	/* all given and taken */
			pthread_mutex_unlock(&mv.m);
			break;
		}
		mv.value--;
		mv.taken++;
		pthread_mutex_unlock(&mv.m);
		(void)TU_ADD(&t->count, 1);
		tu_phase(t, "working");
	}
	tu_thread_exit(t);
	return NULL;
}

static void *mv_giver(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(100 + t->idx);
	long left = mv.per_giver;

	while (left > 0) {
		long n = 1 + (long)(tu_rand(&rnd) % 3);

		if (n > left)
			n = left;
		tu_phase(t, "giving");
		pthread_mutex_lock(&mv.m);
		mv.value += (int)n;
		mv.given += n;
		/* The last gift wakes everyone: the takers can leave. */
		if (n > 1 || mv.given == MV_GIVERS * mv.per_giver)
			swait_wake_all(&mv.h);
		else
			swait_wake_one(&mv.h);
		pthread_mutex_unlock(&mv.m);
		left -= n;
		(void)TU_ADD(&t->count, n);
		if ((tu_rand(&rnd) & 7) == 0)
			sched_yield();
	}
	tu_thread_exit(t);
	return NULL;
}

static void mv_describe(FILE *out)
{
	/* A racy read for the report only: the test has stalled anyway. */
	fprintf(out, "given %ld of %ld, taken %ld\n",
		__atomic_load_n(&mv.given, __ATOMIC_RELAXED),
		MV_GIVERS * mv.per_giver,
		__atomic_load_n(&mv.taken, __ATOMIC_RELAXED));
}

static void test_mutex_value(void **state)
{
	struct tu_thread *t;

	(void)state;
	memset(&mv, 0, sizeof(mv));
	pthread_mutex_init(&mv.m, NULL);
	mv.per_giver = tu_scale(60000);

	tu_begin("lock with a value", mv_describe);
	for (int i = 0; i < MV_TAKERS; i++) {
		t = tu_slot("taker", i);
		tu_spawn(t, mv_taker, t);
	}
	for (int i = 0; i < MV_GIVERS; i++) {
		t = tu_slot("giver", i);
		tu_spawn(t, mv_giver, t);
	}
	tu_wait_exited();
	tu_end();

	assert_int_equal(mv.bad, 0);
	assert_int_equal(mv.given, MV_GIVERS * mv.per_giver);
	assert_int_equal(mv.taken, mv.given);
	assert_int_equal(mv.value, 0);
	assert_int_equal(swait_head_destroy(&mv.h), 0);
	pthread_mutex_destroy(&mv.m);
}

/* ------------------------------------------------ wake under the lock */

struct box {
	pthread_mutex_t m;
	struct swait_head h;
	int done;		/* under m */
};

static struct {
	struct swait_head mbox_head;
	struct box *mbox;	/* the box of the round, or NULL */
	long rounds;
	int quit;
} wu;

/* The waker: takes each round's box, sets done and wakes, under its m. */
static void *wu_waker(void *arg)
{
	struct tu_thread *t = arg;

	for (;;) {
		struct box *b;

		tu_phase(t, "waiting for a box");
		swait_event(&wu.mbox_head, TU_LOAD(&wu.mbox) != NULL ||
			    TU_LOAD(&wu.quit));
		b = TU_XCHG(&wu.mbox, NULL);
		if (!b)
			break;
		tu_phase(t, "waking under the box's lock");
		pthread_mutex_lock(&b->m);
		b->done = 1;
		swait_wake_one(&b->h);	/* before the unlock: b may go */
		pthread_mutex_unlock(&b->m);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

/* One round: a box on this stack, freed (the frame left) once done. */
static __attribute__((noinline)) void wu_round(struct tu_thread *t)
{
	struct box b;

	memset(&b, 0, sizeof(b));
	pthread_mutex_init(&b.m, NULL);
	pthread_mutex_lock(&b.m);
	TU_STORE(&wu.mbox, &b);
	swait_wake_one(&wu.mbox_head);
	tu_phase(t, "in swait_event_mutex on a stack box");
	swait_event_mutex(&b.h, b.done, &b.m);
	pthread_mutex_unlock(&b.m);
	pthread_mutex_destroy(&b.m);
	/* b leaves with this frame; the next round reuses the memory. */
}

static void *wu_owner(void *arg)
{
	struct tu_thread *t = arg;

	for (long i = 0; i < wu.rounds; i++) {
		wu_round(t);
		(void)TU_ADD(&t->count, 1);
	}
	TU_STORE(&wu.quit, 1);
	swait_wake_all(&wu.mbox_head);
	tu_thread_exit(t);
	return NULL;
}

static void test_mutex_wake_under_lock(void **state)
{
	struct tu_thread *owner, *waker;

	(void)state;
	memset(&wu, 0, sizeof(wu));
	wu.rounds = tu_scale(40000);

	tu_begin("wake under the lock, stack boxes", NULL);
	waker = tu_slot("waker", 0);
	tu_spawn(waker, wu_waker, waker);
	owner = tu_slot("owner", 0);
	tu_spawn(owner, wu_owner, owner);
	tu_wait_exited();
	tu_end();

	assert_int_equal(TU_LOAD(&owner->count), wu.rounds);
	assert_int_equal(TU_LOAD(&waker->count), wu.rounds);
	assert_int_equal(swait_head_destroy(&wu.mbox_head), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_value),
		cmocka_unit_test(test_mutex_wake_under_lock),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-mutex", tests, NULL, NULL);
}
