// SPDX-License-Identifier: MIT
/*
 * head.c - a head's life and a waiter's: init, destroy, and the debug
 * builds' checks that an init does not throw away queued waiters.
 *
 * The rule destroy enforces is lib/wake.c's LEAVERS with lib/swait.c's
 * I3: it returns 0 once no waiter is queued, no posted wake is pending
 * (lib/headlock.c L3) and no wake_all walk still holds woken waiters in
 * its batch; after that nothing in the library touches the head but by
 * FUTEX_WAKE on an address.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "headlock.h"
#include "internal.h"
#include "list.h"
#include "queue.h"
#include "state.h"

/*
 * Copy n bytes at addr into buf, or return false if addr is not readable:
 * process_vm_readv() on our own process reports an unmapped address as an
 * error instead of a fault.  Where it is refused (a seccomp filter, or
 * qemu-user, which does not implement it) a pipe does the same: write()
 * from an unmapped address fails with EFAULT.  Debug builds only.
 */
static bool peek(const void *addr, void *buf, size_t n)
{
	struct iovec local = { buf, n };
	struct iovec remote = { (void *)(uintptr_t)addr, n };
	int saved = errno, fds[2];
	ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	if (r < 0 && errno != EFAULT && pipe2(fds, O_CLOEXEC) == 0) {
		r = write(fds[1], addr, n);
		if (r == (ssize_t)n)
			r = read(fds[0], buf, n);
		close(fds[0]);
		close(fds[1]);
	}
	errno = saved;
	return r == (ssize_t)n;
}

/*
 * Debug builds: h's first waiter, or NULL if it has none.  An init may run
 * on never-initialised memory, so its bytes are read as a guess and the
 * guess is checked through peek(): the first node must name this head and
 * link back to the anchor, which garbage does not do by chance.
 */
static const struct swait_list *first_waiter(const struct swait_head *h)
{
	const struct swait_list *first =
		__atomic_load_n(&h->list.next, __ATOMIC_RELAXED);
	struct swait_waiter w;

	if (!SWAIT_DEBUG_CHECKS || first == NULL || first == &h->list)
		return NULL;
	if (peek(waiter_of(first), &w, sizeof(w)) && w.head == h &&
	    w.link.prev == &h->list)
		return first;
	return NULL;
}

void swait_head_init_checked(struct swait_head *h, uint32_t walks,
			     const char *misuse)
{
	const struct swait_list *first = first_waiter(h);

	if (first)
		swait_fatal(misuse, h, first, NULL);
	memset(h, 0, sizeof(*h));
	h->walks = walks;
}

SWAIT_EXPORT void swait_head_init(struct swait_head *h)
{
	swait_head_init_checked(h, 0,
		"swait_head_init: the head still has waiters, who would never "
		"be woken (re-initialised while in use?) [head, first waiter]");
}

SWAIT_EXPORT void swait_head_init_pi(struct swait_head *h)
{
	swait_head_init_checked(h, SWAIT_WALKS_PI,
		"swait_head_init_pi: the head still has waiters, who would "
		"never be woken (re-initialised while in use?) "
		"[head, first waiter]");
}

SWAIT_EXPORT int swait_head_destroy(struct swait_head *h)
{
	bool busy;

	/*
	 * Taking the lock waits out a hold still releasing it, and our own
	 * release performs whatever is posted (L3).  A walk still counted has
	 * flipped every waiter it took off the list; it is waited out (O(1)
	 * holds per waiter left in its batch), so that destroy can return 0
	 * while woken waiters are still on their way out: they do not read
	 * the head after their word is set (W2's snapshot).  After our
	 * release nothing touches *h but by FUTEX_WAKE, an address (I3).
	 */
	swait_head_lock(h);
	busy = !list_empty(&h->list);
	if (!busy) {
		swait_quiesce_dropping_lock(h);
		/*
		 * The quiesce dropped the lock: a thread it waited for may
		 * have queued again meanwhile, as a woken waiter's next
		 * prepare (or a group's swait_prepare_any()) queues before it
		 * leaves.  Its waiter is queued now: EBUSY, not a head freed
		 * under it.
		 */
		busy = !list_empty(&h->list);
	}
	swait_head_unlock(h);
	return busy ? EBUSY : 0;
}

SWAIT_EXPORT void swait_waiter_init(struct swait_waiter *w)
{
	uint32_t s = load_relaxed(&w->state);
	struct swait_list *next = w->link.next, *back;

	/* Debug builds: a queued waiter's neighbour links back to it. */
	if (SWAIT_DEBUG_CHECKS && w->group == SWAIT_MAGIC && next &&
	    swait_state_queued(s) &&
	    peek((const char *)next + offsetof(struct swait_list, prev),
		 &back, sizeof(back)) &&
	    back == &w->link)
		swait_fatal("swait_waiter_init: the waiter is still queued "
			    "(re-initialised before swait_finish()?) "
			    "[waiter, its head]", w, w->head, NULL);
	memset(w, 0, sizeof(*w));
}
