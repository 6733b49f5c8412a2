// SPDX-License-Identifier: MIT
/*
 * nowaiter.c - the cost of a wake when nobody waits.
 *
 * The common case of a wake call is an empty queue: a producer that signals
 * after every item, most of the time to nobody.  One thread calls the wake
 * in batches; a sample is one batch's time divided by its length, so the
 * clock read is amortised.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <swait.h>

#include "bench.h"

struct nw_state {
	struct swait_head head;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t word, sleepers;
};

struct nw_mech {
	const char *name;
	void (*wake)(struct nw_state *s);
	bool own_futex_count;
	bool asym;			/* on a swait_head_init_asym() head */
	const struct mech *peer;	/* a peer's wake_empty instead */
};

static void nw_swait(struct nw_state *s)
{
	swait_wake_one(&s->head);
}

static void nw_swait_all(struct nw_state *s)
{
	swait_wake_all(&s->head);
}

static void nw_cond(struct nw_state *s)
{
	pthread_cond_signal(&s->cv);
}

static void nw_cond_broadcast(struct nw_state *s)
{
	pthread_cond_broadcast(&s->cv);
}

static void nw_futex(struct nw_state *s)
{
	bench_futex_wake(&s->word, 1);
}

/* What fsleep_post() in mech.c does after its increment. */
static void nw_futex_sleeper(struct nw_state *s)
{
	if (__atomic_load_n(&s->sleepers, __ATOMIC_SEQ_CST) != 0)
		bench_futex_wake(&s->word, 1);
}

static const struct nw_mech nw_mechs[] = {
	{ .name = "swait", .wake = nw_swait },
	{ .name = "swait-asym", .wake = nw_swait, .asym = true },
	{ .name = "swait-all", .wake = nw_swait_all },
	{ .name = "cond", .wake = nw_cond },
	{ .name = "cond-broadcast", .wake = nw_cond_broadcast },
	{ .name = "futex", .wake = nw_futex,
	  .own_futex_count = true },
	{ .name = "futex-sleeper", .wake = nw_futex_sleeper,
	  .own_futex_count = true },
};

struct nw {
	const struct nw_mech *m;
	long batches, batch;
	double *v;
	bool tracepoint;
	struct tcount tc;
};

/*
 * One warm-up batch, then p->batches timed batches of p->batch calls of
 * wake, the call written out so that every mechanism pays one call.
 */
#define NW_MEASURE(p, wake)						\
	do {								\
		uint64_t t_, t2_;					\
									\
		for (long i_ = 0; i_ < (p)->batch; i_++)		\
			wake;						\
		tcount_begin(&(p)->tc);					\
		t_ = now_ns();						\
		for (long b_ = 0; b_ < (p)->batches; b_++) {		\
			for (long i_ = 0; i_ < (p)->batch; i_++)	\
				wake;					\
			t2_ = now_ns();					\
			(p)->v[b_] = (double)(t2_ - t_) /		\
				     (double)(p)->batch;		\
			t_ = t2_;					\
			WORK_TICK(b_ + 1);				\
		}							\
		tcount_end(&(p)->tc);					\
	} while (0)

static void *nw_thread(void *arg)
{
	struct nw *p = arg;
	const struct mech *peer = p->m->peer;
	struct nw_state s;

	tcount_tracepoint(&p->tc, p->tracepoint);
	if (peer) {
		struct chan *c = chan_new(peer);
		void (*wake)(struct chan *) = peer->wake_empty;

		NW_MEASURE(p, wake(c));
		chan_free(peer, c);
		tcount_close(&p->tc);
		return NULL;
	}
	memset(&s, 0, sizeof(s));
	if (p->m->asym) {
		int err = swait_head_init_asym(&s.head);

		if (err != 0)
			die("nowaiter: swait_head_init_asym: %s", strerror(err));
	}
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	NW_MEASURE(p, p->m->wake(&s));
	tcount_close(&p->tc);
	pthread_cond_destroy(&s.cv);
	pthread_mutex_destroy(&s.mu);
	return NULL;
}

static void nw_trial(struct nw *p)
{
	pthread_join(spawn(nw_thread, p, place_cpu(true)), NULL);
}

void run_nowaiter(void)
{
	const struct mech *peers[8];
	struct nw_mech peer_nw[8];
	const struct nw_mech *sel[16];
	size_t nsel = 0, npeers;
	long ops;
	struct nw p;
	const char *why;

	memset(&p, 0, sizeof(p));
	for (size_t i = 0; i < sizeof(nw_mechs) / sizeof(nw_mechs[0]); i++)
		if (mech_selected(nw_mechs[i].name))
			sel[nsel++] = &nw_mechs[i];
	npeers = mechs_select(MF_PEER, peers, 8);
	for (size_t i = 0; i < npeers; i++) {
		peer_nw[i] = (struct nw_mech){ .name = peers[i]->name,
					       .peer = peers[i] };
		sel[nsel++] = &peer_nw[i];
	}
	if (nsel == 0)
		return;
	scenario_refs("nowaiter", "cond", "futex");
	p.batch = 256;
	p.batches = trial_iterations(400, 100);
	for (int rep = 0; rep < opt.reps; rep++) {
		for (size_t k = 0; k < nsel; k++) {
			struct trial t;

			p.m = sel[(k + (size_t)rep) % nsel];
			progress("nowaiter: rep %d/%d %s", rep + 1, opt.reps,
				 p.m->name);
			p.v = alloc_samples((size_t)p.batches);
			nw_trial(&p);
			memset(&t, 0, sizeof(t));
			t.scenario = "nowaiter";
			t.metric = "wake_call";
			t.unit = "ns";
			t.mech = p.m->name;
			t.regime = "one thread";
			t.rep = rep;
			t.v = p.v;
			t.n = (size_t)p.batches;
			ops = p.batch * p.batches;
			t.csw = (double)p.tc.csw / (double)ops;
			t.cpu = p.tc.cpu_ns / (double)ops;
			t.cpu_known = true;
			t.fwake = t.fwait = NAN;
			if (p.m->own_futex_count) {
				t.fwake = (double)p.tc.fwake / (double)ops;
				t.fwait = (double)p.tc.fwait / (double)ops;
			}
			trial_add(&t);
		}
	}
	if (!opt.count_futex || !futex_tracepoint_available(&why))
		return;
	p.tracepoint = true;
	for (size_t k = 0; k < nsel; k++) {
		p.m = sel[k];
		progress("nowaiter: counting futex calls, %s", p.m->name);
		p.v = alloc_samples((size_t)p.batches);
		nw_trial(&p);
		ops = p.batch * p.batches;
		counts_set("nowaiter", "", p.m->name,
			   (double)p.tc.tp_wake / (double)ops,
			   (double)p.tc.tp_wait / (double)ops);
		free(p.v);
	}
	p.tracepoint = false;
}
