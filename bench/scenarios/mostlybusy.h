/* SPDX-License-Identifier: MIT */
/*
 * mostlybusy.h - the queue of the mostlybusy scenario (mostlybusy.c, where
 * the method is) and its wake/wait pairs (mostlybusy-mechs.c).
 */
#ifndef SWAIT_BENCH_MOSTLYBUSY_H
#define SWAIT_BENCH_MOSTLYBUSY_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include <swait.h>

#include "bench.h"

#define MB_WORK_NS	300	/* the busy work per item */
#define MB_DEPTH	4096	/* HI per worker; LO is HI / 2 */
#define MB_SAMPLES	65536	/* the producer's refills kept per trial */
#define MP_BATCH	16	/* membarrier calls per sample */

struct mb_mech;

struct mb {
	/* Read-mostly during a trial. */
	const struct mb_mech *m;
	struct chan *pc;		/* a peer's mutex and condvar */
	unsigned long spin;		/* work loop iterations per item */
	uint32_t hi, lo;		/* queue depth the producer keeps */
	int nw;				/* workers */
	bool tracepoint;
	/* The producer's own. */
	alignas(64) double *push_ns;	/* ns per push + wake, per refill */
	size_t npush;
	struct where pwhere;
	/* The queue. */
	alignas(64) uint32_t tail;	/* pushed; stored by the producer */
	alignas(64) uint32_t head;	/* claimed; CAS by the workers */
	/* The mechanisms' state; one mechanism per trial. */
	alignas(64) struct swait_head sh;	/* swait, swait-asym */
	uint32_t sleepers;		/* futex-sleeper: in FUTEX_WAIT */
	pthread_mutex_t mu;		/* cond */
	pthread_cond_t cv;
	/* Written by the main thread and, at the end, the producer. */
	alignas(64) int measuring, stop, stop_workers;
};

struct mb_mech {
	const char *name;
	void (*setup)(struct mb *q);
	void (*teardown)(struct mb *q);
	/* After every push: wake one worker if one sleeps. */
	void (*wake)(struct mb *q);
	/* Called when the queue was empty: return with one item claimed. */
	void (*wait)(struct mb *q);
	bool own_futex_count;
	const struct mech *peer;
};

/* One worker, on a cache line of its own. */
struct mb_worker {
	alignas(64) struct mb *q;
	long items;		/* done in the window */
	long waits;		/* of those, found the queue empty */
	struct where where;
};

/* Take one item if there is one (mostlybusy-mechs.c). */
bool mb_claim(struct mb *q);
int mb_membarrier(int cmd);

/* swait, swait-asym, cond, futex-sleeper; a peer through mb_peer(). */
extern const struct mb_mech mb_mechs[];
extern const size_t mb_nmechs;
struct mb_mech mb_peer(const struct mech *peer);

#endif /* SWAIT_BENCH_MOSTLYBUSY_H */
