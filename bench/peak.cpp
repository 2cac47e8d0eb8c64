#include "peak.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace ember::bench {

namespace {

// Each returns the flops done; the loops keep 12 independent chains (latency 4 x 2 ports, with
// slack) and start from values that stay finite and normal (x * 1 + 0), read through a volatile
// so nothing folds.
volatile float g_one = 1.0f, g_zero = 0.0f;

__attribute__((target("avx512f"))) double loop_avx512(long iters) {
  __m512 a[12], b = _mm512_set1_ps(g_one), c = _mm512_set1_ps(g_zero);
  for (auto& x : a) x = _mm512_set1_ps(g_one);
  for (long i = 0; i < iters; i++)
    for (auto& x : a) x = _mm512_fmadd_ps(x, b, c);
  // Summed lane-wise and read from lane 0, as in loop_avx2: GCC 12's _mm512_reduce_add_ps reads
  // _mm256_undefined_pd() and warns (-Wuninitialized) where it is inlined.
  __m512 s = a[0];
  for (int j = 1; j < 12; j++) s = _mm512_add_ps(s, a[j]);
  g_zero = _mm512_cvtss_f32(s) * 0;
  return 12.0 * 32 * static_cast<double>(iters);
}

__attribute__((target("avx2,fma"))) double loop_avx2(long iters) {
  __m256 a[12], b = _mm256_set1_ps(g_one), c = _mm256_set1_ps(g_zero);
  for (auto& x : a) x = _mm256_set1_ps(g_one);
  for (long i = 0; i < iters; i++)
    for (auto& x : a) x = _mm256_fmadd_ps(x, b, c);
  __m256 s = a[0];
  for (int j = 1; j < 12; j++) s = _mm256_add_ps(s, a[j]);
  g_zero = _mm256_cvtss_f32(s) * 0;
  return 12.0 * 16 * static_cast<double>(iters);
}

// No FMA: 7 multiply chains and 7 add chains (the two kinds issue on different ports; 16 xmm
// registers hold them with the two operands). The operands come from volatiles, so nothing folds.
template <bool kVector>
double loop_sse(long iters) {
  __m128 m[7], a[7], one = _mm_set1_ps(g_one), zero = _mm_set1_ps(g_zero);
  for (int j = 0; j < 7; j++) m[j] = a[j] = one;
  for (long i = 0; i < iters; i++)
    for (int j = 0; j < 7; j++) {
      if constexpr (kVector) {
        m[j] = _mm_mul_ps(m[j], one);
        a[j] = _mm_add_ps(a[j], zero);
      } else {
        m[j] = _mm_mul_ss(m[j], one);
        a[j] = _mm_add_ss(a[j], zero);
      }
    }
  __m128 s = _mm_add_ps(m[0], a[0]);
  for (int j = 1; j < 7; j++) s = _mm_add_ps(s, _mm_add_ps(m[j], a[j]));
  g_zero = _mm_cvtss_f32(s) * 0;
  return 14.0 * (kVector ? 4 : 1) * static_cast<double>(iters);
}

double run(const std::string& level, long iters) {
  if (level == "avx512") return loop_avx512(iters);
  if (level == "avx2") return loop_avx2(iters);
  if (level == "sse2") return loop_sse<true>(iters);
  if (level == "scalar") return loop_sse<false>(iters);
  return 0;
}

}  // namespace

double measured_peak_gflops(const std::string& level, int threads) {
  // Best of many short runs (about 10 ms each at avx512): on a shared or virtual machine the rate
  // swings by 2x from one moment to the next, and the fastest run is the least disturbed one. Three
  // long runs read as low as 52% of the peak that products then exceeded.
  const long iters = 4'000'000;
  double best = 0;
  for (int rep = 0; rep < 25; rep++) {
    std::vector<std::thread> ts;
    std::atomic<double> flops{0};
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&] {
        double f = run(level, iters), cur = flops.load();
        while (!flops.compare_exchange_weak(cur, cur + f)) {
        }
      });
    for (auto& t : ts) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, flops.load() / s * 1e-9);
  }
  return best;
}

}  // namespace ember::bench
