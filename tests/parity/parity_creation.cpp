// Parity: creation (zeros/ones/full/arange/eye/from data), dtype conversion, copies, item() and
// in-place updates. (rand/randn/randint: statistics only, in parity_linalg.cpp.)
#include "parity.h"

// ---- constants ----------------------------------------------------------------------------------
PARITY_CASE(Creation, zeros_2d) { return b.zeros({2, 3}); }
PARITY_CASE(Creation, zeros_int32) { return b.zeros({4}, b.i32); }
PARITY_CASE(Creation, zeros_0d) { return b.zeros({}); }
PARITY_CASE(Creation, zeros_empty) { return b.zeros({0, 3}); }
PARITY_CASE(Creation, ones_f64) { return b.ones({2, 1, 2}, b.f64); }
PARITY_CASE(Creation, ones_bool) { return b.ones({3}, b.b8); }
PARITY_CASE(Creation, full_float) { return b.full({2, 3}, 2.5); }
PARITY_CASE(Creation, full_int_infers_int64) { return b.full({3}, 7); }
PARITY_CASE(Creation, full_bool_infers_bool) { return b.full({2}, true); }
PARITY_CASE(Creation, full_with_dtype) { return b.full({2, 2}, 3, b.f64); }
PARITY_CASE(Creation, full_negative_int32) { return b.full({2}, -5, b.i32); }
PARITY_CASE(Creation, like_ops_keep_dtype) {
  auto x = b.randint(0, 5, {2, 3}, b.i32);
  return std::vector{b.zeros_like(x), b.ones_like(x), b.full_like(x, 4)};
}
PARITY_CASE(Creation, full_like_float_value_on_int) {
  auto x = b.randint(0, 5, {3}, b.i64);
  return b.full_like(x, 2.75);  // truncated into the tensor's dtype
}

// ---- arange / eye / data ------------------------------------------------------------------------
PARITY_CASE(Creation, arange_end) { return b.arange(5); }
PARITY_CASE(Creation, arange_float_step) { return b.arange(0.0, 1.0, 0.25); }
PARITY_CASE(Creation, arange_negative_step) { return b.arange(10, 0, -3); }
PARITY_CASE(Creation, arange_with_dtype) { return b.arange(6, b.f32); }
PARITY_CASE(Creation, arange_fractional_bounds) { return b.arange(1, 2.5, 0.5); }
PARITY_CASE(Creation, arange_empty) { return b.arange(0); }
PARITY_CASE(Creation, arange_inexact_steps) {
  return std::vector{b.arange(0, 1, 0.1), b.arange(-1, 1, 0.3), b.arange(0.5, 3.0, 0.7, b.f64)};
}
PARITY_CASE(Creation, arange_f64) { return b.arange(-1.5, 1.5, 0.5, b.f64); }
PARITY_CASE(Creation, eye_square) { return b.eye(3); }
PARITY_CASE(Creation, eye_rect_int) { return b.eye(2, 4, b.i64); }
PARITY_CASE(Creation, eye_tall_bool) { return b.eye(4, 2, b.b8); }
PARITY_CASE(Creation, eye_empty) { return b.eye(0); }
PARITY_CASE(Creation, from_data_each_dtype) {
  std::vector<double> v = {-2, 0, 1, 3, 5, 8};
  return std::vector{b.values(v, {2, 3}), b.values(v, {3, 2}, b.f64), b.values(v, {6}, b.i32),
                     b.values(v, {1, 6}, b.i64), b.values(v, {2, 3}, b.b8)};
}
PARITY_CASE(Creation, from_data_0d_and_empty) {
  return std::vector{b.values({4.5}, {}), b.values({}, {2, 0}, b.i64)};
}
PARITY_CASE(Creation, scalar_tensor_float) { return b.scalar_tensor(2.5); }
PARITY_CASE(Creation, scalar_tensor_with_dtype) { return b.scalar_tensor(3, b.i64); }
PARITY_CASE(Creation, scalar_tensor_of_int_and_bool_is_float) {
  return std::vector{b.scalar_tensor(3), b.scalar_tensor(true), b.scalar_tensor(-2, b.i32)};
}

// ---- conversion and copies --------------------------------------------------------------------
PARITY_CASE(Convert, float_to_int_truncates) {
  auto x = b.values({-2.7, -0.5, 0.0, 0.5, 1.9, 3.0}, {6});
  return std::vector{x.to(b.i32), x.to(b.i64)};
}
PARITY_CASE(Convert, float_to_bool) {
  auto x = b.values({-2.7, 0.0, 0.5, -0.0}, {4});
  return x.to(b.b8);
}
PARITY_CASE(Convert, bool_and_int_to_float) {
  auto m = b.randbool({2, 3});
  auto i = b.randint(-100, 100, {2, 3}, b.i32);
  return std::vector{m.to(b.f32), m.to(b.i64), i.to(b.f64), i.to(b.i64), i.to(b.b8)};
}
PARITY_CASE(Convert, f64_to_f32_rounds) {
  auto x = b.randn({5}, b.f64) * 1e-3 + 1.0;
  return x.to(b.f32);
}
PARITY_CASE(Convert, to_on_permuted_view) {
  auto x = b.randn({2, 3, 4});
  return x.permute({2, 0, 1}).to(b.f64);
}
PARITY_CASE(Convert, contiguous_of_views) {
  auto x = b.randn({3, 4});
  return std::vector{x.t().contiguous(), x.slice(1, 1, 4, 2).contiguous(),
                     x.unsqueeze(0).expand({2, 3, 4}).contiguous()};
}
PARITY_CASE(Convert, clone_is_equal) {
  auto x = b.randn({2, 2});
  return x.clone() + x;
}

// ---- item() -------------------------------------------------------------------------------------
PARITY_CASE(Item, float_sum) {
  auto x = b.randn({4, 5});
  return x.sum().template item<float>();
}
PARITY_CASE(Item, int_max_as_int64) {
  auto x = b.randint(-50, 50, {7});
  return x.max().template item<int64_t>();
}
PARITY_CASE(Item, bool_compare) {
  auto x = b.values({1.5, -2.0}, {2});
  return std::make_tuple((x.select(0, 0) > 0).template item<bool>(),
                         (x.select(0, 1) > 0).template item<bool>());
}
PARITY_CASE(Item, one_element_2d_as_double) {
  auto x = b.randn({1, 1});
  return x.template item<double>();
}
PARITY_CASE(Item, of_lazy_expression) {
  auto x = b.randn({3});
  return (x * 2 + 1).mean().template item<float>();
}

// ---- in-place updates (the new value is written into the tensor's own buffer on realize) -----
PARITY_CASE(InPlace, arithmetic_sequence, .grad = false) {
  auto x = b.randn({3, 4});
  auto y = b.randn({4});
  x.add_(y);
  x.mul_(2.5);
  x.sub_(y, 0.5);
  x.div_(b.rand({3, 1}, 0.5, 2));
  x.mul_(b.randn({3, 4}));
  return x;
}
PARITY_CASE(InPlace, fill_zero_copy, .grad = false) {
  auto x = b.randn({2, 3}), y = b.randn({2, 3}), z = b.randint(0, 9, {3}, b.i32);
  x.fill_(1.5);
  y.zero_();
  z.copy_(b.randn({2, 3}).select(0, 1) * 3);  // cast into int32, truncating
  return std::vector{x, y, z};
}
PARITY_CASE(InPlace, copy_broadcasts_value, .grad = false) {
  auto x = b.randn({3, 4});
  x.copy_(b.randn({4}));
  return x;
}
PARITY_CASE(InPlace, reads_itself_at_other_indices, .grad = false) {
  // The update reads elements it overwrites: every read must see the old values.
  auto x = b.randn({4, 5});
  x.copy_(x.flip({0, 1}) + x.t().reshape({4, 5}));
  return x;
}
PARITY_CASE(InPlace, reduction_of_itself, .grad = false) {
  auto x = b.randn({3, 5});
  x.sub_(x.mean({1}, true));
  x.div_(x.abs().amax({1}, true));
  return x;
}
PARITY_CASE(InPlace, result_used_after_and_before, .grad = false) {
  auto x = b.randn({6});
  auto before = x * 2;  // built before the update: sees the old value
  x.add_(b.ones({6}));
  auto after = x * 2;
  return std::vector{before, after, x};
}
// A lazy value built before an in-place update but realized after it keeps the old contents
// (src/engine/overwrite.h copies them for it before the write).
PARITY_CASE(InPlace, reader_realized_after_the_update, .grad = false) {
  auto x = b.randn({6});
  b.realize(x);
  auto before = x * 2;
  x.add_(b.ones({6}));
  b.realize(x);
  auto between = x.exp();
  x.mul_(b.ones({6}) * 3);
  b.realize(x);
  return std::vector{before, between, x};
}
PARITY_CASE(InPlace, operators, .grad = false) {
  auto x = b.randn({2, 3}), y = b.randn({2, 3});
  x += y;
  x -= b.randn({3});
  x *= y;
  x *= 0.5;
  return x;
}

// ---- metadata -----------------------------------------------------------------------------------
PARITY_CASE(Metadata, sizes_numel_dim_dtype, .grad = false) {
  auto x = b.randn({2, 3, 4}), e = b.randn({0, 5}), z = b.values({1.0}, {});
  auto i = b.randint(0, 3, {3}, b.i32);
  return std::make_tuple(x.size(-1), x.size(0), x.numel(), x.dim(), e.numel(), e.size(1), z.dim(),
                         z.numel(), x.is_floating_point(), i.is_floating_point(),
                         x.permute({2, 0, 1}).size(0), x.detach() * 2);
}
