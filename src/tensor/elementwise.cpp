// Elementwise math: primitives with PyTorch's broadcasting and type promotion, and the composites
// built from them (sigmoid, relu, abs, clamp, ...).
#include <cmath>
#include <string>
#include <utility>

#include "tensor/tensor_impl.h"

namespace ember {

using detail::binary;
using detail::cast;
using detail::make_tensor;
using detail::node_of;
using ir::NodeRef;
using ir::Op;

namespace {

NodeRef un(Op op, NodeRef x) {
  const ScalarType t = x->dtype;
  return ir::make_node(op, t, ir::src_list(std::move(x)));
}

// A unary primitive; FloatOnly ops (ops.def) promote integer and bool inputs to the default float
// type (torch.exp(int)).
Tensor unary(const Tensor& t, Op op) {
  // The operand's node is copied once, into the new node's sources (each reference taken and
  // dropped is an atomic add, and a small eager call is latency-bound: issue 11).
  const NodeRef& x = node_of(t);
  if (ir::op_has(op, ir::FloatOnly) && !is_floating_point(x->dtype))
    return make_tensor(un(op, cast(x, kDefaultFloat)), {&t});
  return make_tensor(un(op, x), {&t});
}

void require_not_bool(const Tensor& t, const char* name) {
  if (t.dtype() == kBool) throw DTypeError(std::string(name) + ": not supported for bool tensors");
}

// Subtraction with a bool operand is an error, as in PyTorch (for masks, xor or logical_not).
void check_sub(bool a_bool, bool b_bool, const char* name) {
  if (a_bool && b_bool)
    throw DTypeError(std::string(name) +
                     ": subtraction of two bool tensors is not supported; use logical_xor");
  if (a_bool || b_bool)
    throw DTypeError(std::string(name) +
                     ": subtraction with a bool operand is not supported; to invert a mask use "
                     "logical_not");
}

// alpha of add/sub in the result dtype t, as libtorch checks it (alpha_check): a bool alpha only
// for bool results, a floating one only for floating results, and a value that fits t.
bool is_one(const Scalar& alpha) {
  return alpha.kind() == kFloat64 ? alpha.to_double() == 1.0 : alpha.to_int() == 1;
}
NodeRef scale_by_alpha(NodeRef y, const Scalar& alpha, ScalarType t, const char* name) {
  if (alpha.kind() == kBool && t != kBool)
    throw DTypeError(std::string(name) + ": a bool alpha is only supported for bool results");
  if (alpha.kind() == kFloat64 && !is_floating_point(t))
    throw DTypeError(std::string(name) + ": alpha must not be a floating point number for " +
                     dtype_name(t) + " results");
  detail::check_scalar_fits(alpha, t, name);
  if (is_one(alpha)) return y;
  if (t == kBool)  // b * alpha in bool: b when alpha is nonzero, false when it is 0
    return binary(Op::AND, std::move(y), detail::scalar_node(alpha, t, {}), t, name);
  return binary(Op::MUL, std::move(y), detail::scalar_node(alpha, t, {}), t, name);
}

// a op y in dtype t; bool + bool is logical or, bool * bool logical and.
NodeRef arith_nodes(NodeRef x, NodeRef y, ScalarType t, Op op, const char* name) {
  if (t == kBool) {
    if (op == Op::ADD)
      op = Op::OR;
    else if (op == Op::MUL)
      op = Op::AND;
  }
  return binary(op, std::move(x), std::move(y), t, name);
}

// Arithmetic on two tensors with promotion; add and sub scale b by alpha first.
Tensor arith(const Tensor& a, const Tensor& b, Op op, const char* name, const Scalar& alpha = 1) {
  if (op == Op::SUB) check_sub(a.dtype() == kBool, b.dtype() == kBool, name);
  ScalarType t = result_type(a, b);
  NodeRef x = cast(node_of(a), t), y = cast(node_of(b), t);
  if (op == Op::ADD || op == Op::SUB) y = scale_by_alpha(std::move(y), alpha, t, name);
  return make_tensor(arith_nodes(std::move(x), std::move(y), t, op, name), {&a, &b});
}

// a op s (s op a when scalar_first); add and sub scale the scalar by alpha first.
Tensor arith_s(const Tensor& a, const Scalar& s, Op op, const char* name, bool scalar_first,
               const Scalar& alpha = 1) {
  if (op == Op::SUB) check_sub(a.dtype() == kBool, s.kind() == kBool, name);
  ScalarType t = result_type(a, s);
  NodeRef x = cast(node_of(a), t);
  NodeRef c = detail::scalar_node(s, t, {});
  if (op == Op::ADD || op == Op::SUB) c = scale_by_alpha(std::move(c), alpha, t, name);
  return make_tensor(scalar_first ? arith_nodes(c, x, t, op, name) : arith_nodes(x, c, t, op, name),
                     {&a});
}

Tensor scalar_tensor_like(const Scalar& s, const Tensor& like) {
  ScalarType t = result_type(like, s);
  return make_tensor(detail::scalar_node(s, t, {}));
}

// x op y (operands swapped first when `swap`), negated when `negate`. NaN compares false with
// everything, so for floats `le`/`ge` cannot be the negation of `gt`/`lt`: they are
// (x < y) | (x == y) there (`not` is kept for integers: one op).
NodeRef compare_nodes(NodeRef x, NodeRef y, ScalarType t, Op op, bool swap, bool negate,
                      const char* name) {
  if (swap) std::swap(x, y);
  if (negate && op == Op::CMPLT && is_floating_point(t))
    return binary(Op::OR, binary(Op::CMPLT, y, x, kBool, name),
                  binary(Op::CMPEQ, x, y, kBool, name), kBool, name);
  NodeRef r = binary(op, x, y, kBool, name);
  return negate ? un(Op::NOT, r) : r;
}

Tensor compare(const Tensor& a, const Tensor& b, Op op, bool swap, bool negate, const char* name) {
  ScalarType t = result_type(a, b);
  NodeRef x = cast(node_of(a), t), y = cast(node_of(b), t);
  return make_tensor(compare_nodes(x, y, t, op, swap, negate, name));
}

Tensor compare_s(const Tensor& a, const Scalar& s, Op op, bool swap, bool negate,
                 const char* name) {
  ScalarType t = result_type(a, s);
  NodeRef x = cast(node_of(a), t), y = detail::scalar_node(s, t, {});
  return make_tensor(compare_nodes(x, y, t, op, swap, negate, name));
}

Tensor logical(const Tensor& a, const Tensor& b, Op op, const char* name) {
  NodeRef x = cast(node_of(a), kBool), y = cast(node_of(b), kBool);
  return make_tensor(binary(op, x, y, kBool, name));
}

}  // namespace

Tensor Tensor::neg() const {
  require_not_bool(*this, "neg");
  return make_tensor(un(Op::NEG, node_of(*this)), {this});
}
Tensor Tensor::exp() const { return unary(*this, Op::EXP); }
Tensor Tensor::log() const { return unary(*this, Op::LOG); }
Tensor Tensor::sqrt() const { return unary(*this, Op::SQRT); }
Tensor Tensor::sin() const { return unary(*this, Op::SIN); }
Tensor Tensor::tanh() const { return unary(*this, Op::TANH); }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::cos() const { return unary(*this, Op::COS); }
Tensor Tensor::reciprocal() const { return unary(*this, Op::RECIP); }
Tensor Tensor::floor() const {
  if (!is_floating_point()) return *this;  // integers are whole already (torch.floor)
  return unary(*this, Op::FLOOR);
}
Tensor Tensor::sigmoid() const {
  Tensor x = is_floating_point() ? *this : to(kDefaultFloat);
  // exp(-|x|) never overflows: 1/(1+exp(-x)) would make exp(-x) = inf for x << 0, and its
  // gradient 0 * inf = NaN where libtorch's sigmoid'(x) = s(1-s) is finite. Each branch reads x
  // clamped to its side rather than |x|, whose gradient at 0 is 0 (it made sigmoid'(0) 0, not
  // 1/4).
  Tensor p = (-x.clamp_min(0)).exp(), n = x.clamp_max(0).exp();
  return where(x >= 0, (p + 1).reciprocal(), n * (n + 1).reciprocal());
}
Tensor Tensor::relu() const {
  require_not_bool(*this, "relu");
  if (!is_floating_point()) return where(*this > 0, *this, zeros_like(*this));
  // As libtorch: x where x > 0 or NaN (with gradient 1), +0 where x < 0, and x itself where x is
  // +-0 (relu(-0) = -0) with gradient 0. Without a gradient to record, maximum(x, +0) gives those
  // values in one read of x (MAX keeps a NaN, and its tie of -0 and +0 gives x), so the relu after
  // a product is one term of the product's epilogue; maximum's gradient (a tie halves) is not
  // libtorch's relu's, hence the three-read form below when there is one.
  if (!detail::any_requires_grad({this})) return maximum(zeros_like(*this));
  Tensor keep = (*this > 0).logical_or(*this != *this);
  return where(keep, *this, where(*this < 0, zeros_like(*this), detach()));
}
Tensor Tensor::abs() const {
  if (is_unsigned(dtype())) return *this;  // unsigned: abs is the identity
  if (!is_floating_point()) return maximum(neg());
  // + 0 turns maximum's -0 (the tie of -0 and +0 gives the first) into +0 (IEEE: -0 + +0 = +0);
  // the gradient is maximum's: 0 at x = 0 (the tie halves) and at NaN (1 - 1), as libtorch's.
  return maximum(neg()) + 0.0;
}
Tensor Tensor::sign() const {
  if (dtype() == kBool) return *this;
  return (*this > 0).to(dtype()) - (*this < 0).to(dtype());
}
Tensor Tensor::square() const { return *this * *this; }

Tensor Tensor::pow(const Tensor& e) const {
  ScalarType t = result_type(*this, e);
  if (t == kBool) t = kInt64;
  return make_tensor(binary(Op::POW, cast(node_of(*this), t), cast(node_of(e), t), t, "pow"),
                     {this, &e});
}
Tensor Tensor::pow(const Scalar& e) const {
  double v = e.to_double();
  // Small integer powers as multiplies: exact for negative bases and cheaper than powf.
  if (e.kind() != kBool && v == 2.0) return to(result_type(*this, e)).square();
  if (v == 1.0) return to(result_type(*this, e));
  if (v == 0.5 && is_floating_point()) return sqrt();
  return pow(scalar_tensor_like(e, *this));
}

Tensor Tensor::maximum(const Tensor& o) const { return arith(*this, o, Op::MAX, "maximum"); }
Tensor Tensor::minimum(const Tensor& o) const {
  ScalarType t = result_type(*this, o);
  if (t == kBool) return logical_and(o);
  // min(a, b) = r(max(r(a), r(b))) for an order-reversing r: -x for floats (exact; keeps NaN and
  // the gradient path), -1 - x (= ~x) for integers, where -x overflows at INT_MIN and wraps for
  // unsigned types.
  if (ember::is_floating_point(t)) return -(to(t).neg().maximum(o.to(t).neg()));
  auto r = [](const Tensor& x) { return Scalar(-1) - x; };
  return r(r(to(t)).maximum(r(o.to(t))));
}

Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  if (!min && !max) throw ValueError("clamp: at least one of min and max must be given");
  ScalarType t = dtype();
  if (min) t = result_type(*this, *min);
  if (max) t = promote_types(t, result_type(*this, *max));
  for (const auto& bound : {min, max})
    if (bound) detail::check_scalar_fits(*bound, t, "clamp");
  const Tensor x = to(t);
  // As libtorch: min(max(x, min), max) with NaN propagated from x and from the bounds, and a
  // gradient of 1 where min <= x <= max (0 at NaN and wherever the bounds cross). x itself is
  // kept where it is in range, so clamp(-0, 0) = -0.
  auto is_nan = [](const std::optional<Scalar>& b) {
    return b && b->kind() == kFloat64 && std::isnan(b->to_double());
  };
  Tensor in_range = ones(x.sizes(), kBool);
  if (min) in_range = in_range.logical_and(x >= *min);
  if (max) in_range = in_range.logical_and(x <= *max);
  Tensor out = x.detach();
  if (is_nan(min) || is_nan(max)) {
    out = full_like(x, NAN);
  } else {
    if (min) out = where(out < *min, full_like(x, *min), out);
    if (max) out = where(out > *max, full_like(x, *max), out);
  }
  return where(in_range, x, out);
}

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const {
  return arith(*this, o, Op::ADD, "add", alpha);
}
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const {
  return arith(*this, o, Op::SUB, "sub", alpha);
}
Tensor Tensor::mul(const Tensor& o) const { return arith(*this, o, Op::MUL, "mul"); }
Tensor Tensor::div(const Tensor& o) const {
  ScalarType t = result_type(*this, o);
  if (!ember::is_floating_point(t)) t = kDefaultFloat;  // true division
  return make_tensor(binary(Op::DIV, cast(node_of(*this), t), cast(node_of(o), t), t, "div"),
                     {this, &o});
}
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const {
  return arith_s(*this, o, Op::ADD, "add", false, alpha);
}
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const {
  return arith_s(*this, o, Op::SUB, "sub", false, alpha);
}
Tensor Tensor::mul(const Scalar& o) const { return arith_s(*this, o, Op::MUL, "mul", false); }
Tensor Tensor::div(const Scalar& o) const {
  ScalarType t = result_type(*this, o);
  if (!ember::is_floating_point(t)) t = kDefaultFloat;
  return make_tensor(
      binary(Op::DIV, cast(node_of(*this), t), detail::scalar_node(o, t, {}), t, "div"), {this});
}

// The six comparisons, each for a tensor and a scalar operand, from two primitives (CMPLT, CMPEQ):
// a > b is b < a, a != b is !(a == b), and a >= b, a <= b are "not a < b", "not b < a"
// (compare_nodes makes those (b < a) | (a == b) for floats, so NaN compares false).
// Columns: name, primitive, swap the operands, negate, the C++ operator that calls it.
#define EMBER_COMPARISON(NAME, OP, SWAP, NEGATE, SYMBOL)                         \
  Tensor Tensor::NAME(const Tensor& o) const {                                   \
    return compare(*this, o, Op::OP, SWAP, NEGATE, #NAME);                       \
  }                                                                              \
  Tensor Tensor::NAME(const Scalar& o) const {                                   \
    return compare_s(*this, o, Op::OP, SWAP, NEGATE, #NAME);                     \
  }                                                                              \
  Tensor operator SYMBOL(const Tensor& a, const Tensor& b) { return a.NAME(b); } \
  Tensor operator SYMBOL(const Tensor& a, const Scalar& b) { return a.NAME(b); }
EMBER_COMPARISON(eq, CMPEQ, false, false, ==)
EMBER_COMPARISON(ne, CMPEQ, false, true, !=)
EMBER_COMPARISON(lt, CMPLT, false, false, <)
EMBER_COMPARISON(gt, CMPLT, true, false, >)
EMBER_COMPARISON(le, CMPLT, true, true, <=)
EMBER_COMPARISON(ge, CMPLT, false, true, >=)
#undef EMBER_COMPARISON

Tensor Tensor::logical_not() const { return make_tensor(un(Op::NOT, cast(node_of(*this), kBool))); }
Tensor Tensor::logical_and(const Tensor& o) const {
  return logical(*this, o, Op::AND, "logical_and");
}
Tensor Tensor::logical_or(const Tensor& o) const { return logical(*this, o, Op::OR, "logical_or"); }
Tensor Tensor::logical_xor(const Tensor& o) const {
  return logical(*this, o, Op::XOR, "logical_xor");
}

Tensor Tensor::to(ScalarType t) const {
  if (dtype() == t) return *this;
  return make_tensor(cast(node_of(*this), t), ember::is_floating_point(t)
                                                  ? std::initializer_list<const Tensor*>{this}
                                                  : std::initializer_list<const Tensor*>{});
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  ScalarType t = result_type(a, b);
  NodeRef c = cast(node_of(cond), kBool), x = cast(node_of(a), t), y = cast(node_of(b), t);
  Shape s = detail::broadcast_shapes(detail::broadcast_shapes(c->shape, x->shape, "where"),
                                     y->shape, "where");
  return make_tensor(ir::make_node(Op::WHERE, t,
                                   {detail::broadcast_to(c, s), detail::broadcast_to(x, s),
                                    detail::broadcast_to(y, s)}),
                     {&a, &b});
}
// A where value must fit the result dtype, as libtorch checks it (tensor.h, Scalar).
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  detail::check_scalar_fits(a, result_type(b, a), "where");
  return where(cond, scalar_tensor_like(a, b), b);
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  detail::check_scalar_fits(b, result_type(a, b), "where");
  return where(cond, a, scalar_tensor_like(b, a));
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  if (mask.dtype() != kBool)
    throw DTypeError(std::string("masked_fill: mask must be bool, got ") +
                     dtype_name(mask.dtype()));
  detail::check_scalar_fits(value, dtype(), "masked_fill");
  return where(mask, make_tensor(detail::scalar_node(value, dtype(), {})), *this);
}

Tensor maximum(const Tensor& a, const Tensor& b) { return a.maximum(b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return a.minimum(b); }
Tensor pow(const Tensor& a, const Tensor& b) { return a.pow(b); }
Tensor pow(const Tensor& a, const Scalar& b) { return a.pow(b); }
Tensor exp(const Tensor& t) { return t.exp(); }
Tensor log(const Tensor& t) { return t.log(); }
Tensor tanh(const Tensor& t) { return t.tanh(); }
Tensor sqrt(const Tensor& t) { return t.sqrt(); }
Tensor abs(const Tensor& t) { return t.abs(); }
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  return t.clamp(min, max);
}

// ---- operators
// ------------------------------------------------------------------------------------
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return a.div(b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return b.add(a); }
Tensor operator-(const Scalar& a, const Tensor& b) { return arith_s(b, a, Op::SUB, "sub", true); }
Tensor operator*(const Scalar& a, const Tensor& b) { return b.mul(a); }
Tensor operator/(const Scalar& a, const Tensor& b) { return scalar_tensor_like(a, b).div(b); }
namespace {
void require_bool(const char* op, const Tensor& a, const Tensor* b = nullptr) {
  if (a.dtype() == kBool && (!b || b->dtype() == kBool)) return;
  std::string got = dtype_name(a.dtype());
  if (b) got += std::string(" and ") + dtype_name(b->dtype());
  throw DTypeError(std::string(op) + ": only bool tensors supported, got " + got);
}
}  // namespace
Tensor operator&(const Tensor& a, const Tensor& b) {
  require_bool("&", a, &b);
  return a.logical_and(b);
}
Tensor operator|(const Tensor& a, const Tensor& b) {
  require_bool("|", a, &b);
  return a.logical_or(b);
}
Tensor operator^(const Tensor& a, const Tensor& b) {
  require_bool("^", a, &b);
  return a.logical_xor(b);
}
Tensor operator~(const Tensor& a) {
  require_bool("~", a);
  return a.logical_not();
}

}  // namespace ember
