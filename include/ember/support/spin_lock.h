// A lock for critical sections of tens of instructions taken on every eager call (the interning
// table's shards, a storage's reader list), where a std::mutex's lock and unlock calls cost more
// than the work they guard (issue 11). It spins, and yields after a while so that a holder that was
// descheduled can finish on a busy machine. Not for sections that block or run long.
#pragma once
#include <atomic>
#include <thread>

namespace ember::support {

class SpinLock {
 public:
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire);)
      while (locked_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace ember::support
