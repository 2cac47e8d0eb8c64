#include "runtime/thread_pool.h"

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
      workers_.emplace_back([this, i] { worker(i); });
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
void chunk(int64_t n, int parts, int i, int64_t& b, int64_t& e) {
  b = n * i / parts;
  e = n * (i + 1) / parts;
}
}  // namespace

void ThreadPool::worker(int id) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = n_;
    }
    int64_t b, e;
    chunk(n, threads_, id, b, e);
    if (b < e) (*job)(b, e);
    {
      std::lock_guard<std::mutex> l(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (threads_ == 1 || n < 2) {
    if (n > 0) fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    job_ = &fn;
    n_ = n;
    pending_ = threads_ - 1;
    generation_++;
  }
  cv_.notify_all();
  int64_t b, e;
  chunk(n, threads_, 0, b, e);
  if (b < e) fn(b, e);
  std::unique_lock<std::mutex> l(mu_);
  done_cv_.wait(l, [&] { return pending_ == 0; });
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
