// SPDX-License-Identifier: MIT
/*
 * mech.c - the mechanisms under test, each a counting channel.
 *
 * post() makes one unit available and wakes one waiter; wait() takes one
 * unit, sleeping while there is none.  Counting semantics (a semaphore)
 * serve every scenario: a ping-pong is two channels with at most one unit
 * in flight, a bounded queue is two channels (slots, items).  Each
 * mechanism is written the way a user of it would write it, no tricks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <semaphore.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <swait.h>

#include "bench.h"
#include "futex.h"	/* lib/: the ABI's futex call */
#include "peers.h"
#include "swait/cond.h"

struct chan {
	/* First: a peer's own objects (peers.h). */
	alignas(64) unsigned char peer[PEER_AREA];
	alignas(64) uint32_t count;	/* units; futex word of the futex mechs */
	uint32_t sleepers;		/* futex-sleeper: threads in FUTEX_WAIT */
	alignas(64) struct swait_head head;
	struct swait_completion comp;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	swait_cond_t scv;
	sem_t sem;
	int fd[2];
};

_Thread_local unsigned long tl_futex_wake, tl_futex_wait;

void bench_futex_wake(uint32_t *word, int n)
{
	tl_futex_wake++;
	syscall(SWAIT_SYS_FUTEX, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n,
		NULL, NULL, 0);
}

int bench_futex_wait(uint32_t *word, uint32_t val, clockid_t clock,
		     const struct timespec *deadline)
{
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;

	if (clock == CLOCK_REALTIME)
		op |= FUTEX_CLOCK_REALTIME;
	tl_futex_wait++;
	/* The library's choice of call and timeout layout for this ABI. */
	if (swait_futex_timed(word, op, val, deadline,
			      FUTEX_BITSET_MATCH_ANY) != 0)
		return errno == SWAIT_ECLAMPED ? 0 : errno;
	return 0;
}

/* Take one unit if there is one: the condition of the swait waits. */
static bool take(uint32_t *count)
{
	uint32_t v = __atomic_load_n(count, __ATOMIC_RELAXED);

	while (v != 0)
		if (__atomic_compare_exchange_n(count, &v, v - 1, true,
				__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
	return false;
}

/* ------------------------------------------------------------------ swait */

static void swait_setup(struct chan *c)
{
	swait_head_init(&c->head);
}

static void swait_teardown(struct chan *c)
{
	if (swait_head_destroy(&c->head) != 0)
		die("swait head busy at teardown");
}

static void swait_post(struct chan *c)
{
	/* Release: the unit's data; the wake's barrier orders the wake. */
	__atomic_fetch_add(&c->count, 1, __ATOMIC_RELEASE);
	swait_wake_one(&c->head);
}

/*
 * swait-nospin: the same code with the thread's spin cap at 0, so that a
 * run shows what the spin before a sleep buys and costs side by side.  A
 * thread that ran it gets its default back before it runs "swait" (trial
 * threads are fresh, but the main thread may wait too).
 */
static _Thread_local bool tl_nospin;

void spin_as(bool nospin)
{
	if (tl_nospin == nospin)
		return;
	if (swait_set_spin(nospin ? 0 : SWAIT_SPIN_DEFAULT, NULL) != 0)
		die("swait_set_spin failed");
	tl_nospin = nospin;
}

static void swait_wait(struct chan *c)
{
	spin_as(false);
	swait_event(&c->head, take(&c->count));
}

static int swait_timedwait(struct chan *c, clockid_t clock,
			   const struct timespec *dl)
{
	spin_as(false);
	return swait_event_timeout(&c->head, take(&c->count), clock, dl);
}

static void nospin_wait(struct chan *c)
{
	spin_as(true);
	swait_event(&c->head, take(&c->count));
}

static int nospin_timedwait(struct chan *c, clockid_t clock,
			    const struct timespec *dl)
{
	spin_as(true);
	return swait_event_timeout(&c->head, take(&c->count), clock, dl);
}

/* ------------------------------------------------------------ completion */

static void comp_setup(struct chan *c)
{
	swait_completion_init(&c->comp);
}

static void comp_teardown(struct chan *c)
{
	(void)c;
}

static void comp_post(struct chan *c)
{
	swait_complete(&c->comp);
}

static void comp_wait(struct chan *c)
{
	swait_completion_wait(&c->comp);
}

static int comp_timedwait(struct chan *c, clockid_t clock,
			  const struct timespec *dl)
{
	return swait_completion_wait_timeout(&c->comp, clock, dl);
}

/* ------------------------------------------------------------------ cond */

/*
 * The condvar code, written once and instantiated twice: on glibc's
 * pthread_cond ("cond") and on libswait's condvar face ("swait-cond"),
 * so that the two differ in the condvar and nothing else.
 */
#define COND_MECH(P, PI, FIELD, INIT, DESTROY, WAIT, CLOCKWAIT, SIGNAL) \
static void P##_setup(struct chan *c)					\
{									\
	pthread_condattr_t a;						\
	pthread_mutexattr_t ma;						\
									\
	pthread_mutexattr_init(&ma);					\
	if (PI)								\
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT); \
	pthread_mutex_init(&c->mu, &ma);				\
	pthread_mutexattr_destroy(&ma);					\
	pthread_condattr_init(&a);					\
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);			\
	if (INIT(&c->FIELD, &a) != 0)					\
		die(#INIT " failed");					\
	pthread_condattr_destroy(&a);					\
	c->count = 0;							\
}									\
									\
static void P##_teardown(struct chan *c)				\
{									\
	DESTROY(&c->FIELD);						\
	pthread_mutex_destroy(&c->mu);					\
}									\
									\
/* The textbook form: signal while holding the mutex. */		\
__attribute__((unused)) static void P##_post(struct chan *c)		\
{									\
	pthread_mutex_lock(&c->mu);					\
	c->count++;							\
	SIGNAL(&c->FIELD);						\
	pthread_mutex_unlock(&c->mu);					\
}									\
									\
/* The other common form: signal after the unlock. */			\
__attribute__((unused)) static void P##_after_post(struct chan *c)	\
{									\
	pthread_mutex_lock(&c->mu);					\
	c->count++;							\
	pthread_mutex_unlock(&c->mu);					\
	SIGNAL(&c->FIELD);						\
}									\
									\
static void P##_wait(struct chan *c)					\
{									\
	pthread_mutex_lock(&c->mu);					\
	while (c->count == 0)						\
		WAIT(&c->FIELD, &c->mu);				\
	c->count--;							\
	pthread_mutex_unlock(&c->mu);					\
}									\
									\
static int P##_timedwait(struct chan *c, clockid_t clock,		\
			 const struct timespec *dl)			\
{									\
	int err = 0;							\
									\
	pthread_mutex_lock(&c->mu);					\
	while (c->count == 0 && err == 0)				\
		err = CLOCKWAIT(&c->FIELD, &c->mu, clock, dl);		\
	if (c->count != 0) {						\
		c->count--;						\
		err = 0;						\
	}								\
	pthread_mutex_unlock(&c->mu);					\
	return err;							\
}

COND_MECH(cond, false, cv, pthread_cond_init, pthread_cond_destroy,
	  pthread_cond_wait, pthread_cond_clockwait, pthread_cond_signal)
COND_MECH(scond, false, scv, swait_cond_init, swait_cond_destroy,
	  swait_cond_wait, swait_cond_clockwait, swait_cond_signal)
/* With a PTHREAD_PRIO_INHERIT mutex: the face's head is then a PI head. */
COND_MECH(pcond, true, cv, pthread_cond_init, pthread_cond_destroy,
	  pthread_cond_wait, pthread_cond_clockwait, pthread_cond_signal)
COND_MECH(spcond, true, scv, swait_cond_init, swait_cond_destroy,
	  swait_cond_wait, swait_cond_clockwait, swait_cond_signal)

/* ------------------------------------------------------------------ sem_t */

static void sem_setup(struct chan *c)
{
	sem_init(&c->sem, 0, 0);
}

static void sem_teardown(struct chan *c)
{
	sem_destroy(&c->sem);
}

static void sem_post_(struct chan *c)
{
	sem_post(&c->sem);
}

static void sem_wait_(struct chan *c)
{
	while (sem_wait(&c->sem) != 0)
		;
}

static int sem_timedwait_(struct chan *c, clockid_t clock,
			  const struct timespec *dl)
{
	while (sem_clockwait(&c->sem, clock, dl) != 0)
		if (errno == ETIMEDOUT)
			return ETIMEDOUT;
	return 0;
}

/* ---------------------------------------------------------- eventfd, pipe */

static void efd_setup(struct chan *c)
{
	c->fd[0] = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (c->fd[0] < 0)
		die("eventfd: %s", strerror(errno));
}

static void efd_teardown(struct chan *c)
{
	close(c->fd[0]);
}

static void efd_post(struct chan *c)
{
	uint64_t one = 1;

	if (write(c->fd[0], &one, sizeof(one)) != sizeof(one))
		die("eventfd write: %s", strerror(errno));
}

static void efd_wait(struct chan *c)
{
	uint64_t v;

	while (read(c->fd[0], &v, sizeof(v)) != sizeof(v))
		if (errno != EINTR)
			die("eventfd read: %s", strerror(errno));
}

static void pipe_setup(struct chan *c)
{
	if (pipe2(c->fd, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
}

static void pipe_teardown(struct chan *c)
{
	close(c->fd[0]);
	close(c->fd[1]);
}

static void pipe_post(struct chan *c)
{
	char b = 1;

	if (write(c->fd[1], &b, 1) != 1)
		die("pipe write: %s", strerror(errno));
}

static void pipe_wait(struct chan *c)
{
	char b;

	while (read(c->fd[0], &b, 1) != 1)
		if (errno != EINTR)
			die("pipe read: %s", strerror(errno));
}

/* -------------------------------------------------------------- raw futex */

static void futex_setup(struct chan *c)
{
	c->count = 0;
	c->sleepers = 0;
}

static void futex_teardown(struct chan *c)
{
	(void)c;
}

/* Always wake: the simplest correct futex semaphore. */
static void futex_post(struct chan *c)
{
	__atomic_fetch_add(&c->count, 1, __ATOMIC_RELEASE);
	bench_futex_wake(&c->count, 1);
}

static void futex_wait(struct chan *c)
{
	while (!take(&c->count))
		bench_futex_wait(&c->count, 0, CLOCK_MONOTONIC, NULL);
}

static int futex_timedwait(struct chan *c, clockid_t clock,
			   const struct timespec *dl)
{
	while (!take(&c->count))
		if (bench_futex_wait(&c->count, 0, clock, dl) == ETIMEDOUT)
			return take(&c->count) ? 0 : ETIMEDOUT;
	return 0;
}

/*
 * Wake only a sleeper: the physical lower bound of a blocking handoff.  The
 * count and the sleeper count are a Dekker pair of seq_cst operations:
 * either post sees the sleeper, or the sleeper's FUTEX_WAIT (which compares
 * the count in the kernel) sees the unit.
 */
static void fsleep_post(struct chan *c)
{
	__atomic_fetch_add(&c->count, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->sleepers, __ATOMIC_SEQ_CST) != 0)
		bench_futex_wake(&c->count, 1);
}

static int fsleep_timedwait(struct chan *c, clockid_t clock,
			    const struct timespec *dl)
{
	int err = 0;

	while (!take(&c->count)) {
		if (err == ETIMEDOUT)
			return ETIMEDOUT;
		__atomic_fetch_add(&c->sleepers, 1, __ATOMIC_SEQ_CST);
		err = bench_futex_wait(&c->count, 0, clock, dl);
		__atomic_fetch_sub(&c->sleepers, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static void fsleep_wait(struct chan *c)
{
	(void)fsleep_timedwait(c, CLOCK_MONOTONIC, NULL);
}

/* ------------------------------------------------------------------ table */

const struct mech mechs[] = {
	{ .name = "swait",
	  .desc = "swait_event() / swait_wake_one() on a counter",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = swait_setup, .teardown = swait_teardown,
	  .post = swait_post, .wait = swait_wait,
	  .timedwait = swait_timedwait },
	{ .name = "swait-nospin",
	  .desc = "swait with the spin before a sleep turned off (cap 0)",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = swait_setup, .teardown = swait_teardown,
	  .post = swait_post, .wait = nospin_wait,
	  .timedwait = nospin_timedwait },
	{ .name = "completion",
	  .desc = "swait_complete() / swait_completion_wait()",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = comp_setup, .teardown = comp_teardown,
	  .post = comp_post, .wait = comp_wait,
	  .timedwait = comp_timedwait },
	{ .name = "cond",
	  .desc = "pthread_mutex + pthread_cond, signal under the lock",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = cond_setup, .teardown = cond_teardown,
	  .post = cond_post, .wait = cond_wait,
	  .timedwait = cond_timedwait },
	{ .name = "cond-after",
	  .desc = "pthread_mutex + pthread_cond, signal after unlock",
	  .flags = MF_HANDOFF,
	  .setup = cond_setup, .teardown = cond_teardown,
	  .post = cond_after_post, .wait = cond_wait,
	  .timedwait = cond_timedwait },
	{ .name = "swait-cond",
	  .desc = "the cond code on <swait/cond.h>, signal under the lock",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = scond_setup, .teardown = scond_teardown,
	  .post = scond_post, .wait = scond_wait,
	  .timedwait = scond_timedwait },
	{ .name = "swait-cond-after",
	  .desc = "the cond code on <swait/cond.h>, signal after unlock",
	  .flags = MF_HANDOFF,
	  .setup = scond_setup, .teardown = scond_teardown,
	  .post = scond_after_post, .wait = scond_wait,
	  .timedwait = scond_timedwait },
	{ .name = "cond-pi",
	  .desc = "cond with a PTHREAD_PRIO_INHERIT mutex, signal after unlock",
	  .flags = MF_HANDOFF,
	  .setup = pcond_setup, .teardown = pcond_teardown,
	  .post = pcond_after_post, .wait = pcond_wait,
	  .timedwait = pcond_timedwait },
	{ .name = "swait-cond-pi",
	  .desc = "the same on <swait/cond.h>: a PI head, priority order",
	  .flags = MF_HANDOFF,
	  .setup = spcond_setup, .teardown = spcond_teardown,
	  .post = spcond_after_post, .wait = spcond_wait,
	  .timedwait = spcond_timedwait },
	{ .name = "sem",
	  .desc = "sem_post() / sem_wait()",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = sem_setup, .teardown = sem_teardown,
	  .post = sem_post_, .wait = sem_wait_,
	  .timedwait = sem_timedwait_ },
	{ .name = "eventfd",
	  .desc = "eventfd (EFD_SEMAPHORE) write / read",
	  .flags = MF_HANDOFF,
	  .setup = efd_setup, .teardown = efd_teardown,
	  .post = efd_post, .wait = efd_wait },
	{ .name = "pipe",
	  .desc = "one byte through a pipe",
	  .flags = MF_HANDOFF,
	  .setup = pipe_setup, .teardown = pipe_teardown,
	  .post = pipe_post, .wait = pipe_wait },
	{ .name = "futex",
	  .desc = "raw futex word, FUTEX_WAKE on every post",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = futex_setup, .teardown = futex_teardown,
	  .post = futex_post, .wait = futex_wait,
	  .timedwait = futex_timedwait,
	  .own_futex_count = true },
	{ .name = "futex-sleeper",
	  .desc = "raw futex word, FUTEX_WAKE only for a sleeper",
	  .flags = MF_HANDOFF | MF_TIMED,
	  .setup = futex_setup, .teardown = futex_teardown,
	  .post = fsleep_post, .wait = fsleep_wait,
	  .timedwait = fsleep_timedwait,
	  .own_futex_count = true },
#define PEER_MECH(p, n, d)						\
	{ .name = n, .desc = d, .flags = MF_HANDOFF | MF_PEER,		\
	  .setup = p##_setup, .teardown = p##_teardown,			\
	  .post = p##_post, .wait = p##_wait,				\
	  .wake_empty = p##_wake_empty, .bwait = p##_bwait,		\
	  .bwake = p##_bwake, .cwake = p##_cwake, .cwait = p##_cwait }
#ifdef BENCH_PEER_NSYNC
	PEER_MECH(peer_nsync, "nsync",
		  "Google nsync: nsync_mu + nsync_cv, signal under the lock"),
#endif
#ifdef BENCH_PEER_ABSEIL
	PEER_MECH(peer_abseil, "abseil",
		  "Abseil: absl::Mutex + absl::CondVar, signal under the lock"),
#endif
#ifdef BENCH_PEER_ATOMIC
	PEER_MECH(peer_atomic, "atomic",
		  "C++20 std::atomic<uint32_t> wait / notify_one"),
#endif
#undef PEER_MECH
};
const size_t nmechs = sizeof(mechs) / sizeof(mechs[0]);

struct chan *chan_new(const struct mech *m)
{
	struct chan *c = aligned_alloc(64, sizeof(*c));

	if (!c)
		die("out of memory");
	memset(c, 0, sizeof(*c));
	m->setup(c);
	return c;
}

void chan_free(const struct mech *m, struct chan *c)
{
	m->teardown(c);
	free(c);
}

int mech_index(const char *name)
{
	for (size_t i = 0; i < nmechs; i++)
		if (strcmp(mechs[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Names that only some scenarios know (nowaiter, mostlybusy). */
static const char *const extra_names[] = {
	"swait-all", "cond-broadcast", "swait-asym",
};

/* Every peer, built or not, and what building it needs. */
static const struct {
	const char *name, *why;
} peer_list[] = {
#ifdef BENCH_PEERS_DISABLED
	{ "nsync", "-Dpeers=disabled" },
	{ "abseil", "-Dpeers=disabled" },
	{ "atomic", "-Dpeers=disabled" },
#else
	{ "nsync", "needs libnsync-dev" },
	{ "abseil", "needs libabsl-dev and g++" },
	{ "atomic", "needs g++ with C++20 std::atomic wait" },
#endif
};

const char *peer_missing_why(const char *name)
{
	for (size_t i = 0; i < sizeof(peer_list) / sizeof(peer_list[0]); i++)
		if (strcmp(peer_list[i].name, name) == 0)
			return mech_index(name) < 0 ? peer_list[i].why : NULL;
	return NULL;
}

void peers_missing_print(FILE *f)
{
	for (size_t i = 0; i < sizeof(peer_list) / sizeof(peer_list[0]); i++)
		if (mech_index(peer_list[i].name) < 0)
			fprintf(f, "  %-14s not built: %s\n", peer_list[i].name,
				peer_list[i].why);
}

bool mech_name_known(const char *name)
{
	if (mech_index(name) >= 0)
		return true;
	for (size_t i = 0; i < sizeof(extra_names) / sizeof(extra_names[0]); i++)
		if (strcmp(extra_names[i], name) == 0)
			return true;
	return false;
}

bool mech_selected(const char *name)
{
	const char *p = opt.mech_list;
	size_t len = strlen(name);

	if (!p)
		return true;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && strncmp(p, name, n) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

size_t mechs_select(unsigned flags, const struct mech **sel, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < nmechs && n < cap; i++)
		if ((mechs[i].flags & flags) == flags &&
		    mech_selected(mechs[i].name))
			sel[n++] = &mechs[i];
	return n;
}
