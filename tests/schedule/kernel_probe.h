// Shared by the schedule tests: how many kernels a realize launches, and one test body run on the
// cpu device and on the interp reference.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "ember/ember.h"

namespace ember_schedule_test {

/// Kernels launched by realizing `ts` (RuntimeStats::kernels_launched before and after).
inline int64_t kernels_for(const std::vector<ember::Tensor>& ts) {
  auto before = ember::runtime_stats().kernels_launched;
  ember::realize(ts);
  return ember::runtime_stats().kernels_launched - before;
}

/// Runs `body` on the cpu device, then on interp; restores the cpu device.
inline void on_each_device(const std::function<void()>& body) {
  for (const char* d : {"cpu", "interp"}) {
    SCOPED_TRACE(d);
    ember::Context::get().device = d;
    body();
  }
  ember::Context::get().device = "cpu";
}

}  // namespace ember_schedule_test
