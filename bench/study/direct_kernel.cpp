// The study's direct-kernel test: ember's generated function for (10000x128) @ (128x128), taken
// out of the engine (the compiled program a realize launched) and called on its own, against
// cblas_sgemm, on identical 64-byte-aligned buffers with the same thread count. Checks that both
// produce the same product (max |difference| <= 1e-4 * (1 + |value|)) and prints one JSON line
// with both medians (10 warm-up, `timed` calls). `study_direct_kernel [threads] [timed]`.
// Exit status 1 when the results differ or the capture is not one kernel. Not a test of speed.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "ember/ember.h"
#include "engine/realize.h"
#include "matmul_case.h"

using namespace ember;
using namespace ember::study;

namespace {

struct Aligned {
  float* p;
  explicit Aligned(size_t n)
      : p(static_cast<float*>(std::aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64))) {
    if (!p) std::abort();
  }
  ~Aligned() { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : get_num_threads();
  const int timed = argc > 2 ? std::atoi(argv[2]) : 30;
  if (threads < 1 || timed < 1) {
    std::fprintf(stderr, "usage: %s [threads >= 1] [timed >= 1]\n", argv[0]);
    return 2;
  }
  set_num_threads(threads);
  openblas_set_num_threads(threads);
  const int64_t M = 10000, K = 128, N = 128;
  auto ad = matmul_data(M * K, 1), bd = matmul_data(K * N, 2);
  Tensor a = from_blob(ad.data(), {M, K}, kFloat32), b = from_blob(bd.data(), {K, N}, kFloat32);
  realize({a, b});

  // The launches of one realize of a @ b, recorded by the engine.
  engine::LaunchLog log;
  Tensor c = a.matmul(b);
  {
    engine::RecordLaunches record(log);
    c.realize();
  }
  const std::vector<engine::Launch>& launches = log.launches;
  if (launches.size() != 1 || !launches[0].program) {
    std::fprintf(stderr, "expected one kernel for the product, got %zu launches\n",
                 launches.size());
    return 1;
  }
  const auto program = launches[0].program;  // keeps the shared object loaded

  // Identical aligned inputs for both; the kernel's slots are matched by size (A and B differ).
  Aligned A(M * K), B(K * N), C_ember(M * N), C_blas(M * N);
  std::memcpy(A.p, ad.data(), ad.size() * sizeof(float));
  std::memcpy(B.p, bd.data(), bd.size() * sizeof(float));
  std::vector<void*> slots;
  for (size_t i = 0; i < launches[0].buffers.size(); i++) {
    const int64_t n = launches[0].buffers[i]->numel();
    if (i == 0 && n == M * N)
      slots.push_back(C_ember.p);
    else if (i > 0 && n == M * K)
      slots.push_back(A.p);
    else if (i > 0 && n == K * N)
      slots.push_back(B.p);
    else {
      std::fprintf(stderr, "unexpected kernel buffer %zu of %lld elements\n", i,
                   static_cast<long long>(n));
      return 1;
    }
  }
  const double ember_ms = median_call_ms([&] { program->launch(slots.data()); }, 10, timed);
  const double blas_ms = median_call_ms(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, A.p,
                    int(K), B.p, int(N), 0.0f, C_blas.p, int(N));
      },
      10, timed);
  double max_err = 0;
  bool ok = true;
  for (int64_t i = 0; i < M * N; i++) {
    const double d = std::fabs(double(C_ember.p[i]) - double(C_blas.p[i]));
    max_err = std::max(max_err, d);
    if (d > 1e-4 * (1 + std::fabs(double(C_blas.p[i])))) ok = false;
  }
  const double flops = 2.0 * M * K * N;
  nlohmann::json r = {{"kind", "direct_kernel"},
                      {"shape", "(10000x128) @ (128x128)"},
                      {"kernel", program->name},
                      {"target", kernel_target()},
                      {"threads", threads},
                      {"ember_ms", ember_ms},
                      {"openblas_ms", blas_ms},
                      {"ember_gflops", flops / (ember_ms * 1e-3) * 1e-9},
                      {"openblas_gflops", flops / (blas_ms * 1e-3) * 1e-9},
                      {"ratio", ember_ms / blas_ms},
                      {"max_abs_difference", max_err},
                      {"results_agree", ok}};
  std::printf("%s\n", r.dump().c_str());
  return ok ? 0 : 1;
}
