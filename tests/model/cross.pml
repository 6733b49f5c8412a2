/*
 * cross.pml - a Promela model of S6 (lib/defer.c): signal handlers on two
 * threads, each completing the completion whose head the other thread
 * keeps locking.  Checked exhaustively by tests/model/check.sh.
 *
 * Thread t (T0, T1) takes and releases its own head t LOOPS times.  Its
 * handler H(t) runs up to NSIG times, each time between two of thread t's
 * steps (thread t is frozen while it runs: intr[t]), and completes the
 * other head's completion.  A handler whose thread takes or holds a head
 * (depth > 0) posts to its thread's foreign list; the thread performs the
 * list when its depth returns to 0, looking again until the list stays
 * empty, because the performing calls' own holds let handlers post more.
 * A handler whose thread holds nothing takes the lock itself.
 *
 * Properties:
 *  (a) No deadlock: no state where every process is blocked before its
 *      end (spin's invalid end state).  Without S6 (MUTANT_CROSS_LOCK_
 *      FOREIGN: the handler takes the other head's lock whatever its
 *      thread holds) each handler waits for the other's thread.
 *  (b) Every complete a handler made is performed, exactly once, by the
 *      time both threads and both handlers are done: done[i] == posts[i]
 *      (MUTANT_CROSS_NO_RECHECK: the drain performs what it copied once
 *      and stops, stranding a post made during its own calls).
 *
 * MAP: Promela -> C
 *
 *  push/pop      held_push / held_pop (lib/headlock.c): depth
 *  lock[i]       the head lock of head i (lib/lock.h), blocking
 *  fpend[t]      swait_tls.foreign of thread t: completes for head 1-t
 *  drain         run_foreign (lib/defer.c): copy and empty, perform,
 *                look again
 *  H(t)'s post   swait_from_handler_slow -> post_foreign (lib/defer.c)
 */

#ifndef LOOPS
#define LOOPS 2		/* each thread's holds of its own head */
#endif
#ifndef NSIG
#define NSIG 2		/* runs of each thread's handler */
#endif

byte lock[2];		/* 0 free, else owner thread + 1 */
byte done[2];		/* completion i's count */
byte posts[2];		/* ghost: completes handlers made on head i */
byte depth[2];		/* thread t's held-heads stack */
byte fpend[2];		/* thread t's foreign list (head 1 - t) */
bit intr[2];		/* H(t) runs: thread t is frozen */
bit tdone[2];
bit hdone[2];

/* One complete of head i by thread t (or its handler), at depth 0. */
inline complete_locked(t, i)
{
	atomic { depth[t] = depth[t] + 1 };
	atomic { lock[i] == 0 -> lock[i] = t + 1 };
	done[i] = done[i] + 1;
	lock[i] = 0;
	atomic { depth[t] = depth[t] - 1 }
}

proctype T(byte t)
{
	byte n = 0, p;

	do
	:: n < LOOPS ->
		atomic { !intr[t] -> depth[t] = depth[t] + 1 };
		atomic { !intr[t] && lock[t] == 0 -> lock[t] = t + 1 };
		atomic { !intr[t] -> lock[t] = 0 };
		atomic { !intr[t] -> depth[t] = depth[t] - 1 };
		/* depth 0: drain the foreign list (S6) */
		do
		:: atomic { !intr[t] && fpend[t] > 0 ->
			p = fpend[t]; fpend[t] = 0 };
			do
			:: p > 0 ->
				atomic { !intr[t] -> depth[t] = depth[t] + 1 };
				atomic { !intr[t] && lock[1 - t] == 0 ->
					lock[1 - t] = t + 1 };
				atomic { !intr[t] ->
					done[1 - t] = done[1 - t] + 1 };
				atomic { !intr[t] -> lock[1 - t] = 0 };
				atomic { !intr[t] -> depth[t] = depth[t] - 1 };
				p = p - 1
			:: else -> break
			od;
#ifdef MUTANT_CROSS_NO_RECHECK
			break
#endif
		:: atomic { !intr[t] && fpend[t] == 0 -> skip };
			break
		od;
		n = n + 1
	:: else -> break
	od;
	atomic { !intr[t] -> tdone[t] = 1 }
}

proctype H(byte t)
{
	byte k = 0;

	do
	:: atomic { k < NSIG && !intr[t] && !tdone[t] -> intr[t] = 1 };
		if
		:: depth[t] > 0 ->
#ifndef MUTANT_CROSS_LOCK_FOREIGN
			atomic { fpend[t] = fpend[t] + 1;
				 posts[1 - t] = posts[1 - t] + 1 }
#else
			posts[1 - t] = posts[1 - t] + 1;
			atomic { lock[1 - t] == 0 -> lock[1 - t] = t + 1 };
			done[1 - t] = done[1 - t] + 1;
			lock[1 - t] = 0
#endif
		:: else ->
			posts[1 - t] = posts[1 - t] + 1;
			complete_locked(t, 1 - t)
		fi;
		intr[t] = 0;
		k = k + 1
	:: atomic { (tdone[t] || k >= NSIG) -> break }
	od;
	hdone[t] = 1
}

init
{
	atomic {
		run T(0); run T(1);
		run H(0); run H(1)
	};
	(tdone[0] && tdone[1] && hdone[0] && hdone[1]);
	/* (b) */
	assert(done[0] == posts[0] && done[1] == posts[1])
}
