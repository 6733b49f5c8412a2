// SPDX-License-Identifier: MIT
/*
 * pingpong.c - two threads hand a token back and forth.
 *
 * Thread A posts "ping" and waits for "pong"; thread B waits for "ping" and
 * posts "pong".  A reads the clock once per round trip, after its wait
 * returns, so a sample is exactly one round trip: two blocking handoffs
 * when the threads share a CPU.  The first round trips warm up the caches
 * and the scheduler and are discarded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct pp {
	const struct mech *m;
	struct chan *ping, *pong;
	long warm, n;		/* warm-up, then at most n samples */
	uint64_t budget;	/* ns, 0: exactly n */
	double *v;
	long got;
	int stop;
	bool tracepoint;
	struct tcount ta, tb;
};

static void *pp_a(void *arg)
{
	struct pp *p = arg;
	const struct mech *m = p->m;
	uint64_t t, t0, t2;
	long i;

	tcount_tracepoint(&p->ta, p->tracepoint);
	for (i = 0; i < p->warm; i++) {
		m->post(p->ping);
		m->wait(p->pong);
	}
	tcount_begin(&p->ta);
	t0 = t = now_ns();
	for (i = 0; i < p->n;) {
		m->post(p->ping);
		m->wait(p->pong);
		t2 = now_ns();
		p->v[i++] = (double)(t2 - t);
		t = t2;
		WORK_TICK(i);
		if ((i & 255) == 0 && opt.cpus == PLACE_FREE)
			tcount_check_cpu(&p->ta);
		if (p->budget && t2 - t0 >= p->budget)
			break;
	}
	tcount_end(&p->ta);
	p->got = i;
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	m->post(p->ping);	/* B sees stop after this wait returns */
	tcount_close(&p->ta);
	return NULL;
}

static void *pp_b(void *arg)
{
	struct pp *p = arg;
	const struct mech *m = p->m;

	tcount_tracepoint(&p->tb, p->tracepoint);
	for (long i = 0; i < p->warm; i++) {
		m->wait(p->ping);
		m->post(p->pong);
	}
	tcount_begin(&p->tb);
	for (unsigned long i = 1;; i++) {
		m->wait(p->ping);
		if ((i & 255) == 0 && opt.cpus == PLACE_FREE)
			tcount_check_cpu(&p->tb);
		/* The channel's acquire orders this after A's store. */
		if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
			break;
		m->post(p->pong);
	}
	tcount_end(&p->tb);
	tcount_close(&p->tb);
	return NULL;
}

/* One trial: fresh channels, fresh threads. */
static void pp_trial(struct pp *p, const struct mech *m)
{
	pthread_t a, b;

	p->m = m;
	p->ping = chan_new(m);
	p->pong = chan_new(m);
	p->stop = 0;
	p->got = 0;
	b = spawn(pp_b, p, place_cpu(false));
	a = spawn(pp_a, p, place_cpu(true));
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	chan_free(m, p->ping);
	chan_free(m, p->pong);
}

void run_pingpong(void)
{
	const struct mech *sel[32];
	size_t nsel = 0;
	long n = trial_iterations(10000, 3000);
	struct pp p;
	const char *why;

	memset(&p, 0, sizeof(p));
	nsel = mechs_select(MF_HANDOFF, sel, sizeof(sel) / sizeof(sel[0]));
	if (nsel == 0)
		return;
	scenario_refs("pingpong", "futex", "cond");
	p.budget = trial_duration_ns();
	if (p.budget)
		n = (long)fmin(4e6, (double)p.budget / 500.0);
	p.warm = n / 10 < 1000 ? n / 10 : 1000;
	p.n = n;
	for (int rep = 0; rep < opt.reps; rep++) {
		for (size_t k = 0; k < nsel; k++) {
			const struct mech *m = sel[(k + (size_t)rep) % nsel];

			progress("pingpong: rep %d/%d %s", rep + 1, opt.reps,
				 m->name);
			p.v = alloc_samples((size_t)n);
			pp_trial(&p, m);
			trial_add_pair("pingpong", "round_trip", m, rep, p.v,
				       (size_t)p.got, &p.ta, &p.tb);
		}
	}
	if (!opt.count_futex)
		return;
	if (!futex_tracepoint_available(&why)) {
		fprintf(stderr, "swait-bench: --count-futex: %s; futex calls "
			"shown only for the raw futex mechanisms\n", why);
		return;
	}
	/* A separate, untimed run per mechanism, under the tracepoint. */
	p.tracepoint = true;
	p.budget = 0;
	p.n = n < 5000 ? n : 5000;
	for (size_t k = 0; k < nsel; k++) {
		progress("pingpong: counting futex calls, %s", sel[k]->name);
		p.v = alloc_samples((size_t)p.n);
		pp_trial(&p, sel[k]);
		counts_set("pingpong", "", sel[k]->name,
			   (double)(p.ta.tp_wake + p.tb.tp_wake) / (double)p.got,
			   (double)(p.ta.tp_wait + p.tb.tp_wait) / (double)p.got);
		free(p.v);
	}
	p.tracepoint = false;
}
