// SPDX-License-Identifier: MIT
/*
 * prodcons.c - P producers and C consumers on a bounded queue.
 *
 * The queue is the textbook two-semaphore ring: a producer takes a free
 * slot, pushes under a mutex and posts an item; a consumer takes an item,
 * pops under the mutex and posts a slot.  Only the two channels change with
 * the mechanism; the ring and its mutex are the same for all.  Items are
 * counted per consumer over a measured window after a warm-up; a trial
 * gives the throughput and Jain's fairness index over the consumers.
 * To stop, producers see the stop flag, then the main thread pushes one
 * poison item per consumer.
 *
 * Under --cpus free every producer and consumer notes its CPU when it
 * first sees the measured window open, every 256 items inside it, and when
 * it first sees the window closed (or when it exits); a trial is labelled
 * as pingpong's are (regime_of_threads).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define QCAP 16

struct pc {
	const struct mech *m;
	struct chan *slots, *items;
	pthread_mutex_t mu;
	long ring[QCAP];
	unsigned head, tail;
	int measuring, stop;
	long counts[1024];
};

static void push(struct pc *q, long v)
{
	q->m->wait(q->slots);
	pthread_mutex_lock(&q->mu);
	q->ring[q->tail++ % QCAP] = v;
	pthread_mutex_unlock(&q->mu);
	q->m->post(q->items);
}

static long pop(struct pc *q)
{
	long v;

	q->m->wait(q->items);
	pthread_mutex_lock(&q->mu);
	v = q->ring[q->head++ % QCAP];
	pthread_mutex_unlock(&q->mu);
	q->m->post(q->slots);
	return v;
}

struct worker {
	struct pc *q;
	int id;
	struct where where;
};

static void *producer(void *arg)
{
	struct worker *p = arg;
	struct pc *q = p->q;

	where_start(&p->where, false);
	while (!__atomic_load_n(&q->stop, __ATOMIC_RELAXED)) {
		push(q, 1);
		where_note(&p->where,
			   __atomic_load_n(&q->measuring, __ATOMIC_RELAXED));
	}
	where_stop(&p->where);
	return NULL;
}

static void *consumer(void *arg)
{
	struct worker *c = arg;
	struct pc *q = c->q;
	long n = 0;

	where_start(&c->where, false);
	while (pop(q) >= 0) {
		int measuring = __atomic_load_n(&q->measuring,
						__ATOMIC_RELAXED);

		if (measuring)
			n++;
		where_note(&c->where, measuring);
	}
	where_stop(&c->where);
	q->counts[c->id] = n;
	return NULL;
}

/* Where the producers and consumers of the last trial ran. */
static const char *pc_regime(const struct worker *ws, int n)
{
	const struct tcount **t;
	const char *regime;

	if (opt.cpus != PLACE_FREE)
		return placement_name(opt.cpus);
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		die("out of memory");
	for (int i = 0; i < n; i++)
		t[i] = &ws[i].where.tc;
	regime = regime_of_threads(t, (size_t)n);
	free(t);
	return regime;
}

void run_prodcons(void)
{
	const struct mech *sel[32];
	size_t nsel = 0;
	int np = opt.threads ? opt.threads : 2, nc = np;
	uint64_t window = trial_duration_ns();
	struct pc *q = calloc(1, sizeof(*q));
	pthread_t *tp = calloc((size_t)np, sizeof(*tp));
	pthread_t *tc = calloc((size_t)nc, sizeof(*tc));
	/* consumers first, then producers */
	struct worker *ws = calloc((size_t)(nc + np), sizeof(*ws));
	char series[32];

	if (!q || !tp || !tc || !ws)
		die("out of memory");
	nsel = mechs_select(MF_HANDOFF, sel, sizeof(sel) / sizeof(sel[0]));
	if (!window)
		window = opt.quick ? 30000000u : 150000000u;
	snprintf(series, sizeof(series), "p=%d c=%d", np, nc);
	scenario_refs("prodcons", "futex", "cond");
	for (int rep = 0; rep < opt.reps && nsel; rep++) {
		for (size_t k = 0; k < nsel; k++) {
			const struct mech *m = sel[(k + (size_t)rep) % nsel];
			double secs;
			double sum = 0, sq = 0, *v, *fair;
			struct window_counts wc = { 0 };
			struct trial t;

			progress("prodcons: rep %d/%d %s", rep + 1, opt.reps,
				 m->name);
			memset(q, 0, sizeof(*q));
			q->m = m;
			q->slots = chan_new(m);
			q->items = chan_new(m);
			pthread_mutex_init(&q->mu, NULL);
			for (int i = 0; i < QCAP; i++)
				m->post(q->slots);
			for (int i = 0; i < nc; i++) {
				ws[i] = (struct worker){ .q = q, .id = i };
				tc[i] = spawn(consumer, &ws[i],
					      place_cpu(false));
			}
			for (int i = 0; i < np; i++) {
				ws[nc + i] = (struct worker){ .q = q, .id = i };
				tp[i] = spawn(producer, &ws[nc + i],
					      place_cpu(true));
			}
			secs = window_run(&q->measuring, window);
			__atomic_store_n(&q->stop, 1, __ATOMIC_RELAXED);
			for (int i = 0; i < np; i++)
				pthread_join(tp[i], NULL);
			for (int i = 0; i < nc; i++)
				push(q, -1);
			for (int i = 0; i < nc; i++)
				pthread_join(tc[i], NULL);
			chan_free(m, q->slots);
			chan_free(m, q->items);
			pthread_mutex_destroy(&q->mu);
			for (int i = 0; i < nc; i++) {
				sum += (double)q->counts[i];
				sq += (double)q->counts[i] * (double)q->counts[i];
			}
			for (int i = 0; i < nc + np; i++)
				window_counts_add(&wc, &ws[i].where);
			window_counts_per_op(&wc, sum);
			v = alloc_samples(1);
			fair = alloc_samples(1);
			v[0] = sum / secs;
			fair[0] = sq > 0 ? sum * sum / ((double)nc * sq) : NAN;
			memset(&t, 0, sizeof(t));
			t.scenario = "prodcons";
			t.metric = "throughput";
			t.unit = "items/s";
			snprintf(t.series, sizeof(t.series), "%s", series);
			t.mech = m->name;
			t.regime = pc_regime(ws, nc + np);
			t.rep = rep;
			t.v = v;
			t.n = 1;
			t.csw = t.fwake = t.fwait = NAN;
			/* Per item, over the window. */
			t.cpu = wc.cpu;
			t.cpu_known = true;
			trial_add(&t);
			t.metric = "fairness";
			t.unit = "index";
			t.v = fair;
			t.cpu = NAN;
			trial_add(&t);
		}
	}
	free(q);
	free(tp);
	free(tc);
	free(ws);
}
