/* SPDX-License-Identifier: MIT */
/*
 * list.h - the waiter list and the relaxed-atomic helpers the protocol
 * files share.  No ordering argument lives here: each caller says why its
 * access may be relaxed (lib/swait.c O4 for the lists).
 *
 * The list is circular and doubly linked, with the head's swait_list as its
 * anchor, while it has entries.  An empty list's anchor links are NULL:
 * never used (static and calloc'd heads need no initialisation), or
 * emptied, since the dequeue of the last entry and the splice that
 * detaches a list store NULL rather than link the anchor to itself.  So an
 * idle head holds no pointer into itself, and one copied or moved while
 * idle (an array of condvars grown by realloc(), which glibc's condvars
 * survive) is a working head at its new address; a self-linked anchor
 * would have made the copy's list point into the original.  The inserts
 * treat an empty anchor as its own neighbour on both sides and write the
 * four links directly (no self-link first: the enqueue onto an empty head
 * is every ping-pong round's).
 *
 * Every store to a ->next is atomic (relaxed) because swait_active() and
 * the wakes' emptiness peek read head->list.next without the lock (O4);
 * every other access runs under the head lock.
 */
#ifndef SWAIT_LIST_H
#define SWAIT_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "swait.h"

static inline uint32_t load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_relaxed(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Through void *: the list link is the first member, the cast is aligned. */
#define waiter_of(l) ((struct swait_waiter *)(void *)			\
	((char *)(l) - offsetof(struct swait_waiter, link)))

static inline void set_next(struct swait_list *l, struct swait_list *next)
{
	__atomic_store_n(&l->next, next, __ATOMIC_RELAXED);
}

/*
 * Safe without the lock: one relaxed load of anchor->next (O4).  Empty is
 * NULL alone: nothing links an anchor to itself any more (above), as the
 * inline swait_wake_one() in <swait.h> also assumes.
 */
static inline bool list_empty(const struct swait_list *anchor)
{
	return __atomic_load_n(&anchor->next, __ATOMIC_RELAXED) == NULL;
}

/* Whether l is anchor's first node.  Under the head's lock (S6). */
static inline bool list_is_first(const struct swait_list *anchor,
				 const struct swait_list *l)
{
	return __atomic_load_n(&anchor->next, __ATOMIC_RELAXED) == l;
}

/* Link l between neighbours prev and next (an empty list's anchor twice). */
static inline void list_insert(struct swait_list *l, struct swait_list *prev,
			       struct swait_list *next)
{
	l->prev = prev;
	set_next(l, next);
	next->prev = l;
	set_next(prev, l);
}

static inline void list_add_tail(struct swait_list *anchor,
				 struct swait_list *l)
{
	/* An empty anchor's prev is NULL: the anchor is its own tail. */
	list_insert(l, anchor->next ? anchor->prev : anchor, anchor);
}

/*
 * Insert l after the last entry e for which goes_before(l, e) is false,
 * searching from the tail: an ordered list (highest first, FIFO among
 * equals), O(1) when l goes last, as with equal keys.
 */
static inline void list_add_ordered(struct swait_list *anchor,
				    struct swait_list *l,
				    bool (*goes_before)(const struct swait_waiter *,
							const struct swait_waiter *))
{
	struct swait_list *pos;

	if (anchor->next == NULL) {	/* empty */
		list_insert(l, anchor, anchor);
		return;
	}
	pos = anchor->prev;
	while (pos != anchor && goes_before(waiter_of(l), waiter_of(pos)))
		pos = pos->prev;
	list_insert(l, pos, pos->next);
}

/* Unlink w from whatever list it is on; needs no anchor. */
static inline void list_del(struct swait_waiter *w)
{
	struct swait_list *l = &w->link;
	struct swait_list *next = l->next, *prev = l->prev;

	swait_check(next && prev && next->prev == l && prev->next == l,
		    "list corrupted: a queued waiter's links were overwritten "
		    "(waiter memory reused or freed while queued?) "
		    "[waiter, next, prev]", w, next, prev);
	if (next == prev) {
		/* l was the only entry: next is the anchor, now empty. */
		set_next(next, NULL);
		next->prev = NULL;
	} else {
		next->prev = prev;
		set_next(prev, next);
	}
	l->next = NULL;
	l->prev = NULL;
}

/*
 * Move all of from's entries (it has some) to the tail of the list at to;
 * O(1).  from is left empty (NULL links).
 */
static inline void list_splice_tail_init(struct swait_list *from,
					 struct swait_list *to)
{
	struct swait_list *first = from->next, *last = from->prev;
	/* An empty to's prev is NULL: to is its own tail. */
	struct swait_list *tail = to->next ? to->prev : to;

	first->prev = tail;
	set_next(tail, first);
	to->prev = last;
	set_next(last, to);
	from->prev = NULL;
	set_next(from, NULL);
}

#endif /* SWAIT_LIST_H */
