// The study's matrix products for one library per process: `study_matmul ember|onednn|openblas
// [threads] [timed]` prints one JSON line per shape (median ms, GFLOPS, checksum); `study_matmul
// peak [threads]` prints the measured peak of the level ember targets ($EMBER_ISA or the CPU's
// best). bench/study/study.py runs them one at a time. A benchmark, not a test.
#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "../peak.h"
#include "ember/build_info.h"
#include "ember/ember.h"
#include "matmul_case.h"

using namespace ember;
using namespace ember::study;

int main(int argc, char** argv) {
  const std::string lib = argc > 1 ? argv[1] : "";
  const int threads = argc > 2 ? std::atoi(argv[2]) : get_num_threads();
  const int timed = argc > 3 ? std::atoi(argv[3]) : 30;
  if (lib == "peak") {
    const std::string level = ember::build_info().isa;  // $EMBER_ISA, else the best the CPU has
    nlohmann::json r = {{"kind", "peak"},
                        {"level", level},
                        {"threads", threads},
                        {"gflops", bench::measured_peak_gflops(level, threads)}};
    std::printf("%s\n", r.dump().c_str());
    return 0;
  }
  if (lib != "ember" && lib != "onednn" && lib != "openblas") {
    std::fprintf(stderr, "usage: %s ember|onednn|openblas|peak [threads] [timed]\n", argv[0]);
    return 2;
  }
  if (threads < 1 || timed < 1) {
    std::fprintf(stderr, "%s: threads and timed must be >= 1\n", argv[0]);
    return 2;
  }
  set_num_threads(threads);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  for (const MatmulCase& c : kMatmulCases) {
    auto ad = matmul_data(c.m * c.k, 1), bd = matmul_data(c.k * c.n, 2);
    std::vector<float> cd(static_cast<size_t>(c.m * c.n));
    const int64_t lda = c.trans_a ? c.m : c.k;
    double ms = 0, kernel_ms = -1, checksum = 0;
    if (lib == "ember") {
      Tensor a = c.trans_a ? from_blob(ad.data(), {c.k, c.m}, kFloat32).t()
                           : from_blob(ad.data(), {c.m, c.k}, kFloat32);
      Tensor b = from_blob(bd.data(), {c.k, c.n}, kFloat32);
      realize({a, b});
      Tensor out;
      ms = median_call_ms([&] { out = a.matmul(b).realize(); }, 10, timed);
      // The kernels' own time (PROFILE data), without the realize around them.
      Context::get().profile = true;
      std::vector<double> kt;
      for (int i = 0; i < timed; i++) {
        clear_profile();
        out = a.matmul(b).realize();
        double s = 0;
        for (auto& e : profiled_kernels()) s += e.end_s - e.start_s;
        kt.push_back(s * 1e3);
      }
      Context::get().profile = false;
      std::sort(kt.begin(), kt.end());
      kernel_ms = kt[kt.size() / 2];
      for (float v : out.to_vector<float>()) checksum += v;
    } else {
      std::function<void()> call;
      if (lib == "onednn")
        call = [&] {
          dnnl_sgemm(c.trans_a ? 'T' : 'N', 'N', c.m, c.n, c.k, 1.0f, ad.data(), lda, bd.data(),
                     c.n, 0.0f, cd.data(), c.n);
        };
      else
        call = [&] {
          cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans, CblasNoTrans, int(c.m),
                      int(c.n), int(c.k), 1.0f, ad.data(), int(lda), bd.data(), int(c.n), 0.0f,
                      cd.data(), int(c.n));
        };
      ms = median_call_ms(call, 10, timed);
      for (float v : cd) checksum += v;
    }
    const double flops = 2.0 * double(c.m) * double(c.k) * double(c.n);
    nlohmann::json r = {{"kind", "matmul"},    {"impl", lib},
                        {"shape", c.name},     {"threads", threads},
                        {"median_ms", ms},     {"gflops", flops / (ms * 1e-3) * 1e-9},
                        {"checksum", checksum}};
    if (lib == "ember") {
      r["kernel_ms"] = kernel_ms;
      r["target"] = kernel_target();
    }
    std::printf("%s\n", r.dump().c_str());
  }
  return 0;
}
