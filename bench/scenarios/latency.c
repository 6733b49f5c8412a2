// SPDX-License-Identifier: MIT
/*
 * latency.c - one-way wake latency, in the style of rt-tests' ptsematest.
 *
 * The waker sleeps an interval (so that the other thread is surely asleep
 * in its wait), stamps CLOCK_MONOTONIC, and posts; the woken thread stamps
 * the clock as soon as its wait returns and acknowledges on a second
 * channel.  A sample is the difference of the two stamps: everything from
 * the wake call to the woken thread running again.  With --rt both threads
 * are SCHED_FIFO and memory is locked.
 *
 * With --load, a repetition runs every mechanism beside the competing load
 * of load.c (cpu), or twice, without and with it (both; which phase comes
 * first alternates between repetitions, so that neither always runs on a
 * fresher machine).  The load runs for a whole phase rather than per
 * trial, so that every trial of a phase meets the same, already-running
 * competition.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "bench.h"

#define INTERVAL_NS 50000	/* between two wakes */

struct lat {
	const struct mech *m;
	struct chan *go, *ack;
	long warm, n;
	uint64_t stamp;		/* the waker's, before each post */
	double *v;
	struct tcount tw, tr;
};

static void *lat_waker(void *arg)
{
	struct lat *p = arg;
	struct timespec iv = ns_to_ts(INTERVAL_NS);

	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	tcount_tracepoint(&p->tw, false);
	for (long i = 0; i < p->warm + p->n; i++) {
		if (i == p->warm)
			tcount_begin(&p->tw);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &iv, NULL);
		/* Ordered before the woken thread's read by the post. */
		__atomic_store_n(&p->stamp, now_ns(), __ATOMIC_RELAXED);
		p->m->post(p->go);
		p->m->wait(p->ack);
		if (opt.cpus == PLACE_FREE)
			tcount_check_cpu(&p->tw);
	}
	tcount_end(&p->tw);
	return NULL;
}

static void *lat_woken(void *arg)
{
	struct lat *p = arg;

	tcount_tracepoint(&p->tr, false);
	for (long i = 0; i < p->warm + p->n; i++) {
		uint64_t t;

		if (i == p->warm)
			tcount_begin(&p->tr);
		p->m->wait(p->go);
		t = now_ns();
		if (i >= p->warm)
			p->v[i - p->warm] = (double)(t -
				__atomic_load_n(&p->stamp, __ATOMIC_RELAXED));
		p->m->post(p->ack);
		work_done(1);
		if (opt.cpus == PLACE_FREE)
			tcount_check_cpu(&p->tr);
	}
	tcount_end(&p->tr);
	return NULL;
}

/* Every mechanism once, in rotated order, with or without the load. */
static void latency_phase(struct lat *p, const struct mech *const *sel,
			  size_t nsel, int rep, bool loaded)
{
	if (loaded)
		load_start();
	for (size_t k = 0; k < nsel; k++) {
		const struct mech *m = sel[(k + (size_t)rep) % nsel];
		pthread_t a, b;

		progress("latency: rep %d/%d %s%s", rep + 1, opt.reps,
			 m->name, loaded ? ", load cpu" : "");
		p->m = m;
		p->v = alloc_samples((size_t)p->n);
		p->go = chan_new(m);
		p->ack = chan_new(m);
		b = spawn(lat_woken, p, place_cpu(false));
		a = spawn(lat_waker, p, place_cpu(true));
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		chan_free(m, p->go);
		chan_free(m, p->ack);
		trial_add_pair("latency", "one_way", m, rep, p->v,
			       (size_t)p->n, &p->tw, &p->tr);
	}
	if (loaded)
		load_stop();
}

void run_latency(void)
{
	const struct mech *sel[32];
	size_t nsel = 0;
	struct lat p;

	memset(&p, 0, sizeof(p));
	nsel = mechs_select(MF_HANDOFF, sel, sizeof(sel) / sizeof(sel[0]));
	if (nsel == 0)
		return;
	scenario_refs("latency", "futex", "cond");
	p.n = trial_iterations(600, 150);
	if (trial_duration_ns())
		p.n = (long)fmax(1.0, (double)trial_duration_ns() /
				 (2.0 * INTERVAL_NS));
	p.warm = p.n / 10 < 100 ? p.n / 10 : 100;
	for (int rep = 0; rep < opt.reps; rep++)
		for (int phase = 0; phase < (opt.load == LOAD_BOTH ? 2 : 1);
		     phase++)
			latency_phase(&p, sel, nsel, rep,
				      opt.load == LOAD_CPU ||
				      (opt.load == LOAD_BOTH &&
				       (phase + rep) % 2 == 1));
}
