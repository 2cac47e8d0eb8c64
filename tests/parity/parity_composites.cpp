// Parity: the composite ops of special_functions.h, padding.h, shape_ops.h (tile, tril/triu,
// einsum), indexing.h (index_select, scatters) and sorting.h (topk, sort, argsort, cumsum),
// forward and backward, against libtorch.
#include <limits>

#include "parity_grad.h"
#include "parity_ops.h"

#define TR .tol = parity::kTranscendental
#define NOGRAD .grad = false
using parity::Shape;
namespace ops = parity::ops;

// ---- special functions ------------------------------------------------------------------------
// The gradients of the long compositions (atan's range reduction and series, and asin/acos/atanh
// on top of it) are checked on cpu only: the interp device evaluates each kernel's expression as a
// tree, recomputing every shared value per use, and these backward kernels take it minutes. Their
// forward values are checked on interp too (Special.* below).
#define CPU_ONLY .interp = false
BACKWARD_CASE(GradSpecial, trig_and_hyperbolic, TR, CPU_ONLY) {
  auto x = b.rand({4, 5}, -1.4, 1.4);
  return std::vector{ops::tan(b, x), ops::sinh(b, x), ops::cosh(b, x), ops::asinh(b, x),
                     ops::atan(b, x * 4)};
}
BACKWARD_CASE(GradSpecial, inverse_trig, TR, CPU_ONLY) {
  auto x = b.rand({4, 5}, -0.95, 0.95);
  return std::vector{ops::asin(b, x), ops::acos(b, x), ops::atanh(b, x),
                     ops::acosh(b, x.abs() * 5 + 1.05)};
}
BACKWARD_CASE(GradSpecial, erf, TR) {
  return std::vector{ops::erf(b, b.randn({50}) * 2), ops::erf(b, b.rand({20}, -6, 6))};
}
PARITY_CASE(Special, small_large_and_edge_values, TR) {
  auto x = b.values({0.0, 1e-7, -1e-5, 0.05, -0.3, 0.7, 2.9, 3.1, -5.0, 30.0}, {10});
  auto u = b.values({-1.0, -0.999, 0.0, 1e-6, 0.5, 1.0, 1.5}, {7});
  return std::vector{ops::erf(b, x),           ops::sinh(b, x),
                     ops::asinh(b, x),         ops::atan(b, x),
                     ops::tan(b, x),           ops::atanh(b, u),
                     ops::asin(b, u),          ops::acos(b, u),
                     ops::erf(b, x.to(b.f64)), ops::atan(b, x.to(b.f64) * 1e3)};
}
PARITY_CASE(Special, integer_inputs_promote, TR) {
  auto i = b.randint(-3, 4, {6});
  return std::vector{ops::erf(b, i), ops::atan(b, i), ops::ceil(b, i), ops::round(b, i)};
}
PARITY_CASE(Special, rounding) {
  auto x = b.values({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, -0.2, 0.0, 3.7, -3.7, 1e10 + 0.5},
                    {12}, b.f64);
  return std::vector{ops::round(b, x), ops::ceil(b, x), ops::trunc(b, x),
                     ops::round(b, x.to(b.f32)), ops::ceil(b, x.to(b.f32))};
}

// ---- padding modes ----------------------------------------------------------------------------
BACKWARD_CASE(GradPad, reflect_replicate_circular) {
  auto x = b.randn({2, 3, 4, 5});
  using M = ember::PadMode;
  auto x3 = b.randn({2, 3, 6});  // libtorch's non-constant modes pad the last (rank - 2) dims
  return std::vector{
      ops::pad(b, x3, Shape{2, 1}, M::Reflect), ops::pad(b, x, Shape{1, 3, 2, 0}, M::Reflect),
      ops::pad(b, x, Shape{2, 1, 0, 3}, M::Replicate), ops::pad(b, x3, Shape{3, 0}, M::Replicate),
      ops::pad(b, x, Shape{1, 2, 3, 1}, M::Circular)};
}

// ---- tile, tril/triu, einsum ------------------------------------------------------------------
BACKWARD_CASE(GradShapeOps, tile) {
  auto x = b.randn({2, 3});
  return std::vector{ops::tile(b, x, Shape{2, 2}), ops::tile(b, x, Shape{3}),
                     ops::tile(b, x, Shape{2, 1, 3})};
}
PARITY_CASE(ShapeOps, tile_ints_and_zero) {
  auto x = b.randint(0, 9, {3});
  return std::vector{ops::tile(b, x, Shape{0}), ops::tile(b, x, Shape{2, 2})};
}
BACKWARD_CASE(GradShapeOps, tril_triu) {
  auto x = b.randn({2, 4, 5});
  return std::vector{ops::tril(b, x, int64_t{0}), ops::tril(b, x, int64_t{-1}),
                     ops::triu(b, x, int64_t{2}), ops::triu(b, x, int64_t{-3})};
}
BACKWARD_CASE(GradShapeOps, einsum_products) {
  auto a = b.dyadic({3, 4}), c = b.dyadic({4, 5}), v = b.dyadic({4}), t = b.dyadic({2, 3, 4});
  return std::vector{
      ops::einsum(b, std::string("ij,jk->ik"), std::vector{a, c}),
      ops::einsum(b, std::string("ij,j"), std::vector{a, v}),
      ops::einsum(b, std::string("bij,jk->bki"), std::vector{t, c}),
      ops::einsum(b, std::string("i,j->ij"), std::vector{v, v}),
      ops::einsum(b, std::string("ij->j"), std::vector{a}),
      ops::einsum(b, std::string("...j,jk"), std::vector{t, c}),
      ops::einsum(b, std::string("ij,jk,kl->il"), std::vector{a, c, b.dyadic({5, 2})})};
}
PARITY_CASE(ShapeOps, einsum_diagonal_trace_batch) {
  auto sq = b.dyadic({4, 4}), bt = b.dyadic({2, 3, 4}), bu = b.dyadic({2, 4, 5});
  return std::vector{ops::einsum(b, std::string("ii->i"), std::vector{sq}),
                     ops::einsum(b, std::string("ii"), std::vector{sq}),
                     ops::einsum(b, std::string("bij,bjk->bik"), std::vector{bt, bu}),
                     ops::einsum(b, std::string("ij->ji"), std::vector{sq}),
                     ops::einsum(b, std::string("b i j , b j k"), std::vector{bt, bu})};
}

// ---- index_select, scatter --------------------------------------------------------------------
BACKWARD_CASE(GradIndex, index_select) {
  auto x = b.randn({4, 5});
  auto i = b.values({3, 0, 0, 2}, {4}, b.i64);
  return std::vector{ops::index_select(b, x, int64_t{0}, i),
                     ops::index_select(b, x, int64_t{1}, i)};
}
BACKWARD_CASE(GradIndex, scatter_and_add) {
  auto self = b.randn({3, 5}), src = b.randn({2, 4});
  auto idx = b.values({0, 4, 2, 1, 3, 2, 0, 4}, {2, 4}, b.i64);   // unique along dim 1
  auto rows = b.values({2, 0, 1, 2, 1, 0, 0, 1}, {2, 4}, b.i64);  // dim 0, repeated
  return std::vector{ops::scatter(b, self, int64_t{1}, idx, src),
                     ops::scatter_add(b, self, int64_t{1}, idx, src),
                     ops::scatter_add(b, self, int64_t{0}, rows, src)};
}
PARITY_CASE(Index, scatter_reduce_and_ints) {
  auto self = b.randn({3, 4}), src = b.randn({3, 4});
  auto idx = b.values({0, 0, 1, 3, 2, 2, 2, 0, 1, 1, 3, 3}, {3, 4}, b.i64);
  auto si = b.randint(-5, 5, {3, 4});
  auto rows = b.values({0, 2, 1, 1, 2, 0, 0, 1}, {2, 4}, b.i64);
  return std::vector{ops::scatter_reduce(b, self, int64_t{1}, idx, src, std::string("prod")),
                     ops::scatter_reduce(b, self, int64_t{1}, idx, src, std::string("amax")),
                     ops::scatter_reduce(b, self, int64_t{1}, idx, src, std::string("amin")),
                     ops::scatter_reduce(b, si, int64_t{1}, idx, si * 3, std::string("amax")),
                     ops::scatter_add(b, si, int64_t{0}, rows, si)};
}

// ---- topk, sort, cumsum -----------------------------------------------------------------------
BACKWARD_CASE(GradSort, topk_values) {
  auto x = b.randn({3, 7});
  auto [v, i] = ops::topk(b, x, int64_t{3}, int64_t{-1}, true, true);
  auto [w, j] = ops::topk(b, x, int64_t{2}, int64_t{0}, false, true);
  return std::vector{v, w};
}
// libtorch orders ties as it likes (ember: the lower index first, tested below), so the rows here
// have distinct values.
PARITY_CASE(Sort, topk_sort_argsort_with_nan, NOGRAD) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto x = b.values({3, 1, 2, 4, nan, 1.5, -1, 2}, {2, 4});
  auto i = b.values({5, 1, 7, 2, 0, 9}, {6}, b.i64);
  auto [v1, i1] = ops::topk(b, x, int64_t{3}, int64_t{-1}, true, true);
  auto [v2, i2] = ops::topk(b, x, int64_t{2}, int64_t{1}, false, true);
  auto [v3, i3] = ops::sort(b, x, int64_t{0}, true);
  auto [v4, i4] = ops::sort(b, i, int64_t{0}, false);
  return std::vector{v1, i1, v2, i2, v3, i3, v4, i4, ops::argsort(b, x, int64_t{1}, false)};
}
BACKWARD_CASE(GradSort, cumsum) {
  auto x = b.randn({3, 13});
  return std::vector{ops::cumsum(b, x, int64_t{1}), ops::cumsum(b, x, int64_t{0})};
}
PARITY_CASE(Sort, cumsum_ints_and_bools) {
  return std::vector{ops::cumsum(b, b.randint(-9, 9, {17}, b.i32), int64_t{0}),
                     ops::cumsum(b, b.randbool({2, 5}), int64_t{-1})};
}

// Ties: the lower index first, for largest and smallest (ONNX TopK's rule; a stable sort).
TEST(SortTies, lower_index_first) {
  ember::Tensor x = ember::from_vector<float>({2, 5, 2, 5, 1}, Shape{5});
  auto [v, i] = ember::topk(x, 3, 0, true);
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{5, 5, 2}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0}));
  auto [w, j] = ember::sort(x, 0, false);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 2, 5, 5}));
  EXPECT_EQ(j.to_vector<int64_t>(), (std::vector<int64_t>{4, 0, 2, 1, 3}));
}
