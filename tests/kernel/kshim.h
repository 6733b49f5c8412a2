/* SPDX-License-Identifier: MIT */
/*
 * kshim.h - the few kernel primitives toydrv.c uses besides swait and
 * completions, as a port would bring them along: spinlocks (a mutex here)
 * and READ_ONCE/WRITE_ONCE (relaxed atomics, since the event conditions
 * read fields locklessly that their writers store under the lock).
 */
#ifndef TOY_KSHIM_H
#define TOY_KSHIM_H

#include <pthread.h>

typedef pthread_mutex_t spinlock_t;

static inline void spin_lock_init(spinlock_t *lock)
{
	pthread_mutex_init(lock, NULL);
}

static inline void spin_lock(spinlock_t *lock)
{
	pthread_mutex_lock(lock);
}

static inline void spin_unlock(spinlock_t *lock)
{
	pthread_mutex_unlock(lock);
}

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#endif
