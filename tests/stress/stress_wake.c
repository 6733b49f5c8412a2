// SPDX-License-Identifier: MIT
/*
 * stress_wake.c - many threads on one head: swait_wake_one() under churn
 * (wakers and waiters racing on a token count) and swait_wake_all() racing
 * waiters that prepare again at once.
 *
 * Both tests have checkpoints: a waker stops and waits until the state it
 * created has been seen by the waiters.  Between checkpoints a lost wakeup
 * could be hidden by a later wake; at a checkpoint nothing else wakes
 * anybody, so a lost one stops the test and the watchdog names the sleeper.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tu_stress.h"

/* Wait (yielding) until *p >= v; the monitor's watchdog covers a stall. */
static void yield_until_ge(const long *p, long v)
{
	while (TU_LOAD(p) < v)
		sched_yield();
}

/* --------------------------------------------------- wake_one under churn */

#define CH_WAITERS 8
#define CH_WAKERS 4

static struct {
	struct swait_head head;
	struct tu_tokens tok;
	int done;
	long per_waker;
	struct tu_thread *waiter[CH_WAITERS], *waker[CH_WAKERS];
} ch;

static void *ch_waiter(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(t->idx);

	for (;;) {
		bool got = false;

		tu_phase(t, "in swait_event on head, waiting for a token");
		swait_event(&ch.head,
			    (got = tu_token_take(&ch.tok)) ||
			    TU_LOAD(&ch.done));
		if (!got)
			break;
		(void)TU_ADD(&t->count, 1);
		tu_phase(t, "working on a token");
		tu_spin((unsigned)(tu_rand(&rnd) % 256));
	}
	tu_thread_exit(t);
	return NULL;
}

static void *ch_waker(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(100 + t->idx);
	long left = ch.per_waker;

	while (left > 0) {
		long burst = 1 + (long)(tu_rand(&rnd) % 16);

		if (burst > left)
			burst = left;
		tu_phase(t, "posting a burst (post, swait_wake_one)");
		for (long i = 0; i < burst; i++) {
			tu_token_post(&ch.tok, 1);
			swait_wake_one(&ch.head);
			(void)TU_ADD(&t->count, 1);
		}
		left -= burst;
		if (tu_rand(&rnd) % 4 == 0) {
			/* Checkpoint: everything posted so far gets taken. */
			tu_phase(t, "at a checkpoint: waits for taken >= "
				    "posted (a stranded token stops here)");
			yield_until_ge(&ch.tok.taken,
				       TU_LOAD(&ch.tok.posted));
		} else {
			tu_spin((unsigned)(tu_rand(&rnd) % 2048));
		}
	}
	tu_thread_exit(t);
	return NULL;
}

static void ch_describe(FILE *out)
{
	tu_tokens_describe(out, "tokens", &ch.tok);
	fprintf(out, "done %d, swait_active %d\n",
		__atomic_load_n(&ch.done, __ATOMIC_RELAXED),
		swait_active(&ch.head));
}

static bool ch_settled(void *arg)
{
	(void)arg;
	for (int i = 0; i < CH_WAKERS; i++)
		if (!TU_LOAD(&ch.waker[i]->exited))
			return false;
	return tu_tokens_drained(&ch.tok);
}

static void run_wake_one_churn(bool asym)
{
	long taken = 0;

	memset(&ch, 0, sizeof(ch));
	tu_head_init(&ch.head, asym);
	ch.per_waker = tu_scale(100000);

	tu_begin("wake_one under churn", ch_describe);
	for (int i = 0; i < CH_WAITERS; i++) {
		ch.waiter[i] = tu_slot("waiter", i);
		tu_spawn(ch.waiter[i], ch_waiter, ch.waiter[i]);
	}
	for (int i = 0; i < CH_WAKERS; i++) {
		ch.waker[i] = tu_slot("waker", i);
		tu_spawn(ch.waker[i], ch_waker, ch.waker[i]);
	}
	/* All posted and all taken with only the wakes the wakers made. */
	tu_wait(ch_settled, NULL);
	TU_STORE(&ch.done, 1);
	swait_wake_all(&ch.head);
	tu_wait_exited();
	tu_end();

	for (int i = 0; i < CH_WAITERS; i++)
		taken += TU_LOAD(&ch.waiter[i]->count);
	assert_int_equal(TU_LOAD(&ch.tok.posted), CH_WAKERS * ch.per_waker);
	assert_int_equal(TU_LOAD(&ch.tok.taken), CH_WAKERS * ch.per_waker);
	assert_int_equal(TU_LOAD(&ch.tok.avail), 0);
	assert_int_equal(taken, CH_WAKERS * ch.per_waker);
	assert_int_equal(swait_head_destroy(&ch.head), 0);
}

/* ------------------------------------- wake_all racing concurrent prepares */

#define GEN_WAITERS 8
#define GEN_BUMPERS 2

static struct {
	struct swait_head head;
	long gen;			/* atomic */
	long final;			/* gen after the last bump */
	long per_bumper;
	struct tu_thread *waiter[GEN_WAITERS], *bumper[GEN_BUMPERS];
} gw;

/*
 * A waiter publishes the generation it saw in aux, then waits for the
 * generation to move past it.  Even-numbered waiters use the event macro;
 * odd ones the low-level calls with one waiter reused across waits (the
 * "keeps its place" path of swait_prepare).
 */
static void *gen_waiter(void *arg)
{
	struct tu_thread *t = arg;
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	uint64_t rnd = tu_seed(200 + t->idx);

	for (;;) {
		long g = TU_LOAD(&gw.gen);

		TU_STORE(&t->aux, g);
		if (g == gw.final)
			break;
		if (t->idx % 2 == 0) {
			tu_phase(t, "in swait_event on head, waiting for gen "
				    "!= aux");
			swait_event(&gw.head, TU_LOAD(&gw.gen) != g);
		} else {
			tu_phase(t, "in swait_prepare/sleep on head, waiting "
				    "for gen != aux");
			for (;;) {
				swait_prepare(&gw.head, &w);
				if (TU_LOAD(&gw.gen) != g)
					break;
				(void)swait_sleep(&gw.head, &w, 0,
						  CLOCK_MONOTONIC, NULL);
			}
			swait_finish(&gw.head, &w);
		}
		(void)TU_ADD(&t->count, 1);
		tu_phase(t, "saw the generation change");
		tu_spin((unsigned)(tu_rand(&rnd) % 512));
	}
	tu_thread_exit(t);
	return NULL;
}

static bool gen_all_seen(long g)
{
	for (int i = 0; i < GEN_WAITERS; i++)
		if (TU_LOAD(&gw.waiter[i]->aux) < g)
			return false;
	return true;
}

static void *gen_bumper(void *arg)
{
	struct tu_thread *t = arg;
	uint64_t rnd = tu_seed(300 + t->idx);

	for (long i = 0; i < gw.per_bumper; i++) {
		long g;

		tu_phase(t, "bumping gen, swait_wake_all");
		g = TU_ADD(&gw.gen, 1);
		swait_wake_all(&gw.head);
		(void)TU_ADD(&t->count, 1);
		if (tu_rand(&rnd) % 8 == 0) {
			/*
			 * Checkpoint: every waiter must see g.  One that
			 * slept through the wake_all stays below it.
			 */
			tu_phase(t, "at a checkpoint: waits until every "
				    "waiter's aux (seen gen) >= its bump");
			while (!gen_all_seen(g))
				sched_yield();
		} else {
			tu_spin((unsigned)(tu_rand(&rnd) % 1024));
		}
	}
	tu_thread_exit(t);
	return NULL;
}

static void gen_describe(FILE *out)
{
	fprintf(out, "gen %ld of %ld, swait_active %d\n",
		__atomic_load_n(&gw.gen, __ATOMIC_RELAXED), gw.final,
		swait_active(&gw.head));
}

static void run_wake_all_generation(bool asym)
{
	long seen = 0;

	memset(&gw, 0, sizeof(gw));
	tu_head_init(&gw.head, asym);
	gw.per_bumper = tu_scale(40000);
	gw.final = GEN_BUMPERS * gw.per_bumper;

	tu_begin("wake_all racing concurrent prepares", gen_describe);
	for (int i = 0; i < GEN_WAITERS; i++) {
		gw.waiter[i] = tu_slot("waiter", i);
		tu_spawn(gw.waiter[i], gen_waiter, gw.waiter[i]);
	}
	for (int i = 0; i < GEN_BUMPERS; i++) {
		gw.bumper[i] = tu_slot("bumper", i);
		tu_spawn(gw.bumper[i], gen_bumper, gw.bumper[i]);
	}
	/* Waiters leave only after seeing the final generation. */
	tu_wait_exited();
	tu_end();

	assert_int_equal(__atomic_load_n(&gw.gen, __ATOMIC_RELAXED), gw.final);
	for (int i = 0; i < GEN_WAITERS; i++) {
		assert_int_equal(TU_LOAD(&gw.waiter[i]->aux), gw.final);
		seen += TU_LOAD(&gw.waiter[i]->count);
	}
	for (int i = 0; i < GEN_BUMPERS; i++)
		assert_int_equal(TU_LOAD(&gw.bumper[i]->count), gw.per_bumper);
	/* Each observation is a change of generation: at most one per bump. */
	assert_true(seen >= GEN_WAITERS);
	assert_true(seen <= GEN_WAITERS * gw.final);
	print_message("wake_all: %ld bumps, %ld observations by %d waiters\n",
		      gw.final, seen, GEN_WAITERS);
	assert_int_equal(swait_head_destroy(&gw.head), 0);
}

static void test_wake_one_churn(void **state)
{
	(void)state;
	run_wake_one_churn(false);
}

static void test_wake_all_generation(void **state)
{
	(void)state;
	run_wake_all_generation(false);
}

/* Both again on an asymmetric head (lib/asym.c): no fence in the wakes. */
static void test_wake_one_churn_asym(void **state)
{
	(void)state;
	run_wake_one_churn(true);
}

static void test_wake_all_generation_asym(void **state)
{
	(void)state;
	run_wake_all_generation(true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_one_churn),
		cmocka_unit_test(test_wake_all_generation),
		cmocka_unit_test(test_wake_one_churn_asym),
		cmocka_unit_test(test_wake_all_generation_asym),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-wake", tests, NULL, NULL);
}
