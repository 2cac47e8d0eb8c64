// The kernel thread pool (runtime/thread_pool.h): chunks are claimed dynamically, so these check
// that every index runs exactly once per job, over many back-to-back jobs (a worker that wakes late
// must not run a chunk of the next job with the previous job's function), with a minimum chunk
// size, and that a thread stalled inside its chunk does not stop the others from taking the rest.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "runtime/thread_pool.h"

namespace ember::runtime {
namespace {

TEST(RuntimeThreadPool, EveryIndexRunsOnceAcrossManyJobs) {
  ThreadPool pool(3);
  std::mt19937 rng(1);
  for (int job = 0; job < 3000; job++) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 300);
    const int64_t min_chunk = 1 + static_cast<int64_t>(rng() % 7);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    std::atomic<bool> small_chunk{false};
    pool.parallel_for(
        n,
        [&, job](int64_t b, int64_t e) {
          if (e - b < min_chunk && e != n) small_chunk = true;
          for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)] += 1 + job % 2;
        },
        min_chunk);
    for (int64_t i = 0; i < n; i++)
      ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1 + job % 2) << "job " << job << " i " << i;
    ASSERT_FALSE(small_chunk.load()) << "job " << job;
  }
}

TEST(RuntimeThreadPool, StalledThreadLeavesTheRestToOthers) {
  // The thread that takes index 0 sleeps in it; with a static half-and-half split it would also
  // own indices 1..n/2-1. Claiming chunk by chunk, the other thread runs nearly all of them.
  ThreadPool pool(2);
  const int64_t n = 64;
  std::vector<std::thread::id> who(n);
  pool.parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      who[static_cast<size_t>(i)] = std::this_thread::get_id();
      if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  int64_t with_zero = 0;
  for (auto& t : who) with_zero += t == who[0];
  EXPECT_LT(with_zero, n / 4) << "the stalled thread ran " << with_zero << " of " << n;
}

}  // namespace
}  // namespace ember::runtime
