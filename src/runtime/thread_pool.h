// A persistent thread pool: workers wait on a condition variable between jobs, so a launch costs a
// wake-up, not a thread creation. A range is cut into chunks that the threads claim one at a time
// (the caller too), so a thread whose core is busy with another process takes fewer chunks instead
// of holding everyone up, and the caller never waits for a worker that has not woken yet.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::runtime {

class ThreadPool {
 public:
  /// Starts threads - 1 workers. Throws ember::Error naming the counts when the OS refuses a
  /// thread (e.g. the process limit, `ulimit -u`); the workers already started are joined first.
  /// EMBER_TEST_FAIL_THREAD_START=i makes the start of worker i fail (tests).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  int threads() const { return threads_; }
  /// Calls fn(begin, end) over a partition of [0, n) into contiguous chunks (about 8 per thread,
  /// at least `min_chunk` indices each), each on whichever thread claims it first; returns when all
  /// have run. Not re-entrant: one parallel_for at a time. n < 2^40.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                    int64_t min_chunk = 1);

 private:
  void worker();
  void stop_and_join();
  // Claims and runs chunks of job `gen` until none is left.
  void run_chunks(uint64_t gen, const std::function<void(int64_t, int64_t)>& fn, int64_t n,
                  int64_t chunk);
  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  // The current job, read under mu_ by a waking worker.
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  uint64_t generation_ = 0;
  bool stop_ = false;
  // (generation mod 2^24) << 40 | next unclaimed index: a worker that woke for an older job fails
  // its compare-exchange instead of claiming a chunk of the new one with the old function.
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> done_{0};  // indices of the current job that have run
};

/// The process-wide pool, sized by EMBER_THREADS (default: hardware threads).
ThreadPool& thread_pool();
/// Resizes the process-wide pool (e.g. `ember train --threads`).
void set_num_threads(int n);
int num_threads();

}  // namespace ember::runtime
