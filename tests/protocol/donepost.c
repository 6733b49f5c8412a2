// SPDX-License-Identifier: MIT
/*
 * donepost.c - a completion's event once swait_complete() has returned,
 * with the complete posted by a signal handler (lib/headlock.c L2-L7), and
 * a PI completion freed by its only waiter (lib/completion.c).
 *
 * Each case stops one thread, through a test hook, at a point where a
 * preemption could stop it, and looks from another thread:
 *
 *  - taken:  the holder has taken the posted set off the lock word (or a
 *            PI head's walks word) and not yet added it to done.  A peek
 *            at done and the posted bits alone said "not done" there.
 *  - walk:   PI head, a wake_all walk between two steps: the lock is free,
 *            REFS is not 0, so the handler's complete is posted for the
 *            last one out; another thread taking the free lock read done
 *            before that.
 *  - free:   PI head, the completer has unlocked and not yet left REFS;
 *            its only waiter takes the lock, consumes the event, returns
 *            and unmaps the completion: the completer's leaving touched
 *            the unmapped page (SIGSEGV).
 *  - last_out: PI head, a holder unlocked, and its own handler posted a
 *            complete before it left REFS: it is the last one out, about
 *            to take the lock again to perform it.  It used to take the
 *            set off the word first, so a look from another thread that
 *            took the free lock meanwhile found nothing and said false.
 *  - spill:  PI head, a handler found the posted count full and spilled
 *            its complete into done, counted in REFS and not yet left;
 *            the only waiter consumes every event and unmaps the
 *            completion.  Without the waiter's wait for REFS
 *            (lib/completion.c) the spiller's leaving is a SIGSEGV.
 *
 * All failed on the code before their fix (spill: with that wait
 * removed); the check happens while the stopped thread is still stopped,
 * so the fixed code makes the looking thread wait for it (each stop ends
 * after STOP_MS, or at the latest 5 s).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "swait.h"
#include "testutil.h"

/* Test hooks of the static library (lib/internal.h, lib/queue.h). */
extern unsigned long swait_hook_deferred;
extern void (*swait_hook_head_locked)(struct swait_head *head);
extern void (*swait_hook_futex_wake)(uint32_t *word);
extern void (*swait_hook_leaving)(struct swait_head *head, bool last_out);
extern void (*swait_complete_sink)(struct swait_head *head, uint32_t n,
				   bool all);

#define STOP_MS 10

static int flag_get(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void flag_set(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Wait until *p is set, at most 5 s; false if it never was. */
static bool wait_flag(int *p)
{
	long long t0 = tu_now_ns();

	while (!flag_get(p)) {
		if (tu_now_ns() - t0 > 5000000000LL)
			return false;
		sched_yield();
	}
	return true;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/*
 * The stopped thread: hold until the looker says it is about to look,
 * then STOP_MS more, so that a look that does not wait for us is over by
 * the time we go on.
 */
static int looking;

static void stop_here(void)
{
	if (wait_flag(&looking))
		sleep_ms(STOP_MS);
}

/* ------------------------------------------------------------- taken */

static struct swait_completion comp;
static struct swait_head other;
static void (*real_sink)(struct swait_head *, uint32_t, bool);
static int sink_armed, in_window, holding, other_armed, handler_ran;
static __thread bool is_holder;
/* The head holder() keeps, until the flag held_until is set. */
static struct swait_head *held;
static int *held_until;

/* The spill case's: completes from one handler, past the posted count. */
#define SPILL_MANY 2048
static struct swait_completion *mapped;
static __thread bool is_spiller;
static int spill_armed, spilled;

static void on_usr1(int sig)
{
	(void)sig;
	if (is_spiller)
		for (int i = 0; i < SPILL_MANY; i++)
			swait_complete(mapped);
	else
		swait_complete(&comp);	/* posted: see the cases */
	flag_set(&handler_ran, 1);
}

static void stopping_sink(struct swait_head *h, uint32_t n, bool all)
{
	if (h == &comp.wait &&
	    __atomic_exchange_n(&sink_armed, 0, __ATOMIC_ACQ_REL)) {
		flag_set(&in_window, 1);	/* set taken, done not yet */
		stop_here();
	}
	real_sink(h, n, all);
	/* Only a spill adds to done on the handler's own thread. */
	if (is_spiller && h == &mapped->wait &&
	    __atomic_exchange_n(&spill_armed, 0, __ATOMIC_ACQ_REL)) {
		flag_set(&spilled, 1);	/* in done, still counted */
		stop_here();
	}
}

/* In the holder's hold of comp: stay until the handler has posted. */
static void locked_hook(struct swait_head *h)
{
	if (h == &other && __atomic_exchange_n(&other_armed, 0,
					       __ATOMIC_ACQ_REL)) {
		/* Our own hold of other: depth 1, so the complete posts. */
		pthread_kill(pthread_self(), SIGUSR1);
		return;
	}
	if (h == held && is_holder && !flag_get(&holding)) {
		flag_set(&holding, 1);
		(void)wait_flag(held_until);
	}
}

static void *holder(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	is_holder = true;
	swait_prepare(held, &w);	/* the hook keeps the hold */
	swait_finish(held, &w);
	return NULL;
}

/* The handler runs on this thread inside its own hold of other. */
static void complete_from_handler(void)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	flag_set(&other_armed, 1);
	swait_prepare(&other, &w);
	swait_finish(&other, &w);
}

static void taken_case(bool pi)
{
	for (int i = 0; i < 20; i++) {
		pthread_t t;
		bool done;

		swait_completion_init(&comp);
		if (pi)
			swait_head_init_pi(&comp.wait);
		swait_head_init(&other);
		holding = in_window = handler_ran = looking = 0;
		held = &comp.wait;
		held_until = &handler_ran;
		sink_armed = 1;
		assert_int_equal(pthread_create(&t, NULL, holder, NULL), 0);
		assert_true(wait_flag(&holding));
		complete_from_handler();
		assert_true(flag_get(&handler_ran));
		/* swait_complete() has returned; the holder takes the set. */
		assert_true(wait_flag(&in_window));
		flag_set(&looking, 1);
		done = swait_completion_done(&comp);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_true(done);
		assert_true(swait_completion_try_wait(&comp));
		assert_false(swait_completion_try_wait(&comp));
		assert_int_equal(swait_head_destroy(&comp.wait), 0);
	}
}

static void taken_ordinary(void **state)
{
	(void)state;
	taken_case(false);
}

static void taken_pi(void **state)
{
	(void)state;
	taken_case(true);
}

/* -------------------------------------------------------------- walk */

static __thread bool is_walker;
static int walk_armed, walk_window, stop_sleepers, asleep;

static void walk_wake_hook(uint32_t *word)
{
	(void)word;
	if (is_walker && __atomic_exchange_n(&walk_armed, 0,
					     __ATOMIC_ACQ_REL)) {
		flag_set(&walk_window, 1);	/* a step done, lock free */
		stop_here();
	}
}

static void *sleeper(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&asleep, 1, __ATOMIC_RELEASE);
	swait_event(&comp.wait, flag_get(&stop_sleepers));
	return NULL;
}

static void *walker(void *arg)
{
	(void)arg;
	is_walker = true;
	swait_wake_all(&comp.wait);
	return NULL;
}

static void walk_pi(void **state)
{
	(void)state;
	for (int i = 0; i < 10; i++) {
		pthread_t s[2], w;
		unsigned long posted0;
		bool done;

		swait_completion_init(&comp);
		swait_head_init_pi(&comp.wait);
		swait_head_init(&other);
		walk_window = looking = stop_sleepers = asleep = 0;
		handler_ran = 0;
		for (int k = 0; k < 2; k++)
			assert_int_equal(pthread_create(&s[k], NULL, sleeper,
							NULL), 0);
		/* Both queued (a walk of one step would not stop between). */
		while (!(flag_get(&asleep) == 2 &&
			 swait_has_sleeper(&comp.wait)))
			sched_yield();
		sleep_ms(5);
		flag_set(&walk_armed, 1);
		assert_int_equal(pthread_create(&w, NULL, walker, NULL), 0);
		assert_true(wait_flag(&walk_window));
		posted0 = swait_hook_deferred;
		complete_from_handler();
		assert_true(flag_get(&handler_ran));
		/* It was posted, not performed: the walk still counts. */
		assert_int_equal(swait_hook_deferred - posted0, 1);
		flag_set(&looking, 1);
		done = swait_completion_done(&comp);
		assert_int_equal(pthread_join(w, NULL), 0);
		flag_set(&stop_sleepers, 1);
		swait_wake_all(&comp.wait);
		for (int k = 0; k < 2; k++)
			assert_int_equal(pthread_join(s[k], NULL), 0);
		assert_true(done);
		assert_true(swait_completion_try_wait(&comp));
		assert_false(swait_completion_try_wait(&comp));
		assert_int_equal(swait_head_destroy(&comp.wait), 0);
	}
	__atomic_store_n(&swait_hook_futex_wake, NULL, __ATOMIC_RELEASE);
}

/* -------------------------------------------------------------- free */

static void *page;
static size_t page_size;

/* A PI completion alone on a fresh page, for a waiter that unmaps it. */
static void map_pi_completion(void)
{
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	mapped = page;
	swait_completion_init(mapped);
	swait_head_init_pi(&mapped->wait);
}
static __thread bool is_completer;
static int completer_holds;

static void slow_hold_hook(struct swait_head *h)
{
	if (is_completer && h == &mapped->wait) {
		flag_set(&completer_holds, 1);
		stop_here();		/* the waiter blocks on the lock */
	}
}

static void on_segv(int sig)
{
	static const char m[] = "donepost: a completer (or spiller) touched a PI "
		"completion its only waiter had freed after its wait\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

static void *completer(void *arg)
{
	(void)arg;
	is_completer = true;
	swait_complete(mapped);
	return NULL;
}

static void *freeing_waiter(void *arg)
{
	(void)arg;
	swait_completion_wait(mapped);
	munmap(page, page_size);	/* allowed: its wait returned */
	return NULL;
}

/*
 * Both threads on one CPU (the one the test started on: a cpuset may
 * leave out CPU 0), the waiter after the completer's lock.
 */
static int the_cpu;

static pthread_t on_one_cpu(void *(*fn)(void *))
{
	pthread_attr_t a;
	cpu_set_t one;
	pthread_t t;

	CPU_ZERO(&one);
	CPU_SET(the_cpu, &one);
	assert_int_equal(pthread_attr_init(&a), 0);
	assert_int_equal(pthread_attr_setaffinity_np(&a, sizeof(one), &one),
			 0);
	assert_int_equal(pthread_create(&t, &a, fn, NULL), 0);
	pthread_attr_destroy(&a);
	return t;
}

static void free_pi(void **state)
{
	(void)state;
	the_cpu = sched_getcpu();
	assert_true(the_cpu >= 0);
	assert_int_equal(tu_signal_handler(SIGSEGV, on_segv, 0, NULL), 0);
	__atomic_store_n(&swait_hook_head_locked, slow_hold_hook,
			 __ATOMIC_RELEASE);
	for (int i = 0; i < 20; i++) {
		pthread_t c, w;

		map_pi_completion();
		completer_holds = looking = 0;
		c = on_one_cpu(completer);
		assert_true(wait_flag(&completer_holds));
		w = on_one_cpu(freeing_waiter);
		flag_set(&looking, 1);	/* the waiter is on its way */
		assert_int_equal(pthread_join(w, NULL), 0);
		assert_int_equal(pthread_join(c, NULL), 0);
	}
	__atomic_store_n(&swait_hook_head_locked, locked_hook,
			 __ATOMIC_RELEASE);
	signal(SIGSEGV, SIG_DFL);
}

/* ----------------------------------------------------------- last_out */

static __thread bool is_leaver;
static int leave_armed, last_out_armed, looked;

static void leaving_hook(struct swait_head *h, bool last_out)
{
	long long t0 = tu_now_ns();

	if (!is_leaver || h != &comp.wait)
		return;
	if (!last_out && __atomic_exchange_n(&leave_armed, 0,
					     __ATOMIC_ACQ_REL)) {
		/* Unlocked, still counted: our handler posts (REFS 1). */
		pthread_kill(pthread_self(), SIGUSR1);
		return;
	}
	if (last_out && __atomic_exchange_n(&last_out_armed, 0,
					    __ATOMIC_ACQ_REL)) {
		/*
		 * Until the looker has performed the post (it took the free
		 * lock first and found it), or has looked and answered
		 * without waiting for us (the old order), at most 5 s.  Not
		 * until it holds the lock: once it saw the event it waits
		 * for us to leave, holding the lock only now and then.
		 */
		flag_set(&in_window, 1);
		while (__atomic_load_n(&comp.done, __ATOMIC_RELAXED) == 0 &&
		       !flag_get(&looked) &&
		       tu_now_ns() - t0 < 5000000000LL)
			sched_yield();
	}
}

static void *leaver(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	is_leaver = true;
	swait_prepare(&comp.wait, &w);	/* its release leaves REFS */
	swait_finish(&comp.wait, &w);
	return NULL;
}

static void last_out_pi(void **state)
{
	(void)state;
	__atomic_store_n(&swait_hook_leaving, leaving_hook, __ATOMIC_RELEASE);
	for (int i = 0; i < 20; i++) {
		pthread_t t;
		bool done;

		swait_completion_init(&comp);
		swait_head_init_pi(&comp.wait);
		in_window = handler_ran = looked = 0;
		leave_armed = last_out_armed = 1;
		assert_int_equal(pthread_create(&t, NULL, leaver, NULL), 0);
		assert_true(wait_flag(&in_window));
		/* Its handler's swait_complete() has returned. */
		assert_true(flag_get(&handler_ran));
		done = swait_completion_done(&comp);
		flag_set(&looked, 1);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_true(done);
		assert_true(swait_completion_try_wait(&comp));
		assert_false(swait_completion_try_wait(&comp));
		assert_int_equal(swait_head_destroy(&comp.wait), 0);
	}
	__atomic_store_n(&swait_hook_leaving, NULL, __ATOMIC_RELEASE);
}

/* -------------------------------------------------------- last_out_busy */

/*
 * The last one out in a handler (it may not wait, L4) finds the lock taken
 * by a newcomer between its look and its trylock: it must leave the post
 * to the newcomer's release, not spin or drop it.  Main's hold of other
 * is interrupted by H1, which completes comp (PI) itself: REFS 0 -> 1,
 * the lock is free, taken.  Its release unlocks; in drop_ref a nested H2
 * posts a second complete (REFS 1: H1); H1 is then the last one out with a
 * post, and the newcomer N takes the lock before H1's trylock.
 */
static __thread bool is_main_h1;
static int nest_armed, newcomer_armed, newcomer_go, nested_ran;

static void on_usr2(int sig)
{
	(void)sig;
	swait_complete(&comp);		/* H2: posted to H1's REFS */
	flag_set(&nested_ran, 1);
}

static void busy_leaving_hook(struct swait_head *h, bool last_out)
{
	if (!is_main_h1 || h != &comp.wait)
		return;
	if (!last_out && __atomic_exchange_n(&nest_armed, 0,
					     __ATOMIC_ACQ_REL)) {
		raise(SIGUSR2);		/* H1 unlocked, still counted */
		return;
	}
	if (last_out && __atomic_exchange_n(&newcomer_armed, 0,
					    __ATOMIC_ACQ_REL)) {
		flag_set(&newcomer_go, 1);
		(void)wait_flag(&holding);	/* N holds comp now */
	}
}

/* A holder of comp (until H1 ran) that comes when H1 calls it. */
static void *newcomer(void *arg)
{
	(void)wait_flag(&newcomer_go);
	return holder(arg);
}

static void last_out_busy_pi(void **state)
{
	(void)state;
#ifdef __SANITIZE_THREAD__
	/*
	 * TSan holds a signal raised inside a handler back to its own safe
	 * points, which may come after H1 has left: then nothing nests and
	 * no newcomer is waited for (seen once in a soak).
	 */
	skip();
#endif
	assert_int_equal(tu_signal_handler(SIGUSR2, on_usr2, 0, NULL), 0);
	__atomic_store_n(&swait_hook_leaving, busy_leaving_hook,
			 __ATOMIC_RELEASE);
	is_main_h1 = true;
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		swait_completion_init(&comp);
		swait_head_init_pi(&comp.wait);
		swait_head_init(&other);
		holding = handler_ran = nested_ran = newcomer_go = 0;
		held = &comp.wait;
		held_until = &handler_ran;
		nest_armed = newcomer_armed = 1;
		assert_int_equal(pthread_create(&t, NULL, newcomer, NULL), 0);
		complete_from_handler();	/* H1, then H2 inside it */
		assert_true(flag_get(&handler_ran));
		assert_true(flag_get(&nested_ran));
		assert_true(flag_get(&holding));	/* N had it */
		assert_int_equal(pthread_join(t, NULL), 0);
		/* H1's complete, and H2's, performed by N's release. */
		assert_true(swait_completion_try_wait(&comp));
		assert_true(swait_completion_try_wait(&comp));
		assert_false(swait_completion_try_wait(&comp));
		assert_int_equal(swait_head_destroy(&comp.wait), 0);
	}
	is_main_h1 = false;
	__atomic_store_n(&swait_hook_leaving, NULL, __ATOMIC_RELEASE);
	signal(SIGUSR2, SIG_DFL);
}

/* -------------------------------------------------------------- spill */

static void *spilling(void *arg)
{
	struct swait_waiter w = SWAIT_WAITER_INITIALIZER;

	(void)arg;
	is_spiller = true;
	flag_set(&other_armed, 1);
	swait_prepare(&other, &w);	/* the handler runs in this hold */
	swait_finish(&other, &w);
	return NULL;
}

static void *consuming_waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < SPILL_MANY; i++)
		swait_completion_wait(mapped);
	munmap(page, page_size);	/* allowed: every event consumed */
	return NULL;
}

static void spill_pi(void **state)
{
	(void)state;
	assert_int_equal(tu_signal_handler(SIGSEGV, on_segv, 0, NULL), 0);
	for (int i = 0; i < 10; i++) {
		pthread_t h, s, w;

		map_pi_completion();
		swait_head_init(&other);
		holding = spilled = looking = handler_ran = 0;
		/* Held until the handler has filled the count and spilled. */
		held = &mapped->wait;
		held_until = &spilled;
		spill_armed = 1;
		assert_int_equal(pthread_create(&h, NULL, holder, NULL), 0);
		assert_true(wait_flag(&holding));
		assert_int_equal(pthread_create(&s, NULL, spilling, NULL), 0);
		assert_true(wait_flag(&spilled));
		/* The holder's release performs the 2,047 posted. */
		assert_int_equal(pthread_join(h, NULL), 0);
		assert_int_equal(pthread_create(&w, NULL, consuming_waiter,
						NULL), 0);
		flag_set(&looking, 1);	/* the spiller stays STOP_MS more */
		assert_int_equal(pthread_join(w, NULL), 0);
		assert_int_equal(pthread_join(s, NULL), 0);
		assert_true(flag_get(&handler_ran));
	}
	signal(SIGSEGV, SIG_DFL);
}

static int setup(void **state)
{
	(void)state;
	tu_watchdog_arm(30, "donepost", NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_watchdog_disarm();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(taken_ordinary, setup,
						teardown),
		cmocka_unit_test_setup_teardown(taken_pi, setup, teardown),
		cmocka_unit_test_setup_teardown(walk_pi, setup, teardown),
		cmocka_unit_test_setup_teardown(free_pi, setup, teardown),
		cmocka_unit_test_setup_teardown(last_out_pi, setup, teardown),
		cmocka_unit_test_setup_teardown(last_out_busy_pi, setup,
						teardown),
		cmocka_unit_test_setup_teardown(spill_pi, setup, teardown),
	};

	if (tu_emulator_shares_tls()) {
		/* Every case takes a signal while other threads run. */
		puts("skipped: qemu-i386 moves a thread's thread-local storage "
		     "once a signal handler has run (cross/qemu-i386.ini)");
		return 77;
	}
	if (tu_signal_handler(SIGUSR1, on_usr1, 0, NULL) != 0)
		return 1;
	real_sink = swait_complete_sink;
	swait_complete_sink = stopping_sink;
	swait_hook_head_locked = locked_hook;
	swait_hook_futex_wake = walk_wake_hook;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
