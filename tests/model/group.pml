/* SPDX-License-Identifier: MIT */
/*
 * group.pml - a Promela model of the multi-head wait of lib/any.c
 * (swait_prepare_any / swait_wait_any / swait_finish_any, rules G1-G5 of
 * the protocol comment), next to a single-head waiter on one of the same
 * heads.  Checked exhaustively by spin: tests/model/check.sh --model
 * group.pml, `meson test --suite model`.  swait.pml models the single-head
 * protocol in depth; this model reuses its conventions (read its header
 * first) and adds what groups change.
 *
 * WHAT IS MODELLED
 *
 * Two heads, each with a pool of work tokens (pool[h]) posted by its own
 * waker, each post followed by swait_wake_one (or, with WAKEALL 1, either
 * wake; spin tries both).  The group thread G waits on both heads with
 * node h on head h, in the loop of the header's example: prepare_any,
 * check, wait_any, again; it takes ONE token and leaves (finish_any), the
 * pattern that makes a group hold more wakes than it uses.  It takes from
 * the head the last wait reported when that one has a token (the rule the
 * header states), else from either.  Single waiters S0 on head 0 and S1
 * on head 1 run swait_event(head, take a token of that head).  Three
 * takers, POSTS tokens per head (default 1): someone must end up waiting
 * for nothing, which is fine; waiting while its pool has a token is not.
 *
 * Timeouts: TIMEOUTS (default 1) nondeterministic ETIMEDOUT exits of a
 * blocked FUTEX_WAIT.  After one, the waiter finishes, checks its
 * condition a last time, and waits again (a new frame at the same
 * address).
 *
 * PROPERTIES (pan -DSAFETY)
 *
 *  (a) No lost wakeup: when nothing can move any more (the monitor's
 *      timeout), no thread blocked in FUTEX_WAIT may have a token it could
 *      take.  The blocked FUTEX_WAITs are valid end states (end labels);
 *      the monitor's assertion is what fails.
 *  (b) No access to the group's nodes or group word after finish_any
 *      returned for good, or between a finish_any and the next frame
 *      (departed).
 *  (c) I1 for every node (on a list <=> QUEUED, or SLEEPING for S) and G2
 *      (for a node in the group, i.e. not IDLE: bit i of the group word
 *      set <=> node i woken and not re-queued), checked at every acquire
 *      and release of the node's head.  (finish_any makes nodes IDLE one
 *      by one and clears the word after the last.)
 *
 * The head lock, FUTEX_WAIT/WAKE and the steps are modelled as in
 * swait.pml.  The group word's fields: bits 0 and 1 (gw), the SLEEPING bit
 * (gsl) and the consumed index (gcons); the C code keeps them in one word,
 * and every C access to them is one atomic step here.
 *
 * MAP: Promela -> C (lib/any.c; the flips are lib/swait.c's)
 *
 *  g_prepare      swait_prepare_any: "__atomic_fetch_and(g, G_WOKEN_MASK",
 *                 then per head: lock, keep place or "list_add_tail", the
 *                 G2 "__atomic_fetch_and(g, ~(1u << i)", unlock; fence
 *  g_wait         wait_any_announced: load, announce CAS, FUTEX_WAIT on G,
 *                 retract CAS, "woken:" records the consumed index
 *  g_finish       swait_finish_any: per head: lock, list_del or note a
 *                 WOKEN_ONE to pass on ("if (i + 1 != consumed)"), IDLE,
 *                 unlock; "store_relaxed(g, 0)"; swait_wake_one per pass
 *  flip()         dequeue_and_flip / dequeue_and_flip_grouped: grouped:
 *                 "list_del(w)", state store, "__atomic_fetch_or(&w0->group"
 *                 and "(old & G_SLEEPING) && !(old & G_WOKEN_MASK)"
 *
 * MUTANTS (model only; spin -DMUTANT_x)
 *
 *  MUTANT_GROUP_NO_PASS_ON   finish_any passes nothing on (G5)
 *  MUTANT_GROUP_KEEP_BIT     prepare_any re-queues without clearing the bit
 *                            (G2)
 *  MUTANT_GROUP_PREPARE_CONSUMES  prepare_any consumes every wake of the
 *                            nodes it re-queues, not only the reported one
 *                            (G5)
 *  MUTANT_GROUP_WAKE_ALWAYS_NO  the waker never FUTEX_WAKEs the group word
 *                            (G3 broken: a sleeping group is not woken)
 */

#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif
#ifndef POSTS
#define POSTS 1		/* tokens per head */
#endif
#ifndef WAKEALL
#define WAKEALL 0	/* 1: each post is followed by either wake */
#endif

#define NONE		255
#define IDLE		0
#define QUEUED		1
#define SLEEPING	2
#define WOKEN_ONE	3
#define WOKEN_ALL	4

#define OK		0
#define ETIMEDOUT	1

/*
 * nodes: 0 and 1 = the group's nodes on heads 0 and 1; 2 = S0 (head 0),
 * 3 = S1 (head 1).  A frame index (departed[]): 0 for the group's array,
 * the node for a single waiter.
 */
#define HEAD_OF(n)	((n) == 0 || (n) == 2 -> 0 : 1)
#define GROUPED(n)	((n) < 2)
#define FRAME(n)	((n) < 2 -> 0 : (n))

byte lock[2];			/* 0 free, else owner _pid + 1 */
byte q[6] = NONE;		/* head h's list at q[3h..3h+2], FIFO */
byte qlen[2];
bit onlist[4];			/* ghost */
byte st[4];			/* node states (S's are their futex words) */
byte gw;			/* group word: woken bits (bit i: node i) */
bit gsl;			/* group word: SLEEPING */
byte gcons;			/* group word: consumed index + 1, or 0 */
bit infutex[4];			/* [0]: G on the group word; [2], [3]: S0, S1 */
bit departed[4];		/* ghost: that frame is gone */
byte pool[2];			/* work tokens per head */
byte budget = TIMEOUTS;

hidden byte t1;
hidden byte t2;

#define QS(n)	(GROUPED(n) -> st[n] == QUEUED : \
		 (st[n] == QUEUED || st[n] == SLEEPING))
#define WOKEN(n) (st[n] == WOKEN_ONE || st[n] == WOKEN_ALL)
#define LIVE(n)	assert(!departed[FRAME(n)])

/* I1 for the nodes of head h, and G2 for its group node (c) */
inline check_head(h)
{
	d_step {
		t1 = 0;
		do
		:: t1 < 4 ->
			if
			:: HEAD_OF(t1) == h ->
				assert(onlist[t1] == QS(t1));
				if
				:: GROUPED(t1) && st[t1] != IDLE ->
					assert(((gw >> t1) & 1) == WOKEN(t1))
				:: else
				fi
			:: else
			fi;
			t1++
		:: else -> break
		od;
		t1 = 0
	}
}

inline acquire(h)
{
	lock[h] == 0 -> lock[h] = _pid + 1;
	check_head(h)
}

inline release(h)
{
	check_head(h);
	assert(lock[h] == _pid + 1); lock[h] = 0
}

inline list_add_tail(h, n)
{
	assert(!onlist[n] && qlen[h] < 3);
	if :: qlen[h] > 0 -> LIVE(q[3 * h + qlen[h] - 1]) :: else fi;
	q[3 * h + qlen[h]] = n;
	qlen[h]++;
	onlist[n] = 1
}

inline list_del(h, n)
{
	LIVE(n);
	t2 = 0;
	do
	:: t2 < qlen[h] && q[3 * h + t2] != n -> t2++
	:: else -> break
	od;
	assert(t2 < qlen[h]);
	if :: t2 > 0 -> LIVE(q[3 * h + t2 - 1]) :: else fi;
	if :: t2 + 1 < qlen[h] -> LIVE(q[3 * h + t2 + 1]) :: else fi;
	do
	:: t2 + 1 < qlen[h] -> q[3 * h + t2] = q[3 * h + t2 + 1]; t2++
	:: else -> break
	od;
	qlen[h]--;
	q[3 * h + qlen[h]] = NONE;
	onlist[n] = 0;
	t2 = 0
}

/*
 * The wake of node n, lock held, merged with the release (nothing follows
 * the last access in the C critical section).  wake: whether to
 * FUTEX_WAKE after unlock.
 */
inline flip_unlock(h, n, how, wake)
{
	d_step {
		LIVE(n);
		if
		:: GROUPED(n) ->
			st[n] = how;
#ifndef MUTANT_GROUP_WAKE_ALWAYS_NO
			wake = (gsl && gw == 0);	/* G3 */
#else
			wake = 0;
#endif
			gw = gw | (1 << n)
		:: else ->
			wake = (st[n] == SLEEPING);
			st[n] = how
		fi;
		release(h)
	}
}

inline futex_wake(n)
{
	d_step { infutex[FRAME(n)] = 0 }
}

/*
 * swait_wake_one(head h), or with all swait_wake_all(head h).  A wake_all
 * walk is modelled one dequeue per lock hold, as I5 has it.
 */
inline wake(h, all, w, wk)
{
	if
	:: qlen[h] == 0 -> skip		/* the lockless peek */
	:: else ->
		do
		:: true ->
			d_step {
				acquire(h);
				if
				:: qlen[h] == 0 -> release(h); w = NONE
				:: else -> w = q[3 * h]; list_del(h, w)
				fi
			};
			if
			:: w == NONE -> break
			:: else
			fi;
			if
			:: all -> flip_unlock(h, w, WOKEN_ALL, wk)
			:: else -> flip_unlock(h, w, WOKEN_ONE, wk)
			fi;
			if :: wk -> futex_wake(w) :: else fi;
			if :: !all -> break :: else fi
		od
	fi;
	atomic { w = 0; wk = 0 }
}

/* prepare_any's step for node i: keep place, or re-queue (G2, G5) */
inline g_requeue(i)
{
	d_step {
		acquire(i);
		s = st[i];
		if
		:: s == QUEUED -> skip			/* keeps its place */
		:: else ->
#ifndef MUTANT_GROUP_PREPARE_CONSUMES
			if
			:: s == WOKEN_ONE && gcons != i + 1 ->
				pass = pass | (1 << i)
			:: else
			fi;
#endif
			list_add_tail(i, i); st[i] = QUEUED;
#ifndef MUTANT_GROUP_KEEP_BIT
			gw = gw & ~(1 << i);		/* G2 */
#endif
			skip
		fi;
		release(i); s = 0
	}
}

/* finish_any's step for node i */
inline g_leave(i)
{
	atomic {
		acquire(i);
		if
		:: st[i] == QUEUED -> list_del(i, i)
		:: st[i] == WOKEN_ONE && gcons != i + 1 -> pass = pass | (1 << i)
		:: else
		fi;
		st[i] = IDLE;
		release(i)
	}
}

/* ------------------------------------------------------ the group waiter */

active proctype group()
{
	byte w, s, pass, last;	/* last: the index the last wait reported + 1 */
	bit got, wk, timedout;

again:	/* a new frame for the waiters[] array, same address */
	atomic { departed[0] = 0; timedout = 0 }

prepare: /* swait_prepare_any: fetch_and(g, WOKEN_MASK) reads gcons */
	atomic { gsl = 0 };
	g_requeue(0);
	g_requeue(1);
	d_step { gcons = 0 };
	if :: pass & 1 -> wake(0, 0, w, wk) :: else fi;
	if :: pass & 2 -> wake(1, 0, w, wk) :: else fi;
	pass = 0;
	/* the O1 fence (implicit); then the condition: one token */
	atomic {
		if
		:: last != 0 && pool[last - 1] > 0 ->	/* the reported head */
			pool[last - 1]--; got = 1; goto finish
		:: (last == 0 || pool[last - 1] == 0) && pool[0] > 0 ->
			pool[0]--; got = 1; goto finish
		:: (last == 0 || pool[last - 1] == 0) && pool[1] > 0 ->
			pool[1]--; got = 1; goto finish
		:: else
		fi
	};

	/* swait_wait_any: announce on the group word */
	atomic {
		if
		:: gw != 0 -> goto woken
		:: else -> gsl = 1
		fi
	};
futexwait:
	atomic {
		if
		:: gsl && gw == 0 -> infutex[0] = 1
		:: else -> goto woken
		fi
	};
end_wait:
	atomic {
		if
		:: infutex[0] == 0 -> timedout = 0	/* FUTEX_WAKE */
		:: infutex[0] == 1 && budget > 0 ->
			budget--; infutex[0] = 0; timedout = 1
		fi;
		if
		:: gw != 0 -> timedout = 0; goto woken
		:: !timedout -> goto futexwait		/* stale wake */
		:: else -> gsl = 0; last = 0; goto finish	/* retract */
		fi
	};
woken:	/* report (and consume) the lowest woken node; prepare again */
	atomic {
		if
		:: gw & 1 -> gcons = 1
		:: else -> gcons = 2
		fi;
		last = gcons
	};
	goto prepare;

finish:	/* swait_finish_any */
	g_leave(0);
	g_leave(1);
	d_step { gw = 0; gsl = 0; gcons = 0 };	/* G4: nobody reaches it now */
#ifndef MUTANT_GROUP_NO_PASS_ON
	if :: pass & 1 -> wake(0, 0, w, wk) :: else fi;
	if :: pass & 2 -> wake(1, 0, w, wk) :: else fi;
#endif
	pass = 0;
	atomic {
		if
		:: !got && pool[0] > 0 -> pool[0]--; got = 1	/* last check */
		:: !got && pool[1] > 0 -> pool[1]--; got = 1
		:: else
		fi;
		assert(!onlist[0] && !onlist[1]);	/* I4 */
		departed[0] = 1;
		if :: !got -> last = 0; goto again :: else fi
	}
}

/* ------------------------------------- single waiters S0 (head 0), S1 (1) */

active [2] proctype single()
{
	byte n = _pid + 1, h = _pid - 1;	/* _pid 1, 2: nodes 2, 3 */
	byte s, w;
	bit got, wk, timedout;

again:
	atomic {
		if
		:: pool[h] > 0 -> pool[h]--; got = 1; goto out
		:: else -> departed[n] = 0; st[n] = IDLE
		fi
	};
prepare:
	atomic { acquire(h); list_add_tail(h, n); st[n] = QUEUED; release(h) };
	atomic {
		if
		:: pool[h] > 0 -> pool[h]--; got = 1; goto finish
		:: else
		fi
	};
	atomic {
		if
		:: st[n] == QUEUED -> st[n] = SLEEPING
		:: else -> st[n] = IDLE; goto rewoken
		fi
	};
futexwait:
	atomic {
		if
		:: st[n] == SLEEPING -> infutex[n] = 1
		:: else -> st[n] = IDLE; goto rewoken
		fi
	};
end_wait:
	atomic {
		if
		:: infutex[n] == 0 -> timedout = 0
		:: infutex[n] == 1 && budget > 0 ->
			budget--; infutex[n] = 0; timedout = 1
		fi;
		if
		:: st[n] != SLEEPING -> st[n] = IDLE; goto rewoken
		:: !timedout -> goto futexwait
		:: else -> st[n] = QUEUED; goto finish	/* retract */
		fi
	};
rewoken:
	atomic {
		if
		:: pool[h] > 0 -> pool[h]--; got = 1; goto finish
		:: else -> goto prepare
		fi
	};
finish:	/* swait_finish */
	atomic {
		acquire(h);
		s = st[n];
		if
		:: s == QUEUED || s == SLEEPING -> list_del(h, n); s = IDLE
		:: else
		fi;
		st[n] = IDLE;
		release(h)
	};
	if :: s == WOKEN_ONE -> wake(h, 0, w, wk) :: else fi;	/* I6 */
	s = 0;
	atomic {
		if
		:: !got && pool[h] > 0 -> pool[h]--; got = 1
		:: else
		fi;
		assert(!onlist[n]);
		departed[n] = 1;
		if :: !got -> goto again :: else fi
	};
out:
	skip
}

/* ------------------------------------------------------------- the wakers */

active [2] proctype waker()
{
	byte h = _pid - 3;		/* _pid 3, 4: heads 0, 1 */
	byte w, n = POSTS;
	bit wk, all;

	do
	:: n > 0 ->
		d_step { pool[h]++; n-- };
		if
		:: all = 0
		:: WAKEALL -> all = 1
		fi;
		wake(h, all, w, wk)
	:: else -> break
	od
}

/* (a): when nothing can move, nobody sleeps next to a token it could take */
active proctype monitor()
{
	timeout ->
	assert(!infutex[0] || (pool[0] == 0 && pool[1] == 0));
	assert(!infutex[2] || pool[0] == 0);
	assert(!infutex[3] || pool[1] == 0)
}
