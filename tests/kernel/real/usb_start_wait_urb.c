// SPDX-License-Identifier: MIT
/*
 * usb_start_wait_urb.c - drivers/usb/core/message.c as of v5.10, reduced:
 * usb_start_wait_urb() (init_completion, submit, wait_for_completion_
 * timeout with msecs_to_jiffies or MAX_SCHEDULE_TIMEOUT, usb_kill_urb()
 * and -ETIMEDOUT on 0) and usb_api_blocking_completion().  The host
 * controller is a thread; usb_kill_urb() gives back -ENOENT.
 */
#include "kstub.h"
#include "harness.h"

struct urb;
typedef void (*usb_complete_t)(struct urb *);

struct urb {
	void *context;
	int status;
	unsigned int actual_length;
	int answer_ms;		/* the stub controller: -1 never */
	usb_complete_t complete;
};

struct api_context {
	struct completion done;
	int status;
};

static void *hcd(void *arg)
{
	struct urb *urb = arg;

	h_sleep_ms(urb->answer_ms);
	urb->actual_length = 8;
	urb->status = 0;
	urb->complete(urb);
	return NULL;
}

static int usb_submit_urb(struct urb *urb, int mem_flags)
{
	(void)mem_flags;
	if (urb->answer_ms >= 0)
		pthread_detach(h_start(hcd, urb));
	return 0;
}

static void usb_kill_urb(struct urb *urb)
{
	urb->status = -ENOENT;
	urb->complete(urb);
}

#define usb_free_urb(urb) ((void)(urb))
#define usb_urb_dir_in(urb) 1
#define dev_dbg(dev, ...) ((void)(dev))

/* ------------------------------------------------- the kernel's code */

static void usb_api_blocking_completion(struct urb *urb)
{
	struct api_context *ctx = urb->context;

	ctx->status = urb->status;
	complete(&ctx->done);
}

static int usb_start_wait_urb(struct urb *urb, int timeout, int *actual_length)
{
	struct api_context ctx;
	unsigned long expire;
	int retval;

	init_completion(&ctx.done);
	urb->context = &ctx;
	urb->actual_length = 0;
	retval = usb_submit_urb(urb, GFP_NOIO);
	if (unlikely(retval))
		goto out;

	expire = timeout ? msecs_to_jiffies(timeout) : MAX_SCHEDULE_TIMEOUT;
	if (!wait_for_completion_timeout(&ctx.done, expire)) {
		usb_kill_urb(urb);
		retval = (ctx.status == -ENOENT ? -ETIMEDOUT : ctx.status);

		dev_dbg(urb, "%s timed out on ep%d%s len=%u/%u\n",
			"current->comm", 0, usb_urb_dir_in(urb) ? "in" : "out",
			urb->actual_length, 8);
	} else
		retval = ctx.status;
out:
	if (actual_length)
		*actual_length = urb->actual_length;

	usb_free_urb(urb);
	return retval;
}

/* ------------------------------------------------------------ the test */

int main(void)
{
	struct urb urb = { NULL, 0, 0, 5, usb_api_blocking_completion };
	long long t0;
	int len = -1;

	h_watchdog(30);
	/* 10 s: never reached, however late the answering thread runs. */
	CHECK(usb_start_wait_urb(&urb, 10000, &len) == 0 && len == 8);
	len = -1;
	CHECK(usb_start_wait_urb(&urb, 0, &len) == 0 && len == 8);

	urb.answer_ms = -1;	/* a device that never answers */
	t0 = h_now_ms();
	CHECK(usb_start_wait_urb(&urb, 40, &len) == -ETIMEDOUT && len == 0);
	CHECK(h_now_ms() - t0 >= 40);
	return 0;
}
