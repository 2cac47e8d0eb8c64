#include "thread_pool.h"

#include "ember/error.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>
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

constexpr int kIndexBits = 20;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr uint64_t generation_of(uint64_t claim) { return claim >> (2 * kIndexBits); }
constexpr int64_t size_of(uint64_t claim) { return (claim >> kIndexBits) & kIndexMask; }
constexpr int64_t index_of(uint64_t claim) { return claim & kIndexMask; }

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) {
    throw ValueError("ThreadPool: threads = " + std::to_string(threads) + " < 1");
  }
  workers_.reserve(threads - 1);
  try {
    for (int c = 1; c < threads; ++c) {
      if (const char* f = std::getenv("EMBER_TEST_FAIL_THREAD_START"); f && std::atoi(f) == c)
        throw std::system_error(EAGAIN, std::generic_category(), "injected failure");
      workers_.emplace_back([this] { worker_loop(); });
    }
  } catch (const std::system_error& e) {
    // A throwing constructor runs no destructor: stop and join the started workers here, before
    // the atomics they wait on go away.
    const size_t started = workers_.size();
    stop_and_join();
    throw ember::Error("ember: cannot start the env thread pool: started " +
                       std::to_string(started) + " of " + std::to_string(threads - 1) +
                       " worker threads (" + e.what() +
                       "); use fewer env threads or raise the process limit (ulimit -u)");
  }
}

void ThreadPool::stop_and_join() {
  stop_.store(true, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_release);
  epoch_.notify_all();
  for (auto& w : workers_) w.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { stop_and_join(); }

void ThreadPool::drain(uint64_t generation) {
  for (;;) {
    uint64_t claim = claim_.load(std::memory_order_acquire);
    const int64_t n = size_of(claim);
    if (generation_of(claim) != generation || index_of(claim) >= n) return;
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
    // The claimed index keeps the caller waiting, so the task is still alive.
    try {
      (*task_.load(std::memory_order_acquire))(index_of(claim));
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  uint32_t seen = 0;
  for (;;) {
    spin_while([&] { return epoch_.load(std::memory_order_acquire) == seen; });
    epoch_.wait(seen, std::memory_order_acquire);
    seen = epoch_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_relaxed)) return;
    drain(generation_of(claim_.load(std::memory_order_acquire)));
  }
}

void ThreadPool::parallel_for(int64_t n, const Task& task) {
  if (n <= 0) return;
  if (workers_.empty()) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  if (n > static_cast<int64_t>(kIndexMask)) {
    throw ValueError("ThreadPool: n = " + std::to_string(n) + " >= 2^20");
  }
  task_.store(&task, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  error_ = nullptr;
  // Opening the new generation publishes the task (release; claims acquire).
  const uint64_t generation = (generation_of(claim_.load(std::memory_order_relaxed)) + 1) &
                              ((uint64_t{1} << (64 - 2 * kIndexBits)) - 1);
  claim_.store((generation << (2 * kIndexBits)) | (static_cast<uint64_t>(n) << kIndexBits),
               std::memory_order_release);
  epoch_.fetch_add(1, std::memory_order_release);
  epoch_.notify_all();

  drain(generation);
  spin_while([&] { return done_.load(std::memory_order_acquire) != n; });
  for (int64_t d = done_.load(std::memory_order_acquire); d != n;
       d = done_.load(std::memory_order_acquire)) {
    done_.wait(d, std::memory_order_acquire);
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace ember::rl
