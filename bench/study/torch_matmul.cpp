// The study's matrix products in libtorch (torch::mm on float32 CPU tensors holding the same data
// as study_matmul's): `study_torch_matmul [threads] [timed]`, one JSON line per shape. A separate
// program so that libtorch's BLAS never shares a process with OpenBLAS / oneDNN. Not a test.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "matmul_case.h"

using namespace ember::study;

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const int timed = argc > 2 ? std::atoi(argv[2]) : 30;
  if (threads > 0) torch::set_num_threads(threads);
  torch::NoGradGuard no_grad;
  for (const MatmulCase& c : kMatmulCases) {
    auto ad = matmul_data(c.m * c.k, 1), bd = matmul_data(c.k * c.n, 2);
    torch::Tensor a = c.trans_a ? torch::from_blob(ad.data(), {c.k, c.m}).t()
                                : torch::from_blob(ad.data(), {c.m, c.k});
    torch::Tensor b = torch::from_blob(bd.data(), {c.k, c.n});
    torch::Tensor out = torch::empty({c.m, c.n});
    const double ms = median_call_ms([&] { torch::mm_out(out, a, b); }, 10, timed);
    const double flops = 2.0 * double(c.m) * double(c.k) * double(c.n);
    nlohmann::json r = {{"kind", "matmul"},
                        {"impl", "libtorch"},
                        {"shape", c.name},
                        {"threads", torch::get_num_threads()},
                        {"median_ms", ms},
                        {"gflops", flops / (ms * 1e-3) * 1e-9},
                        {"checksum", out.sum().item<double>()},
                        {"version", TORCH_VERSION}};
    std::printf("%s\n", r.dump().c_str());
  }
  return 0;
}
