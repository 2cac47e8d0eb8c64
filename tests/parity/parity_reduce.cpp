// Parity: reductions (sum, mean, max, min, prod, var, std, argmax, argmin, logsumexp) and softmax /
// log_softmax, with dim/keepdim, negative dims, several dims, 0-d and empty inputs and
// non-contiguous (permuted, sliced, expanded) inputs.
#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

#include "parity_grad.h"

#define TR .tol = parity::kTranscendental
#define NOGRAD .grad = false

// ---- sum ------------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Sum, all, GradSum, all) { return b.randn({3, 4}).sum(); }
PARITY_AND_BACKWARD_CASE(Sum, dim, GradSum, dim) { return b.randn({3, 4}).sum({1}); }
PARITY_AND_BACKWARD_CASE(Sum, dim_keepdim, GradSum, dim_keepdim) {
  return b.randn({3, 4, 2}).sum({1}, true);
}
PARITY_AND_BACKWARD_CASE(Sum, negative_dim, GradSum, negative_dim) {
  return b.randn({3, 4, 2}).sum({-1});
}
PARITY_CASE(Sum, several_dims) {
  auto x = b.randn({2, 3, 4, 5});
  return std::vector{x.sum({2, 0}), x.sum({-1, 1}, true), x.sum({0, 1, 2, 3})};
}
PARITY_CASE(Sum, int_and_bool_give_int64, NOGRAD) {
  return std::vector{b.randint(-9, 9, {3, 4}, b.i32).sum({0}), b.randbool({5, 2}).sum(),
                     b.randint(0, 255, {6}, b.u8).sum()};
}
PARITY_CASE(Sum, with_dtype) {
  auto x = b.randn({4, 3});
  return std::vector{x.sum(b.f64), x.sum({1}, false, b.f64), b.randint(0, 9, {4}).sum(b.f32)};
}
PARITY_CASE(Sum, of_0d) {
  auto x = b.values({2.5}, {});
  return std::vector{x.sum(), x.sum({0}), x.sum({-1}, true)};
}
PARITY_CASE(Sum, of_empty) {
  auto x = b.randn({0, 3});
  return std::vector{x.sum(), x.sum({0}), x.sum({1}), x.sum({0}, true)};
}
PARITY_CASE(Sum, float_to_int_dtype, NOGRAD) {
  auto x = b.randn({3, 4}) * 5;
  return std::vector{x.sum(b.i64), x.sum({1}, true, b.i32)};
}
PARITY_AND_BACKWARD_CASE(Sum, of_permuted, GradSum, of_permuted) {
  return b.randn({2, 3, 4}).permute({2, 0, 1}).sum({0});
}
PARITY_CASE(Sum, of_strided_slice) { return b.randn({6, 5}).slice(0, 1, 6, 2).sum({0}); }
PARITY_CASE(Sum, of_expanded) { return b.randn({3, 1}).expand({3, 5}).sum({1}); }
PARITY_CASE(Sum, of_elementwise_expression) {
  auto x = b.randn({4, 5}), y = b.randn({5});
  return (x * y + 1).sum({1});
}
PARITY_AND_BACKWARD_CASE(Sum, larger_row, GradSum, larger_row) {
  return b.randn({3, 257}).sum({1});
}

// ---- mean ---------------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Mean, all_and_dims, GradMean, all_and_dims) {
  auto x = b.randn({3, 4, 5});
  return std::vector{x.mean(), x.mean({1}), x.mean({2, 0}, true), x.mean({-1})};
}
PARITY_CASE(Mean, f64) { return b.randn({4, 6}, b.f64).mean({1}); }
PARITY_AND_BACKWARD_CASE(Mean, of_view, GradMean, of_view) {
  return b.randn({4, 6}).t().slice(0, 0, 6, 3).mean({1}, true);
}
PARITY_CASE(Mean, of_0d) { return b.values({3.0}, {}).mean(); }
PARITY_CASE(Mean, over_empty_dim_is_nan) {
  auto x = b.randn({0, 3});
  return std::vector{x.mean({0}), x.mean(), x.var({0}), x.std({0}, false), x.mean({1})};
}

// Reductions over odd lengths (vector tails and unrolled accumulators at every ISA level), along
// contiguous, column and strided axes. Inputs in [0, 1): no sum lies near zero.
PARITY_CASE(Sum, odd_sizes) {
  std::vector<typename B::T> out;
  for (int64_t n : {1, 3, 17, 127, 129, 10001}) {
    out.push_back(b.rand({3, n}).sum({1}));
    out.push_back(b.rand({n, 5}).sum({0}));
    out.push_back(b.rand({n, 6}).slice(1, 0, 6, 2).mean({0}));
    out.push_back(b.rand({2, n, 3}).sum({1}, true));
  }
  return out;
}

// The PPO loss's kernels (rl/ppo.cpp): the clipped surrogate (exp and selects), the clip fraction
// (a comparison cast to float inside a sum) and the approximate KL, over odd lengths (vector
// tails), run again under every ISA level (CMakeLists.txt): at AVX2 and SSE2 these loops
// vectorise only with -fno-trapping-math and 32-bit bool locals (runtime/cpu/compiler.cpp,
// codegen/c_expr.cpp). NaN and infinities in the log-probabilities reach the selects and the
// comparison lane by lane (the elementwise surrogate is returned unreduced, so one NaN does not
// hide the other lanes).
PARITY_CASE(PpoLoss, objective_clip_fraction_kl, TR) {
  std::vector<typename B::T> out;
  for (int64_t n : {1, 3, 17, 127, 129, 10001}) {
    auto lp = b.randn({n}) * 0.3, old = b.randn({n}) * 0.3, adv = b.randn({n});
    auto d = lp - old;
    auto ratio = d.exp();
    out.push_back(-b.minimum(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean());
    out.push_back(((ratio - 1).abs() > 0.2).to(b.f32).mean());
    out.push_back(((ratio - 1) - d).mean());
  }
  return out;
}
PARITY_CASE(PpoLoss, nan_and_infinities_lane_by_lane, TR) {
  std::vector<typename B::T> out;
  for (int64_t n : {1, 13, 125, 10001}) {
    auto special = b.values({NAN, INFINITY, -INFINITY, 90.0, -90.0, 0.0}, {6});
    auto lp = b.cat({b.randn({n}) * 0.3, special}), old = b.randn({n + 6}) * 0.3;
    auto adv = b.randn({n + 6});
    auto ratio = (lp - old).exp();
    out.push_back(-b.minimum(ratio * adv, ratio.clamp(0.8, 1.2) * adv));
    out.push_back(((ratio - 1).abs() > 0.2).to(b.f32).sum());
    out.push_back(((ratio - 1).abs() > 0.2).to(b.f32));
  }
  return out;
}

// ---- max / min / argmax / argmin ---------------------------------------------------------------
PARITY_CASE(MaxReduce, odd_sizes) {
  std::vector<typename B::T> out;
  for (int64_t n : {1, 3, 17, 127, 129, 10001}) {
    auto x = b.randn({3, n});
    out.push_back(x.amax({1}));
    out.push_back(b.randn({n, 3}).amin({0}));
  }
  return out;
}
PARITY_AND_BACKWARD_CASE(MaxReduce, all, GradMax, all_no_ties) {
  auto x = b.randn({3, 4});
  return std::vector{x.max(), x.min()};
}
PARITY_CASE(MaxReduce, dim_tuple, NOGRAD) {
  auto x = b.randn({3, 4});
  return std::make_tuple(x.max(1), x.min(0), x.max(-1, true));
}
PARITY_CASE(MaxReduce, ties_pick_first_index, NOGRAD) {
  auto x = b.randint(0, 3, {4, 6});
  return std::make_tuple(x.max(1), x.min(1), x.max(0, true), x.min(-2));
}
PARITY_CASE(MaxReduce, amax_amin_several_dims) {
  auto x = b.randn({2, 3, 4});
  return std::vector{x.amax({0, 2}), x.amin({1}, true), x.amax({-1, -2}, true)};
}
PARITY_CASE(MaxReduce, int_and_bool, NOGRAD) {
  auto i = b.randint(-50, 50, {3, 5}, b.i32);
  auto m = b.randbool({3, 4});
  return std::vector{i.max(), i.min(), i.amax({1}), m.max(), m.min(), m.amax({0})};
}
PARITY_CASE(MaxReduce, any_all_of_comparisons, NOGRAD) {
  // max/min over bool comparison results (a GCC 12 vectoriser bug once turned these into 255).
  auto x = b.randint(0, 3, {3, 8}), y = b.randint(0, 3, {3, 8});
  auto eq = x == y, lt = x < 1;
  return std::vector{eq.amax({1}),       eq.amin({1}), lt.logical_not().amax({1}),
                     (x != 5).amin({1}), eq.max(),     lt.min()};
}
PARITY_CASE(MaxReduce, uint8_min_with_zeros, NOGRAD) {
  auto x = b.values({5, 0, 3, 200, 9, 255, 0, 1}, {2, 4}, b.u8);
  return std::make_tuple(x.min(), x.max(), x.amin({1}), x.min(1), x.argmin(), x.argmin(0));
}
PARITY_CASE(MaxReduce, int_extremes, NOGRAD) {
  auto x = b.values({-2147483648.0, 0, 2147483647.0, -1, 5, -2147483648.0}, {2, 3}, b.i32);
  auto y = b.values({-9223372036854775808.0, 0, 4611686018427387904.0, -1}, {4}, b.i64);
  return std::make_tuple(x.min(), x.max(), x.min(1), x.max(0), x.argmin(), y.min(), y.argmin(),
                         y.max(0));
}
PARITY_CASE(MaxReduce, with_infinities) {
  auto x = b.values({-INFINITY, -INFINITY, 1.0, INFINITY, -2.0, 3.0}, {3, 2});
  return std::vector{x.amax({1}), x.amin({1}), x.max(), x.min()};
}
PARITY_CASE(MaxReduce, nan_propagates) {
  auto x = b.values({1.0, NAN, 3.0, 2.0, 5.0, -1.0}, {2, 3});
  return std::vector{x.amax({1}), x.amin({1}), x.max(), x.min()};
}
PARITY_AND_BACKWARD_CASE(MaxReduce, of_permuted_view, GradMax, of_permuted_view) {
  auto x = b.randn({3, 4, 5}).permute({1, 2, 0});
  return std::vector{x.amax({2}), x.amin({0}, true)};
}
PARITY_CASE(MaxReduce, of_0d, NOGRAD) {
  auto x = b.values({2.0}, {});
  return std::make_tuple(x.max(), x.max(0), x.min(-1, true), x.argmax(), x.argmax(0));
}
PARITY_CASE(ArgMax, flat_and_dims, NOGRAD) {
  auto x = b.randn({3, 5});
  return std::vector{x.argmax(), x.argmin(), x.argmax(1), x.argmin(0), x.argmax(-1, true)};
}
PARITY_CASE(ArgMax, ties_first_occurrence, NOGRAD) {
  auto x = b.randint(0, 2, {5, 7}, b.i32);
  return std::vector{x.argmax(1), x.argmin(1), x.argmax(0), x.argmax(), x.argmin()};
}
PARITY_CASE(ArgMax, keepdim_without_dim, NOGRAD) { return b.randn({2, 3, 4}).argmax(b.none, true); }
PARITY_CASE(ArgMax, of_views, NOGRAD) {
  auto x = b.randn({4, 6});
  return std::vector{x.t().argmax(1), x.slice(1, 0, 6, 2).argmin(0), x.flip({1}).argmax(1)};
}
PARITY_CASE(ArgMax, nan_is_the_extreme, NOGRAD) {
  auto x = b.values({1.0, NAN, 3.0, NAN, 2.0, 0.0, -1.0, 4.0, NAN}, {3, 3});
  return std::make_tuple(x.argmax(1), x.argmin(1), x.argmax(), x.argmin(0), x.max(1), x.min(1));
}
PARITY_CASE(ArgMax, with_infinities, NOGRAD) {
  auto x = b.values({-INFINITY, -INFINITY, 1.0, INFINITY, INFINITY, 0.0}, {2, 3});
  return std::vector{x.argmax(1), x.argmin(1), x.argmax(0)};
}

// ---- prod ---------------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Prod, all_and_dim, GradProd, all_and_dim) {
  auto x = b.rand({3, 4}, 0.5, 1.5);
  return std::vector{x.prod(), x.prod(1), x.prod(0, true), x.prod(-1)};
}
PARITY_CASE(Prod, int_gives_int64, NOGRAD) {
  auto x = b.randint(-3, 4, {3, 4}, b.i32);
  return std::vector{x.prod(), x.prod(1)};
}
PARITY_CASE(Prod, of_empty_and_0d) {
  return std::vector{b.randn({0, 2}).prod(), b.randn({2, 0}).prod(1), b.values({3.0}, {}).prod()};
}
PARITY_CASE(Prod, bool_gives_int64, NOGRAD) { return b.randbool({3, 4}).prod(1); }

// ---- var / std ----------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Var, all, GradVar, all) {
  auto x = b.randn({4, 5});
  return std::vector{x.var(), x.var(false), x.std(), x.std(false)};
}
PARITY_AND_BACKWARD_CASE(Var, dims, GradVar, dims) {
  auto x = b.randn({3, 4, 5});
  return std::vector{x.var({1}, true, false), x.var({2, 0}, false, true), x.std({-1}, true, true),
                     x.std({1, 0}, false)};
}
PARITY_CASE(Var, dims_overload_not_unbiased_flag) {
  // var({1}) / std({1}) reduce dim 1 (the int dim list must not bind to the `unbiased` bool).
  auto x = b.randn({3, 4});
  return std::vector{x.var({1}), x.std({1}), x.var({0}, false), x.std({-1}, true, true)};
}
PARITY_CASE(Var, f64_and_views) {
  auto x = b.randn({5, 6}, b.f64);
  return std::vector{x.var({0}), x.t().std({1}), x.slice(1, 0, 6, 2).var({1}, false)};
}
PARITY_CASE(Var, single_element_is_nan) {
  auto x = b.randn({3, 1});
  return std::vector{x.var({1}), x.var({1}, false), x.std({1})};
}

// ---- logsumexp ----------------------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(LogSumExp, dims, GradLogSumExp, dims, TR) {
  auto x = b.randn({3, 4, 5}) * 3;
  return std::vector{x.logsumexp({1}), x.logsumexp({2, 0}, true), x.logsumexp({-1})};
}
PARITY_CASE(LogSumExp, large_values_stable, TR) {
  auto x = b.randn({2, 6}) + 500;
  return x.logsumexp({1});
}
PARITY_CASE(LogSumExp, all_minus_infinity_row, TR) {
  auto x = b.values({-INFINITY, -INFINITY, 0.0, 1.0}, {2, 2});
  return x.logsumexp({1});
}
PARITY_CASE(LogSumExp, over_empty_dim_is_minus_infinity, TR) {
  return std::vector{b.randn({3, 0}).logsumexp({1}), b.randn({0, 2}).logsumexp({0}, true),
                     b.randn({0, 2}).logsumexp({1})};
}
PARITY_AND_BACKWARD_CASE(LogSumExp, of_permuted, GradLogSumExp, of_permuted, TR) {
  return b.randn({3, 4}).t().logsumexp({1}, true);
}

// ---- softmax / log_softmax ----------------------------------------------------------------------
PARITY_AND_BACKWARD_CASE(Softmax, last_dim, GradSoftmax, last_dim, TR) {
  return b.randn({4, 6}).softmax(1);
}
PARITY_AND_BACKWARD_CASE(Softmax, first_and_negative_dims, GradSoftmax, first_and_negative_dims,
                         TR) {
  auto x = b.randn({3, 4, 5}) * 2;
  return std::vector{x.softmax(0), x.softmax(-2), x.softmax(-1)};
}
PARITY_AND_BACKWARD_CASE(Softmax, large_logits_stable, GradSoftmax, large_logits, TR) {
  return b.values({1000, 1001, 1002, -1000, 0, 1000}, {2, 3}).softmax(1);
}
PARITY_CASE(Softmax, masked_with_minus_infinity, TR) {
  return b.values({0.5, -INFINITY, 1.0, -INFINITY, 2.0, 0.0}, {2, 3}).softmax(-1);
}
PARITY_AND_BACKWARD_CASE(Softmax, of_view, GradSoftmax, of_view, TR) {
  return b.randn({5, 4}).t().slice(1, 0, 5, 2).softmax(1);
}
PARITY_CASE(Softmax, of_0d_and_size1, TR) {
  return std::vector{b.values({3.0}, {}).softmax(0), b.randn({3, 1}).softmax(1)};
}
PARITY_CASE(Softmax, empty_inputs, TR) {
  auto x = b.randn({3, 0}), y = b.randn({0, 4});
  return std::vector{x.softmax(1), x.log_softmax(1), x.softmax(0), y.softmax(1), y.log_softmax(0)};
}
PARITY_AND_BACKWARD_CASE(LogSoftmax, dims, GradLogSoftmax, dims, TR) {
  auto x = b.randn({3, 4, 5}) * 2;
  return std::vector{x.log_softmax(1), x.log_softmax(-1), x.log_softmax(0)};
}
PARITY_AND_BACKWARD_CASE(LogSoftmax, large_logits_stable, GradLogSoftmax, large_logits, TR) {
  return b.values({1000, 1001, 1002, -1000, 0, 1000}, {2, 3}).log_softmax(1);
}
PARITY_AND_BACKWARD_CASE(LogSoftmax, f64, GradLogSoftmax, f64, TR) {
  return b.randn({3, 7}, b.f64).log_softmax(1);
}
PARITY_CASE(LogSoftmax, free_functions, TR) {
  auto x = b.randn({2, 5});
  return std::vector{x.softmax(1).log(), x.log_softmax(1)};
}

// ---- reductions feeding more math (fusion of reduce epilogues and multiple users) ------------
PARITY_CASE(ReduceChain, normalize_rows, TR) {
  auto x = b.randn({4, 8});
  auto m = x.mean({1}, true);
  auto s = x.std({1}, false, true);
  return (x - m) / (s + 1e-5);
}
PARITY_AND_BACKWARD_CASE(ReduceChain, shared_reduce_two_outputs, GradLoss,
                         shared_reduce_two_outputs) {
  auto x = b.randn({5, 3});
  auto s = x.sum({0}, true);
  return std::vector{x * s, s + 1};
}
PARITY_CASE(ReduceChain, reduce_of_reduce) {
  auto x = b.randn({3, 4, 5});
  return x.sum({2}).amax({1});
}
PARITY_AND_BACKWARD_CASE(ReduceChain, reduce_result_through_views, GradViewChain,
                         reduce_result_through_views) {
  auto x = b.randn({2, 3, 4}), y = b.randn({4, 2});
  auto s = x.sum({1});  // [2, 4]
  return std::vector{s.reshape({8}) + 1, s.t() * y, b.pad(s, {1, 1}, 0.5), s.flip({1}).exp(),
                     s.unsqueeze(0).expand({3, 2, 4}).sum({0})};
}
PARITY_CASE(ReduceChain, two_reductions_in_one_expression) {
  auto x = b.randn({3, 5});
  return std::vector{x.amax({1}) + x.sum({1}), x.sum({0}).amax({0}) * x.amin({1}),
                     x.sum({1}, true).expand({3, 5}).sum({0})};
}
PARITY_AND_BACKWARD_CASE(ReduceChain, reduce_after_broadcast_op, GradSum, of_broadcast_product) {
  auto x = b.randn({4, 1}), y = b.randn({1, 6});
  return (x * y).sum({0});
}
// Full reductions combined into one element are the nests of one kernel (schedule/kernel.h), each
// over its own loop space, as clip_grad_norm_ sums the squared norms of every gradient: sizes
// that divide no vector (1, 3, 17, 127, 129, 10001), an empty one, views that are not contiguous.
PARITY_CASE(ReduceChain, nests_of_many_sizes) {
  auto total = b.randn({0}).square().sum();
  for (parity::Shape s : {parity::Shape{1}, {3}, {17}, {127}, {129}, {10001}, {3, 17}, {129, 127}})
    total = total + b.randn(s).square().sum();
  total = total + b.randn({17, 3}).t().slice(1, 1, 17, 3).square().sum();
  auto norm = total.sqrt();
  return std::vector{norm, (0.5 / (norm + 1e-6)).clamp_max(1.0)};
}
PARITY_CASE(ReduceChain, nests_of_each_reduce_op) {
  // The first full reduce is the kernel's own loop, the others are nests; max, prod, mean, int.
  auto x = b.randn({129, 5}), y = b.randn({17, 3}), z = b.rand({7}, 0.5, 1.5);
  auto i = b.randint(-9, 9, {33}, b.i32);
  auto r = x.sum() + y.max() * z.prod() - x.slice(0, 3, 129, 7).mean() + i.sum().to(b.f32) +
           b.pad(y, {1, 2}, 0.25).min();
  return std::vector{r, y.max() + z.sum(), i.max() * 3 + (i - 1).sum()};
}

// ---- random reductions --------------------------------------------------------------------------
// Every reduction over random dims (negative too, one or two, keepdim or not) of random views
// (permuted, sliced with steps, flipped, padded, expanded); the choices come from a fixed-seed
// generator, so both backends build the same graphs.
template <class B>
typename B::T random_view(B& b, std::mt19937& g, bool positive) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  parity::Shape s(static_cast<size_t>(pick(1, 4)));
  for (auto& d : s) d = pick(1, 6);
  auto x = positive ? b.rand(s, 0.5, 1.5) : b.randn(s) * 2;
  const int64_t nd = x.dim(), d = pick(0, nd - 1), n = s[d];
  switch (pick(0, 5)) {
    case 0: {
      parity::Shape p(nd);
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), g);
      return x.permute(p);
    }
    case 1:
      return x.slice(d, pick(0, n - 1), n, pick(1, 2));
    case 2:
      return x.flip({d});
    case 3:
      return b.pad(x, {pick(0, 2), pick(0, 1)}, positive ? 1.0 : 0.0);
    case 4: {
      auto e = parity::Shape(s);
      e.insert(e.begin(), pick(2, 3));
      return x.expand(e);
    }
    default:
      return x;
  }
}
PARITY_CASE(RandomReduce, ops_dims_views, .tol = parity::kTranscendental, .grad = false) {
  std::mt19937 g(4242);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g);
  };
  std::vector<typename B::T> out;
  for (int i = 0; i < 70; i++) {
    int64_t op = pick(0, 12);
    auto x = random_view(b, g, op == 4);
    const int64_t nd = x.dim();
    parity::Shape dims = {pick(0, nd - 1)};
    if (nd > 1 && pick(0, 1)) dims.push_back((dims[0] + pick(1, nd - 1)) % nd);
    for (auto& d : dims)
      if (pick(0, 1)) d -= nd;
    const bool keep = pick(0, 1) == 1;
    const int64_t d0 = dims[0];
    // Ops 0-11 return one tensor, op 12 (max) two.
    const std::function<typename B::T()> reduce[] = {
        [&] { return x.sum(dims, keep); },
        [&] { return x.mean(dims, keep); },
        [&] { return x.amax(dims, keep); },
        [&] { return x.amin(dims, keep); },
        [&] { return x.prod(d0, keep); },
        [&] { return x.var(dims, pick(0, 1) == 1, keep); },
        [&] { return x.std(dims, pick(0, 1) == 1, keep); },
        [&] { return x.logsumexp(dims, keep); },
        [&] { return x.softmax(d0); },
        [&] { return x.log_softmax(d0); },
        [&] { return x.argmax(d0, keep); },
        [&] { return x.argmin(d0, keep); },
    };
    if (op < 12) {
      out.push_back(reduce[op]());
    } else {
      auto [v, ix] = x.max(d0, keep);
      out.push_back(v);
      out.push_back(ix);
    }
  }
  return out;
}

// A slice of a reduce's output is not the reduce's whole output: the reduce cannot store straight
// into the smaller root (the scheduler took it for the identity and crashed with a double free;
// the codegen fuzzer's seed 700688).
PARITY_CASE(Reduce, slice_of_reduce_output) {
  auto x = b.randn({3, 4});
  return std::vector{x.amax({0}, true).reshape({4}).slice(0, 0, 3), x.sum({1}).slice(0, 1, 3),
                     x.t().sum({0}, true).reshape({3}).slice(0, 0, 2),
                     (x > 0).amax({0}, true).reshape({4}).slice(0, 0, 3)};
}
