// SPDX-License-Identifier: MIT
/*
 * nowaiter-instr - issue 4's deterministic nowaiter goal: a wake on an
 * empty swait head executes no more instructions than pthread_cond_signal()
 * with no waiter.  Timings are noisy on a shared machine; callgrind's
 * instruction counts are exact, so this is the test of the goal.
 *
 *	nowaiter-instr VALGRIND		run itself under callgrind once per
 *					mechanism, collecting only inside the
 *					loop, and compare instructions per call
 *	nowaiter-instr --loop NAME	the loop that callgrind measures
 *
 * And issue 22's: on an asymmetric head (swait_head_init_asym) the empty
 * wake is the inline part of <swait.h>'s swait_wake_one(), two loads and
 * no call: at most ASYM_MAX instructions per call, loop included.
 *
 * Exits 0 when swait_wake_one and swait_wake_all are within the bounds, 1
 * when not, 77 (skip) without valgrind.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <swait.h>

#define CALLS 100000
/*
 * The loads, compares and branch of the inline wake, and the loop's
 * increment, compare and branch: 12 at -O0 to 2 here.  A call into the
 * library alone would add a call, a return and the PLT's jump.
 */
#define ASYM_MAX 16

static struct swait_head head = SWAIT_HEAD_INITIALIZER;
static struct swait_head asym_head;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* The names below are callgrind's --toggle-collect targets. */
__attribute__((noinline)) void loop_swait(void);
__attribute__((noinline)) void loop_swait_all(void);
__attribute__((noinline)) void loop_cond(void);
__attribute__((noinline)) void loop_cond_broadcast(void);
__attribute__((noinline)) void loop_swait_asym(void);

__attribute__((noinline)) void loop_swait(void)
{
	for (int i = 0; i < CALLS; i++)
		swait_wake_one(&head);
}

__attribute__((noinline)) void loop_swait_all(void)
{
	for (int i = 0; i < CALLS; i++)
		swait_wake_all(&head);
}

__attribute__((noinline)) void loop_swait_asym(void)
{
	for (int i = 0; i < CALLS; i++)
		swait_wake_one(&asym_head);
}

__attribute__((noinline)) void loop_cond(void)
{
	for (int i = 0; i < CALLS; i++)
		pthread_cond_signal(&cond);
}

__attribute__((noinline)) void loop_cond_broadcast(void)
{
	for (int i = 0; i < CALLS; i++)
		pthread_cond_broadcast(&cond);
}

static const struct {
	const char *name, *fn;
	void (*loop)(void);
} loops[] = {
	{ "swait", "loop_swait", loop_swait },
	{ "swait-all", "loop_swait_all", loop_swait_all },
	{ "cond", "loop_cond", loop_cond },
	{ "cond-broadcast", "loop_cond_broadcast", loop_cond_broadcast },
	{ "swait-asym", "loop_swait_asym", loop_swait_asym },
};
#define NLOOPS (sizeof(loops) / sizeof(loops[0]))

/* Instructions per call of loop i under callgrind, or -1. */
static double measure(const char *valgrind, size_t i)
{
	char self[4096], out[64], toggle[128], line[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	double ir = -1;
	int status;
	pid_t pid;
	FILE *f;

	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(out, sizeof(out), "/tmp/nowaiter-instr.%d.%zu",
		 (int)getpid(), i);
	snprintf(toggle, sizeof(toggle), "--toggle-collect=%s", loops[i].fn);
	pid = fork();
	if (pid == 0) {
		char arg_out[128];

		snprintf(arg_out, sizeof(arg_out), "--callgrind-out-file=%s",
			 out);
		execl(valgrind, valgrind, "--tool=callgrind", "--quiet",
		      arg_out, toggle, self, "--loop", loops[i].name,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "summary:", 8) || !strncmp(line, "totals:", 7))
			ir = atof(strchr(line, ':') + 1);
	if (f)
		fclose(f);
	unlink(out);
	return ir < 0 ? -1 : ir / CALLS;
}

int main(int argc, char **argv)
{
	double ir[NLOOPS];
	int bad = 0;

	if (argc == 3 && !strcmp(argv[1], "--loop")) {
		int err = swait_head_init_asym(&asym_head);

		if (err != 0) {
			fprintf(stderr, "nowaiter-instr: swait_head_init_asym: "
				"%s\n", strerror(err));
			return 1;
		}
		for (size_t i = 0; i < NLOOPS; i++)
			if (!strcmp(argv[2], loops[i].name)) {
				loops[i].loop();
				return 0;
			}
		return 2;
	}
	if (argc != 2 || access(argv[1], X_OK) != 0) {
		printf("nowaiter-instr: no valgrind; skipped\n");
		return 77;
	}
	for (size_t i = 0; i < NLOOPS; i++) {
		ir[i] = measure(argv[1], i);
		if (ir[i] < 0) {
			fprintf(stderr, "nowaiter-instr: callgrind run for %s "
				"failed\n", loops[i].name);
			return 1;
		}
		printf("%-15s %6.2f instructions per call, nobody waiting\n",
		       loops[i].name, ir[i]);
	}
	/* swait_wake_one vs pthread_cond_signal, wake_all vs broadcast. */
	for (size_t i = 0; i < 2; i++)
		if (ir[i] > ir[i + 2]) {
			fprintf(stderr, "nowaiter-instr: %s executes %.2f "
				"instructions per call, more than %s (%.2f)\n",
				loops[i].name, ir[i], loops[i + 2].name,
				ir[i + 2]);
			bad = 1;
		}
	if (ir[4] > ASYM_MAX || ir[4] >= ir[0]) {
		fprintf(stderr, "nowaiter-instr: swait-asym executes %.2f "
			"instructions per call: more than %d, or not fewer "
			"than swait's %.2f (is the inline wake in <swait.h> "
			"used?)\n", ir[4], ASYM_MAX, ir[0]);
		bad = 1;
	}
	return bad;
}
