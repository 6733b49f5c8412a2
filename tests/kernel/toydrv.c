// SPDX-License-Identifier: MIT
/*
 * toydrv.c - kernel-style code, compiled unchanged against <swait/kernel.h>.
 *
 * Nothing below calls libswait by its own names: this is how the logic of
 * a small driver reads in the kernel (swait queues for the threads' sleeps,
 * an on-stack completion per request, a millisecond timeout on it), with
 * kshim.h standing in for <linux/spinlock.h> and <linux/compiler.h>.
 */
#include "toydrv.h"

void toy_dev_init(struct toy_dev *dev, unsigned long io_timeout_ms)
{
	spin_lock_init(&dev->lock);
	dev->hw_head = NULL;
	dev->hw_tail = &dev->hw_head;
	init_swait_queue_head(&dev->hw_wq);
	dev->jobs = 0;
	init_swait_queue_head(&dev->work_wq);
	init_completion(&dev->job_done);
	dev->stop_workers = false;
	dev->stop_irq = false;
	dev->io_timeout_ms = io_timeout_ms;
	dev->next_op = 0;
	dev->sum = 0;
	dev->errors = 0;
	dev->last_error = 0;
}

/* Queue n work items; one wake per item, as the exclusive waits expect. */
void toy_queue_work(struct toy_dev *dev, unsigned int n)
{
	while (n--) {
		spin_lock(&dev->lock);
		WRITE_ONCE(dev->jobs, dev->jobs + 1);
		spin_unlock(&dev->lock);
		swake_up_one(&dev->work_wq);
	}
}

static void toy_hw_submit(struct toy_dev *dev, struct toy_request *req)
{
	req->next = NULL;
	spin_lock(&dev->lock);
	if (dev->hw_tail == &dev->hw_head)
		WRITE_ONCE(dev->hw_head, req);	/* read by the irq's cond */
	else
		*dev->hw_tail = req;
	dev->hw_tail = &req->next;
	spin_unlock(&dev->lock);
	swake_up_one(&dev->hw_wq);
}

/* Take req back from the hardware queue; false if the irq already has it. */
static bool toy_hw_cancel(struct toy_dev *dev, struct toy_request *req)
{
	struct toy_request **p;
	bool found = false;

	spin_lock(&dev->lock);
	for (p = &dev->hw_head; *p; p = &(*p)->next) {
		if (*p == req) {
			WRITE_ONCE(*p, req->next);
			if (dev->hw_tail == &req->next)
				dev->hw_tail = p;
			found = true;
			break;
		}
	}
	spin_unlock(&dev->lock);
	return found;
}

static int toy_do_io(struct toy_dev *dev, int op, int *result)
{
	struct toy_request req;
	unsigned long left;

	init_completion(&req.done);
	req.op = op;
	req.result = 0;
	toy_hw_submit(dev, &req);

	left = wait_for_completion_timeout(&req.done, dev->io_timeout_ms);
	if (!left) {
		/* Hung hardware: take the request back before it goes away. */
		if (toy_hw_cancel(dev, &req))
			return -ETIMEDOUT;
		/* The irq thread holds it: it will complete, wait for that. */
		wait_for_completion(&req.done);
	}
	*result = req.result;
	return 0;
}

static bool toy_take_job(struct toy_dev *dev, int *op)
{
	bool got = false;

	spin_lock(&dev->lock);
	if (dev->jobs) {
		WRITE_ONCE(dev->jobs, dev->jobs - 1);
		*op = ++dev->next_op;
		got = true;
	}
	spin_unlock(&dev->lock);
	return got;
}

/* The kthread: 0 when stopped with no work left, -ERESTARTSYS on a signal. */
int toy_worker(struct toy_dev *dev)
{
	int op, result, ret;

	for (;;) {
		ret = swait_event_interruptible_exclusive(dev->work_wq,
				READ_ONCE(dev->jobs) ||
				READ_ONCE(dev->stop_workers));
		if (ret == -ERESTARTSYS)
			return ret;
		if (!toy_take_job(dev, &op)) {
			if (READ_ONCE(dev->stop_workers))
				return 0;
			continue;
		}
		ret = toy_do_io(dev, op, &result);
		spin_lock(&dev->lock);
		if (ret) {
			dev->errors++;
			dev->last_error = ret;
		} else {
			dev->sum += result;
		}
		spin_unlock(&dev->lock);
		complete(&dev->job_done);
	}
}

static struct toy_request *toy_hw_fetch(struct toy_dev *dev)
{
	struct toy_request *req;

	spin_lock(&dev->lock);
	req = dev->hw_head;
	if (req) {
		WRITE_ONCE(dev->hw_head, req->next);
		if (!req->next)
			dev->hw_tail = &dev->hw_head;
	}
	spin_unlock(&dev->lock);
	return req;
}

/* The "interrupt": serve requests in order until stopped and drained. */
int toy_irq_thread(struct toy_dev *dev)
{
	struct toy_request *req;
	int ret;

	for (;;) {
		ret = swait_event_interruptible_exclusive(dev->hw_wq,
				READ_ONCE(dev->hw_head) ||
				READ_ONCE(dev->stop_irq));
		if (ret)
			return ret;
		req = toy_hw_fetch(dev);
		if (!req) {
			if (READ_ONCE(dev->stop_irq))
				return 0;
			continue;
		}
		req->result = 2 * req->op;
		/* Last access to req: the worker may return at once. */
		complete(&req->done);
	}
}

void toy_stop_workers(struct toy_dev *dev)
{
	WRITE_ONCE(dev->stop_workers, true);
	swake_up_all(&dev->work_wq);
}

void toy_stop_irq(struct toy_dev *dev)
{
	WRITE_ONCE(dev->stop_irq, true);
	swake_up_all(&dev->hw_wq);
}

bool toy_worker_sleeping(struct toy_dev *dev)
{
	return swq_has_sleeper(&dev->work_wq);
}
