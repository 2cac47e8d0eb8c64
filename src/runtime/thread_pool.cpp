#include "runtime/thread_pool.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>

#include "ember/error.h"

namespace ember::runtime {

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  try {
    for (int i = 1; i < threads_; i++) {
      if (const char* f = std::getenv("EMBER_TEST_FAIL_THREAD_START"); f && std::atoi(f) == i)
        throw std::system_error(EAGAIN, std::generic_category(), "injected failure");
      workers_.emplace_back([this] { worker(); });
    }
  } catch (const std::system_error& e) {
    // Stop and join the workers already started before the members they wait on are destroyed
    // (a constructor that throws runs no destructor).
    const size_t started = workers_.size();
    stop_and_join();
    throw Error("ember: cannot start the kernel thread pool: started " + std::to_string(started) +
                " of " + std::to_string(threads_ - 1) + " worker threads (" + e.what() +
                "); use fewer threads (--threads, EMBER_THREADS) or raise the process limit "
                "(ulimit -u)");
  }
}

void ThreadPool::stop_and_join() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { stop_and_join(); }

namespace {
constexpr int kIndexBits = 40;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
uint64_t tag(uint64_t gen) { return (gen & 0xFFFFFF) << kIndexBits; }
}  // namespace

void ThreadPool::run_chunks(uint64_t gen, const std::function<void(int64_t, int64_t)>& fn,
                            int64_t n, int64_t chunk) {
  const uint64_t t = tag(gen);
  uint64_t cur = next_.load(std::memory_order_acquire);
  for (;;) {
    if ((cur & ~kIndexMask) != t) return;  // a newer job: its chunks are not ours to run
    const int64_t b = static_cast<int64_t>(cur & kIndexMask);
    if (b >= n) return;
    const int64_t e = std::min(n, b + chunk);
    if (!next_.compare_exchange_weak(cur, t | static_cast<uint64_t>(e), std::memory_order_acq_rel,
                                     std::memory_order_acquire))
      continue;
    // The claim succeeded, so [b, e) has not run and the caller is still waiting in parallel_for:
    // fn is alive.
    fn(b, e);
    done_.fetch_add(e - b, std::memory_order_release);
    cur = next_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker() {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n, chunk;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = n_;
      chunk = chunk_;
    }
    run_chunks(seen, *job, n, chunk);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                              int64_t min_chunk) {
  if (threads_ == 1 || n < 2) {
    if (n > 0) fn(0, n);
    return;
  }
  if (n > static_cast<int64_t>(kIndexMask)) throw Error("ThreadPool: range too large");
  // About 8 chunks per thread: small enough to even out a busy core, large enough that claiming
  // (one compare-exchange) and any per-call set-up in fn stay negligible.
  const int64_t chunk =
      std::max<int64_t>(std::max<int64_t>(1, min_chunk), (n + 8 * threads_ - 1) / (8 * threads_));
  uint64_t gen;
  {
    std::lock_guard<std::mutex> l(mu_);
    gen = ++generation_;
    job_ = &fn;
    n_ = n;
    chunk_ = chunk;
    done_.store(0, std::memory_order_relaxed);
    next_.store(tag(gen), std::memory_order_release);
  }
  cv_.notify_all();
  run_chunks(gen, fn, n, chunk);
  // Only chunks already claimed by running workers remain: wait for them, yielding the core (on a
  // shared machine the worker may need it).
  for (int spins = 0; done_.load(std::memory_order_acquire) < n; spins++) {
#if defined(__x86_64__) || defined(__i386__)
    if (spins < 64) {
      __builtin_ia32_pause();
      continue;
    }
#endif
    std::this_thread::yield();
  }
}

namespace {
std::unique_ptr<ThreadPool>& pool_ptr() {
  static std::unique_ptr<ThreadPool> p;
  return p;
}
int default_threads() {
  if (const char* e = std::getenv("EMBER_THREADS")) {
    int v = std::atoi(e);
    if (v > 0) return v;
  }
  unsigned h = std::thread::hardware_concurrency();
  return h ? static_cast<int>(h) : 1;
}
}  // namespace

ThreadPool& thread_pool() {
  auto& p = pool_ptr();
  if (!p) p = std::make_unique<ThreadPool>(default_threads());
  return *p;
}

void set_num_threads(int n) { pool_ptr() = std::make_unique<ThreadPool>(n); }
int num_threads() { return thread_pool().threads(); }

}  // namespace ember::runtime
