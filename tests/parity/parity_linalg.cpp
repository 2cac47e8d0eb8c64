// Parity: matmul / mm / bmm (1-D cases, batch broadcast, transposed and non-contiguous operands,
// empty dims, integer and float64 operands), fused expressions that mix the op families, larger
// shapes (register tiles, unrolling, threads); and the statistics of ember's random generators
// (they differ from libtorch's by design, so they are checked against the distributions).
#include <random>

#include "parity_grad.h"

#define NOGRAD .grad = false

// ---- matmul -----------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Matmul, two_d, GradMatmul, two_d) {
  return b.matmul(b.randn({3, 4}), b.randn({4, 5}));
}
PARITY_AND_BACKWARD_CASE(Matmul, vector_vector, GradMatmul, vector_vector) {
  return b.matmul(b.randn({7}), b.randn({7}));
}
PARITY_AND_BACKWARD_CASE(Matmul, vector_matrix, GradMatmul, vector_matrix) {
  return b.matmul(b.randn({4}), b.randn({4, 3}));
}
PARITY_AND_BACKWARD_CASE(Matmul, matrix_vector, GradMatmul, matrix_vector) {
  return b.randn({3, 4}).matmul(b.randn({4}));
}
PARITY_AND_BACKWARD_CASE(Matmul, batched, GradMatmul, batched) {
  return b.matmul(b.randn({2, 3, 4}), b.randn({2, 4, 5}));
}
PARITY_AND_BACKWARD_CASE(Matmul, batch_broadcast, GradMatmul, batch_broadcast) {
  return std::vector{b.matmul(b.randn({2, 1, 3, 4}), b.randn({3, 4, 2})),
                     b.matmul(b.randn({1, 3, 4}), b.randn({2, 4, 2}))};
}
PARITY_CASE(Matmul, batched_with_2d_and_1d) {
  return std::vector{b.matmul(b.randn({2, 3, 4}), b.randn({4, 5})),
                     b.matmul(b.randn({4}), b.randn({2, 4, 3})),
                     b.matmul(b.randn({2, 3, 4}), b.randn({4}))};
}
PARITY_AND_BACKWARD_CASE(Matmul, transposed_operands, GradMatmul, transposed_operands) {
  auto a = b.randn({4, 3}), c = b.randn({5, 4});
  return std::vector{b.matmul(a.t(), c.t()), b.mm(c, a), b.mm(a.t(), a)};
}
PARITY_AND_BACKWARD_CASE(Matmul, non_contiguous_operands, GradMatmul, non_contiguous_operands) {
  auto a = b.randn({6, 8}), d = b.randn({5, 8}), c = b.randn({3, 5, 4});
  return std::vector{b.matmul(a.slice(0, 0, 6, 2), d.slice(0, 1, 5, 2).t()),
                     b.matmul(c.permute({0, 2, 1}), c.slice(2, 0, 4, 2).slice(1, 0, 5, 1))};
}
// Right operands that are permutations: matmul composes its own transpose with theirs (one
// PERMUTE, or none where they cancel).
PARITY_CASE(Matmul, permuted_right_operand) {
  auto a = b.randn({2, 3, 4}), w = b.randn({5, 2, 4}), v = b.randn({5, 4});
  return std::vector{b.matmul(a, w.permute({1, 2, 0})), b.matmul(a, v.t()),
                     b.matmul(a, w.permute({1, 0, 2}).transpose(1, 2))};
}
PARITY_AND_BACKWARD_CASE(Matmul, expanded_operand, GradMatmul, expanded_operand) {
  return b.matmul(b.randn({1, 4}).expand({3, 4}), b.randn({4, 2}));
}
PARITY_CASE(Matmul, int_operands, NOGRAD) {
  auto a = b.randint(-5, 5, {3, 4}), c = b.randint(-5, 5, {4, 2});
  return std::vector{b.matmul(a, c), b.matmul(a.to(b.i32), c.to(b.i32))};
}
PARITY_AND_BACKWARD_CASE(Matmul, f64, GradMatmul, f64) {
  return b.matmul(b.randn({3, 5}, b.f64), b.randn({5, 2}, b.f64));
}
PARITY_CASE(Matmul, empty_inner_dim_gives_zeros) {
  return std::vector{b.matmul(b.randn({3, 0}), b.randn({0, 4})),
                     b.mm(b.randn({0, 3}), b.randn({3, 2})), b.matmul(b.randn({0}), b.randn({0}))};
}
PARITY_CASE(Matmul, square_32) { return b.mm(b.randn({32, 32}), b.randn({32, 32})); }
PARITY_AND_BACKWARD_CASE(Matmul, odd_sizes, GradMatmul, odd_sizes) {
  return b.mm(b.randn({7, 13}), b.randn({13, 11}));
}
PARITY_AND_BACKWARD_CASE(Matmul, bmm, GradMatmul, bmm_transposed) {
  auto a = b.randn({3, 2, 4}), c = b.randn({3, 5, 4});
  return std::vector{b.bmm(a, c.transpose(1, 2)), a.bmm(c.permute({0, 2, 1}))};
}
PARITY_AND_BACKWARD_CASE(Matmul, size1_dims, GradMatmul, size1_dims) {
  return std::vector{b.mm(b.randn({1, 4}), b.randn({4, 1})),
                     b.matmul(b.randn({3, 1}), b.randn({1, 3}))};
}

// ---- fused expressions ------------------------------------------------------------------------
PARITY_CASE(Fused, linear_relu) {
  auto x = b.randn({4, 6}), w = b.randn({5, 6}), bias = b.randn({5});
  return (b.matmul(x, w.t()) + bias).relu();
}
PARITY_CASE(Fused, mlp_softmax, .tol = parity::kTranscendental) {
  auto x = b.randn({3, 4}), w1 = b.randn({4, 8}), w2 = b.randn({8, 5});
  return b.matmul(b.matmul(x, w1).tanh(), w2).log_softmax(1);
}
PARITY_CASE(Fused, a_times_b_plus_c) {
  auto a = b.randn({16}), c = b.randn({16}), d = b.randn({16});
  return a * c + d;
}
PARITY_CASE(Fused, shared_subexpression_two_outputs) {
  auto x = b.randn({3, 4});
  auto y = x * 2 + 1;
  return std::vector{y.sum({1}), y * y, y.t()};
}
PARITY_CASE(Fused, mse_like) {
  auto p = b.randn({8, 3}), t = b.randn({8, 3});
  return (p - t).square().mean();
}
PARITY_CASE(Fused, gaussian_log_prob, .tol = parity::kTranscendental) {
  auto x = b.randn({4, 2}), mu = b.randn({4, 2}), log_std = b.rand({2}, -1, 0.5);
  auto z = (x - mu) / log_std.exp();
  return (z.square() * -0.5 - log_std - 0.9189385332046727).sum({-1});
}

// ---- random generators: statistics only -------------------------------------------------------
namespace {
double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double var_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size() - 1);
}
}  // namespace

TEST(RandomStats, rand_uniform) {
  ember::manual_seed(123);
  auto t = ember::rand({200, 100});
  ASSERT_EQ(t.dtype(), ember::kFloat32);
  ASSERT_EQ(t.sizes(), (ember::Shape{200, 100}));
  auto v = t.to_vector<double>();
  for (double x : v) ASSERT_TRUE(x >= 0 && x < 1) << x;
  EXPECT_NEAR(mean_of(v), 0.5, 0.01);         // sd of the mean ~0.003
  EXPECT_NEAR(var_of(v), 1.0 / 12.0, 0.004);  // 1/12 = 0.0833
  // Ten equal bins each hold about a tenth.
  std::vector<int> bins(10);
  for (double x : v) bins[static_cast<size_t>(x * 10)]++;
  for (int c : bins) EXPECT_NEAR(c, 2000, 250);
}

TEST(RandomStats, randn_normal) {
  ember::manual_seed(7);
  auto v = ember::randn({20000}).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 0.0, 0.03);
  EXPECT_NEAR(std::sqrt(var_of(v)), 1.0, 0.03);
  int within1 = 0;
  for (double x : v) within1 += std::abs(x) < 1;
  EXPECT_NEAR(within1 / 20000.0, 0.6827, 0.02);
  for (double x : v) ASSERT_TRUE(std::isfinite(x));
}

TEST(RandomStats, randint_range_and_dtype) {
  ember::manual_seed(99);
  auto t = ember::randint(-3, 5, {10000});
  ASSERT_EQ(t.dtype(), ember::kInt64);
  auto v = t.to_vector<int64_t>();
  std::vector<int> counts(8);
  for (auto x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 5);
    counts[static_cast<size_t>(x + 3)]++;
  }
  for (int c : counts) EXPECT_NEAR(c, 1250, 200);
  EXPECT_EQ(ember::randint(0, 4, {3}, ember::kInt32).dtype(), ember::kInt32);
}

TEST(RandomStats, seeded_reproducible_and_advancing) {
  ember::manual_seed(5);
  auto a = ember::rand({64}).to_vector<float>();
  auto a2 = ember::rand({64}).to_vector<float>();
  ember::manual_seed(5);
  auto b = ember::rand({64}).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, a2);
  ember::manual_seed(6);
  EXPECT_NE(ember::rand({64}).to_vector<float>(), a);
}

TEST(RandomStats, same_values_on_interp) {
  ember::manual_seed(11);
  auto cpu = ember::randn({257}).to_vector<float>();
  parity::DeviceGuard g("interp");
  ember::manual_seed(11);
  auto interp = ember::randn({257}).to_vector<float>();
  ASSERT_EQ(cpu.size(), interp.size());
  for (size_t i = 0; i < cpu.size(); i++) EXPECT_NEAR(cpu[i], interp[i], 1e-5) << i;
}

TEST(RandomStats, dtypes_and_empty) {
  EXPECT_EQ(ember::rand({3}, ember::kFloat64).dtype(), ember::kFloat64);
  EXPECT_EQ(ember::randn({2, 0}).numel(), 0);
  EXPECT_EQ(ember::rand({0}).to_vector<float>().size(), 0u);
  auto v = ember::rand({4000}, ember::kFloat64).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 0.5, 0.02);
}

// ---- larger shapes: register tiles, unrolled reductions and the thread pool ------------------
// (kernels above 32768 loop-space elements are split across threads; sizes that are not multiples
// of the tile widths exercise the remainders.)
PARITY_CASE(Large, elementwise_threaded) {
  auto x = b.randn({300, 257}), y = b.randn({257});
  return (x * y + 1).relu() - x.abs() * 0.5;
}
PARITY_CASE(Large, elementwise_on_transposed) {
  auto x = b.randn({190, 230});
  return x.t() * 2 + b.randn({230, 1});
}
PARITY_CASE(Large, row_and_column_sums) {
  auto x = b.randn({256, 300});
  return std::vector{x.sum({1}), x.sum({0}), x.mean({0}, true), x.amax({1})};
}
PARITY_CASE(Large, column_reduce_odd_sizes) {
  auto x = b.randn({129, 67, 5});
  return std::vector{x.sum({1}), x.amax({0}), x.amin({2}), x.sum({2, 0})};
}
// Sums over a non-innermost axis (bias gradients): odd widths and heights around the vector
// widths, a tall one past a summation block, non-contiguous inputs (a transposed and a strided
// view, a middle axis) and a fused producer.
PARITY_CASE(Large, column_reduce_sizes) {
  auto tall = b.randn({10001, 17}), sq = b.randn({129, 127}), t3 = b.randn({3, 1});
  auto x = b.randn({17, 129, 3}), w = b.randn({127, 129});
  return std::vector{tall.sum({0}),
                     sq.sum({0}),
                     t3.sum({0}),
                     b.randn({1, 3}).sum({0}),
                     w.t().sum({1}),
                     (sq * 2 + 1).tanh().sum({0}),
                     x.sum({0}),
                     x.sum({1}),
                     x.permute({2, 0, 1}).sum({1}),
                     sq.t().sum({0}, true)};
}
// A matrix-vector product whose epilogue reads a vector along the output (the value head minus
// its target): the reduce must still walk its contiguous axis.
PARITY_CASE(Large, column_reduce_matvec_epilogue, .tol = parity::kTranscendental) {
  auto x = b.randn({257, 128}), bias = b.randn({128}), w = b.randn({128}), t = b.randn({257});
  return ((x + bias).tanh() * w).sum({1}) + 0.5 - t;
}
PARITY_CASE(Large, argmax_rows, .grad = false) {
  auto x = b.randn({500, 130});
  return std::vector{x.argmax(1), x.argmin(0)};
}
PARITY_CASE(Large, softmax_rows, .tol = parity::kTranscendental) {
  return (b.randn({400, 100}) * 3).softmax(1);
}
// Products with K >= 17 take dyadic inputs (parity.h): exact sums, whatever the order, so an output
// near zero cannot turn the reference's summation order into a failure (it did: this bmm on a
// CPU whose BLAS kernel sums differently, 2e-6 apart at -0.0004).
PARITY_CASE(Large, matmul_64) { return b.mm(b.dyadic({64, 48}), b.dyadic({48, 64})); }
PARITY_CASE(Large, matmul_tall_threaded) { return b.mm(b.dyadic({512, 40}), b.dyadic({40, 96})); }
PARITY_CASE(Large, matmul_transposed_and_odd) {
  auto a = b.dyadic({37, 100}), c = b.dyadic({61, 37});
  return b.matmul(a.t(), c.t());
}
// Split-K (tall-skinny products: few output rows, a long reduce): odd K, odd output sizes, an
// epilogue after the slices' sum (a vector one and an element-wise tanh), a batch. Operands are
// uniform in [0, 1): the sums do not cancel, so the tolerance measures the summation (a normal
// 10,001-term dot product near zero differs from libtorch's by its rounding, ~1e-4).
PARITY_CASE(Large, matmul_split_k_odd) {
  auto a = b.rand({10001, 37}), c = b.rand({10001, 129});
  return b.matmul(a.t(), c);
}
PARITY_CASE(Large, matmul_split_k_epilogue, .tol = parity::kTranscendental) {
  auto a = b.rand({10001, 17}), c = b.rand({10001, 128}), bias = b.randn({128});
  auto p = b.matmul(a.t(), c);
  return std::vector{(p * 1e-4 + bias).tanh(), p * 0.5 + bias};
}
PARITY_CASE(Large, matmul_split_k_batched) {
  return b.bmm(b.rand({2, 33, 8193}), b.rand({2, 8193, 40}));
}
// Vector epilogues that read an operand per output row and one per column (the tiled renderer
// addresses each from one pointer): a product with row and column edges of the register tile, and
// one after a split-K sum whose column count is no multiple of a vector.
PARITY_CASE(Large, matmul_epilogue_row_and_column_operands) {
  auto p = b.matmul(b.dyadic({131, 17}), b.dyadic({17, 130}));
  auto q = b.matmul(b.rand({10001, 33}).t(), b.rand({10001, 129}));
  return std::vector{p * b.randn({131, 1}) + b.randn({130}),
                     q * 0.5 - b.rand({33, 1}) + b.randn({129})};
}
PARITY_CASE(Large, batched_matmul_epilogue) {
  auto a = b.dyadic({8, 33, 24}), c = b.dyadic({8, 24, 40});
  return (b.bmm(a, c) + b.randn({40})).tanh();
}
PARITY_CASE(Large, int_reductions, .grad = false) {
  auto x = b.randint(-100, 100, {200, 201}, b.i32);
  return std::vector{x.sum({1}), x.amax({0}), x.amin({1}), x.sum()};
}
PARITY_CASE(Large, bool_reductions, .grad = false) {
  auto x = b.randn({160, 260});
  return std::vector{(x > 2).amax({1}), (x > -3).amin({1}), (x > 0).sum({0}), (x > 1).amax({0})};
}
PARITY_CASE(Large, cat_and_pad) {
  auto x = b.randn({200, 100}), y = b.randn({200, 80});
  return b.cat({b.pad(x, {1, 1}, 0.5), y.flip({0})}, 1);
}

// ---- odd sizes ----------------------------------------------------------------------------------
// Sizes around every ISA level's register tile (1, 3, 17, 127, 129 rows and columns; K = 10001),
// contiguous, transposed, strided and batched operands. The long (K = 10001) products take inputs
// in [0, 1) so that no output lies near zero, where float32 summation order would show.
PARITY_CASE(Matmul, tile_edges_odd_sizes) {
  std::vector<typename B::T> out;
  for (int64_t n : {1, 3, 17, 127, 129})
    for (int64_t m : {1, 3, 17, 129}) out.push_back(b.matmul(b.dyadic({n, 17}), b.dyadic({17, m})));
  out.push_back(b.matmul(b.dyadic({129, 3}).t(), b.dyadic({258, 127}).slice(0, 0, 258, 2)));
  out.push_back(b.matmul(b.dyadic({17, 254}).slice(1, 1, 254, 2), b.dyadic({17, 127}).t()));
  out.push_back(b.matmul(b.dyadic({2, 17, 3}), b.dyadic({3, 129})));
  out.push_back(b.matmul(b.dyadic({3, 1, 5, 127}), b.dyadic({2, 127, 17})) + 1);
  return out;
}
PARITY_CASE(Matmul, long_reduce_10001) {
  auto x = b.rand({10001, 17}), w = b.rand({10001, 3});
  return std::vector{b.matmul(x.t(), w),               // weight-gradient layout
                     b.matmul(b.rand({3, 10001}), x),  // K = 10001
                     b.matmul(x, b.rand({17, 5})),     // N = 10001
                     b.matmul(w.slice(0, 0, 10001, 2).t(), x.slice(0, 0, 10001, 2))};  // strided
}

// The gradients of nn::Linear: the weight's dZ^T X and the bias's sum of dZ over the batch, one
// kernel (schedule/fuse_row_sums.h: the sum is a row sum of the product). Batches 1, 3, 17, 127,
// 129 and 10001 (split-K), features 1, 3, 17, 127, 129; a scaled term (autograd's g * 1); a
// batched product; a product whose term has no tiled form (the generic renderer's row sum). Inputs
// in [0, 1): no output lies near zero.
PARITY_CASE(Matmul, weight_and_bias_gradient_row_sums) {
  std::vector<typename B::T> out;
  const std::vector<int64_t> feats = {1, 3, 17, 127, 129};
  size_t i = 0;
  for (int64_t n : {1, 3, 17, 127, 129, 10001})
    for (size_t j = 0; j < 2; j++, i++) {
      const int64_t o = feats[i % feats.size()], f = feats[(i * 3 + 1) % feats.size()];
      auto g = b.rand({n, o}), x = b.rand({n, f});
      out.push_back(b.matmul(g.t(), x));
      out.push_back(j ? (g * 0.5).sum({0}) : g.sum({0}));
    }
  auto g = b.rand({2, 300, 17}), x = b.rand({2, 300, 5});
  out.push_back(b.matmul(g.transpose(1, 2), x));
  out.push_back(g.sum({1}));
  auto d = b.rand({257, 9}), e = b.rand({257, 4}) + 1;
  out.push_back((d.t().unsqueeze(1) / e.t().unsqueeze(0)).sum({2}));
  out.push_back(d.sum({0}));
  return out;
}

// The bias gradient's row sums read as strips of 4 vectors of rows, then of 1, then single rows
// (tile_row_sums.cpp): 127 and 29 rows leave vectors and rows after the 4-vector strips at every
// level's width (4, 8, 16 floats; 2, 4, 8 doubles); a batch long enough for split-K.
PARITY_CASE(Matmul, bias_gradient_row_strips) {
  std::vector<typename B::T> out;
  for (int64_t o : {127, 29})
    for (int64_t n : {300, 10001}) {
      auto g = b.rand({n, o}), x = b.rand({n, 5});
      out.push_back(b.matmul(g.t(), x));
      out.push_back(g.sum({0}));
    }
  auto g = b.rand({300, 29}, 0, 1, b.f64), x = b.rand({300, 7}, 0, 1, b.f64);
  out.push_back(b.matmul(g.t(), x));
  out.push_back(g.sum({0}));
  return out;
}

// ---- nn::Linear's layout at small batches
// -------------------------------------------------------- x @ W^T at 1, 3, 4 and 17 rows: both
// operands contiguous along the reduce axis, which the small products read in place as vectors
// along it (codegen/render_dot.cpp). In and out features 1, 3, 17, 127, 129 at every level's vector
// width: no full vector, full vectors and a tail, a clamped last column tile. Row-sliced operands
// (still contiguous along k), a batch, float64, a reduce longer than one lane block (K = 4099 > 256
// x 16), an epilogue. Dyadic inputs: exact sums.
PARITY_CASE(Matmul, linear_layout_small_batch) {
  const std::vector<int64_t> sizes = {1, 3, 17, 127, 129};
  std::vector<typename B::T> out;
  for (int64_t n : {1, 3, 4, 17})
    for (size_t i = 0; i < sizes.size(); i++)
      for (size_t j = 0; j < sizes.size(); j++) {
        if (n != 4 && (i + j) % 2) continue;  // every pair at batch 4, half of them at the others
        const int64_t k = sizes[i], m = sizes[j];
        out.push_back(b.matmul(b.dyadic({n, k}), b.dyadic({m, k}).t()));
      }
  // Non-contiguous: every other row of x, W a column slice with a row stride of k + 2.
  for (int64_t k : {3, 17, 129})
    out.push_back(b.matmul(b.dyadic({8, k}).slice(0, 1, 8, 2),
                           b.dyadic({17, k + 2}).slice(1, 1, k + 1, 1).t()));
  out.push_back(b.bmm(b.dyadic({3, 4, 17}), b.dyadic({3, 129, 17}).transpose(1, 2)));
  out.push_back(b.matmul(b.dyadic({2, 3, 127}), b.dyadic({5, 127}).t()));
  out.push_back(b.matmul(b.dyadic({4, 33}, 16, b.f64), b.dyadic({9, 33}, 16, b.f64).t()));
  out.push_back(b.matmul(b.dyadic({4, 4099}), b.dyadic({6, 4099}).t()));
  return out;
}
// nn::Linear's x @ W^T at a large batch: the tiled product packs W^T, a transpose of W x W blocks
// in registers (render_tile.cpp) plus element-wise edges: feature counts that are and are not
// multiples of every level's vector width (16, 17, 48, 127, 129), a W whose rows are padded (row
// stride k + 2), float64, a batch, and a reduce long enough to be packed in cache blocks.
PARITY_CASE(Matmul, linear_layout_large_batch) {
  std::vector<typename B::T> out;
  for (auto [k, m] : std::vector<std::pair<int64_t, int64_t>>{
           {16, 16}, {17, 129}, {129, 127}, {48, 33}, {127, 48}})
    out.push_back(b.matmul(b.dyadic({131, k}), b.dyadic({m, k}).t()));
  out.push_back(b.matmul(b.dyadic({97, 33}), b.dyadic({40, 35}).slice(1, 1, 34, 1).t()));
  out.push_back(b.matmul(b.dyadic({99, 40}, 16, b.f64), b.dyadic({21, 40}, 16, b.f64).t()));
  out.push_back(b.bmm(b.dyadic({2, 70, 24}), b.dyadic({2, 19, 24}).transpose(1, 2)));
  out.push_back(b.matmul(b.dyadic({80, 3000}), b.dyadic({40, 3000}).t()));
  return out;
}
// Few output columns at many rows (a policy head): the same kernel, in row blocks for the threads
// (a partial last block).
PARITY_CASE(Matmul, linear_layout_narrow_output) {
  auto x = b.dyadic({2003, 129}), w = b.dyadic({3, 129}), bias = b.dyadic({2});
  return std::vector{b.matmul(x, w.t()), b.matmul(x, w.slice(0, 1, 3, 1).t()) + bias};
}
// linear(x, W, bias) = x @ W^T + bias: with and without a bias, a 1-D input, batch dims.
PARITY_CASE(Matmul, linear_function) {
  auto w = b.dyadic({5, 7}), bias = b.dyadic({5});
  return std::vector{b.linear(b.dyadic({3, 7}), w, bias), b.linear(b.dyadic({3, 7}), w),
                     b.linear(b.dyadic({7}), w, bias), b.linear(b.dyadic({2, 4, 7}), w, bias)};
}
PARITY_CASE(Matmul, linear_layout_small_batch_epilogue, .tol = parity::kTranscendental) {
  auto x = b.dyadic({4, 129}), w = b.dyadic({127, 129}), bias = b.randn({127});
  auto y = b.matmul(x, w.t()) + bias;
  return std::vector{y.tanh(), y * 0.5 - 1, (b.matmul(x * 2 - 1, (w + 1).t()) * 0.125).relu()};
}

// ---- random matrix products ---------------------------------------------------------------------
// matmul over random sizes, ranks (1-D operands, batch dims that broadcast), transposed or sliced
// operands and epilogues; the choices come from a fixed-seed generator.
PARITY_CASE(RandomMatmul, shapes_layouts_epilogues) {
  std::mt19937 g(99);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  std::vector<typename B::T> out;
  for (int i = 0; i < 40; i++) {
    const int64_t n = pick(1, 20), k = pick(1, 24), m = pick(1, 20);
    // a: [batch..., n, k] built as given, transposed or as a strided slice of a larger tensor.
    auto operand = [&](int64_t r, int64_t c, parity::Shape batch) {
      parity::Shape s = batch;
      switch (pick(0, 2)) {
        case 0:
          s.insert(s.end(), {r, c});
          return b.randn(s);
        case 1:
          s.insert(s.end(), {c, r});
          return b.randn(s).transpose(-1, -2);
        default:
          s.insert(s.end(), {r, 2 * c});
          return b.randn(s).slice(-1, 0, 2 * c, 2);
      }
    };
    parity::Shape ba, bb;
    switch (pick(0, 3)) {
      case 0:
        break;
      case 1:
        ba = bb = {pick(1, 3)};
        break;
      case 2:
        ba = {pick(2, 3), 1}, bb = {pick(1, 2)};
        break;
      default:
        ba = {2};
        break;
    }
    auto a = operand(n, k, ba), c = operand(k, m, bb);
    if (pick(0, 5) == 0)
      a = b.randn({k});
    else if (pick(0, 5) == 0)
      c = b.randn({k});
    auto r = b.matmul(a, c);
    switch (pick(0, 3)) {
      case 0:
        out.push_back(r);
        break;
      case 1:
        out.push_back((r + 1).relu());
        break;
      case 2:
        out.push_back(r.tanh() * 2);
        break;
      default:
        out.push_back(r.sum({-1}, true) - r);
        break;
    }
  }
  return out;
}
