// Parity: movement ops as views (reshape/view, permute, transpose, t, expand, squeeze, unsqueeze,
// flatten, narrow, slice with steps, select/index, pad incl. negative pads and a fill value, flip),
// chains of views, and the composites cat, stack, split, chunk, gather.
#include <algorithm>
#include <numeric>
#include <random>

#include "parity_grad.h"

#define NOGRAD .grad = false

// ---- reshape / view ---------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Reshape, contiguous, GradReshape, contiguous) {
  return b.randn({2, 3, 4}).reshape({4, 6});
}
PARITY_CASE(Reshape, infer_dim) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.reshape({-1}), x.reshape({3, -1}), x.view({-1, 2, 2})};
}
PARITY_AND_BACKWARD_CASE(Reshape, of_permuted_needs_copy, GradReshape, of_permuted) {
  return b.randn({2, 3, 4}).permute({2, 0, 1}).reshape({4, 6}) * 2;
}
PARITY_AND_BACKWARD_CASE(Reshape, of_strided_slice, GradReshape, of_strided_slice) {
  return b.randn({4, 6}).slice(1, 0, 6, 2).reshape({12});
}
PARITY_AND_BACKWARD_CASE(Reshape, of_expanded, GradReshape, of_expanded) {
  return b.randn({3, 1}).expand({3, 4}).reshape({2, 6});
}
PARITY_AND_BACKWARD_CASE(Reshape, of_padded, GradReshape, of_padded) {
  return b.pad(b.randn({2, 3}), {1, 0}).reshape({8});
}
PARITY_CASE(Reshape, zero_d_round_trip) {
  auto x = b.values({1.5}, {});
  return std::vector{x.reshape({1, 1}), x.reshape({1}).reshape({}),
                     b.randn({1, 1}).view(parity::Shape{})};
}
PARITY_CASE(Reshape, empty) {
  auto x = b.randn({0, 4});
  return std::vector{x.reshape({2, 0, 2}), x.reshape({-1}), x.view({4, 0})};
}
PARITY_AND_BACKWARD_CASE(Reshape, split_and_merge_size1_dims, GradReshape, size1_dims) {
  return b.randn({1, 6, 1}).reshape({2, 1, 3}).reshape({6, 1}) + 1;
}

// ---- permute / transpose / t --------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Permute, three_d, GradPermute, three_d) {
  return b.randn({2, 3, 4}).permute({1, 2, 0});
}
PARITY_AND_BACKWARD_CASE(Permute, negative_dims, GradPermute, negative_dims) {
  return b.randn({2, 3, 4}).permute({-1, 0, -2});
}
PARITY_AND_BACKWARD_CASE(Permute, of_permuted, GradPermute, of_permuted) {
  return b.randn({2, 3, 4, 5}).permute({3, 1, 0, 2}).permute({2, 0, 3, 1});
}
PARITY_AND_BACKWARD_CASE(Transpose, dims, GradTranspose, dims) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.transpose(0, 2), x.transpose(-1, 1), x.transpose(1, 1)};
}
PARITY_AND_BACKWARD_CASE(Transpose, t_of_2d_1d_0d, GradTranspose, t_of_2d_1d_0d) {
  return std::vector{b.randn({2, 5}).t(), b.randn({4}).t(), b.values({2.0}, {}).t()};
}
PARITY_AND_BACKWARD_CASE(Transpose, then_elementwise, GradTranspose, then_elementwise) {
  auto x = b.randn({3, 4});
  return x.t() * b.randn({4, 3}) + x.t().exp();
}

// ---- expand -----------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Expand, size1_dims, GradExpand, size1_dims) {
  return b.randn({3, 1}).expand({3, 4});
}
PARITY_AND_BACKWARD_CASE(Expand, new_leading_and_minus1, GradExpand, new_leading_and_minus1) {
  return b.randn({1, 4}).expand({2, 3, -1});
}
PARITY_AND_BACKWARD_CASE(Expand, zero_d, GradExpand, zero_d) {
  return b.values({2.5}, {}).expand({2, 3});
}
PARITY_CASE(Expand, to_empty) { return b.randn({1, 3}).expand({0, 3}); }
PARITY_AND_BACKWARD_CASE(Expand, expand_as_and_math, GradExpand, expand_as_and_math) {
  auto x = b.randn({4, 1}), y = b.randn({4, 5});
  return x.expand_as(y) * y;
}

// ---- squeeze / unsqueeze / flatten ---------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Squeeze, all_and_dim, GradSqueeze, all_and_dim) {
  auto x = b.randn({1, 3, 1, 2});
  return std::vector{x.squeeze(), x.squeeze(0), x.squeeze(-2), x.squeeze(1)};
}
PARITY_CASE(Squeeze, zero_d_and_all_ones) {
  return std::vector{b.values({1.0}, {}).squeeze(), b.randn({1, 1}).squeeze(),
                     b.values({1.0}, {}).squeeze(0)};
}
PARITY_AND_BACKWARD_CASE(Unsqueeze, positions, GradUnsqueeze, positions) {
  auto x = b.randn({2, 3});
  return std::vector{x.unsqueeze(0), x.unsqueeze(1), x.unsqueeze(-1), x.unsqueeze(2)};
}
PARITY_CASE(Unsqueeze, of_0d_and_view) {
  return std::vector{b.values({1.0}, {}).unsqueeze(0), b.randn({3, 4}).t().unsqueeze(1)};
}
PARITY_AND_BACKWARD_CASE(Flatten, ranges, GradFlatten, ranges) {
  auto x = b.randn({2, 3, 4, 5});
  return std::vector{x.flatten(), x.flatten(1), x.flatten(1, 2), x.flatten(-2, -1)};
}
PARITY_CASE(Flatten, of_0d_and_permuted) {
  return std::vector{b.values({1.0}, {}).flatten(),
                     b.randn({2, 3, 4}).permute({2, 1, 0}).flatten(0, 1)};
}

// ---- narrow / slice / select / index ------------------------------------------------------------
PARITY_CASE(Slice, narrow) {
  auto x = b.randn({4, 5});
  return std::vector{x.narrow(0, 1, 2), x.narrow(1, -3, 2), x.narrow(1, 0, 0)};
}
PARITY_AND_BACKWARD_CASE(Slice, steps, GradSlice, steps) {
  auto x = b.randn({7, 9});
  return std::vector{x.slice(1, 0, 9, 2), x.slice(0, 1, 7, 3), x.slice(1, 2, 8, 4),
                     x.slice(0, 0, 7, 7)};
}
PARITY_CASE(Slice, negative_and_out_of_range_bounds) {
  auto x = b.randn({6, 4});
  return std::vector{x.slice(0, -4, -1), x.slice(0, 2, 100), x.slice(0, -100, 2), x.slice(1, 3, 1),
                     x.slice(0, b.none, b.none, 2)};
}
PARITY_AND_BACKWARD_CASE(Slice, of_slice_with_steps, GradSlice, of_slice_with_steps) {
  return b.randn({10, 3}).slice(0, 1, 10, 2).slice(0, 1, 5, 2) * 3;
}
PARITY_AND_BACKWARD_CASE(Slice, step_on_padded, GradSlice, step_on_padded) {
  return b.pad(b.randn({5}), {2, 3}).slice(0, 1, 10, 3);
}
PARITY_AND_BACKWARD_CASE(Select, dims_and_negative_index, GradSelect, dims_and_negative_index) {
  auto x = b.randn({3, 4, 5});
  return std::vector{x.select(0, 1), x.select(1, -1), x.select(-1, 2), x.select(2, 0).select(0, 2)};
}
PARITY_AND_BACKWARD_CASE(Index, mixed_entries, GradIndex, mixed_entries) {
  auto x = b.randn({4, 5, 6});
  return std::vector{x.index({b.at(1)}), x.index({b.sl(1, 3), b.at(-1)}),
                     x.index({b.sl(b.none, b.none, 2), b.sl(1, b.none), b.at(0)}),
                     x.index({b.at(2), b.at(3), b.sl(b.none, 4, 3)})};
}
PARITY_CASE(Index, to_0d_element) {
  auto x = b.randn({3, 4});
  return x.index({b.at(2), b.at(1)}) + x.index({b.at(0), b.at(0)});
}

// ---- pad ----------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Pad, last_dim, GradPad, last_dim) {
  return b.pad(b.randn({2, 3}), {1, 2});
}
PARITY_AND_BACKWARD_CASE(Pad, last_two_dims, GradPad, last_two_dims) {
  return b.pad(b.randn({2, 3, 4}), {1, 0, 2, 1});
}
PARITY_AND_BACKWARD_CASE(Pad, all_dims_with_value, GradPad, all_dims_with_value) {
  return b.pad(b.randn({2, 3}), {1, 1, 1, 0}, -1.5);
}
PARITY_AND_BACKWARD_CASE(Pad, negative_crops, GradPad, negative_crops) {
  auto x = b.randn({4, 5});
  return std::vector{b.pad(x, {-1, -2}), b.pad(x, {-1, 2, 1, -3}), b.pad(x, {0, 0, -4, 0})};
}
PARITY_AND_BACKWARD_CASE(Pad, negative_with_value, GradPad, negative_with_value) {
  return b.pad(b.randn({3, 4}), {2, -1, -1, 1}, 7);
}
PARITY_CASE(Pad, int_and_bool_with_value, NOGRAD) {
  return std::vector{b.pad(b.randint(0, 9, {2, 2}, b.i32), {1, 1}, 5),
                     b.pad(b.randbool({3}), {1, 1}, true)};
}
PARITY_AND_BACKWARD_CASE(Pad, of_views, GradPad, of_views) {
  auto x = b.randn({4, 6});
  return std::vector{b.pad(x.t(), {1, 1}), b.pad(x.slice(1, 0, 6, 2), {0, 2, 1, 0}, 3)};
}
PARITY_CASE(Pad, then_reduce) { return b.pad(b.randn({3, 4}), {2, 2}, 1).sum({1}); }
PARITY_CASE(Pad, rows_entirely_padding) {
  // A slice that keeps only padding, then reshapes: the view's mask excludes every element.
  auto p = b.pad(b.randn({1, 3}), {0, 0, 2, 0}, 2.5);
  auto q = b.pad(b.randn({1, 1}), {0, 0, 1, 0}, -1);
  return std::vector{p.slice(0, 0, 1).reshape({3}), p.slice(0, 0, 2).flip({0}),
                     q.slice(0, 0, 1).reshape(parity::Shape{}), p.slice(0, 1, 3).sum({0})};
}
PARITY_CASE(Pad, expanded_and_permuted) {
  auto p = b.pad(b.randn({1, 3}), {1, 2}, 0.5);
  return std::vector{p.expand({4, 6}) * 2, p.t().expand({6, 3}) + 1,
                     p.unsqueeze(0).permute({2, 0, 1})};
}
PARITY_CASE(Pad, of_ops_that_do_not_map_zero_to_zero, .tol = parity::kTranscendental) {
  // The pad's zero fill must not pass through the op: exp(0) = 1, log(0) = -inf, 1/0, 0 == 0.
  auto x = b.rand({2, 3}, 0.5, 2), y = b.randn({2, 3});
  return std::vector{
      b.pad(x.exp(), {1, 1}),     b.pad(x.log(), {0, 2, 1, 0}),    b.pad(1.0 / x, {2, 0}),
      b.pad(x.pow(y), {1, 0}),    b.pad(x == y, {1, 1}),           b.pad((~(x > 1)), {0, 1}),
      b.pad(x / y, {1, 1, 1, 1}), b.pad(x.sigmoid() * 2, {-1, 2}), b.pad(x.exp(), {1, 1}, 0.5)};
}
PARITY_CASE(Cat, of_ops_that_do_not_map_zero_to_zero, .tol = parity::kTranscendental) {
  // cat places each piece by padding it to the full size: the pieces' fills must stay 0.
  auto x = b.rand({2, 3}, 0.5, 2), y = b.randn({2, 3});
  return std::vector{b.cat({x.exp(), y}), b.cat({y, x.log(), x.reciprocal()}, 1),
                     b.stack({x.log(), y}), b.cat({(x > 1), (y == y)}, 1),
                     b.cat({x.exp().sum({1}, true), y}, 1)};
}
PARITY_CASE(Pad, empty_dim) { return b.pad(b.randn({0, 2}), {1, 1}); }

// ---- flip -------------------------------------------------------------------------------------
PARITY_CASE(Flip, one_and_several_dims) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.flip({0}), x.flip({-1}), x.flip({0, 2}), x.flip({})};
}
PARITY_CASE(Flip, of_views) {
  auto x = b.randn({4, 6});
  return std::vector{x.t().flip({0}), x.slice(1, 1, 6, 2).flip({1}), b.pad(x, {1, 2}).flip({1})};
}

// ---- view chains --------------------------------------------------------------------------------
PARITY_CASE(ViewChain, empty_tensors_through_views) {
  auto x = b.randn({0, 3, 2});
  return std::vector{x.permute({2, 0, 1}),
                     x.flip({0, 2}),
                     b.pad(x, {1, 0, 0, 1}, 2),
                     x.slice(1, 0, 3, 2),
                     x.unsqueeze(1).expand({0, 4, 3, 2}),
                     x.squeeze(),
                     b.cat({x, x}, 1),
                     x.transpose(0, 2).reshape({2, 0})};
}
PARITY_CASE(ViewChain, permute_slice_expand_op) {
  auto x = b.randn({3, 4, 5});
  auto v = x.permute({2, 0, 1}).slice(0, 1, 5, 2).select(2, 1).unsqueeze(0).expand({3, 2, 3});
  return v * b.randn({3, 1, 3});
}
PARITY_CASE(ViewChain, reshape_of_transposed_slice) {
  return b.randn({6, 4}).t().slice(1, 0, 6, 2).reshape({2, 6}).flip({1});
}
PARITY_CASE(ViewChain, movement_only_results) {
  auto x = b.randn({3, 4});
  return std::vector{x.t(), x.slice(0, 1, 3), x.unsqueeze(1).expand({3, 2, 4}), x.flip({1})};
}

// ---- cat / stack ------------------------------------------------------------------------------
PARITY_CASE(Cat, dim0_and_dim1) {
  auto x = b.randn({2, 3}), y = b.randn({4, 3}), z = b.randn({2, 5});
  return std::vector{b.cat({x, y}), b.cat({x, z}, 1), b.cat({x, y, x}, -2)};
}
PARITY_CASE(Cat, promotes_dtypes) {
  return std::vector{b.cat({b.randint(0, 5, {2}, b.i32), b.randn({3})}),
                     b.cat({b.randbool({2}), b.randint(0, 5, {2})}),
                     b.cat({b.randn({1}), b.randn({2}, b.f64)})};
}
PARITY_CASE(Cat, with_empty_piece) {
  auto x = b.randn({2, 3});
  return std::vector{b.cat({x, b.randn({0, 3})}), b.cat({b.randn({0, 3}), b.randn({0, 3})})};
}
PARITY_CASE(Cat, of_views_and_single) {
  auto x = b.randn({3, 4});
  return std::vector{b.cat({x.t(), x.slice(0, 0, 3, 2).t()}, 1), b.cat({x.flip({0})})};
}
PARITY_CASE(Stack, dims) {
  auto x = b.randn({2, 3}), y = b.randn({2, 3});
  return std::vector{b.stack({x, y}), b.stack({x, y, x}, 1), b.stack({x, y}, -1)};
}
PARITY_CASE(Stack, zero_d_and_int) {
  return std::vector{b.stack({b.values({1.0}, {}), b.values({2.0}, {})}),
                     b.stack({b.randint(0, 9, {3}), b.randint(0, 9, {3})}, 1)};
}

// ---- split / chunk ------------------------------------------------------------------------------
PARITY_CASE(Split, even_and_uneven) {
  auto x = b.randn({6, 4});
  auto a = x.split(2), c = x.split(4), d = x.split(3, 1);
  a.insert(a.end(), c.begin(), c.end());
  a.insert(a.end(), d.begin(), d.end());
  return a;
}
PARITY_CASE(Split, pieces_used_in_math) {
  auto parts = b.randn({4, 6}).split(2, -1);
  return parts[0] * parts[1] - parts[2];
}
PARITY_CASE(Chunk, even_and_uneven) {
  auto x = b.randn({5, 6});
  auto a = x.chunk(3), c = x.chunk(2, 1), d = x.chunk(4, 1);
  a.insert(a.end(), c.begin(), c.end());
  a.insert(a.end(), d.begin(), d.end());
  return a;
}

PARITY_CASE(Chunk, empty_and_more_chunks_than_rows) {
  auto x = b.randn({0, 3}), y = b.randn({3, 2});
  auto a = x.chunk(2), c = y.chunk(5), d = x.split(2);
  a.insert(a.end(), c.begin(), c.end());
  a.insert(a.end(), d.begin(), d.end());
  return a;
}

// ---- gather -------------------------------------------------------------------------------------
PARITY_CASE(Gather, dim1) {
  auto x = b.randn({3, 5});
  return x.gather(1, b.randint(0, 5, {3, 4}));
}
PARITY_AND_BACKWARD_CASE(Gather, dim0_and_negative, GradGather, dim0_and_negative) {
  auto x = b.randn({4, 3});
  return std::vector{x.gather(0, b.randint(0, 4, {2, 3})), x.gather(-1, b.randint(0, 3, {4, 1}))};
}
PARITY_CASE(Gather, smaller_index_and_int_source, NOGRAD) {
  auto x = b.randint(-9, 9, {4, 5}, b.i32);
  return x.gather(1, b.randint(0, 5, {2, 3}));
}
PARITY_CASE(Gather, three_d_of_view) {
  auto x = b.randn({2, 4, 3}).permute({0, 2, 1});
  return x.gather(2, b.randint(0, 4, {2, 3, 2}));
}

// ---- random view chains ---------------------------------------------------------------------
// Chains of 2-7 random movement ops (with elementwise ops, cat and reductions in between) on
// random shapes; the op sequence comes from a fixed-seed generator, so both backends build the
// same chains.
template <class B>
typename B::T random_chain(B& b, std::mt19937& g) {
  auto pick = [&](int64_t lo, int64_t hi) {  // [lo, hi]
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  // Elementwise ops that do and do not map 0 to 0 (the zero fill of a pad must stay 0).
  auto elementwise = [&b](const typename B::T& t, int64_t k) -> typename B::T {
    switch (k) {
      case 0:
        return t * 2 + 1;
      case 1:
        return t.exp();
      case 2:
        return (t.abs() + 0.5).log();
      case 3:
        return t.sigmoid();
      case 4:
        return 1.0 / (t.abs() + 1);
      case 5:
        return b.where(t > 0, t, t.cos());
      default:
        return (t == 0).logical_not().to(b.f32) - t.tanh();
    }
  };
  parity::Shape s(static_cast<size_t>(pick(1, 4)));
  for (auto& d : s) d = pick(1, 5);
  auto x = b.randn(s);
  for (int64_t step = 0, n = pick(2, 7); step < n; step++) {
    const auto sh = parity::Shape(x.sizes().begin(), x.sizes().end());
    const int64_t nd = static_cast<int64_t>(sh.size());
    if (nd == 0) {
      x = x.unsqueeze(0).expand({pick(1, 3)});
      continue;
    }
    const int64_t d = pick(0, nd - 1), n_d = sh[d];
    switch (pick(0, 10)) {
      case 0: {  // permute
        parity::Shape p(nd);
        std::iota(p.begin(), p.end(), 0);
        std::shuffle(p.begin(), p.end(), g);
        x = x.permute(p);
        break;
      }
      case 1:  // slice with a step
        if (n_d > 0) {
          int64_t a = pick(0, n_d - 1);
          x = x.slice(d, a, pick(a, n_d), pick(1, 3));
        }
        break;
      case 2: {  // pad / crop the last dims (libtorch 1.13 rejects any pad of an empty tensor)
        if (x.numel() == 0) break;
        parity::Shape p;
        for (int64_t k = 0; k < std::min<int64_t>(nd, pick(1, 2)); k++) {
          int64_t size = sh[nd - 1 - k], lo = pick(size > 1 ? -1 : 0, 2);
          p.push_back(lo);
          p.push_back(pick(size - std::max<int64_t>(0, -lo) > 1 ? -1 : 0, 2));
        }
        x = b.pad(x, p, pick(0, 1) ? 1.5 : 0.0);
        break;
      }
      case 3:
        x = x.flip({d});
        break;
      case 4:
        x = x.transpose(d, pick(0, nd - 1));
        break;
      case 5: {  // unsqueeze then expand the new dim
        auto t = x.unsqueeze(d);
        parity::Shape e(t.sizes().begin(), t.sizes().end());
        e[d] = pick(1, 3);
        x = t.expand(e);
        break;
      }
      case 6:  // squeeze or merge two neighbours
        if (n_d == 1)
          x = x.squeeze(d);
        else if (d + 1 < nd)
          x = x.flatten(d, d + 1);
        break;
      case 7:  // split a dim in two
        if (n_d % 2 == 0 && n_d > 0) {
          parity::Shape r = sh;
          r[d] = 2;
          r.insert(r.begin() + d + 1, n_d / 2);
          x = x.reshape(r);
        }
        break;
      case 8:
        x = elementwise(x, pick(0, 6));
        break;
      case 9:
        x = x.sum({d}, pick(0, 1) == 1);
        break;
      case 10:
        x = b.cat({x, elementwise(x, pick(0, 6))}, d);
        break;
    }
  }
  return x;
}
PARITY_CASE(ViewChain, random_chains, .tol = parity::kTranscendental) {
  std::mt19937 g(20260101);
  std::vector<typename B::T> out;
  for (int i = 0; i < 80; i++) out.push_back(random_chain(b, g));
  return out;
}
