// Benchmark inputs: n floats in [-0.5, 0.5) from a fixed linear congruential sequence, the same
// for every library a benchmark compares (bench_matmul, bench_matmul_paired, bench_step_products,
// and the study's products: study/matmul_case.h).
#pragma once
#include <cstdint>
#include <vector>

inline std::vector<float> host_data(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return v;
}
