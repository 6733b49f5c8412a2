/* SPDX-License-Identifier: MIT */
/*
 * swait.pml - a Promela model of the wait/wake protocol of lib/swait.c and
 * the waiter loop of include/swait.h (swait_event_generic), checked
 * exhaustively by spin: tests/model/check.sh, `meson test --suite model`.
 *
 * WHAT IS MODELLED
 *
 * NW waiters (3) and NK wakers (2) on one head.  The condition is a
 * counting semaphore: a waker posts a token (tokens++, the caller's "store
 * cond") and then calls swait_wake_one or swait_wake_all (WAKES: 1 = waker
 * 0 wake_one for each of its 2 posts, waker 1 wake_all for its 1 post;
 * 0 = spin tries both after every post).  A waiter's cond takes a token if
 * there is one (an atomic decrement, as a completion's cond does).  The
 * wakers post NW tokens in all, one per waiter.  Each waiter runs
 * swait_event_generic() once, with a deadline; after ETIMEDOUT it gives up
 * (RETRY 0) or calls it again (RETRY 1, a new frame at the same address).
 *
 * FUTEX_WAIT is compare-and-block, atomic as in the kernel; FUTEX_WAKE
 * unblocks the thread blocked on that word, if any.  Timeouts (and EINTR
 * with SWAIT_INTERRUPTIBLE, the same path) are nondeterministic exits of a
 * blocked FUTEX_WAIT, TIMEOUTS of them in a run (default 1); SPURIOUS
 * (default 0) more exits return 0 with the word unchanged (an ignored
 * signal).  A stale FUTEX_WAKE aimed at a word after its waiter returned
 * (allowed by I3) is modelled as it happens: it may wake the next wait at
 * that address, spuriously; or, landing while the frame is gone (departed),
 * on memory reused for anything, a PI futex included, where the kernel
 * wakes nobody and answers EINVAL.  Such a wake sets the ghost late;
 * swait_futex_wake() ignores its result, so nothing follows from it, and
 * MUTANT_LATE_WAKE_FATAL (the abort it used to make) is caught.
 *
 * futex_waitv (W1-W3, WAITV: 0 never, 1 always, 2 either at each announce,
 * default 1).  A waiter that announces SLEEPING_V sleeps in futex_waitv()
 * on the head's walks word (walksv, which every walk's start and end
 * change) and its own word, as the kernel does it: the words in order,
 * each "queue, then compare" in one step (onwalks[i], then infutex[i]);
 * a FUTEX_WAKE of either word wakes the whole call.  Under WAITV 2 the
 * call may also fail with ENOSYS before doing anything, and the waiter
 * re-announces SLEEPING (W3).  A wake_all walk gives a SLEEPING_V waiter no
 * FUTEX_WAKE of its own; after its last unlock it makes one FUTEX_WAKE of
 * walksv if it flipped any (W1).  Which sleepers use futex_waitv (W4: a
 * bit of the walks word that a walk sets) only chooses between paths, each
 * modelled; WAITV 2's free choice at each announce covers every choice.
 *
 * The spin before the announce (lib/spin.c S1; SPIN 1, default 0): at any
 * moment between its condition check and its announce, a waiter may read
 * its own word and, finding WOKEN_*, take the wake as a failed announce
 * does, with no system call; a waker that flipped it found QUEUED and
 * made no FUTEX_WAKE (property (e)).
 *
 * PROPERTIES (pan -DSAFETY: assertions and invalid end states)
 *
 *  (a) No lost wakeup.  Every process must reach its end; a waiter left
 *      blocked in FUTEX_WAIT at the end is an invalid end state.  With
 *      RETRY 0 a waiter that gave up leaves its token to the others, so a
 *      blocked waiter at the end always has a token it was not woken for.
 *      Timeouts cannot hide a lost wake: spin also explores every run in
 *      which the budget is not used.
 *  (a') A timed-out wait strands no token (the final re-check: "cond is
 *      evaluated one last time").  ETIMEDOUT may be returned only if cond
 *      was false at some moment between the end of swait_finish() (the
 *      waiter is on no list: no later wake is aimed at it) and the return.
 *      Ghosts: inw (bit i: waiter i is in that window), zs (bit i: tokens
 *      was 0 at some moment of it); a take that leaves tokens at 0 sets
 *      zs |= inw.
 *  (b) No access to a waiter's node after its swait_event_generic returned.
 *      The return sets departed[i] (the frame is gone); every read or write
 *      of node i by another thread (list_del of it or of a neighbour,
 *      list_add_tail and splice touching it, the exchange, the mutant's
 *      read of w->link.next) asserts !departed[i].  FUTEX_WAKE on the
 *      word's address is not an access (I3).  At its return a waiter also
 *      asserts that it is on no list (I4; CHECK_I4 0 turns that off so
 *      that (b) is what catches a node left on a list).
 *  (c) List integrity and I1.  Each list operation asserts the node is on
 *      the list its ghost where[i] names; at every lock acquire and release
 *      the owner checks I1 (on a list <=> QUEUED or SLEEPING) for every
 *      waiter and the shape of every list (lengths, padding, no node twice,
 *      where[] agrees).
 *  (d) I5 in wake_all: one dequeue per lock hold (a ghost count), and no
 *      FUTEX_WAKE by the lock holder.
 *  (e) (SPIN 1) A wake taken by the spin cost its waker no FUTEX_WAKE: the
 *      flip that woke the waiter found it QUEUED (ghost spinfw, asserted
 *      at the take).  MUTANT_SPIN_AFTER_ANNOUNCE breaks it.
 *
 * MEMORY MODEL
 *
 * Spin interleaves atomic steps, i.e. sequentially consistent memory: the
 * two O1 fences (prepare's after the enqueue, the wakes' before the peek)
 * are implicit.  MUTANT_NO_BARRIER drops prepare's fence as
 * tests/mutants/no_barrier.patch does, and the model then lets the enqueue sit in
 * the waiter's store buffer: the enqueue sets invis[i], and while it is set
 * a lockless peek (list_empty(&h->list) in wake_one/wake_all) that finds i
 * first on the list reads the old, empty value.  The buffer drains at the
 * waiter's announce CAS, or when the node is dequeued; any later drain
 * shows the same bug.  Readers under the lock see the true list (O4).
 *
 * ASYM 1: the head is asymmetric (lib/asym.c O1a).  The wakes have no
 * fence, so a waker's store of cond sits in its store buffer (sbuf[k])
 * while its peek runs, and drains right after the peek (before the lock,
 * a locked instruction, in the non-empty case): the latest point x86
 * allows, and the window the argument must close.  A waiter's prepare
 * ends in membarrier(), which drains every waker's buffer before the
 * waiter reads cond.  MUTANT_ASYM_NO_MEMBARRIER puts a plain fence there,
 * which orders only the waiter's own accesses: a lost wakeup.  Both wakes
 * peek fence-less here; the library's wake_all keeps its fence, which the
 * weaker model covers.
 *
 * STEPS AND MERGES
 *
 * Each Promela step is one atomic action of the C code, or several merged
 * where no other thread can tell the difference:
 *  - a critical section is one step up to its first action another thread
 *    can observe (the wakers' exchange, between list_del and the exchange,
 *    stays a step of its own): between lock acquire and that action,
 *    lockless readers (the peek, the waiter's loads and CASes of its word)
 *    see memory as before the acquire, and lockers are blocked either way;
 *  - the exchange and the unlock are one step in the real protocol (they
 *    are split in the mutants that put something in between);
 *  - FUTEX_WAIT's return and the load of the word after it are one step:
 *    in between only a waker's exchange can change the word, and the
 *    return commutes with it;
 *  - "woken:"'s store of IDLE joins the step that read WOKEN_*: no other
 *    thread reads or writes the word of a waiter on no list (I2).
 *
 * NOT MODELLED: the lock's internals (lib/lock.h: CAS fast path, bounded
 * spin, CONTENDED and FUTEX_WAIT parking, the PI lock): the head lock is an
 * atomic test-and-set that blocks while held, and a release.  head->walks
 * beyond its changes (the walkers count, quiesce, destroy's EBUSY, the PI
 * and BCAST bits): its value is walksv, which each walk's start and end
 * change.  Cancellation (its cleanup
 * is swait_finish, which is modelled).  swait_prepare's "keep place" branch
 * is modelled but unreachable from swait_event_generic.  The swait_check
 * debug checks (magic tag, head) are the where[] assertions.
 *
 * MAP: Promela step -> C (file, function, code excerpt: grep for it)
 *
 *  acquire()/release()     swait_head_lock/unlock (lib/headlock.c) ->
 *   UNLOCK()               swait_lock (lib/lock.h)
 *                          "__atomic_compare_exchange_n(word, &expected,",
 *                          swait_unlock_release "__atomic_exchange_n(word,
 *                          SWAIT_UNLOCKED"
 *  waiter, label again     swait_event_generic (include/swait.h): "if
 *                          (swait_r_ == 0 && !(cond))",
 *                          "SWAIT_WAITER_INITIALIZER": fast check, new frame
 *  label prepare           swait_prepare (lib/swait.c): lock; "if
 *                          (swait_state_queued(s))" keep place;
 *                          "list_add_tail(&h->list, &w->link)", store
 *                          QUEUED; unlock; O1
 *                          "__atomic_thread_fence(__ATOMIC_SEQ_CST)"
 *  CONSUME after prepare   swait_event_generic "if (cond) break;"
 *  announce step, sv       sleep_announced: "uint32_t sleeping =
 *                          swait_waitv_usable(h)"; "__atomic_compare_
 *                          exchange_n(&w->state, &s, sleeping, false,";
 *                          "if (!swait_state_sleeping(s))" ... "goto
 *                          woken;"
 *  label futexwait         sleep_once: "return swait_futex_waitv(&h->walks,
 *                          &w->state," (lib/futex.h: "v[0].val =
 *                          __atomic_load_n(bcast," is v = walksv; the
 *                          kernel's words in order are the two steps)
 *  ENOSYS step (WAITV 2)   "if (err == ENOSYS) {" CAS SLEEPING_V ->
 *                          SLEEPING
 *  label eagain            EAGAIN: "if (s != sleeping) goto woken;", loop
 *  label futexwait1        sleep_once: "return swait_futex_wait(&w->state,
 *                          SWAIT_SLEEPING,"
 *  label returned          "s = load_acquire(&w->state);" "if (s !=
 *                          sleeping) goto woken;"
 *  retract step            "if (err == ETIMEDOUT ||" ... CAS sleeping ->
 *                          QUEUED, "return err;" / "goto woken;"
 *  WOKEN()                 "woken:" "store_relaxed(&w->state, SWAIT_IDLE);"
 *  label rewoken           swait_event_generic "if (swait_r_ != 0) break;",
 *                          "Woken, so dequeued: check before queueing
 *                          again" "if (cond) break;"
 *  label finish            swait_finish: "uint32_t s =
 *                          load_acquire(&w->state);"; lock; re-load,
 *                          "list_del(w);" store IDLE, unlock; unlock; "if
 *                          (s == SWAIT_IDLE)"; store IDLE; "if (s ==
 *                          SWAIT_WOKEN_ONE) swait_wake_one(h);"
 *  label recheck           swait_event_generic "if (swait_r_ != 0 &&
 *                          (cond))"
 *  return step             the end of swait_event_generic: frame gone
 *  wake_one()              swait_wake_one: fence; "if
 *                          (list_empty(&h->list)) return;"; lock;
 *                          swait_wake_one_locked; unlock;
 *                          "swait_futex_wake(word, 1);"
 *  DEQ(), FLIP(),          dequeue_and_flip: "list_del(w);"; "old =
 *   FLIP_UNLOCK()          __atomic_exchange_n(&w->state, how,"; "if (old
 *                          == SWAIT_SLEEPING_V && by_walks)"; "return
 *                          swait_state_sleeping(old)"
 *  wake_all(), walksv++,   swait_wake_all: fence, peek, lock;
 *   WALK_END,              swait_wake_all_and_unlock: empty -> unlock;
 *   WALK_WAKE_WORD(), bw   "list_splice_init(&h->list, &batch);", walks
 *                          + 1; loop: dequeue_and_flip WOKEN_ALL (by_walks
 *                          is bw), "last = list_empty(&batch);",
 *                          walk_done() (the generation: WALK_END) when
 *                          last, unlock, FUTEX_WAKE, "if (last)", lock,
 *                          "if (list_empty(&batch))" -> walk_done,
 *                          unlock
 *  WALKS_WAKE()            "if (quiesced || by_walks)"
 *                          "swait_futex_wake(&h->walks, INT_MAX);"
 *  list_* inlines          lib/list.h: list_empty, list_add_tail, list_del,
 *                          list_splice_init
 *
 * MUTANTS (spin -DMUTANT_x; the same names as tests/mutants/NAME.patch,
 * listed in tests/mutants/mutants.txt)
 *
 *  MUTANT_NO_BARRIER            prepare without the O1 fence (see MEMORY MODEL)
 *  MUTANT_WAIT_NO_COMPARE       FUTEX_WAIT compares a stale copy of the word
 *  MUTANT_STORE_BEFORE_DEQUEUE  the exchange to WOKEN_* before list_del
 *  MUTANT_FINISH_KEEPS_QUEUED   finish returns without dequeuing
 *  MUTANT_NO_FINAL_RECHECK      no final evaluation of cond after a timeout
 *  MUTANT_READ_AFTER_STORE      the waker reads w->link.next after the exchange
 *  MUTANT_WAKE_ALL_HOLDS_LOCK   wake_all keeps the lock for the whole walk
 *  MUTANT_DEQUEUE_KEEPS_STATE   (model only) finish dequeues but leaves the
 *                               word QUEUED: shows that the I1 check can fail
 *  MUTANT_NO_PASS_ON            (model only) finish swallows a WOKEN_ONE (I6)
 *  MUTANT_LATE_WAKE_FATAL       a FUTEX_WAKE that fails after its waiter left
 *                               aborts (swait_futex_wake before I3's EINVAL)
 *  MUTANT_WALKS_WAKE_SKIPPED    a walk that flipped SLEEPING_V waiters makes
 *                               no FUTEX_WAKE of the walks word (W1)
 *  MUTANT_ASYM_NO_MEMBARRIER    (ASYM 1) prepare ends in a fence, not in
 *                               membarrier(): the waker's store may still
 *                               be buffered when the waiter reads cond
 *  MUTANT_WAITV_UNORDERED       (model only) the kernel compares the own word
 *                               before it queues on the walks word, and the
 *                               walk's end restores the word's value: both
 *                               halves of W2 gone, a lost wakeup
 */

#ifndef NW
#define NW 3			/* waiters */
#endif
#ifndef NK
#define NK 2			/* wakers */
#endif
#ifndef TIMEOUTS
#define TIMEOUTS 1		/* ETIMEDOUT / interruptible EINTR exits, total */
#endif
#ifndef SPURIOUS
#define SPURIOUS 0		/* FUTEX_WAIT returns with the word unchanged */
#endif
#ifndef CHECK_I4
#define CHECK_I4 1		/* 0: leave a node on a list to (b) to catch */
#endif
#ifndef RETRY
#define RETRY 0			/* after ETIMEDOUT: 1 wait again, 0 give up */
#endif
#ifndef SPIN
#define SPIN 0			/* 1: poll the own word before the announce */
#endif
#ifndef WAITV
#define WAITV 1			/* futex_waitv: 0 never, 1 always, 2 either */
#endif
#ifndef ASYM
#define ASYM 0			/* 1: an asymmetric head (lib/asym.c) */
#endif

/* Tokens each waker posts; NW in all. */
#define POSTS(k)	((k) == 0 -> NW - (NK - 1) * (NW / NK) : NW / NK)

#define NONE		255

/* w->state, as in lib/swait.c */
#define IDLE		0
#define QUEUED		1
#define SLEEPING	2
#define WOKEN_ONE	3
#define WOKEN_ALL	4
#define SLEEPING_V	5

/* return values of sleep / the event macro */
#define OK		0
#define ETIMEDOUT	1
#define EAGAIN		2

/* ---------------------------------------------------------------- state */

byte lock;			/* head lock: 0 free, else owner _pid + 1 */
byte holdsteps;			/* ghost: dequeues in the current lock hold */
byte q[NW] = NONE;		/* head->list, q[0] = head->list.next; NONE pad */
byte qlen;
byte bq[NK * NW] = NONE;	/* waker k's wake_all batch at bq[k * NW] */
byte blen[NK];
byte where[NW];			/* ghost: 0 no list, 1 head, 2 + k batch k */
byte st[NW];			/* w->state (the futex word) */
bit infutex[NW];		/* thread i blocked in FUTEX_WAIT on &st[i] */
bit departed[NW];		/* ghost: i's swait_event returned (frame gone) */
bit invis[NW];			/* MUTANT_NO_BARRIER: enqueue still buffered */
byte tokens;			/* the condition */
#if ASYM
byte sbuf[NK];			/* waker k's stores of cond, still buffered */
/* The waker's buffer drains: its tokens become visible. */
#define DRAIN(k)	d_step { tokens = tokens + sbuf[k]; sbuf[k] = 0 }
#define STORE_COND	sbuf[k]++
#else
#define DRAIN(k)	skip
#define STORE_COND	tokens++
#endif
byte inw;			/* ghost bitmask, property (a') */
byte zs;			/* ghost bitmask, property (a') */
byte budget = TIMEOUTS;
byte spur = SPURIOUS;
byte nfinished;		/* ghost: waiters that hold their token */
bit late;			/* ghost: a FUTEX_WAKE landed late */
byte walksv;			/* head->walks: changes at each walk's start, end */
bit onwalks[NW];		/* thread i queued on walksv in futex_waitv */
#if SPIN
bit spinfw[NW];			/* ghost: i's last flip found it announced */
#define SPINFW	spinfw[w] = SLEEPS(old)
#else
#define SPINFW	skip
#endif

hidden byte t1;			/* scratch, only inside d_step */
hidden byte t2;
hidden byte t3;

#define ONLIST(i)	(where[i] != 0)
#define QS(i)		(st[i] == QUEUED || st[i] == SLEEPING || \
			 st[i] == SLEEPING_V)
#define SLEEPS(s)	((s) == SLEEPING || (s) == SLEEPING_V)

/* list_empty(&h->list), lockless (O4), as the wakes' peek sees it */
#define PEEK_EMPTY	(qlen == 0 || invis[q[0]])

/* Node n is touched by another thread: it must still be live (b). */
#define LIVE(n)		assert(!departed[n])

/* ------------------------------------------------ invariants I1, shape */

inline check_lists()
{
	d_step {
		/* I1 */
		t1 = 0;
		do
		:: t1 < NW -> assert(ONLIST(t1) == QS(t1)); t1++
		:: else -> break
		od;
		/* shape of the head list */
		assert(qlen <= NW);
		t1 = 0;
		do
		:: t1 < NW ->
			if
			:: t1 < qlen -> assert(q[t1] < NW && where[q[t1]] == 1)
			:: else -> assert(q[t1] == NONE)
			fi;
			t1++
		:: else -> break
		od;
		/* and of every batch */
		t2 = 0;
		do
		:: t2 < NK ->
			assert(blen[t2] <= NW);
			t1 = 0;
			do
			:: t1 < NW ->
				t3 = bq[t2 * NW + t1];
				if
				:: t1 < blen[t2] ->
					assert(t3 < NW && where[t3] == t2 + 2)
				:: else -> assert(t3 == NONE)
				fi;
				t1++
			:: else -> break
			od;
			t2++
		:: else -> break
		od;
		/* every node counted once: sum of lengths = nodes on a list */
		t3 = qlen;
		t2 = 0;
		do
		:: t2 < NK -> t3 = t3 + blen[t2]; t2++
		:: else -> break
		od;
		t1 = 0;
		do
		:: t1 < NW -> if :: ONLIST(t1) -> t3-- :: else fi; t1++
		:: else -> break
		od;
		assert(t3 == 0);
		t1 = 0; t2 = 0; t3 = 0
	}
}

/*
 * swait_head_lock / swait_head_unlock (lib/lock.h: swait_lock/unlock).
 * acquire() blocks while the lock is held; it is used as the first
 * statement of a d_step, release() as the last.  A critical section (or the
 * part of it up to the first step another thread can observe) is one
 * d_step: between the acquire and that step, lockless observers (the
 * wakes' peek, the waiter's loads and CASes of its word) see the same
 * memory as before the acquire, and lockers are blocked either way.
 */
inline acquire()
{
	lock == 0 -> lock = _pid + 1; holdsteps = 0;
	check_lists()
}

inline release()
{
	check_lists();
	assert(lock == _pid + 1); lock = 0; holdsteps = 0
}

inline UNLOCK()
{
	d_step { release() }
}

/*
 * FUTEX_WAKE(&st[n], 1): after unlock (I5); not an access to node n (I3).
 * While n's frame is gone its word may be any futex now: a late wake wakes
 * nobody the protocol knows (infutex[n] is 0 then) and may fail with
 * EINVAL (a PI futex with a waiter), which must not stop the waker.
 */
inline FUTEX_WAKE(n)
{
	d_step {
		assert(lock != _pid + 1);
		if
		:: departed[n] -> late = 1
#ifdef MUTANT_LATE_WAKE_FATAL
			; assert(late == 0)	/* EINVAL is fatal */
#endif
		:: else -> infutex[n] = 0; onwalks[n] = 0
		fi
	}
}

/*
 * FUTEX_WAKE(&h->walks, INT_MAX) after the walk's last unlock (W1): wakes
 * every futex_waitv() queued on the walks word, its own or not.
 */
inline WALKS_WAKE()
{
	d_step {
		assert(lock != _pid + 1);
		t1 = 0;
		do
		:: t1 < NW ->
			if
			:: onwalks[t1] -> onwalks[t1] = 0; infutex[t1] = 0
			:: else
			fi;
			t1++
		:: else -> break
		od;
		t1 = 0
	}
}

/*
 * W2 has two halves, each enough alone: the kernel queues on the walks
 * word before it compares the own word, and the walk's end gives the walks
 * word a new value.  -DWAITV_STATE_FIRST and -DWAITV_NO_GEN each drop one
 * (the model must still pass); MUTANT_WAITV_UNORDERED drops both.
 */
#ifdef MUTANT_WAITV_UNORDERED
#define WAITV_STATE_FIRST
#define WAITV_NO_GEN
#endif

/* walk_done()'s change of the walks word, lock held (W2) */
#ifndef WAITV_NO_GEN
#define WALK_END	walksv++
#else
#define WALK_END	walksv--	/* back to the value before the walk */
#endif

/* cond: take a token if there is one */
inline CONSUME(got)
{
	d_step {
		if
		:: tokens > 0 ->
			tokens--; got = 1;
			if :: tokens == 0 -> zs = zs | inw :: else fi
		:: else -> got = 0
		fi
	}
}

/* ------------------------------------------------------------ list ops */

/* list_add_tail(&h->list, &w->link): writes the old tail's ->next */
inline list_add_tail(i)
{
	assert(where[i] == 0 && qlen < NW);
	if :: qlen > 0 -> LIVE(q[qlen - 1]) :: else fi;
	q[qlen] = i;
	qlen++;
	where[i] = 1
}

/* list_del(w): writes the node and both neighbours (caller in d_step) */
inline list_del(i)
{
	LIVE(i);
	if
	:: where[i] == 1 ->
		t1 = 0;
		do
		:: t1 < qlen && q[t1] != i -> t1++
		:: else -> break
		od;
		assert(t1 < qlen);	/* "list corrupted" */
		if :: t1 > 0 -> LIVE(q[t1 - 1]) :: else fi;
		if :: t1 + 1 < qlen -> LIVE(q[t1 + 1]) :: else fi;
		do
		:: t1 + 1 < qlen -> q[t1] = q[t1 + 1]; t1++
		:: else -> break
		od;
		qlen--;
		q[qlen] = NONE
	:: where[i] >= 2 ->
		t2 = (where[i] - 2) * NW;
		t3 = where[i] - 2;
		t1 = 0;
		do
		:: t1 < blen[t3] && bq[t2 + t1] != i -> t1++
		:: else -> break
		od;
		assert(t1 < blen[t3]);
		if :: t1 > 0 -> LIVE(bq[t2 + t1 - 1]) :: else fi;
		if :: t1 + 1 < blen[t3] -> LIVE(bq[t2 + t1 + 1]) :: else fi;
		do
		:: t1 + 1 < blen[t3] -> bq[t2 + t1] = bq[t2 + t1 + 1]; t1++
		:: else -> break
		od;
		blen[t3]--;
		bq[t2 + blen[t3]] = NONE
	:: else -> assert(false)	/* not on a list */
	fi;
	where[i] = 0;
	invis[i] = 0;
	t1 = 0; t2 = 0; t3 = 0
}

/* list_splice_init(&h->list, &batch) for waker k */
inline list_splice_init(k)
{
	assert(blen[k] == 0 && qlen > 0);
	LIVE(q[0]);
	LIVE(q[qlen - 1]);
	t1 = 0;
	do
	:: t1 < qlen ->
		bq[k * NW + t1] = q[t1];
		where[q[t1]] = k + 2;
		q[t1] = NONE;
		t1++
	:: else -> break
	od;
	blen[k] = qlen;
	qlen = 0;
	t1 = 0
}

/* ---------------------------------------------------------------- wakes */

/*
 * dequeue_and_flip(h, w, how), lock held; w and old are the caller's
 * locals.  DEQ(): its first half, to be merged into the d_step that takes
 * the lock; FLIP(): the exchange (and what a mutant does after it).
 * old == SLEEPING means "FUTEX_WAKE after unlock".
 */
inline DEQ()
{
	assert(where[w] != 0);		/* the magic/head swait_check */
	holdsteps++;
	assert(holdsteps <= 1);		/* I5: one step per lock hold */
#ifndef MUTANT_STORE_BEFORE_DEQUEUE
	list_del(w);
#endif
	skip
}

inline FLIP(how)
{
	/* I3: the exchange is the last access to *w */
	atomic { LIVE(w); old = st[w]; st[w] = how; SPINFW };
#ifdef MUTANT_STORE_BEFORE_DEQUEUE
	d_step { list_del(w) };
#endif
#ifdef MUTANT_READ_AFTER_STORE
	LIVE(w);			/* (void)w->link.next */
#endif
	skip
}

/*
 * FLIP then UNLOCK.  In the real protocol nothing follows the exchange in
 * the critical section, so the exchange and the release are one step:
 * between them only lockers could notice, and they are blocked either way.
 */
inline FLIP_UNLOCK(how)
{
#if defined(MUTANT_STORE_BEFORE_DEQUEUE) || defined(MUTANT_READ_AFTER_STORE)
	FLIP(how);
	UNLOCK()
#else
	d_step { LIVE(w); old = st[w]; st[w] = how; SPINFW; release() }
#endif
}

/* swait_wake_one(h); w, old: the caller's locals */
inline wake_one()
{
	/* O1 fence: implicit.  if (list_empty(&h->list)) return; */
	if
	:: PEEK_EMPTY -> skip
	:: else ->
		d_step {
			acquire();
			if
			:: qlen == 0 -> release(); w = NONE
			:: else -> w = q[0]; DEQ()
			fi
		};
		if
		:: w != NONE ->
			FLIP_UNLOCK(WOKEN_ONE);
			if :: SLEEPS(old) -> FUTEX_WAKE(w) :: else fi
		:: else
		fi
	fi;
	d_step { w = 0; old = 0 }
}

/*
 * After a flip in a walk: its own FUTEX_WAKE for a SLEEPING waiter; none
 * for a SLEEPING_V one, whose wake is the walk's last (W1).
 */
inline WALK_WAKE_WORD()
{
	if
	:: old == SLEEPING -> FUTEX_WAKE(w)
	:: old == SLEEPING_V -> bw = 1
	:: else
	fi
}

/* swait_wake_all(h) by waker k (its batch); w, old, last, bw: locals */
inline wake_all(k)
{
	if
	:: PEEK_EMPTY -> skip
	:: else ->
		d_step {
			acquire();
			if
			:: qlen == 0 -> release(); w = NONE
			:: else ->
				list_splice_init(k); walksv++;
				w = bq[k * NW]; DEQ()
			fi
		};
		if
		:: w != NONE ->
			do
			::
#if defined(MUTANT_STORE_BEFORE_DEQUEUE) || defined(MUTANT_READ_AFTER_STORE) || defined(MUTANT_WAKE_ALL_HOLDS_LOCK)
				FLIP(WOKEN_ALL);
				last = (blen[k] == 0);
#ifdef MUTANT_WAKE_ALL_HOLDS_LOCK
				if
				:: !last ->	/* keeps the lock: continue */
					WALK_WAKE_WORD();
					d_step { w = bq[k * NW]; old = 0; DEQ() }
				:: else ->
#endif
				d_step {
					if :: last -> WALK_END :: else fi;
					release()
				};
#else
				d_step {	/* FLIP_UNLOCK, and last */
					LIVE(w); old = st[w]; st[w] = WOKEN_ALL; SPINFW;
					last = (blen[k] == 0);
					if :: last -> WALK_END :: else fi;
					release()
				};
#endif
				WALK_WAKE_WORD();
				if :: last -> break :: else fi;
				d_step {
					acquire();
					old = 0;
					if
					:: blen[k] == 0 ->
						WALK_END; release(); w = NONE
					:: else -> w = bq[k * NW]; DEQ()
					fi
				};
				if :: w == NONE -> break :: else fi
#ifdef MUTANT_WAKE_ALL_HOLDS_LOCK
				fi
#endif
			od
		:: else
		fi
	fi;
#ifndef MUTANT_WALKS_WAKE_SKIPPED
	if :: bw -> WALKS_WAKE() :: else fi;
#endif
	atomic { w = 0; old = 0; last = 0; bw = 0 }
}

/* --------------------------------------------------------------- waiter */

/*
 * sleep_announced's "woken:" label: "store_relaxed(&w->state, SWAIT_IDLE)"
 * consumes the wake and sleep returns 0; the event loop then evaluates cond
 * before it prepares again (label rewoken).  The store is merged into the
 * step that read WOKEN_*: nobody else reads or writes the word of a waiter
 * that is on no list (I2).
 */
inline WOKEN()
{
	st[_pid] = IDLE; sv = 0;
	goto rewoken
}

/*
 * lib/spin.c S1: "v = __atomic_load_n(word, __ATOMIC_ACQUIRE); if ((v &
 * mask) != stay) return v;" then sleep_announced's "goto woken" without
 * the announce.  The polls happen at any moment before the announce (the
 * guard may fire whenever the word has moved); the spin may also end
 * without seeing anything (skip).  Never announced, the waiter was flipped
 * from QUEUED: its waker made no FUTEX_WAKE for it (ghost spinfw), and it
 * makes no FUTEX_WAIT.  MUTANT_SPIN_AFTER_ANNOUNCE polls after the
 * announce instead: the wake it takes cost its waker a FUTEX_WAKE.
 */
inline SPIN_POLL()
{
	if
	:: atomic {
		(st[_pid] == WOKEN_ONE || st[_pid] == WOKEN_ALL) ->
		assert(spinfw[_pid] == 0);
		WOKEN()
	   }
	:: skip
	fi
}

active [NW] proctype waiter()
{
	byte s, err, r, w, old, sv, v;
	bit got;

again:	/* swait_event_generic: fast check, then a new frame (IDLE) */
	atomic {
		CONSUME(got);
		if
		:: got -> nfinished++; got = 0; goto gaveup	/* done */
		:: else -> departed[_pid] = 0; st[_pid] = IDLE
		fi
	};

prepare: /* swait_prepare */
	atomic {
		acquire();
		if
		:: QS(_pid) -> st[_pid] = QUEUED	/* keep place */
		:: else ->
			list_add_tail(_pid);
			st[_pid] = QUEUED;
#ifdef MUTANT_NO_BARRIER
			invis[_pid] = 1;
#endif
			skip
		fi;
		release()
	};

#if ASYM && !defined(MUTANT_ASYM_NO_MEMBARRIER)
	/* O1a: membarrier() drains every waker's store buffer. */
	d_step {
		t1 = 0;
		do
		:: t1 < NK -> tokens = tokens + sbuf[t1]; sbuf[t1] = 0; t1++
		:: else -> break
		od;
		t1 = 0
	};
#endif
	/* O1 fence (implicit), then if (cond) break */
	atomic {
		CONSUME(got);
		if :: got -> r = OK; goto finish :: else fi
	};

#if SPIN && !defined(MUTANT_SPIN_AFTER_ANNOUNCE)
	SPIN_POLL();
#endif
	/*
	 * swait_sleep -> sleep_announced: announce, CAS QUEUED -> sv, where
	 * sv is SLEEPING_V while futex_waitv is not known missing (W3).
	 */
#if WAITV == 0
	sv = SLEEPING;
#elif WAITV == 1
	sv = SLEEPING_V;
#else
	if :: sv = SLEEPING :: sv = SLEEPING_V fi;
#endif
	atomic {
		d_step {
			invis[_pid] = 0;	/* a RMW: drains the store buffer */
			if
			:: st[_pid] == QUEUED -> st[_pid] = sv; s = 0
			:: else -> s = st[_pid]
			fi
		};
		if
		:: s != 0 ->
			assert(s != IDLE);	/* "waiter was not prepared" */
			if
			:: !SLEEPS(s) -> s = 0; WOKEN()
			:: else -> sv = s; s = 0
			fi
		:: else
		fi
	};

#if SPIN && defined(MUTANT_SPIN_AFTER_ANNOUNCE)
	SPIN_POLL();
#endif
futexwait:
	if
	:: sv == SLEEPING -> goto futexwait1
	:: else
	fi;
	/* futex_waitv({&h->walks, v}, {&w->state, SLEEPING_V}) (W2) */
	v = walksv;			/* "v[0].val = __atomic_load_n(bcast" */
#if WAITV == 2
	if
	:: skip
	:: atomic {			/* ENOSYS: re-announce SLEEPING (W3) */
		if
		:: st[_pid] == SLEEPING_V -> st[_pid] = SLEEPING; sv = SLEEPING;
			goto futexwait1
		:: else -> WOKEN()
		fi
	   }
	fi;
#endif
#ifndef WAITV_STATE_FIRST
	atomic {	/* word 0: queue on the walks word, compare */
		if
		:: walksv == v -> onwalks[_pid] = 1; v = 0
		:: else -> v = 0; goto eagain
		fi
	};
	atomic {	/* word 1: queue on the own word, compare */
		if
		:: onwalks[_pid] == 0 -> goto returned	/* woken meanwhile */
		:: onwalks[_pid] == 1 && st[_pid] == SLEEPING_V ->
			infutex[_pid] = 1
		:: onwalks[_pid] == 1 && st[_pid] != SLEEPING_V ->
			onwalks[_pid] = 0; goto eagain
		fi
	};
#else
	atomic {
		if
		:: st[_pid] == SLEEPING_V -> infutex[_pid] = 1
		:: else -> goto eagain
		fi
	};
	atomic {
		if
		:: infutex[_pid] == 0 -> v = 0; goto returned
		:: infutex[_pid] == 1 && walksv == v ->
			onwalks[_pid] = 1; v = 0
		:: infutex[_pid] == 1 && walksv != v ->
			infutex[_pid] = 0; v = 0; goto eagain
		fi
	};
#endif
	goto returned;
eagain:	/* EAGAIN: "s = load_acquire(&w->state); if (s != sleeping)" */
	atomic {
		if
		:: st[_pid] != sv -> WOKEN()
		:: else -> goto futexwait
		fi
	};

futexwait1: /* FUTEX_WAIT(&w->state, SLEEPING): compare and block (kernel) */
#ifndef MUTANT_WAIT_NO_COMPARE
	atomic {
		if
		:: st[_pid] == SLEEPING -> infutex[_pid] = 1
		:: else -> WOKEN()	/* EAGAIN; the load sees != SLEEPING */
		fi
	};
#else
	s = st[_pid];			/* seen = load_relaxed(&w->state) */
	atomic {
		if
		:: st[_pid] == s -> infutex[_pid] = 1; s = 0
		:: else -> s = 0; WOKEN()	/* EAGAIN -> 0; word moved on */
		fi
	};
#endif
returned:
	/*
	 * FUTEX_WAIT (or futex_waitv) returns: woken by a FUTEX_WAKE of a
	 * word it is queued on, or ETIMEDOUT/EINTR, or spuriously.  The
	 * return and the load after it ("s = load_acquire(&w->state); if (s
	 * != sleeping) goto woken") are one step: in between, only a waker's
	 * exchange can touch the word, and it commutes with the return.
	 */
	atomic {
		if
		:: infutex[_pid] == 0 && onwalks[_pid] == 0 ->
			err = OK	/* FUTEX_WAKE */
		/* a woken (unqueued) futex_wait returns 0, not the timeout */
		:: infutex[_pid] == 1 && budget > 0 ->
			budget--; infutex[_pid] = 0; onwalks[_pid] = 0;
			err = ETIMEDOUT
		:: infutex[_pid] == 1 && spur > 0 ->
			spur--; infutex[_pid] = 0; onwalks[_pid] = 0; err = OK
		fi;
		if
		:: st[_pid] != sv -> err = OK; WOKEN()
		:: else
		fi;
		if
		:: err == ETIMEDOUT -> skip
		:: else -> goto futexwait	/* stale wake, ignored EINTR */
		fi
	};
	/* retract: CAS sv -> QUEUED; "return err" or "goto woken" */
	atomic {
		d_step {
			if
			:: st[_pid] == sv -> st[_pid] = QUEUED; s = 0
			:: else -> s = st[_pid]
			fi;
			err = OK
		};
		if
		:: s == 0 -> r = ETIMEDOUT; goto finish	/* and break */
		:: else -> s = 0; WOKEN()
		fi
	};

rewoken: /* "Woken, so dequeued: check before queueing again": if (cond) break */
	atomic {
		CONSUME(got);
		if
		:: got -> r = OK; goto finish
		:: else -> goto prepare
		fi
	};

finish:	/* swait_finish */
	atomic {
		s = st[_pid];		/* load_acquire */
		if
		:: s == QUEUED || SLEEPS(s) -> skip
		:: s == IDLE -> goto recheck
		:: else -> goto finwoken
		fi
	};
#ifdef MUTANT_FINISH_KEEPS_QUEUED
	s = 0;
	goto recheck;			/* leaves its frame on the list */
#endif
	atomic {
		acquire();
		s = st[_pid];		/* stable under the lock (I1) */
		if
		:: s == QUEUED || SLEEPS(s) ->
			list_del(_pid);
#ifndef MUTANT_DEQUEUE_KEEPS_STATE
			st[_pid] = IDLE;
#endif
			s = IDLE
		:: else
		fi;
		release();
		if :: s == IDLE -> goto recheck :: else fi
	};
finwoken:
	atomic {
		st[_pid] = IDLE;	/* consume the wake */
		if
		:: s == WOKEN_ONE -> s = 0	/* I6: pass it on */
		:: else -> s = 0; goto recheck
		fi
	};
#ifndef MUTANT_NO_PASS_ON
	wake_one();
#endif

recheck: /* if (swait_r_ != 0 && swait_final_recheck(cond)) swait_r_ = 0 */
	if
	:: r != OK ->
		d_step {		/* ghost: the window of property (a') opens */
			inw = inw | (1 << _pid);
			if
			:: tokens == 0 -> zs = zs | (1 << _pid)
			:: else -> zs = zs & ~(1 << _pid)
			fi
		};
#ifndef MUTANT_NO_FINAL_RECHECK
		atomic { CONSUME(got); if :: got -> r = OK :: else fi };
#endif
		skip
	:: else
	fi;

	/* swait_event_generic returns r; its frame (the waiter) is gone */
	atomic {
		d_step {
#if CHECK_I4
			assert(!ONLIST(_pid));		/* I4 */
#endif
			departed[_pid] = 1;
			if
			:: r != OK ->
				/* (a'): ETIMEDOUT only if cond was seen false */
				assert(zs & (1 << _pid));
				inw = inw & ~(1 << _pid);
				zs = zs & ~(1 << _pid)
			:: else -> assert(got)
			fi
		};
		if
		:: r != OK ->
			r = OK; got = 0;
#if RETRY
			goto again	/* the caller retries */
#else
			goto gaveup	/* the caller gives up */
#endif
		:: else
		fi;
out:
		assert(got); nfinished++; got = 0
	};
gaveup:
	skip
}

/* ---------------------------------------------------------------- waker */

/*
 * WAKES selects what each post is followed by: 0 either (spin tries both),
 * 1 waker 0 wake_one and the others wake_all, 2 all wake_one, 3 all
 * wake_all.
 */
#ifndef WAKES
#define WAKES 1
#endif

active [NK] proctype waker()
{
	byte w, old;
	bit last, all, bw;
	byte k = _pid - NW;
	byte n = POSTS(_pid - NW);

	do
	:: n > 0 ->
		/* the caller's store of cond; then the wake */
		if
		:: (WAKES == 0 || WAKES == 2 || (WAKES == 1 && k == 0)) ->
			d_step { STORE_COND; n--; all = 0 }
		:: (WAKES == 0 || WAKES == 3 || (WAKES == 1 && k != 0)) ->
			d_step { STORE_COND; n--; all = 1 }
		fi;
#if ASYM
		/*
		 * O1a: no fence, so the peek may run while the store is
		 * buffered; the buffer drains after it (x86: at the lock's
		 * locked instruction at the latest).
		 */
		if
		:: PEEK_EMPTY -> DRAIN(k)
		:: else ->
			DRAIN(k);
			if
			:: all -> all = 0; wake_all(k)
			:: else -> wake_one()
			fi
		fi;
		all = 0
#else
		if
		:: all -> all = 0; wake_all(k)
		:: else -> wake_one()
		fi
#endif
	:: else -> break
	od
}
