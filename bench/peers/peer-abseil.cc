// SPDX-License-Identifier: MIT
/*
 * peer-abseil.cc - Abseil (Debian libabsl-dev): absl::Mutex and
 * absl::CondVar.
 *
 * The CondVar form, as a port from pthread_cond would write it, with the
 * signal made while holding the mutex: Abseil then transfers the woken
 * waiter to the mutex's queue, which is the form its documentation calls
 * efficient.  (absl::Mutex::Await with a Condition is the other idiom; it
 * re-evaluates conditions on every unlock, a different cost model.)
 */
#include <new>

#include <absl/synchronization/mutex.h>

#include "peers.h"

namespace {

struct abseil_chan {
	absl::Mutex mu;
	absl::CondVar cv;
	uint32_t count = 0;	// units, under mu
	uint32_t gen = 0;	// broadcast rounds released, under mu
};

static_assert(sizeof(abseil_chan) <= PEER_AREA, "PEER_AREA too small");

abseil_chan *ac(struct chan *c)
{
	return static_cast<abseil_chan *>(static_cast<void *>(c));
}

} // namespace

void peer_abseil_setup(struct chan *c)
{
	new (static_cast<void *>(c)) abseil_chan();
}

void peer_abseil_teardown(struct chan *c)
{
	ac(c)->~abseil_chan();
}

void peer_abseil_post(struct chan *c)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	a->count++;
	a->cv.Signal();
}

void peer_abseil_wait(struct chan *c)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	while (a->count == 0)
		a->cv.Wait(&a->mu);
	a->count--;
}

void peer_abseil_wake_empty(struct chan *c)
{
	ac(c)->cv.Signal();
}

void peer_abseil_bwait(struct chan *c, uint32_t r)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	while (a->gen <= r)
		a->cv.Wait(&a->mu);
}

void peer_abseil_bwake(struct chan *c, uint32_t r)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	a->gen = r + 1;
	a->cv.SignalAll();
}

// The queue is not under mu, so the wake takes mu, as with nsync: the
// waiter tests cond and sleeps holding it.
void peer_abseil_cwake(struct chan *c, uint32_t *word)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	(void)word;
	a->cv.Signal();
}

void peer_abseil_cwait(struct chan *c, uint32_t *word, int (*cond)(void *),
		       void *arg)
{
	abseil_chan *a = ac(c);
	absl::MutexLock l(&a->mu);

	(void)word;
	while (!cond(arg))
		a->cv.Wait(&a->mu);
}
