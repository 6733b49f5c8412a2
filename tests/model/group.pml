/* SPDX-License-Identifier: MIT */
/*
 * group.pml - a Promela model of the multi-head wait of lib/swait.c
 * (swait_prepare_any / swait_wait_any / swait_finish_any, rules G1-G5 of
 * the protocol comment), next to a single-head waiter on one of the same
 * heads.  Checked exhaustively by spin: tests/model/check.sh --model
 * group.pml, `meson test --suite model`.  swait.pml models the single-head
 * protocol in depth; this model reuses its conventions (read its header
 * first) and adds what groups change.
 *
 * WHAT IS MODELLED
 *
 * Two heads.  Head 0 ("config") has one waiter: node 0 of the group.  Head
 * 1 ("work") has node 1 of the group and a single waiter S.  The group
 * thread G runs the loop of the header's example: prepare_any, check its
 * conditions, wait_any, and again; it leaves (finish_any) once it has taken
 * one work token.  A new config generation is a condition too: G notes it
 * and loops (so wakes on head 0 make G re-prepare while its head-1 node may
 * be selected: the pass-on and consume paths).  S runs swait_event(head 1,
 * take a token).  Waker K1 posts two work tokens, each followed by
 * swait_wake_one(head 1); waker K0 bumps the generation GENS times, each
 * followed by wake_one or wake_all on head 0 (spin tries both).
 *
 * Timeouts: TIMEOUTS (default 1) nondeterministic ETIMEDOUT exits of a
 * blocked FUTEX_WAIT, for G or S.  After one, the waiter finishes, checks
 * its condition a last time, and waits again (a new frame at the same
 * address), so every run must end with both waiters holding a token.
 *
 * PROPERTIES (pan -DSAFETY)
 *
 *  (a) No lost wakeup: G and S each end with one token; a thread left
 *      blocked in FUTEX_WAIT is an invalid end state.  With two tokens and
 *      two takers, a wake_one that selected G's node 1 after G no longer
 *      needed it, and was not passed on, strands S.
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
 * MAP: Promela -> C (lib/swait.c)
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
 *                 "list_del(w)", state store, "__atomic_fetch_or(&w0->magic"
 *                 and "(old & G_SLEEPING) && !(old & G_WOKEN_MASK)"
 *
 * MUTANTS (model only; spin -DMUTANT_x)
 *
 *  MUTANT_GROUP_NO_PASS_ON   finish_any passes nothing on (G5)
 *  MUTANT_GROUP_KEEP_BIT     prepare_any re-queues without clearing the bit
 *                            (G2)
 *  MUTANT_GROUP_WAKE_ALWAYS_NO  the waker never FUTEX_WAKEs the group word
 *                            (G3 broken: a sleeping group is not woken)
 */

#ifndef TIMEOUTS
#define TIMEOUTS 1
#endif
#ifndef GENS
#define GENS 1		/* config generations K0 publishes */
#endif

#define NONE		255
#define IDLE		0
#define QUEUED		1
#define SLEEPING	2
#define WOKEN_ONE	3
#define WOKEN_ALL	4

#define OK		0
#define ETIMEDOUT	1

/* nodes: 0 = group node on head 0, 1 = group node on head 1, 2 = S */
#define HEAD_OF(n)	((n) == 0 -> 0 : 1)
#define GROUPED(n)	((n) < 2)
#define PID_G		0
#define PID_S		1

byte lock[2];			/* 0 free, else owner _pid + 1 */
byte q[6] = NONE;		/* head h's list at q[3h..3h+2], FIFO */
byte qlen[2];
bit onlist[3];			/* ghost */
byte st[3];			/* node states (S's is its futex word) */
byte gw;			/* group word: woken bits (bit i: node i) */
bit gsl;			/* group word: SLEEPING */
byte gcons;			/* group word: consumed index + 1, or 0 */
bit gin;			/* G blocked in FUTEX_WAIT on the group word */
bit sin;			/* S blocked in FUTEX_WAIT on its word */
bit departed[2];		/* ghost: [0] group frame gone, [1] S's */
byte tokens;			/* work tokens (head 1's condition) */
byte gen;			/* config generation (head 0's condition) */
byte budget = TIMEOUTS;
byte ndone;			/* ghost: waiters that hold a token */

hidden byte t1;
hidden byte t2;

#define QS(n)	(GROUPED(n) -> st[n] == QUEUED : \
		 (st[n] == QUEUED || st[n] == SLEEPING))
#define WOKEN(n) (st[n] == WOKEN_ONE || st[n] == WOKEN_ALL)
#define LIVE(n)	assert(!departed[((n) < 2 -> 0 : 1)])

/* I1 for the nodes of head h, and G2 for its group node (c) */
inline check_head(h)
{
	d_step {
		t1 = 0;
		do
		:: t1 < 3 ->
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
 * FUTEX_WAKE after unlock, and on which word (the group's or S's).
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
	d_step {
		if
		:: GROUPED(n) -> gin = 0
		:: else -> sin = 0
		fi
	}
}

/* swait_wake_one(head h) or, with all, swait_wake_all(head 0) */
inline wake(h, all, w, wk)
{
	if
	:: qlen[h] == 0 -> skip		/* the lockless peek */
	:: else ->
		d_step {
			acquire(h);
			if
			:: qlen[h] == 0 -> release(h); w = NONE
			:: else -> w = q[3 * h]; list_del(h, w)
			fi
		};
		if
		:: w != NONE ->
			if
			:: all -> flip_unlock(h, w, WOKEN_ALL, wk)
			:: else -> flip_unlock(h, w, WOKEN_ONE, wk)
			fi;
			if :: wk -> futex_wake(w) :: else fi
			/*
			 * wake_all's walk would continue; head 0 has one
			 * waiter, so it ends here (its I5 is swait.pml's).
			 */
		:: else
		fi
	fi;
	d_step { w = 0; wk = 0 }
}

/* ------------------------------------------------------ the group waiter */

active proctype group()
{
	byte seen, r, w, s, pass;
	bit got, wk;

again:	/* a new frame for the waiters[] array, same address */
	atomic { departed[0] = 0; r = OK }

prepare: /* swait_prepare_any */
	atomic { gsl = 0; gcons = 0 };		/* fetch_and(g, WOKEN_MASK) */
	d_step {
		acquire(0);
		s = st[0];
		if
		:: s == QUEUED -> skip			/* keeps its place */
		:: else ->
			list_add_tail(0, 0); st[0] = QUEUED;
#ifndef MUTANT_GROUP_KEEP_BIT
			gw = gw & ~1;			/* G2 */
#endif
			skip
		fi;
		release(0); s = 0
	};
	d_step {
		acquire(1);
		s = st[1];
		if
		:: s == QUEUED -> skip
		:: else ->
			list_add_tail(1, 1); st[1] = QUEUED;
#ifndef MUTANT_GROUP_KEEP_BIT
			gw = gw & ~2;
#endif
			skip
		fi;
		release(1); s = 0
	};
	/* the O1 fence (implicit); then the conditions */
	atomic {
		if
		:: tokens > 0 -> tokens--; got = 1; goto finish
		:: gen != seen -> seen = gen; goto prepare	/* reload, loop */
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
		:: gsl && gw == 0 -> gin = 1
		:: else -> goto woken
		fi
	};
	atomic {
		if
		:: gin == 0 -> r = OK			/* FUTEX_WAKE */
		:: gin == 1 && budget > 0 -> budget--; gin = 0; r = ETIMEDOUT
		fi;
		if
		:: gw != 0 -> r = OK; goto woken
		:: r == OK -> goto futexwait		/* stale wake */
		:: else -> gsl = 0; goto finish		/* retract; ETIMEDOUT */
		fi
	};
woken:	/* record the consumed index (lowest bit); the loop prepares again */
	atomic {
		if
		:: gw & 1 -> gcons = 1
		:: else -> gcons = 2
		fi;
		r = OK
	};
	goto prepare;

finish:	/* swait_finish_any */
	atomic {
		acquire(0);
		if
		:: st[0] == QUEUED -> list_del(0, 0)
		:: st[0] == WOKEN_ONE && gcons != 1 -> pass = pass | 1
		:: else
		fi;
		st[0] = IDLE;
		release(0)
	};
	d_step {
		acquire(1);
		if
		:: st[1] == QUEUED -> list_del(1, 1)
		:: st[1] == WOKEN_ONE && gcons != 2 -> pass = pass | 2
		:: else
		fi;
		st[1] = IDLE;
		release(1)
	};
	d_step { gw = 0; gsl = 0; gcons = 0 };	/* G4: nobody reaches it now */
#ifndef MUTANT_GROUP_NO_PASS_ON
	if :: pass & 1 -> wake(0, 0, w, wk) :: else fi;
	if :: pass & 2 -> wake(1, 0, w, wk) :: else fi;
#endif
	pass = 0;
	if
	:: !got ->
		atomic {			/* the last check, then again */
			if
			:: tokens > 0 -> tokens--; got = 1
			:: else
			fi
		}
	:: else
	fi;
	d_step {
		assert(!onlist[0] && !onlist[1]);	/* I4 */
		departed[0] = 1
	};
	if
	:: !got -> goto again
	:: else
	fi;
	d_step { ndone++; got = 0 }
}

/* ---------------------------------------------- a single waiter on head 1 */

active proctype single()
{
	byte s, r, w, old;
	bit got, wk;

again:
	atomic {
		if
		:: tokens > 0 -> tokens--; got = 1; goto out
		:: else -> departed[1] = 0; st[2] = IDLE
		fi
	};
prepare:
	atomic { acquire(1); list_add_tail(1, 2); st[2] = QUEUED; release(1) };
	atomic {
		if
		:: tokens > 0 -> tokens--; got = 1; r = OK; goto finish
		:: else
		fi
	};
	atomic {
		if
		:: st[2] == QUEUED -> st[2] = SLEEPING
		:: else -> st[2] = IDLE; goto rewoken
		fi
	};
futexwait:
	atomic {
		if
		:: st[2] == SLEEPING -> sin = 1
		:: else -> st[2] = IDLE; goto rewoken
		fi
	};
	atomic {
		if
		:: sin == 0 -> r = OK
		:: sin == 1 && budget > 0 -> budget--; sin = 0; r = ETIMEDOUT
		fi;
		if
		:: st[2] != SLEEPING -> r = OK; st[2] = IDLE; goto rewoken
		:: r == OK -> goto futexwait
		:: else -> st[2] = QUEUED; goto finish	/* retract */
		fi
	};
rewoken:
	atomic {
		if
		:: tokens > 0 -> tokens--; got = 1; r = OK; goto finish
		:: else -> goto prepare
		fi
	};
finish:	/* swait_finish */
	atomic {
		acquire(1);
		s = st[2];
		if
		:: s == QUEUED || s == SLEEPING -> list_del(1, 2); s = IDLE
		:: else
		fi;
		st[2] = IDLE;
		release(1)
	};
	if :: s == WOKEN_ONE -> wake(1, 0, w, wk) :: else fi;
	s = 0;
	atomic {
		if
		:: !got && tokens > 0 -> tokens--; got = 1
		:: else
		fi;
		assert(!onlist[2]);
		departed[1] = 1;
		if :: !got -> goto again :: else fi
	};
out:
	atomic { ndone++; got = 0 }
}

/* ------------------------------------------------------------- the wakers */

active proctype work_waker()
{
	byte w, n = 2;
	bit wk;

	do
	:: n > 0 -> d_step { tokens++; n-- }; wake(1, 0, w, wk)
	:: else -> break
	od
}

active proctype config_waker()
{
	byte w, n = GENS;
	bit wk, all;

	do
	:: n > 0 ->
		d_step { gen++; n-- };
		if			/* spin tries both */
		:: all = 0
		:: all = 1
		fi;
		wake(0, all, w, wk)
	:: else -> break
	od
}
