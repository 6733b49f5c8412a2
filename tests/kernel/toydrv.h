/* SPDX-License-Identifier: MIT */
/*
 * toydrv.h - a toy device driver written as kernel code (toydrv.c) and
 * driven by threads in test_kernel.c.
 *
 * Work items are queued for worker threads ("kthreads"); a worker turns
 * each into an I/O request on its own stack, submits it to the "hardware"
 * and waits for the "interrupt" thread to complete it, with a timeout.
 */
#ifndef TOYDRV_H
#define TOYDRV_H

#include <stdbool.h>

#include <swait/kernel.h>

#include "kshim.h"

struct toy_request {
	int op;
	int result;
	struct completion done;
	struct toy_request *next;
};

struct toy_dev {
	spinlock_t lock;
	/* Requests submitted to the hardware, FIFO.  Under lock. */
	struct toy_request *hw_head;
	struct toy_request **hw_tail;
	struct swait_queue_head hw_wq;	/* the irq thread waits here */
	/* Work items not yet taken by a worker.  Under lock. */
	unsigned int jobs;
	struct swait_queue_head work_wq;	/* workers wait here */
	struct completion job_done;	/* one event per finished work item */
	bool stop_workers;
	bool stop_irq;
	unsigned long io_timeout_ms;
	/* Results.  Under lock. */
	int next_op;
	long sum;
	int errors;
	int last_error;
};

void toy_dev_init(struct toy_dev *dev, unsigned long io_timeout_ms);
void toy_queue_work(struct toy_dev *dev, unsigned int n);
int toy_worker(struct toy_dev *dev);
int toy_irq_thread(struct toy_dev *dev);
void toy_stop_workers(struct toy_dev *dev);
void toy_stop_irq(struct toy_dev *dev);
bool toy_worker_sleeping(struct toy_dev *dev);

#endif
