/* SPDX-License-Identifier: MIT */
/*
 * post.pml - a Promela model of the posted wakes of lib/headlock.c (L1-L7):
 * a wake made by a signal handler while its thread takes or holds a head
 * lock never waits, it takes the head if it is free or posts itself to
 * the head's holder, who performs every post before its release ends the
 * hold.  Checked exhaustively by spin: tests/model/check.sh --model
 * post.pml, `meson test --suite model`.
 *
 * WHAT IS MODELLED
 *
 * Two heads, 0 and 1, each with a completion's count done[h].  Threads T0
 * and T1 each make LOOPS calls that take a head's lock (any call but the
 * four wakes: prepare, finish, a wait's check); each call takes its own
 * head (head t for thread t) or the other one, as spin chooses, and holds
 * it for one step.  Each thread has a signal handler H1_t, which may
 * interrupt it between any two of its steps, NSIG times, and a handler
 * H2_t nested in H1_t (a second signal), which may interrupt H1_t between
 * any two of its steps, NSIG2 times: depth 2 of nesting.  While a handler
 * runs, what it interrupted does not (proctype ... provided (lvl[t] ...)),
 * and the other thread runs on.  Every handler run calls swait_complete()
 * on a head spin chooses: its own thread's (held, being taken, released
 * or free at that moment), or the other thread's.  depth[t] is the
 * thread's swait_tls.depth, shared by the thread and its handlers.
 *
 * A call at depth 0 (a thread's, or a handler's that interrupted no hold)
 * takes the lock the ordinary way and may wait for it: the lock is a test
 * and set that blocks while the word is not 0 (parking, PARKED and the
 * bounded spin of lib/lock.h are not modelled: they only delay).  A
 * handler's call at depth > 0 is swait_head_lock_or_post(): one CAS that
 * takes the free lock or adds one posted complete to the held word.  The
 * release loop (swait_head_try_release) is a CAS that expects HELD alone,
 * or a CAS that takes the posted set (the holder still holds) followed by
 * the set's completes (done += n, one step: swait_complete_n under the
 * lock), and again.
 *
 * Destroy: process D destroys head DH (1) once every complete called on it
 * has returned (the posts too: returning is what a post does), or once
 * every one is in done (a completion's only waiter, having consumed every
 * event, frees it: lib/completion.c), and no thread is waiting to take
 * it; from then on nobody starts a call on DH (ghost closing).  A thread
 * may still be inside its hold of DH, with posts to perform: the hold of a
 * completer whose complete the destroyer has seen, which L3 says ends with
 * its release.  D takes the lock (at
 * depth 0, so it may wait), checks that nothing is pending, releases, and
 * marks DH destroyed (ghost): any later access to DH's words or count by
 * anyone is an error.
 *
 * PI=1 models a PI head instead (L7), for both heads: the lock word pw[h]
 * is the owner (a futex the kernel hands over; FUTEX_LOCK_PI is a blocking
 * test and set, the trylock a non-blocking one), and walks[h] holds REFS
 * (the count of threads taking, holding or leaving the lock, low 4 bits)
 * and the posted set (PONE each).  The calls are still counted in done[h]
 * (on a real PI head they are wake_ones: completions are never PI heads;
 * the count is what matters here).  A taker counts itself in REFS before
 * it waits.  A leaver takes what is posted while it holds the lock, unlocks
 * the PI word, then leaves REFS with a CAS that sees the posted set: the
 * last one out (REFS 1) with something posted takes the lock again
 * (waiting at depth 1, else a trylock, and if a newcomer has it, looks
 * again), leaving the posts in the word for that hold's release to take.
 * A wake at depth > 0 posts while REFS > 0, or
 * counts itself (REFS 0 -> 1) and takes the lock with a trylock, or, when
 * a newcomer counted after it holds the lock, hands its call to the
 * newcomer's REFS.  D quiesces as swait_head_destroy does: it holds the
 * lock only once REFS counts nobody but itself.
 *
 * CAP (PI=1) bounds the posted count, as L6's 11 bits do (2,047 in C;
 * CAP=1 here reaches the bound at every second post).  A post that does
 * not fit is spilled (lib/wake.c spill): the handler counts itself in REFS
 * (REFS + 1, depth + 1), adds its complete to done without the lock, posts
 * the wake that goes with it (a step that touches walks; wakes always fit
 * and are not counted here), and leaves REFS as a leaver does
 * (swait_head_spilled).  A handler's hand-over to a newcomer that does not
 * fit spills its call the same way.
 *
 * Each Promela step is one atomic access of the C code.  A CAS loop whose
 * body only computes the new value from the one it read is one step (it
 * takes effect at its successful CAS); MUTANT_POST_NONATOMIC splits one
 * into a load and a store.  depth is one step per change: a nested handler
 * restores it before it returns, so its load-then-store does not matter.
 *
 * NOT MODELLED: the posted wake_ones, wake_all and complete_all (they
 * travel as the completes do, in other bits of the same word; L6's
 * saturation only merges them), the queue the posted calls act on
 * (swait.pml), wake_all walks and keep_ref (L5), PARKED and FUTEX_WAKE of
 * parked lockers, the L6 bound on an ordinary head's complete count
 * (16,777,215: never reached here).
 *
 * PROPERTIES (pan -DSAFETY: assertions and invalid end states)
 *
 *  (a) A hold waits for a lock only at depth 1 (L4): every lock that may
 *      wait asserts depth[c]==1, as soon as it is reached, whether or not
 *      the lock is free; a handler at depth > 0 reaches none (L2).  A
 *      handler that waited for its own thread would also be a deadlock,
 *      an invalid end state.
 *  (b) No complete lost and none doubled: when every thread and handler
 *      has finished, done[h] == calls[h] (calls: the ghost count of
 *      complete calls made on h) and nothing is pending (pend[h] == 0).
 *  (c) A post is on the head until performed, and no hold ends past one:
 *      at every post and every take of a posted set, the head's posted
 *      count equals the ghost pend[h] (posts returned, not yet performed:
 *      none is hidden in a thread's hands, where a completion's check
 *      could not see it); the
 *      release that ends a hold (ordinary head), and the last leaver of a
 *      PI head, finds pend[h]==0.  Destroy after every call returned finds
 *      done[DH]==calls[DH] once it holds the lock (ordinary head; on a PI
 *      head a post made after a leaver's unlock may still be in walks when
 *      the next holder takes the lock, and is performed by that holder's
 *      release, so D checks after its own release), and nothing touches
 *      DH after its destroy: every access asserts !destroyed[h].
 *  (d) No deadlock: two threads whose handlers complete the heads the
 *      other thread holds (and their own) all finish; a blocked process
 *      at the end is an invalid end state (only D may wait forever for a
 *      destroy that never becomes legal: its end label).  With CAP=1, also
 *      when their counts are full: a handler that waited for room there
 *      (MUTANT_PI_FULL_WAITS) deadlocks with the other thread's handler.
 *  (e) A spill touches the head only while it is counted: D may start as
 *      soon as its complete is in done, and quiesces until REFS counts
 *      only itself, so the spill's wake and leave never touch a destroyed
 *      head (ALIVE); a spill that does not count itself
 *      (MUTANT_SPILL_UNCOUNTED) does.
 *
 * MAP: Promela -> C (lib/headlock.c unless named)
 *
 *  take()          swait_head_lock: depth + 1, swait_trylock /
 *                  swait_lock_slow (lib/lock.h); PI: head_lock_slow,
 *                  "__atomic_fetch_add(&h->walks, 1", swait_pi_lock
 *  lock_or_post()  swait_head_lock_or_post: ordinary, the CAS 0 -> HELD or
 *                  "add_word(v, what, 1, &nv)"; PI, "(v & PI_REFS_MASK) !=
 *                  0" post, else REFS 0 -> 1, depth + 1,
 *                  pi_take_or_hand_over
 *  hand_over()     pi_take_or_hand_over: swait_pi_trylock, then
 *                  "add_pi(h, v, ones, all) - 1" when REFS >= 2
 *  release()       swait_head_try_release and its callers' loop: the CAS
 *                  HELD -> 0, or the CAS taking the posted set, then
 *                  perform(): swait_complete_n (lib/completion.c) under
 *                  the lock; hold_ends: depth - 1
 *  release_pi()    release_pi: "while (v & PI_POSTED)", swait_pi_unlock,
 *                  drop_ref: "(v & PI_POSTED) && (v & PI_REFS_MASK) == 1",
 *                  swait_head_may_wait ? swait_pi_lock (RELOCK) :
 *                  swait_pi_trylock (LTRY), else the CAS REFS - 1
 *  SPILL, SPWAKE   lib/wake.c spill(): sink_completes without the lock,
 *                  then swait_head_spilled: the wake's CAS, drop_ref
 *  own()           the handler's own complete under the lock it took
 *  D               swait_head_destroy (lib/swait.c): lock, check,
 *                  swait_quiesce_dropping_lock (lib/wake.c; PI: until REFS
 *                  is 1), unlock
 *
 * MUTANTS (model only; spin -DMUTANT_x)
 *
 *  MUTANT_POST_NONATOMIC    the post is a load and a later store, not one
 *                           CAS (the old non-atomic reservation): a post
 *                           in between (a nested handler's, or the holder
 *                           taking the set) is lost or doubled
 *  MUTANT_UNLOCK_NO_RECHECK the ordinary release stores 0 whatever is
 *                           posted (L3 broken)
 *  MUTANT_DESTROY_IGNORES_PENDING  destroy neither takes the lock nor
 *                           waits for the holder's release
 *  MUTANT_PI_LEAVER_NO_RECHECK  (PI=1) the leaver leaves REFS without
 *                           looking for posts made after its unlock (L7)
 *  MUTANT_PI_FULL_WAITS     (PI=1, CAP=1) a post or hand-over that does
 *                           not fit waits for room instead of spilling
 *  MUTANT_SPILL_UNCOUNTED   (PI=1, CAP=1) a full post spills without
 *                           counting itself in REFS
 *  MUTANT_PI_LEAVER_TAKES_FIRST  (PI=1) the last one out takes the posts
 *                           off the word before it takes the lock again
 *                           (the order before b93bc72): they are on no
 *                           head while it waits, where a completion's
 *                           check misses them (VISIBLE)
 */

#ifndef LOOPS
#define LOOPS 2		/* each thread's lock holds */
#endif
#ifndef NSIG
#define NSIG 1		/* runs of each thread's handler H1 */
#endif
#ifndef NSIG2
#define NSIG2 1		/* runs of H2_0, nested in H1_0 */
#endif
#ifndef NSIG2B
#define NSIG2B 0	/* runs of H2_1, nested in H1_1 */
#endif
#ifndef PI
#define PI 0
#endif
#ifndef CAP
#define CAP 15		/* PI: most posts walks holds (L6); 15, no bound */
#endif
#ifndef DESTROY
#define DESTROY 1	/* D destroys head DH */
#endif

#define DH	1	/* the head D destroys */
#define DC	2	/* D's context: depth[DC], owner DC + 1 */
#define NPROC	6	/* threads and handlers: Final waits for them */

#define HELD	1	/* ordinary word: HELD, plus ONE per posted complete */
#define ONE	2
#define PONE	16	/* PI walks word: REFS (bits 0-3), PONE per post */

#if PI
byte pw[2];		/* PI lock word: 0 free, else the owner's context + 1 */
byte walks[2];		/* REFS + PONE * posted */
#define POSTS(h)	(walks[h] / PONE)
#define REFS(h)		(walks[h] % PONE)
#define LOCKWORD(h)	pw[h]
#define OWNER(c)	(c + 1)
#define LOADED(h)	walks[h]	/* what MUTANT_POST_NONATOMIC loads */
#else
byte word[2];		/* the ordinary lock word */
#define POSTS(h)	(word[h] / ONE)
#define LOCKWORD(h)	word[h]
#define OWNER(c)	HELD
#define LOADED(h)	word[h]
#endif
byte done[2];		/* the completion's count */

/* ghosts */
byte calls[2];		/* complete calls made on h */
byte hret[2];		/* ... and returned */
byte pend[2];		/* posts to h not performed yet */
byte taking[2];		/* threads between their choice of h and its lock */
bit closing[2];		/* D started: no new call on h */
bit destroyed[2];	/* D returned */
bit ddone;		/* D returned */

/* thread t's state, shared with its handlers; depth[DC] is D's */
byte depth[3];
byte lvl[2];		/* 0 thread t runs, 1 H1_t runs, 2 H2_t runs */
bit tdone[2];
byte fin;		/* threads and handlers finished */

#define ALIVE(h)	assert(!destroyed[h])
/* (c): every post is on the head or in its holder's hand */
#define VISIBLE(h)	assert(POSTS(h) == pend[h])
/* (c): a hold ends with nothing posted left */
#define ENDS(h)		assert(pend[h] == 0)

/*
 * Where a hold stands (st).  Each is one atomic step of the C code, the
 * step that leaves it; st 0: no hold.
 */
#define LOCK	1	/* the lock that may wait (a) */
#define REFSUP	2	/* PI: REFS + 1 before the lock */
#define REL	3	/* holding: release, or take and perform the posts */
#define LEAVE	4	/* PI: unlocked, leave REFS */
#define RELOCK	5	/* PI: the last leaver takes the lock again, waiting */
#define TRY	6	/* PI: counted, trylock */
#define HAND	7	/* PI: trylock failed: hand the calls over */
#define END	8	/* hold_ends: depth - 1 */
#define RET	9	/* a handler's swait_complete returns */
#define NALOAD	10	/* MUTANT_POST_NONATOMIC: the load */
#define NASTORE	11	/* MUTANT_POST_NONATOMIC: the store (or the CAS) */
#define SPILL	12	/* PI: counted, full: into done without the lock */
#define WAITROOM 13	/* MUTANT_PI_FULL_WAITS: a full post waits */
#define SPWAKE	14	/* PI: a spill posts its wake, then leaves */
#define LTRY	15	/* PI: the last one out's trylock, in a handler */
#define SPILLX	16	/* MUTANT_SPILL_UNCOUNTED: SPILL, not counted */
#define SPWAKEX	17	/* MUTANT_SPILL_UNCOUNTED: SPWAKE, then no leave */

#if PI
#define FIRST	REFSUP
#else
#define FIRST	LOCK
#endif

/* The holder performs n posted completes (swait_complete_n, locked). */
#define PERFORM(h, n)	done[h] = done[h] + n; pend[h] = pend[h] - n; n = 0

/*
 * One hold of head h by context c (thread c, its handler at level lv, or
 * D), from st to its end: swait_head_lock or lock_or_post's take, the
 * critical section, the release loop, depth - 1, and a handler's return.
 * n: a taken set; m: the handler's own complete, not yet done; q: D found
 * REFS > 1 (PI quiesce).
 */
inline hold(c, h, lv)
{
	do
	:: atomic {	/* swait_lock, swait_pi_lock: may wait (a) */
		st == LOCK && (LOCKWORD(h) == 0 || depth[c] != 1) ->
		assert(depth[c] == 1);
		ALIVE(h);
		LOCKWORD(h) = OWNER(c);
		if
		:: lv == 0 && c != DC -> taking[h]--
		:: else
		fi;
		done[h] = done[h] + m;		/* a handler's own complete */
		m = 0;
		if
		:: c == DC ->
#if PI
			q = (REFS(h) != 1)	/* quiesce: others counted */
#else
			/* (c): the holds before ours performed every post */
			assert(done[DH] == calls[DH])
#endif
		:: else
		fi;
		st = REL
	   }
#if !PI
	:: atomic {	/* swait_head_try_release (L3) */
		st == REL ->
		ALIVE(h);
		VISIBLE(h);
#ifndef MUTANT_UNLOCK_NO_RECHECK
		if
		:: word[h] == HELD ->		/* CAS HELD -> 0 */
			ENDS(h);
			word[h] = 0;
			st = END
		:: else ->			/* CAS: take the set, perform */
			n = POSTS(h);
			word[h] = HELD;
			PERFORM(h, n)
		fi
#else
		ENDS(h);
		word[h] = 0;
		st = END
#endif
	   }
#else
	:: atomic {	/* head_lock_slow's fetch_add */
		st == REFSUP -> ALIVE(h); walks[h]++; st = LOCK
	   }
	:: atomic {	/* release_pi: posted while held, or swait_pi_unlock */
		st == REL ->
		ALIVE(h);
		VISIBLE(h);
		if
		:: POSTS(h) > 0 ->
			n = POSTS(h);
			walks[h] = REFS(h);
			PERFORM(h, n)
		:: else ->
			pw[h] = 0;
			st = LEAVE
		fi
	   }
	:: atomic {	/* release_pi: leave REFS (L7) */
		st == LEAVE ->
		ALIVE(h);
		if
#ifndef MUTANT_PI_LEAVER_NO_RECHECK
		:: POSTS(h) > 0 && REFS(h) == 1 ->	/* posted meanwhile */
			/* the lock again; the posts stay in the word */
#ifdef MUTANT_PI_LEAVER_TAKES_FIRST
			n = POSTS(h);		/* the old order: take them */
			walks[h] = 1;
#endif
			if
			:: depth[c] <= 1 -> st = RELOCK	/* may wait */
			:: else -> st = LTRY
			fi
#endif
		:: else ->
			if
			:: REFS(h) == 1 -> ENDS(h)	/* the last one out */
			:: else
			fi;
			walks[h]--;
			st = END
		fi
	   }
	:: atomic {	/* swait_pi_lock again; REL performs the posts */
		st == RELOCK && (pw[h] == 0 || depth[c] != 1) ->
		assert(depth[c] == 1);
		ALIVE(h);
		pw[h] = OWNER(c);
#ifdef MUTANT_PI_LEAVER_TAKES_FIRST
		PERFORM(h, n);
#endif
		st = REL
	   }
	:: atomic {	/* drop_ref's trylock, in a handler */
		st == LTRY ->
		ALIVE(h);
		if
		:: pw[h] == 0 ->
			pw[h] = OWNER(c);
#ifdef MUTANT_PI_LEAVER_TAKES_FIRST
			PERFORM(h, n);
#endif
			st = REL
		:: else ->
			/*
			 * A newcomer has it, and so is counted: the look
			 * again leaves (no endless LTRY-LEAVE loop, which
			 * a safety search would not report).
			 */
			assert(REFS(h) >= 2);
			st = LEAVE
		fi
	   }
	:: atomic {	/* pi_take_or_hand_over: swait_pi_trylock */
		st == TRY ->
		ALIVE(h);
		if
		:: pw[h] == 0 ->
			pw[h] = OWNER(c);
			done[h] = done[h] + m;
			m = 0;
			st = REL
		:: else -> st = HAND
		fi
	   }
	:: atomic {	/* pi_take_or_hand_over: to the newcomer's REFS */
		st == HAND ->
		ALIVE(h);
		if
#ifndef MUTANT_PI_FULL_WAITS
		:: REFS(h) >= 2 && POSTS(h) + m > CAP ->
			st = SPILL		/* HAND_FULL: still counted */
#endif
		/* (the mutant: no option when full, so it waits for room) */
		:: REFS(h) >= 2 && POSTS(h) + m <= CAP ->
			walks[h] = walks[h] + m * PONE - 1;
			pend[h] = pend[h] + m;	/* our own call is a post now */
			m = 0;
			VISIBLE(h);
			st = END
		:: REFS(h) < 2 -> st = TRY	/* it left meanwhile */
		fi
	   }
#ifdef MUTANT_PI_FULL_WAITS
	:: atomic {	/* wait_for_room, then the post again */
		st == WAITROOM && (REFS(h) == 0 || POSTS(h) < CAP) ->
		ALIVE(h);
		if
		:: REFS(h) != 0 ->
			walks[h] = walks[h] + PONE;
			pend[h]++;
			m = 0;
			VISIBLE(h);
			st = RET
		:: else -> walks[h]++; depth[c]++; st = TRY
		fi
	   }
#endif
	:: atomic {	/* spill: the call into done, counted, not holding */
		st == SPILL ->
		ALIVE(h);
		done[h] = done[h] + m;
		m = 0;
		st = SPWAKE
	   }
	:: atomic {	/* swait_head_spilled: post the wake (walks) */
		st == SPWAKE ->
		ALIVE(h);			/* (e) */
		st = LEAVE
	   }
#ifdef MUTANT_SPILL_UNCOUNTED
	:: atomic { st == SPILLX -> ALIVE(h); done[h] = done[h] + m; m = 0;
		    st = SPWAKEX }
	:: atomic { st == SPWAKEX -> ALIVE(h); st = END }
#endif
#endif
#ifdef MUTANT_POST_NONATOMIC
	:: atomic { st == NALOAD -> ALIVE(h); v = LOADED(h); st = NASTORE }
	:: atomic {
		st == NASTORE ->
		ALIVE(h);
#if !PI
		if
		:: v == 0 ->			/* CAS 0 -> HELD */
			if
			:: word[h] == 0 ->
				word[h] = HELD; depth[c]++;
				done[h]++; m = 0; st = REL
			:: else -> st = NALOAD
			fi
		:: else ->			/* a plain store */
			word[h] = v + ONE;
			pend[h]++;
			m = 0;
			VISIBLE(h);
			st = RET
		fi;
#else
		if
		:: v % PONE == 0 ->		/* CAS REFS 0 -> 1 */
			if
			:: walks[h] == v ->
				walks[h] = v + 1; depth[c]++; st = TRY
			:: else -> st = NALOAD
			fi
		:: else ->			/* a plain store */
			walks[h] = v + PONE;
			pend[h]++;
			m = 0;
			VISIBLE(h);
			st = RET
		fi;
#endif
		v = 0
	   }
#endif
	:: atomic {	/* hold_ends */
		st == END ->
		depth[c]--;
		if
		:: lv == 0 -> st = 0; break
		:: else -> st = RET
		fi
	   }
	:: atomic {	/* the handler's swait_complete() returns */
		st == RET ->
		hret[h]++;
		lvl[c] = lv - 1;
		h = 0;
		st = 0;
		break
	   }
	od
}

/* ----------------------------------------------------------- threads */

inline thread(t)
{
	do
	:: atomic {	/* a call that takes a head; depth + 1 */
		i < LOOPS ->
		i++;
		if
		:: !closing[t] -> h = t
		:: !closing[1 - t] -> h = 1 - t
		fi;
		taking[h]++;
		depth[t]++;
		st = FIRST
	   };
		hold(t, h, 0)
	:: atomic { i == LOOPS -> tdone[t] = 1; fin++; h = 0; break }
	od
}

/*
 * Handler at level lv of thread t: N runs of swait_complete(head h).  At
 * depth 0, an ordinary call (depth + 1, a lock that may wait); else
 * swait_head_lock_or_post (L2), never waiting: the take joins the CAS
 * (depth + 1 after it is not seen by a handler nested in us: depth > 0
 * either way; the complete under the lock is seen only through the lock).
 */
inline handler(t, lv, N)
{
	do
	:: atomic {
		i < N && lvl[t] == lv - 1 && !tdone[t] ->
		lvl[t] = lv;
		i++;
		if
		:: !closing[t] -> h = t
		:: !closing[1 - t] -> h = 1 - t
		fi;
		calls[h]++;
		m = 1;				/* our complete, to do */
		if
		:: depth[t] == 0 -> depth[t]++; st = FIRST
		:: else ->
#ifdef MUTANT_POST_NONATOMIC
			v = LOADED(h);
			st = NASTORE
#elif !PI
			if
			:: word[h] == 0 ->	/* CAS 0 -> HELD */
				word[h] = HELD; depth[t]++;
				done[h]++; m = 0; st = REL
			:: else ->		/* CAS: add a posted complete */
				word[h] = word[h] + ONE;
				pend[h]++;
				m = 0;
				VISIBLE(h);
				st = RET
			fi
#else
			if
			:: REFS(h) != 0 && POSTS(h) < CAP ->
				walks[h] = walks[h] + PONE;	/* post */
				pend[h]++;
				m = 0;
				VISIBLE(h);
				st = RET
#if defined(MUTANT_SPILL_UNCOUNTED)
			:: REFS(h) != 0 && POSTS(h) >= CAP ->
				depth[t]++; st = SPILLX	/* not counted */
#elif !defined(MUTANT_PI_FULL_WAITS)
			:: REFS(h) != 0 && POSTS(h) >= CAP ->
				walks[h]++; depth[t]++; st = SPILL
#else
			:: REFS(h) != 0 && POSTS(h) >= CAP ->
				st = WAITROOM
#endif
			:: REFS(h) == 0 ->	/* CAS REFS 0 -> 1 */
				walks[h]++; depth[t]++; st = TRY
			fi
#endif
		fi
	   };
		hold(t, h, lv)
	:: atomic { i == N || tdone[t] -> fin++; break }
	od
}

#define LOCALS	byte i = 0, h = 0, n = 0, v = 0, st = 0; bit m = 0, q = 0

active proctype T0() provided (lvl[0] == 0) { LOCALS; thread(0) }
active proctype T1() provided (lvl[1] == 0) { LOCALS; thread(1) }
active proctype H1_0() provided (lvl[0] < 2) { LOCALS; handler(0, 1, NSIG) }
active proctype H1_1() provided (lvl[1] < 2) { LOCALS; handler(1, 1, NSIG) }
active proctype H2_0() { LOCALS; handler(0, 2, NSIG2) }
active proctype H2_1() { LOCALS; handler(1, 2, NSIG2B) }

/* ----------------------------------------------------------- destroy */

active proctype D()
{
	LOCALS;

end_idle:
	atomic {
		DESTROY && calls[DH] > 0 &&
		(hret[DH] == calls[DH] || done[DH] == calls[DH]) &&
		taking[DH] == 0 ->
		closing[DH] = 1;
		h = DH;
#ifndef MUTANT_DESTROY_IGNORES_PENDING
		depth[DC]++;
		st = FIRST
#endif
	};
#ifndef MUTANT_DESTROY_IGNORES_PENDING
	do	/* swait_head_destroy: lock, check, quiesce (PI), unlock */
	:: hold(DC, h, 0);
		if
		:: q -> atomic { q = 0; depth[DC]++; st = FIRST }
		:: else -> break
		fi
	od;
#endif
	atomic {
		/* (c): destroy after every call returned finds none pending */
		assert(done[DH] == calls[DH] && pend[DH] == 0);
		destroyed[DH] = 1;
		ddone = 1
	}
}

/*
 * (b), once every thread and handler has finished, and D too if it started
 * (a D that never started could not perform a post left over: nobody may).
 */
active proctype Final()
{
	atomic {
		fin == NPROC && (ddone || !closing[DH]) ->
		assert(done[0] == calls[0] && done[1] == calls[1] &&
		       pend[0] == 0 && pend[1] == 0)
	}
}
