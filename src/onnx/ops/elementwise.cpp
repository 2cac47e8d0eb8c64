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

// Max/Min/Sum/Mean over any number of inputs (numpy broadcasting from opset 8; before, equal
// shapes or legacy broadcasting did not exist for these).
template <int Kind>
std::vector<Tensor> variadic(OpContext& c) {
  legacy_attrs(c);
  if (c.num_inputs() == 0) throw ValueError("needs at least one input");
  Tensor r = c.in(0);
  for (size_t i = 1; i < c.num_inputs(); i++) {
    same_dtype(r, c.in(i));
    if constexpr (Kind == 0) r = r.maximum(c.in(i));
    if constexpr (Kind == 1) r = r.minimum(c.in(i));
    if constexpr (Kind >= 2) r = r + c.in(i);
  }
  if constexpr (Kind == 3) r = r / static_cast<double>(c.num_inputs());
  return one(r);
}

template <int Kind>
std::vector<Tensor> compare(OpContext& c) {
  auto [a, b] = operands(c);
  if constexpr (Kind == 0) return one(a.eq(b));
  if constexpr (Kind == 1) return one(a.lt(b));
  if constexpr (Kind == 2) return one(a.gt(b));
  if constexpr (Kind == 3) return one(a.le(b));
  return one(a.ge(b));
}

template <int Kind>
std::vector<Tensor> logical(OpContext& c) {
  auto [a, b] = operands(c);
  if (a.dtype() != kBool) throw DTypeError("logical ops take bool tensors");
  if constexpr (Kind == 0) return one(a.logical_and(b));
  if constexpr (Kind == 1) return one(a.logical_or(b));
  return one(a.logical_xor(b));
}

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

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t["Add"] = add;
  t["Sub"] = sub;
  t["Mul"] = mul;
  t["Div"] = div;
  t["Pow"] = pow;
  t["Mod"] = mod;
  t["BitShift"] = bit_shift;
  t["Max"] = variadic<0>;
  t["Min"] = variadic<1>;
  t["Sum"] = variadic<2>;
  t["Mean"] = variadic<3>;
  t["Equal"] = compare<0>;
  t["Less"] = compare<1>;
  t["Greater"] = compare<2>;
  t["LessOrEqual"] = compare<3>;
  t["GreaterOrEqual"] = compare<4>;
  t["And"] = logical<0>;
  t["Or"] = logical<1>;
  t["Xor"] = logical<2>;
  t["Not"] = logical_not;
  t["Where"] = where_op;
  t["Cast"] = cast;
  t["CastLike"] = cast_like;
}

}  // namespace ember::onnx::ops
