// The plans of the training step's kernels around its products (codegen heuristic, DEBUG=3's
// "opts" line) and their values against double-precision host loops, at odd sizes. Runs under
// every ISA level (CMakeLists.txt):
//  - column sums take up to half the vector registers of accumulators per unit of work;
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

std::string debug3(const Tensor& t) {
  Context& ctx = Context::get();
  int old = ctx.debug;
  ctx.debug = 3;
  testing::internal::CaptureStderr();
  realize({t});
  std::string out = testing::internal::GetCapturedStderr();
  ctx.debug = old;
  return out;
}

// The lines DEBUG=3 printed for the kernel named `name` (up to the next kernel), or "".
std::string kernel_block(const std::string& log, const std::string& name) {
  auto at = log.find("kernel " + name + " ");
  if (at == std::string::npos) return "";
  auto next = log.find("kernel ", at + 7);
  return log.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

Tensor input(IntList shape) {
  Tensor t = randn(shape);
  t.realize();
  return t;
}

// kernel_target() reads "avx2 (256-bit vectors, 16 registers, ...)"; the scalar level has 1 lane.
int64_t float_lanes() {
  std::string t = kernel_target();
  auto p = t.find("-bit vectors");
  if (p == std::string::npos) return 1;
  auto b = t.rfind('(', p);
  return std::stoll(t.substr(b + 1, p - b - 1)) / 32;
}
int64_t vector_registers() {
  std::string t = kernel_target();
  auto p = t.find(" registers");
  auto b = t.rfind(' ', p - 1);
  return p == std::string::npos ? 16 : std::stoll(t.substr(b + 1, p - b - 1));
}

// Column sums: 128 columns take min(64, half the vector registers' floats) per unit (2 units at
// AVX2 and AVX-512, 4 at SSE2; 16 scalar accumulators), so each unit's pass over the rows reads
// more of each row. The sums are blocked and pairwise per column, whatever the grouping.
TEST(StepKernels, ColumnSumsAtOddSizes) {
  manual_seed(13);
  struct Case {
    int64_t rows, cols;
  };
  std::vector<Case> cases;
  for (int64_t c : {1, 3, 17, 127, 128, 129, 256}) cases.push_back({10001, c});
  for (int64_t r : {1, 3, 17}) cases.push_back({r, 128});
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols));
    // A weighted column sum (the value head's weight gradient: dz^T h), as in the step.
    Tensor x = input({c.rows, c.cols}), a = input({c.rows, 1});
    Tensor s = (x * a).sum({0});
    std::string log = debug3(s);
    if (c.cols == 128 && c.rows > 17) {
      std::string block = kernel_block(log, "r_128_" + std::to_string(c.rows));
      ASSERT_FALSE(block.empty()) << log;
      const int64_t lanes = float_lanes();
      const int64_t want = lanes > 1 ? std::min<int64_t>(64, vector_registers() / 2 * lanes) : 16;
      EXPECT_NE(block.find("UPCAST(0," + std::to_string(want) + ")"), std::string::npos)
          << block << " want " << want;
    }
    auto xv = x.to_vector<float>(), av = a.to_vector<float>(), got = s.to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(c.cols));
    for (int64_t j = 0; j < c.cols; j++) {
      double r = 0, mag = 0;
      for (int64_t i = 0; i < c.rows; i++) {
        r += double(xv[i * c.cols + j]) * av[i];
        mag += std::fabs(double(xv[i * c.cols + j]) * av[i]);
      }
      ASSERT_NEAR(got[j], r, 1e-5 * (1 + mag)) << j;
    }
  }
}

}  // namespace
