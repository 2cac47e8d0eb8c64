// The env thread pool: every index runs exactly once per call, across many back-to-back calls of
// varying size, and exceptions reach the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "ember/error.h"
#include "thread_pool.h"

namespace ember::rl {
namespace {

TEST(ThreadPool, EveryIndexRunsOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int round = 0; round < 2000; ++round) {
      const int64_t n = round % 7;  // includes 0 and sizes below and above the thread count
      std::vector<std::atomic<int>> hits(n);
      pool.parallel_for(n, [&](int64_t i) { hits[i].fetch_add(1, std::memory_order_relaxed); });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << round;
    }
  }
}

TEST(ThreadPool, RethrowsAfterAllIndicesRan) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallel_for(8,
                                 [&](int64_t i) {
                                   ran.fetch_add(1);
                                   if (i == 3) throw std::runtime_error("index 3");
                                 }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 8);
  // The pool is usable afterwards.
  std::atomic<int> again{0};
  pool.parallel_for(5, [&](int64_t) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 5);
  EXPECT_THROW(ThreadPool(0), ember::ValueError);
}

}  // namespace
}  // namespace ember::rl
