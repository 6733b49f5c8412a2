// SPDX-License-Identifier: MIT
/*
 * fw_fallback_wait.c - drivers/base/firmware_loader as of v5.10, reduced:
 * __fw_state_wait_common() (firmware.h: wait_for_completion_killable_
 * timeout, -ENOENT when aborted, -ETIMEDOUT on 0) under fw_sysfs_wait_
 * timeout(), and __fw_state_set()'s complete_all() for done and aborted.
 */
#include "kstub.h"
#include "harness.h"

enum fw_status {
	FW_STATUS_UNKNOWN,
	FW_STATUS_LOADING,
	FW_STATUS_DONE,
	FW_STATUS_ABORTED,
};

struct fw_state {
	struct completion completion;
	enum fw_status status;
};

struct fw_priv {
	struct fw_state fw_st;
};

/* ------------------------------------------------- the kernel's code */

static void fw_state_init(struct fw_priv *fw_priv)
{
	struct fw_state *fw_st = &fw_priv->fw_st;

	init_completion(&fw_st->completion);
	fw_st->status = FW_STATUS_UNKNOWN;
}

static inline int __fw_state_wait_common(struct fw_priv *fw_priv, long timeout)
{
	struct fw_state *fw_st = &fw_priv->fw_st;
	long ret;

	ret = wait_for_completion_killable_timeout(&fw_st->completion, timeout);
	if (ret != 0 && fw_st->status == FW_STATUS_ABORTED)
		return -ENOENT;
	if (!ret)
		return -ETIMEDOUT;

	return ret < 0 ? ret : 0;
}

static inline void __fw_state_set(struct fw_priv *fw_priv,
				  enum fw_status status)
{
	struct fw_state *fw_st = &fw_priv->fw_st;

	WRITE_ONCE(fw_st->status, status);

	if (status == FW_STATUS_DONE || status == FW_STATUS_ABORTED)
		complete_all(&fw_st->completion);
}

static inline int fw_sysfs_wait_timeout(struct fw_priv *fw_priv, long timeout)
{
	return __fw_state_wait_common(fw_priv, timeout);
}

/* ------------------------------------------------------------ the test */

static struct fw_priv fw;

static void *udev(void *arg)
{
	h_sleep_ms(10);
	__fw_state_set(&fw, (enum fw_status)(intptr_t)arg);
	return NULL;
}

int main(void)
{
	long long t0;
	pthread_t t;

	h_watchdog(30);
	h_handler(1);

	fw_state_init(&fw);
	h_start(udev, (void *)(intptr_t)FW_STATUS_DONE);
	CHECK(fw_sysfs_wait_timeout(&fw, msecs_to_jiffies(60 * 1000)) == 0);
	CHECK(fw_sysfs_wait_timeout(&fw, 1) == 0);	/* complete_all */

	fw_state_init(&fw);
	h_start(udev, (void *)(intptr_t)FW_STATUS_ABORTED);
	CHECK(fw_sysfs_wait_timeout(&fw, MAX_SCHEDULE_TIMEOUT) == -ENOENT);

	/* No loader: -ETIMEDOUT; a handled signal does not end a killable wait. */
	fw_state_init(&fw);
	h_handled = 0;
	t = pthread_self();
	t0 = h_now_ms();
	pthread_kill(t, SIGUSR1);
	CHECK(fw_sysfs_wait_timeout(&fw, 30) == -ETIMEDOUT);
	CHECK(h_now_ms() - t0 >= 30 && h_handled == 1);
	return 0;
}
