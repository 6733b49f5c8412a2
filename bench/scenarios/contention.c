// SPDX-License-Identifier: MIT
/*
 * contention.c - N wakers and M waiters on one channel.
 *
 * pingpong has one thread on each side of a channel and prodcons a mutex
 * in the middle; neither shows what a head does when many threads post and
 * many wait on it at once, which is where its lock, its queue and its
 * wake-one policy are tested, and which only a machine with many CPUs can
 * show.  So this scenario is sized from the CPUs this process may use (C,
 * sched_getaffinity), and meant to be run on big machines too and sent
 * back (bench/README.md).
 *
 * Tokens circulate through two channels of the mechanism under test:
 * `items` (wakers post, waiters wait) and `credits` (waiters post, wakers
 * wait), with 2*M credits at the start.  A waker takes a credit and posts
 * an item; a waiter takes an item and posts a credit.  So both heads see
 * all N+M threads, each side both posting and waiting, and with only 2*M
 * tokens for M waiters the waiters do sleep whenever the wakers fall
 * behind.  A handoff is one item taken by a waiter.
 *
 * Per trial: handoffs per second over a measured window after a warm-up
 * (as prodcons), context switches per handoff summed over every thread
 * (getrusage(RUSAGE_THREAD) at the window's edges, as each thread sees
 * them), and Jain's fairness index over the waiters' handoffs.  Series:
 * "w=1 s=C", "w=C s=1" and "w=C s=C" (C at least 2), or the one series of
 * --wakers and --waiters.  With --cpus split the wakers run on one CPU and
 * the waiters on another; with free, trials are labelled by where their
 * threads ran (regime_of_threads).
 *
 * To stop, the wakers see the stop flag after their next post; then the
 * main thread sets stop_waiters and posts one item per waiter: a waiter
 * leaves at the first item it takes once it sees the flag.
 */
#include <math.h>
#include <sched.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

struct ct {
	const struct mech *m;
	struct chan *items, *credits;
	bool tracepoint;
	alignas(64) int measuring, stop, stop_waiters;
};

/* One thread of a trial, on a cache line of its own. */
struct ct_thread {
	alignas(64) struct ct *q;
	long handoffs;		/* waiters: items taken in the window */
	struct where where;
};

static void *ct_waker(void *arg)
{
	struct ct_thread *w = arg;
	struct ct *q = w->q;
	const struct mech *m = q->m;

	where_start(&w->where, q->tracepoint);
	while (!__atomic_load_n(&q->stop, __ATOMIC_RELAXED)) {
		m->wait(q->credits);
		m->post(q->items);
		where_note(&w->where,
			   __atomic_load_n(&q->measuring, __ATOMIC_RELAXED));
	}
	where_stop(&w->where);
	return NULL;
}

static void *ct_waiter(void *arg)
{
	struct ct_thread *w = arg;
	struct ct *q = w->q;
	const struct mech *m = q->m;

	where_start(&w->where, q->tracepoint);
	for (;;) {
		int measuring;

		m->wait(q->items);
		/* The channel's acquire orders this after main's store. */
		if (__atomic_load_n(&q->stop_waiters, __ATOMIC_RELAXED))
			break;
		measuring = __atomic_load_n(&q->measuring, __ATOMIC_RELAXED);
		if (measuring)
			w->handoffs++;
		m->post(q->credits);
		where_note(&w->where, measuring);
	}
	where_stop(&w->where);
	return NULL;
}

/* What one trial measured. */
struct ct_result {
	double per_s, fairness;
	struct window_counts c;	/* per handoff */
	long handoffs;
	const char *regime;
};

/*
 * One trial: fresh channels and threads, nw wakers (ts[0..nw)) and ns
 * waiters (ts[nw..nw+ns)).
 */
static void ct_trial(struct ct *q, struct ct_thread *ts, pthread_t *tid,
		     int nw, int ns, uint64_t window, struct ct_result *r)
{
	const struct mech *m = q->m;
	const struct tcount **tc;
	double sum = 0, sq = 0;
	struct window_counts c = { 0 };
	double secs;

	rt_window_keeper(true);
	q->items = chan_new(m);
	q->credits = chan_new(m);
	q->measuring = q->stop = q->stop_waiters = 0;
	for (int i = 0; i < 2 * ns; i++)
		m->post(q->credits);
	for (int i = 0; i < nw + ns; i++) {
		memset(&ts[i], 0, sizeof(ts[i]));
		ts[i].q = q;
	}
	/* Waiters first, so that the first items find sleepers. */
	for (int i = nw; i < nw + ns; i++)
		tid[i] = spawn(ct_waiter, &ts[i], place_cpu(false));
	for (int i = 0; i < nw; i++)
		tid[i] = spawn(ct_waker, &ts[i], place_cpu(true));
	secs = window_run(&q->measuring, window);
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nw; i++)
		pthread_join(tid[i], NULL);
	__atomic_store_n(&q->stop_waiters, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < ns; i++)
		m->post(q->items);
	for (int i = nw; i < nw + ns; i++)
		pthread_join(tid[i], NULL);
	chan_free(m, q->items);
	chan_free(m, q->credits);
	rt_window_keeper(false);

	tc = calloc((size_t)(nw + ns), sizeof(*tc));
	if (!tc)
		die("out of memory");
	for (int i = 0; i < nw + ns; i++) {
		const struct where *w = &ts[i].where;

		tc[i] = &w->tc;
		if (i >= nw) {
			sum += (double)ts[i].handoffs;
			sq += (double)ts[i].handoffs * (double)ts[i].handoffs;
		}
		window_counts_add(&c, w);
	}
	r->regime = regime_of_threads(tc, (size_t)(nw + ns));
	free(tc);
	r->handoffs = (long)sum;
	r->per_s = sum / secs;
	r->fairness = sq > 0 ? sum * sum / ((double)ns * sq) : NAN;
	window_counts_per_op(&c, sum);
	r->c = c;
}

/*
 * The CPUs this process may use, as the default series' size; the CPUs
 * online where the mask does not fit a cpu_set_t (over 1024 CPUs).
 */
static int cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return (int)sysconf(_SC_NPROCESSORS_ONLN);
	return CPU_COUNT(&set);
}

struct ct_series {
	int nw, ns;
};

/* The series to run, without duplicates; returns how many. */
static int ct_series(struct ct_series s[3])
{
	int c = cpus_allowed(), n = 0;
	struct ct_series def[3];

	/* At least two a side: contention needs company. */
	if (c < 2)
		c = 2;
	if (opt.wakers || opt.waiters) {
		s[0].nw = opt.wakers ? opt.wakers : c;
		s[0].ns = opt.waiters ? opt.waiters : c;
		return 1;
	}
	def[0] = (struct ct_series){ 1, c };
	def[1] = (struct ct_series){ c, 1 };
	def[2] = (struct ct_series){ c, c };
	for (int i = 0; i < 3; i++) {
		bool dup = false;

		for (int k = 0; k < n; k++)
			dup |= s[k].nw == def[i].nw && s[k].ns == def[i].ns;
		if (!dup)
			s[n++] = def[i];
	}
	return n;
}

static void ct_add(const char *metric, const char *unit, const char *series,
		   const struct mech *m, int rep, const struct ct_result *r,
		   double v, bool counts)
{
	struct trial t;

	memset(&t, 0, sizeof(t));
	t.scenario = "contention";
	t.metric = metric;
	t.unit = unit;
	snprintf(t.series, sizeof(t.series), "%s", series);
	t.mech = m->name;
	t.regime = r->regime;
	t.rep = rep;
	t.v = alloc_samples(1);
	t.v[0] = v;
	t.n = 1;
	t.csw = counts ? r->c.csw : NAN;
	/* The throughput row's; the fairness row has none of its own. */
	t.cpu = counts ? r->c.cpu : NAN;
	t.cpu_known = true;
	t.fwake = t.fwait = NAN;
	if (counts && m->own_futex_count) {
		t.fwake = r->c.fwake;
		t.fwait = r->c.fwait;
	}
	trial_add(&t);
}

void run_contention(void)
{
	const struct mech *sel[32];
	struct ct_series series[3];
	size_t nsel;
	int nseries = ct_series(series), most = 0;
	uint64_t window = trial_duration_ns();
	struct ct *q = aligned_alloc(64, sizeof(*q));
	struct ct_thread *ts;
	pthread_t *tid;
	struct ct_result r;
	const char *why;

	nsel = mechs_select(MF_HANDOFF, sel, sizeof(sel) / sizeof(sel[0]));
	if (!q || nsel == 0) {
		free(q);
		return;
	}
	memset(q, 0, sizeof(*q));
	for (int i = 0; i < nseries; i++)
		if (series[i].nw + series[i].ns > most)
			most = series[i].nw + series[i].ns;
	ts = aligned_alloc(64, (size_t)most * sizeof(*ts));
	tid = calloc((size_t)most, sizeof(*tid));
	if (!ts || !tid)
		die("out of memory");
	/*
	 * Short windows keep the default run within about 5 s (3 series of
	 * 12 mechanisms, 5 repetitions) and --quick within about 1 s; each
	 * window still holds tens of thousands of handoffs.  --duration for
	 * steadier numbers.
	 */
	if (!window)
		window = opt.quick ? 6000000u : 20000000u;
	scenario_refs("contention", "futex", "cond");
	for (int s = 0; s < nseries; s++) {
		char name[32];

		snprintf(name, sizeof(name), "w=%d s=%d", series[s].nw,
			 series[s].ns);
		for (int rep = 0; rep < opt.reps; rep++) {
			for (size_t k = 0; k < nsel; k++) {
				const struct mech *m =
					sel[(k + (size_t)rep) % nsel];

				progress("contention %s: rep %d/%d %s", name,
					 rep + 1, opt.reps, m->name);
				q->m = m;
				ct_trial(q, ts, tid, series[s].nw, series[s].ns,
					 window, &r);
				ct_add("throughput", "items/s", name, m, rep,
				       &r, r.per_s, true);
				/* None without a handoff in the window. */
				if (!isnan(r.fairness))
					ct_add("fairness", "index", name, m,
					       rep, &r, r.fairness, false);
			}
		}
		if (!opt.count_futex || !futex_tracepoint_available(&why))
			continue;
		/* A separate, untimed run per mechanism, under tracepoints. */
		q->tracepoint = true;
		for (size_t k = 0; k < nsel; k++) {
			progress("contention %s: counting futex calls, %s",
				 name, sel[k]->name);
			q->m = sel[k];
			ct_trial(q, ts, tid, series[s].nw, series[s].ns,
				 window, &r);
			counts_set("contention", name, sel[k]->name,
				   r.c.tp_wake, r.c.tp_wait);
		}
		q->tracepoint = false;
	}
	free(q);
	free(ts);
	free(tid);
}
