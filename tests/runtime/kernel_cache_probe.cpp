// A tiny program for the kernel-cache tests: realizes one fused kernel and prints its result and
// the cache counters. `alt` selects a different kernel (another cache key); `batch` realizes ten
// kernels in one schedule (one batch, one cache entry).
#include <cstdio>
#include <cstring>
#include <vector>

#include "ember/ember.h"

int main(int argc, char** argv) {
  using namespace ember;
  const bool alt = argc > 1 && std::strcmp(argv[1], "alt") == 0;
  const bool batch = argc > 1 && std::strcmp(argv[1], "batch") == 0;
  try {
    Tensor x = arange(64, TensorOptions(kFloat32));
    float v = 0;
    if (batch) {  // sum over k = 1..10 of sum over i < 64 of (k i + 1) = 2016 * 55 + 640
      std::vector<Tensor> sums;
      for (int k = 1; k <= 10; k++) sums.push_back((x * static_cast<float>(k) + 1.0f).sum());
      realize(sums);
      for (auto& s : sums) v += s.item<float>();
    } else {
      Tensor y = alt ? (x * 5.0f - 2.0f).sum() : (x * 3.0f + 1.0f).sum();
      v = y.item<float>();
    }
    const RuntimeStats& s = runtime_stats();
    std::printf(
        "result %.0f compiler_runs %lld disk_hits %lld kernels_from_compiler %lld "
        "kernels_from_disk_cache %lld\n",
        v, static_cast<long long>(s.compiler_runs), static_cast<long long>(s.disk_cache_hits),
        static_cast<long long>(s.kernels_from_compiler),
        static_cast<long long>(s.kernels_from_disk_cache));
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
  return 0;
}
