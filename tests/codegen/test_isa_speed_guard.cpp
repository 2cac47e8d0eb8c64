// Coarse speed guard (issue 11): at every ISA level this CPU has, the generated
// (10000x128)@(128x128) float32 product is no slower than 3x OpenBLAS, one thread each, in one
// test process. A guard against several-x regressions (the 19x of an AVX2 machine), not a
// benchmark: bench/run.sh measures the real ratios.
//
// OpenBLAS runs at the level it picked when it was loaded (this environment may force Haswell with
// OPENBLAS_CORETYPE; the test never changes it). When ember's level is below OpenBLAS's, the bound
// grows by the ratio of the two levels' peak flops per cycle (lanes x 2 with FMA), so the lower
// levels are held to 3x of what OpenBLAS would do there. Each level runs in a forked child (the
// level is fixed per process by EMBER_ISA), and OpenBLAS runs right after it: the guard keeps each
// level's smallest ratio over 3 rounds of such pairs, so a load that slows both sides (another test
// on the other core, a slow phase of a shared machine) cancels out. ctest runs it alone
// (RUN_SERIAL) besides.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/support/settings.h"

#if EMBER_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

constexpr int64_t kN = 10000, kK = 128, kM = 128;

std::vector<float> host_data(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return v;
}

template <class F>
double median_ms(F&& call, int reps) {
  call();
  call();
  std::vector<double> t;
  for (int i = 0; i < reps; i++) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    t.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Peak flops per cycle per FMA/multiply port of a level, relative: lanes x (2 with FMA).
double level_peak(const std::string& level) {
  if (level == "avx512") return 32;
  if (level == "avx2") return 16;
  if (level == "avx") return 8;
  if (level == "sse2") return 4;
  return 1;
}

std::vector<std::string> cpu_levels() {
  std::vector<std::string> l = {"scalar", "sse2"};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) l.push_back("avx2");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    l.push_back("avx512");
  return l;
}

// ember's median ms at `level`, measured in a forked child; < 0 when the child failed.
double ember_ms(const std::string& level) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    double ms = -1;
    try {
      ember::support::settings().isa = level;
      ember::set_num_threads(1);
      auto ad = host_data(kN * kK, 1), bd = host_data(kK * kM, 2);
      ember::Tensor a = ember::from_blob(ad.data(), {kN, kK}, ember::kFloat32);
      ember::Tensor b = ember::from_blob(bd.data(), {kK, kM}, ember::kFloat32);
      ember::realize({a, b});
      ember::Tensor out;
      ms = median_ms([&] { out = a.matmul(b).realize(); }, level == "scalar" ? 5 : 11);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ember at %s: %s\n", level.c_str(), e.what());
    }
    ssize_t w = write(fd[1], &ms, sizeof ms);
    _exit(w == sizeof ms ? 0 : 1);
  }
  close(fd[1]);
  double ms = -1;
  if (read(fd[0], &ms, sizeof ms) != sizeof ms) ms = -1;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return ms;
}

#if EMBER_HAVE_OPENBLAS
// OpenBLAS's level from the core it reports; "" when the name is not known here.
std::string openblas_level() {
  std::string c = openblas_get_corename();
  for (auto& ch : c) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* n : {"skylakex", "cooperlake", "sapphirerapids"})
    if (c == n) return "avx512";
  for (const char* n : {"haswell", "zen"})
    if (c == n) return "avx2";
  if (c == "sandybridge") return "avx";
  for (const char* n : {"nehalem", "core2", "penryn", "dunnington", "prescott", "atom"})
    if (c == n) return "sse2";
  return "";
}
#endif

TEST(IsaSpeedGuard, Matmul10000x128AtEveryLevelWithin3xOpenblas) {
#if !EMBER_HAVE_OPENBLAS
  GTEST_SKIP() << "OpenBLAS (libopenblas-dev) was not found when this test was built";
#else
  const std::string blas_level = openblas_level();
  if (blas_level.empty())
    GTEST_SKIP() << "OpenBLAS core " << openblas_get_corename() << " has no known ISA level";
  openblas_set_num_threads(1);
  auto ad = host_data(kN * kK, 1), bd = host_data(kK * kM, 2);
  std::vector<float> cd(static_cast<size_t>(kN * kM));
  auto levels = cpu_levels();
  std::vector<double> best_ratio(levels.size(), 1e300), ember_at(levels.size()),
      blas_at(levels.size());
  auto blas_ms = [&] {
    return median_ms(
        [&] {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kM, kK, 1.0f, ad.data(), kK,
                      bd.data(), kM, 0.0f, cd.data(), kM);
        },
        11);
  };
  for (int round = 0; round < 3; round++) {
    for (size_t i = 0; i < levels.size(); i++) {
      const double e = ember_ms(levels[i]);
      ASSERT_GT(e, 0) << "ember failed at level " << levels[i];
      const double b = blas_ms();
      if (e / b < best_ratio[i]) {
        best_ratio[i] = e / b;
        ember_at[i] = e;
        blas_at[i] = b;
      }
    }
  }
  for (size_t i = 0; i < levels.size(); i++) {
    const double bound = 3 * std::max(1.0, level_peak(blas_level) / level_peak(levels[i]));
    std::printf("ember at %-6s %8.2f ms; OpenBLAS (%s, %s) %.2f ms; ratio %.2f, bound %.2f\n",
                levels[i].c_str(), ember_at[i], openblas_get_corename(), blas_level.c_str(),
                blas_at[i], best_ratio[i], bound);
    EXPECT_LE(best_ratio[i], bound) << "ember at " << levels[i] << " is more than 3x slower than "
                                    << "OpenBLAS (scaled to the level)";
  }
#endif
}

}  // namespace
