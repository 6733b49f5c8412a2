// SPDX-License-Identifier: MIT
/*
 * timedwait.c - how late a wait with an absolute deadline returns.
 *
 * One thread waits on a channel nobody posts to, with a deadline a short
 * time ahead on CLOCK_MONOTONIC or CLOCK_REALTIME, and reads the same clock
 * when the wait returns ETIMEDOUT.  A sample is the overshoot: return time
 * minus deadline.  The thread keeps the default timer slack (50 us for
 * SCHED_OTHER), which every user of these calls gets too.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define AHEAD_NS 200000

struct tw {
	const struct mech *m;
	clockid_t clock;
	long warm, n;
	double *v;
	int early;		/* returns before the deadline: a bug */
};

static double clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts_to_ns(&ts);
}

static void *tw_thread(void *arg)
{
	struct tw *p = arg;
	struct chan *c = chan_new(p->m);

	for (long i = 0; i < p->warm + p->n; i++) {
		struct timespec now, dl;
		double late;
		int err;

		clock_gettime(p->clock, &now);
		dl = now;
		dl.tv_nsec += AHEAD_NS;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_nsec -= 1000000000L;
			dl.tv_sec++;
		}
		err = p->m->timedwait(c, p->clock, &dl);
		late = clock_ns(p->clock) - ts_to_ns(&dl);
		if (err != ETIMEDOUT || late < 0)
			p->early++;
		if (i >= p->warm)
			p->v[i - p->warm] = late;
		work_done(1);
	}
	chan_free(p->m, c);
	return NULL;
}

void run_timedwait(void)
{
	static const struct {
		clockid_t id;
		const char *series;
	} clocks[] = {
		{ CLOCK_MONOTONIC, "clock=monotonic" },
		{ CLOCK_REALTIME, "clock=realtime" },
	};
	const struct mech *sel[32];
	size_t nsel = 0;
	struct tw p;

	memset(&p, 0, sizeof(p));
	nsel = mechs_select(MF_TIMED, sel, sizeof(sel) / sizeof(sel[0]));
	if (nsel == 0)
		return;
	scenario_refs("timedwait", "futex", "cond");
	p.n = trial_iterations(150, 40);
	if (trial_duration_ns())
		p.n = (long)fmax(1.0, (double)trial_duration_ns() /
				 (double)(AHEAD_NS + 60000));
	p.warm = 5;
	for (size_t ci = 0; ci < 2; ci++) {
		for (int rep = 0; rep < opt.reps; rep++) {
			for (size_t k = 0; k < nsel; k++) {
				struct trial t;

				p.m = sel[(k + (size_t)rep) % nsel];
				p.clock = clocks[ci].id;
				progress("timedwait: %s rep %d/%d %s",
					 clocks[ci].series, rep + 1, opt.reps,
					 p.m->name);
				p.v = alloc_samples((size_t)p.n);
				pthread_join(spawn(tw_thread, &p,
						   place_cpu(true)), NULL);
				memset(&t, 0, sizeof(t));
				t.scenario = "timedwait";
				t.metric = "overshoot";
				t.unit = "ns";
				snprintf(t.series, sizeof(t.series), "%s",
					 clocks[ci].series);
				t.mech = p.m->name;
				t.regime = "one thread";
				t.rep = rep;
				t.v = p.v;
				t.n = (size_t)p.n;
				t.csw = t.fwake = t.fwait = NAN;
				trial_add(&t);
			}
		}
	}
	if (p.early)
		fprintf(stderr, "swait-bench: timedwait: %d waits returned "
			"before their deadline or without ETIMEDOUT\n",
			p.early);
}
