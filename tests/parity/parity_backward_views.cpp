// Backward parity (parity_grad.h) of movement ops: reshape of contiguous and non-contiguous
// inputs, permute / transpose / expand (summed back) / squeeze / unsqueeze / flatten, narrow,
// slice with steps and out-of-range bounds, select / index, flip, pad (positive, negative, with a
// value), chains of views, and the composites cat, stack, split, chunk, gather (repeated indices
// accumulate).
// A body that a forward case shares is written once, beside the forward case, as
// PARITY_AND_BACKWARD_CASE (parity_grad.h).
#include "parity_grad.h"

// ---- reshape ------------------------------------------------------------------------------------
BACKWARD_CASE(GradReshape, infer_dim) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.reshape({-1}), x.reshape({3, -1}) * 2, x.view({-1, 2, 2})};
}
BACKWARD_CASE(GradReshape, of_transposed) { return b.randn({3, 4}).t().reshape({2, 6}).exp(); }
BACKWARD_CASE(GradReshape, zero_d_round_trip) {
  auto x = b.values({1.5}, {});
  return std::vector{x.reshape({1, 1}), x.reshape({1}).reshape({})};
}

// ---- expand (summed back) -----------------------------------------------------------------------
BACKWARD_CASE(GradExpand, of_transposed) {
  return b.randn({1, 3}).t().expand({3, 4}) * b.randn({3, 4});
}
BACKWARD_CASE(GradExpand, unsqueeze_expand_sum) {
  return b.randn({2, 4}).unsqueeze(0).expand({3, 2, 4}).sum({0});
}

// ---- squeeze / unsqueeze / flatten ------------------------------------------------------------
BACKWARD_CASE(GradFlatten, of_permuted) {
  return b.randn({2, 3, 4}).permute({2, 1, 0}).flatten(0, 1);
}

// ---- narrow / slice / select / index ------------------------------------------------------------
BACKWARD_CASE(GradSlice, narrow) {
  auto x = b.randn({4, 5});
  return std::vector{x.narrow(0, 1, 2), x.narrow(1, -3, 2)};
}
BACKWARD_CASE(GradSlice, narrow_empty) { return b.randn({4, 5}).narrow(1, 0, 0); }
BACKWARD_CASE(GradSlice, negative_and_out_of_range_bounds) {
  auto x = b.randn({6, 4});
  return std::vector{x.slice(0, -4, -1), x.slice(0, 2, 100), x.slice(0, -100, 2),
                     x.slice(0, b.none, b.none, 2)};
}
BACKWARD_CASE(GradSlice, overlapping_slices_accumulate) {
  auto x = b.randn({8});
  return x.slice(0, 0, 6) * x.slice(0, 2, 8) + x.slice(0, 1, 7, 1).exp();
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
