// SPDX-License-Identifier: MIT
/*
 * preload.c - libswait-preload.so: a program's pthread_cond_* calls on
 * libswait's condvar face (<swait/cond.h>), without rebuilding it.
 *
 * Which calls.  A program binds versioned names: pthread_cond_wait@
 * GLIBC_2.3.2 on x86-64 (preload/meson.build lists each CPU's), clockwait
 * @GLIBC_2.30 and @GLIBC_2.34.  ld.so matches a versioned reference by the
 * version's name only, and the preload comes first in the search order, so
 * defining the same names with the same versions takes every reference:
 * the program's, its libraries' and libstdc++'s (std::condition_variable
 * starts from all-zero bytes, never calls pthread_cond_init, and binds
 * clockwait for steady_clock waits).  Unversioned references bind to the
 * default version, which is ours too.  glibc's own internal waits do not go
 * through these names and stay glibc's.
 *
 * Which ABIs.  x86-64 and arm64; and i386 and armhf, whose own time_t is
 * 32 bits.  There glibc has two entries for each timed wait, and the
 * preload defines both: pthread_cond_timedwait@GLIBC_2.3.2 (armhf:
 * @GLIBC_2.4) and pthread_cond_clockwait@GLIBC_2.30/2.34 take a struct
 * timespec of two 32-bit fields (programs built with the default time_t),
 * which the preload widens for the face without changing a value;
 * __pthread_cond_timedwait64 and __pthread_cond_clockwait64@GLIBC_2.34 take
 * the 64-bit one (programs built with _TIME_BITS=64, as the face is).
 * Each counts as a wait.
 *
 * Not taken: i386's pthread_cond_*@GLIBC_2.0, bound by programs linked
 * against glibc 2.0-2.3.1.  Their pthread_cond_t was LinuxThreads' 12
 * bytes, and a swait_cond_t needs 48, so the face cannot live in that
 * storage; the preload defines no GLIBC_2.0 version of these names, and
 * such references bind to glibc.  glibc keeps only a pointer there, to a
 * 48-byte condvar it allocates, and jumps to its own current functions
 * directly, not through these names, so that condvar is glibc's throughout
 * and the two implementations never meet on one object.  x86-64's
 * pthread_cond_*@GLIBC_2.2.5 (before 2.3.2) are the same kind of entry
 * and stay glibc's the same way.  armhf has no such versions (its port
 * begins at GLIBC_2.4).
 *
 * Whose condvar.  A swait_cond_t fits a pthread_cond_t's storage (size and
 * alignment, checked in lib/cond.c), and all-zero bytes are a valid one, as
 * they are a valid glibc condvar: static initialisers and std::condition_
 * variable need nothing.  What the face cannot honour goes to glibc:
 * process-shared condvars (the waiters' futex words are private, in their
 * own stacks).  That decision is made at init and kept in the condvar's own
 * bytes, not in a table: a child process may map a process-shared condvar
 * at another address without ever initialising it.  glibc marks one by bit
 * 0 of __wrefs; the face keeps those bytes zero (they are its reserved
 * words), so each call tests that bit and either side sees only its own
 * layout.
 *
 * Statistics.  With SWAIT_PRELOAD_STATS=1 (swait-run --stats) the process
 * prints one line to stderr as it exits:
 *   swait-preload: pid P: W waits, S signals, B broadcasts, F fallback
 * W, S and B count the calls that ran on libswait, F the condvars handed to
 * glibc at init.  A forked child starts from zero (an atfork handler) and
 * prints its own line; exit() prints from a destructor, and _exit() and
 * _Exit() are interposed too, since processes that leave by them (a shell's
 * exit builtin) run no destructor.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "swait/cond.h"

#define EXPORT __attribute__((visibility("default")))

static uint64_t n_waits, n_signals, n_broadcasts, n_fallback;
static bool stats_on;
static pid_t owner;	/* the process the counters belong to */

static void count(uint64_t *n)
{
	/* Relaxed: a statistic; the exit report follows every join. */
	__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
}

static bool is_glibc(pthread_cond_t *c)
{
	/*
	 * Atomic: glibc's waiters add to __wrefs concurrently; bit 0 (the
	 * process-shared flag) is written only by init.
	 */
	return __atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 1;
}

static swait_cond_t *face(pthread_cond_t *c)
{
	return (swait_cond_t *)(void *)c;
}

/*
 * glibc's own functions, for the condvars handed to it.  Looked up when
 * first needed (only process-shared condvars need them); two threads that
 * race store the same pointer.  Kept as a generic function pointer (ISO C
 * converts between function pointer types, not from void *).
 */
typedef void (*fn_t)(void);
static fn_t r_init, r_destroy, r_wait, r_timedwait, r_clockwait, r_signal,
	    r_broadcast;

static fn_t real(fn_t *slot, const char *name, const char *version,
		 const char *older)
{
	fn_t f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	void *p;

	if (!f) {
		p = dlvsym(RTLD_NEXT, name, version);
		if (!p && older)	/* a glibc before the version */
			p = dlvsym(RTLD_NEXT, name, older);
		if (!p) {
			static const char msg[] = "swait-preload: glibc's "
				"pthread_cond functions not found\n";
			(void)!write(2, msg, sizeof(msg) - 1);
			abort();
		}
		memcpy(&f, &p, sizeof(f));	/* POSIX: dlsym's promise */
		__atomic_store_n(slot, f, __ATOMIC_RELEASE);
	}
	return f;
}

#define REAL(slot, name, version, type) \
	((type)real(&(slot), name, version, NULL))

#define V SWAIT_PRELOAD_COND_VERSION

EXPORT int pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	int err = swait_cond_init(face(c), a);

	if (err != ENOTSUP)
		return err;
	count(&n_fallback);
	return REAL(r_init, "pthread_cond_init", V,
		    int (*)(pthread_cond_t *, const pthread_condattr_t *))(c, a);
}

EXPORT int pthread_cond_destroy(pthread_cond_t *c)
{
	if (is_glibc(c))
		return REAL(r_destroy, "pthread_cond_destroy", V,
			    int (*)(pthread_cond_t *))(c);
	return swait_cond_destroy(face(c));
}

EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (is_glibc(c))
		return REAL(r_wait, "pthread_cond_wait", V,
			    int (*)(pthread_cond_t *, pthread_mutex_t *))(c, m);
	count(&n_waits);
	return swait_cond_wait(face(c), m);
}

/* ------------------------------------------------------------ timed waits */

/*
 * The deadline in the ABI's own struct timespec: what pthread_cond_
 * timedwait@V and pthread_cond_clockwait@GLIBC_2.30/2.34 take.  On LP64
 * that is the preload's own struct timespec.  On i386 and armhf it is two
 * 32-bit fields: glibc keeps those names for programs built with the
 * default 32-bit time_t, and gives programs built with _TIME_BITS=64 (the
 * face and the preload among them) entries of their own, below.  A struct
 * of its own on either side, so that one body serves both.
 */
#if SWAIT_PRELOAD_TIME32
struct abi_timespec {
	int32_t tv_sec;
	int32_t tv_nsec;
};

_Static_assert(sizeof(time_t) == 8 && sizeof(struct abi_timespec) == 8,
	       "a 32-bit ABI: the face's time_t is 64 bits, the ABI's 32");

/*
 * The face's deadline for a 32-bit one.  Both fields keep their values
 * (tv_sec sign-extended: a time before 1970 is still in the past), so the
 * face's checks are glibc's: a tv_nsec outside [0, 1e9) is EINVAL, checked
 * before the mutex is released, as glibc's 32-bit entries return it (they
 * widen the same way, then call the 64-bit ones, which check first).
 * NULL stays NULL: EINVAL from the face, where glibc would fault.
 */
static const struct timespec *deadline(const struct abi_timespec *t,
				       struct timespec *wide)
{
	if (!t)
		return NULL;
	/* Zeroed first: the 64-bit struct has a padding word beside tv_nsec
	 * that no stale stack byte should fill. */
	memset(wide, 0, sizeof(*wide));
	wide->tv_sec = t->tv_sec;
	wide->tv_nsec = t->tv_nsec;
	return wide;
}
#else
struct abi_timespec {
	struct timespec ts;
};

static const struct timespec *deadline(const struct abi_timespec *t,
				       struct timespec *wide)
{
	(void)wide;
	return t ? &t->ts : NULL;
}
#endif

typedef int timedwait_fn(pthread_cond_t *, pthread_mutex_t *,
			 const struct abi_timespec *);
typedef int clockwait_fn(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			 const struct abi_timespec *);

/*
 * Named by .symver, not in C: with _TIME_BITS=64 on a 32-bit ABI,
 * <pthread.h> renames a definition of pthread_cond_timedwait to glibc's
 * 64-bit entry.
 */
EXPORT int swait_preload_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				   const struct abi_timespec *t);
__asm__(".symver swait_preload_timedwait,pthread_cond_timedwait@@" V);

EXPORT int swait_preload_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
				   const struct abi_timespec *t)
{
	struct timespec wide;

	if (is_glibc(c))
		return REAL(r_timedwait, "pthread_cond_timedwait", V,
			    timedwait_fn *)(c, m, t);
	count(&n_waits);
	return swait_cond_timedwait(face(c), m, deadline(t, &wide));
}

static int clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
		     const struct abi_timespec *t)
{
	struct timespec wide;

	if (is_glibc(c))
		/* glibc 2.30-2.33 have only the first version. */
		return ((clockwait_fn *)real(&r_clockwait,
					     "pthread_cond_clockwait",
					     "GLIBC_2.34", "GLIBC_2.30"))
			(c, m, clock, t);
	count(&n_waits);
	return swait_cond_clockwait(face(c), m, clock, deadline(t, &wide));
}

/* Both versions programs bind: GLIBC_2.30 (built on 2.30-2.33), 2.34. */
EXPORT int swait_preload_clockwait_230(pthread_cond_t *c, pthread_mutex_t *m,
				       clockid_t clock,
				       const struct abi_timespec *t);
EXPORT int swait_preload_clockwait_234(pthread_cond_t *c, pthread_mutex_t *m,
				       clockid_t clock,
				       const struct abi_timespec *t);
__asm__(".symver swait_preload_clockwait_230,pthread_cond_clockwait@GLIBC_2.30");
__asm__(".symver swait_preload_clockwait_234,pthread_cond_clockwait@@GLIBC_2.34");

EXPORT int swait_preload_clockwait_230(pthread_cond_t *c, pthread_mutex_t *m,
				       clockid_t clock,
				       const struct abi_timespec *t)
{
	return clockwait(c, m, clock, t);
}

EXPORT int swait_preload_clockwait_234(pthread_cond_t *c, pthread_mutex_t *m,
				       clockid_t clock,
				       const struct abi_timespec *t)
{
	return clockwait(c, m, clock, t);
}

#if SWAIT_PRELOAD_TIME32
/*
 * The entries of programs built with _TIME_BITS=64 on i386 and armhf:
 * glibc 2.34's <pthread.h> redirects their pthread_cond_timedwait and
 * pthread_cond_clockwait here.  Their struct timespec is the face's, so
 * the deadline passes through as it is.
 */
typedef int timedwait64_fn(pthread_cond_t *, pthread_mutex_t *,
			   const struct timespec *);
typedef int clockwait64_fn(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			   const struct timespec *);
static fn_t r_timedwait64, r_clockwait64;

EXPORT int swait_preload_timedwait64(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *t);
EXPORT int swait_preload_clockwait64(pthread_cond_t *c, pthread_mutex_t *m,
				     clockid_t clock, const struct timespec *t);
__asm__(".symver swait_preload_timedwait64,__pthread_cond_timedwait64@@GLIBC_2.34");
__asm__(".symver swait_preload_clockwait64,__pthread_cond_clockwait64@@GLIBC_2.34");

EXPORT int swait_preload_timedwait64(pthread_cond_t *c, pthread_mutex_t *m,
				     const struct timespec *t)
{
	if (is_glibc(c))
		return REAL(r_timedwait64, "__pthread_cond_timedwait64",
			    "GLIBC_2.34", timedwait64_fn *)(c, m, t);
	count(&n_waits);
	return swait_cond_timedwait(face(c), m, t);
}

EXPORT int swait_preload_clockwait64(pthread_cond_t *c, pthread_mutex_t *m,
				     clockid_t clock, const struct timespec *t)
{
	if (is_glibc(c))
		return REAL(r_clockwait64, "__pthread_cond_clockwait64",
			    "GLIBC_2.34", clockwait64_fn *)(c, m, clock, t);
	count(&n_waits);
	return swait_cond_clockwait(face(c), m, clock, t);
}
#endif

/* ------------------------------------------------------------ wakes */

EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	if (is_glibc(c))
		return REAL(r_signal, "pthread_cond_signal", V,
			    int (*)(pthread_cond_t *))(c);
	count(&n_signals);
	return swait_cond_signal(face(c));
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	if (is_glibc(c))
		return REAL(r_broadcast, "pthread_cond_broadcast", V,
			    int (*)(pthread_cond_t *))(c);
	count(&n_broadcasts);
	return swait_cond_broadcast(face(c));
}

/* ------------------------------------------------------------ statistics */

static void report(void)
{
	char line[160];
	int n;

	/*
	 * A vfork() child shares our memory and may leave by _exit(): its pid
	 * differs (glibc's getpid() is the system call), and it prints nothing.
	 */
	if (!stats_on || getpid() != owner)
		return;
	n = snprintf(line, sizeof(line), "swait-preload: pid %ld: %llu waits, "
		     "%llu signals, %llu broadcasts, %llu fallback\n",
		     (long)getpid(),
		     (unsigned long long)__atomic_load_n(&n_waits,
							 __ATOMIC_RELAXED),
		     (unsigned long long)__atomic_load_n(&n_signals,
							 __ATOMIC_RELAXED),
		     (unsigned long long)__atomic_load_n(&n_broadcasts,
							 __ATOMIC_RELAXED),
		     (unsigned long long)__atomic_load_n(&n_fallback,
							 __ATOMIC_RELAXED));
	/* Printed once per process: the destructor and _exit both call it. */
	stats_on = false;
	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n
							       : sizeof(line));
}

static void child_after_fork(void)
{
	n_waits = n_signals = n_broadcasts = n_fallback = 0;
	owner = getpid();
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *s = getenv("SWAIT_PRELOAD_STATS");

	stats_on = s && s[0] && strcmp(s, "0") != 0;
	owner = getpid();
	if (stats_on)
		(void)pthread_atfork(NULL, NULL, child_after_fork);
}

__attribute__((destructor)) static void preload_fini(void)
{
	report();
}

EXPORT void _exit(int status)
{
	report();
	syscall(SYS_exit_group, status);
	for (;;)
		syscall(SYS_exit, status);
}

EXPORT void _Exit(int status)
{
	_exit(status);
}
