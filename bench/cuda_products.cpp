// The cuda device's matrix products against cuBLAS (cublasSgemm, float32, no TF32) on the same
// GPU (issue 41; scripts/gpu_check.sh runs it). For each M K N: ember's product realized on the
// `cuda` device (one thread per output element, the first step of the CUDA dialect; each launch
// still copies its operands in and its result out, so both times are given: ember's whole
// realize, and cuBLAS's kernel alone on resident buffers), and the largest difference between
// the two results relative to the largest |value|. Not a test; exits 2 where there is no GPU.
//
//   bench_cuda_products [--reps R] [M K N]...   (default: the PPO step's products at batch
//                                               10,000, and 1024^3)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/context.h"
#include "ember/support/clock.h"
#include "ember/tensor.h"

using namespace ember;

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_cuda_products: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(2);
  }
}

void cublas_ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "bench_cuda_products: %s failed (cuBLAS status %d)\n", what, int(s));
    std::exit(1);
  }
}

struct Product {
  int64_t m, k, n;
};

// Seconds per product of ember's on the cuda device (the realize, copies included), its result.
double ember_seconds(const Tensor& a, const Tensor& b, int reps, std::vector<float>& out) {
  DeviceGuard g("cuda");
  Tensor c = matmul(a, b);
  out = c.to_vector<float>();  // compiles; checked against cuBLAS below
  const double t0 = support::now_seconds();
  for (int r = 0; r < reps; r++) realize({matmul(a, b)});
  return (support::now_seconds() - t0) / reps;
}

// Seconds per cublasSgemm on device-resident operands (row-major C = A B as column-major
// C^T = B^T A^T), and its result.
double cublas_seconds(cublasHandle_t h, const Product& s, const std::vector<float>& a,
                      const std::vector<float>& b, int reps, std::vector<float>& out) {
  float *da, *db, *dc;
  cuda_ok(cudaMalloc(&da, a.size() * 4), "cudaMalloc");
  cuda_ok(cudaMalloc(&db, b.size() * 4), "cudaMalloc");
  cuda_ok(cudaMalloc(&dc, size_t(s.m * s.n) * 4), "cudaMalloc");
  cuda_ok(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda_ok(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
  const float one = 1, zero = 0;
  auto gemm = [&] {
    cublas_ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one, db,
                          int(s.n), da, int(s.k), &zero, dc, int(s.n)),
              "cublasSgemm");
  };
  gemm();
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const double t0 = support::now_seconds();
  for (int r = 0; r < reps; r++) gemm();
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const double t = (support::now_seconds() - t0) / reps;
  out.resize(size_t(s.m * s.n));
  cuda_ok(cudaMemcpy(out.data(), dc, out.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 20;
  std::vector<Product> shapes;
  for (int i = 1; i < argc; i++) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (i + 2 < argc) {
      shapes.push_back({std::atoll(argv[i]), std::atoll(argv[i + 1]), std::atoll(argv[i + 2])});
      i += 2;
    } else {
      std::fprintf(stderr, "usage: bench_cuda_products [--reps R] [M K N]...\n");
      return 1;
    }
  }
  if (shapes.empty())  // the PPO step's: first layer, hidden layers, weight gradient; a square
    shapes = {{10000, 8, 128}, {10000, 128, 128}, {128, 10000, 128}, {1024, 1024, 1024}};
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
    std::fprintf(stderr, "bench_cuda_products: no CUDA GPU\n");
    return 2;
  }
  cublasHandle_t h;
  cublas_ok(cublasCreate(&h), "cublasCreate");
  std::printf("%8s %8s %8s %14s %14s %10s %12s\n", "M", "K", "N", "ember_cuda_ms", "cublas_ms",
              "ratio", "max_rel_diff");
  for (const Product& s : shapes) {
    manual_seed(1);
    Tensor a = randn({s.m, s.k}), b = randn({s.k, s.n});
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    std::vector<float> got, want;
    const double te = ember_seconds(a, b, reps, got);
    const double tc = cublas_seconds(h, s, av, bv, reps, want);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < want.size(); i++) {
      diff = std::max(diff, double(std::abs(got[i] - want[i])));
      scale = std::max(scale, double(std::abs(want[i])));
    }
    std::printf("%8lld %8lld %8lld %14.3f %14.3f %10.1f %12.2e\n", (long long)s.m, (long long)s.k,
                (long long)s.n, te * 1e3, tc * 1e3, te / tc, diff / std::max(scale, 1e-30));
    if (got.size() != want.size() || !(diff <= 1e-4 * scale)) {
      std::fprintf(stderr, "bench_cuda_products: ember's product differs from cuBLAS's\n");
      return 1;
    }
  }
  cublasDestroy(h);
  return 0;
}
