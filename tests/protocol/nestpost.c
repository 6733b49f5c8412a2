// SPDX-License-Identifier: MIT
/*
 * nestpost.c - posts nested inside posts: signal handlers that interrupt
 * their own thread's holds, and each other's posts, to any depth, waking
 * more heads than any per-thread list could hold (lib/headlock.c L1-L7).
 *
 * Deterministic.  The main thread prepares on a completion's head; a test
 * hook raises SIGUSR1 inside that hold, and its handler completes 64
 * distinct completions (the old design kept 8 per thread and aborted past
 * them).  Inside those completes two more hooks raise the next level:
 * swait_hook_before_post, right before a wake's one attempt to take or
 * post, and swait_hook_head_locked, inside a handler's own hold.  Each
 * nested handler completes the completion its interrupted wake was busy
 * with (held by the handler below, or about to be), another one, and the
 * one the thread itself holds.  So posts land on heads held by the thread
 * and by handlers at every depth, and handlers interrupt posts half made.
 * Two ways to nest: one signal with SA_NODEFER, and a chain of distinct
 * real-time signals without it.  Both on ordinary and PI completions.
 * Afterwards every completion must hold exactly as many events as complete
 * calls were made on it: a post lost in a nested one, or performed twice,
 * changes a count; an abort or a hang (the watchdog) fails the test.
 *
 * The last cases post to a completion whose lock another thread holds,
 * inside its own swait_complete() or inside a prepare on it.  The
 * handler's complete must return at once (posted, not performed), and
 * afterwards swait_completion_done() must be true, waiting for that
 * holder's release, although done is still 0 when it starts; the events
 * are counted exactly.  Then swait_head_destroy() returns 0 and the memory
 * is reused (filled with 0xA5) and made inaccessible: a holder that
 * touched it after its release would crash or change the pattern.  In
 * the prepare case the holder's waiter, woken by the posted complete,
 * finishes before the destroy: a completion waiter's finish may pass an
 * unused wake on (the completion rule in swait.h), so only the completing
 * holder is still on its way out when the page goes.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

extern void (*swait_hook_head_locked)(struct swait_head *head);
extern void (*swait_hook_before_post)(struct swait_head *head);
extern unsigned long swait_hook_deferred;

#define NCOMP 64		/* completions the first handler completes */
#define MAX_DEPTH 24		/* handler levels, SIGUSR1's being 1 */
#define POST_DEPTH (MAX_DEPTH - 4)	/* before_post nests up to here */
#define BUDGET 3000		/* nested handlers per case */

static struct swait_completion comps[NCOMP];
static unsigned long made[NCOMP];	/* complete calls made on each */
static int depth;		/* handler levels running on the thread */
static int max_depth;
static long budget;		/* nested raises left */
static long nested_runs;	/* nested handlers that ran */
static int target;		/* where the next nested handler starts */
static int armed;		/* the next hold of comps[0] raises SIGUSR1 */
static bool chain;		/* distinct signals, not SA_NODEFER */

/*
 * Every variable above is written by the main thread and its handlers
 * only, which nest and do not run concurrently; the atomics are for the
 * compiler (a handler may interrupt any statement) and for TSan.
 */
static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* The signal of handler level lvl (2 and deeper). */
static int level_signal(int lvl)
{
	return chain ? SIGRTMIN + lvl : SIGUSR2;
}

static int index_of(const struct swait_head *h)
{
	for (int i = 0; i < NCOMP; i++)
		if (h == &comps[i].wait)
			return i;
	return -1;
}

static void complete_counted(int i)
{
	/* Counted first: a nested handler's count stays its own. */
	__atomic_add_fetch(&made[i], 1, __ATOMIC_RELAXED);
	swait_complete(&comps[i]);
}

/* A handler below depth limit interrupts itself with the next level. */
static void nest_into(int i, int limit)
{
	int d = load(&depth);

	if (d == 0 || d >= limit)
		return;
	if (__atomic_sub_fetch(&budget, 1, __ATOMIC_RELAXED) < 0)
		return;
	store(&target, i);
	/* Delivered before pthread_kill() returns: it is unblocked. */
	pthread_kill(pthread_self(), level_signal(d + 1));
}

static void on_nested(int sig)
{
	int i = load(&target);
	int d = load(&depth) + 1;

	(void)sig;
	store(&depth, d);
	if (d > load(&max_depth))
		store(&max_depth, d);
	__atomic_add_fetch(&nested_runs, 1, __ATOMIC_RELAXED);
	complete_counted(i);			/* the interrupted one's */
	complete_counted((i + 1 + d) % NCOMP);	/* another */
	complete_counted(0);			/* the thread holds it */
	store(&depth, d - 1);
}

static int outer_runs;

static void on_outer(int sig)
{
	(void)sig;
	outer_runs++;
	store(&depth, 1);
	store(&max_depth, 1);
	for (int i = 0; i < NCOMP; i++)
		complete_counted(i);
	store(&depth, 0);
}

static void locked_hook(struct swait_head *h)
{
	int i = index_of(h);

	if (i < 0)
		return;
	if (load(&depth) == 0) {
		/* The thread's own hold of comps[0]: the first level. */
		if (i == 0 && __atomic_exchange_n(&armed, 0, __ATOMIC_RELAXED))
			pthread_kill(pthread_self(), SIGUSR1);
		return;
	}
	/* A handler's hold: the next level posts to it. */
	nest_into(i, MAX_DEPTH);
}

static void post_hook(struct swait_head *h)
{
	int i = index_of(h);

	if (i >= 0)
		nest_into(i, POST_DEPTH);
}

/* A sleep with a past deadline: 0 iff the waiter had been woken. */
static int poll_sleep(struct swait_head *h, struct swait_waiter *w)
{
	static const struct timespec past = { 0, 0 };

	return swait_sleep(h, w, 0, CLOCK_MONOTONIC, &past);
}

static void run_nested(bool pi, bool use_chain)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;
	unsigned long deferred0 = swait_hook_deferred, deferred;
	unsigned long total = 0;

	chain = use_chain;
	if (chain && SIGRTMIN + MAX_DEPTH > SIGRTMAX)
		skip();
	for (int i = 0; i < NCOMP; i++) {
		swait_completion_init(&comps[i]);
		if (pi)
			swait_head_init_pi(&comps[i].wait);
		made[i] = 0;
	}
	budget = BUDGET;
	nested_runs = 0;
	outer_runs = 0;
	store(&depth, 0);
	store(&armed, 1);
	tu_watchdog_arm(20, "nested handlers posting", NULL);
	__atomic_store_n(&swait_hook_before_post, post_hook, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_head_locked, locked_hook,
			 __ATOMIC_RELEASE);
	swait_prepare(&comps[0].wait, &w);
	__atomic_store_n(&swait_hook_head_locked, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&swait_hook_before_post, NULL, __ATOMIC_RELEASE);
	deferred = swait_hook_deferred - deferred0;

	/* Performed before the hold ended: the waiter was woken. */
	assert_int_equal(outer_runs, 1);
	assert_int_equal(poll_sleep(&comps[0].wait, &w), 0);
	swait_finish(&comps[0].wait, &w);
	for (int i = 0; i < NCOMP; i++) {
		unsigned long n = 0;

		while (swait_completion_try_wait(&comps[i]))
			n++;
		if (n != made[i])
			print_error("completion %d: %lu events, %lu completes\n",
				    i, n, made[i]);
		assert_int_equal(n, made[i]);
		assert_int_equal(swait_head_destroy(&comps[i].wait), 0);
		total += made[i];
	}
	tu_watchdog_disarm();
	printf("# %s, %s heads: %lu completes, %ld nested handlers, depth "
	       "%d, %lu posted\n", chain ? "signal chain" : "SA_NODEFER",
	       pi ? "PI" : "ordinary", total, nested_runs, max_depth,
	       deferred);
	/* Every complete of comps[0] found the thread holding it. */
	assert_true(deferred >= made[0]);
	assert_true(nested_runs > NCOMP);
#ifndef __SANITIZE_THREAD__
	/* TSan defers a signal raised in a handler until it returns. */
	assert_true(max_depth > 8);
#endif
}

static void nodefer_plain(void **s) { (void)s; run_nested(false, false); }
static void nodefer_pi(void **s) { (void)s; run_nested(true, false); }
static void chain_plain(void **s) { (void)s; run_nested(false, true); }
static void chain_pi(void **s) { (void)s; run_nested(true, true); }

/* ------------------------------------- a holder on another thread */

static struct swait_completion *x;	/* alone in its page */
static struct swait_head a;		/* the main thread's hold */
static pid_t main_tid;
static __thread bool is_holder;
static int hold_armed, a_armed;
static int holding;		/* the holder is inside x's hold */
static int handler_done;	/* the handler's complete has returned */
static int done_returned;	/* main's swait_completion_done() did */
static int done_early;		/* ... while the holder still held x */
static int saw_blocked;		/* main was seen asleep meanwhile */
static int gone;		/* x's page is inaccessible */
static int holder_out;		/* the holder's finish returned */
static unsigned long h_posts;	/* posts made by the handler */
static unsigned int h_done;	/* x->done right after its complete */

static bool main_asleep(void)
{
	long nr;

	if (tu_task_state(main_tid) != 'S')
		return false;
	nr = tu_task_syscall(main_tid);
	return nr < 0 || tu_is_futex_call(nr);
}

static void holder_hook(struct swait_head *h)
{
	if (h == &a && __atomic_exchange_n(&a_armed, 0, __ATOMIC_RELAXED)) {
		pthread_kill(pthread_self(), SIGUSR1);
		return;
	}
	if (h != &x->wait || !is_holder ||
	    !__atomic_exchange_n(&hold_armed, 0, __ATOMIC_RELAXED))
		return;
	TU_STORE(&holding, 1);
	(void)tu_poll(TU_LOAD(&handler_done));
	/* Hold on until main waits in its done check (or gave up on it). */
	(void)tu_poll_ns(TU_LOAD(&done_returned) || main_asleep(), 2e9);
	TU_STORE(&saw_blocked, main_asleep());
	TU_STORE(&done_early, TU_LOAD(&done_returned));
}

/* On the main thread, inside its hold of a: x is held elsewhere. */
static void complete_x(int sig)
{
	unsigned long before = swait_hook_deferred;

	(void)sig;
	swait_complete(x);
	h_posts = swait_hook_deferred - before;
	h_done = __atomic_load_n(&x->done, __ATOMIC_RELAXED);
}

static bool holder_waits;	/* the holder's hold is a prepare */

/*
 * Takes x's lock, where the hook holds it until main's done check waits
 * for it; the release performs the posted complete.  Either a complete of
 * its own (no waiter), or a prepare on x: the posted complete wakes that
 * waiter.  A completion is freed by its only waiter once its wait returned
 * (swait.h, the kernel's rule: a woken completion waiter passes an unused
 * wake on in its finish), so here the holder finishes before main
 * destroys; the completing holder is still on its way out then.
 */
static void *holder(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	is_holder = true;
	if (holder_waits) {
		swait_prepare(&x->wait, &w);
		(void)tu_poll_ns(TU_LOAD(&done_returned), 30e9);
		swait_finish(&x->wait, &w);
	} else {
		swait_complete(x);
	}
	TU_STORE(&holder_out, 1);
	return NULL;
}

/* An access to x's page once it is gone: say so (the process is lost). */
static void on_fault(int sig, siginfo_t *si, void *uc)
{
	static const char msg[] = "FAIL: an access to the completion's page "
				  "after swait_head_destroy() returned 0\n";
	unsigned char *p = si->si_addr;

	(void)sig;
	(void)uc;
	if (p >= (unsigned char *)x &&
	    p < (unsigned char *)x + sysconf(_SC_PAGESIZE))
		(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static void run_other_holder(bool pi, bool waits)
{
	int events = waits ? 1 : 2;	/* the holder's own complete */
	long psize = sysconf(_SC_PAGESIZE);
	struct swait_waiter wa = SWAIT_WAITER_INITIALIZER;
	struct sigaction sa, old;
	unsigned char *page;
	pthread_t t;
	bool done;

	page = mmap(NULL, (size_t)psize, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	x = (struct swait_completion *)(void *)page;
	swait_completion_init(x);
	if (pi)
		swait_head_init_pi(&x->wait);
	swait_head_init(&a);
	main_tid = tu_gettid();
	holding = handler_done = done_returned = done_early = 0;
	saw_blocked = gone = holder_out = 0;
	TU_SYNC_VAR(holding);
	TU_SYNC_VAR(handler_done);
	TU_SYNC_VAR(done_returned);
	TU_SYNC_VAR(done_early);
	TU_SYNC_VAR(saw_blocked);
	TU_SYNC_VAR(gone);
	TU_SYNC_VAR(holder_out);
	holder_waits = waits;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
	hold_armed = 1;
	tu_watchdog_arm(30, "a post to another thread's hold", NULL);
	__atomic_store_n(&swait_hook_head_locked, holder_hook,
			 __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&t, NULL, holder, NULL), 0);
	assert_true(tu_poll(TU_LOAD(&holding)));

	/* The handler's complete posts to the holder and returns. */
	__atomic_store_n(&a_armed, 1, __ATOMIC_RELAXED);
	swait_prepare(&a, &wa);
	swait_finish(&a, &wa);
	assert_int_equal(h_posts, 1);
	assert_int_equal(h_done, 0);	/* not performed: still posted */
	TU_STORE(&handler_done, 1);

	/* True already: done is 0 until the holder's release performs it. */
	done = swait_completion_done(x);
	TU_STORE(&done_returned, 1);
	assert_true(done);
	for (int i = 0; i < events; i++)
		assert_true(swait_completion_try_wait(x));
	assert_false(swait_completion_try_wait(x));
	/* A waiting holder's waiter: finished first (the completion rule). */
	if (waits)
		assert_true(tu_poll(TU_LOAD(&holder_out)));
	assert_int_equal(swait_head_destroy(&x->wait), 0);

	/* Reused, then gone, while the holder may still be on its way out. */
	memset(page, 0xA5, (size_t)psize);
	assert_int_equal(mprotect(page, (size_t)psize, PROT_NONE), 0);
	TU_STORE(&gone, 1);
	assert_int_equal(pthread_join(t, NULL), 0);
	__atomic_store_n(&swait_hook_head_locked, NULL, __ATOMIC_RELEASE);
	tu_watchdog_disarm();
	assert_int_equal(TU_LOAD(&holder_out), 1);
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	assert_int_equal(mprotect(page, (size_t)psize, PROT_READ), 0);
	for (long i = 0; i < psize; i++)
		assert_int_equal(page[i], 0xA5);
	assert_int_equal(munmap(page, (size_t)psize), 0);

	printf("# %s, holder %s: done check seen asleep on the holder: %s\n",
	       pi ? "PI" : "ordinary", waits ? "prepared" : "completing",
	       saw_blocked ? "yes" : "no");
	assert_int_equal(done_early, 0);
	assert_int_equal(swait_head_destroy(&a), 0);
}

static void other_holder_plain(void **s)
{
	(void)s;
	run_other_holder(false, false);
}

static void other_holder_pi(void **s)
{
	(void)s;
	run_other_holder(true, false);
}

static void woken_holder_plain(void **s)
{
	(void)s;
	run_other_holder(false, true);
}

static void woken_holder_pi(void **s)
{
	(void)s;
	run_other_holder(true, true);
}

static int setup_nested(void **state)
{
	(void)state;
	if (tu_signal_handler(SIGUSR1, on_outer, 0, NULL) != 0 ||
	    tu_signal_handler(SIGUSR2, on_nested, SA_NODEFER, NULL) != 0)
		return -1;
	for (int lvl = 2; lvl <= MAX_DEPTH && SIGRTMIN + lvl <= SIGRTMAX;
	     lvl++)
		if (tu_signal_handler(SIGRTMIN + lvl, on_nested, 0, NULL) != 0)
			return -1;
	return 0;
}

static int setup_holder(void **state)
{
	(void)state;
	return tu_signal_handler(SIGUSR1, complete_x, 0, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(nodefer_plain, setup_nested),
		cmocka_unit_test_setup(nodefer_pi, setup_nested),
		cmocka_unit_test_setup(chain_plain, setup_nested),
		cmocka_unit_test_setup(chain_pi, setup_nested),
		cmocka_unit_test_setup(other_holder_plain, setup_holder),
		cmocka_unit_test_setup(other_holder_pi, setup_holder),
		cmocka_unit_test_setup(woken_holder_plain, setup_holder),
		cmocka_unit_test_setup(woken_holder_pi, setup_holder),
	};

	if (tu_emulator_shares_tls()) {
		puts("skipped: qemu-i386 moves a thread's thread-local storage "
		     "once a signal handler has run (cross/qemu-i386.ini)");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
