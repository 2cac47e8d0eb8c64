// The default plan of reductions (codegen heuristic, DEBUG=3's "opts" line): the vector axis is
// chosen by the reduce's own input, not by loads of the elementwise ops after it. The values are
// checked too, against a host loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "plan_probe.h"

namespace {

using namespace ember;
using test::debug3;
using test::float_lanes;
using test::input;

// The value head minus its target: sum over the contiguous axis of a fused tanh; the epilogue reads
// `target` along the output axis. Walking the output axis instead (one strided tanh per element,
// the plan before) took 25 ms instead of 1 ms at batch 10,000.
TEST(ReducePlan, MatvecWithEpilogueLoadUnrollsTheContiguousReduceAxis) {
  const int64_t n = 1000, d = 128;
  Tensor x = input({n, d}), bias = input({d}), w = input({d}), target = input({n});
  Tensor v = ((x + bias).tanh() * w).sum({1}) - target;
  std::string log = debug3(v);
  auto at = log.find("kernel r_1000_128 ");
  ASSERT_NE(at, std::string::npos) << log;
  auto opts = log.substr(log.find("opts:", at),
                         log.find('\n', log.find("opts:", at)) - log.find("opts:", at));
  EXPECT_NE(opts.find("UNROLL(1,"), std::string::npos) << opts;
  // The output axis is upcast only to keep rows in fours (plan_heuristic.cpp: each row has its
  // own accumulators), where a row's accumulator chain is at least 16 vectors long (AVX2 and SSE2
  // at d = 128, not AVX-512), never by a vector's lanes as the vector axis.
  const bool fours = d / std::max<int64_t>(4, float_lanes()) >= 16;
  EXPECT_EQ(opts.find("UPCAST(0,4)") != std::string::npos, fours) << opts;
  EXPECT_EQ(opts.find("UPCAST(0,"), opts.find("UPCAST(0,4)")) << opts;
  auto xv = x.to_vector<float>(), bv = bias.to_vector<float>(), wv = w.to_vector<float>(),
       tv = target.to_vector<float>(), got = v.to_vector<float>();
  for (int64_t i = 0; i < n; i++) {
    double s = 0;
    for (int64_t j = 0; j < d; j++) s += std::tanh(double(xv[i * d + j]) + bv[j]) * wv[j];
    ASSERT_NEAR(got[i], s - tv[i], 1e-4 * (1 + std::fabs(s))) << i;
  }
}

// A column sum vectorises across its contiguous output axis.
TEST(ReducePlan, ColumnSumVectorisesAcrossTheOutput) {
  Tensor x = input({3000, 128});
  Tensor s = x.sum({0});
  std::string log = debug3(s);
  auto at = log.find("kernel r_128_3000 ");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("UPCAST(0,", at), std::string::npos) << log;
  auto xv = x.to_vector<float>(), got = s.to_vector<float>();
  for (int64_t j = 0; j < 128; j++) {
    double r = 0;
    for (int64_t i = 0; i < 3000; i++) r += xv[i * 128 + j];
    ASSERT_NEAR(got[j], r, 1e-4) << j;
  }
}

// The weight-gradient layout ((128 x 10000) @ (10000 x 128)) splits its reduce axis into slices
// for the thread pool (split-K) and keeps its rows in one block (each block would re-read the
// column operand); the slices' sum and a fused epilogue after it match a host loop. A batch-4
// product stays whole.
TEST(ReducePlan, WeightGradientSplitsTheReduceAxis) {
  const int64_t k = 10000, n = 128;
  Tensor x = input({k, n}), g = input({k, n}), bias = input({n});
  Tensor w = (matmul(x.t(), g) + bias) * 0.5;
  std::string log = debug3(w);
  auto at = log.find("kernel r_128_128_10000 ");
  ASSERT_NE(at, std::string::npos) << log;
  auto eol = log.find('\n', log.find("opts:", at));
  std::string opts = log.substr(at, eol - at);
  EXPECT_NE(opts.find("SPLIT_REDUCE(2,"), std::string::npos) << log;
  auto ob = opts.find("BLOCK_OUTER(0,");
  ASSERT_NE(ob, std::string::npos) << log;
  EXPECT_GE(std::stoi(opts.substr(ob + 14)), n) << log;
  auto xv = x.to_vector<float>(), gv = g.to_vector<float>(), bv = bias.to_vector<float>(),
       got = w.to_vector<float>();
  for (int64_t i = 0; i < n; i += 7)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t r = 0; r < k; r++) s += double(xv[r * n + i]) * gv[r * n + j];
      ASSERT_NEAR(got[i * n + j], (s + bv[j]) * 0.5, 2e-3) << i << "," << j;
    }
}

// An output of two rows (the actor head's weight gradient: fewer rows than the register tile)
// splits too, so that both threads share its 10,000-deep reduce; the clamped tile rows and the
// last, shorter slice still give the host loop's values.
TEST(ReducePlan, TwoRowWeightGradientSplits) {
  const int64_t k = 10000, n = 128;
  Tensor x = input({k, 2}), g = input({k, n});
  Tensor w = matmul(x.t(), g);
  std::string log = debug3(w);
  auto at = log.find("kernel r_2_128_10000 ");
  ASSERT_NE(at, std::string::npos) << log;
  auto eol = log.find('\n', log.find("opts:", at));
  EXPECT_NE(log.substr(at, eol - at).find("SPLIT_REDUCE(2,"), std::string::npos) << log;
  auto xv = x.to_vector<float>(), gv = g.to_vector<float>(), got = w.to_vector<float>();
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t r = 0; r < k; r++) s += double(xv[r * 2 + i]) * gv[r * n + j];
      ASSERT_NEAR(got[i * n + j], s, 2e-3) << i << "," << j;
    }
}

// relu(b[j] + sum_r x(i, r) w[j, r]) in double, x(i, r) at x's flat index i * xi + r * xr.
double relu_linear(const std::vector<float>& xv, int64_t xi, int64_t xr,
                   const std::vector<float>& wv, const std::vector<float>& bv, int64_t i,
                   int64_t j) {
  const auto k = static_cast<int64_t>(wv.size() / bv.size());
  double s = bv[j];
  for (int64_t r = 0; r < k; r++) s += double(xv[i * xi + r * xr]) * wv[j * k + r];
  return std::max(s, 0.0);
}

// A blocked reduce over few rows beside many columns (a deep convolution at batch 1: cols^T W^T,
// plan_heuristic.cpp's column_units): one row block, column blocks as the units of work, no
// split-K. At odd sizes (columns not a multiple of the tile, K not of the reduce block, rows
// clamped in the last tile), on two threads, against a host loop; with a fused epilogue.
TEST(ReducePlan, FewRowsBesideALargeWeightSplitTheColumns) {
  manual_seed(8);
  NoGradGuard no_grad;
  const int threads = get_num_threads();
  set_num_threads(2);
  struct Case {
    int64_t n, m, k;
  };
  for (auto [n, m, k] : {Case{13, 100, 3000}, Case{25, 200, 2500}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + "x" + std::to_string(k));
    Tensor cols = input({k, n}), w = input({m, k}), b = input({m});
    Tensor y = (matmul(cols.t(), w.t()) + b).relu();
    const std::string log = debug3(y);
    const auto at = log.find("kernel r_" + std::to_string(n) + "_" + std::to_string(m) + "_" +
                             std::to_string(k) + " ");
    ASSERT_NE(at, std::string::npos) << log;
    const auto from = log.find("opts:", at);
    const std::string opts = log.substr(from, log.find('\n', from) - from);
    EXPECT_NE(opts.find("BLOCK_COLS(1,"), std::string::npos) << opts;
    EXPECT_NE(opts.find("BLOCK_REDUCE(2,"), std::string::npos) << opts;
    EXPECT_EQ(opts.find("SPLIT_REDUCE"), std::string::npos) << opts;
    const auto ob = opts.find("BLOCK_OUTER(0,");
    ASSERT_NE(ob, std::string::npos) << opts;
    EXPECT_GE(std::stoll(opts.substr(ob + 14)), n) << opts;
    const auto xv = cols.to_vector<float>(), wv = w.to_vector<float>(), bv = b.to_vector<float>(),
               got = y.to_vector<float>();
    for (int64_t e = 0; e < n * m; e++)
      ASSERT_NEAR(got[e], relu_linear(xv, 1, n, wv, bv, e / m, e % m), 1e-3)
          << e / m << "," << e % m;
  }
  set_num_threads(threads);
}

// A short reduce over many columns (a pointwise convolution W x with few input channels, e.g.
// MobileNetV2's 16 -> 96 at 112x112): column blocks whose panel fits L1, rows outside within a
// block (plan_heuristic.cpp's short_reduce_columns), not each column tile over every output row.
// K over 1..32 at odd sizes (rows clamped in the last tile, columns not a multiple of the tile
// nor of the block), batched with a per-row bias, on 1 and 2 threads, against a host loop.
TEST(ReducePlan, ShortReduceBlocksTheColumns) {
  manual_seed(11);
  NoGradGuard no_grad;
  const int threads = get_num_threads();
  const int64_t batch = 2, n = 37;
  // 4224 columns: a multiple of every ISA's column tile (read in place, the rule's case); 4099:
  // none (packed per column tile, columns outside: col_tile_panel's case), values only.
  for (int64_t m : {4224, 4099})
    for (int64_t k : {1, 2, 3, 5, 8, 13, 16, 17, 24, 27, 31, 32}) {
      SCOPED_TRACE("K = " + std::to_string(k) + ", " + std::to_string(m) + " columns");
      Tensor w = input({n, k}), x = input({batch, k, m}), b = input({n, 1});
      auto wv = w.to_vector<float>(), xv = x.to_vector<float>(), bv = b.to_vector<float>();
      for (int t : {1, 2}) {
        SCOPED_TRACE(std::to_string(t) + " threads");
        set_num_threads(t);
        Tensor y = matmul(w, x) + b;
        const std::string log = debug3(y);
        const std::string name = "kernel r_2_37_" + std::to_string(m) + "_" + std::to_string(k);
        // Unless a panel is packed (SSE2's broadcast panel: its own rows-outside order).
        if (m == 4224 && (k == 16 || k == 27)) {
          const auto at = log.find(name + " ");
          ASSERT_NE(at, std::string::npos) << log;
          const auto from = log.find("opts:", at);
          const std::string opts = log.substr(from, log.find('\n', from) - from);
          if (opts.find("PACK(") == std::string::npos) {
            EXPECT_NE(opts.find("BLOCK_COLS(2,"), std::string::npos) << opts;
            EXPECT_EQ(opts.find("COLS_OUTER"), std::string::npos) << opts;
          }
        }
        auto got = y.to_vector<float>();
        for (int64_t e = 0; e < batch * n * m; e++) {
          const int64_t bi = e / (n * m), i = e / m % n, j = e % m;
          double s = bv[i];
          for (int64_t r = 0; r < k; r++) s += double(wv[i * k + r]) * xv[(bi * k + r) * m + j];
          ASSERT_NEAR(got[e], s, 1e-4) << bi << "," << i << "," << j;
        }
      }
    }
  set_num_threads(threads);
}

// An expansion (a pointwise convolution to at least twice its input channels, ResNet's
// bottleneck conv3 W x + bias + residual, then ReLU): rows outside the columns within column
// blocks (plan_heuristic.cpp's expansion_rows_outer), not each column tile over every output row.
// Odd sizes: rows clamped in the last tile; 1600 columns read in place, 197 packed (not a multiple
// of any tile); batched; on 1 and 2 threads; the values against a host loop.
TEST(ReducePlan, ExpansionWalksRowsOutsideTheColumns) {
  manual_seed(13);
  NoGradGuard no_grad;
  const int threads = get_num_threads();
  struct Case {
    int64_t batch, n, m, k;
  };
  for (auto [batch, n, m, k] :
       {Case{1, 163, 1600, 64}, Case{2, 163, 1600, 64}, Case{1, 515, 197, 256}}) {
    SCOPED_TRACE(std::to_string(batch) + "x" + std::to_string(n) + "x" + std::to_string(m) + "x" +
                 std::to_string(k));
    Tensor w = input({n, k}), x = input({batch, k, m}), b = input({n, 1}), r = input({batch, n, m});
    auto wv = w.to_vector<float>(), xv = x.to_vector<float>(), bv = b.to_vector<float>(),
         rv = r.to_vector<float>();
    for (int t : {1, 2}) {
      SCOPED_TRACE(std::to_string(t) + " threads");
      set_num_threads(t);
      Tensor y = (matmul(w, x) + b + r).relu();
      const std::string log = debug3(y);
      const std::string name = "kernel r_" + (batch > 1 ? std::to_string(batch) + "_" : "") +
                               std::to_string(n) + "_" + std::to_string(m) + "_" +
                               std::to_string(k) + " ";
      const auto at = log.find(name);
      ASSERT_NE(at, std::string::npos) << log;
      const auto from = log.find("opts:", at);
      const std::string opts = log.substr(from, log.find('\n', from) - from);
      // AVX2 and wider (SSE2's 4-lane tiles may take its broadcast panel, its own order).
      if (float_lanes() >= 8) {
        EXPECT_EQ(opts.find("COLS_OUTER"), std::string::npos) << opts;
      }
      auto got = y.to_vector<float>();
      for (int64_t e = 0; e < batch * n * m; e++) {
        const int64_t bi = e / (n * m), i = e / m % n, j = e % m;
        double s = bv[i] + rv[e];
        for (int64_t q = 0; q < k; q++) s += double(wv[i * k + q]) * xv[(bi * k + q) * m + j];
        ASSERT_NEAR(got[e], std::max(s, 0.0), 1e-4) << bi << "," << i << "," << j;
      }
    }
  }
  set_num_threads(threads);
}

TEST(ReducePlan, SmallProductDoesNotSplit) {
  Tensor a = input({4, 128}), b = input({128, 128});
  std::string log = debug3(matmul(a, b));
  ASSERT_NE(log.find("kernel r_4_128_128 "), std::string::npos) << log;
  EXPECT_EQ(log.find("SPLIT_REDUCE"), std::string::npos) << log;
}

// nn::Linear (x @ W^T) at small batches: the dot kernel (render_dot.cpp) reads the weight in
// place, vectors along the reduce axis, with the whole batch one unit of work. Packing W^T at
// every launch (the plan before) cost 15-28 us for a product of 1-2 us. Past 32 rows the packed
// tile is faster (plan_heuristic.cpp, dot_plan) and takes over. Runs under every ISA level
// (CMakeLists.txt). The values are checked against a host loop.
TEST(ReducePlan, SmallLinearReadsTheWeightInPlace) {
  manual_seed(3);
  NoGradGuard no_grad;
  nn::Linear lin(128, 127);
  for (int64_t n : {1, 3, 4, 32, 33, 64}) {
    SCOPED_TRACE(n);
    Tensor x = input({n, 128});
    Tensor y = lin->forward(x).tanh();
    std::string log = debug3(y);
    // Batch 1 is a matrix-vector product (the plain reduce, unrolled along K).
    auto at =
        log.find(n == 1 ? "kernel r_127_128 " : "kernel r_" + std::to_string(n) + "_127_128 ");
    ASSERT_NE(at, std::string::npos) << log;
    auto opts = log.substr(log.find("opts:", at),
                           log.find('\n', log.find("opts:", at)) - log.find("opts:", at));
    if (n > 32) {
      EXPECT_NE(opts.find("PACK"), std::string::npos) << opts;  // the tiled product
    } else {
      EXPECT_EQ(opts.find("PACK"), std::string::npos) << opts;
    }
    if (n > 1 && n <= 32) {
      EXPECT_NE(opts.find("VECTORIZE(2,"), std::string::npos) << opts;  // along the reduce axis
      // One row block holds the whole batch: one unit of work, no fan-out.
      auto ob = opts.find("BLOCK_OUTER(0,");
      ASSERT_NE(ob, std::string::npos) << opts;
      EXPECT_GE(std::stoll(opts.substr(ob + 14)), n) << opts;
    }
    auto xv = x.to_vector<float>(), wv = lin->weight.to_vector<float>(),
         bv = lin->bias.to_vector<float>(), got = y.to_vector<float>();
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < 127; j++) {
        double s = bv[j];
        for (int64_t r = 0; r < 128; r++) s += double(xv[i * 128 + r]) * wv[j * 128 + r];
        ASSERT_NEAR(got[i * 127 + j], std::tanh(s), 1e-5) << i << "," << j;
      }
  }
}

// A classifier head at a small batch (x @ W^T + b, 8 x 1000 x 1280 in MobileNetV2): the dot
// kernel's batch is one row block, so its units are column blocks (BLOCK_COLS, whole column
// tiles), as many as a tiled product of that work gets (2 to 8, each of at least 2^19
// multiply-adds), where it ran on one thread; under 2^20 multiply-adds it stays one unit. Odd
// sizes (a short last column block, K not a multiple of the vector), on two threads; the values
// against a host loop.
TEST(ReducePlan, SmallBatchHeadSplitsItsColumns) {
  manual_seed(9);
  NoGradGuard no_grad;
  const int threads = get_num_threads();
  set_num_threads(2);
  struct Case {
    int64_t n, m, k, units;
  };
  for (auto [n, m, k, units] : {Case{8, 1001, 1283, 8}, Case{5, 333, 701, 2}, Case{3, 130, 1500, 1},
                                Case{4, 128, 128, 1}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + "x" + std::to_string(k));
    Tensor x = input({n, k}), w = input({m, k}), b = input({m});
    Tensor y = (matmul(x, w.t()) + b).relu();
    const std::string log = debug3(y);
    const std::string name =
        "kernel r_" + std::to_string(n) + "_" + std::to_string(m) + "_" + std::to_string(k) + " ";
    const auto at = log.find(name);
    ASSERT_NE(at, std::string::npos) << log;
    const auto from = log.find("opts:", at);
    const std::string opts = log.substr(from, log.find('\n', from) - from);
    ASSERT_NE(opts.find("dot:"), std::string::npos) << opts;
    const auto bc = opts.find("BLOCK_COLS(1,");
    const int64_t cols = bc == std::string::npos ? 0 : std::stoll(opts.substr(bc + 13));
    EXPECT_EQ(cols ? (m + cols - 1) / cols : 1, units) << opts;
    const auto xv = x.to_vector<float>(), wv = w.to_vector<float>(), bv = b.to_vector<float>(),
               got = y.to_vector<float>();
    for (int64_t e = 0; e < n * m; e++)
      ASSERT_NEAR(got[e], relu_linear(xv, k, 1, wv, bv, e / m, e % m), 1e-3)
          << e / m << "," << e % m;
  }
  set_num_threads(threads);
}

// A mid-sized product (64 to 129 rows): a single unit of work would leave one thread idle (64
// rows x W^T at AVX2: 2x oneDNN's time at 2 threads), so it is cut into 2 units of at least 2^19
// multiply-adds, 4 at twice that work (two products of 64 rows, each with its own weight: two
// units each); a product under 2^20 stays one unit. The units are row blocks or column blocks
// (BLOCK_COLS): 64 rows x W^T takes two column blocks, each packing half of W^T, where two row
// blocks (6 and 5 row tiles) would each pack all of it. Odd column counts (a padded last column
// block) and W in place (packed row by row) too. Runs under every ISA level; the values are
// checked against a host loop.
TEST(ReducePlan, MidSizeProductFansOut) {
  manual_seed(5);
  NoGradGuard no_grad;
  struct Case {
    int64_t batch, n, m;
    bool transposed;
    int64_t units;
  };
  for (auto [batch, n, m, transposed, units] :
       {Case{1, 40, 128, true, 1}, Case{1, 64, 128, true, 2}, Case{1, 129, 128, true, 4},
        Case{2, 64, 128, true, 4}, Case{1, 70, 127, true, 2}, Case{1, 70, 200, false, 2},
        Case{1, 100, 200, false, 4}, Case{2, 64, 200, false, 4}}) {
    SCOPED_TRACE(std::to_string(batch) + "x" + std::to_string(n) + "x" + std::to_string(m) +
                 (transposed ? " W^T" : " W"));
    std::vector<int64_t> xs{n, 128},
        ws = transposed ? std::vector<int64_t>{m, 128} : std::vector<int64_t>{128, m};
    if (batch > 1) xs.insert(xs.begin(), batch), ws.insert(ws.begin(), batch);
    Tensor x = input(xs), w = input(ws);
    Tensor y = matmul(x, !transposed ? w : batch == 1 ? w.t() : w.transpose(1, 2));
    std::string log = debug3(y);
    std::string name = "kernel r_" + (batch == 1 ? "" : std::to_string(batch) + "_") +
                       std::to_string(n) + "_" + std::to_string(m) + "_128 ";
    auto at = log.find(name);
    ASSERT_NE(at, std::string::npos) << log;
    auto from = log.find("opts:", at);
    std::string opts = log.substr(from, log.find('\n', from) - from);
    // The amount of the first `action(axis,` in the opts, or 0.
    auto amount = [&](const std::string& action, int axis) -> int64_t {
      auto a = opts.find(action + "(" + std::to_string(axis) + ",");
      return a == std::string::npos ? 0 : std::stoll(opts.substr(opts.find(',', a) + 1));
    };
    const int row = batch == 1 ? 0 : 1;
    const int64_t block = amount("BLOCK_OUTER", row), tm = amount("UPCAST", row + 1);
    ASSERT_GT(block, 0) << opts;
    ASSERT_GT(tm, 0) << opts;
    const int64_t mpad = (m + tm - 1) / tm * tm, cols = amount("BLOCK_COLS", row + 1);
    const int64_t cblocks = cols ? (mpad + cols - 1) / cols : 1;
    EXPECT_EQ(batch * ((n + block - 1) / block) * cblocks, units) << opts;
    if (batch == 1 && n == 64 && m == 128) {
      EXPECT_EQ(cblocks, 2) << opts;
    }
    auto xv = x.to_vector<float>(), wv = w.to_vector<float>(), got = y.to_vector<float>();
    for (int64_t i = 0; i < batch * n; i++)
      for (int64_t j = 0; j < m; j++) {
        const float* wb = wv.data() + i / n * 128 * m;
        double s = 0;
        for (int64_t r = 0; r < 128; r++)
          s += double(xv[i * 128 + r]) * wb[transposed ? j * 128 + r : r * m + j];
        ASSERT_NEAR(got[i * m + j], s, 1e-4) << i << "," << j;
      }
  }
}

// A batch of 4: the operand vectors of a k step are held in registers (HOLD) where the
// accumulators leave room: the tiled product's column vectors (x @ W, W in place) and the dot
// kernel's row and column vectors (x @ W^T) where they fit. GCC otherwise folded each load into
// every FMA that reads it at AVX2, and the tile waited on the load ports (0.67x and 0.77x the
// kernels' time held; 0.75x and 0.8x at AVX-512 on Zen 4). Not at the scalar level (no vectors).
// Runs under every ISA level; the values are checked against a host loop at odd column counts too.
TEST(ReducePlan, SmallBatchHoldsItsOperandVectors) {
  manual_seed(7);
  const bool held = float_lanes() > 1;
  for (bool transposed : {false, true})
    for (int64_t m : {128, 127, 17}) {
      SCOPED_TRACE(std::to_string(m) + (transposed ? " W^T" : " W"));
      Tensor x = input({4, 128}), w = transposed ? input({m, 128}) : input({128, m});
      Tensor y = matmul(x, transposed ? w.t() : w);
      std::string log = debug3(y);
      auto at = log.find("kernel r_4_" + std::to_string(m) + "_128 ");
      ASSERT_NE(at, std::string::npos) << log;
      auto from = log.find("opts:", at);
      std::string opts = log.substr(from, log.find('\n', from) - from);
      // The tiled product holds along the columns (axis 1); the dot kernel along k (axis 2)
      // where its tile's accumulators and operand vectors fit the registers less one, two of 32
      // (its 4x2 tile at AVX2; not the 2x6 tile it takes at odd column counts and at SSE2).
      bool fits = true;
      if (transposed) {
        auto up = [&](const char* a) { return std::stoll(opts.substr(opts.find(a) + 9)); };
        const int64_t tn = up("UPCAST(0,"), tc = up("UPCAST(1,");
        const int64_t regs = test::vector_registers() - (test::vector_registers() >= 32 ? 2 : 1);
        fits = tn * tc + tn + tc <= regs;
      }
      EXPECT_EQ(opts.find(transposed ? "HOLD(2,1)" : "HOLD(1,1)") != std::string::npos,
                held && fits)
          << opts;
      auto xv = x.to_vector<float>(), wv = w.to_vector<float>(), got = y.to_vector<float>();
      for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < m; j++) {
          double s = 0;
          for (int64_t r = 0; r < 128; r++)
            s += double(xv[i * 128 + r]) * wv[transposed ? j * 128 + r : r * m + j];
          ASSERT_NEAR(got[i * m + j], s, 1e-4) << i << "," << j;
        }
    }
}

// Batch norm's per-channel sums over (N, H, W) of an NCHW gradient times the normalised input:
// two reduce axes around the channel axis, the last (H W) contiguous. The per-channel operands
// (mean, scale) are read along the channel axis but are constant over the reduce: they must not
// make the strided channel axis the vector axis (a whole-channel upcast: one unit of work that
// gathers every load, 8x the time of walking H W).
TEST(ReducePlan, PerChannelSumWalksTheContiguousReduceAxis) {
  const int64_t n = 64, c = 16, l = 64;
  Tensor g = input({n, c, 8, 8}), x = input({n, c, 8, 8}), mean = input({1, c, 1, 1}),
         scale = input({1, c, 1, 1});
  Tensor s = (g * ((x - mean) * scale)).sum({0, 2, 3});
  std::string log = debug3(s);
  auto at = log.find("kernel r_16_64_64 ");
  ASSERT_NE(at, std::string::npos) << log;
  auto from = log.find("opts:", at);
  std::string opts = log.substr(from, log.find('\n', from) - from);
  EXPECT_EQ(opts.find("UPCAST(0,"), std::string::npos) << opts;
  EXPECT_NE(opts.find("UNROLL(2,"), std::string::npos) << opts;
  auto gv = g.to_vector<float>(), xv = x.to_vector<float>(), mv = mean.to_vector<float>(),
       cv = scale.to_vector<float>(), got = s.to_vector<float>();
  for (int64_t j = 0; j < c; j++) {
    double r = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t q = 0; q < l; q++) {
        const size_t at2 = static_cast<size_t>((i * c + j) * l + q);
        r += double(gv[at2]) * ((double(xv[at2]) - mv[j]) * cv[j]);
      }
    ASSERT_NEAR(got[j], r, 1e-3) << j;
  }
}

}  // namespace
