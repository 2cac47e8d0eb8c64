// A tiny program for the kernel-cache tests: realizes one fused kernel and prints its result and
// the cache counters. `alt` selects a different kernel (another cache key).
#include <cstdio>
#include <cstring>

#include "ember/ember.h"

int main(int argc, char** argv) {
  using namespace ember;
  const bool alt = argc > 1 && std::strcmp(argv[1], "alt") == 0;
  try {
    Tensor x = arange(64, TensorOptions(kFloat32));
    Tensor y = alt ? (x * 5.0f - 2.0f).sum() : (x * 3.0f + 1.0f).sum();
    const float v = y.item<float>();
    const RuntimeStats& s = runtime_stats();
    std::printf("result %.0f compiler_runs %lld disk_hits %lld\n", v,
                static_cast<long long>(s.compiler_runs), static_cast<long long>(s.disk_cache_hits));
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 2;
  }
  return 0;
}
