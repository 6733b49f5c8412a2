// SPDX-License-Identifier: MIT
/*
 * mutex-args.c - the mutex macros' argument checks, compiled (never run)
 * by compile-fail.sh as C and as C++.  SWAIT_CASE picks the code:
 *
 *   0  the control: every mutex macro with head, cond, mutex in order,
 *      with the argument shapes users write (a bit-field cond, a const
 *      pointer, an array of mutexes).  Must compile with -Werror.
 *   1  swait_event_mutex(&h, &m, cond): pthread_cond_wait()'s (cv, m)
 *      order carried over.  Must fail, naming the check.
 *   2  the same swap in an expression form.
 *   3  a void * where the mutex belongs.
 *
 * The failing cases are compiled without -Werror: the point is that they
 * are errors, not warnings.
 */
#define _POSIX_C_SOURCE 200809L
#include <swait.h>

#ifndef SWAIT_CASE
#define SWAIT_CASE 0
#endif

struct state {
	unsigned ready : 1;
	int n;
};

static struct swait_head h = SWAIT_HEAD_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct state st;
#if SWAIT_CASE == 0
static pthread_mutex_t locks[2] = { PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER };
#endif

int wait_for_state(void);

int wait_for_state(void)
{
	pthread_mutex_t *const mp = &m;
	int r = 0;

	pthread_mutex_lock(&m);
#if SWAIT_CASE == 0
	swait_event_mutex(&h, st.ready, &m);
	r |= swait_event_mutex_timeout(&h, st.n > 0, mp, CLOCK_MONOTONIC,
				       NULL);
	r |= swait_event_mutex_interruptible(&h, st.n > 1, &m);
	r |= swait_event_mutex_interruptible_timeout(&h, st.n > 2, &m,
						     CLOCK_REALTIME, NULL);
	r |= swait_event_mutex_generic(&h, st.n > 3, &m, 0, CLOCK_MONOTONIC,
				       NULL);
	pthread_mutex_unlock(&m);
	pthread_mutex_lock(locks);
	r |= swait_event_mutex_timeout(&h, st.n > 4, locks, CLOCK_MONOTONIC,
				       NULL);
	pthread_mutex_unlock(locks);
	pthread_mutex_lock(&m);
#elif SWAIT_CASE == 1
	swait_event_mutex(&h, &m, st.n > 0);
#elif SWAIT_CASE == 2
	r = swait_event_mutex_timeout(&h, mp, st.ready, CLOCK_MONOTONIC,
				      NULL);
#elif SWAIT_CASE == 3
	r = swait_event_mutex_interruptible(&h, st.n > 0, (void *)&m);
#else
#error "unknown SWAIT_CASE"
#endif
	(void)mp;
	pthread_mutex_unlock(&m);
	return r;
}
