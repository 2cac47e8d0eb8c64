// The one thread pool (ember/support/thread_pool.h), which runs both kernel launches and env
// steps. Chunks are claimed dynamically, so these check that every index runs exactly once per job
// over many back-to-back jobs (a worker that wakes late must not run a chunk of the next job with
// the previous job's function), also with more threads than cores and with concurrent callers;
// that a stalled thread leaves the rest to others; that exceptions reach the caller only after
// every started chunk finished; that nested calls run inline instead of deadlocking; that a pool
// of one thread runs inline; and that max_threads bounds the threads a job uses.
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ember/error.h"
#include "ember/support/thread_pool.h"

namespace ember::support {
namespace {

using std::chrono::milliseconds;

// Runs `jobs` random jobs on `pool` and checks that each index ran exactly once, in chunks of at
// least min_chunk (but the last).
void check_every_index_once(ThreadPool& pool, int jobs, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int job = 0; job < jobs; job++) {
    const int64_t n = static_cast<int64_t>(rng() % 300);  // 0 included
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

TEST(ThreadPool, EveryIndexRunsOnceAcrossManyJobs) {
  // 8 threads oversubscribe this machine's cores: workers are preempted mid-claim.
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    check_every_index_once(pool, 2000, static_cast<uint32_t>(threads));
  }
}

TEST(ThreadPool, EveryIndexRunsOnceWithConcurrentCallers) {
  // Three threads share one pool: one call at a time uses the workers, the others run inline.
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  for (uint32_t c = 0; c < 3; c++)
    callers.emplace_back([&pool, c] { check_every_index_once(pool, 1000, 100 + c); });
  for (auto& t : callers) t.join();
}

TEST(ThreadPool, ChunksShrinkSoTheThreadsFinishTogether) {
  // Each claim takes a share of the indices left: sizes never grow along the range, the first is
  // an eighth of it at 2 threads (105 row blocks: 14, not 105 / 16 = 7 throughout, which left one
  // thread a chunk behind), and the range ends in chunks of min_chunk.
  ThreadPool pool(2);
  for (int64_t min_chunk : {1, 3}) {
    std::mutex mu;
    std::map<int64_t, int64_t> size;  // begin -> length
    pool.parallel_for(
        105,
        [&](int64_t b, int64_t e) {
          std::lock_guard<std::mutex> l(mu);
          size[b] = e - b;
        },
        min_chunk);
    ASSERT_EQ(size.begin()->second, 14);
    int64_t prev = size.begin()->second, covered = 0;
    for (auto [b, len] : size) {
      EXPECT_EQ(b, covered);
      EXPECT_LE(len, prev) << "at " << b;
      EXPECT_GE(len, std::min<int64_t>(min_chunk, 105 - b)) << "at " << b;
      prev = len;
      covered += len;
    }
    EXPECT_EQ(covered, 105);
    EXPECT_EQ(size.rbegin()->second, std::min<int64_t>(min_chunk, 105 - size.rbegin()->first));
  }
}

TEST(ThreadPool, StalledThreadLeavesTheRestToOthers) {
  // The thread that takes index 0 sleeps in it; with a static half-and-half split it would also
  // own indices 1..n/2-1. Claiming chunk by chunk, the other thread runs nearly all of them.
  ThreadPool pool(2);
  const int64_t n = 64;
  std::vector<std::thread::id> who(n);
  pool.parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      who[static_cast<size_t>(i)] = std::this_thread::get_id();
      if (i == 0) std::this_thread::sleep_for(milliseconds(200));
    }
  });
  int64_t with_zero = 0;
  for (auto& t : who) with_zero += t == who[0];
  EXPECT_LT(with_zero, n / 4) << "the stalled thread ran " << with_zero << " of " << n;
}

TEST(ThreadPool, WorkerExceptionReachesTheCallerAfterRunningChunksFinish) {
  ThreadPool pool(3);
  const auto caller = std::this_thread::get_id();
  const int64_t n = 48;  // 25 chunks (of 4, 3, 2, then 1 index)
  std::atomic<int> started{0}, finished{0}, worker_chunks{0};
  std::vector<std::atomic<int>> hits(n);
  try {
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      started++;
      for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)]++;
      if (std::this_thread::get_id() == caller) {
        // Hold the caller in its chunk until a worker has taken one (at most 10 s), so the
        // exception is thrown on a worker thread, and finish well after it was thrown.
        for (int k = 0; k < 10000 && worker_chunks.load() == 0; k++)
          std::this_thread::sleep_for(milliseconds(1));
        std::this_thread::sleep_for(milliseconds(50));
      } else if (worker_chunks++ == 0) {
        throw ValueError("chunk " + std::to_string(b) + " failed");
      }
      finished++;
    });
    ADD_FAILURE() << "no exception";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("chunk ", 0), 0u) << e.what();
  }
  // Every chunk that started had ended (one by the throw) before the caller saw the error.
  EXPECT_EQ(started.load(), finished.load() + 1);
  for (int64_t i = 0; i < n; i++) EXPECT_LE(hits[static_cast<size_t>(i)].load(), 1) << i;
  // The pool is usable afterwards, with no error left over.
  check_every_index_once(pool, 200, 7);
}

TEST(ThreadPool, FirstExceptionWinsAndUnclaimedChunksAreSkipped) {
  ThreadPool pool(2);
  const int64_t n = 16;  // 12 chunks (of 2 indices, then of 1)
  std::atomic<int> ran{0};
  try {
    pool.parallel_for(n, [&](int64_t b, int64_t) {
      ran++;
      if (b == 0) throw std::runtime_error("first");
      // Later chunks are slow: if the error did not stop the claiming, they would all run.
      std::this_thread::sleep_for(milliseconds(20));
      throw std::logic_error("second");
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::exception& e) {
    // Chunk 0 is claimed first and throws at once; every other chunk sleeps before it throws.
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_LT(ran.load(), n / 2) << "chunks kept being claimed after the error";
}

TEST(ThreadPool, CallerExceptionIsRethrownToo) {
  ThreadPool pool(2);
  EXPECT_THROW(
      pool.parallel_for(1000, [&](int64_t b, int64_t) { throw IndexError(std::to_string(b)); }),
      IndexError);
  // Inline (one thread, or one index): the exception propagates directly.
  ThreadPool one(1);
  EXPECT_THROW(one.parallel_for(5, [](int64_t, int64_t) { throw IndexError("x"); }), IndexError);
  EXPECT_THROW(pool.parallel_for(1, [](int64_t, int64_t) { throw IndexError("x"); }), IndexError);
}

TEST(ThreadPool, NestedCallsRunInlineWithoutDeadlock) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  std::atomic<int> inner_elsewhere{0};
  pool.parallel_for(24, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) {
      const auto outer_thread = std::this_thread::get_id();
      pool.parallel_for(100, [&](int64_t ib, int64_t ie) {
        if (std::this_thread::get_id() != outer_thread) inner_elsewhere++;
        for (int64_t j = ib; j < ie; j++) sum += i * 100 + j;
      });
    }
  });
  EXPECT_EQ(sum.load(), 2400 * 2399 / 2);  // every (i, j) once
  EXPECT_EQ(inner_elsewhere.load(), 0);
  // The process-wide pool too (a kernel launched from an env step, say).
  std::atomic<int64_t> count{0};
  thread_pool().parallel_for(8, [&](int64_t b, int64_t e) {
    thread_pool().parallel_for(10, [&](int64_t ib, int64_t ie) { count += (ie - ib) * (e - b); });
  });
  EXPECT_EQ(count.load(), 80);
}

TEST(ThreadPool, PoolOfOneRunsInline) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.threads(), 1);
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::vector<std::thread::id> who;
  pool.parallel_for(100, [&](int64_t b, int64_t e) {
    calls.emplace_back(b, e);
    who.push_back(std::this_thread::get_id());
  });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], std::make_pair(int64_t{0}, int64_t{100}));
  EXPECT_EQ(who[0], std::this_thread::get_id());
  // max_threads = 1 on a larger pool is the same.
  ThreadPool four(4);
  calls.clear();
  who.clear();
  four.parallel_for(
      100,
      [&](int64_t b, int64_t e) {
        calls.emplace_back(b, e);
        who.push_back(std::this_thread::get_id());
      },
      1, 1);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(who[0], std::this_thread::get_id());
  EXPECT_THROW(ThreadPool(0), ValueError);
}

TEST(ThreadPool, MaxThreadsBoundsTheThreadsOfAJob) {
  ThreadPool pool(4);
  for (int cap : {2, 3}) {
    std::mutex mu;
    std::set<std::thread::id> ids;
    std::vector<std::atomic<int>> hits(64);
    pool.parallel_for(
        64,
        [&](int64_t b, int64_t e) {
          {
            std::lock_guard<std::mutex> l(mu);
            ids.insert(std::this_thread::get_id());
          }
          for (int64_t i = b; i < e; i++) hits[static_cast<size_t>(i)]++;
          std::this_thread::sleep_for(milliseconds(1));  // room for every worker to join
        },
        1, cap);
    EXPECT_LE(static_cast<int>(ids.size()), cap);
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, ProcessPoolIsSizedBySetNumThreads) {
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(thread_pool().threads(), 3);
  check_every_index_once(thread_pool(), 100, 3);
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
  EXPECT_THROW(set_num_threads(0), ValueError);
  EXPECT_EQ(num_threads(), 1);
}

}  // namespace
}  // namespace ember::support
