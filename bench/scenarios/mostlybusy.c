// SPDX-License-Identifier: MIT
/*
 * mostlybusy.c - one producer that wakes after every push, and workers
 * that are usually busy: most wakes find nobody asleep.
 *
 * This is the common shape of a work queue: the producer cannot know
 * whether a worker sleeps, so it calls the wake after every push, and
 * while the workers keep up with the work nobody does.  The wake's cost
 * with nobody waiting is then paid on every item (nowaiter measures that
 * call alone); here it is measured in place, beside the work it delays.
 *
 * The queue, the same for every mechanism: two 32-bit counters, tail
 * (items pushed, written only by the producer, a plain release store) and
 * head (items claimed, compare-and-swap by the workers).  An item is the
 * right to do one unit of work: a calibrated busy loop of about 300 ns
 * (a volatile counter, the same iterations for every mechanism).  The
 * producer keeps the queue between LO and HI items deep: when it is below
 * LO it pushes, with a wake after each push, until it holds HI; otherwise
 * it yields the CPU.  So the workers are usually busy and a wake finds a
 * sleeper only when the queue ran dry.  A worker that finds it empty calls
 * the mechanism's wait, which returns once the worker claimed an item.
 * HI is 4096 items per worker, over a millisecond of work: with every
 * thread on one CPU (--cpus same) the workers run while the producer
 * does not, and a shallower queue runs dry within their time slice; the
 * producer's next wake then finds a sleeper, which preempts it, and the
 * trial turns into a ping-pong of one item per wake.
 *
 * Per trial: items per second over a measured window after a warm-up; the
 * producer's time per push and wake (one sample per refill: its time over
 * its pushes, so the two clock reads are shared by at least HI - LO
 * pushes); the fraction of items for which a worker found the queue empty
 * and had to wait (an upper bound on the wakes that found a sleeper; with
 * --count-futex, FUTEX_WAKE calls per item count them where the mechanism
 * makes one only for a sleeper); and context switches per item, producer
 * and workers.
 *
 * The mechanisms are wake/wait pairs on that queue: swait, cond (mutex
 * and condition variable, the signal under the mutex: the condition is
 * lock-free, so a wake without the mutex could fall between a worker's
 * test and its sleep), futex-sleeper (the lower bound: FUTEX_WAKE only
 * when the sleeper count says so), the peers (peers.h, cwake/cwait), and
 * swait-asym.
 *
 * swait-asym: the same swait_event() and swait_wake_one() on a head made
 * by swait_head_init_asym().  swait_wake_one() on an ordinary empty head
 * costs a full fence and a load: the fence orders the caller's store of
 * its condition before the load of the queue, and pairs with the fence
 * that ends swait_prepare().  Here the producer pays it on every push.  An
 * asymmetric head moves that cost to the sleeper, the side that is about
 * to spend microseconds in the kernel anyway, with membarrier(2)
 * (lib/asym.c, O1a, has the argument: liburcu's membarrier flavour and the
 * membarrier(2) man page's example).  Where membarrier is missing,
 * swait-asym is dropped with a message.
 *
 * The question this answers: does removing the fence from the producer
 * gain 20 % items per second?  Read the "x swait" ratio of swait-asym's
 * throughput row.  The price, one membarrier per sleep, is measured as
 * its own row (membarrier_call): a thread calls it in a loop while the
 * producer's and the other workers' places are taken by busy threads, as
 * in a trial, so the IPIs go where a real sleeper's would.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mostlybusy.h"

/* The work of one item; volatile, so the loop cannot be folded away. */
static void work(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x = x + 1;
}

/* Iterations of work() that take target_ns here: the best of 5 runs. */
static unsigned long calibrate(uint64_t target_ns)
{
	const unsigned long n = 100000;
	uint64_t best = UINT64_MAX;

	work(n);
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = now_ns(), t;

		work(n);
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	if (best == 0)
		best = 1;
	return n * target_ns / best > 0 ? n * target_ns / best : 1;
}


/* ---------------------------------------------------------------- threads */

static void *mb_producer(void *arg)
{
	struct mb *q = arg;
	const struct mb_mech *m = q->m;
	uint32_t t = 0;

	where_start(&q->pwhere, q->tracepoint);
	while (!__atomic_load_n(&q->stop, __ATOMIC_RELAXED)) {
		/* head never passes our tail t. */
		uint32_t depth = t - __atomic_load_n(&q->head,
						     __ATOMIC_RELAXED);
		uint64_t t0, t1;
		int measuring;

		if (depth >= q->lo) {
			sched_yield();
			continue;
		}
		measuring = __atomic_load_n(&q->measuring, __ATOMIC_RELAXED);
		t0 = now_ns();
		for (uint32_t i = depth; i < q->hi; i++) {
			/* Release: pairs with mb_claim()'s acquire. */
			__atomic_store_n(&q->tail, ++t, __ATOMIC_RELEASE);
			m->wake(q);
		}
		t1 = now_ns();
		if (measuring && q->npush < MB_SAMPLES)
			q->push_ns[q->npush++] = (double)(t1 - t0) /
						 (double)(q->hi - depth);
		/* A refill is thousands of items: check the CPU each time. */
		if (opt.cpus == PLACE_FREE && q->pwhere.in_window &&
		    !q->pwhere.ended)
			tcount_check_cpu(&q->pwhere.tc);
		where_note(&q->pwhere, measuring);
	}
	/*
	 * One more item per worker, each ending one worker: a worker leaves
	 * at the first item it claims once it sees stop_workers, and every
	 * item pushed after this store makes it visible (release).
	 */
	__atomic_store_n(&q->stop_workers, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < q->nw; i++) {
		__atomic_store_n(&q->tail, ++t, __ATOMIC_RELEASE);
		m->wake(q);
	}
	where_stop(&q->pwhere);
	return NULL;
}

static void *mb_worker(void *arg)
{
	struct mb_worker *w = arg;
	struct mb *q = w->q;
	const struct mb_mech *m = q->m;

	where_start(&w->where, q->tracepoint);
	for (;;) {
		bool waited = false;
		int measuring;

		if (!mb_claim(q)) {
			m->wait(q);
			waited = true;
		}
		/* mb_claim()'s acquire orders this after the producer's store. */
		if (__atomic_load_n(&q->stop_workers, __ATOMIC_RELAXED))
			break;
		work(q->spin);
		measuring = __atomic_load_n(&q->measuring, __ATOMIC_RELAXED);
		if (measuring) {
			w->items++;
			w->waits += waited;
		}
		where_note(&w->where, measuring);
	}
	where_stop(&w->where);
	return NULL;
}

/* What one trial measured. */
struct mb_result {
	double per_s, waits;
	struct window_counts c;	/* per item */
	long items;
	const char *regime;
};

/* One trial: fresh threads and mechanism state; the samples in q. */
static void mb_trial(struct mb *q, struct mb_worker *ws, pthread_t *tid,
		     uint64_t window, struct mb_result *r)
{
	const struct tcount **tc;
	double items = 0, waits = 0, secs;
	struct window_counts c = { 0 };
	pthread_t prod;

	rt_window_keeper(true);
	q->tail = q->head = 0;
	q->measuring = q->stop = q->stop_workers = 0;
	q->npush = 0;
	q->m->setup(q);
	for (int i = 0; i < q->nw; i++) {
		memset(&ws[i], 0, sizeof(ws[i]));
		ws[i].q = q;
		tid[i] = spawn(mb_worker, &ws[i], place_cpu(false));
	}
	prod = spawn(mb_producer, q, place_cpu(true));
	secs = window_run(&q->measuring, window);
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELAXED);
	pthread_join(prod, NULL);
	for (int i = 0; i < q->nw; i++)
		pthread_join(tid[i], NULL);
	q->m->teardown(q);
	rt_window_keeper(false);

	tc = calloc((size_t)q->nw + 1, sizeof(*tc));
	if (!tc)
		die("out of memory");
	for (int i = 0; i <= q->nw; i++) {
		const struct where *w = i < q->nw ? &ws[i].where : &q->pwhere;

		tc[i] = &w->tc;
		if (i < q->nw) {
			items += (double)ws[i].items;
			waits += (double)ws[i].waits;
		}
		window_counts_add(&c, w);
	}
	r->regime = regime_of_threads(tc, (size_t)q->nw + 1);
	free(tc);
	r->items = (long)items;
	r->per_s = items / secs;
	r->waits = items > 0 ? waits / items : NAN;
	window_counts_per_op(&c, items);
	r->c = c;
}

/* ------------------------------------------------------ membarrier's cost */

/*
 * The sleeper's extra cost in swait-asym.  One thread calls membarrier in
 * batches of MP_BATCH while busy threads stand where the producer and the
 * other workers of a trial run, so the call interrupts the CPUs a real
 * sleeper's would.  The busy threads yield every few microseconds, so
 * that on one CPU (or under --rt) the measuring thread runs too.
 */
struct mp {
	unsigned long spin;
	long batches;
	double *v;
	int stop, running, nbusy;
	struct tcount *tc;	/* [0]: the measuring thread */
};

struct mp_arg {
	struct mp *p;
	struct tcount *tc;
};

static void *mp_busy(void *arg)
{
	struct mp_arg *a = arg;
	struct mp *p = a->p;

	tcount_tracepoint(a->tc, false);
	tcount_begin(a->tc);
	__atomic_fetch_add(&p->running, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		for (int i = 0; i < 32; i++)
			work(p->spin);
		tcount_check_cpu(a->tc);
		sched_yield();
	}
	tcount_end(a->tc);
	return NULL;
}

static void *mp_measure(void *arg)
{
	struct mp_arg *a = arg;
	struct mp *p = a->p;

	tcount_tracepoint(a->tc, false);
	while (__atomic_load_n(&p->running, __ATOMIC_RELAXED) < p->nbusy)
		sched_yield();
	for (int i = 0; i < MP_BATCH; i++)
		(void)mb_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	tcount_begin(a->tc);
	for (long b = 0; b < p->batches; b++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < MP_BATCH; i++)
			if (mb_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
				die("mostlybusy: membarrier: %s",
				    strerror(errno));
		p->v[b] = (double)(now_ns() - t0) / MP_BATCH;
		work_done(1);
		tcount_check_cpu(a->tc);
	}
	tcount_end(a->tc);
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void mp_trial(int nw, unsigned long spin, int rep, const char *series)
{
	struct mp p = { .spin = spin, .nbusy = nw };
	struct mp_arg *a = calloc((size_t)nw + 1, sizeof(*a));
	pthread_t *tid = calloc((size_t)nw + 1, sizeof(*tid));
	const struct tcount **tcp = calloc((size_t)nw + 1, sizeof(*tcp));
	struct trial t;

	p.tc = calloc((size_t)nw + 1, sizeof(*p.tc));
	if (!a || !tid || !tcp || !p.tc)
		die("out of memory");
	p.batches = opt.quick ? 30 : 100;
	p.v = alloc_samples((size_t)p.batches);
	for (int i = 0; i <= nw; i++) {
		a[i] = (struct mp_arg){ .p = &p, .tc = &p.tc[i] };
		tcp[i] = &p.tc[i];
	}
	/* The producer's place, then the other workers'. */
	tid[1] = spawn(mp_busy, &a[1], place_cpu(true));
	for (int i = 2; i <= nw; i++)
		tid[i] = spawn(mp_busy, &a[i], place_cpu(false));
	tid[0] = spawn(mp_measure, &a[0], place_cpu(false));
	for (int i = 0; i <= nw; i++)
		pthread_join(tid[i], NULL);
	memset(&t, 0, sizeof(t));
	t.scenario = "mostlybusy";
	t.metric = "membarrier_call";
	t.unit = "ns";
	snprintf(t.series, sizeof(t.series), "%s", series);
	t.mech = "swait-asym";
	t.regime = regime_of_threads(tcp, (size_t)nw + 1);
	t.rep = rep;
	t.v = p.v;
	t.n = (size_t)p.batches;
	t.csw = t.fwake = t.fwait = NAN;
	/* The measuring thread's own, per call (a sample is MP_BATCH). */
	t.cpu = p.batches > 0 ?
		p.tc[0].cpu_ns / ((double)p.batches * MP_BATCH) : NAN;
	t.cpu_known = true;
	trial_add(&t);
	free(a);
	free(tid);
	free(tcp);
	free(p.tc);
}

/*
 * Register for MEMBARRIER_CMD_PRIVATE_EXPEDITED; NULL when done, else why
 * not.  Registration lasts for the life of the process, which is why this
 * scenario runs last.
 */
static const char *membarrier_register(void)
{
	int cmds = mb_membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds < 0)
		return strerror(errno);
	if (!(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return "MEMBARRIER_CMD_PRIVATE_EXPEDITED is not supported";
	if (mb_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
		return strerror(errno);
	return NULL;
}

/* ------------------------------------------------------------------ driver */

static void mb_add(const char *metric, const char *unit, const char *series,
		   const struct mb_mech *m, int rep, const char *regime,
		   double *v, size_t n, double csw, double fwake,
		   double fwait, double cpu)
{
	struct trial t;

	memset(&t, 0, sizeof(t));
	t.scenario = "mostlybusy";
	t.metric = metric;
	t.unit = unit;
	snprintf(t.series, sizeof(t.series), "%s", series);
	t.mech = m->name;
	t.regime = regime;
	t.rep = rep;
	t.v = v;
	t.n = n;
	t.csw = csw;
	t.fwake = fwake;
	t.fwait = fwait;
	t.cpu = cpu;
	t.cpu_known = true;
	trial_add(&t);
}

static double *one(double x)
{
	double *v = alloc_samples(1);

	v[0] = x;
	return v;
}

void run_mostlybusy(void)
{
	const struct mech *peers[8];
	struct mb_mech peer_mb[8];
	const struct mb_mech *sel[16];
	size_t nsel = 0, npeers;
	int nw = opt.threads ? opt.threads : 2;
	uint64_t window = trial_duration_ns();
	struct mb *q = aligned_alloc(64, sizeof(*q));
	struct mb_worker *ws = aligned_alloc(64, (size_t)nw * sizeof(*ws));
	pthread_t *tid = calloc((size_t)nw, sizeof(*tid));
	struct mb_result r;
	char series[32];
	const char *why;

	if (!q || !ws || !tid)
		die("out of memory");
	for (size_t i = 0; i < mb_nmechs && nsel < 8; i++) {
		if (!mech_selected(mb_mechs[i].name))
			continue;
		if (!strcmp(mb_mechs[i].name, "swait-asym") &&
		    (why = membarrier_register()) != NULL) {
			fprintf(stderr, "swait-bench: mostlybusy: swait-asym "
				"dropped: membarrier(MEMBARRIER_CMD_PRIVATE_"
				"EXPEDITED) unavailable (%s)\n", why);
			continue;
		}
		sel[nsel++] = &mb_mechs[i];
	}
	npeers = mechs_select(MF_PEER, peers, 8);
	for (size_t i = 0; i < npeers; i++) {
		peer_mb[i] = mb_peer(peers[i]);
		sel[nsel++] = &peer_mb[i];
	}
	if (nsel == 0)
		goto out;
	memset(q, 0, sizeof(*q));
	q->nw = nw;
	q->hi = MB_DEPTH * (uint32_t)nw;
	q->lo = q->hi / 2;
	q->spin = calibrate(MB_WORK_NS);
	/* About 4 s in the default run (7 mechanisms, 5 reps), 1 s quick. */
	if (!window)
		window = opt.quick ? 30000000u : 100000000u;
	snprintf(series, sizeof(series), "w=%d work=%dns", nw, MB_WORK_NS);
	scenario_refs("mostlybusy", "swait", "cond");
	for (int rep = 0; rep < opt.reps; rep++) {
		for (size_t k = 0; k < nsel; k++) {
			const struct mb_mech *m = sel[(k + (size_t)rep) % nsel];
			double fw = NAN, fs = NAN;

			progress("mostlybusy: rep %d/%d %s", rep + 1, opt.reps,
				 m->name);
			q->m = m;
			q->push_ns = alloc_samples(MB_SAMPLES);
			mb_trial(q, ws, tid, window, &r);
			if (m->own_futex_count) {
				fw = r.c.fwake;
				fs = r.c.fwait;
			}
			mb_add("throughput", "items/s", series, m, rep,
			       r.regime, one(r.per_s), 1, r.c.csw, fw, fs,
			       r.c.cpu);
			if (q->npush)
				mb_add("push_wake", "ns", series, m, rep,
				       r.regime, q->push_ns, q->npush, NAN,
				       NAN, NAN, NAN);
			else
				free(q->push_ns);
			if (!isnan(r.waits))
				mb_add("empty_waits", "fraction", series, m,
				       rep, r.regime, one(r.waits), 1, NAN,
				       NAN, NAN, NAN);
			if (!strcmp(m->name, "swait-asym")) {
				progress("mostlybusy: rep %d/%d membarrier",
					 rep + 1, opt.reps);
				mp_trial(nw, q->spin, rep, series);
			}
		}
	}
	if (!opt.count_futex || !futex_tracepoint_available(&why))
		goto out;
	/* A separate, untimed run per mechanism, under the tracepoint. */
	q->tracepoint = true;
	for (size_t k = 0; k < nsel; k++) {
		progress("mostlybusy: counting futex calls, %s", sel[k]->name);
		q->m = sel[k];
		q->push_ns = alloc_samples(MB_SAMPLES);
		mb_trial(q, ws, tid, window, &r);
		free(q->push_ns);
		counts_set("mostlybusy", series, sel[k]->name, r.c.tp_wake,
			   r.c.tp_wait);
	}
	q->tracepoint = false;
out:
	free(q);
	free(ws);
	free(tid);
}
