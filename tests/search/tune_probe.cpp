// A process of the tune cache tests (test_tune_cache.cpp): realizes a 7x13 @ 13x5 product and a
// row sum of squares under the environment it is given (BEAM, EMBER_CACHE_DIR, EMBER_THREADS,
// EMBER_ISA), checks the values against host loops, and prints "result ok" (or the first wrong
// value) and the search counters: "searches N", "hits N".
#include <cmath>
#include <cstdio>
#include <vector>

#include "ember/ember.h"

int main() {
  using namespace ember;
  const int64_t m = 7, k = 13, n = 5;
  std::vector<float> a(m * k), b(k * n);
  for (int64_t i = 0; i < m * k; i++) a[i] = static_cast<float>((i * 7) % 17 - 8) / 8;
  for (int64_t i = 0; i < k * n; i++) b[i] = static_cast<float>((i * 5) % 13 - 6) / 8;
  const Tensor ta = from_vector(a, IntList{m, k}), tb = from_vector(b, IntList{k, n});
  const std::vector<float> y = matmul(ta, tb).to_vector<float>();
  const std::vector<float> s = (ta * ta).sum({1}).to_vector<float>();
  int bad = 0;
  for (int64_t i = 0; i < m; i++) {
    double ss = 0;
    for (int64_t p = 0; p < k; p++) ss += double(a[i * k + p]) * a[i * k + p];
    if (std::fabs(s[i] - ss) > 1e-5 * (1 + std::fabs(ss)) && bad++ == 0)
      std::printf("wrong sum[%lld] %g, expected %g\n", static_cast<long long>(i), s[i], ss);
    for (int64_t j = 0; j < n; j++) {
      double r = 0;
      for (int64_t p = 0; p < k; p++) r += double(a[i * k + p]) * b[p * n + j];
      if (std::fabs(y[i * n + j] - r) > 1e-5 * (1 + std::fabs(r)) && bad++ == 0)
        std::printf("wrong y[%lld,%lld] %g, expected %g\n", static_cast<long long>(i),
                    static_cast<long long>(j), y[i * n + j], r);
    }
  }
  if (!bad) std::printf("result ok\n");
  const RuntimeStats st = runtime_stats_snapshot();
  std::printf("searches %lld\nhits %lld\n", static_cast<long long>(st.beam_searches),
              static_cast<long long>(st.beam_cache_hits));
  return bad ? 1 : 0;
}
