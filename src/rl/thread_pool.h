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
  using Task = std::function<void(int64_t begin, int64_t end)>;

  explicit ThreadPool(int threads);  // threads >= 1, the caller included
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, n) into size() contiguous chunks (chunk c = [n*c/T, n*(c+1)/T)) and runs `task` on
  // each, chunk 0 on the caller; returns when all are done. The first exception is rethrown.
  // Not re-entrant: one parallel_for at a time.
  void parallel_for(int64_t n, const Task& task);

 private:
  void worker_loop(int chunk);
  void run_chunk(int chunk);

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> generation_{0};  // bumped to publish a task (C++20 atomic wait/notify)
  std::atomic<int> pending_{0};          // workers still running the current task
  std::atomic<bool> stop_{false};
  const Task* task_ = nullptr;
  int64_t n_ = 0;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace ember::rl
