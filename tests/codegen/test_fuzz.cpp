// Codegen fuzz: random op graphs must give the same values on the `cpu` device (generated C), and
// on the `opencl` device (OpenCL C; PoCL in CI) and the `cuda` device (CUDA C++ on a GPU:
// scripts/gpu_check.sh) where they are available, as on the `interp` device
// (the reference evaluator). Each graph is built twice from its seed, once per
// device; many graphs share one realize, so one compiler run covers a batch of kernels.
//
// Tolerances: values that fuzz_graph.h proves exact (small dyadics, integers, bools, comparisons)
// must match bit for bit (NaN matches NaN). Other floating values (after exp, division, mean, ...)
// may differ by summation order and FMA contraction: |cpu - ref| <= 1e-4 * |ref| + 1e-5 * scale,
// scale = max(1, largest finite |ref| of that output); NaN and +-inf must match exactly.
//
// EMBER_FUZZ_GRAPHS (default 200), EMBER_FUZZ_OPENCL_GRAPHS (default 40: PoCL compiles each
// kernel with LLVM, slowly), EMBER_FUZZ_CUDA_GRAPHS (default 200) and EMBER_FUZZ_SEED (default 1)
// change the run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "ember/error.h"
#include "ember/support/shape_str.h"
#include "fuzz_graph.h"
#include "runtime/device.h"

namespace {

using ember::Tensor;

struct Result {
  ember::Shape shape;
  ember::ScalarType dtype;
  std::vector<double> data;
  bool exact;
};

int64_t env_int(const char* name, int64_t def) {
  const char* e = std::getenv(name);
  return e && *e ? std::atoll(e) : def;
}

// Builds every graph of `seeds` on `device`, realizes them together, reads the outputs.
std::vector<std::vector<Result>> run_batch(const std::string& device,
                                           const std::vector<uint64_t>& seeds, bool matmul) {
  ember::Context::get().device = device;
  std::vector<std::vector<fuzz::Val>> graphs;
  std::vector<Tensor> all;
  for (auto s : seeds) {
    try {
      graphs.push_back(matmul ? fuzz::build_matmul(s) : fuzz::build_graph(s));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << s << ": building the graph threw: " << e.what();
      graphs.emplace_back();
    }
    for (auto& v : graphs.back()) all.push_back(v.t);
  }
  try {
    ember::realize(all);
  } catch (const std::exception&) {  // find the failing graphs
    for (size_t i = 0; i < graphs.size(); i++) {
      std::vector<Tensor> ts;
      for (auto& v : graphs[i]) ts.push_back(v.t);
      try {
        ember::realize(ts);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "seed " << seeds[i] << " on " << device << ": " << e.what();
        graphs[i].clear();
      }
    }
  }
  std::vector<std::vector<Result>> out;
  for (auto& g : graphs) {
    out.emplace_back();
    for (auto& v : g)
      out.back().push_back({v.t.sizes(), v.t.dtype(), v.t.to_vector<double>(), fuzz::exact(v)});
  }
  ember::Context::get().device = "cpu";
  return out;
}

bool same_value(double a, double b, bool exact, double scale) {
  if (std::isnan(b)) return std::isnan(a);
  if (std::isnan(a)) return false;
  if (exact || std::isinf(b) || std::isinf(a)) return a == b;
  return std::fabs(a - b) <= 1e-4 * std::fabs(b) + 1e-5 * scale;
}

// Compares one graph's outputs on `device` with the interpreter's; returns the number of
// mismatching outputs.
int compare(const std::string& device, uint64_t seed, const std::vector<Result>& cpu,
            const std::vector<Result>& ref) {
  int bad = 0;
  for (size_t o = 0; o < ref.size() && o < cpu.size(); o++) {
    const Result &c = cpu[o], &r = ref[o];
    if (c.shape != r.shape || c.dtype != r.dtype) {
      ADD_FAILURE() << "seed " << seed << " output " << o << ": shape/dtype differ";
      bad++;
      continue;
    }
    double scale = 1;
    for (double v : r.data)
      if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < r.data.size(); i++) {
      if (same_value(c.data[i], r.data[i], r.exact, scale)) continue;
      ADD_FAILURE() << "seed " << seed << " output " << o << " (shape "
                    << ember::support::shape_str(r.shape) << " " << ember::dtype_name(r.dtype)
                    << (r.exact ? ", exact" : "") << ") element " << i << ": " << device << " "
                    << c.data[i] << " vs interp " << r.data[i];
      bad++;
      break;
    }
  }
  return bad;
}

void fuzz_run(uint64_t first_seed, int64_t count, int64_t batch, bool matmul,
              const std::string& device = "cpu") {
  auto t0 = std::chrono::steady_clock::now();
  int64_t outputs = 0, failed = 0;
  for (int64_t b = 0; b < count; b += batch) {
    std::vector<uint64_t> seeds;
    for (int64_t i = b; i < std::min(count, b + batch); i++) seeds.push_back(first_seed + i);
    auto cpu = run_batch(device, seeds, matmul);
    auto ref = run_batch("interp", seeds, matmul);
    ASSERT_EQ(cpu.size(), ref.size());
    for (size_t i = 0; i < seeds.size(); i++) {
      outputs += static_cast<int64_t>(ref[i].size());
      failed += compare(device, seeds[i], cpu[i], ref[i]) > 0;
    }
  }
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz (%s on %s): %lld graphs, %lld outputs, %lld failed, %.1f s\n",
              matmul ? "matmul" : "graphs", device.c_str(), static_cast<long long>(count),
              static_cast<long long>(outputs), static_cast<long long>(failed), dt);
}

TEST(CodegenFuzz, RandomGraphsCpuMatchesInterp) {
  int64_t n = env_int("EMBER_FUZZ_GRAPHS", 200);
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 100003, n, 40, false);
}

// Graphs that once failed (kept so that the fix stays): 200441 hit a GCC 12 AVX-512 miscompile
// of a masked uint8 -> int64 sum after loop unswitching.
TEST(CodegenFuzz, RegressionSeeds) {
  for (uint64_t s : {200441}) fuzz_run(s, 1, 1, false);
}

TEST(CodegenFuzz, MatmulsCpuMatchesInterp) {
  int64_t n = env_int("EMBER_FUZZ_GRAPHS", 200) / 4;
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 7919 + 1, n, 25, true);
}

// The opencl and cuda devices, where they are built and find a driver (and, for cuda, a GPU:
// scripts/gpu_check.sh): the cpu test's first graphs and products, with the same tolerances.
std::string unavailable(const char* device) {
  try {
    ember::runtime::get_device(device);
    return "";
  } catch (const ember::ValueError& e) {
    return e.what();
  }
}
std::string opencl_unavailable() { return unavailable("opencl"); }

TEST(CodegenFuzz, RandomGraphsOpenclMatchesInterp) {
  if (std::string why = opencl_unavailable(); !why.empty()) GTEST_SKIP() << why;
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 100003, env_int("EMBER_FUZZ_OPENCL_GRAPHS", 40), 40, false, "opencl");
}

TEST(CodegenFuzz, MatmulsOpenclMatchesInterp) {
  if (std::string why = opencl_unavailable(); !why.empty()) GTEST_SKIP() << why;
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 7919 + 1, env_int("EMBER_FUZZ_OPENCL_GRAPHS", 40) / 4, 25, true, "opencl");
}

TEST(CodegenFuzz, RandomGraphsCudaMatchesInterp) {
  if (std::string why = unavailable("cuda"); !why.empty()) GTEST_SKIP() << why;
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 100003, env_int("EMBER_FUZZ_CUDA_GRAPHS", 200), 40, false, "cuda");
}

TEST(CodegenFuzz, MatmulsCudaMatchesInterp) {
  if (std::string why = unavailable("cuda"); !why.empty()) GTEST_SKIP() << why;
  uint64_t seed = static_cast<uint64_t>(env_int("EMBER_FUZZ_SEED", 1));
  fuzz_run(seed * 7919 + 1, env_int("EMBER_FUZZ_CUDA_GRAPHS", 200) / 4, 25, true, "cuda");
}

}  // namespace
