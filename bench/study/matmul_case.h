// The study's three matrix-product shapes (docs/training.md) and its protocol: 10 warm-up calls,
// then 30 timed calls, median. The third shape is the weight gradient x^T dy: A is stored (10000 x
// 128) and used transposed, as in a training step.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "../host_data.h"
#include "ember/support/clock.h"

namespace ember::study {

struct MatmulCase {
  const char* name;
  int64_t m, k, n;  // C[m, n] = op(A)[m, k] @ B[k, n]
  bool trans_a;     // A stored (k x m)
};
inline constexpr MatmulCase kMatmulCases[] = {
    {"(4x128) @ (128x128)", 4, 128, 128, false},
    {"(10000x128) @ (128x128)", 10000, 128, 128, false},
    {"(128x10000) @ (10000x128)", 128, 10000, 128, true},
};

/// Median milliseconds of `timed` calls after `warmup` calls.
inline double median_call_ms(const std::function<void()>& call, int warmup = 10, int timed = 30) {
  for (int i = 0; i < warmup; i++) call();
  std::vector<double> t;
  for (int i = 0; i < timed; i++) {
    const double t0 = ember::support::now_seconds();
    call();
    t.push_back((ember::support::now_seconds() - t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Deterministic data in [-0.5, 0.5) (an LCG), identical in every library's process.
inline std::vector<float> matmul_data(int64_t n, uint32_t seed) { return host_data(n, seed); }

}  // namespace ember::study
