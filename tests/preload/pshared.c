// SPDX-License-Identifier: MIT
/*
 * pshared.c - a process-shared condvar that one process initialises and
 * another maps at a different address and never initialises (swait-run(1):
 * "a child process that maps it at another address, without ever
 * initialising it, decides the same way").  Under libswait-preload.so both
 * processes' calls must reach glibc's condvar, decided from the condvar's
 * own bytes: a decision kept in a table of initialised addresses would
 * find nothing at the child's address and run the face on glibc's bytes.
 *
 * The parent makes a page of a memfd, initialises a process-shared mutex
 * and condvar in it, and forks.  The child maps the memfd a second time
 * (another address), drops the inherited mapping, and waits there for a
 * flag in a timed wait loop; the parent sets the flag and signals, then
 * broadcasts, in its own mapping.  Then the roles turn: the parent waits
 * and the child signals.  Each wait has a deadline 20 s out, so a lost
 * wake fails with a message instead of hanging.
 *
 * Also run without the preload (glibc alone), which shows the test asks
 * only what POSIX gives.  Plain POSIX and Linux: no libswait header.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int child_waiting;	/* under mu */
	int go_child;		/* under mu: the parent's wake for the child */
	int parent_waiting;	/* under mu */
	int go_parent;		/* under mu: the child's wake for the parent */
};

static void die(const char *what, int err)
{
	fprintf(stderr, "pshared: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Wait under s->mu until *flag, at most 20 s; 0 or ETIMEDOUT. */
static int wait_flag(struct shared *s, int *waiting, const int *flag)
{
	struct timespec dl;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	*waiting = 1;
	while (!*flag && err == 0)
		err = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
	return *flag ? 0 : err;
}

/* Wake the other side once it is waiting: signal, then broadcast. */
static void wake_flag(struct shared *s, const int *waiting, int *flag)
{
	for (;;) {
		int err = pthread_mutex_lock(&s->mu);

		if (err)
			die("lock", err);
		if (*waiting)
			break;
		pthread_mutex_unlock(&s->mu);
		usleep(1000);
	}
	*flag = 1;
	if (pthread_cond_signal(&s->cv) || pthread_cond_broadcast(&s->cv))
		die("signal", EINVAL);
	pthread_mutex_unlock(&s->mu);
}

int main(void)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	struct shared *s, *other;
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	int fd, err, status;
	pid_t pid;

	if (len < sizeof(*s))
		len = sizeof(*s);
	fd = memfd_create("pshared", 0);
	if (fd < 0 || ftruncate(fd, (off_t)len) != 0)
		die("memfd", errno);
	s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s == MAP_FAILED)
		die("mmap", errno);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_condattr_init(&ca);
	pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	if ((err = pthread_mutex_init(&s->mu, &ma)) != 0)
		die("pthread_mutex_init", err);
	if ((err = pthread_cond_init(&s->cv, &ca)) != 0)
		die("pthread_cond_init", err);

	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		/* Another address for the same page; the old one gone. */
		other = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			     0);
		if (other == MAP_FAILED)
			die("child mmap", errno);
		munmap(s, len);
		if ((err = pthread_mutex_lock(&other->mu)) != 0)
			die("child lock", err);
		err = wait_flag(other, &other->child_waiting,
				&other->go_child);
		pthread_mutex_unlock(&other->mu);
		if (err) {
			fprintf(stderr, "pshared: the child, waiting at another "
				"address, was never woken (%s)\n",
				strerror(err));
			_exit(1);
		}
		wake_flag(other, &other->parent_waiting, &other->go_parent);
		_exit(0);
	}
	wake_flag(s, &s->child_waiting, &s->go_child);
	if ((err = pthread_mutex_lock(&s->mu)) != 0)
		die("lock", err);
	err = wait_flag(s, &s->parent_waiting, &s->go_parent);
	pthread_mutex_unlock(&s->mu);
	if (err) {
		fprintf(stderr, "pshared: the parent was never woken by the "
			"child's signal (%s)\n", strerror(err));
		kill(pid, SIGKILL);
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pshared: the child failed (status %#x)\n",
			status);
		return 1;
	}
	if ((err = pthread_cond_destroy(&s->cv)) != 0)
		die("pthread_cond_destroy", err);
	printf("pshared: woken both ways across two mappings\n");
	return 0;
}
