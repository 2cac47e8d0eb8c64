// Updates of runtime_stats() (ember/context.h). Realizes may run on several threads at once, so
// each counter is added to atomically; relaxed order, since the counters order nothing.
#pragma once
#include <atomic>
#include <cstdint>

namespace ember::engine {

inline void stat_add(int64_t& counter, int64_t n = 1) {
  std::atomic_ref<int64_t>(counter).fetch_add(n, std::memory_order_relaxed);
}
inline void stat_add(double& seconds, double dt) {
  std::atomic_ref<double>(seconds).fetch_add(dt, std::memory_order_relaxed);
}

}  // namespace ember::engine
