// SPDX-License-Identifier: MIT
/*
 * stress_destroy.c - pthread_cond_destroy()'s pattern: the first woken
 * waiter destroys the head and frees its memory while the others, woken
 * by the same wake_all, are still on their way out.
 *
 * POSIX allows destroying a condition variable on which threads are
 * blocked once they have all been woken (its example: the first thread
 * that wakes up destroys it).  libswait promises the same
 * (swait_head_destroy() in swait.h): destroy returns 0 once no waiter is
 * queued, waiting out a wake_all walk that may still be going, and after
 * that no library code touches the head: woken waiters do not read it
 * after their word is set.
 *
 * Each round, 4 waiters sleep on a fresh head that is alone in its own
 * mmap'd page.  Once all 4 are queued the main thread makes the condition
 * true and calls swait_wake_all(); the first waiter out calls
 * swait_head_destroy(), which must return 0, and unmaps the page (it is
 * replaced by an inaccessible mapping, so nothing else can land there): a
 * later access by the walk or by another waiter crashes the test.  Pages
 * are reused round-robin from a ring of 64, so a late access lands on an
 * inaccessible page for the next 63 rounds.  The ASan build runs it too.
 *
 * Forms (on ordinary heads, and swait_event() on PI heads too):
 * swait_event_mutex() (the waker wakes under the mutex, the first
 * waiter to get the mutex destroys), and without a mutex swait_event(),
 * swait_event_timeout() with a far deadline and swait_event_interruptible()
 * (the first waiter whose wait returns destroys, possibly while the wake_all
 * is still walking).  Every round is counted; every destroy must return 0
 * and every wait 0.
 *
 * "All 4 queued" without the mutex: the macros evaluate the condition once
 * before queueing and once after each prepare (swait.h), and the waiters'
 * condition counts its evaluations: the second one reports the waiter
 * queued and answers false, so the waiter sleeps until the wake_all that
 * the main thread sends only after all 4 reported.  That false is safe: the
 * waiter is queued then, and the wake comes.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tu_stress.h"

#define SD_WAITERS 4
#define SD_SLOTS 64		/* pages in the ring, and rounds' records */

enum sd_form { SD_MUTEX, SD_EVENT, SD_TIMEOUT, SD_INTERRUPTIBLE };

/*
 * One round.  The main thread prepares round r + 1 before it wakes round
 * r, so that a waiter out of round r goes straight on to the next head:
 * no handshake between rounds.
 */
struct sd_slot {
	struct swait_head *head;	/* atomic: alone in its page */
	int queued;			/* atomic: waiters queued */
	int entered;			/* under m: the same, with the mutex */
	int destroyer;			/* atomic: taken by the first out */
	int destroyed;			/* under m */
	int rc;				/* atomic: destroy's */
	int left;			/* atomic: waiters out */
};

static struct {
	enum sd_form form;
	bool pi;			/* PI heads (swait_head_init_pi) */
	long psize;
	long total;			/* rounds */
	unsigned char *ring;		/* SD_SLOTS pages */
	struct sd_slot slot[SD_SLOTS];
	struct swait_head main_head;	/* the main thread waits here */
	long released;			/* atomic: the last round woken */
	pthread_mutex_t m;
	long released_m;		/* under m: the same, with the mutex */
	long bad_wait;			/* atomic: waits that did not return 0 */
	long bad_map;			/* atomic: mmap failures */
	long rounds;			/* rounds whose destroy returned 0 */
} sd;

static struct sd_slot *sd_slot_of(long r)
{
	return &sd.slot[r % SD_SLOTS];
}

/* Free h's page: an inaccessible mapping replaces it, in one call. */
static void sd_unmap(struct swait_head *h)
{
	if (mmap(h, (size_t)sd.psize, PROT_NONE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0) == MAP_FAILED)
		(void)TU_ADD(&sd.bad_map, 1);
}

static void sd_destroy(struct sd_slot *s, struct swait_head *h)
{
	int rc = swait_head_destroy(h);

	TU_STORE(&s->rc, rc);
	if (rc == 0)
		sd_unmap(h);	/* else leaked: a thread may still use it */
}

/* A waiter queued on round s: the last of them tells the main thread. */
static void sd_queued(struct sd_slot *s)
{
	if (TU_ADD(&s->queued, 1) == SD_WAITERS)
		swait_wake_one(&sd.main_head);
}

/*
 * The condition of the forms without a mutex (see the top): the second
 * evaluation is the first after the prepare.
 */
#define SD_COND(s, r, evals)						\
	__extension__ ({						\
		bool sd_ok_;						\
		if (++(evals) == 2) {					\
			sd_queued(s);					\
			sd_ok_ = false;					\
		} else {						\
			sd_ok_ = TU_LOAD(&sd.released) >= (r);		\
		}							\
		sd_ok_;							\
	})

/* Round r on h; the first waiter out destroys h and unmaps it. */
static int sd_wait(struct sd_slot *s, struct swait_head *h, long r)
{
	struct timespec far;
	int evals = 0, ret = 0;

	switch (sd.form) {
	case SD_MUTEX:
		pthread_mutex_lock(&sd.m);
		if (++s->entered == SD_WAITERS)
			swait_wake_one(&sd.main_head);	/* locks m next */
		swait_event_mutex(h, sd.released_m >= r, &sd.m);
		if (!s->destroyed) {
			s->destroyed = 1;
			sd_destroy(s, h);
		}
		pthread_mutex_unlock(&sd.m);
		return 0;
	case SD_EVENT:
		swait_event(h, SD_COND(s, r, evals));
		break;
	case SD_TIMEOUT:
		swait_deadline_after(&far, CLOCK_MONOTONIC,
				     3600 * 1000000000LL);
		ret = swait_event_timeout(h, SD_COND(s, r, evals),
					  CLOCK_MONOTONIC, &far);
		break;
	case SD_INTERRUPTIBLE:
		ret = swait_event_interruptible(h, SD_COND(s, r, evals));
		break;
	}
	if (ret == 0 && TU_XCHG(&s->destroyer, 1) == 0)
		sd_destroy(s, h);
	return ret;
}

static void *sd_waiter(void *arg)
{
	struct tu_thread *t = arg;

	for (long r = 1; r <= sd.total; r++) {
		struct sd_slot *s = sd_slot_of(r);

		tu_phase(t, "waiting on a round's head");
		if (sd_wait(s, TU_LOAD(&s->head), r) != 0)
			(void)TU_ADD(&sd.bad_wait, 1);
		/* The head may be gone: only the test's own words now. */
		(void)TU_ADD(&s->left, 1);
		(void)TU_ADD(&t->count, 1);
	}
	tu_thread_exit(t);
	return NULL;
}

/* Map and initialise round r's head (no waiter can see it yet). */
static bool sd_prepare(long r)
{
	unsigned char *page = sd.ring + (r % SD_SLOTS) * sd.psize;
	struct sd_slot *s = sd_slot_of(r);
	struct swait_head *h = (struct swait_head *)(void *)page;

	if (mmap(page, (size_t)sd.psize, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
	    MAP_FAILED) {
		(void)TU_ADD(&sd.bad_map, 1);
		return false;
	}
	if (sd.pi)
		swait_head_init_pi(h);
	else
		swait_head_init(h);
	pthread_mutex_lock(&sd.m);
	s->entered = 0;
	s->destroyed = 0;
	pthread_mutex_unlock(&sd.m);
	TU_STORE(&s->queued, 0);
	TU_STORE(&s->destroyer, 0);
	TU_STORE(&s->rc, -1);
	TU_STORE(&s->left, 0);
	/* Release: read after the wake of round r - 1 (or the spawn). */
	TU_STORE(&s->head, h);
	return true;
}

static bool sd_all_entered(struct sd_slot *s)
{
	bool all;

	pthread_mutex_lock(&sd.m);
	all = s->entered == SD_WAITERS;
	pthread_mutex_unlock(&sd.m);
	return all;
}

/* Wake round r once all its waiters are queued. */
static void sd_release(long r)
{
	struct sd_slot *s = sd_slot_of(r);
	struct swait_head *h = TU_LOAD(&s->head);

	if (sd.form == SD_MUTEX) {
		/* Each waiter counts itself and queues before unlocking m. */
		swait_event(&sd.main_head, sd_all_entered(s));
		pthread_mutex_lock(&sd.m);
		sd.released_m = r;
		swait_wake_all(h);	/* under m, as the header asks */
		pthread_mutex_unlock(&sd.m);
	} else {
		swait_event(&sd.main_head,
			    TU_LOAD(&s->queued) == SD_WAITERS);
		TU_STORE(&sd.released, r);
		swait_wake_all(h);
	}
	/* h is the waiters' now: the first one out frees it. */
}

/* Round r is over (its waiters are queued on the next one, or gone). */
static bool sd_check(long r)
{
	struct sd_slot *s = sd_slot_of(r);

	if (TU_LOAD(&s->left) != SD_WAITERS || TU_LOAD(&s->rc) != 0) {
		print_error("round %ld: %d waiters out, swait_head_destroy() "
			    "returned %d\n", r, TU_LOAD(&s->left),
			    TU_LOAD(&s->rc));
		return false;
	}
	sd.rounds++;
	return true;
}

static void sd_describe(FILE *out)
{
	long r = __atomic_load_n(&sd.released, __ATOMIC_RELAXED);
	long rm = __atomic_load_n(&sd.released_m, __ATOMIC_RELAXED);
	struct sd_slot *s = sd_slot_of((r > rm ? r : rm) + 1);

	fprintf(out, "round %ld woken; the next one: %d queued (%d with the "
		"mutex)\n", r > rm ? r : rm,
		__atomic_load_n(&s->queued, __ATOMIC_RELAXED),
		__atomic_load_n(&s->entered, __ATOMIC_RELAXED));
}

static void sd_run(enum sd_form form, bool pi, const char *what)
{
	struct tu_thread *w[SD_WAITERS];
	long long t0 = tu_now_ns();
	bool ok = true;

	memset(&sd, 0, sizeof(sd));
	sd.form = form;
	sd.pi = pi;
	/*
	 * 25,000 rounds at scale 1 keep CI's four forms to a few seconds
	 * each; the 100,000 are SWAIT_STRESS_SCALE=4 (TESTING.md).
	 */
	sd.total = tu_scale(25000);
	/*
	 * DRD takes ~0.2 s a round (five threads handing off by futex, one at
	 * a time), so under Valgrind 100 rounds, as crosswake does.
	 */
	if (getenv("SWAIT_UNDER_VALGRIND") && sd.total > 100)
		sd.total = 100;
	sd.psize = sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&sd.m, NULL);
	sd.ring = mmap(NULL, (size_t)(SD_SLOTS * sd.psize), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(sd.ring != MAP_FAILED);
	assert_true(sd_prepare(1));

	tu_begin(what, sd_describe);
	for (int i = 0; i < SD_WAITERS; i++) {
		w[i] = tu_slot("waiter", i);
		tu_spawn(w[i], sd_waiter, w[i]);
	}
	for (long r = 1; ok && r <= sd.total; r++) {
		if (r < sd.total)
			ok = sd_prepare(r + 1);
		if (ok)
			sd_release(r);
		/* Round r - 1's waiters are all queued on round r by now. */
		if (ok && r > 1)
			ok = sd_check(r - 1);
		tu_progress();
		tu_tick();
	}
	if (ok) {
		tu_wait_exited();
		ok = sd_check(sd.total);
	}
	tu_end();

	print_message("%s: %ld of %ld rounds in %.2f s\n", what, sd.rounds,
		      sd.total, (double)(tu_now_ns() - t0) / 1e9);
	/* A failed round leaves the waiters stuck: report, then fail. */
	assert_int_equal(TU_LOAD(&sd.bad_map), 0);
	assert_int_equal(TU_LOAD(&sd.bad_wait), 0);
	assert_true(ok);
	assert_int_equal(sd.rounds, sd.total);
	for (int i = 0; i < SD_WAITERS; i++)
		assert_int_equal(TU_LOAD(&w[i]->count), sd.total);
	assert_int_equal(munmap(sd.ring, (size_t)(SD_SLOTS * sd.psize)), 0);
	assert_int_equal(swait_head_destroy(&sd.main_head), 0);
	pthread_mutex_destroy(&sd.m);
}

static void test_destroy_mutex(void **state)
{
	(void)state;
	sd_run(SD_MUTEX, false, "first woken destroys: swait_event_mutex");
}

static void test_destroy_event(void **state)
{
	(void)state;
	sd_run(SD_EVENT, false, "first woken destroys: swait_event");
}

static void test_destroy_timeout(void **state)
{
	(void)state;
	sd_run(SD_TIMEOUT, false, "first woken destroys: swait_event_timeout");
}

static void test_destroy_interruptible(void **state)
{
	(void)state;
	sd_run(SD_INTERRUPTIBLE, false,
	       "first woken destroys: swait_event_interruptible");
}

/*
 * On PI heads: a walk there counts itself in REFS between its steps and a
 * woken waiter never reads the head again (swait.h: "on any path ...
 * PI heads"); destroy waits out the walk through REFS (lib/wake.c).
 */
static void test_destroy_event_pi(void **state)
{
	(void)state;
	sd_run(SD_EVENT, true, "first woken destroys: swait_event, PI head");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_destroy_mutex),
		cmocka_unit_test(test_destroy_event),
		cmocka_unit_test(test_destroy_timeout),
		cmocka_unit_test(test_destroy_interruptible),
		cmocka_unit_test(test_destroy_event_pi),
	};

	tu_stress_main(argc, argv);
	return cmocka_run_group_tests_name("stress-destroy", tests, NULL,
					   NULL);
}
