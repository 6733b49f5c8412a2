// SPDX-License-Identifier: MIT
/*
 * consumer_cond.c - a consumer of the condvar face, <swait/cond.h>, built
 * from nothing but pkg-config's flags; with -DUSE_PTHREAD the same program
 * on pthread_cond, for running under the installed swait-run.  A ping-pong
 * of 1000 rounds between two threads; exits 0 if every round arrived.
 */
#include <pthread.h>
#include <stdio.h>

#ifdef USE_PTHREAD
#define cond_t pthread_cond_t
#define COND_INIT PTHREAD_COND_INITIALIZER
#define cond_wait pthread_cond_wait
#define cond_signal pthread_cond_signal
#define cond_destroy pthread_cond_destroy
#else
#include <swait/cond.h>
#define cond_t swait_cond_t
#define COND_INIT SWAIT_COND_INITIALIZER
#define cond_wait swait_cond_wait
#define cond_signal swait_cond_signal
#define cond_destroy swait_cond_destroy
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static cond_t c = COND_INIT;
static int turn, rounds = 1000;

static void *pong(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	for (int i = 0; i < rounds; i++) {
		while (turn != 1)
			cond_wait(&c, &m);
		turn = 0;
		cond_signal(&c);
	}
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, pong, NULL) != 0)
		return 1;
	pthread_mutex_lock(&m);
	for (int i = 0; i < rounds; i++) {
		turn = 1;
		cond_signal(&c);
		while (turn != 0)
			cond_wait(&c, &m);
	}
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	if (cond_destroy(&c) != 0)
		return 1;
	puts("consumer_cond: 1000 rounds");
	return 0;
}
