// Backward parity (parity_grad.h) of movement ops: reshape of contiguous and non-contiguous
// inputs, permute / transpose / expand (summed back) / squeeze / unsqueeze / flatten, narrow,
// slice with steps and out-of-range bounds, select / index, flip, pad (positive, negative, with a
// value), chains of views, and the composites cat, stack, split, chunk, gather (repeated indices
// accumulate).
#include "parity_grad.h"

// ---- reshape ------------------------------------------------------------------------------------
BACKWARD_CASE(GradReshape, contiguous) { return b.randn({2, 3, 4}).reshape({4, 6}); }
BACKWARD_CASE(GradReshape, infer_dim) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.reshape({-1}), x.reshape({3, -1}) * 2, x.view({-1, 2, 2})};
}
BACKWARD_CASE(GradReshape, of_permuted) {
  return b.randn({2, 3, 4}).permute({2, 0, 1}).reshape({4, 6}) * 2;
}
BACKWARD_CASE(GradReshape, of_transposed) { return b.randn({3, 4}).t().reshape({2, 6}).exp(); }
BACKWARD_CASE(GradReshape, of_strided_slice) {
  return b.randn({4, 6}).slice(1, 0, 6, 2).reshape({12});
}
BACKWARD_CASE(GradReshape, of_expanded) { return b.randn({3, 1}).expand({3, 4}).reshape({2, 6}); }
BACKWARD_CASE(GradReshape, of_padded) { return b.pad(b.randn({2, 3}), {1, 0}).reshape({8}); }
BACKWARD_CASE(GradReshape, zero_d_round_trip) {
  auto x = b.values({1.5}, {});
  return std::vector{x.reshape({1, 1}), x.reshape({1}).reshape({})};
}
BACKWARD_CASE(GradReshape, size1_dims) {
  return b.randn({1, 6, 1}).reshape({2, 1, 3}).reshape({6, 1}) + 1;
}

// ---- permute / transpose ------------------------------------------------------------------------
BACKWARD_CASE(GradPermute, three_d) { return b.randn({2, 3, 4}).permute({1, 2, 0}); }
BACKWARD_CASE(GradPermute, negative_dims) { return b.randn({2, 3, 4}).permute({-1, 0, -2}); }
BACKWARD_CASE(GradPermute, of_permuted) {
  return b.randn({2, 3, 4, 5}).permute({3, 1, 0, 2}).permute({2, 0, 3, 1});
}
BACKWARD_CASE(GradTranspose, dims) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.transpose(0, 2), x.transpose(-1, 1), x.transpose(1, 1)};
}
BACKWARD_CASE(GradTranspose, t_of_2d_1d_0d) {
  return std::vector{b.randn({2, 5}).t(), b.randn({4}).t(), b.values({2.0}, {}).t()};
}
BACKWARD_CASE(GradTranspose, then_elementwise) {
  auto x = b.randn({3, 4});
  return x.t() * b.randn({4, 3}) + x.t().exp();
}

// ---- expand (summed back) -----------------------------------------------------------------------
BACKWARD_CASE(GradExpand, size1_dims) { return b.randn({3, 1}).expand({3, 4}); }
BACKWARD_CASE(GradExpand, new_leading_and_minus1) { return b.randn({1, 4}).expand({2, 3, -1}); }
BACKWARD_CASE(GradExpand, zero_d) { return b.values({2.5}, {}).expand({2, 3}); }
BACKWARD_CASE(GradExpand, expand_as_and_math) {
  auto x = b.randn({4, 1}), y = b.randn({4, 5});
  return x.expand_as(y) * y;
}
BACKWARD_CASE(GradExpand, of_transposed) {
  return b.randn({1, 3}).t().expand({3, 4}) * b.randn({3, 4});
}
BACKWARD_CASE(GradExpand, unsqueeze_expand_sum) {
  return b.randn({2, 4}).unsqueeze(0).expand({3, 2, 4}).sum({0});
}

// ---- squeeze / unsqueeze / flatten ------------------------------------------------------------
BACKWARD_CASE(GradSqueeze, all_and_dim) {
  auto x = b.randn({1, 3, 1, 2});
  return std::vector{x.squeeze(), x.squeeze(0), x.squeeze(-2), x.squeeze(1)};
}
BACKWARD_CASE(GradUnsqueeze, positions) {
  auto x = b.randn({2, 3});
  return std::vector{x.unsqueeze(0), x.unsqueeze(1), x.unsqueeze(-1), x.unsqueeze(2)};
}
BACKWARD_CASE(GradFlatten, ranges) {
  auto x = b.randn({2, 3, 4, 5});
  return std::vector{x.flatten(), x.flatten(1), x.flatten(1, 2), x.flatten(-2, -1)};
}
BACKWARD_CASE(GradFlatten, of_permuted) {
  return b.randn({2, 3, 4}).permute({2, 1, 0}).flatten(0, 1);
}

// ---- narrow / slice / select / index ------------------------------------------------------------
BACKWARD_CASE(GradSlice, narrow) {
  auto x = b.randn({4, 5});
  return std::vector{x.narrow(0, 1, 2), x.narrow(1, -3, 2)};
}
BACKWARD_CASE(GradSlice, narrow_empty) { return b.randn({4, 5}).narrow(1, 0, 0); }
BACKWARD_CASE(GradSlice, steps) {
  auto x = b.randn({7, 9});
  return std::vector{x.slice(1, 0, 9, 2), x.slice(0, 1, 7, 3), x.slice(1, 2, 8, 4),
                     x.slice(0, 0, 7, 7)};
}
BACKWARD_CASE(GradSlice, negative_and_out_of_range_bounds) {
  auto x = b.randn({6, 4});
  return std::vector{x.slice(0, -4, -1), x.slice(0, 2, 100), x.slice(0, -100, 2),
                     x.slice(0, b.none, b.none, 2)};
}
BACKWARD_CASE(GradSlice, of_slice_with_steps) {
  return b.randn({10, 3}).slice(0, 1, 10, 2).slice(0, 1, 5, 2) * 3;
}
BACKWARD_CASE(GradSlice, step_on_padded) { return b.pad(b.randn({5}), {2, 3}).slice(0, 1, 10, 3); }
BACKWARD_CASE(GradSlice, overlapping_slices_accumulate) {
  auto x = b.randn({8});
  return x.slice(0, 0, 6) * x.slice(0, 2, 8) + x.slice(0, 1, 7, 1).exp();
}
BACKWARD_CASE(GradSelect, dims_and_negative_index) {
  auto x = b.randn({3, 4, 5});
  return std::vector{x.select(0, 1), x.select(1, -1), x.select(-1, 2), x.select(2, 0).select(0, 2)};
}
BACKWARD_CASE(GradIndex, mixed_entries) {
  auto x = b.randn({4, 5, 6});
  return std::vector{x.index({b.at(1)}), x.index({b.sl(1, 3), b.at(-1)}),
                     x.index({b.sl(b.none, b.none, 2), b.sl(1, b.none), b.at(0)}),
                     x.index({b.at(2), b.at(3), b.sl(b.none, 4, 3)})};
}
BACKWARD_CASE(GradIndex, to_0d_elements) {
  auto x = b.randn({3, 4});
  return x.index({b.at(2), b.at(1)}) * x.index({b.at(0), b.at(0)});
}

// ---- flip ---------------------------------------------------------------------------------------
BACKWARD_CASE(GradFlip, dims) {
  auto x = b.randn({3, 4, 5});
  return std::vector{x.flip({0}), x.flip({-1}), x.flip({2, 0})};
}
BACKWARD_CASE(GradFlip, of_views) {
  auto x = b.randn({4, 6});
  return std::vector{x.t().flip({1}), x.slice(1, 1, 6, 2).flip({0, 1}) * 2};
}
BACKWARD_CASE(GradFlip, times_itself) {
  auto x = b.randn({7});
  return x * x.flip({0});
}

// ---- pad ----------------------------------------------------------------------------------------
BACKWARD_CASE(GradPad, last_dim) { return b.pad(b.randn({2, 3}), {1, 2}); }
BACKWARD_CASE(GradPad, last_two_dims) { return b.pad(b.randn({2, 3, 4}), {1, 0, 2, 1}); }
BACKWARD_CASE(GradPad, all_dims_with_value) { return b.pad(b.randn({2, 3}), {1, 1, 1, 0}, -1.5); }
BACKWARD_CASE(GradPad, negative_crops) {
  auto x = b.randn({4, 5});
  return std::vector{b.pad(x, {-1, -2}), b.pad(x, {-1, 2, 1, -3}), b.pad(x, {0, 0, -4, 0})};
}
BACKWARD_CASE(GradPad, negative_with_value) { return b.pad(b.randn({3, 4}), {2, -1, -1, 1}, 7); }
BACKWARD_CASE(GradPad, of_views) {
  auto x = b.randn({4, 6});
  return std::vector{b.pad(x.t(), {1, 1}), b.pad(x.slice(1, 0, 6, 2), {0, 2, 1, 0}, 3)};
}
BACKWARD_CASE(GradPad, then_reduce) { return b.pad(b.randn({3, 4}), {1, 1, 0, 2}).exp().sum({0}); }

// ---- chains of views ----------------------------------------------------------------------------
BACKWARD_CASE(GradViewChain, permute_slice_reshape) {
  return b.randn({4, 6, 2}).permute({1, 0, 2}).slice(0, 1, 6, 2).reshape({3, 8}).sum({1});
}
BACKWARD_CASE(GradViewChain, expand_permute_flip) {
  return b.randn({3, 1, 4}).expand({3, 2, 4}).permute({2, 0, 1}).flip({1}) * b.randn({4, 3, 2});
}
BACKWARD_CASE(GradViewChain, pad_transpose_narrow) {
  return b.pad(b.randn({3, 5}), {1, 1}).t().narrow(0, 1, 4).square();
}
BACKWARD_CASE(GradViewChain, reduce_result_through_views) {
  auto x = b.randn({2, 3, 4}), y = b.randn({4, 2});
  auto s = x.sum({1});  // [2, 4]
  return std::vector{s.reshape({8}) + 1, s.t() * y, b.pad(s, {1, 1}, 0.5), s.flip({1}).exp(),
                     s.unsqueeze(0).expand({3, 2, 4}).sum({0})};
}

// ---- cat / stack
// ----------------------------------------------------------------------------------
BACKWARD_CASE(GradCat, dim0) { return b.cat({b.randn({2, 3}), b.randn({4, 3})}); }
BACKWARD_CASE(GradCat, negative_dim) {
  return b.cat({b.randn({2, 3}), b.randn({2, 1}), b.randn({2, 2})}, -1);
}
BACKWARD_CASE(GradCat, of_views) {
  auto x = b.randn({3, 4});
  return b.cat({x.t(), b.randn({4, 2}), x.slice(0, 0, 3, 2).t().flip({1})}, 1);
}
BACKWARD_CASE(GradCat, same_tensor_twice) {
  auto x = b.randn({2, 3});
  return b.cat({x, x * 2, x}, 0);
}
BACKWARD_CASE(GradCat, with_empty) { return b.cat({b.randn({0, 3}), b.randn({2, 3})}); }
BACKWARD_CASE(GradStack, dims) {
  auto x = b.randn({2, 3}), y = b.randn({2, 3});
  return std::vector{b.stack({x, y}), b.stack({x, y, x}, 1), b.stack({y, x}, -1)};
}
BACKWARD_CASE(GradStack, of_views_then_reduce) {
  auto x = b.randn({3, 3});
  return b.stack({x, x.t(), x.flip({0})}).amax({0});
}

// ---- split / chunk ------------------------------------------------------------------------------
BACKWARD_CASE(GradSplit, last_dim) { return b.randn({4, 6}).split(2, -1); }
BACKWARD_CASE(GradSplit, uneven) {
  auto parts = b.randn({7, 3}).split(3);
  return std::vector{parts[0] * 2, parts[2].exp()};  // parts[1] gets no gradient
}
BACKWARD_CASE(GradSplit, chunk) {
  auto x = b.randn({6, 4});
  auto a = x.chunk(3), c = x.chunk(2, 1);
  return std::vector{a[0] + a[2], c[1] * c[0]};
}
BACKWARD_CASE(GradSplit, split_recombine) {
  auto parts = b.randn({4, 6}).split(2, 1);
  return b.cat({parts[2], parts[0], parts[1].square()}, 1);
}

// ---- gather -------------------------------------------------------------------------------------
BACKWARD_CASE(GradGather, dim1) { return b.randn({3, 5}).gather(1, b.randint(0, 5, {3, 4})); }
BACKWARD_CASE(GradGather, dim0_and_negative) {
  auto x = b.randn({4, 3});
  return std::vector{x.gather(0, b.randint(0, 4, {2, 3})), x.gather(-1, b.randint(0, 3, {4, 1}))};
}
BACKWARD_CASE(GradGather, repeated_indices_accumulate) {
  auto x = b.randn({2, 4});
  return x.gather(1, b.values({1, 1, 1, 3, 0, 0, 2, 0}, {2, 4}, b.i64));
}
BACKWARD_CASE(GradGather, three_d) {
  return b.randn({2, 3, 4}).gather(2, b.randint(0, 4, {2, 3, 2}));
}
BACKWARD_CASE(GradGather, of_view) {
  return b.randn({5, 3}).t().gather(1, b.randint(0, 5, {3, 2})) * 2;
}
BACKWARD_CASE(GradGather, smaller_index) {
  return b.randn({4, 5}).gather(1, b.randint(0, 5, {2, 3})).exp();
}
