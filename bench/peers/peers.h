/* SPDX-License-Identifier: MIT */
/*
 * peers.h - the other libraries swait-bench measures libswait against.
 *
 * A careful user who finds pthread_cond too slow reaches for Google's
 * nsync, Abseil's Mutex and CondVar, or C++20's std::atomic wait/notify.
 * Each is a peer here, written the way its documentation recommends, and
 * each is optional: meson builds a peer only where its Debian package is
 * installed (libnsync-dev, libabsl-dev, g++) and defines BENCH_PEER_<NAME>
 * for it; `--help` and `--mech` name the package a missing peer needs.
 *
 * This header is shared by C and C++ files, so it includes only
 * <stdint.h>; a peer's functions use C linkage.
 *
 * Storage: a peer keeps its objects for one channel at the start of
 * struct chan (mech.c), in PEER_AREA bytes aligned to 64.  A peer converts
 * the struct chan pointer to a pointer to its own type; that is valid
 * because a pointer to a structure, suitably converted, points to its first
 * member (C11 6.7.2.1p15), and each peer checks with a static assertion
 * that its type fits.  No peer allocates in its measured calls.
 */
#ifndef SWAIT_BENCH_PEERS_H
#define SWAIT_BENCH_PEERS_H

#include <stdint.h>

#define PEER_AREA 256

#ifdef __cplusplus
extern "C" {
#endif

struct chan;

/*
 * One peer's entry points, all on a channel of counting semantics (see
 * mech.c): setup and teardown outside the measured stretch; post and wait
 * for pingpong, latency, prodcons and contention; wake_empty, the wake call
 * alone with nobody waiting (nowaiter); bwait and bwake, sleep until round
 * r is released and release round r to every sleeper (broadcast).
 *
 * cwake and cwait are for a queue that is not the peer's (mostlybusy): the
 * caller pushes onto its own lock-free queue, whose tail is the 32-bit
 * *word (stored with release order), and calls cwake; cwait returns once
 * cond(arg) (which takes an item) returned nonzero.  Each is written as a
 * user of the peer would write it for such a queue.
 */
#define PEER_DECLARE(p)							\
	void p##_setup(struct chan *c);					\
	void p##_teardown(struct chan *c);				\
	void p##_post(struct chan *c);					\
	void p##_wait(struct chan *c);					\
	void p##_wake_empty(struct chan *c);				\
	void p##_bwait(struct chan *c, uint32_t r);			\
	void p##_bwake(struct chan *c, uint32_t r);			\
	void p##_cwake(struct chan *c, uint32_t *word);			\
	void p##_cwait(struct chan *c, uint32_t *word,			\
		       int (*cond)(void *), void *arg)

PEER_DECLARE(peer_nsync);
PEER_DECLARE(peer_abseil);
PEER_DECLARE(peer_atomic);

#ifdef __cplusplus
}
#endif

#endif /* SWAIT_BENCH_PEERS_H */
