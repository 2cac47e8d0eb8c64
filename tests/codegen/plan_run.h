// Helpers of the codegen plan tests that run kernels: random host buffers, a program run on
// copies of them, and the comparison of a kernel's outputs with a reference run (the interp
// device). Tolerance: |got - ref| <= 1e-4 |ref| + 1e-5 scale (scale = max(1, the largest finite
// |ref| of the output)), NaN and infinities exactly.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "schedule/kernel.h"

namespace ember::test {

// Random host data of a floating buffer: multiples of 1/8 in [-2, 2].
inline std::vector<uint64_t> random_buffer(const schedule::KernelBuffer& b, std::mt19937_64& g) {
  std::vector<uint64_t> words(static_cast<size_t>(b.numel) + 1);
  std::uniform_int_distribution<int> d(-16, 16);
  for (int64_t i = 0; i < b.numel; i++) {
    const double v = d(g) / 8.0;
    if (b.dtype == kFloat32)
      reinterpret_cast<float*>(words.data())[i] = static_cast<float>(v);
    else
      reinterpret_cast<double*>(words.data())[i] = v;
  }
  return words;
}

// Runs `p` on copies of `inputs` (outputs too: a kernel may store part of its output only).
inline std::vector<std::vector<uint64_t>> run(const runtime::Program& p,
                                              std::vector<std::vector<uint64_t>> bufs) {
  std::vector<void*> ptrs;
  for (auto& b : bufs) ptrs.push_back(b.data());
  p.launch(ptrs.data());
  return bufs;
}

inline double element(const std::vector<uint64_t>& b, ScalarType t, int64_t i) {
  return t == kFloat32 ? reinterpret_cast<const float*>(b.data())[i]
                       : reinterpret_cast<const double*>(b.data())[i];
}

// Failures (at most a few reported) of `got` against `ref` in the kernel's output slots.
inline int compare(const schedule::Kernel& k, const std::vector<std::vector<uint64_t>>& got,
                   const std::vector<std::vector<uint64_t>>& ref, const std::string& what) {
  int failures = 0;
  for (size_t o = 0; o < k.num_outputs(); o++) {
    const auto& b = k.buffers[o];
    double scale = 1;
    for (int64_t i = 0; i < b.numel; i++)
      if (std::isfinite(element(ref[o], b.dtype, i)))
        scale = std::max(scale, std::fabs(element(ref[o], b.dtype, i)));
    for (int64_t i = 0; i < b.numel; i++) {
      const double x = element(got[o], b.dtype, i), r = element(ref[o], b.dtype, i);
      const bool same = std::isnan(r)   ? std::isnan(x)
                        : std::isinf(r) ? x == r
                                        : std::fabs(x - r) <= 1e-4 * std::fabs(r) + 1e-5 * scale;
      if (!same && failures++ < 3)
        ADD_FAILURE() << k.name() << " as " << what << ": output " << o << "[" << i << "] " << x
                      << ", interp " << r;
    }
  }
  return failures;
}

}  // namespace ember::test
