// SPDX-License-Identifier: MIT
/*
 * kvm_vcpu_block.c - virt/kvm/kvm_main.c as of v5.4, reduced:
 * kvm_vcpu_block() (its open-coded prepare_to_swait_exclusive /
 * kvm_vcpu_check_block / schedule / finish_swait loop, halt polling
 * removed), kvm_vcpu_check_block() (signal_pending(current)) and
 * kvm_vcpu_wake_up() (swq_has_sleeper / swake_up_one).  The vcpu and its
 * architecture hooks are stubs.
 */
#include "kstub.h"
#include "harness.h"

struct kvm_vcpu_stat {
	unsigned long halt_wakeup;
};

struct kvm_vcpu {
	struct swait_queue_head wq;
	int runnable;		/* the stub of kvm_arch_vcpu_runnable() */
	int ready;
	struct kvm_vcpu_stat stat;
};

#define KVM_REQ_UNHALT 0
static int kvm_arch_vcpu_runnable(struct kvm_vcpu *vcpu)
{
	return READ_ONCE(vcpu->runnable);
}
static void kvm_make_request(int req, struct kvm_vcpu *vcpu)
{
	(void)req;
	(void)vcpu;
}
static int kvm_cpu_has_pending_timer(struct kvm_vcpu *vcpu)
{
	(void)vcpu;
	return 0;
}
#define kvm_arch_vcpu_wq(vcpu) (&(vcpu)->wq)
#define kvm_arch_vcpu_blocking(vcpu) ((void)(vcpu))
#define kvm_arch_vcpu_unblocking(vcpu) ((void)(vcpu))
#define WRITE_ONCE_READY(vcpu, v) WRITE_ONCE((vcpu)->ready, v)

/* ------------------------------------------------- the kernel's code */

static int kvm_vcpu_check_block(struct kvm_vcpu *vcpu)
{
	int ret = -EINTR;

	if (kvm_arch_vcpu_runnable(vcpu)) {
		kvm_make_request(KVM_REQ_UNHALT, vcpu);
		goto out;
	}
	if (kvm_cpu_has_pending_timer(vcpu))
		goto out;
	if (signal_pending(current))
		goto out;

	ret = 0;
out:
	return ret;
}

/* Returns kvm_vcpu_check_block()'s value at the end (the test's view). */
static int kvm_vcpu_block(struct kvm_vcpu *vcpu)
{
	DECLARE_SWAITQUEUE(wait);
	int why;

	kvm_arch_vcpu_blocking(vcpu);

	for (;;) {
		prepare_to_swait_exclusive(&vcpu->wq, &wait, TASK_INTERRUPTIBLE);

		if ((why = kvm_vcpu_check_block(vcpu)) < 0)
			break;

		schedule();
	}

	finish_swait(&vcpu->wq, &wait);

	kvm_arch_vcpu_unblocking(vcpu);
	return why;
}

static bool kvm_vcpu_wake_up(struct kvm_vcpu *vcpu)
{
	struct swait_queue_head *wqp;

	wqp = kvm_arch_vcpu_wq(vcpu);
	if (swq_has_sleeper(wqp)) {
		swake_up_one(wqp);
		WRITE_ONCE_READY(vcpu, true);
		++vcpu->stat.halt_wakeup;
		return true;
	}

	return false;
}

/* ------------------------------------------------------------ the test */

static struct kvm_vcpu vcpu;
static int blocked;	/* the vcpu thread is in kvm_vcpu_block() */

static void *vcpu_thread(void *arg)
{
	int r;

	(void)arg;
	WRITE_ONCE(blocked, 1);
	r = kvm_vcpu_block(&vcpu);
	WRITE_ONCE(blocked, 0);
	return (void *)(intptr_t)r;
}

/* The stub that raises a signal right after the prepare, before schedule(). */
static int raise_in_check;
static int kvm_arch_vcpu_runnable_raising(struct kvm_vcpu *v)
{
	if (raise_in_check) {
		raise_in_check = 0;
		raise(SIGUSR1);
	}
	return kvm_arch_vcpu_runnable(v);
}

int main(void)
{
	pthread_t t;
	int r;

	h_watchdog(30);
	h_handler(1);	/* SA_RESTART, as glibc's signal() */
	init_swait_queue_head(&vcpu.wq);

	/* Woken by an interrupt's kvm_vcpu_wake_up(): runnable. */
	t = h_start(vcpu_thread, NULL);
	while (!swait_active(&vcpu.wq))
		h_sleep_ms(1);
	WRITE_ONCE(vcpu.runnable, 1);
	CHECK(kvm_vcpu_wake_up(&vcpu));
	CHECK((intptr_t)h_join(t) == -EINTR && vcpu.stat.halt_wakeup == 1);
	CHECK(!kvm_vcpu_wake_up(&vcpu));	/* nobody sleeps */

	/* A signal during schedule() ends the block, SA_RESTART or not. */
	WRITE_ONCE(vcpu.runnable, 0);
	h_handled = 0;
	t = h_start(vcpu_thread, NULL);
	while (!swait_active(&vcpu.wq))
		h_sleep_ms(1);
	h_wait_asleep(t);
	pthread_kill(t, SIGUSR1);
	CHECK((intptr_t)h_join(t) == -EINTR);
	CHECK(h_handled == 1 && !vcpu.runnable);

	/*
	 * A signal between prepare_to_swait_exclusive() and schedule(): the
	 * check sees it pending, the block never sleeps.
	 */
	h_handled = 0;
	raise_in_check = 1;
	{
		DECLARE_SWAITQUEUE(wait);

		prepare_to_swait_exclusive(&vcpu.wq, &wait, TASK_INTERRUPTIBLE);
		r = kvm_arch_vcpu_runnable_raising(&vcpu);
		CHECK(r == 0 && h_handled == 0 && signal_pending(current));
		CHECK(kvm_vcpu_check_block(&vcpu) == -EINTR);
		schedule();	/* returns at once: a signal is pending */
		finish_swait(&vcpu.wq, &wait);
	}
	CHECK(h_handled == 1 && !signal_pending(current));
	(void)blocked;
	return 0;
}
