// SPDX-License-Identifier: MIT
/*
 * header-cxx.cpp - <swait.h> from C++11 with -pedantic-errors: extern "C"
 * linkage, the INITIALIZER macros as static initialisers, and the event
 * macros inside C++ code (a lambda, a member function, a template), with
 * a C++ thread on the other side.
 */
#include <swait.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <type_traits>

namespace {

// Constant-initialised at namespace scope, as in C.
swait_head flag_head = SWAIT_HEAD_INITIALIZER;
swait_waiter spare = SWAIT_WAITER_INITIALIZER;
swait_completion replied = SWAIT_COMPLETION_INITIALIZER;
std::atomic<bool> flag(false);

// The initialisers are constant expressions (no static-init-order issue)
// and the types are plain C data a C++ class can embed and memcpy.
constexpr swait_head const_head = SWAIT_HEAD_INITIALIZER;
constexpr swait_waiter const_waiter = SWAIT_WAITER_INITIALIZER;
constexpr swait_completion const_comp = SWAIT_COMPLETION_INITIALIZER;
static_assert(sizeof(const_head) + sizeof(const_waiter) > 0 &&
	      const_comp.done == 0, "a completion starts not done");
static_assert(std::is_trivial<swait_head>::value &&
	      std::is_standard_layout<swait_head>::value &&
	      std::is_trivial<swait_waiter>::value &&
	      std::is_standard_layout<swait_waiter>::value &&
	      std::is_trivial<swait_completion>::value &&
	      std::is_standard_layout<swait_completion>::value,
	      "swait types are not plain C data in C++");

struct mailbox {
	swait_head head;
	std::atomic<int> value;

	mailbox() : value(0)
	{
		swait_head_init(&head);
	}

	// An event macro in a member function, with a relative timeout.
	int wait_for(int want)
	{
		return swait_event_timeout_ns(&head, value.load() == want,
					      10 * 1000000000LL);
	}

	void post(int v)
	{
		value.store(v);
		swait_wake_one(&head);
	}
};

template <typename Cond>
int wait_on(swait_head *h, Cond cond)
{
	return swait_event_interruptible(h, cond());
}

} // namespace

int main()
{
	mailbox box;
	int failures = 0;

	std::thread peer([&box] {
		// The statement macro inside a lambda.
		swait_event(&flag_head, flag.load());
		box.post(42);
		swait_complete(&replied);
	});

	flag.store(true);
	swait_wake_one(&flag_head);
	failures += box.wait_for(42) != 0;
	failures += wait_on(&flag_head, [] { return flag.load(); }) != 0;

	timespec deadline;
	failures += swait_deadline_after(&deadline, CLOCK_MONOTONIC,
					 10 * 1000000000LL) != 0;
	failures += swait_completion_wait_timeout(&replied, CLOCK_MONOTONIC,
						  &deadline) != 0;
	peer.join();

	swait_prepare(&flag_head, &spare);
	failures += !swait_active(&flag_head);
	swait_finish(&flag_head, &spare);
	failures += swait_head_destroy(&flag_head) != 0;
	if (failures)
		std::fprintf(stderr, "header-cxx: %d checks failed\n", failures);
	return failures ? 1 : 0;
}
