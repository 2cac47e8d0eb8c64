#include "thread_pool.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

namespace ember::rl {
namespace {

// Spins up to ~kSpin while `still_waiting()` before the caller blocks in atomic::wait. A batched
// env step takes tens of microseconds, the same order as a futex wake-up, so a short spin keeps
// two threads faster than one; the bound keeps idle workers from burning a core for long.
constexpr auto kSpin = std::chrono::microseconds(100);

template <typename Pred>
void spin_while(Pred still_waiting) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int k = 1; still_waiting(); ++k) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (k % 64 == 0 && std::chrono::steady_clock::now() > deadline) return;
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) {
    throw std::invalid_argument("ThreadPool: threads = " + std::to_string(threads) + " < 1");
  }
  workers_.reserve(threads - 1);
  for (int c = 1; c < threads; ++c) workers_.emplace_back([this, c] { worker_loop(c); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_chunk(int chunk) {
  const int64_t t = size();
  const int64_t begin = n_ * chunk / t, end = n_ * (chunk + 1) / t;
  if (begin == end) return;
  try {
    (*task_)(begin, end);
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_loop(int chunk) {
  uint64_t seen = 0;
  for (;;) {
    spin_while([&] { return generation_.load(std::memory_order_acquire) == seen; });
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    run_chunk(chunk);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const Task& task) {
  if (workers_.empty()) {
    if (n > 0) task(0, n);
    return;
  }
  task_ = &task;
  n_ = n;
  error_ = nullptr;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  run_chunk(0);
  spin_while([&] { return pending_.load(std::memory_order_acquire) != 0; });
  for (int p = pending_.load(std::memory_order_acquire); p != 0;
       p = pending_.load(std::memory_order_acquire)) {
    pending_.wait(p, std::memory_order_acquire);
  }
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace ember::rl
