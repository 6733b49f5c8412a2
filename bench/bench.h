/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the pieces of swait-bench share.
 *
 * The program is a measuring instrument, so its structure follows the
 * method of issue 4, a directory a part (README.md, "Where things are"):
 *
 *  - mechs/mech.c, peers/
 *                the mechanisms: every way a thread can sleep until another
 *                thread hands it one unit of work, behind one table of
 *                function pointers (struct mech), all with counting
 *                semantics so that every scenario can use every mechanism.
 *  - scenarios/  pingpong, nowaiter, broadcast, latency, timedwait,
 *                prodcons, contention, mostlybusy, program: one scenario
 *                each.  A scenario runs its trials (every repetition runs
 *                each mechanism once, order rotated, fresh threads per
 *                trial), tells the watchdog of the work done, and hands
 *                every kept sample to output/results.c as a struct trial.
 *  - output/     results.c keeps every trial, then computes percentiles
 *                over the pooled samples and ratios per repetition;
 *                table.c, goals.c, export.c print them as a table, CSV or
 *                JSON; plot.c draws them with gnuplot.
 *  - harness/    the command line and the order of things; util.c:
 *                clocks, placement, thread start, the watchdog, per-thread
 *                counters (context switches, futex calls), the run header;
 *                load.c: the competing load of --load, busy SCHED_OTHER
 *                threads, one per CPU, that the measured threads must
 *                preempt.
 */
#ifndef SWAIT_BENCH_H
#define SWAIT_BENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ---------------------------------------------------------------- options */

enum placement { PLACE_SAME, PLACE_SPLIT, PLACE_FREE };
enum format { FMT_TABLE, FMT_CSV, FMT_JSON };
/* --load: latency without it, under it, or both in every repetition. */
enum load_mode { LOAD_NONE, LOAD_CPU, LOAD_BOTH };

struct opts {
	unsigned scenarios;		/* bit i: scenario i of the table */
	const char *mech_list;		/* --mech as given, NULL: all */
	enum placement cpus;		/* the placement running now */
	unsigned cpus_set;		/* --cpus: bit p for placement p */
	int reps;
	long iterations;		/* 0: the scenario's default */
	double duration;		/* seconds per trial, 0: iterations */
	long corpus_mb;			/* program: corpus size, 0: default */
	int threads;			/* 0: the scenario's default */
	int wakers, waiters;		/* contention; 0: the default series */
	bool rt;
	enum load_mode load;
	bool quick;
	bool count_futex;
	bool progress;			/* stderr is a terminal */
	enum format format;
	const char *output;
	const char *plot;
	const char *command;		/* the command line, for the plot */
	int cpu_a, cpu_b;		/* the CPUs "same" and "split" use */
};

extern struct opts opt;

/* --------------------------------------------------------------- mechanisms */

/* One counting channel; its layout is private to mech.c. */
struct chan;

/* Which scenarios a mechanism takes part in. */
#define MF_HANDOFF	0x1u	/* post/wait: pingpong, latency, prodcons */
#define MF_TIMED	0x2u	/* timedwait */
#define MF_PEER		0x4u	/* another library (peers.h): also nowaiter
				   and broadcast, through the three below */

struct mech {
	const char *name;	/* the --mech name */
	const char *desc;	/* one line for --help */
	unsigned flags;
	void (*setup)(struct chan *c);
	void (*teardown)(struct chan *c);
	/* Make one unit available and wake one waiter. */
	void (*post)(struct chan *c);
	/* Take one unit, sleeping while there is none. */
	void (*wait)(struct chan *c);
	/* As wait, until an absolute deadline: 0 or ETIMEDOUT. */
	int (*timedwait)(struct chan *c, clockid_t clock,
			 const struct timespec *deadline);
	/* Whether the futex calls are counted by our own wrappers. */
	bool own_futex_count;
	/* MF_PEER only: the wake call alone, with nobody waiting. */
	void (*wake_empty)(struct chan *c);
	/* MF_PEER only: sleep until round r is released; release it. */
	void (*bwait)(struct chan *c, uint32_t r);
	void (*bwake)(struct chan *c, uint32_t r);
	/*
	 * MF_PEER only (mostlybusy): the wake after a push onto the caller's
	 * own queue, whose tail is *word; sleep until cond(arg) is true.
	 */
	void (*cwake)(struct chan *c, uint32_t *word);
	void (*cwait)(struct chan *c, uint32_t *word, int (*cond)(void *),
		      void *arg);
};

extern const struct mech mechs[];
extern const size_t nmechs;

struct chan *chan_new(const struct mech *m);
void chan_free(const struct mech *m, struct chan *c);
int mech_index(const char *name);

/* Whether name is selected by --mech (all are when --mech is absent). */
bool mech_selected(const char *name);
/*
 * Fill sel (room for cap) with the mechanisms that have every bit of flags
 * and were selected by --mech, in table order; returns how many.
 */
size_t mechs_select(unsigned flags, const struct mech **sel, size_t cap);
/* Whether name is a mechanism of any scenario; for --mech checking. */
bool mech_name_known(const char *name);
/* Why the peer called name was not built; NULL if it was, or no peer. */
const char *peer_missing_why(const char *name);
/* Print the peers that were not built, a line each, for --help. */
void peers_missing_print(FILE *f);

/*
 * The calling thread's libswait sleeps spin (false: the default cap) or
 * not (true: cap 0), for swait-nospin; a system call only on a change.
 */
void spin_as(bool nospin);

/* Raw futex wrappers, counted per thread. */
extern _Thread_local unsigned long tl_futex_wake, tl_futex_wait;
void bench_futex_wake(uint32_t *word, int n);
int bench_futex_wait(uint32_t *word, uint32_t val, clockid_t clock,
		     const struct timespec *deadline);

/* ------------------------------------------------------------------ util */

uint64_t now_ns(void);
double ts_to_ns(const struct timespec *ts);
struct timespec ns_to_ts(uint64_t ns);
void *alloc_samples(size_t n);		/* pre-faulted, never NULL */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The watchdog: it ends the run with status 3 when no operation has
 * completed for 30 s (SWAIT_BENCH_WATCHDOG) plus the running trial's
 * allowance.  Threads report completed operations with work_done() (fast
 * loops every 256th, as WORK_TICK does); progress() starts a trial, with
 * no allowance until watchdog_allow() gives one (seconds per operation).
 */
void watchdog_start(void);
void watchdog_stop(void);
void work_done(unsigned long n);
void watchdog_allow(double seconds);
#define WORK_TICK(i) do { if (((i) & 255) == 0) work_done(256); } while (0)

/* Start a thread on cpu (-1: anywhere), SCHED_FIFO if --rt. */
pthread_t spawn(void *(*fn)(void *), void *arg, int cpu);
/*
 * Under --rt the measured threads are SCHED_FIFO 80, and some never block
 * (mostlybusy's workers while the queue holds items): the thread that
 * opens and closes a measured window must then outrank them, or it runs
 * only while RT throttling stops them and measures an empty window.  On:
 * the calling thread becomes SCHED_FIFO 81; off: SCHED_OTHER again.
 * Nothing without --rt.
 */
void rt_window_keeper(bool on);
/* The CPU for thread i of a trial: a for the waker side, b for the other. */
int place_cpu(bool waker_side);
const char *placement_name(enum placement p);
/* The placements the selected scenarios run under: "same,split". */
const char *placements_label(void);

/* Per-thread counters over a measured stretch. */
struct tcount {
	long csw;			/* voluntary + involuntary switches */
	double cpu_ns;			/* the thread's CPU time */
	unsigned long fwake, fwait;	/* our wrappers' futex calls */
	long tp_wake, tp_wait, tp_all;	/* tracepoint counts, -1: none */
	int cpu_begin, cpu_end;
	bool moved;			/* seen on another CPU in between */
	int tp_fd[4];	/* wakes, waits, all futex, futex_waitv */
};
void tcount_begin(struct tcount *t);
/* clock_gettime(clock) in ns. */
double cpu_clock_ns(clockid_t clock);
extern double trial_cpu_mark;
extern bool trial_cpu_stale;
void tcount_end(struct tcount *t);
/* Note a migration; call now and then inside the measured stretch. */
void tcount_check_cpu(struct tcount *t);
/* Whether futex calls can be counted by a tracepoint; why not in *why. */
bool futex_tracepoint_available(const char **why);
/* Attach tracepoint counters to this thread (before tcount_begin). */
void tcount_tracepoint(struct tcount *t, bool on);
void tcount_close(struct tcount *t);
bool tracefs_private_mount(void);

/*
 * One thread's counters over a measured window that another thread opens
 * and closes (prodcons, contention, mostlybusy).  The thread notes the
 * window's state after each operation: the counts start at the first
 * operation that sees it open and end at the first that sees it closed
 * (or when the thread stops), and under --cpus free its CPU is checked
 * every 256 operations in between.  in_window: the thread saw it open.
 */
struct where {
	struct tcount tc;
	unsigned long ops;
	unsigned long done;		/* every note, for the watchdog */
	bool in_window, ended;
};
void where_start(struct where *w, bool tracepoint);
void where_note(struct where *w, int measuring);
/* End the counts if the window did not; closes the tracepoint counters. */
void where_stop(struct where *w);

/* A trial's counts over the measured window, summed over its threads. */
struct window_counts {
	double csw, fwake, fwait, tp_wake, tp_wait;
	double cpu;	/* ns: each thread's own CPU clock over its window */
};
/* Add w's counts, if its thread saw the window (else it did nothing in it). */
void window_counts_add(struct window_counts *c, const struct where *w);
/* Divide every count by ops, or make it NAN if there were none. */
void window_counts_per_op(struct window_counts *c, double ops);

/*
 * The measured window of prodcons, contention and mostlybusy, run by the
 * main thread while the trial's threads work: a warm-up of window / 10 ns,
 * then *measuring set for window ns.  Returns the window's length as the
 * clock measured it, in seconds.
 */
double window_run(int *measuring, uint64_t window);

/* "same" or "split" for two threads' counts; "migrated" otherwise. */
const char *regime_of(const struct tcount *a, const struct tcount *b);
/*
 * The same for n threads: "same" when all stayed on one CPU, "split" when
 * each stayed on its own CPU but not all on one, "migrated" when any moved.
 */
const char *regime_of_threads(const struct tcount *const *t, size_t n);

struct sysinfo_hdr {
	char kernel[256];
	char cpu_model[128];
	int vcpus;
	char glibc[32];
	char policy[32];
	char load_before[64];
	char load_after[64];
	char started[32];
};
extern struct sysinfo_hdr hdr;
void header_begin(void);
void header_end(void);

/* ------------------------------------------------------------------ load */

/* Start one busy thread per CPU; returns once every one of them runs. */
void load_start(void);
void load_stop(void);
/* "cpu" between load_start and load_stop, "none" otherwise. */
const char *load_current(void);
/* How many threads load_start starts. */
int load_threads_count(void);
const char *load_mode_name(enum load_mode m);

/* --------------------------------------------------------------- results */

struct trial {
	const char *scenario;
	const char *metric;	/* e.g. "round_trip" */
	const char *unit;	/* "ns", "items/s", "ratio" */
	char series[32];	/* a scenario parameter, e.g. "n=64" */
	const char *mech;
	const char *regime;	/* "same", "split", "migrated" */
	const char *load;	/* "none", "cpu"; NULL: load_current() */
	const char *placement;	/* set by trial_add: the --cpus running */
	int rep;
	double *v;		/* samples, owned by results.c once added */
	size_t n;
	double csw, fwake, fwait;	/* per operation, NAN: unknown */
	/*
	 * CPU time per operation in ns, when cpu_known; else trial_add
	 * takes the process's CPU time since the trial's first spawn().
	 */
	double cpu;
	bool cpu_known;
};

/* Hand a trial (and its sample buffer) over to results.c. */
void trial_add(const struct trial *t);
/*
 * Record a trial of two threads a and b: n samples v (handed over), the
 * regime they ran in, and their context switches and (for mechanisms that
 * count their own futex calls) futex calls per operation.
 */
void trial_add_pair(const char *scenario, const char *metric,
		    const struct mech *m, int rep, double *v, size_t n,
		    const struct tcount *a, const struct tcount *b);
/* Attach counts measured in a separate counting run. */
void counts_set(const char *scenario, const char *series, const char *mech,
		double fwake, double fwait);

struct row {
	const char *scenario, *metric, *unit, *mech, *regime;
	const char *placement;	/* same, split or free */
	const char *series;
	const char *load;	/* the competing load: "none" or "cpu" */
	int reps;
	size_t samples;
	double median, p90, p99, p999, p9999, max, mean;
	const char *ref1, *ref2;
	double r1_med, r1_min, r1_max;
	double r2_med, r2_min, r2_max;
	bool noisy;		/* the block's reference spread > 10 % */
	double csw, fwake, fwait;
	double cpu;		/* CPU ns per operation, NAN: unknown */
	double *sorted;		/* pooled samples, ascending */
	double *rep_med;	/* median of each repetition, NAN: none */
};

/* References for the ratios of a scenario's rows. */
void scenario_refs(const char *scenario, const char *ref1, const char *ref2);
/* Group the trials into rows (once, after all scenarios ran). */
size_t results_rows(struct row **rows);
void results_print(FILE *f, enum format fmt);

/* ------------------------------------------------------------- scenarios */

struct scenario {
	const char *name;
	const char *help;
	void (*run)(void);
	bool named_only;	/* not in the default tour: name it */
};

extern const struct scenario scenarios[];
extern const size_t nscenarios;

void run_pingpong(void);
void run_nowaiter(void);
void run_broadcast(void);
void run_latency(void);
void run_program(void);
void run_timedwait(void);
void run_prodcons(void);
void run_contention(void);
void run_mostlybusy(void);

/* Iterations for a trial: --iterations, else def (def_quick with --quick). */
long trial_iterations(long def, long def_quick);
/* The trial's time budget in ns, 0 when counting iterations. */
uint64_t trial_duration_ns(void);

int plot_write(const char *file);
bool plot_available(void);

#endif /* SWAIT_BENCH_H */
