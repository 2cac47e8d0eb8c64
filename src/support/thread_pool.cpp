#include "ember/support/thread_pool.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "ember/error.h"
#include "ember/support/settings.h"

namespace ember::support {

namespace {

constexpr int kIndexBits = 40;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
uint64_t tag(uint64_t gen) { return (gen & 0xFFFFFF) << kIndexBits; }

// How long an idle worker spins before it sleeps. A batched env step or a small kernel takes tens
// of microseconds, the order of a futex wake-up, so workers still spinning when the next job comes
// make two threads faster than one; the bound keeps an idle pool from burning cores for long.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Nonzero while this thread runs a chunk (of any pool): a parallel_for from there runs inline.
thread_local int t_in_chunk = 0;
struct InChunk {
  InChunk() { ++t_in_chunk; }
  ~InChunk() { --t_in_chunk; }
};

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) throw ValueError("ThreadPool: threads = " + std::to_string(threads) + " < 1");
  workers_.reserve(static_cast<size_t>(threads - 1));
  const int fail_at = settings().fail_thread_start;  // before any worker: it may throw
  try {
    for (int i = 1; i < threads; i++) {
      if (fail_at == i)
        throw std::system_error(EAGAIN, std::generic_category(), "injected failure");
      workers_.emplace_back([this] { worker(); });
    }
  } catch (const std::system_error& e) {
    // Stop and join the workers already started before the members they wait on are destroyed
    // (a constructor that throws runs no destructor).
    const size_t started = workers_.size();
    stop_and_join();
    throw Error("cannot start the thread pool: started " + std::to_string(started) + " of " +
                std::to_string(threads - 1) + " worker threads (" + e.what() +
                "); use fewer threads (--threads, EMBER_THREADS) or raise the process limit "
                "(ulimit -u)");
  }
}

void ThreadPool::stop_and_join() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);  // ends the spinning
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { stop_and_join(); }

void ThreadPool::fail(uint64_t gen, int64_t n) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!error_) error_ = std::current_exception();
  }
  // Claim everything not yet claimed, and count it as done without running it.
  const uint64_t t = tag(gen);
  uint64_t cur = next_.load(std::memory_order_acquire);
  while ((cur & ~kIndexMask) == t && static_cast<int64_t>(cur & kIndexMask) < n) {
    if (next_.compare_exchange_weak(cur, t | static_cast<uint64_t>(n), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      done_.fetch_add(n - static_cast<int64_t>(cur & kIndexMask), std::memory_order_release);
      return;
    }
  }
}

void ThreadPool::run_chunks(uint64_t gen, const Fn* fn, int64_t n, int64_t chunk, int64_t share) {
  const InChunk in_chunk;
  const uint64_t t = tag(gen);
  uint64_t cur = next_.load(std::memory_order_acquire);
  for (;;) {
    if ((cur & ~kIndexMask) != t) return;  // a newer job: its chunks are not ours to run
    const int64_t b = static_cast<int64_t>(cur & kIndexMask);
    if (b >= n) return;
    // Guided: a share of what is left, so the last chunks are single indices and the threads
    // finish together (a fixed size of n / 16 left one thread up to a chunk behind: 56 of 105
    // row blocks against 49 in the step's products).
    const int64_t e = std::min(n, b + std::max(chunk, (n - b + share - 1) / share));
    if (!next_.compare_exchange_weak(cur, t | static_cast<uint64_t>(e), std::memory_order_acq_rel,
                                     std::memory_order_acquire))
      continue;
    // The claim succeeded, so [b, e) has not run and the caller is still waiting in parallel_for:
    // fn is alive.
    try {
      (*fn)(b, e);
    } catch (...) {
      fail(gen, n);
    }
    done_.fetch_add(e - b, std::memory_order_release);
    cur = next_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker() {
  uint64_t seen = 0;
  for (;;) {
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (int k = 1; generation_.load(std::memory_order_acquire) == seen; k++) {
      cpu_relax();
      if (k % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
    }
    const Fn* fn;
    int64_t n, chunk, share;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      if (joined_ >= max_threads_) continue;  // enough threads on this job
      joined_++;
      fn = job_;
      n = n_;
      chunk = chunk_;
      share = share_;
    }
    run_chunks(seen, fn, n, chunk, share);
  }
}

void ThreadPool::parallel_for(int64_t n, const Fn& fn, int64_t min_chunk, int max_threads) {
  if (n <= 0) return;
  if (n > static_cast<int64_t>(kIndexMask))
    throw ValueError("ThreadPool: range of " + std::to_string(n) + " indices, at most 2^40 - 1");
  const int limit = max_threads > 0 ? std::min(max_threads, threads()) : threads();
  // Nested or concurrent calls run inline; try_lock comes last (the thread may hold submit_).
  if (limit == 1 || n == 1 || t_in_chunk > 0 || !submit_.try_lock()) {
    const InChunk in_chunk;
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> hold(submit_, std::adopt_lock);
  // Each claim takes 1/(4 threads) of the indices left, at least min_chunk: ~10-12 chunks per
  // thread over a large range, small enough to even out a busy core, few enough that claiming (one
  // compare-exchange) and any per-call set-up in fn (a product's packing) stay negligible.
  const int64_t chunk = std::max<int64_t>(1, min_chunk);
  const int64_t share = 4 * static_cast<int64_t>(limit);
  uint64_t gen;
  {
    std::lock_guard<std::mutex> l(mu_);
    gen = generation_.load(std::memory_order_relaxed) + 1;
    job_ = &fn;
    n_ = n;
    chunk_ = chunk;
    share_ = share;
    max_threads_ = limit;
    joined_ = 1;
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    next_.store(tag(gen), std::memory_order_release);
    generation_.store(gen, std::memory_order_release);
  }
  cv_.notify_all();
  run_chunks(gen, &fn, n, chunk, share);
  // Only chunks already claimed by running workers remain: wait for them, yielding the core (on a
  // shared machine the worker may need it).
  for (int spins = 0; done_.load(std::memory_order_acquire) < n; spins++) {
    if (spins < 64) {
      cpu_relax();
      continue;
    }
    std::this_thread::yield();
  }
  // Every chunk's error was stored before its done_ count (release; acquired above).
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

namespace {

std::mutex g_pool_mu;
std::unique_ptr<ThreadPool> g_pool;
std::atomic<ThreadPool*> g_pool_ptr{nullptr};

int default_threads() {
  if (const int n = settings().threads) return n;  // EMBER_THREADS
  const unsigned h = std::thread::hardware_concurrency();
  return h ? static_cast<int>(h) : 1;
}

}  // namespace

ThreadPool& thread_pool() {
  if (ThreadPool* p = g_pool_ptr.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> l(g_pool_mu);
  if (!g_pool) {
    g_pool = std::make_unique<ThreadPool>(default_threads());
    g_pool_ptr.store(g_pool.get(), std::memory_order_release);
  }
  return *g_pool;
}

void set_num_threads(int n) {
  if (n < 1) throw ValueError("set_num_threads: " + std::to_string(n) + " threads, at least 1");
  std::lock_guard<std::mutex> l(g_pool_mu);
  if (g_pool && g_pool->threads() == n) return;
  // Join the old workers before starting new ones: under a process limit they count.
  g_pool_ptr.store(nullptr, std::memory_order_release);
  g_pool.reset();
  g_pool = std::make_unique<ThreadPool>(n);
  g_pool_ptr.store(g_pool.get(), std::memory_order_release);
}

int num_threads() { return thread_pool().threads(); }

}  // namespace ember::support
