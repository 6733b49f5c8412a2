// SPDX-License-Identifier: MIT
/*
 * ath6kl_fwlog_read.c - drivers/net/wireless/ath/ath6kl/debug.c as of
 * v5.10, reduced: ath6kl_fwlog_block_read() (a blocking log read: with
 * nothing queued, init_completion, wait_for_completion_interruptible,
 * return -ERESTARTSYS as is, else read again) and ath6kl_debug_fwlog_
 * event()'s complete().  The skb queue is a counter under a mutex.
 */
#include "kstub.h"
#include "harness.h"

struct ath6kl {
	spinlock_t lock;	/* fwlog_queue.lock */
	int queued;		/* bytes in the fwlog queue */
	struct completion fwlog_completion;
};

/* ------------------------------------------------- the kernel's code */

static long ath6kl_fwlog_block_read(struct ath6kl *ar, size_t count)
{
	size_t len = 0;
	int ret;

again:
	spin_lock(&ar->lock);

	while (ar->queued > 0 && len < count) {
		ar->queued--;
		len++;
	}

	/* we want to block only if there's no data available */
	if (len == 0) {
		init_completion(&ar->fwlog_completion);

		spin_unlock(&ar->lock);

		ret = wait_for_completion_interruptible(
			&ar->fwlog_completion);
		if (ret == -ERESTARTSYS)
			return ret;

		goto again;
	}

	spin_unlock(&ar->lock);

	return (long)len;
}

static void ath6kl_debug_fwlog_event(struct ath6kl *ar, int len)
{
	spin_lock(&ar->lock);
	ar->queued += len;
	spin_unlock(&ar->lock);

	complete(&ar->fwlog_completion);
}

/* ------------------------------------------------------------ the test */

static struct ath6kl ar;

static void *firmware(void *arg)
{
	h_sleep_ms(10);
	ath6kl_debug_fwlog_event(&ar, (int)(intptr_t)arg);
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)ath6kl_fwlog_block_read(&ar, 100);
}

int main(void)
{
	pthread_t t;

	h_watchdog(30);
	h_handler(1);	/* a daemon's signal(SIGTERM, ...): SA_RESTART */
	spin_lock_init(&ar.lock);
	init_completion(&ar.fwlog_completion);

	h_start(firmware, (void *)(intptr_t)7);
	CHECK(ath6kl_fwlog_block_read(&ar, 100) == 7);

	/* Nothing logged: the read gives up on a signal, once. */
	h_handled = 0;
	t = h_start(reader, NULL);
	while (!swait_active(&ar.fwlog_completion.wait))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	CHECK((intptr_t)h_join(t) == -ERESTARTSYS && h_handled == 1);

	/* The next read blocks again, and gets the next event. */
	h_start(firmware, (void *)(intptr_t)3);
	CHECK(ath6kl_fwlog_block_read(&ar, 100) == 3);
	return 0;
}
