// SPDX-License-Identifier: MIT
/*
 * consumer.cpp - the installed <swait.h> from C++11: extern "C" linkage,
 * static initialisers and the event macros, across two std::threads.
 */
#include <swait.h>

#include <atomic>
#include <cstdio>
#include <thread>

static swait_head head = SWAIT_HEAD_INITIALIZER;
static swait_completion woken = SWAIT_COMPLETION_INITIALIZER;
static std::atomic<bool> ready(false);

int main()
{
	const long long ten_seconds = 10 * 1000000000LL;
	int sleeper_err = -1;

	std::thread sleeper([&sleeper_err, ten_seconds] {
		sleeper_err = swait_event_timeout_ns(&head, ready.load(),
						     ten_seconds);
		swait_complete(&woken);
	});
	ready.store(true);
	swait_wake_one(&head);

	timespec deadline;
	swait_deadline_after(&deadline, CLOCK_MONOTONIC, ten_seconds);
	int err = swait_completion_wait_timeout(&woken, CLOCK_MONOTONIC,
						&deadline);
	sleeper.join();
	if (err || sleeper_err) {
		std::fprintf(stderr, "consumer-cxx: wait failed (%d, %d)\n",
			     sleeper_err, err);
		return 1;
	}
	std::printf("consumer-cxx: ok\n");
	return 0;
}
