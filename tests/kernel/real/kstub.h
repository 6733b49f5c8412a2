/* SPDX-License-Identifier: MIT */
/*
 * kstub.h - kernel names the reduced functions use that have nothing to
 * do with swait or completions: annotations, ONCE accessors, printk,
 * spinlock_t (a mutex), allocation.  Everything about waiting comes from
 * <swait/kernel.h> alone.
 */
#ifndef REAL_KSTUB_H
#define REAL_KSTUB_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <swait/kernel.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define __sched
#define __init
#define EXPORT_SYMBOL(sym) extern int swait_real_unused_
#define EXPORT_SYMBOL_GPL(sym) extern int swait_real_unused_
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define WARN_ON(c) __extension__ ({ bool warn_ = !!(c); warn_; })
#define WARN_ON_ONCE(c) WARN_ON(c)
#define pr_err(...) fprintf(stderr, __VA_ARGS__)
#define pr_warn(...) fprintf(stderr, __VA_ARGS__)
#define pr_info(...) ((void)0)
#define dev_err(dev, ...) ((void)(dev), fprintf(stderr, __VA_ARGS__))
#define dev_dbg(dev, ...) ((void)(dev))
#define GFP_KERNEL 0
#define GFP_NOIO 0
#define kmalloc(n, gfp) malloc(n)
#define kfree(p) free(p)
#define ERR_PTR(e) ((void *)(intptr_t)(e))
#define PTR_ERR(p) ((long)(intptr_t)(p))
#define IS_ERR(p) ((uintptr_t)(p) >= (uintptr_t)-4095)

typedef pthread_mutex_t spinlock_t;
#define DEFINE_SPINLOCK(name) spinlock_t name = PTHREAD_MUTEX_INITIALIZER
#define spin_lock_init(l) pthread_mutex_init(l, NULL)
#define spin_lock(l) pthread_mutex_lock(l)
#define spin_unlock(l) pthread_mutex_unlock(l)
#define spin_lock_irqsave(l, f) ((f) = 0, pthread_mutex_lock(l))
#define spin_unlock_irqrestore(l, f) ((void)(f), pthread_mutex_unlock(l))

#endif
