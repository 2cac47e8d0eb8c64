// Reductions: the SUM / RMAX / PROD primitives with dim/keepdim handling, and the composites
// (mean, min, var, std, argmax, logsumexp, softmax, log_softmax).
#include <algorithm>
#include <limits>

#include "tensor/tensor_impl.h"

namespace ember {

using ir::Op;

namespace {

std::vector<int64_t> norm_dims(const Tensor& t, IntList dims) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < t.dim(); i++) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(t.dim(), 1));
  for (auto d : dims) {
    d = detail::wrap_dim(d, t.dim());
    if (seen[d])
      throw IndexError("dim " + std::to_string(d) + " appears multiple times in the list of dims");
    seen[d] = true;
    if (t.dim() > 0) out.push_back(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  Shape s;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); i++) {
    bool r = std::find(dims.begin(), dims.end(), i) != dims.end();
    if (!r)
      s.push_back(in[i]);
    else if (keepdim)
      s.push_back(1);
  }
  return s;
}

// A reduce primitive over `dims` of a tensor already in the output dtype.
Tensor reduce(const Tensor& t, Op op, IntList dims_in, bool keepdim, const char* name) {
  auto dims = norm_dims(t, dims_in);
  // SUM and PROD have an identity (0, 1) for an empty reduction; max has none.
  if (op == Op::RMAX)
    for (auto d : dims)
      if (t.sizes()[d] == 0)
        throw IndexError(std::string(name) + "(): Expected reduction dim " + std::to_string(d) +
                         " to have non-zero size (input " + ir::shape_str(t.sizes()) + ")");
  if (t.dim() > 0 && t.numel() == 0 && op == Op::RMAX && dims.empty())
    throw IndexError(std::string(name) + "(): cannot reduce an empty tensor");
  ir::NodeRef n = detail::node_of(t);
  if (!dims.empty()) {
    ir::Arg a;
    a.ints = dims;
    n = ir::make_node(op, n->dtype, {n}, a);
  }
  return detail::make_tensor(detail::reshape_node(n, reduced_shape(t.sizes(), dims, keepdim)),
                             {&t});
}

int64_t reduced_count(const Tensor& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= t.sizes()[d];
  return n;
}

ScalarType sum_dtype(const Tensor& t, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(t.dtype(), true) ? kInt64 : t.dtype();
}

}  // namespace

Tensor Tensor::sum(std::optional<ScalarType> dtype) const { return sum({}, false, dtype); }
Tensor Tensor::sum(IntList dims, bool keepdim, std::optional<ScalarType> dtype) const {
  return reduce(to(sum_dtype(*this, dtype)), Op::SUM, dims, keepdim, "sum");
}

Tensor Tensor::mean() const { return mean({}, false); }
Tensor Tensor::mean(IntList dims, bool keepdim) const {
  if (!is_floating_point())
    throw DTypeError(std::string("mean(): could not infer output dtype. Input dtype must be a "
                                 "floating point dtype, got ") +
                     dtype_name(dtype()));
  int64_t n = reduced_count(*this, norm_dims(*this, dims));
  return sum(dims, keepdim) / static_cast<double>(n);
}

Tensor Tensor::prod() const {
  return reduce(to(sum_dtype(*this, std::nullopt)), Op::PROD, {}, false, "prod");
}
Tensor Tensor::prod(int64_t d, bool keepdim) const {
  return reduce(to(sum_dtype(*this, std::nullopt)), Op::PROD, {d}, keepdim, "prod");
}

Tensor Tensor::max() const { return amax({}, false); }
Tensor Tensor::min() const { return amin({}, false); }
Tensor Tensor::amax(IntList dims, bool keepdim) const {
  return reduce(*this, Op::RMAX, dims, keepdim, "max");
}
// Order-reversing map that turns min into max: logical not (bool), -x (floats: exact, keeps NaN
// and the gradient path), -1 - x = ~x (integers: -x overflows at INT_MIN and wraps for unsigned).
static Tensor reverse_order(const Tensor& t) {
  if (t.dtype() == kBool) return t.logical_not();
  if (t.is_floating_point()) return t.neg();
  return Scalar(-1) - t;
}

Tensor Tensor::amin(IntList dims, bool keepdim) const {
  return reverse_order(reverse_order(*this).amax(dims, keepdim));
}

std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim) const {
  return {amax({d}, keepdim), argmax(d, keepdim)};
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim) const {
  return {amin({d}, keepdim), argmin(d, keepdim)};
}

Tensor Tensor::argmax(std::optional<int64_t> d, bool keepdim) const {
  if (!d) {
    Tensor r = flatten().argmax(0, false);
    return keepdim ? r.reshape(Shape(dim(), 1)) : r;
  }
  int64_t dd = detail::wrap_dim(*d, dim());
  if (dim() == 0) return zeros({}, kInt64);
  int64_t n = sizes()[dd];
  Tensor m = amax({dd}, true).detach();
  // First index of the maximum: the largest (n - i) among positions equal to the maximum.
  Shape idx_shape(dim(), 1);
  idx_shape[dd] = n;
  Tensor rev = (arange(n, 0, -1, kInt64)).reshape(idx_shape);
  // NaN is the maximum (amax propagates it): a NaN position matches a NaN maximum.
  Tensor x = detach(), at_max = x == m;
  if (is_floating_point()) at_max = at_max.logical_or(x != x);
  Tensor hit = where(at_max, rev, zeros({}, kInt64));
  return (Scalar(n) - hit.amax({dd}, keepdim)).to(kInt64);
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool keepdim) const {
  return reverse_order(*this).argmax(d, keepdim);
}

Tensor Tensor::var() const { return var(IntList{}, true, false); }
Tensor Tensor::var(IntList dims, bool unbiased, bool keepdim) const {
  if (!is_floating_point())
    throw DTypeError(std::string("var(): input dtype must be floating point, got ") +
                     dtype_name(dtype()));
  int64_t n = reduced_count(*this, norm_dims(*this, dims));
  Tensor diff = *this - mean(dims, true);
  double denom = static_cast<double>(n) - (unbiased ? 1.0 : 0.0);
  return diff.square().sum(dims, keepdim) /
         (denom > 0 ? denom : std::numeric_limits<double>::quiet_NaN());
}
// sqrt(var) whose gradient is 0 where var == 0 (libtorch's std_backward masks the 1/(2 std)
// factor there; sqrt's own derivative is infinite and, times var's zero gradient, NaN). The sqrt
// reads 1 there so that no infinite factor enters the backward graph.
static Tensor std_of_var(const Tensor& v) {
  Tensor zero = v == 0;
  return where(zero, zeros_like(v), where(zero, ones_like(v), v).sqrt());
}
Tensor Tensor::std() const { return std_of_var(var()); }
Tensor Tensor::std(IntList dims, bool unbiased, bool keepdim) const {
  return std_of_var(var(dims, unbiased, keepdim));
}

Tensor Tensor::logsumexp(IntList dims, bool keepdim) const {
  Tensor x = is_floating_point() ? *this : to(kDefaultFloat);
  // Over an empty dim the result is log(0) = -inf, and there is no maximum to shift by.
  if (reduced_count(x, norm_dims(x, dims)) == 0) return x.exp().sum(dims, keepdim).log();
  Tensor m = x.amax(dims, true).detach();
  // A row of -inf keeps its -inf instead of producing nan from (-inf) - (-inf).
  Tensor safe_m = where(m.abs() == std::numeric_limits<double>::infinity(), zeros_like(m), m);
  Tensor r = (x - safe_m).exp().sum(dims, true).log() + safe_m;
  return keepdim ? r : r.reshape(reduced_shape(x.sizes(), norm_dims(x, dims), false));
}

Tensor Tensor::softmax(int64_t d) const {
  Tensor x = is_floating_point() ? *this : to(kDefaultFloat);
  detail::wrap_dim(d, x.dim());
  if (x.numel() == 0) return x.exp();  // empty in, empty out (no maximum to shift by)
  Tensor e = (x - x.amax({d}, true).detach()).exp();
  return e / e.sum({d}, true);
}
Tensor Tensor::log_softmax(int64_t d) const {
  Tensor x = is_floating_point() ? *this : to(kDefaultFloat);
  detail::wrap_dim(d, x.dim());
  if (x.numel() == 0) return x.exp();
  Tensor s = x - x.amax({d}, true).detach();
  return s - s.exp().sum({d}, true).log();
}
Tensor softmax(const Tensor& t, int64_t d) { return t.softmax(d); }
Tensor log_softmax(const Tensor& t, int64_t d) { return t.log_softmax(d); }

}  // namespace ember
