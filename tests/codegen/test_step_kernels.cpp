// The plans of the training step's kernels around its products (codegen heuristic, DEBUG=3's
// "opts" line) and their values against double-precision host loops, at odd sizes. Runs under
// every ISA level (CMakeLists.txt):
//  - a sum over a short axis (dz @ W with K = 2, times 1 - h^2: the policy head's input gradient)
//    renders as an elementwise kernel (no register tile);
//  - column sums of few columns and many rows split the rows (column_split.h), bit-identical to
//    one pass over all the rows;
//  - a matrix-vector product (the value head) sums four rows at a time, each in its own order;
//  - a product with a short reduce (the first layer, K = 8) walks its rows outside its columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::debug3;
using test::float_lanes;
using test::input;

// Blocked pairwise sum of `v` in float, in the kernels' order (render_c.cpp's BlockedSum): runs
// of 256 terms added in order, each run's partial through a binary counter of partials.
float blocked_pairwise(const std::vector<float>& v) {
  float lv[64];
  uint64_t nblk = 0;
  for (size_t b = 0; b < v.size(); b += 256) {
    float acc = 0;
    for (size_t r = b; r < std::min(v.size(), b + 256); r++) acc = acc + v[r];
    int k = 0;
    for (uint64_t c = nblk; c & 1; c >>= 1) k++;
    float p = acc;
    for (int l = 0; l < k; l++) p = lv[l] + p;
    lv[k] = p;
    nblk++;
  }
  float p = 0;
  for (int l = 0; (nblk >> l) != 0; l++)
    if ((nblk >> l) & 1) p = p + lv[l];
  return p;
}

// The lines DEBUG=3 printed for the kernel named `name` (up to the next kernel), or "".
std::string kernel_block(const std::string& log, const std::string& name) {
  auto at = log.find("kernel " + name + " ");
  if (at == std::string::npos) return "";
  auto next = log.find("kernel ", at + 7);
  return log.substr(at, next == std::string::npos ? std::string::npos : next - at);
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

// got[j] = sum_i x[j * out_stride + i * term_stride] a[i] for `terms` terms against double
// precision, within 1e-5 of the sum of the terms' magnitudes.
void expect_weighted_sums(const std::vector<float>& x, const std::vector<float>& a,
                          const std::vector<float>& got, int64_t terms, int64_t out_stride,
                          int64_t term_stride) {
  for (size_t j = 0; j < got.size(); j++) {
    double r = 0, mag = 0;
    for (int64_t i = 0; i < terms; i++) {
      const double t = double(x[j * out_stride + i * term_stride]) * a[i];
      r += t;
      mag += std::fabs(t);
    }
    ASSERT_NEAR(got[j], r, 1e-5 * (1 + mag)) << j;
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

// Column sums against double loops. The sums are blocked and pairwise per column, whatever the
// grouping.
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
      // 10,001 rows: one unit of all the columns, the rows in slices (ColumnSumSplit... below).
      std::string block = kernel_block(log, "r_128_" + std::to_string(c.rows));
      ASSERT_FALSE(block.empty()) << log;
      EXPECT_NE(block.find("UPCAST(0,128) SPLIT_REDUCE(1,1024)"), std::string::npos) << block;
    }
    if (c.cols == 128 && c.rows <= 17) {
      std::string block = kernel_block(log, "r_128_" + std::to_string(c.rows));
      EXPECT_EQ(block.find("SPLIT_REDUCE"), std::string::npos) << block;
    }
    auto got = s.to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(c.cols));
    expect_weighted_sums(x.to_vector<float>(), a.to_vector<float>(), got, c.rows, 1, c.cols);
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

// A column sum of few columns over many rows: one unit of all the columns, the rows in slices of
// a power-of-two number of 256-row blocks, each a unit of work, the slices' totals combined by
// the last to finish. The result must be bit-identical to one pass over all the rows (checked
// against that order computed on the host), whatever the slices and the threads; the weighted
// sum and the bias sum beside it (the value head's weight gradient) within double's tolerance.
TEST(StepKernels, ColumnSumSplitIsBitIdenticalAtOddSizes) {
  manual_seed(15);
  struct Case {
    int64_t rows, cols;
    bool split;
  };
  // 10,001 rows: 40 blocks, slices of 4 (the last of 16 rows); 70,001 rows: 274 blocks, slices
  // of 32 (the last of 18 blocks, not a power of two); 2048 rows: 2 slices; 1 to 17 columns of
  // 10,001 rows are too little work to fan out; 257 columns make units of their own.
  std::vector<Case> cases = {{10001, 1, false},  {10001, 3, false},  {10001, 17, false},
                             {10001, 127, true}, {10001, 129, true}, {10001, 256, true},
                             {70001, 17, true},  {2048, 128, true},  {2047, 129, false},
                             {10001, 257, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.rows) + "x" + std::to_string(c.cols));
    Tensor x = input({c.rows, c.cols});
    Tensor s = x.sum({0});
    std::string log = debug3(s);
    // A size-1 axis drops out of the kernel's name.
    std::string name =
        "r_" + (c.cols > 1 ? std::to_string(c.cols) + "_" : std::string()) + std::to_string(c.rows);
    std::string block = kernel_block(log, name);
    ASSERT_FALSE(block.empty()) << log;
    EXPECT_EQ(block.find("SPLIT_REDUCE") != std::string::npos, c.split) << block;
    auto xv = x.to_vector<float>(), got = s.to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(c.cols));
    std::vector<float> col(c.rows);
    for (int64_t j = 0; j < c.cols; j++) {
      for (int64_t i = 0; i < c.rows; i++) col[i] = xv[i * c.cols + j];
      ASSERT_EQ(got[j], blocked_pairwise(col)) << j;
    }
    if (!c.split) continue;
    // The step's form: dz^T h and the bias's sum(dz), realized together.
    Tensor a = input({c.rows, 1});
    Tensor w = (x * a).sum({0}), b = a.sum({0});
    realize({w, b});
    auto av = a.to_vector<float>(), bv = b.to_vector<float>();
    double bs = 0, bmag = 0;
    for (int64_t i = 0; i < c.rows; i++) bs += av[i], bmag += std::fabs(av[i]);
    ASSERT_NEAR(bv[0], bs, 1e-5 * (1 + bmag));
    auto wv = w.to_vector<float>();
    ASSERT_EQ(wv.size(), static_cast<size_t>(c.cols));
    expect_weighted_sums(xv, av, wv, c.rows, 1, c.cols);
  }
}

// A matrix-vector product along a contiguous reduce (the value head, h . w: r_10000_128) sums
// rows in fours where a row's chain of vector adds is long, each row with its own accumulators
// in the same order: the first 10,000 rows of
// a 10,001-row product (rows one at a time) are bit-identical to a 10,000-row one (in fours).
TEST(StepKernels, MatrixVectorRowsInFoursAtOddSizes) {
  manual_seed(16);
  struct Case {
    int64_t n, k;
  };
  // 10,000 rows of 128 against the same rows of 10,001 (one at a time); 8 rows of 10,000 (summed
  // in blocks, each row in 8 interleaved accumulators at AVX2) against the same rows of 9.
  std::vector<Case> cases = {{10001, 128}, {10000, 128}, {1, 128},   {3, 128},   {17, 128},
                             {127, 128},   {129, 128},   {9, 10000}, {8, 10000}, {6, 10000}};
  std::vector<float> first;
  for (const Case& c : cases) {
    const int64_t n = c.n, k = c.k;
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k));
    manual_seed(17 + k);  // the same values for the same k
    std::vector<float> xv = input({std::max<int64_t>(n, 10001 * 128 / k), k}).to_vector<float>(),
                       wv = input({k}).to_vector<float>();
    Tensor x = from_blob(xv.data(), {n, k}, kFloat32), w = from_blob(wv.data(), {k}, kFloat32);
    Tensor y = (x * w).sum({1});
    std::string log = debug3(y);
    std::string name = "r_" + (n > 1 ? std::to_string(n) + "_" : std::string()) + std::to_string(k);
    std::string block = kernel_block(log, name);
    ASSERT_FALSE(block.empty()) << log;
    // Where a row's accumulator chain is at least 16 vectors long (not at AVX-512 for k = 128).
    const bool chains = k / std::max<int64_t>(4, float_lanes()) >= 16;
    const bool fours = chains && n % 4 == 0, twos = chains && !fours && n % 2 == 0;
    EXPECT_EQ(block.find("UPCAST(0,4)") != std::string::npos, fours) << block;
    EXPECT_EQ(block.find("UPCAST(0,2)") != std::string::npos, twos) << block;
    auto got = y.to_vector<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    expect_weighted_sums(xv, wv, got, k, k, 1);
    if (n == 10001 || n == 9) first = got;
    if (n == 10000 || n == 8) {
      for (int64_t i = 0; i < n; i++) ASSERT_EQ(got[i], first[i]) << i;
    }
  }
}

}  // namespace
