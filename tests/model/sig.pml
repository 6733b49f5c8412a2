/* SPDX-License-Identifier: MIT */
/*
 * sig.pml - a Promela model of the wakes that signal handlers hand to the
 * lock holder (lib/defer.c S1-S5, lib/headlock.c H1-H3), checked exhaustively
 * by spin: tests/model/check.sh --model sig.pml, `meson test --suite
 * model`.
 *
 * WHAT IS MODELLED
 *
 * One completion's head.  Thread T locks and unlocks it LOOPS times (any
 * call that takes the lock: try_wait, prepare, finish).  Thread O does the
 * same, so that the lock is sometimes held by another thread when T's
 * handler wants it.  H is T's signal handler: it may interrupt T between
 * any two of T's steps, up to NSIG times, and calls swait_complete() on the
 * completion.  While H runs, T does not (proctype T is "provided (!intr)");
 * O runs on.  T's thread-local state (the held-heads stack, swait_tls.running,
 * swait_tls.backlog) is shared by T and H, as in the C code, and every C access
 * to it is one step, so that H can land between any two.
 *
 * Not modelled: nested handlers (H does not interrupt itself: a handler
 * runs with its signal blocked), the head's waiters (done is the whole
 * completion: a deferred complete's wakes are ordinary wakes, modelled in
 * swait.pml), PI heads (the same stack around another lock word).
 *
 * PROPERTIES (pan -DSAFETY)
 *
 *  (a) No thread waits for itself: H never blocks on a lock its own thread
 *      holds (asserted where H would wait; a deadlock would also be an
 *      invalid end state).
 *  (b) No lost completion: when T's last call returns, every complete H
 *      made has been performed (done == posts), and never more.
 *
 * MAP: Promela -> C
 *
 *  push()        held_push (headlock.c): depth, then pending = 0, then
 *                head
 *  LOCK()        swait_lock / swait_trylock (lib/lock.h), blocking
 *  unlock_pop()  swait_head_unlock (headlock.c): swait_unlock, then
 *                held_pop: close
 *                (head = NULL), read pending, pop (depth)
 *  post          swait_post_to_holder_slow (defer.c): the search and the
 *                CAS, one step
 *                (H cannot be interrupted by T)
 *  T's perform   swait_run_posted / perform_set (defer.c) /
 *                swait_complete_n (completion.c), with the backlog and
 *                the final re-check (S5)
 *
 * MUTANTS (model only; spin -DMUTANT_x)
 *
 *  MUTANT_SIG_FILL_FIRST    push fills the entry before it reserves it (the
 *                           first version of held_push, which sigstorm
 *                           caught): a handler's own push overwrites it
 *  MUTANT_SIG_POP_FIRST     pop before reading the pending set
 *  MUTANT_SIG_NO_RECHECK    swait_run_posted stops running without the
 *                           last look at the backlog
 */

#ifndef LOOPS
#define LOOPS 2		/* T's lock holds */
#endif
#ifndef NSIG
#define NSIG 2		/* handler runs */
#endif
#ifndef NSIG2
#define NSIG2 1		/* runs of a handler nested in H */
#endif

#define T_THREAD	1	/* lock owner ids: T's thread (T or H), O */
#define O_THREAD	2
#define DEPTH		4	/* T's stack: T or its perform, H, H's perform, H2 */

byte lock;			/* the head lock: 0 free, else the owner */
byte done;			/* the completion's count */
byte posts;			/* ghost: completes H called */

/* T's thread-local state, shared by T and H */
byte depth;
bit ehead[DEPTH];		/* entry's head: 1 = this head, 0 = NULL */
byte epend[DEPTH];		/* entry's pending completes */
bit performing;			/* swait_tls.running == this head */
byte carry;			/* swait_tls.backlog */

bit intr;			/* H is running: T is interrupted */
bit intr2;			/* H2 is running: H is interrupted */
bit tdone;			/* T has returned from its last call */

/* held_push; d: the caller's local */
inline push(d)
{
#ifndef MUTANT_SIG_FILL_FIRST
	d = depth;
	depth = d + 1;
	epend[d] = 0;
	ehead[d] = 1;
#else
	d = depth;
	epend[d] = 0;
	ehead[d] = 1;
	depth = d + 1;
#endif
	assert(depth <= DEPTH)
}

/* swait_unlock then held_pop; p: the pending set read */
inline unlock_pop(d, p)
{
	lock = 0;
	d = depth - 1;
#ifndef MUTANT_SIG_POP_FIRST
	ehead[d] = 0;
	p = epend[d];
	depth = d;
#else
	ehead[d] = 0;
	depth = d;
	p = epend[d];
#endif
	skip
}

/* swait_head_unlock's tail inside a perform: hand the set to the loop */
inline carry_add(p)
{
	if
	:: p != 0 -> atomic { assert(performing); carry = carry + p; p = 0 }
	:: else
	fi
}

/*
 * swait_run_posted(h, p) (S2, S5), for T and for H: p completes, one event
 * per lock hold (swait_complete_n), then whatever the backlog (carry)
 * collected.  With running already set (H interrupted T's loop), the set is
 * performed directly and its unlocks carry to T's loop.  d, k: the caller's
 * locals.
 */
inline run_posted(p, d, k, outer)
{
	outer = performing;
	if
	:: !outer -> performing = 1
	:: else
	fi;
	do
	:: true ->
		do
		:: p > 0 ->
			k = p;
			push(d);
			lock == 0 -> lock = T_THREAD;
			done++;
			unlock_pop(d, p);
			carry_add(p);	/* posts found by this unlock */
			p = k - 1
		:: else -> break
		od;
		if
		:: outer -> break	/* the loop below us runs the carry */
		:: else
		fi;
		atomic { p = carry; carry = 0 };	/* xchg */
		if
		:: p != 0 -> skip
		:: else ->
			performing = 0;
#ifndef MUTANT_SIG_NO_RECHECK
			atomic { p = carry; carry = 0 };
			if
			:: p != 0 -> performing = 1
			:: else -> break
			fi
#else
			break
#endif
		fi
	od;
	k = 0; outer = 0
}

/* ------------------------------------------------------------ thread T */

active proctype T() provided (!intr && !intr2)
{
	byte n = LOOPS, d, p, k;
	bit outer;

	do
	:: n > 0 ->
		n--;
		/* any call: lock, O(1) work, unlock */
		push(d);
		lock == 0 -> lock = T_THREAD;
		unlock_pop(d, p);
		if
		:: p != 0 -> run_posted(p, d, k, outer)
		:: else
		fi
	:: else -> break
	od;
	/* (b): the interrupted calls performed everything before returning */
	atomic { assert(done == posts); tdone = 1 }
}

/* swait_complete() in a handler: defer_to_holder (S1), one step; found */
inline post(d, found)
{
	atomic {
		posts++;
		d = depth;
		found = 0;
		do
		:: d > 0 && !found ->
			d--;
			if
			:: ehead[d] -> epend[d]++; found = 1
			:: else
			fi
		:: else -> break
		od;
		d = 0
	}
}

/* the ordinary complete of a handler that found no open entry */
inline own_complete(d)
{
	push(d);
	atomic {
		/* (a): it would wait for its own thread */
		assert(lock != T_THREAD);
		lock == 0 -> lock = T_THREAD
	};
	done++;
	unlock_pop(d, p)
}

/* ------------------------------------------------------- T's handler H */

active proctype H() provided (!intr2)
{
	byte n = NSIG, d, p, k;
	bit found, outer;

	do
	:: atomic { n > 0 && !tdone -> intr = 1; n-- };
		post(d, found);
		if
		:: found -> skip
		:: else ->
			own_complete(d);
			/* H2 may have posted to H's entry: as any unlock */
			if
			:: p != 0 && performing -> carry_add(p)
			:: p != 0 && !performing -> run_posted(p, d, k, outer)
			:: else
			fi
		fi;
		atomic { found = 0; intr = 0 }
	:: n == 0 || tdone -> break
	od
}

/* A handler nested in H (another signal): at most NSIG2 runs. */
active proctype H2()
{
	byte n = NSIG2, d, p;
	bit found;

	do
	:: atomic { n > 0 && intr && !intr2 -> intr2 = 1; n-- };
		post(d, found);
		if
		:: found -> skip
		:: else ->
			own_complete(d);
			assert(p == 0)	/* nothing nests in H2 */
		fi;
		atomic { found = 0; intr2 = 0 }
	:: n == 0 || tdone -> break
	od
}

/* ------------------------------------------------------------ thread O */

active proctype O()
{
	byte n = LOOPS;

	do
	:: n > 0 ->
		n--;
		lock == 0 -> lock = O_THREAD;
		lock = 0
	:: else -> break
	od
}
