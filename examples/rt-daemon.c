// SPDX-License-Identifier: MIT
/*
 * rt-daemon.c - a periodic real-time producer, a worker pool, a live
 * configuration and a clean shutdown, all on swait heads.
 *
 * The shape of a small real daemon:
 *
 *   - A producer runs every period under SCHED_FIFO: clock_nanosleep() to
 *     an absolute CLOCK_MONOTONIC time, so that jitter does not accumulate,
 *     with memory locked and the thread pinned to one CPU.  Where that is
 *     not allowed it says so and runs as SCHED_OTHER.  Each period it stamps
 *     an item and calls swait_wake_one(): exactly one worker is woken per
 *     item, never a herd.
 *   - Workers wait with swait_wait_any() on three heads at once: work,
 *     "configuration changed" and shutdown.  No mutex, no condition
 *     variable per event, no polling.
 *   - A reload thread republishes the configuration with liburcu: readers
 *     (the producer too, without ever blocking) copy it under
 *     rcu_read_lock(); the old version is freed after synchronize_rcu().
 *     swait_wake_all() announces each new version.
 *   - SIGTERM and SIGINT complete a completion straight from the signal
 *     handler (async-signal-safe, see <swait.h>); the main thread, which
 *     waits on it, then stops the others and checks that they all exit.
 *
 * At exit it prints the wake latencies it measured, from the producer's
 * stamp to a woken worker's return from swait_wait_any().
 *
 * Run: rt-daemon [--duration S] [--period-us N] [--workers N] [--no-rt]
 * With --duration it sends itself SIGTERM after S seconds.  Exits 1 if no
 * wake was measured, no reload was announced through a wake, or shutdown
 * did not complete; 2 on bad arguments.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <swait.h>
/*
 * liburcu's membarrier flavour, under the generic names (rcu_read_lock()
 * and so on) that <urcu.h> maps: readers pay a compiler barrier, the
 * updater a membarrier() system call.  No _LGPL_SOURCE: this file is MIT,
 * so it calls liburcu's functions instead of inlining its LGPL fast paths.
 */
#define RCU_MEMBARRIER
#include <urcu.h>

#define NSEC_PER_SEC	1000000000LL
#define RING_SLOTS	64		/* items posted but not yet taken */
#define LAT_US_SLOTS	4096		/* 1 us resolution up to 4 ms */
#define PRIO_PRODUCER	50		/* above the workers: it keeps time */
#define PRIO_WORKER	49
#define STACK_SIZE	(256 * 1024)	/* mlockall() locks every stack */
#define RELOAD_NS	(250 * 1000000LL)
#define EXIT_GRACE_S	5

enum { HEAD_WORK, HEAD_CONFIG, HEAD_SHUTDOWN, NR_HEADS };

struct config {
	uint64_t generation;
	int64_t period_ns;		/* the producer's period */
	int64_t work_ns;		/* simulated work per item */
};

struct lat_stats {
	uint64_t count;
	int64_t min_ns, max_ns;
	uint32_t us[LAT_US_SLOTS + 1];	/* the last slot: 4 ms and more */
};

struct worker {
	pthread_t thread;
	uint64_t generation, items, queued, spurious, reloads, config_wakes;
	int64_t work_ns;
	struct lat_stats lat;		/* merged by main after the join */
};

struct producer {
	pthread_t thread;
	int policy, prio, cpu;
	uint64_t periods, overruns, missed;
	int64_t max_late_ns;		/* timer wakeup later than asked */
};

/* Every head is shared by threads of different priorities: PI heads. */
static struct swait_head work_head = SWAIT_HEAD_PI_INITIALIZER;
static struct swait_head config_head = SWAIT_HEAD_PI_INITIALIZER;
static struct swait_head shutdown_head = SWAIT_HEAD_PI_INITIALIZER;
static struct swait_completion stop_requested = SWAIT_COMPLETION_INITIALIZER;
static struct swait_completion exited = SWAIT_COMPLETION_INITIALIZER;
static atomic_bool stopping;
static volatile sig_atomic_t stop_signal;

/* Written by the reload thread only; readers rcu_dereference() it. */
static struct config *config;
static uint64_t reloads_published;	/* reload thread's; read after join */

/* Options, set before any thread starts. */
static unsigned long duration, period_us = 1000, nr_workers = 2;
static const char *fallback;		/* why not SCHED_FIFO, if not */
static bool locked;			/* mlockall() succeeded */

/*
 * The work ring.  The producer alone advances posted, after it stores the
 * item's stamp; workers claim items by advancing claimed with a CAS.
 */
static _Atomic int64_t ring[RING_SLOTS];
static _Atomic uint64_t posted, claimed;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void timespec_add_ns(struct timespec *ts, int64_t ns)
{
	ns += ts->tv_nsec;
	ts->tv_sec += ns / NSEC_PER_SEC;
	ts->tv_nsec = ns % NSEC_PER_SEC;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "rt-daemon: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Producer side; returns false when the ring is full (workers too slow). */
static bool post_work(int64_t stamp)
{
	uint64_t seq = atomic_load_explicit(&posted, memory_order_relaxed);

	/*
	 * Acquire pairs with the release CAS in claim_work(): the worker that
	 * claimed item seq - RING_SLOTS has read its stamp before we reuse
	 * the slot.
	 */
	if (seq - atomic_load_explicit(&claimed, memory_order_acquire) >=
	    RING_SLOTS)
		return false;
	atomic_store_explicit(&ring[seq % RING_SLOTS], stamp,
			      memory_order_relaxed);
	/* Release: a worker that sees posted > seq sees the stamp. */
	atomic_store_explicit(&posted, seq + 1, memory_order_release);
	swait_wake_one(&work_head);
	return true;
}

/* Worker side: take the oldest unclaimed item, if any. */
static bool claim_work(int64_t *stamp)
{
	uint64_t c = atomic_load_explicit(&claimed, memory_order_relaxed);

	while (c < atomic_load_explicit(&posted, memory_order_acquire)) {
		/*
		 * Read the stamp before the CAS: the slot is reused only once
		 * claimed has passed c, and then this CAS fails and we retry
		 * with the new c, so a stamp that won the CAS is item c's.
		 */
		int64_t s = atomic_load_explicit(&ring[c % RING_SLOTS],
						 memory_order_relaxed);

		if (atomic_compare_exchange_weak_explicit(&claimed, &c, c + 1,
				memory_order_release, memory_order_relaxed)) {
			*stamp = s;
			return true;
		}
	}
	return false;
}

/*
 * Take a private copy of the current configuration.  Only the copy is used
 * after rcu_read_unlock(): from then on the reload thread may free the
 * version we read.  Returns whether it was a new version for this worker.
 */
static bool config_refresh(struct worker *wk)
{
	const struct config *c;
	bool changed;

	rcu_read_lock();
	c = rcu_dereference(config);
	changed = c->generation != wk->generation;
	wk->generation = c->generation;
	wk->work_ns = c->work_ns;
	rcu_read_unlock();
	return changed;
}

static void lat_record(struct lat_stats *s, int64_t ns)
{
	int64_t slot = ns / 1000;

	if (s->count == 0 || ns < s->min_ns)
		s->min_ns = ns;
	if (s->count == 0 || ns > s->max_ns)
		s->max_ns = ns;
	s->count++;
	s->us[slot < 0 ? 0 : slot > LAT_US_SLOTS ? LAT_US_SLOTS : slot]++;
}

static void lat_merge(struct lat_stats *dst, const struct lat_stats *src)
{
	unsigned int i;

	if (src->count && (!dst->count || src->min_ns < dst->min_ns))
		dst->min_ns = src->min_ns;
	if (src->count && src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	dst->count += src->count;
	for (i = 0; i <= LAT_US_SLOTS; i++)
		dst->us[i] += src->us[i];
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct swait_head *const heads[NR_HEADS] = {
		[HEAD_WORK] = &work_head,
		[HEAD_CONFIG] = &config_head,
		[HEAD_SHUTDOWN] = &shutdown_head,
	};
	struct swait_waiter w[NR_HEADS];
	int64_t woke = -1;	/* when a work wake ended our last sleep */
	int64_t stamp, t;
	unsigned int which;
	int err;

	memset(w, 0, sizeof(w));	/* all-zero: idle waiters */
	rcu_register_thread();
	config_refresh(wk);
	for (;;) {
		/*
		 * The multi-head form of prepare / check / sleep: every
		 * condition is checked after the nodes are queued, so a wake
		 * on any head between the check and the sleep ends the sleep.
		 * The barrier ending swait_prepare_any() pairs with the one
		 * starting each wake, so relaxed loads of the conditions do.
		 */
		for (;;) {
			swait_prepare_any(heads, NR_HEADS, w);
			if (atomic_load_explicit(&stopping,
						 memory_order_relaxed))
				goto out;
			if (config_refresh(wk))
				wk->reloads++;
			if (claim_work(&stamp))
				break;
			if (woke >= 0) {
				/* Another worker took "our" item first. */
				wk->spurious++;
				woke = -1;
			}
			err = swait_wait_any(heads, NR_HEADS, w, 0,
					     CLOCK_MONOTONIC, NULL, &which);
			t = now_ns();	/* first thing: this is the latency */
			if (err)
				die("swait_wait_any", err);
			if (which == HEAD_WORK)
				woke = t;
			else if (which == HEAD_CONFIG)
				wk->config_wakes++;
		}
		/*
		 * Leave every queue before working: a wake_one that picks us
		 * while we are busy is passed on to an idle worker instead.
		 */
		swait_finish_any(heads, NR_HEADS, w);
		if (woke >= 0)
			lat_record(&wk->lat, woke - stamp);
		else
			wk->queued++;	/* found without sleeping for it */
		woke = -1;
		wk->items++;
		for (t = now_ns() + wk->work_ns; now_ns() < t;)
			;		/* the "work" */
	}
out:
	swait_finish_any(heads, NR_HEADS, w);
	rcu_unregister_thread();
	swait_complete(&exited);	/* last touch of shared state */
	return NULL;
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	struct sched_param sp;
	struct timespec next;
	int64_t period, late, t;

	pthread_getschedparam(pthread_self(), &p->policy, &sp);
	p->prio = sp.sched_priority;
	rcu_register_thread();
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
		/* Wait-free for us even while the reload thread updates. */
		rcu_read_lock();
		period = rcu_dereference(config)->period_ns;
		rcu_read_unlock();

		timespec_add_ns(&next, period);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
		t = now_ns();
		late = t - ((int64_t)next.tv_sec * NSEC_PER_SEC + next.tv_nsec);
		if (late > p->max_late_ns)
			p->max_late_ns = late;
		if (late > period) {
			/* Missed whole periods: restart the grid, no burst. */
			p->missed++;
			clock_gettime(CLOCK_MONOTONIC, &next);
		}
		p->periods++;
		if (!post_work(t))
			p->overruns++;
	}
	rcu_unregister_thread();
	swait_complete(&exited);
	return NULL;
}

/* The single updater: publish, announce, wait out the readers, free. */
static void publish_config(void)
{
	static const int64_t work_sizes[] = { 5000, 20000, 10000, 40000 };
	struct config *old = config;	/* we are its only writer */
	struct config *fresh = malloc(sizeof(*fresh));

	if (!fresh)
		return;			/* keep the old one; try next time */
	*fresh = *old;
	fresh->generation++;
	fresh->work_ns = work_sizes[fresh->generation % 4];
	rcu_assign_pointer(config, fresh);
	/* Its barrier orders the publication before the wakes. */
	swait_wake_all(&config_head);
	synchronize_rcu();		/* no reader holds old any more */
	free(old);
	reloads_published++;
}

static void *reload_main(void *arg)
{
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		timespec_add_ns(&next, RELOAD_NS);
		/* Sleep until the next reload, or until shutdown. */
		if (swait_event_timeout(&shutdown_head,
					atomic_load(&stopping),
					CLOCK_MONOTONIC, &next) == 0)
			break;
		publish_config();
	}
	swait_complete(&exited);
	return NULL;
}

/* Only async-signal-safe calls here; the main thread does the rest. */
static void on_stop_signal(int sig)
{
	stop_signal = sig;
	swait_complete(&stop_requested);
}

/* Start a thread: SCHED_FIFO at prio, or an ordinary one if prio is 0. */
static int spawn(pthread_t *t, void *(*fn)(void *), void *arg, int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t attr;
	int err;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	if (prio) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return err;
}

/*
 * Pin to the last CPU we may use: CPU 0 usually takes more housekeeping
 * interrupts.  The workers stay free, so a woken one runs wherever a CPU
 * is idle first.  Returns the CPU, or -1.
 */
static int pin_to_last_cpu(pthread_t t)
{
	cpu_set_t set;
	int cpu, err;

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 2) {
		fprintf(stderr, "rt-daemon: one CPU allowed: not pinning\n");
		return -1;
	}
	for (cpu = CPU_SETSIZE - 1; !CPU_ISSET(cpu, &set); cpu--)
		;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	err = pthread_setaffinity_np(t, sizeof(set), &set);
	if (err) {
		fprintf(stderr, "rt-daemon: cannot pin the producer to CPU %d: %s\n",
			cpu, strerror(err));
		return -1;
	}
	return cpu;
}

static unsigned long parse_num(const char *name, const char *s,
			       unsigned long lo, unsigned long hi)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || errno || v < lo || v > hi) {
		fprintf(stderr, "rt-daemon: --%s wants an integer in [%lu, %lu], not '%s'\n",
			name, lo, hi, s);
		exit(2);
	}
	return v;
}

/* Slot i holds [i, i + 1) us, so print the bound of the slot reached. */
static void print_percentile(const struct lat_stats *s, const char *label,
			     double p)
{
	uint64_t want = (uint64_t)(p * (double)s->count + 0.999999), seen = 0;
	unsigned int i;

	for (i = 0; i < LAT_US_SLOTS && (seen += s->us[i]) < want; i++)
		;
	if (i < LAT_US_SLOTS)
		printf("  %s <%u us", label, i + 1);
	else
		printf("  %s >%d ms", label, LAT_US_SLOTS / 1000);
}

static void lat_print(const struct lat_stats *s)
{
	uint64_t bucket[14] = { 0 }, top = 1;
	unsigned int i, b, first = 14, last = 0;

	printf("wake latency, producer's stamp to swait_wait_any() returning in the woken worker:\n");
	printf("  count %" PRIu64 "  min %.1f us", s->count, s->min_ns / 1e3);
	print_percentile(s, "median", 0.50);
	print_percentile(s, "p99", 0.99);
	printf("  max %.1f us\n", s->max_ns / 1e3);
	/* log2 buckets: [0,1) us, [1,2), [2,4), ... [2048,4096), >=4096. */
	for (i = 0; i <= LAT_US_SLOTS; i++) {
		b = i == 0 ? 0 : 32 - (unsigned int)__builtin_clz(i);
		bucket[b] += s->us[i];
	}
	for (b = 0; b < 14; b++) {
		first = bucket[b] && first == 14 ? b : first;
		last = bucket[b] ? b : last;
		top = bucket[b] > top ? bucket[b] : top;
	}
	for (b = first; b <= last; b++) {
		unsigned int lo = b ? 1u << (b - 1) : 0, bar;

		if (b < 13)
			printf("  %5u .. %5u us %8" PRIu64, lo, 1u << b,
			       bucket[b]);
		else
			printf("  %5u us and up %8" PRIu64, lo, bucket[b]);
		bar = (unsigned int)((bucket[b] * 40 + top - 1) / top);
		printf("%s%.*s\n", bar ? " " : "", (int)bar,
		       "########################################");
	}
}

static const char usage[] =
	"usage: rt-daemon [--duration SECONDS] [--period-us N] [--workers N] [--no-rt]\n";

/* Bad arguments: one line on stderr, exit 2. */
static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "period-us", required_argument, NULL, 'p' },
		{ "workers", required_argument, NULL, 'w' },
		{ "no-rt", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	/* A leading ':' keeps getopt quiet and reports a missing value. */
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			duration = parse_num("duration", optarg, 1, 86400);
			break;
		case 'p':
			period_us = parse_num("period-us", optarg, 50, 1000000);
			break;
		case 'w':
			nr_workers = parse_num("workers", optarg, 1, 64);
			break;
		case 'n':
			fallback = "--no-rt";
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fprintf(stderr, "rt-daemon: %s '%s' (see --help)\n",
				opt == ':' ? "missing value for" :
				"unknown option", argv[optind - 1]);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rt-daemon: unexpected argument '%s'\n",
			argv[optind]);
		exit(2);
	}
}

/*
 * Start the producer (its success decides the policy), the workers and the
 * reloader.  Memory is locked last, when every stack exists: mlockall()
 * then fails cleanly against RLIMIT_MEMLOCK, where MCL_FUTURE before
 * pthread_create() would make thread creation fail instead.
 */
static void start_threads(struct producer *prod, struct worker *workers,
			  pthread_t *reloader)
{
	unsigned long i;
	int err;

	err = spawn(&prod->thread, producer_main, prod,
		    fallback ? 0 : PRIO_PRODUCER);
	if (err == EPERM && !fallback) {
		fprintf(stderr, "rt-daemon: SCHED_FIFO not permitted (needs CAP_SYS_NICE or RLIMIT_RTPRIO, and RT runtime in this cgroup); using SCHED_OTHER\n");
		fallback = "SCHED_FIFO not permitted";
		err = spawn(&prod->thread, producer_main, prod, 0);
	}
	if (!err && !fallback)
		prod->cpu = pin_to_last_cpu(prod->thread);
	for (i = 0; !err && i < nr_workers; i++)
		err = spawn(&workers[i].thread, worker_main, &workers[i],
			    fallback ? 0 : PRIO_WORKER);
	if (!err)
		err = spawn(reloader, reload_main, NULL, 0);
	if (err)
		die("pthread_create", err);
	if (fallback)
		return;
	/* No page faults in the periodic path, stacks included. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		locked = true;
	else
		fprintf(stderr, "rt-daemon: mlockall: %s; page faults may add latency\n",
			strerror(errno));
}

int main(int argc, char **argv)
{
	struct producer prod = { .cpu = -1 };
	unsigned int i, nr_threads;
	struct worker *workers;
	struct lat_stats *all;
	struct sigaction sa;
	struct timespec dl;
	sigset_t stop_set;
	pthread_t reloader;
	uint64_t items = 0, queued = 0, spurious = 0, reloads = 0, cwakes = 0;
	int64_t t0, shutdown_ns;
	bool ok = true;

	parse_args(argc, argv);
	workers = calloc(nr_workers, sizeof(*workers));
	all = calloc(1, sizeof(*all));
	config = malloc(sizeof(*config));
	if (!workers || !all || !config)
		die("calloc", ENOMEM);
	*config = (struct config){ .generation = 1, .work_ns = 10000,
				   .period_ns = (int64_t)period_us * 1000 };

	/*
	 * Block the stop signals before any thread exists: every thread
	 * inherits the mask, so the handler runs only in this thread, while
	 * it waits on stop_requested, and never interrupts an RT thread.
	 */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	start_threads(&prod, workers, &reloader);
	nr_threads = (unsigned int)nr_workers + 2;
	if (duration) {
		/* SIGTERM from a timer: the same path as a kill from outside. */
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
					.sigev_signo = SIGTERM };
		struct itimerspec its = { .it_value.tv_sec = (time_t)duration };
		timer_t timer;

		if (timer_create(CLOCK_MONOTONIC, &sev, &timer) ||
		    timer_settime(timer, 0, &its, NULL))
			die("timer", errno);
	}
	pthread_sigmask(SIG_UNBLOCK, &stop_set, NULL);
	swait_completion_wait(&stop_requested);

	/* swait_wake_all()'s barrier orders stopping before the wakes. */
	t0 = now_ns();
	atomic_store(&stopping, true);
	swait_wake_all(&shutdown_head);
	swait_deadline_after(&dl, CLOCK_MONOTONIC, EXIT_GRACE_S * NSEC_PER_SEC);
	for (i = 0; i < nr_threads; i++) {
		if (swait_completion_wait_timeout(&exited, CLOCK_MONOTONIC, &dl)) {
			printf("FAILED: shutdown did not complete: %u of %u threads exited in %d s\n",
			       i, nr_threads, EXIT_GRACE_S);
			fflush(stdout);
			_exit(1);	/* the stuck threads cannot be joined */
		}
	}
	shutdown_ns = now_ns() - t0;
	pthread_join(prod.thread, NULL);
	pthread_join(reloader, NULL);
	for (i = 0; i < nr_workers; i++) {
		pthread_join(workers[i].thread, NULL);	/* then read its stats */
		lat_merge(all, &workers[i].lat);
		items += workers[i].items;
		queued += workers[i].queued;
		spurious += workers[i].spurious;
		reloads += workers[i].reloads;
		cwakes += workers[i].config_wakes;
	}

	printf("rt-daemon: producer %s", prod.policy == SCHED_FIFO ?
	       "SCHED_FIFO" : "SCHED_OTHER");
	if (prod.policy == SCHED_FIFO)
		printf(" priority %d", prod.prio);
	if (prod.cpu >= 0)
		printf(", pinned to CPU %d", prod.cpu);
	if (fallback)
		printf(" (%s)", fallback);
	printf(", memory %slocked; %lu workers\n", locked ? "" : "not ",
	       nr_workers);
	printf("producer: %" PRIu64 " periods of %lu us, timer late by at most %.1f us, %" PRIu64 " missed, %" PRIu64 " ring overruns\n",
	       prod.periods, period_us, prod.max_late_ns / 1e3, prod.missed,
	       prod.overruns);
	lat_print(all);
	printf("items: %" PRIu64 " taken, %" PRIu64 " after a work wake, %" PRIu64 " found queued; %" PRIu64 " wakes found the item taken\n",
	       items, all->count, queued, spurious);
	printf("config: %" PRIu64 " reloads published (generation %" PRIu64 "), %" PRIu64 " seen by workers, %" PRIu64 " sleeps ended by the config head\n",
	       reloads_published, config->generation, reloads, cwakes);
	printf("shutdown: %s, %u threads exited in %.1f ms\n",
	       stop_signal == SIGINT ? "SIGINT" : "SIGTERM", nr_threads,
	       shutdown_ns / 1e6);
	if (all->count == 0) {
		printf("FAILED: no wake latency was measured\n");
		ok = false;
	}
	if (reloads_published == 0 || cwakes == 0) {
		printf("FAILED: no reload was announced through a wake\n");
		ok = false;
	}
	free(config);
	free(workers);
	free(all);
	return ok ? 0 : 1;
}
