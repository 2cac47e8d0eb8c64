// Internal: a small persistent thread pool for stepping sub-environments in parallel.
// The calling thread takes part, so a pool of size 1 has no workers and runs inline.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::rl {

class ThreadPool {
 public:
  using Task = std::function<void(int64_t index)>;

  // threads >= 1, the caller included. Throws ember::Error when the OS refuses a thread (the
  // started workers are joined first); EMBER_TEST_FAIL_THREAD_START=i fails worker i (tests).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs task(i) once for every i in [0, n), each on exactly one thread, and returns when all are
  // done. Threads claim indices one at a time, so a worker the OS has not scheduled yet never
  // holds up the caller: the caller then runs the rest itself. The first exception is rethrown
  // after all indices ran. Not re-entrant: one parallel_for at a time.
  // n must be < 2^20.
  void parallel_for(int64_t n, const Task& task);

 private:
  void worker_loop();
  void stop_and_join();
  // Claims and runs indices of the task published as `generation` until none are left or a newer
  // task replaced it.
  void drain(uint64_t generation);

  std::vector<std::thread> workers_;
  // generation (24 bits) | task size n (20 bits) | next unclaimed index (20 bits), in one word:
  // a claim is a CAS on it, so a late worker's claim on a finished task fails instead of
  // touching the next one.
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> epoch_{0};  // bumped to wake workers (C++20 atomic wait/notify)
  std::atomic<int64_t> done_{0};    // indices of the current task finished
  std::atomic<const Task*> task_{nullptr};
  std::atomic<bool> stop_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace ember::rl
