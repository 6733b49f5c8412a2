// SPDX-License-Identifier: MIT
/*
 * broadcast.c - one wake-all for N sleeping waiters.
 *
 * Before each round the waker checks that every waiter is really asleep:
 * each one has said it is about to wait, and its thread is in state S in
 * /proc/self/task/TID/stat.  Only then does the waker read the clock and
 * wake them all.  Each waiter stamps the clock when its wait returns; a round
 * gives the time to the first and to the last waiter running, and the
 * waker's own time in the wake call.  Round 0 is a warm-up.
 *
 * Under --cpus free every thread notes its CPU when the measured rounds
 * begin, after each wake (the waker) or each wait returning (a waiter),
 * and at the end; a trial is labelled as pingpong's are (regime_of_threads).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <swait.h>

#include "bench.h"
#include "swait/cond.h"

struct bc;

struct bc_mech {
	const char *name;
	void (*wait)(struct bc *b, uint32_t round);
	void (*wake)(struct bc *b, uint32_t round);
	const struct mech *peer;	/* a peer's bwait/bwake on b->pc */
};

struct bc_waiter {
	struct bc *b;
	pid_t tid;
	uint32_t ready;		/* round it is about to wait for, plus 1 */
	uint64_t *stamp;	/* per round */
	struct tcount tc;	/* its CPUs over the measured rounds */
};

struct bc {
	const struct bc_mech *m;
	uint32_t gen;		/* rounds released */
	uint32_t done;		/* waiters that stamped, all rounds */
	struct swait_head head;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	swait_cond_t scv;
	struct chan *pc;	/* a peer's channel */
	int n, rounds;
	struct bc_waiter *w;
	bool tracepoint;	/* count the waker's futex calls */
	struct tcount tc;
	struct tcount wk;	/* the waker's CPUs over the measured rounds */
};

static uint32_t gen_acquire(struct bc *b)
{
	return __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
}

static void swait_bwait(struct bc *b, uint32_t r)
{
	spin_as(false);
	swait_event(&b->head, gen_acquire(b) > r);
}

static void swait_bwake(struct bc *b, uint32_t r)
{
	__atomic_store_n(&b->gen, r + 1, __ATOMIC_RELEASE);
	swait_wake_all(&b->head);
}

static void nospin_bwait(struct bc *b, uint32_t r)
{
	spin_as(true);
	swait_event(&b->head, gen_acquire(b) > r);
}

static void cond_bwait(struct bc *b, uint32_t r)
{
	pthread_mutex_lock(&b->mu);
	while (b->gen <= r)
		pthread_cond_wait(&b->cv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

static void cond_bwake(struct bc *b, uint32_t r)
{
	pthread_mutex_lock(&b->mu);
	b->gen = r + 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* The cond code again, on libswait's condvar face. */
static void scond_bwait(struct bc *b, uint32_t r)
{
	pthread_mutex_lock(&b->mu);
	while (b->gen <= r)
		swait_cond_wait(&b->scv, &b->mu);
	pthread_mutex_unlock(&b->mu);
}

static void scond_bwake(struct bc *b, uint32_t r)
{
	pthread_mutex_lock(&b->mu);
	b->gen = r + 1;
	swait_cond_broadcast(&b->scv);
	pthread_mutex_unlock(&b->mu);
}

static void futex_bwait(struct bc *b, uint32_t r)
{
	uint32_t g;

	while ((g = gen_acquire(b)) <= r)
		bench_futex_wait(&b->gen, g, CLOCK_MONOTONIC, NULL);
}

static void futex_bwake(struct bc *b, uint32_t r)
{
	__atomic_store_n(&b->gen, r + 1, __ATOMIC_RELEASE);
	bench_futex_wake(&b->gen, INT_MAX);
}

static void peer_bwait(struct bc *b, uint32_t r)
{
	b->m->peer->bwait(b->pc, r);
}

static void peer_bwake(struct bc *b, uint32_t r)
{
	b->m->peer->bwake(b->pc, r);
}

static const struct bc_mech bc_mechs[] = {
	{ .name = "swait", .wait = swait_bwait, .wake = swait_bwake },
	{ .name = "swait-nospin", .wait = nospin_bwait, .wake = swait_bwake },
	{ .name = "cond", .wait = cond_bwait, .wake = cond_bwake },
	{ .name = "swait-cond", .wait = scond_bwait, .wake = scond_bwake },
	{ .name = "futex", .wait = futex_bwait, .wake = futex_bwake },
};

static void *bc_thread(void *arg)
{
	struct bc_waiter *w = arg;
	struct bc *b = w->b;

	w->tid = (pid_t)syscall(SYS_gettid);
	tcount_tracepoint(&w->tc, false);
	for (int r = 0; r < b->rounds; r++) {
		if (r == 1)
			tcount_begin(&w->tc);	/* after the warm-up */
		__atomic_store_n(&w->ready, (uint32_t)r + 1, __ATOMIC_RELEASE);
		b->m->wait(b, (uint32_t)r);
		w->stamp[r] = now_ns();
		if (r >= 1 && opt.cpus == PLACE_FREE)
			tcount_check_cpu(&w->tc);
		__atomic_fetch_add(&b->done, 1, __ATOMIC_RELEASE);
	}
	tcount_end(&w->tc);
	return NULL;
}

/* The state letter of a thread of ours, or '?' */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* Wait until every waiter announced round r and sleeps; false on timeout. */
static bool all_asleep(struct bc *b, uint32_t r)
{
	uint64_t give_up = now_ns() + 5000000000u;
	int i = 0;

	while (i < b->n) {
		struct bc_waiter *w = &b->w[i];

		if (__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE) == r + 1 &&
		    __atomic_load_n(&w->tid, __ATOMIC_RELAXED) != 0 &&
		    thread_state(w->tid) == 'S') {
			i++;
			continue;
		}
		if (now_ns() > give_up)
			return false;
		usleep(50);
	}
	return true;
}

struct bc_out {
	double *first, *last, *waker;
	int kept;
	bool unverified;
};

struct bc_run {
	struct bc *b;
	struct bc_out *o;
};

/* The waker, a thread of its own so that placement applies to it. */
static void *bc_waker(void *arg)
{
	struct bc *b = ((struct bc_run *)arg)->b;
	struct bc_out *o = ((struct bc_run *)arg)->o;

	o->kept = 0;
	tcount_tracepoint(&b->wk, false);
	tcount_tracepoint(&b->tc, b->tracepoint);
	b->tc.tp_wake = b->tc.tp_all = 0;
	for (int r = 0; r < b->rounds; r++) {
		uint64_t t0, t1, lo = UINT64_MAX, hi = 0;
		struct tcount tc = b->tc;

		if (r == 1)
			tcount_begin(&b->wk);	/* after the warm-up */
		if (!all_asleep(b, (uint32_t)r))
			o->unverified = true;
		if (b->tracepoint)
			tcount_begin(&tc);	/* only around the wake */
		t0 = now_ns();
		b->m->wake(b, (uint32_t)r);
		t1 = now_ns();
		if (r >= 1 && opt.cpus == PLACE_FREE)
			tcount_check_cpu(&b->wk);
		if (b->tracepoint) {
			tcount_end(&tc);
			/* Round 0 warms up (and teaches swait, W4). */
			if (tc.tp_wake > 0 && r >= 1)
				b->tc.tp_wake += tc.tp_wake;
		}
		while (__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) <
		       (uint32_t)(b->n * (r + 1)))
			sched_yield();
		work_done(1);
		for (int i = 0; i < b->n; i++) {
			uint64_t s = b->w[i].stamp[r];

			lo = s < lo ? s : lo;
			hi = s > hi ? s : hi;
		}
		if (r == 0)
			continue;	/* warm-up */
		o->first[o->kept] = (double)(lo - t0);
		o->last[o->kept] = (double)(hi - t0);
		o->waker[o->kept] = (double)(t1 - t0);
		o->kept++;
	}
	tcount_end(&b->wk);
	tcount_close(&b->tc);
	return NULL;
}

/* Where the waker and the waiters of the last trial ran. */
static const char *bc_regime(const struct bc *b)
{
	const struct tcount **t;
	const char *regime;

	if (opt.cpus != PLACE_FREE)
		return placement_name(opt.cpus);
	t = calloc((size_t)b->n + 1, sizeof(*t));
	if (!t)
		die("out of memory");
	t[0] = &b->wk;
	for (int i = 0; i < b->n; i++)
		t[i + 1] = &b->w[i].tc;
	regime = regime_of_threads(t, (size_t)b->n + 1);
	free(t);
	return regime;
}

static void bc_trial(struct bc *b, struct bc_out *o)
{
	pthread_t *t = calloc((size_t)b->n, sizeof(*t));
	struct bc_run run = { b, o };

	if (!t)
		die("out of memory");
	b->gen = 0;
	b->done = 0;
	swait_head_init(&b->head);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	swait_cond_init(&b->scv, NULL);
	b->pc = b->m->peer ? chan_new(b->m->peer) : NULL;
	for (int i = 0; i < b->n; i++) {
		b->w[i].b = b;
		b->w[i].tid = 0;
		b->w[i].ready = 0;
		t[i] = spawn(bc_thread, &b->w[i], place_cpu(false));
	}
	pthread_join(spawn(bc_waker, &run, place_cpu(true)), NULL);
	for (int i = 0; i < b->n; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (b->pc)
		chan_free(b->m->peer, b->pc);
	pthread_cond_destroy(&b->cv);
	if (swait_cond_destroy(&b->scv) != 0)
		die("swait_cond busy at teardown");
	pthread_mutex_destroy(&b->mu);
}

static void bc_add(const char *metric, const char *mech, const char *series,
		   const char *regime, int rep, double *v, int n)
{
	struct trial t;

	memset(&t, 0, sizeof(t));
	t.scenario = "broadcast";
	t.metric = metric;
	t.unit = "ns";
	snprintf(t.series, sizeof(t.series), "%s", series);
	t.mech = mech;
	t.regime = regime;
	t.rep = rep;
	t.v = v;
	t.n = (size_t)n;
	t.csw = t.fwake = t.fwait = NAN;
	trial_add(&t);
}

void run_broadcast(void)
{
	static const int ns_default[] = { 1, 8, 64, 256 };
	int ns[4], nn = 0;
	const struct mech *peers[8];
	struct bc_mech peer_bc[8];
	const struct bc_mech *sel[16];
	size_t nsel = 0, npeers;
	struct bc b;
	bool unverified = false;

	for (size_t i = 0; i < sizeof(bc_mechs) / sizeof(bc_mechs[0]); i++)
		if (mech_selected(bc_mechs[i].name))
			sel[nsel++] = &bc_mechs[i];
	npeers = mechs_select(MF_PEER, peers, 8);
	for (size_t i = 0; i < npeers; i++) {
		peer_bc[i] = (struct bc_mech){ .name = peers[i]->name,
					       .wait = peer_bwait,
					       .wake = peer_bwake,
					       .peer = peers[i] };
		sel[nsel++] = &peer_bc[i];
	}
	if (nsel == 0)
		return;
	scenario_refs("broadcast", "cond", "futex");
	if (opt.threads)
		ns[nn++] = opt.threads;
	else
		for (int i = 0; i < 4; i++)
			ns[nn++] = ns_default[i];
	memset(&b, 0, sizeof(b));
	b.rounds = 1 + (int)trial_iterations(10, 3);
	for (int in = 0; in < nn; in++) {
		char series[32];

		b.n = ns[in];
		snprintf(series, sizeof(series), "n=%d", b.n);
		b.w = calloc((size_t)b.n, sizeof(*b.w));
		if (!b.w)
			die("out of memory");
		for (int i = 0; i < b.n; i++)
			b.w[i].stamp = alloc_samples((size_t)b.rounds);
		for (int rep = 0; rep < opt.reps; rep++) {
			for (size_t k = 0; k < nsel; k++) {
				struct bc_out o;
				const char *regime;

				b.m = sel[(k + (size_t)rep) % nsel];
				progress("broadcast: %s rep %d/%d %s", series,
					 rep + 1, opt.reps, b.m->name);
				o.first = alloc_samples((size_t)b.rounds);
				o.last = alloc_samples((size_t)b.rounds);
				o.waker = alloc_samples((size_t)b.rounds);
				o.unverified = false;
				bc_trial(&b, &o);
				unverified |= o.unverified;
				regime = bc_regime(&b);
				bc_add("first_running", b.m->name, series,
				       regime, rep, o.first, o.kept);
				bc_add("last_running", b.m->name, series,
				       regime, rep, o.last, o.kept);
				bc_add("waker_call", b.m->name, series,
				       regime, rep, o.waker, o.kept);
			}
		}
		for (size_t k = 0; opt.count_futex &&
		     futex_tracepoint_available(NULL) && k < nsel; k++) {
			struct bc_out o;

			/* A separate, untimed trial under the tracepoint. */
			b.m = sel[k];
			b.tracepoint = true;
			progress("broadcast: %s counting futex calls, %s",
				 series, b.m->name);
			o.first = alloc_samples((size_t)b.rounds);
			o.last = alloc_samples((size_t)b.rounds);
			o.waker = alloc_samples((size_t)b.rounds);
			bc_trial(&b, &o);
			counts_set("broadcast", series, b.m->name,
				   (double)b.tc.tp_wake / (b.rounds - 1), NAN);
			b.tracepoint = false;
			free(o.first);
			free(o.last);
			free(o.waker);
		}
		for (int i = 0; i < b.n; i++)
			free(b.w[i].stamp);
		free(b.w);
	}
	if (unverified)
		fprintf(stderr, "swait-bench: broadcast: some waiters were not "
			"seen asleep within 5 s; those rounds ran anyway\n");
}
