// Reductions and ops along an axis: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,
// SumSquare}, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum, TopK.
#include <numeric>

#include "common.h"
#include "ember/sorting.h"

namespace ember::onnx::ops {
namespace {

// The axes of a reduction: the `axes` attribute (an input from ReduceSum-13), all dims when
// absent or empty, or none (the identity) with noop_with_empty_axes.
std::optional<std::vector<int64_t>> reduce_axes(OpContext& c, const Tensor& x, bool from_input) {
  std::vector<int64_t> a;
  if (from_input) {
    if (c.has(1)) a = c.ints_of(1);
  } else {
    a = c.attr_ints("axes", std::vector<int64_t>{});
  }
  const bool noop = c.attr_int("noop_with_empty_axes", 0) != 0;
  if (a.empty()) {
    if (noop) return std::nullopt;
    a.resize(static_cast<size_t>(x.dim()));
    std::iota(a.begin(), a.end(), 0);
  }
  return axes(a, x.dim());
}

enum class Kind { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

std::vector<Tensor> reduce(OpContext& c, Kind k) {
  const Tensor& x = c.in(0);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const auto ax = reduce_axes(c, x, k == Kind::Sum && c.opset >= 13);
  if (!ax) return one(x);
  const IntList d = *ax;
  const ScalarType t = x.dtype();
  if (d.empty()) return one(x);
  Tensor r;
  switch (k) {
    case Kind::Sum:
      r = x.sum(d, keep, t);
      break;
    case Kind::Mean:
      r = x.is_floating_point() ? x.mean(d, keep) : x.to(kFloat64).mean(d, keep).to(t);
      break;
    case Kind::Max:
      r = x.amax(d, keep);
      break;
    case Kind::Min:
      r = x.amin(d, keep);
      break;
    case Kind::Prod: {
      r = x;
      for (auto it = d.rbegin(); it != d.rend(); ++it) r = r.prod(*it, true);
      if (!keep) {
        Shape s;
        for (int64_t i = 0; i < x.dim(); i++)
          if (std::find(d.begin(), d.end(), i) == d.end()) s.push_back(x.size(i));
        r = r.reshape(s);
      }
      r = r.to(t);
      break;
    }
    case Kind::L1:
      r = x.abs().sum(d, keep, t);
      break;
    case Kind::L2:
      r = x.square().sum(d, keep, t).to(kFloat64).sqrt().to(t);
      break;
    case Kind::LogSum:
      r = x.sum(d, keep, t).log();
      break;
    case Kind::LogSumExp:
      r = x.logsumexp(d, keep);
      break;
    case Kind::SumSquare:
      r = x.square().sum(d, keep, t);
      break;
  }
  return one(r);
}

std::vector<Tensor> arg(OpContext& c, bool max) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  const bool keep = c.attr_int("keepdims", 1) != 0, last = c.attr_int("select_last_index", 0) != 0;
  Tensor v = last ? x.flip({a}) : x;
  Tensor i = max ? v.argmax(a, keep) : v.argmin(a, keep);
  if (last) i = Scalar(x.size(a) - 1) - i;
  return one(i);
}

// Softmax family: before opset 13 the input is coerced to 2-d, [prod(dims < axis),
// prod(dims >= axis)], and normalised over the second dim; from 13 over `axis` alone.
enum class Normalise { Softmax, LogSoftmax, Hardmax };

std::vector<Tensor> softmax_family(OpContext& c, Normalise n) {
  const Tensor& x = c.in(0);
  const bool legacy = c.opset < 13;
  const int64_t a = axis(c.attr_int("axis", legacy ? 1 : -1), x.dim());
  Tensor v = x;
  int64_t d = a;
  if (legacy) {
    int64_t lead = 1;
    for (int64_t i = 0; i < a; i++) lead *= x.size(i);
    v = x.reshape({lead, lead == 0 ? 0 : x.numel() / std::max<int64_t>(lead, 1)});
    d = 1;
  }
  Tensor r;
  if (n == Normalise::Softmax) r = v.softmax(d);
  if (n == Normalise::LogSoftmax) r = v.log_softmax(d);
  if (n == Normalise::Hardmax) {
    Shape s(static_cast<size_t>(v.dim()), 1);
    s[d] = v.size(d);
    r = (v.argmax(d, true) == arange(v.size(d)).reshape(s)).to(v.dtype());
  }
  return one(r.reshape(x.sizes().vec()));
}

}  // namespace

std::vector<Tensor> reduce_sum(OpContext& c) { return reduce(c, Kind::Sum); }
std::vector<Tensor> reduce_mean(OpContext& c) { return reduce(c, Kind::Mean); }
std::vector<Tensor> reduce_max(OpContext& c) { return reduce(c, Kind::Max); }
std::vector<Tensor> reduce_min(OpContext& c) { return reduce(c, Kind::Min); }
std::vector<Tensor> reduce_prod(OpContext& c) { return reduce(c, Kind::Prod); }
std::vector<Tensor> reduce_l1(OpContext& c) { return reduce(c, Kind::L1); }
std::vector<Tensor> reduce_l2(OpContext& c) { return reduce(c, Kind::L2); }
std::vector<Tensor> reduce_log_sum(OpContext& c) { return reduce(c, Kind::LogSum); }
std::vector<Tensor> reduce_log_sum_exp(OpContext& c) { return reduce(c, Kind::LogSumExp); }
std::vector<Tensor> reduce_sum_square(OpContext& c) { return reduce(c, Kind::SumSquare); }
std::vector<Tensor> arg_max(OpContext& c) { return arg(c, true); }
std::vector<Tensor> arg_min(OpContext& c) { return arg(c, false); }
std::vector<Tensor> softmax(OpContext& c) { return softmax_family(c, Normalise::Softmax); }
std::vector<Tensor> log_softmax(OpContext& c) { return softmax_family(c, Normalise::LogSoftmax); }
std::vector<Tensor> hardmax(OpContext& c) { return softmax_family(c, Normalise::Hardmax); }

std::vector<Tensor> cum_sum(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.ints_of(1).at(0), x.dim());
  const bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  Tensor v = reverse ? x.flip({a}) : x;
  Tensor r = cumsum(v, a).to(x.dtype());
  if (exclusive) {  // shifted by one: 0, x0, x0 + x1, ...
    IntList p(2 * static_cast<size_t>(x.dim() - a), 0);
    p[p.size() - 2] = 1;
    p[p.size() - 1] = -1;
    r = constant_pad_nd(r, p);
  }
  return one(reverse ? r.flip({a}) : r);
}

std::vector<Tensor> top_k(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t k = c.opset < 10 ? c.attr_int("k") : c.ints_of(1).at(0);
  const int64_t a = axis(c.attr_int("axis", -1), x.dim());
  const bool largest = c.attr_int("largest", 1) != 0;
  c.ignore_attr({"sorted"});  // the result is always sorted, which sorted = 0 allows too
  auto [v, i] = topk(x, k, a, largest, true);
  return {v, i};
}

}  // namespace ember::onnx::ops
