// A persistent thread pool: workers wait on a condition variable between jobs, so a launch costs a
// wake-up, not a thread creation. Ranges are split into contiguous chunks, one per thread.
#pragma once
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
  /// Calls fn(begin, end) over a partition of [0, n); the caller's thread takes the first chunk.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void worker(int id);
  void stop_and_join();
  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0;
  uint64_t generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
};

/// The process-wide pool, sized by EMBER_THREADS (default: hardware threads).
ThreadPool& thread_pool();
/// Resizes the process-wide pool (e.g. `ember train --threads`).
void set_num_threads(int n);
int num_threads();

}  // namespace ember::runtime
