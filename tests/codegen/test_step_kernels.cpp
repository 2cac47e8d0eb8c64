// The plans of the training step's kernels around its products (codegen heuristic, DEBUG=3's
// "opts" line) and their values against double-precision host loops, at odd sizes. Runs under
// every ISA level (CMakeLists.txt):
//  - a sum over a short axis (dz @ W with K = 2, times 1 - h^2: the policy head's input gradient)
//    renders as an elementwise kernel (no register tile);
//  - column sums take up to half the vector registers of accumulators per unit of work;
//  - a product with a short reduce (the first layer, K = 8) walks its rows outside its columns.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::debug3;
using test::input;

// The lines DEBUG=3 printed for the kernel named `name` (up to the next kernel), or "".
std::string kernel_block(const std::string& log, const std::string& name) {
  auto at = log.find("kernel " + name + " ");
  if (at == std::string::npos) return "";
  auto next = log.find("kernel ", at + 7);
  return log.substr(at, next == std::string::npos ? std::string::npos : next - at);
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

// y = (x @ w) * (1 - h^2) against a double loop; x [n, k], w [k, m], h [n, m] (any layout).
void expect_short_product(const Tensor& x, const Tensor& w, const Tensor& h, const Tensor& y) {
  const int64_t n = x.size(0), k = x.size(1), m = w.size(1);
  auto xv = x.contiguous().to_vector<float>(), wv = w.contiguous().to_vector<float>(),
       hv = h.contiguous().to_vector<float>(), got = y.to_vector<float>();
  ASSERT_EQ(got.size(), static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      double s = 0;
      for (int64_t r = 0; r < k; r++) s += double(xv[i * k + r]) * wv[r * m + j];
      double hh = hv[i * m + j], want = s * (1 - hh * hh);
      ASSERT_NEAR(got[i * m + j], want, 1e-5 * (1 + std::fabs(want))) << i << "," << j;
    }
}

// The short-reduce kernel's plan: no actions (no "opts:" line, so no register tile) where its
// vector loop holds at least a vector of outputs, and a tiled or dot product otherwise.
void expect_short_plan(const std::string& log, int64_t n, int64_t m, int64_t k, bool w_rows) {
  std::string name = "r_" + std::to_string(n) + "_" + std::to_string(m) + "_" + std::to_string(k);
  std::string block = kernel_block(log, name);
  // A size-1 axis drops out of the kernel: batch 1 or one column is a matrix-vector product
  // (r_M_K, r_N_K), K = 1 an elementwise product (E_N_M).
  if (n == 1 || m == 1 || k == 1) return;
  ASSERT_FALSE(block.empty()) << log;
  const bool elementwise = k <= 4 && w_rows && m >= float_lanes();
  EXPECT_EQ(block.find("opts:") == std::string::npos, elementwise) << block;
}

TEST(StepKernels, ShortReduceIsElementwiseAtOddSizes) {
  manual_seed(11);
  struct Case {
    int64_t n, m, k;
  };
  std::vector<Case> cases;
  for (int64_t n : {1, 3, 17, 127, 129, 10001}) cases.push_back({n, 129, 2});
  for (int64_t m : {1, 3, 17, 127}) cases.push_back({17, m, 3});
  for (int64_t k : {1, 4, 5}) cases.push_back({129, 127, k});
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.n) + "x" + std::to_string(c.m) + "x" + std::to_string(c.k));
    Tensor x = input({c.n, c.k}), w = input({c.k, c.m}), h = input({c.n, c.m});
    Tensor y = matmul(x, w) * (1 - h * h);
    std::string log = debug3(y);
    expect_short_plan(log, c.n, c.m, c.k, true);
    expect_short_product(x, w, h, y);
  }
}

// Non-contiguous operands: x read through a transpose (constant along the output columns: still
// elementwise); w read through a transpose (strided along them: the tiled product).
TEST(StepKernels, ShortReduceWithTransposedOperands) {
  manual_seed(12);
  for (int64_t n : {3, 129}) {
    SCOPED_TRACE(n);
    const int64_t m = 127, k = 2;
    Tensor xt = input({k, n}), w = input({k, m}), h = input({n, m});
    Tensor y = matmul(xt.t(), w) * (1 - h * h);
    std::string log = debug3(y);
    expect_short_plan(log, n, m, k, true);
    expect_short_product(xt.t(), w, h, y);

    Tensor wt = input({m, k});
    Tensor y2 = matmul(xt.t(), wt.t()) * (1 - h * h);
    log = debug3(y2);
    expect_short_plan(log, n, m, k, false);
    expect_short_product(xt.t(), wt.t(), h, y2);
  }
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

// The first layer, tanh(s W^T + b) with K = 8: the whole weight fits L1, so the row tiles run
// outside the column tiles (no COLS_OUTER), writing the output a row at a time.
TEST(StepKernels, ShortProductWalksRowsOutside) {
  manual_seed(14);
  const int64_t k = 8, m = 128;
  Tensor w = input({m, k}), b = input({m});
  for (int64_t n : {17, 129, 10001}) {
    SCOPED_TRACE(n);
    Tensor s = input({n, k});
    Tensor y = (matmul(s, w.t()) + b).tanh();
    std::string log = debug3(y);
    std::string block = kernel_block(log, "r_" + std::to_string(n) + "_128_8");
    ASSERT_FALSE(block.empty()) << log;
    EXPECT_EQ(block.find("COLS_OUTER"), std::string::npos) << block;
    auto sv = s.to_vector<float>(), wv = w.to_vector<float>(), bv = b.to_vector<float>(),
         got = y.to_vector<float>();
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < m; j++) {
        double z = bv[j];
        for (int64_t r = 0; r < k; r++) z += double(sv[i * k + r]) * wv[j * k + r];
        ASSERT_NEAR(got[i * m + j], std::tanh(z), 1e-5) << i << "," << j;
      }
  }
}

}  // namespace
