// SPDX-License-Identifier: MIT
/*
 * i2c_bcm2835_xfer.c - drivers/i2c/busses/i2c-bcm2835.c as of v5.10,
 * reduced: bcm2835_i2c_xfer() (reinit_completion, start, wait_for_
 * completion_timeout(adap->timeout), -ETIMEDOUT on 0) and the interrupt
 * handler's complete().  Registers and messages are stubs.
 */
#include "kstub.h"
#include "harness.h"

struct i2c_msg {
	u16 addr, flags, len;
	u8 *buf;
};

struct i2c_adapter {
	unsigned long timeout;	/* jiffies */
};

struct bcm2835_i2c_dev {
	struct i2c_adapter adapter;
	struct completion completion;
	struct i2c_msg *curr_msg;
	int num_msgs;
	u32 msg_err;
	int irq_fires;		/* the stub hardware answers */
	int resets;
};

static void bcm2835_i2c_start_transfer(struct bcm2835_i2c_dev *i2c_dev)
{
	i2c_dev->num_msgs--;
}

static void bcm2835_i2c_finish_transfer(struct bcm2835_i2c_dev *i2c_dev)
{
	i2c_dev->curr_msg = NULL;
	i2c_dev->num_msgs = 0;
}

#define bcm2835_i2c_writel(dev, reg, v) ((dev)->resets++)
#define BCM2835_I2C_C 0
#define BCM2835_I2C_C_CLEAR 0
#define BCM2835_I2C_S_LEN 0x400

/* ------------------------------------------------- the kernel's code */

static int bcm2835_i2c_xfer(struct i2c_adapter *adap, struct i2c_msg msgs[],
			    int num)
{
	struct bcm2835_i2c_dev *i2c_dev = (struct bcm2835_i2c_dev *)adap;
	unsigned long time_left;
	int i;

	for (i = 0; i < (num - 1); i++)
		if (msgs[i].flags & 1)
			return -EOPNOTSUPP;

	i2c_dev->curr_msg = msgs;
	i2c_dev->num_msgs = num;
	reinit_completion(&i2c_dev->completion);

	bcm2835_i2c_start_transfer(i2c_dev);

	time_left = wait_for_completion_timeout(&i2c_dev->completion,
						adap->timeout);

	bcm2835_i2c_finish_transfer(i2c_dev);

	if (!time_left) {
		bcm2835_i2c_writel(i2c_dev, BCM2835_I2C_C,
				   BCM2835_I2C_C_CLEAR);
		dev_err(i2c_dev, "i2c transfer timed out\n");
		return -ETIMEDOUT;
	}

	if (!i2c_dev->msg_err)
		return num;

	if (i2c_dev->msg_err & BCM2835_I2C_S_LEN)
		return -EREMOTEIO;

	return -EIO;
}

/* The end of bcm2835_i2c_isr(): the transfer is over. */
static void bcm2835_i2c_isr_complete(struct bcm2835_i2c_dev *i2c_dev, u32 err)
{
	i2c_dev->msg_err = err;
	complete(&i2c_dev->completion);
}

/* ------------------------------------------------------------ the test */

static struct bcm2835_i2c_dev dev;

/*
 * The interrupt, once the transfer waits for it: the transfer's own
 * reinit_completion() would erase one that came first (a thread may run
 * tens of milliseconds late on a loaded machine).
 */
static void *irq(void *arg)
{
	while (!swait_active(&dev.completion.wait))
		h_sleep_ms(1);
	bcm2835_i2c_isr_complete(&dev, (u32)(uintptr_t)arg);
	return NULL;
}

int main(void)
{
	struct i2c_msg msgs[2] = { { 0x50, 0, 1, NULL }, { 0x50, 1, 1, NULL } };
	long long t0;

	h_watchdog(30);
	init_completion(&dev.completion);
	dev.adapter.timeout = msecs_to_jiffies(10000);	/* never reached */

	h_start(irq, (void *)0);
	CHECK(bcm2835_i2c_xfer(&dev.adapter, msgs, 2) == 2);
	h_start(irq, (void *)(uintptr_t)BCM2835_I2C_S_LEN);
	CHECK(bcm2835_i2c_xfer(&dev.adapter, msgs, 2) == -EREMOTEIO);

	/* No interrupt: -ETIMEDOUT after adap->timeout, controller reset. */
	dev.adapter.timeout = 50;
	t0 = h_now_ms();
	CHECK(bcm2835_i2c_xfer(&dev.adapter, msgs, 2) == -ETIMEDOUT);
	CHECK(h_now_ms() - t0 >= 50 && dev.resets == 1);
	return 0;
}
