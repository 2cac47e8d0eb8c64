#include "runtime/thread_pool.h"

#include <cstdlib>
#include <memory>

namespace ember::runtime {

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
  for (int i = 1; i < threads_; i++) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

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
