// SPDX-License-Identifier: MIT
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tu_stress.h"

static struct tu_thread slots[TU_MAX_THREADS];
static int nslots;
static long progress_extra;
static void (*extra_describe)(FILE *out);
static const char *test_what;
static long tick_last;		/* progress at the last re-arm */
static long long tick_checked;	/* when tu_tick() last looked */
static uint64_t seed_base;	/* SWAIT_STRESS_SEED */

static void describe(FILE *out)
{
	int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);

	fprintf(out, "threads (%d):\n", n);
	for (int i = 0; i < n; i++) {
		struct tu_thread *t = &slots[i];
		const char *ph = __atomic_load_n(&t->phase, __ATOMIC_ACQUIRE);

		fprintf(out, "  %s %d: %s, count %ld, aux %ld%s\n",
			t->role, t->idx, ph ? ph : "(not started)",
			TU_LOAD(&t->count), TU_LOAD(&t->aux),
			__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) ?
			" [exited]" : "");
		if (!__atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&t->ktid, __ATOMIC_RELAXED))
			tu_task_describe(out, __atomic_load_n(&t->ktid,
							      __ATOMIC_RELAXED));
	}
	if (extra_describe)
		extra_describe(out);
	fprintf(out, "replay the random choices with SWAIT_STRESS_SEED=%llu\n",
		(unsigned long long)__atomic_load_n(&seed_base,
						    __ATOMIC_RELAXED));
}

void tu_stress_main(int argc, char **argv)
{
	const char *s = getenv("SWAIT_STRESS_SCALE");
	const char *d = getenv("SWAIT_TEST_SLOWDOWN");

	printf("# SWAIT_STRESS_SCALE=%s SWAIT_TEST_SLOWDOWN=%s\n",
	       s ? s : "(1)", d ? d : "(1)");
	fflush(stdout);
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
}

/*
 * A crash in a worker thread (cmocka's own handler only knows the main
 * thread) says which thread died in which phase before the process dies.
 * Not async-signal-safe; the process is lost anyway.
 */
static void on_crash(int sig)
{
	int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);
	const char *who = "the main thread";
	int idx = -1;

	for (int i = 0; i < n; i++) {
		if (slots[i].tid && pthread_equal(slots[i].tid, pthread_self())) {
			who = slots[i].role;
			idx = slots[i].idx;
		}
	}
	fprintf(stderr, "CRASH: signal %d (%s) in %s %d during %s\n", sig,
		strsignal(sig), who, idx, test_what ? test_what : "a test");
	describe(stderr);
	fflush(stderr);
	signal(sig, SIG_DFL);
	raise(sig);
}

void tu_begin(const char *what, void (*extra)(FILE *out))
{
	static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL,
					     SIGFPE, SIGABRT };

	/* Workers of the previous test were all joined: no concurrent use. */
	memset(slots, 0, sizeof(slots));
	__atomic_store_n(&nslots, 0, __ATOMIC_RELEASE);
	extra_describe = extra;
	test_what = what;
	tick_last = 0;
	tick_checked = tu_now_ns();
	(void)tu_seed(0);	/* picks and prints the seed before any thread */
	for (size_t i = 0; i < sizeof(crash_signals) / sizeof(int); i++)
		signal(crash_signals[i], on_crash);
	tu_watchdog_arm(TU_STALL_SECONDS, what, describe);
}

void tu_end(void)
{
	tu_watchdog_disarm();
}

struct tu_thread *tu_slot(const char *role, int idx)
{
	struct tu_thread *t;

	if (nslots >= TU_MAX_THREADS) {
		fprintf(stderr, "tu_stress: more than %d threads\n",
			TU_MAX_THREADS);
		abort();
	}
	t = &slots[nslots];
	memset(t, 0, sizeof(*t));
	t->role = role;
	t->idx = idx;
	t->phase = "created";
	/* Monitoring state, read racily (atomically) by design. */
	tu_sync_var(t, sizeof(*t));
	/* Release: describe() reads the slot only after seeing the count. */
	__atomic_store_n(&nslots, nslots + 1, __ATOMIC_RELEASE);
	return t;
}

void tu_thread_exit(struct tu_thread *t)
{
	tu_phase(t, "exited");
	__atomic_store_n(&t->exited, 1, __ATOMIC_RELEASE);
}

void tu_progress(void)
{
	__atomic_fetch_add(&progress_extra, 1, __ATOMIC_RELAXED);
}

static long progress_now(void)
{
	int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);
	long sum = __atomic_load_n(&progress_extra, __ATOMIC_RELAXED);

	for (int i = 0; i < n; i++)
		sum += TU_LOAD(&slots[i].count) + TU_LOAD(&slots[i].aux) +
		       __atomic_load_n(&slots[i].exited, __ATOMIC_RELAXED);
	return sum;
}

void tu_tick(void)
{
	long now;

	if (tu_now_ns() - tick_checked < 50 * 1000000LL)
		return;
	now = progress_now();
	if (now != tick_last) {
		/* Moving: a stall is measured from here. */
		tu_watchdog_arm(TU_STALL_SECONDS, test_what, describe);
		tick_last = now;
	}
	tick_checked = tu_now_ns();
}

void tu_wait(bool (*done)(void *arg), void *arg)
{
	unsigned polls = 0;

	while (!done(arg)) {
		/* Yield first: most checkpoints settle within microseconds. */
		if (++polls < 64) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 200 * 1000 };

			nanosleep(&ts, NULL);
		}
		tu_tick();
	}
	tu_progress();
}

static bool all_exited(void *arg)
{
	int n = __atomic_load_n(&nslots, __ATOMIC_ACQUIRE);

	(void)arg;
	for (int i = 0; i < n; i++)
		if (!__atomic_load_n(&slots[i].exited, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static bool slot_exited(void *arg)
{
	struct tu_thread *t = arg;

	return __atomic_load_n(&t->exited, __ATOMIC_ACQUIRE) != 0;
}

void tu_wait_exited(void)
{
	tu_wait(all_exited, NULL);
	for (int i = 0; i < nslots; i++) {
		if (slots[i].tid) {
			pthread_join(slots[i].tid, NULL);
			slots[i].tid = 0;
		}
	}
}

void tu_wait_slot_exited(struct tu_thread *t)
{
	tu_wait(slot_exited, t);
}

/* What a spawned thread runs: note its kernel id for describe(). */
struct tu_start {
	struct tu_thread *t;
	void *(*fn)(void *);
	void *arg;
};

static void *tu_started(void *p)
{
	struct tu_start st = *(struct tu_start *)p;

	free(p);
	__atomic_store_n(&st.t->ktid, tu_gettid(), __ATOMIC_RELAXED);
	return st.fn(st.arg);
}

void tu_head_init(struct swait_head *h, bool asym)
{
	int err;

	if (!asym) {
		swait_head_init(h);
		return;
	}
	err = swait_head_init_asym(h);
	if (err != 0)
		fail_msg("swait_head_init_asym: %s", strerror(err));
}

void tu_spawn(struct tu_thread *t, void *(*fn)(void *), void *arg)
{
	struct tu_start *st = malloc(sizeof(*st));
	int err;

	if (!st) {
		fprintf(stderr, "tu_stress: out of memory\n");
		abort();
	}
	*st = (struct tu_start){ .t = t, .fn = fn, .arg = arg };
	__atomic_store_n(&t->ktid, 0, __ATOMIC_RELAXED);
	err = pthread_create(&t->tid, NULL, tu_started, st);

	if (err) {
		fprintf(stderr, "tu_stress: pthread_create: %s\n",
			strerror(err));
		abort();
	}
}

uint64_t tu_seed(int salt)
{
	uint64_t s;

	/* tu_begin() calls this first, before it starts any worker. */
	if (!__atomic_load_n(&seed_base, __ATOMIC_RELAXED)) {
		const char *e = getenv("SWAIT_STRESS_SEED");
		uint64_t b = e ? strtoull(e, NULL, 0) :
			     (uint64_t)tu_now_ns() ^ (uint64_t)getpid();

		if (!b)
			b = 1;
		__atomic_store_n(&seed_base, b, __ATOMIC_RELAXED);
		printf("# SWAIT_STRESS_SEED=%llu\n", (unsigned long long)b);
		fflush(stdout);	/* the watchdog leaves with _exit() */
	}
	s = __atomic_load_n(&seed_base, __ATOMIC_RELAXED) +
	    0x9e3779b97f4a7c15ull * (uint64_t)(salt + 1);
	s ^= s >> 31;
	return s ? s : 1;
}

void tu_tokens_describe(FILE *out, const char *name,
			const struct tu_tokens *p)
{
	fprintf(out, "%s: posted %ld, taken %ld, available %ld\n", name,
		__atomic_load_n(&p->posted, __ATOMIC_RELAXED),
		__atomic_load_n(&p->taken, __ATOMIC_RELAXED),
		__atomic_load_n(&p->avail, __ATOMIC_RELAXED));
}

void tu_rounds_init(struct tu_rounds *g)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
}

void tu_rounds_destroy(struct tu_rounds *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

void tu_rounds_start(struct tu_rounds *g, long r)
{
	pthread_mutex_lock(&g->lock);
	TU_STORE(&g->pause, 0);
	TU_STORE(&g->parked, 0);
	TU_STORE(&g->round, r);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void tu_rounds_wait(struct tu_rounds *g, long r)
{
	pthread_mutex_lock(&g->lock);
	while (g->round < r)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

void tu_rounds_park(struct tu_rounds *g, struct tu_thread *t)
{
	long r;

	tu_phase(t, "parked until the next round (the steady threads "
		    "must take the rest)");
	pthread_mutex_lock(&g->lock);
	(void)TU_ADD(&g->parked, 1);
	r = g->round;
	while (g->round == r && !TU_LOAD(&g->done))
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

struct rounds_want {
	struct tu_rounds *g;
	long posters_done;
	int parked;
};

static bool posters_finished(void *arg)
{
	struct rounds_want *w = arg;

	return TU_LOAD(&w->g->posters_done) >= w->posters_done;
}

static bool all_parked(void *arg)
{
	struct rounds_want *w = arg;

	return TU_LOAD(&w->g->parked) == w->parked;
}

void tu_rounds_run(struct tu_rounds *g, long r, long nposters, int nleavers,
		   void (*kick)(void))
{
	struct rounds_want want = { g, nposters * r, nleavers };

	tu_rounds_start(g, r);
	tu_wait(posters_finished, &want);
	if (nleavers > 0) {
		TU_STORE(&g->pause, 1);
		if (kick)
			kick();
		tu_wait(all_parked, &want);
	}
}

void tu_rounds_finish(struct tu_rounds *g, long rounds)
{
	TU_STORE(&g->done, 1);
	tu_rounds_start(g, rounds + 1);
}

void tu_rounds_describe(FILE *out, const struct tu_rounds *g)
{
	fprintf(out, "round %ld, poster rounds done %ld, pause %d, parked %d, "
		"done %d\n", __atomic_load_n(&g->round, __ATOMIC_RELAXED),
		__atomic_load_n(&g->posters_done, __ATOMIC_RELAXED),
		__atomic_load_n(&g->pause, __ATOMIC_RELAXED),
		__atomic_load_n(&g->parked, __ATOMIC_RELAXED),
		__atomic_load_n(&g->done, __ATOMIC_RELAXED));
}

int tu_ticket_oldest(struct tu_strikes *s, int n)
{
	long best = 0;
	int i = -1;

	for (int k = 0; k < n; k++) {
		long v = TU_LOAD(&s->ticket[k]);

		if (v && (!best || v < best)) {
			best = v;
			i = k;
		}
	}
	return i;
}

void tu_strike(struct tu_strikes *s, struct tu_thread *t, bool waiting)
{
	if (waiting)
		(void)TU_ADD(&s->cancels_waiting, 1);
	pthread_cancel(t->tid);
	TU_STORE(&s->struck, t->idx + 1);
}

/*
 * tu_reap()'s wait for the cancelled thread.  Under qemu-user the cancel
 * is sent again after 2 s, then each second: qemu 7.2 now and then drops
 * the SIGCANCEL that glibc sends to a thread in asynchronous mode (the
 * library's sleep window), and glibc marks such a thread cancelled only
 * in that signal's handler, so it would sleep on forever (TESTING.md).
 * Natively nothing is resent (resend_at 0): a thread that does not act on
 * its cancel is a stall, reported.
 */
struct reap {
	struct tu_strikes *s;
	struct tu_thread *t;
	long long resend_at;
};

static bool exited_or_resent(void *arg)
{
	struct reap *r = arg;

	if (slot_exited(r->t))
		return true;
	if (r->resend_at && tu_now_ns() > r->resend_at) {
		(void)pthread_cancel(r->t->tid);
		r->s->recancels++;
		r->resend_at += 1000000000LL;
	}
	return false;
}

struct tu_thread *tu_reap(struct tu_strikes *s,
			  struct tu_thread *const *workers)
{
	int i = TU_LOAD(&s->struck) - 1;
	struct tu_thread *t;
	struct reap r;

	if (i < 0)
		return NULL;
	t = workers[i];
	/* Pending until its next wait, which may come only at the drain. */
	r = (struct reap){ .s = s, .t = t,
			   .resend_at = getenv("MESON_EXE_WRAPPER") ?
					tu_now_ns() + 2000000000LL : 0 };
	tu_wait(exited_or_resent, &r);
	pthread_join(t->tid, NULL);
	TU_STORE(&s->struck, 0);
	s->cancels++;
	return t;
}

void tu_respawn(struct tu_thread *t, void *(*fn)(void *))
{
	t->aux++;
	TU_STORE(&t->exited, 0);
	tu_phase(t, "replacement starting");
	tu_spawn(t, fn, t);
}

#define TU_SCRIBBLE_WORDS 512
#define TU_SCRIBBLE_PATTERN 0x5a17c0de5a17c0deull

__attribute__((noinline))
bool tu_scribble_check(unsigned spins)
{
	volatile uint64_t buf[TU_SCRIBBLE_WORDS];
	bool ok = true;

	/*
	 * buf covers the frame of the call that just returned (same caller,
	 * same depth).  A library that wrote to a waiter or completion in that
	 * frame after the waiter left would change a word here.
	 */
	for (int i = 0; i < TU_SCRIBBLE_WORDS; i++)
		buf[i] = TU_SCRIBBLE_PATTERN ^ (uint64_t)i;
	tu_spin(spins);
	for (int i = 0; i < TU_SCRIBBLE_WORDS; i++)
		if (buf[i] != (TU_SCRIBBLE_PATTERN ^ (uint64_t)i))
			ok = false;
	return ok;
}
