// SPDX-License-Identifier: MIT
/*
 * peer-atomic.cc - C++20 std::atomic<uint32_t>::wait / notify_one
 * (libstdc++, Debian g++).
 *
 * The counting channel written as cppreference's examples write it: take
 * a unit with a compare-exchange, otherwise wait while the count is 0;
 * post adds a unit and calls notify_one.  libstdc++ counts waiters per
 * bucket of a hashed table of its own, so notify_one makes no system call
 * when nobody waits on any address of that bucket: the closest peer to
 * libswait's own "no syscall without a sleeper".
 */
#include <atomic>
#include <new>

#include "peers.h"

namespace {

struct atomic_chan {
	std::atomic<uint32_t> count{0};	// units
	std::atomic<uint32_t> gen{0};	// broadcast rounds released
};

static_assert(sizeof(atomic_chan) <= PEER_AREA, "PEER_AREA too small");

atomic_chan *tc(struct chan *c)
{
	return static_cast<atomic_chan *>(static_cast<void *>(c));
}

bool take(std::atomic<uint32_t> &count)
{
	uint32_t v = count.load(std::memory_order_relaxed);

	while (v != 0)
		if (count.compare_exchange_weak(v, v - 1,
				std::memory_order_acquire,
				std::memory_order_relaxed))
			return true;
	return false;
}

} // namespace

void peer_atomic_setup(struct chan *c)
{
	new (static_cast<void *>(c)) atomic_chan();
}

void peer_atomic_teardown(struct chan *c)
{
	tc(c)->~atomic_chan();
}

void peer_atomic_post(struct chan *c)
{
	atomic_chan *a = tc(c);

	a->count.fetch_add(1, std::memory_order_release);
	a->count.notify_one();
}

void peer_atomic_wait(struct chan *c)
{
	atomic_chan *a = tc(c);

	while (!take(a->count))
		a->count.wait(0, std::memory_order_relaxed);
}

void peer_atomic_wake_empty(struct chan *c)
{
	tc(c)->count.notify_one();
}

void peer_atomic_bwait(struct chan *c, uint32_t r)
{
	atomic_chan *a = tc(c);
	uint32_t g;

	while ((g = a->gen.load(std::memory_order_acquire)) <= r)
		a->gen.wait(g, std::memory_order_relaxed);
}

void peer_atomic_bwake(struct chan *c, uint32_t r)
{
	atomic_chan *a = tc(c);

	a->gen.store(r + 1, std::memory_order_release);
	a->gen.notify_all();
}

// The caller's queue tail, waited on through std::atomic_ref (C++20).
void peer_atomic_cwake(struct chan *c, uint32_t *word)
{
	(void)c;
	// libstdc++'s notify_one skips the system call after a seq_cst load
	// of its waiters count, which pairs with the waiter's seq_cst
	// increment only if the word's store is seq_cst too; the caller's
	// push is a release store, so a user writes this fence (or a seq_cst
	// store, the same cost on x86): without it the count can be read
	// before the push is visible and a sleeper missed.
	std::atomic_thread_fence(std::memory_order_seq_cst);
	std::atomic_ref<uint32_t>(*word).notify_one();
}

void peer_atomic_cwait(struct chan *c, uint32_t *word, int (*cond)(void *),
		       void *arg)
{
	std::atomic_ref<uint32_t> w(*word);

	(void)c;
	for (;;) {
		// Read before cond: a push after cond's test changes it.
		uint32_t v = w.load(std::memory_order_relaxed);

		if (cond(arg))
			return;
		w.wait(v, std::memory_order_relaxed);
	}
}
