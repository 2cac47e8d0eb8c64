// Elementwise arithmetic, comparison and logic: Add, Sub, Mul, Div, Pow, Mod, BitShift, the
// variadic Max/Min/Sum/Mean, Equal/Less/Greater/..., And/Or/Xor/Not, Where, Cast, CastLike.
// ONNX requires both operands of these ops to have one element type; results keep it (numpy's
// semantics), where ember's own promotion would widen integers to float for division.
#include "../tensor_proto.h"
#include "common.h"
#include "strings.h"

namespace ember::onnx::ops {
namespace {

void same_dtype(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype())
    throw DTypeError(std::string("operands have different element types: ") +
                     dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()));
}

// The two operands, checked and (before opset 7) broadcast as the node says.
std::pair<Tensor, Tensor> operands(OpContext& c) {
  const Tensor& a = c.in(0);
  Tensor b = legacy_broadcast(c, a, c.in(1));
  same_dtype(a, b);
  return {a, b};
}

// Opsets before 6 (Add-1 ... Mul-1 and others) carry `consumed_inputs`, a legacy optimisation
// hint without effect on the value.
void legacy_attrs(OpContext& c) { c.ignore_attr({"consumed_inputs"}); }

// Integer division truncates toward zero (C and ONNX Runtime); computed in float64, exact for
// |values| < 2^53.
Tensor trunc_div(const Tensor& a, const Tensor& b) {
  Tensor q = a.to(kFloat64) / b.to(kFloat64);
  return where(q < 0, -((-q).floor()), q.floor()).to(a.dtype());
}

Tensor floor_div(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) / b.to(kFloat64)).floor().to(a.dtype());
}

}  // namespace

std::vector<Tensor> add(OpContext& c) {
  legacy_attrs(c);
  auto [a, b] = operands(c);
  return one(a + b);
}
std::vector<Tensor> sub(OpContext& c) {
  legacy_attrs(c);
  auto [a, b] = operands(c);
  return one(a - b);
}
std::vector<Tensor> mul(OpContext& c) {
  legacy_attrs(c);
  auto [a, b] = operands(c);
  return one(a.dtype() == kBool ? a.logical_and(b) : a * b);
}
std::vector<Tensor> div(OpContext& c) {
  legacy_attrs(c);
  auto [a, b] = operands(c);
  return one(a.is_floating_point() ? a / b : trunc_div(a, b));
}

std::vector<Tensor> pow(OpContext& c) {
  const Tensor& a = c.in(0);
  Tensor b = legacy_broadcast(c, a, c.in(1));
  if (a.dtype() == kBool || b.dtype() == kBool) throw DTypeError("Pow does not take bool tensors");
  // The result has the base's type (Pow-12: base and exponent types may differ).
  ScalarType t = promote_types(a.dtype(), b.dtype());
  // A constant exponent 2 (LayerNorm's variance) as x * x: exact, where powf is a libm call per
  // element.
  if (a.is_floating_point() && c.is_constant(1) && c.in(1).numel() == 1 && c.floats_of(1)[0] == 2.0)
    return one(a.to(t).square().to(a.dtype()));
  return one(a.to(t).pow(b.to(t)).to(a.dtype()));
}

// fmod=0: the remainder has the divisor's sign (Python's %); fmod=1: the dividend's (C fmod).
std::vector<Tensor> mod(OpContext& c) {
  auto [a, b] = operands(c);
  const bool fmod = c.attr_int("fmod", 0) != 0;
  if (a.is_floating_point() && !fmod) throw ValueError("Mod of floating types needs fmod=1");
  if (a.is_floating_point()) {
    Tensor q = a / b;
    q = where(q < 0, -((-q).floor()), q.floor());
    return one(a - q * b);
  }
  return one(a - (fmod ? trunc_div(a, b) : floor_div(a, b)) * b);
}

// BitShift on the unsigned types: x << y = x * 2^y, wrapping modulo 2^bits in the dtype;
// x >> y = floor(x / 2^y), computed in float64 (exact for x < 2^53). Amounts >= bits shift every
// bit out.
std::vector<Tensor> bit_shift(OpContext& c) {
  auto [a, b] = operands(c);
  const ScalarType t = a.dtype();
  if (!is_unsigned(t) || t == kBool)
    throw DTypeError(std::string("BitShift takes unsigned integers, got ") + dtype_name(t));
  const std::string dir = c.attr_string("direction");
  const auto bits = static_cast<int64_t>(element_size(t) * 8);
  Tensor y = b.to(kInt64).clamp(0, bits);
  Tensor p = full({}, 2, kInt64).pow(y).to(t);  // 2^bits wraps to 0
  if (dir == "LEFT") return one(a * p);
  if (dir == "RIGHT") return one(where(y >= bits, zeros({}, t), floor_div(a, p)));
  throw ValueError("direction must be LEFT or RIGHT, got '" + dir + "'");
}

namespace {

// Max/Min/Sum/Mean over any number of inputs (numpy broadcasting from opset 8; before, equal
// shapes or legacy broadcasting did not exist for these), folded left to right by `step`.
Tensor fold_inputs(OpContext& c, Tensor (*step)(const Tensor&, const Tensor&)) {
  legacy_attrs(c);
  if (c.num_inputs() == 0) throw ValueError("needs at least one input");
  Tensor r = c.in(0);
  for (size_t i = 1; i < c.num_inputs(); i++) {
    same_dtype(r, c.in(i));
    r = step(r, c.in(i));
  }
  return r;
}

Tensor plus(const Tensor& a, const Tensor& b) { return a + b; }

}  // namespace

std::vector<Tensor> max(OpContext& c) { return one(fold_inputs(c, maximum)); }
std::vector<Tensor> min(OpContext& c) { return one(fold_inputs(c, minimum)); }
std::vector<Tensor> sum(OpContext& c) { return one(fold_inputs(c, plus)); }
std::vector<Tensor> mean(OpContext& c) {
  return one(fold_inputs(c, plus) / static_cast<double>(c.num_inputs()));
}

namespace {

// A comparison (Equal ... GreaterOrEqual) or, on bool operands, a logical op (And, Or, Xor).
std::vector<Tensor> compare(OpContext& c, Tensor (Tensor::*op)(const Tensor&) const) {
  auto [a, b] = operands(c);
  return one((a.*op)(b));
}
std::vector<Tensor> logical(OpContext& c, Tensor (Tensor::*op)(const Tensor&) const) {
  auto [a, b] = operands(c);
  if (a.dtype() != kBool) throw DTypeError("logical ops take bool tensors");
  return one((a.*op)(b));
}

}  // namespace

std::vector<Tensor> equal(OpContext& c) { return compare(c, &Tensor::eq); }
std::vector<Tensor> less(OpContext& c) { return compare(c, &Tensor::lt); }
std::vector<Tensor> greater(OpContext& c) { return compare(c, &Tensor::gt); }
std::vector<Tensor> less_or_equal(OpContext& c) { return compare(c, &Tensor::le); }
std::vector<Tensor> greater_or_equal(OpContext& c) { return compare(c, &Tensor::ge); }
std::vector<Tensor> logical_and(OpContext& c) { return logical(c, &Tensor::logical_and); }
std::vector<Tensor> logical_or(OpContext& c) { return logical(c, &Tensor::logical_or); }
std::vector<Tensor> logical_xor(OpContext& c) { return logical(c, &Tensor::logical_xor); }

std::vector<Tensor> logical_not(OpContext& c) {
  if (c.in(0).dtype() != kBool) throw DTypeError("Not takes a bool tensor");
  return one(c.in(0).logical_not());
}

std::vector<Tensor> where_op(OpContext& c) {
  same_dtype(c.in(1), c.in(2));
  if (c.in(0).dtype() != kBool) throw DTypeError("Where's condition must be bool");
  return one(where(c.in(0), c.in(1), c.in(2)));
}

// Cast: C conversion semantics (floats truncate toward zero, nonzero -> true), as numpy's
// astype for in-range values; to and from strings in strings.cpp.
std::vector<Value> cast(OpContext& c) {
  const auto to = static_cast<int32_t>(c.attr_int("to"));
  if (to == ::onnx::TensorProto::STRING || c.value(0).is_strings())
    return {cast_strings(c.value(0), to)};
  return {c.in(0).to(require_dtype(to, "Cast's 'to'"))};
}
std::vector<Value> cast_like(OpContext& c) {
  if (c.value(1).is_strings()) return {cast_strings(c.value(0), ::onnx::TensorProto::STRING)};
  if (c.value(0).is_strings()) return {cast_strings(c.value(0), to_elem_type(c.in(1).dtype()))};
  return {c.in(0).to(c.in(1).dtype())};
}

}  // namespace ember::onnx::ops
