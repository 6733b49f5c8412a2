// SPDX-License-Identifier: MIT
//
// cxx.cc - C++20's condition variables, as a program uses them, for the
// preload suite: std::condition_variable (wait, wait_for, wait_until on
// steady_clock and system_clock), std::condition_variable_any with a
// std::jthread's stop token, and a bounded producer/consumer queue.
// libstdc++ reaches pthread_cond_wait, _signal, _broadcast, _destroy,
// _clockwait (steady_clock) and _timedwait (system_clock) and never
// pthread_cond_init.  Exits 0 when every count is exact; prints what failed
// otherwise.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			std::fprintf(stderr, "cxx: %s:%d: %s\n",	\
				     __FILE__, __LINE__, #cond);	\
			failures++;					\
		}							\
	} while (0)

// A bounded queue: producers wait for room, consumers for items.
class queue {
	std::mutex m;
	std::condition_variable not_full, not_empty;
	std::deque<long> items;
	size_t cap;
	bool closed = false;

public:
	explicit queue(size_t c) : cap(c) {}
	void push(long v)
	{
		std::unique_lock<std::mutex> l(m);
		not_full.wait(l, [&] { return items.size() < cap; });
		items.push_back(v);
		not_empty.notify_one();
	}
	bool pop(long &v)
	{
		std::unique_lock<std::mutex> l(m);
		not_empty.wait(l, [&] { return !items.empty() || closed; });
		if (items.empty())
			return false;
		v = items.front();
		items.pop_front();
		not_full.notify_one();
		return true;
	}
	void close()
	{
		std::lock_guard<std::mutex> l(m);
		closed = true;
		not_empty.notify_all();
	}
};

static void producer_consumer()
{
	const long per = 20000;
	const int np = 3, nc = 3;
	queue q(8);
	std::vector<std::thread> prod, cons;
	std::vector<long> sums(nc), counts(nc);

	for (int i = 0; i < nc; i++)
		cons.emplace_back([&, i] {
			long v;
			while (q.pop(v)) {
				sums[i] += v;
				counts[i]++;
			}
		});
	for (int i = 0; i < np; i++)
		prod.emplace_back([&, i] {
			for (long k = 1; k <= per; k++)
				q.push(k + i * per);
		});
	for (auto &t : prod)
		t.join();
	q.close();
	for (auto &t : cons)
		t.join();
	long n = 0, s = 0;
	for (int i = 0; i < nc; i++) {
		n += counts[i];
		s += sums[i];
	}
	const long total = np * per;
	CHECK(n == total);
	CHECK(s == total * (total + 1) / 2);
}

static void timed_waits()
{
	std::mutex m;
	std::condition_variable cv;
	std::unique_lock<std::mutex> l(m);

	auto t0 = std::chrono::steady_clock::now();
	CHECK(cv.wait_for(l, 20ms) == std::cv_status::timeout);
	CHECK(std::chrono::steady_clock::now() - t0 >= 20ms);
	t0 = std::chrono::steady_clock::now();
	CHECK(cv.wait_until(l, t0 + 20ms) == std::cv_status::timeout);
	CHECK(std::chrono::steady_clock::now() - t0 >= 20ms);
	auto s0 = std::chrono::system_clock::now();
	CHECK(cv.wait_until(l, s0 + 20ms) == std::cv_status::timeout);
	CHECK(std::chrono::system_clock::now() - s0 >= 20ms);

	// A notify ends a long timed wait early, on both clocks.
	bool ready = false;
	std::thread t([&] {
		std::lock_guard<std::mutex> g(m);
		ready = true;
		cv.notify_one();
	});
	CHECK(cv.wait_for(l, 30s, [&] { return ready; }));
	t.join();
	ready = false;
	std::thread t2([&] {
		std::lock_guard<std::mutex> g(m);
		ready = true;
		cv.notify_all();
	});
	CHECK(cv.wait_until(l, std::chrono::system_clock::now() + 30s,
			    [&] { return ready; }));
	t2.join();
}

// condition_variable_any with a stop token: request_stop() wakes the wait.
static void stop_token_wait()
{
	std::mutex m;
	std::condition_variable_any cv;
	bool woke = false, stopped = false;

	{
		std::jthread t([&](std::stop_token st) {
			std::unique_lock<std::mutex> l(m);
			bool r = cv.wait(l, st, [] { return false; });
			woke = true;
			stopped = !r && st.stop_requested();
		});
		std::this_thread::sleep_for(10ms);	// let it block (either
							// order must work)
	}	// ~jthread: request_stop(), join()
	CHECK(woke);
	CHECK(stopped);

	// And a notify with the predicate true ends it normally.
	bool flag = false;
	std::jthread t([&](std::stop_token st) {
		std::unique_lock<std::mutex> l(m);
		woke = cv.wait(l, st, [&] { return flag; });
	});
	{
		std::lock_guard<std::mutex> g(m);
		flag = true;
	}
	cv.notify_all();
	t.join();
	CHECK(woke);
}

// ~condition_variable right after notify_all, by a woken thread (54185).
static void destroy_after_notify()
{
	for (int r = 0; r < 200; r++) {
		std::mutex m;
		auto *cv = new std::condition_variable;
		int waiting = 0;
		bool go = false, freed = false;
		std::vector<std::thread> ts;

		for (int i = 0; i < 3; i++)
			ts.emplace_back([&] {
				std::unique_lock<std::mutex> l(m);
				waiting++;
				cv->wait(l, [&] { return go; });
				if (!freed) {
					delete cv;
					freed = true;
				}
			});
		for (;;) {
			std::lock_guard<std::mutex> g(m);
			if (waiting == 3)
				break;
		}
		{
			std::lock_guard<std::mutex> g(m);
			go = true;
			cv->notify_all();
		}
		for (auto &t : ts)
			t.join();
		CHECK(freed);
	}
}

int main()
{
	producer_consumer();
	timed_waits();
	stop_token_wait();
	destroy_after_notify();
	if (failures) {
		std::fprintf(stderr, "cxx: %d checks failed\n", failures);
		return 1;
	}
	std::puts("cxx: ok");
	return 0;
}
