// SPDX-License-Identifier: MIT
/*
 * kthread_create.c - kernel/kthread.c as of v5.10, reduced:
 * __kthread_create_on_node() (an on-stack completion, wake_up_process(
 * kthreadd_task), wait_for_completion_killable()) and kthreadd()'s loop
 * (set_current_state(TASK_INTERRUPTIBLE), schedule() when the list is
 * empty, __set_current_state(TASK_RUNNING)); create_kthread() runs the
 * new "thread" inline and completes.  A stop flag ends kthreadd.
 */
#include "kstub.h"
#include "harness.h"

struct list_head {
	struct list_head *next, *prev;
};
#define LIST_HEAD(name) struct list_head name = { &(name), &(name) }
static void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}
static void list_del_init(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->next = e->prev = e;
}
static int list_empty(const struct list_head *h)
{
	return READ_ONCE(h->next) == h;
}
#define list_entry(p, type, member) \
	((type *)(void *)((char *)(p) - __builtin_offsetof(type, member)))
#define xchg(p, v) __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST)

struct kthread_create_info {
	int (*threadfn)(void *data);
	void *data;
	int node;
	struct task_struct *result;
	struct completion *done;
	struct list_head list;
};

static DEFINE_SPINLOCK(kthread_create_lock);
static LIST_HEAD(kthread_create_list);
static struct task_struct *kthreadd_task;
static int kthreadd_stop;
static struct task_struct fake_task[8];
static int created;

static void create_kthread(struct kthread_create_info *create)
{
	struct completion *done = xchg(&create->done, NULL);

	create->threadfn(create->data);
	create->result = &fake_task[created++];
	if (done)
		complete(done);
}

/* ------------------------------------------------- the kernel's code */

static struct task_struct *__kthread_create_on_node(int (*threadfn)(void *),
						    void *data, int node)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct task_struct *task;
	struct kthread_create_info *create = kmalloc(sizeof(*create),
						     GFP_KERNEL);

	if (!create)
		return ERR_PTR(-ENOMEM);
	create->threadfn = threadfn;
	create->data = data;
	create->node = node;
	create->done = &done;

	spin_lock(&kthread_create_lock);
	list_add_tail(&create->list, &kthread_create_list);
	spin_unlock(&kthread_create_lock);

	wake_up_process(kthreadd_task);
	/*
	 * Wait for completion in killable state, for I might be chosen by
	 * the OOM killer while kthreadd is trying to allocate memory for
	 * new kernel thread.
	 */
	if (unlikely(wait_for_completion_killable(&done))) {
		if (xchg(&create->done, NULL))
			return ERR_PTR(-EINTR);
		wait_for_completion(&done);
	}
	task = create->result;
	kfree(create);
	return task;
}

static int kthreadd(void *unused)
{
	(void)unused;
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (list_empty(&kthread_create_list) && !READ_ONCE(kthreadd_stop))
			schedule();
		__set_current_state(TASK_RUNNING);
		if (READ_ONCE(kthreadd_stop))
			break;

		spin_lock(&kthread_create_lock);
		while (!list_empty(&kthread_create_list)) {
			struct kthread_create_info *create;

			create = list_entry(kthread_create_list.next,
					    struct kthread_create_info, list);
			list_del_init(&create->list);
			spin_unlock(&kthread_create_lock);

			create_kthread(create);

			spin_lock(&kthread_create_lock);
		}
		spin_unlock(&kthread_create_lock);
	}

	return 0;
}

/* ------------------------------------------------------------ the test */

static int ran;

static int threadfn(void *data)
{
	ran += (int)(intptr_t)data;
	return 0;
}

static void *kthreadd_main(void *arg)
{
	(void)arg;
	__atomic_store_n(&kthreadd_task, current, __ATOMIC_RELEASE);
	return (void *)(intptr_t)kthreadd(NULL);
}

int main(void)
{
	pthread_t t;
	int i;

	h_watchdog(30);
	t = h_start(kthreadd_main, NULL);
	while (!__atomic_load_n(&kthreadd_task, __ATOMIC_ACQUIRE))
		h_sleep_ms(1);
	for (i = 0; i < 5; i++) {
		CHECK(__kthread_create_on_node(threadfn, (void *)(intptr_t)1,
					       -1) == &fake_task[i]);
		h_sleep_ms(i);	/* kthreadd asleep or about to be */
	}
	CHECK(ran == 5);
	WRITE_ONCE(kthreadd_stop, 1);
	wake_up_process(kthreadd_task);
	CHECK(h_join(t) == NULL);
	return 0;
}
