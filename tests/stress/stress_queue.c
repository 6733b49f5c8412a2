// SPDX-License-Identifier: MIT
/*
 * stress_queue.c - handoffs between real threads: a ping-pong on two heads
 * and a bounded producer/consumer queue.  Both are "one wake per unit of
 * work" designs, so a single lost wakeup stops them and the watchdog reports
 * which thread sleeps on which head.
 *
 * Run one test: stress-queue <name>; see meson.build for the soak command.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tu_stress.h"

/* ------------------------------------------------------------ ping-pong */

static struct {
	struct swait_head head[2];	/* head[i]: player i waits here */
	int turn;			/* whose turn: 0 or 1 */
	long rounds;
	/*
	 * A plain counter that only the player holding the turn touches: if
	 * the wake did not publish the other player's writes (O3), an
	 * increment is lost and the total is off.
	 */
	long ball;
	struct tu_thread *t[2];
} pp;

static void *pp_player(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct tu_thread *t = pp.t[me];

	for (long i = 0; i < pp.rounds; i++) {
		tu_phase(t, me ? "in swait_event on head[1], turn == 1" :
				 "in swait_event on head[0], turn == 0");
		swait_event(&pp.head[me], TU_LOAD(&pp.turn) == me);
		tu_phase(t, "holds the turn");
		pp.ball++;
		(void)TU_ADD(&t->count, 1);
		/* Release: hands ball to the other player with the turn. */
		TU_STORE(&pp.turn, !me);
		swait_wake_one(&pp.head[!me]);
	}
	tu_thread_exit(t);
	return NULL;
}

static void pp_describe(FILE *out)
{
	fprintf(out, "turn %d (of 2 players), rounds %ld each\n",
		__atomic_load_n(&pp.turn, __ATOMIC_RELAXED), pp.rounds);
}

static void run_ping_pong(bool asym)
{
	tu_head_init(&pp.head[0], asym);
	tu_head_init(&pp.head[1], asym);
	pp.turn = 0;
	pp.ball = 0;
	pp.rounds = tu_scale(50000);

	tu_begin(asym ? "ping-pong on asymmetric heads" : "ping-pong",
		 pp_describe);
	for (int i = 0; i < 2; i++) {
		pp.t[i] = tu_slot("player", i);
		tu_spawn(pp.t[i], pp_player, (void *)(intptr_t)i);
	}
	tu_wait_exited();
	tu_end();

	assert_int_equal(TU_LOAD(&pp.t[0]->count), pp.rounds);
	assert_int_equal(TU_LOAD(&pp.t[1]->count), pp.rounds);
	assert_int_equal(pp.ball, 2 * pp.rounds);
	assert_int_equal(swait_head_destroy(&pp.head[0]), 0);
	assert_int_equal(swait_head_destroy(&pp.head[1]), 0);
}

static void test_ping_pong(void **state)
{
	(void)state;
	run_ping_pong(false);
}

/*
 * The same on heads made by swait_head_init_asym(): the hand-over is a
 * plain store (TU_STORE, a MOV on x86) followed by a wake with no fence,
 * the store-then-load that x86's store buffer reorders.  Only the
 * sleeper's membarrier() keeps a player from reading the old turn while
 * the other reads an empty head (lib/asym.c O1a).
 */
static void test_ping_pong_asym(void **state)
{
	(void)state;
	run_ping_pong(true);
}

/* ----------------------------------------------------- producer/consumer */

#define PC_PRODUCERS 3
#define PC_CONSUMERS 3
#define PC_QSIZE 8

static struct {
	pthread_mutex_t lock;		/* guards ring, head, count */
	uint64_t ring[PC_QSIZE];
	unsigned rhead, count;
	struct swait_head not_empty, not_full;
	long per_producer;
	long consumed;			/* total, atomic */
	int done;			/* consumers may leave, atomic */
	/* What consumers saw, per producer; written by each consumer alone. */
	uint64_t sum[PC_CONSUMERS][PC_PRODUCERS];
	uint64_t hash[PC_CONSUMERS][PC_PRODUCERS];
	long order_errors;		/* atomic */
	struct tu_thread *prod[PC_PRODUCERS], *cons[PC_CONSUMERS];
} pc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t pc_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Conditions: evaluated under the test's own mutex, so plain data is fine. */
static bool pc_try_put(uint64_t item)
{
	bool ok = false;

	pthread_mutex_lock(&pc.lock);
	if (pc.count < PC_QSIZE) {
		pc.ring[(pc.rhead + pc.count) % PC_QSIZE] = item;
		pc.count++;
		ok = true;
	}
	pthread_mutex_unlock(&pc.lock);
	return ok;
}

static bool pc_try_get(uint64_t *item)
{
	bool ok = false;

	pthread_mutex_lock(&pc.lock);
	if (pc.count > 0) {
		*item = pc.ring[pc.rhead];
		pc.rhead = (pc.rhead + 1) % PC_QSIZE;
		pc.count--;
		ok = true;
	}
	pthread_mutex_unlock(&pc.lock);
	return ok;
}

static void *pc_producer(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct tu_thread *t = pc.prod[me];

	for (long i = 0; i < pc.per_producer; i++) {
		uint64_t item = ((uint64_t)me << 48) | (uint64_t)i;

		tu_phase(t, "in swait_event on not_full (queue full)");
		swait_event(&pc.not_full, pc_try_put(item));
		(void)TU_ADD(&t->count, 1);
		tu_phase(t, "in swait_wake_one(not_empty)");
		swait_wake_one(&pc.not_empty);
	}
	tu_thread_exit(t);
	return NULL;
}

static void *pc_consumer(void *arg)
{
	int me = (int)(intptr_t)arg;
	struct tu_thread *t = pc.cons[me];
	long last[PC_PRODUCERS];

	for (int p = 0; p < PC_PRODUCERS; p++)
		last[p] = -1;
	for (;;) {
		uint64_t item = 0;
		bool got = false;
		int p;
		long seq;

		tu_phase(t, "in swait_event on not_empty (queue empty)");
		swait_event(&pc.not_empty,
			    (got = pc_try_get(&item)) ||
			    TU_LOAD(&pc.done));
		if (!got)
			break;
		tu_phase(t, "in swait_wake_one(not_full)");
		swait_wake_one(&pc.not_full);
		p = (int)(item >> 48);
		seq = (long)(item & 0xffffffffffffull);
		/* The ring is FIFO: one consumer sees a producer in order. */
		if (p >= PC_PRODUCERS || seq <= last[p]) {
			(void)TU_ADD(&pc.order_errors, 1);
		} else {
			last[p] = seq;
			pc.sum[me][p] += (uint64_t)seq;
			pc.hash[me][p] ^= pc_mix(item);
		}
		(void)TU_ADD(&pc.consumed, 1);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

static void pc_describe(FILE *out)
{
	unsigned n;

	pthread_mutex_lock(&pc.lock);
	n = pc.count;
	pthread_mutex_unlock(&pc.lock);
	fprintf(out, "queue holds %u of %d; consumed %ld of %ld; done %d\n",
		n, PC_QSIZE, TU_LOAD(&pc.consumed),
		PC_PRODUCERS * pc.per_producer,
		__atomic_load_n(&pc.done, __ATOMIC_RELAXED));
}

static bool pc_all_consumed(void *arg)
{
	(void)arg;
	return TU_LOAD(&pc.consumed) == PC_PRODUCERS * pc.per_producer;
}

static void test_producer_consumer(void **state)
{
	uint64_t want_sum, got_sum, want_hash, got_hash;
	long total = 0;

	(void)state;
	swait_head_init(&pc.not_empty);
	swait_head_init(&pc.not_full);
	pc.rhead = pc.count = 0;
	pc.consumed = 0;
	pc.done = 0;
	pc.order_errors = 0;
	memset(pc.sum, 0, sizeof(pc.sum));
	memset(pc.hash, 0, sizeof(pc.hash));
	pc.per_producer = tu_scale(300000);

	tu_begin("producer/consumer", pc_describe);
	for (int i = 0; i < PC_CONSUMERS; i++) {
		pc.cons[i] = tu_slot("consumer", i);
		tu_spawn(pc.cons[i], pc_consumer, (void *)(intptr_t)i);
	}
	for (int i = 0; i < PC_PRODUCERS; i++) {
		pc.prod[i] = tu_slot("producer", i);
		tu_spawn(pc.prod[i], pc_producer, (void *)(intptr_t)i);
	}
	/* Every item consumed before anybody is told to leave. */
	tu_wait(pc_all_consumed, NULL);
	TU_STORE(&pc.done, 1);
	swait_wake_all(&pc.not_empty);
	tu_wait_exited();
	tu_end();

	assert_int_equal(pc.order_errors, 0);
	assert_int_equal(pc.count, 0);
	for (int c = 0; c < PC_CONSUMERS; c++)
		total += TU_LOAD(&pc.cons[c]->count);
	assert_int_equal(total, PC_PRODUCERS * pc.per_producer);
	for (int p = 0; p < PC_PRODUCERS; p++) {
		assert_int_equal(TU_LOAD(&pc.prod[p]->count), pc.per_producer);
		want_sum = want_hash = got_sum = got_hash = 0;
		for (long i = 0; i < pc.per_producer; i++) {
			want_sum += (uint64_t)i;
			want_hash ^= pc_mix(((uint64_t)p << 48) | (uint64_t)i);
		}
		for (int c = 0; c < PC_CONSUMERS; c++) {
			got_sum += pc.sum[c][p];
			got_hash ^= pc.hash[c][p];
		}
		assert_int_equal(got_sum, want_sum);
		assert_int_equal(got_hash, want_hash);
	}
	assert_int_equal(swait_head_destroy(&pc.not_empty), 0);
	assert_int_equal(swait_head_destroy(&pc.not_full), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping_pong),
		cmocka_unit_test(test_ping_pong_asym),
		cmocka_unit_test(test_producer_consumer),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-queue", tests, NULL, NULL);
}
