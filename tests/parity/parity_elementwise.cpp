// Parity: elementwise math with broadcasting and PyTorch's type promotion (dimensioned tensors,
// 0-d tensors and scalars of every dtype), comparisons, logical ops, where and clamp.
#include <random>

#include "parity_grad.h"

#define TR .tol = parity::kTranscendental

// ---- unary ------------------------------------------------------------------------------------
PARITY_CASE(Unary, neg) { return -b.randn({3, 4}); }
PARITY_CASE(Unary, neg_int) { return b.randint(-9, 9, {5}, b.i32).neg(); }
PARITY_AND_BACKWARD_CASE(Unary, exp, GradUnary, exp, TR) { return b.randn({3, 4}).exp(); }
PARITY_CASE(Unary, exp_f64, TR) { return b.randn({6}, b.f64).exp(); }
PARITY_CASE(Unary, exp_of_int_promotes, TR) { return b.randint(-3, 4, {5}).exp(); }
PARITY_CASE(Unary, log, TR) { return b.rand({3, 4}, 0.01, 10).log(); }
PARITY_CASE(Unary, log_edge_values, TR) {
  return b.values({0.0, -1.0, 1.0, INFINITY}, {4}).log();  // -inf, nan, 0, inf
}
PARITY_CASE(Unary, sqrt) { return b.rand({4, 3}, 0, 9).sqrt(); }
PARITY_CASE(Unary, sqrt_of_int_promotes) { return b.randint(0, 50, {6}, b.i32).sqrt(); }
PARITY_CASE(Unary, rsqrt) { return b.rand({7}, 0.1, 4).rsqrt(); }
PARITY_CASE(Unary, sin, TR) { return b.rand({3, 5}, -6, 6).sin(); }
PARITY_CASE(Unary, cos, TR) { return b.rand({3, 5}, -6, 6).cos(); }
PARITY_CASE(Unary, cos_near_zeros, TR) { return b.values({1.5707964, 4.712389, 0.0}, {3}).cos(); }
PARITY_CASE(Unary, tanh, TR) { return (b.randn({4, 4}) * 3).tanh(); }
PARITY_CASE(Unary, sigmoid, TR) { return (b.randn({4, 4}) * 4).sigmoid(); }
PARITY_CASE(Unary, sigmoid_saturates, TR) {
  return b.values({-100.0, -20.0, 0.0, 20.0, 100.0}, {5}).sigmoid();
}
PARITY_CASE(Unary, relu) { return b.randn({3, 4}).relu(); }
PARITY_CASE(Unary, relu_int) { return b.randint(-5, 5, {6}, b.i64).relu(); }
PARITY_CASE(Unary, abs) { return b.randn({2, 5}).abs(); }
PARITY_CASE(Unary, abs_int) { return b.randint(-9, 9, {7}, b.i32).abs(); }
PARITY_CASE(Unary, abs_uint8_is_identity) { return b.randint(0, 255, {6}, b.u8).abs(); }
PARITY_CASE(Unary, sign) { return b.values({-2.5, -0.0, 0.0, 3.0, -1e-30}, {5}).sign(); }
PARITY_CASE(Unary, nan_and_infinities, TR) {
  auto x = b.values({NAN, INFINITY, -INFINITY, 0.0, -0.0}, {5});
  return std::vector{x.relu(), x.abs(), x.sign(), -x,         x.sigmoid(),
                     x.tanh(), x.exp(), x.sqrt(), x.square(), x.reciprocal()};
}
PARITY_CASE(Unary, sign_int_and_bool) {
  return std::vector{b.randint(-3, 4, {6}).sign(), b.randbool({4}).sign()};
}
PARITY_CASE(Unary, square_and_reciprocal) {
  auto x = b.rand({5}, 0.5, 3);
  return std::vector{x.square(), x.reciprocal()};
}
PARITY_CASE(Unary, on_0d, TR) {
  auto x = b.values({0.7}, {});
  return std::vector{x.exp(), x.log(), x.sqrt(), x.sin(), x.tanh(), x.sigmoid(), -x};
}
PARITY_CASE(Unary, on_empty, TR) {
  auto x = b.randn({0, 3});
  return std::vector{x.exp(), x.log(), x.relu(), x.abs(), x.sign()};
}
PARITY_CASE(Unary, on_permuted_view, TR) { return b.randn({2, 3, 4}).permute({2, 0, 1}).exp(); }
PARITY_CASE(Unary, on_strided_slice, TR) { return b.randn({5, 6}).slice(1, 1, 6, 2).tanh(); }
PARITY_CASE(Unary, on_expanded_view) { return b.randn({3, 1}).expand({3, 4}).abs() + b.randn({4}); }

// ---- binary arithmetic, broadcasting ---------------------------------------------------------
PARITY_CASE(Binary, add_same_shape) { return b.randn({3, 4}) + b.randn({3, 4}); }
PARITY_CASE(Binary, add_broadcast_3d) { return b.randn({3, 1, 4}) + b.randn({2, 4}); }
PARITY_CASE(Binary, add_broadcast_both_sides) { return b.randn({4, 1}) + b.randn({1, 5}); }
PARITY_CASE(Binary, add_with_alpha) { return b.randn({3}).add(b.randn({2, 3}), 2.5); }
PARITY_CASE(Binary, sub_with_alpha) { return b.randn({2, 3}).sub(b.randn({3}), 0.5); }
PARITY_CASE(Binary, mul_broadcast) { return b.randn({2, 1, 3}) * b.randn({4, 1}); }
PARITY_AND_BACKWARD_CASE(Binary, div, GradBinary, div) {
  return b.randn({3, 4}) / b.rand({3, 4}, 0.5, 2);
}
PARITY_CASE(Binary, div_by_zero) {
  return b.values({1, -1, 0}, {3}) / b.zeros({3});  // inf, -inf, nan
}
PARITY_CASE(Binary, div_int_is_true_division) {
  return b.randint(-20, 20, {6}) / b.randint(1, 5, {6}, b.i32);
}
PARITY_CASE(Binary, int_arithmetic_exact) {
  auto x = b.randint(-1000, 1000, {8}), y = b.randint(-1000, 1000, {8});
  return std::vector{x + y, x - y, x * y, -x};
}
PARITY_CASE(Binary, int32_wraps_like_int32) {
  auto x = b.values({2147483000, -2147483000}, {2}, b.i32);
  return x + b.values({1000, -1000}, {2}, b.i32);
}
PARITY_CASE(Binary, zero_dim_with_dim) { return b.randn({3, 2}) * b.values({2.0}, {}); }
PARITY_CASE(Binary, zero_dim_with_zero_dim) { return b.values({1.5}, {}) - b.values({4.0}, {}); }
PARITY_CASE(Binary, empty_broadcast) { return b.randn({0, 1}) + b.randn({3}); }
PARITY_CASE(Binary, on_non_contiguous_views) {
  auto x = b.randn({4, 6});
  return x.t().slice(0, 0, 6, 2) * x.slice(1, 1, 4).t() + x.t().slice(0, 1, 6, 2);
}
PARITY_CASE(Binary, add_of_flipped_and_padded) {
  auto x = b.randn({3, 4});
  return x.flip({1}) + b.pad(x.slice(1, 1, 3), {1, 1});
}

// ---- scalar forms -------------------------------------------------------------------------------
PARITY_CASE(Scalar, float_tensor_ops) {
  auto x = b.randn({2, 3});
  return std::vector{x + 2, x - 1.5, x * 3, x / 4, 2.0 - x, 3 * x, 1.0 + x};
}
PARITY_CASE(Scalar, float_divided_by_tensor) { return 1.0 / b.rand({5}, 0.5, 2); }
PARITY_CASE(Scalar, int32_tensor_keeps_int32) {
  auto x = b.randint(-10, 10, {4}, b.i32);
  return std::vector{x + 2, x * 3, x - 7, 5 + x};
}
PARITY_CASE(Scalar, int_tensor_with_float_scalar) {
  auto x = b.randint(-10, 10, {4}, b.i32);
  return std::vector{x * 2.5, x + 0.5, x / 2};
}
PARITY_CASE(Scalar, f64_tensor_keeps_f64) {
  auto x = b.randn({3}, b.f64);
  return std::vector{x + 2.5, x * 2, x / 3};
}
PARITY_CASE(Scalar, bool_tensor_with_scalars) {
  auto m = b.randbool({5});
  return std::vector{m + 1, m * 2.5, m + true, m * false};
}
PARITY_CASE(Scalar, zero_dim_tensor_ops) {
  auto s = b.values({3.0}, {}, b.i64);
  return std::vector{s + 1, s * 0.5, s / 2};
}

// ---- type promotion -----------------------------------------------------------------------------
template <class B>
auto promo_inputs(B& b) {
  return std::vector{b.randint(0, 2, {3}, b.b8),
                     b.randint(0, 9, {3}, b.u8),
                     b.randint(-5, 5, {3}, b.i32),
                     b.randint(-5, 5, {3}, b.i64),
                     b.randn({3}),
                     b.randn({3}, b.f64)};
}

// One 0-d tensor of bool, int32, int64, float32 and float64.
template <class B>
auto zero_dim_inputs(B& b) {
  return std::vector{b.values({1}, {}, b.b8), b.values({2}, {}, b.i32), b.values({3}, {}, b.i64),
                     b.values({1.5}, {}), b.values({2.5}, {}, b.f64)};
}

// x * y for every x of xs and y of ys, in order.
template <class T>
std::vector<T> products(const std::vector<T>& xs, const std::vector<T>& ys) {
  std::vector<T> out;
  for (auto& x : xs)
    for (auto& y : ys) out.push_back(x * y);
  return out;
}

PARITY_CASE(Promotion, add_every_dtype_pair) {
  auto xs = promo_inputs(b);
  std::vector<typename B::T> out;
  for (auto& x : xs)
    for (auto& y : xs)
      if (!(x.scalar_type() == b.b8 && y.scalar_type() == b.b8)) out.push_back(x + y);
  return out;
}
PARITY_CASE(Promotion, mul_every_dtype_pair) {
  auto xs = promo_inputs(b);
  return products(xs, xs);
}
PARITY_CASE(Promotion, zero_dim_tensors_lower_priority) {
  auto xs = promo_inputs(b);
  return products(xs, zero_dim_inputs(b));
}
PARITY_CASE(Promotion, zero_dim_pairs) {
  auto zs = zero_dim_inputs(b);
  return products(zs, zs);
}
PARITY_CASE(Promotion, scalars_never_widen_within_category) {
  auto xs = promo_inputs(b);
  std::vector<typename B::T> out;
  for (auto& x : xs) {
    out.push_back(x * 2);
    out.push_back(x * 0.5);
  }
  return out;
}
PARITY_CASE(Promotion, div_results) {
  auto xs = promo_inputs(b);
  std::vector<typename B::T> out;
  for (auto& x : xs) out.push_back(x / (xs[3].abs() + 1));
  return out;
}

// ---- pow, maximum, minimum ----------------------------------------------------------------------
PARITY_CASE(Pow, square_and_cube_negative_base, TR) {
  auto x = b.randn({6});
  return std::vector{x.pow(2), x.pow(3), x.pow(-1)};
}
PARITY_CASE(Pow, fractional_exponent, TR) {
  auto x = b.rand({6}, 0.1, 4);
  return std::vector{x.pow(0.5), x.pow(2.5), x.pow(-0.5)};
}
PARITY_AND_BACKWARD_CASE(Pow, tensor_exponent_broadcast, GradPow, tensor_exponent_broadcast, TR) {
  return b.rand({3, 1}, 0.5, 2).pow(b.rand({4}, -2, 2));
}
PARITY_CASE(Pow, int_base_int_exponent) {
  auto x = b.randint(-4, 5, {8}), e = b.randint(0, 5, {8});
  return std::vector{x.pow(e), x.pow(2), x.pow(3)};
}
// Past int64's range the product wraps modulo 2^64 (3^41, 7^40, 2^63, 2^64 = 0), and a negative
// exponent gives the integer part of b^e: the kernels, the interpreter and libtorch agree.
PARITY_CASE(Pow, int_wraps_and_negative_exponent) {
  auto x = b.values({-3, -2, -1, -1, 0, 1, 2, 2, 3, 7, 5, -7}, {12}, b.i64);
  auto e = b.values({-3, -1, -3, -2, 0, -5, 63, 64, 41, 40, 27, 33}, {12}, b.i64);
  return x.pow(e);
}
PARITY_CASE(Pow, int_tensor_float_exponent, TR) { return b.randint(1, 6, {5}, b.i32).pow(0.5); }
PARITY_CASE(MaxMin, maximum_minimum_broadcast) {
  auto x = b.randn({3, 1}), y = b.randn({4});
  return std::vector{b.maximum(x, y), b.minimum(x, y), x.maximum(y), x.minimum(y)};
}
PARITY_CASE(MaxMin, maximum_minimum_int_and_mixed) {
  auto i = b.randint(-5, 5, {5}, b.i32), l = b.randint(-5, 5, {5}), f = b.randn({5});
  return std::vector{b.maximum(i, l), b.minimum(i, l), b.maximum(i, f), b.minimum(l, f)};
}
PARITY_CASE(MaxMin, nan_propagates) {
  auto x = b.values({NAN, 1.0, 2.0, NAN}, {4}), y = b.values({0.0, NAN, 1.0, NAN}, {4});
  return std::vector{b.maximum(x, y), b.minimum(x, y)};
}
PARITY_CASE(MaxMin, uint8_with_zeros) {
  auto x = b.values({0, 5, 3, 200, 255, 0}, {6}, b.u8),
       y = b.values({7, 0, 3, 255, 1, 0}, {6}, b.u8);
  return std::vector{b.minimum(x, y), b.maximum(x, y), b.minimum(x, b.values({0}, {}, b.u8))};
}
// Signed zeros are distinct constants: x + 0.0 and x + (-0.0) differ at x = -0.0, and x * 0.0 and
// x * (-0.0) differ in sign everywhere; the reciprocal turns each sign into an infinity. Both
// constants in one graph, in both orders.
PARITY_CASE(Const, signed_zeros_stay_distinct) {
  auto x = b.values({-0.0, 0.0, 2.0, -3.0}, {4});
  return std::vector{(x + 0.0).reciprocal(), (x + -0.0).reciprocal(), (x * -0.0).reciprocal(),
                     (x * 0.0).reciprocal(), b.full({2}, -0.0).reciprocal()};
}
PARITY_CASE(Const, signed_zeros_stay_distinct_float64_and_sub) {
  auto x = b.values({-0.0, 0.0, 2.0}, {3}, b.f64);
  return std::vector{(x - -0.0).reciprocal(), (x - 0.0).reciprocal(), (x * 0.0).reciprocal(),
                     (x * -0.0).reciprocal(), b.zeros({2}, b.f64).neg().reciprocal()};
}
PARITY_CASE(MaxMin, int_extremes) {
  auto x = b.values({-2147483648.0, 0, 2147483647.0, -1}, {4}, b.i32);
  auto y = b.values({-9223372036854775808.0, 0, 4611686018427387904.0, -1}, {4}, b.i64);
  return std::vector{b.minimum(x, b.zeros({4}, b.i32)), b.maximum(x, b.zeros({4}, b.i32)),
                     b.minimum(y, b.ones({4}, b.i64)), b.minimum(x, y)};
}
PARITY_CASE(MaxMin, bool_operands) {
  auto x = b.randbool({6}), y = b.randbool({6});
  return std::vector{b.maximum(x, y), b.minimum(x, y)};
}

// ---- clamp ------------------------------------------------------------------------------------
PARITY_CASE(Clamp, both_bounds) { return b.randn({3, 4}).clamp(-0.5, 0.5); }
PARITY_CASE(Clamp, min_or_max_only) {
  auto x = b.randn({6});
  return std::vector{x.clamp_min(0.1), x.clamp_max(-0.1), x.clamp(b.none, 0.3)};
}
PARITY_CASE(Clamp, int_tensor_int_bounds) { return b.randint(-10, 10, {8}, b.i32).clamp(-3, 4); }
PARITY_CASE(Clamp, nan_input_stays_nan) { return b.values({NAN, -2, 2}, {3}).clamp(-1, 1); }
PARITY_CASE(Clamp, min_above_max_gives_max) { return b.randn({5}).clamp(0.5, -0.5); }
PARITY_CASE(Clamp, uint8_and_int_extremes) {
  return std::vector{b.values({0, 3, 250}, {3}, b.u8).clamp(2, 200),
                     b.values({-2147483648.0, 5, 2147483647.0}, {3}, b.i32).clamp(-7, 7)};
}
PARITY_CASE(Clamp, on_view) { return b.randn({4, 3}).t().clamp(-0.2, 1.0); }

// ---- comparisons ------------------------------------------------------------------------------
PARITY_CASE(Compare, tensor_tensor_broadcast) {
  auto x = b.randint(-2, 3, {3, 1}).to(b.f32), y = b.randint(-2, 3, {4}).to(b.f32);
  return std::vector{x.eq(y), x.ne(y), x.lt(y), x.le(y), x.gt(y), x.ge(y)};
}
PARITY_CASE(Compare, operators) {
  auto x = b.randint(-2, 3, {5}), y = b.randint(-2, 3, {5});
  return std::vector{x<y, x <= y, x> y, x >= y, x == y, x != y};
}
PARITY_CASE(Compare, with_scalars) {
  auto x = b.randint(-2, 3, {6}, b.i32);
  return std::vector{x<1, x <= 0, x> 0.5, x >= -1, x == 2, x != 0, x.eq(1), x.gt(-1.5)};
}
PARITY_CASE(Compare, mixed_dtypes) {
  auto i = b.randint(-2, 3, {6}), f = b.randint(-2, 3, {6}).to(b.f32) + 0.5;
  return std::vector{i < f, i.to(b.f64) == f, b.randbool({6}) == (i > 0)};
}
PARITY_CASE(Compare, uint8_and_scalars) {
  auto x = b.values({0, 1, 200, 255}, {4}, b.u8);
  return std::vector{x<100, x >= 200, x == 255, x> 0.5, x <= 1};
}
PARITY_CASE(Compare, nan_is_unordered) {
  auto x = b.values({NAN, 1.0, NAN}, {3}), y = b.values({NAN, NAN, 1.0}, {3});
  return std::vector{x == y, x != y, x < y, x >= y};
}
PARITY_CASE(Compare, zero_dim_and_empty) {
  return std::vector{b.values({1.0}, {}) < b.values({2.0}, {}), b.randn({0, 2}) > 0};
}

// ---- logical ------------------------------------------------------------------------------------
PARITY_CASE(Logical, bool_ops) {
  auto x = b.randbool({3, 4}), y = b.randbool({4});
  return std::vector{x.logical_and(y), x.logical_or(y), x.logical_xor(y), x.logical_not()};
}
PARITY_CASE(Logical, bool_operators) {
  auto x = b.randbool({5}), y = b.randbool({5});
  return std::vector{x & y, x | y, x ^ y, ~x};
}
PARITY_CASE(Logical, non_bool_inputs_give_bool) {
  auto f = b.values({0.0, 1.5, -2.0, 0.0}, {4}), i = b.values({0, 0, 3, 1}, {4}, b.i64);
  return std::vector{f.logical_and(i), f.logical_or(i), f.logical_xor(i), i.logical_not()};
}

// ---- where --------------------------------------------------------------------------------------
PARITY_CASE(Where, tensors_broadcast) {
  auto c = b.randbool({3, 1});
  return b.where(c, b.randn({4}), b.randn({3, 4}));
}
PARITY_CASE(Where, scalar_branches) {
  auto x = b.randn({5});
  return std::vector{b.where(x > 0, x, 0.0), b.where(x > 0, 1.5, x)};
}
PARITY_CASE(Where, promotes_branches) {
  auto c = b.randbool({4});
  return std::vector{b.where(c, b.randint(0, 5, {4}, b.i32), b.randn({4})),
                     b.where(c, b.randint(0, 5, {4}, b.i32), b.randint(0, 5, {4}))};
}
PARITY_CASE(Where, cond_from_comparison_on_views) {
  auto x = b.randn({3, 4});
  return b.where(x.t() > 0, x.t(), -x.t() * 2);
}

// ---- random expressions -------------------------------------------------------------------------
// Random elementwise expressions over inputs of every dtype and broadcastable shapes (0-d
// included), mixed with scalars: promotion, broadcasting and fusion together. The op sequence
// comes from a fixed-seed generator, so both backends build the same expressions.
template <class B>
typename B::T random_expression(B& b, std::mt19937& g) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  const std::vector<parity::Shape> shapes = {{}, {4}, {3, 1}, {1, 4}, {3, 4}, {2, 3, 4}};
  auto leaf = [&]() -> typename B::T {
    parity::Shape s = shapes[pick(0, 5)];
    switch (pick(0, 5)) {
      case 0:
        return b.randbool(s);
      case 1:
        return b.randint(0, 6, s, b.u8);
      case 2:
        return b.randint(-5, 6, s, b.i32);
      case 3:
        return b.randint(-5, 6, s, b.i64);
      case 4:
        return b.randn(s);
      default:
        return b.randn(s, b.f64);
    }
  };
  auto is_bool = [&](const typename B::T& t) { return t.scalar_type() == b.b8; };
  auto x = leaf();
  for (int64_t step = 0, n = pick(1, 5); step < n; step++) {
    auto y = leaf();
    switch (pick(0, 13)) {
      case 0:
        x = x + y;
        break;
      case 1:
        x = (is_bool(x) || is_bool(y)) ? x * y : x - y;
        break;  // torch: no bool -
      case 2:
        x = x * y;
        break;
      case 3:
        x = x / (y.to(b.f64).abs() + 1).to(y.scalar_type() == b.f64 ? b.f64 : b.f32);
        break;
      case 4:
        x = b.maximum(x, y);
        break;
      case 5:
        x = b.minimum(x, y);
        break;
      case 6:
        x = b.where(x > y, x, y);
        break;
      case 7:
        x = pick(0, 1) ? (x < y) : (x >= y);
        break;
      case 8:
        x = (x != 0).logical_xor(y == 1);
        break;
      case 9:
        x = is_bool(x) ? x.logical_not() : x.abs() - x.sign();
        break;
      case 10:
        x = pick(0, 1) ? x + 2 : x * 0.5;
        break;
      case 11:
        x = is_bool(x) ? x + true : x.clamp(-1, 2);
        break;
      case 12:
        x = x.dim() > 0 ? x.sum({-1}, true) : x * y;
        break;
      default:
        x = x.dim() > 0 && !is_bool(x) ? x.amax({0}, true) + y : x + y;
        break;
    }
  }
  return x;
}
PARITY_CASE(RandomExpr, dtypes_shapes_and_scalars) {
  std::mt19937 g(777);
  std::vector<typename B::T> out;
  for (int i = 0; i < 60; i++) out.push_back(random_expression(b, g));
  return out;
}
