// ember/support/thread_pool.h — the one thread pool of the process (part of the support floor:
// kernel launches and vector-env steps share it, so one setting sizes both).
//
// Persistent workers: after a job they spin briefly (back-to-back kernel launches and env steps
// then cost no wake-up), then sleep. A range is cut into chunks that the threads claim one at a
// time, the caller too, so a thread whose core is busy with another process takes fewer chunks
// instead of holding everyone up, and the caller never waits for a worker that has not woken.
// Which thread runs which chunk varies from run to run: callers make each chunk's writes disjoint
// and independent of the thread, so results do not.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::support {

class ThreadPool {
 public:
  using Fn = std::function<void(int64_t begin, int64_t end)>;

  /// `threads` >= 1 counts the caller: starts threads - 1 workers. Throws ValueError for
  /// threads < 1, and Error naming the counts when the OS refuses a thread (e.g. the process
  /// limit, `ulimit -u`; the workers already started are joined first).
  /// EMBER_TEST_FAIL_THREAD_START=i makes the start of worker i fail (tests).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end) over a partition of [0, n) into contiguous chunks (each a quarter of
  /// one thread's share of the indices still unclaimed, at least `min_chunk`), each chunk once, on
  /// whichever of at most `max_threads` threads (0: all; the caller included) claims it first;
  /// returns when all have run. n < 2^40. Runs fn(0, n) on the calling thread when the pool has one
  /// thread, when called from inside a chunk (nested: no deadlock, no oversubscription) and when
  /// another thread's call is in progress (concurrent callers do not wait for each other). Errors:
  /// the first exception a chunk throws is rethrown here once the chunks already running have
  /// finished; the chunks nobody had claimed are skipped.
  void parallel_for(int64_t n, const Fn& fn, int64_t min_chunk = 1, int max_threads = 0);

 private:
  void worker();
  void stop_and_join();
  // Claims and runs chunks of job `gen` until none is left or a newer job replaced it.
  // A claim takes max(chunk, ceil(left / share)) indices.
  void run_chunks(uint64_t gen, const Fn* fn, int64_t n, int64_t chunk, int64_t share);
  // Records the first error and skips the unclaimed rest of job `gen`.
  void fail(uint64_t gen, int64_t n);

  std::vector<std::thread> workers_;
  std::mutex submit_;  // held by the one caller whose job runs
  // The current job, written and read under mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  const Fn* job_ = nullptr;
  int64_t n_ = 0, chunk_ = 1, share_ = 1;
  int max_threads_ = 0, joined_ = 0;  // joined_: threads that took part, the caller included
  bool stop_ = false;
  std::exception_ptr error_;
  // Bumped under mu_ for each job (and at stop); spinning workers watch it without the lock.
  std::atomic<uint64_t> generation_{0};
  // (generation mod 2^24) << 40 | next unclaimed index: a worker that woke for an older job fails
  // its compare-exchange instead of claiming a chunk of the new one with the old function.
  std::atomic<uint64_t> next_{0};
  std::atomic<int64_t> done_{0};  // indices of the current job that ran or were skipped
};

/// The process-wide pool: kernel launches (cpu device) and vector-env steps run on it. Sized by
/// set_num_threads, default $EMBER_THREADS or the hardware threads; ValueError when EMBER_THREADS
/// is not a positive integer.
ThreadPool& thread_pool();
/// Resizes the process-wide pool (`ember train --threads`, ember::set_num_threads): the old
/// workers are joined first. Not while a parallel_for runs on it. ValueError for n < 1.
void set_num_threads(int n);
int num_threads();

}  // namespace ember::support
