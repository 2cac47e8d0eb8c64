// Random op graphs for the codegen fuzz test; see fuzz_graph.h for the exactness bookkeeping.
#include "fuzz_graph.h"

#include <stdexcept>

#include "ir/node.h"
#include "tensor/tensor_impl.h"

namespace fuzz {

using ember::Shape;
using ember::Slice;

namespace {

constexpr int64_t kMaxNumel = 6000;

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Shape random_shape(Rng& r) {
  static const std::vector<int64_t> sizes = {1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33};
  Shape s;
  int rank = static_cast<int>(r.uni(1, 4));
  for (int i = 0; i < rank; i++) s.push_back(r.pick(sizes));
  while (numel(s) > kMaxNumel / 4) s[static_cast<size_t>(r.uni(0, rank - 1))] = 1;
  return s;
}

ember::ScalarType random_dtype(Rng& r) {
  static const std::vector<ember::ScalarType> ts = {
      ember::kFloat32, ember::kFloat32, ember::kFloat32, ember::kFloat32, ember::kFloat64,
      ember::kInt32,   ember::kInt64,   ember::kUInt8,   ember::kBool};
  return r.pick(ts);
}

// A shape that broadcasts against `s`: some dims set to 1, maybe fewer leading dims.
Shape broadcast_partner(Rng& r, const Shape& s) {
  Shape p = s;
  for (auto& d : p)
    if (r.coin(0.3)) d = 1;
  while (!p.empty() && r.coin(0.2)) p.erase(p.begin());
  return p;
}

// Arithmetic operand: bool inputs would turn + into or and - into an error.
Val arith_operand(Rng& r, const Val& x) {
  if (x.t.dtype() != ember::kBool) return x;
  return same(x, x.t.to(r.coin() ? ember::kInt32 : ember::kFloat32));
}

Val movement(Rng& r, const Val& x) {
  const Tensor& t = x.t;
  int64_t rank = t.dim();
  Shape s = t.sizes();
  if (rank == 0) return same(x, r.coin() ? t.reshape({1, 1}) : t.expand({r.uni(1, 5)}));
  switch (r.uni(0, 9)) {
    case 0: {  // permute
      std::vector<int64_t> order(static_cast<size_t>(rank));
      for (int64_t i = 0; i < rank; i++) order[static_cast<size_t>(i)] = i;
      for (int64_t i = rank - 1; i > 0; i--) std::swap(order[i], order[r.uni(0, i)]);
      return same(x, t.permute(order));
    }
    case 1: {  // expand size-1 dims, maybe a new leading dim
      Shape e = s;
      for (auto& d : e)
        if (d == 1 && r.coin()) d = r.uni(2, 6);
      if (r.coin(0.3)) e.insert(e.begin(), r.uni(1, 3));
      if (numel(e) > kMaxNumel) return x;
      return same(x, t.expand(e));
    }
    case 2: {  // constant pad (negative amounts crop); pads the last one or two dims
      std::vector<int64_t> pads;
      for (int64_t i = 0; i < std::min<int64_t>(rank, 2); i++) {
        int64_t n = s[static_cast<size_t>(rank - 1 - i)];
        pads.push_back(r.uni(n > 2 ? -1 : 0, 3));
        pads.push_back(r.uni(n > 3 ? -1 : 0, 2));
      }
      Shape ns = s;
      for (size_t i = 0; i < pads.size() / 2; i++)
        ns[rank - 1 - i] += pads[2 * i] + pads[2 * i + 1];
      if (numel(ns) > kMaxNumel) return x;
      double value = r.coin() ? 0.0 : static_cast<double>(r.uni(-8, 8)) / 4.0;
      if (!is_float(t)) value = std::round(value);
      if (t.dtype() == ember::kBool || t.dtype() == ember::kUInt8) value = std::fabs(value) > 0;
      Val v = same(x, ember::constant_pad_nd(t, pads, value));
      v.frac = std::max(v.frac, 2);
      v.mag = std::max(v.mag, 2);
      return v;
    }
    case 3: {  // strided slice
      int64_t d = r.uni(0, rank - 1), n = s[d];
      int64_t b = r.uni(0, n - 1), e = r.uni(b + 1, n), step = r.uni(1, 3);
      return same(x, t.slice(d, b, e, step));
    }
    case 4: {  // flip
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < rank; d++)
        if (r.coin()) dims.push_back(d);
      if (dims.empty()) dims.push_back(rank - 1);
      return same(x, t.flip(dims));
    }
    case 5: {  // reshape: merge two dims or split one
      if (rank >= 2 && r.coin()) {
        int64_t d = r.uni(0, rank - 2);
        Shape ns = s;
        ns[d] *= ns[d + 1];
        ns.erase(ns.begin() + d + 1);
        return same(x, t.reshape(ns));
      }
      for (int64_t d = 0; d < rank; d++)
        for (int64_t f : {2, 3})
          if (s[d] % f == 0 && s[d] > f) {
            Shape ns = s;
            ns[d] /= f;
            ns.insert(ns.begin() + d + 1, f);
            return same(x, t.reshape(ns));
          }
      return same(x, t.reshape({-1}));
    }
    case 6:  // transpose the last two dims
      if (rank < 2) return same(x, t.unsqueeze(0));
      return same(x, t.transpose(-1, -2));
    case 7: {  // select or narrow
      int64_t d = r.uni(0, rank - 1), n = s[d];
      if (rank > 1 && r.coin()) return same(x, t.select(d, r.uni(0, n - 1)));
      int64_t b = r.uni(0, n - 1);
      return same(x, t.narrow(d, b, r.uni(1, n - b)));
    }
    case 8:  // unsqueeze / squeeze / a forced materialisation
      if (r.coin(0.2)) return same(x, t.contiguous());
      if (r.coin()) return same(x, t.unsqueeze(r.uni(0, rank)));
      return same(x, rank > 1 ? t.squeeze() : t);
    default: {  // python-style index with a negative-free step
      int64_t n = s[0];
      return same(x, t.index({Slice(r.uni(0, n - 1), std::nullopt, r.uni(1, 2))}));
    }
  }
}

Val unary(Rng& r, const Val& x0) {
  const Val x = x0.t.dtype() == ember::kBool && r.coin(0.7) ? arith_operand(r, x0) : x0;
  const Tensor& t = x.t;
  bool fl = is_float(t), ex = exact(x);
  switch (r.uni(0, 11)) {
    case 0:
      if (t.dtype() == ember::kBool) return same(x, t.logical_not());
      if (t.dtype() == ember::kUInt8) return same(x, t.to(ember::kInt32).neg());
      return same(x, t.neg());
    case 1:
      return inexact(x, r.coin() ? t.exp() : t.tanh());
    case 2:
      return inexact(x, r.coin() ? t.sin() : t.sigmoid());
    case 3: {  // log / sqrt / reciprocal: domain errors only on exact inputs (deterministic)
      Tensor a = ex ? t : (t.abs() + 0.5);
      Val v = inexact(x, r.uni(0, 2) == 0 ? a.log() : (r.coin() ? a.sqrt() : a.reciprocal()));
      v.special = v.special || ex;
      return v;
    }
    case 4:
      if (t.dtype() == ember::kBool) return x;
      return same(x, r.coin() ? t.relu() : t.abs());
    case 5: {
      Val v = same(x, t.square());
      v.frac *= 2;
      v.mag *= 2;
      return v;
    }
    case 6: {
      if (t.dtype() == ember::kBool) return x;
      double lo = static_cast<double>(r.uni(-8, 0)) / 4,
             hi = lo + static_cast<double>(r.uni(0, 8)) / 4;
      if (!fl) lo = std::floor(lo), hi = std::ceil(hi);
      if (t.dtype() == ember::kUInt8) lo = 1, hi = 5;
      return same(x, t.clamp(lo, hi));
    }
    case 7: {  // casts between dtypes
      if (fl && (!ex || x.special)) {
        ember::ScalarType to = t.dtype() == ember::kFloat32 ? ember::kFloat64 : ember::kFloat32;
        return same(x, t.to(to));
      }
      ember::ScalarType to = random_dtype(r);
      Val v = same(x, t.to(to));
      if (to == ember::kUInt8 && t.dtype() != ember::kBool) v.mag = 8;
      if (!is_floating_point(to) && fl) v.frac = 0;
      if (to == ember::kBool) v.mag = 1, v.frac = 0;
      return v;
    }
    case 8:  // comparisons against a scalar
      if (!ex) return inexact(x, t.to(ember::kFloat64) * 0.5);
      switch (r.uni(0, 3)) {
        case 0:
          return same(x, t > 0);
        case 1:
          return same(x, t <= 1);
        case 2:
          return same(x, t == 0);
        default:
          return same(x, t != 2);
      }
    case 9: {  // mixed scalar arithmetic (wrapped numbers do not widen)
      if (t.dtype() == ember::kBool) return x;
      Val v = same(x, r.coin() ? t * 3 : t + 2);
      v.mag += 2;
      return v;
    }
    case 10:
      if (!fl) return same(x, t.pow(2));
      return inexact(x, (t.abs() + 0.25).pow(1.5));
    default:
      if (!fl) return same(x, t.sign());
      return same(x, t.sign());
  }
}

Val reduce(Rng& r, const Val& x0) {
  const Val x = x0.t.dtype() == ember::kBool && r.coin(0.5) ? arith_operand(r, x0) : x0;
  const Tensor& t = x.t;
  int64_t rank = t.dim();
  if (rank == 0) return same(x, t.sum());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; d++)
    if (r.coin(0.4)) dims.push_back(d);
  if (dims.empty()) dims.push_back(r.uni(0, rank - 1));
  int64_t n = 1;
  for (auto d : dims) n *= t.size(d);
  bool keep = r.coin(), ex = exact(x), fl = is_float(t);
  int64_t d0 = dims[0];
  switch (r.uni(0, 7)) {
    case 0:
    case 1: {
      Val v = same(x, t.sum(dims, keep));
      v.mag += log2ceil(n) + (t.dtype() == ember::kBool ? 1 : 0);
      return v;
    }
    case 2:
      return same(x, r.coin() ? t.amax(dims, keep) : t.amin(dims, keep));
    case 3:
      if (!fl) return same(x, t.amax(dims, keep));
      return inexact(x, t.mean(dims, keep));
    case 4: {
      if (!ex || x.special) return same(x, std::get<0>(t.max(d0, keep)));
      auto [vals, idx] = r.coin() ? t.max(d0, keep) : t.min(d0, keep);
      if (r.coin()) return same(x, vals);
      Val v = same(x, idx);
      v.frac = 0, v.mag = 6;
      return v;
    }
    case 5:
      if (t.dtype() == ember::kBool) return same(x, t.amax(dims, keep));
      if (!fl || t.size(d0) > 9) return same(x, t.sum({d0}, keep));
      return inexact(x, t.prod(d0, keep));
    case 6:
      if (!fl) return same(x, t.amin(dims, keep));
      return inexact(x, r.coin() ? t.var(dims, true, keep) : t.logsumexp(dims, keep));
    default:
      if (!fl) return same(x, t.amax(dims, keep));
      return inexact(x, r.coin() ? t.softmax(d0) : t.log_softmax(d0));
  }
}

Val binary(Rng& r, std::vector<Val>& pool, const Val& x) {
  // The partner: a fresh input that broadcasts, a keepdim reduction of x, or a pool value.
  Val y;
  int kind = static_cast<int>(r.uni(0, 3));
  const Shape& s = x.t.sizes();
  if (kind == 1 && is_float(x.t) && x.t.dim() > 0) {
    int64_t d = r.uni(0, x.t.dim() - 1);
    y = exact(x) ? same(x, x.t.amax({d}, true)) : inexact(x, x.t.sum({d}, true));
  } else if (kind == 2) {
    for (auto& p : pool)
      if (p.t.sizes() == s && !p.t.is_same(x.t)) y = p;
  }
  if (!y.t.defined()) {
    ember::ScalarType dt = r.coin(0.7) ? x.t.dtype() : random_dtype(r);
    y = make_input(r, broadcast_partner(r, s), dt, r.coin(0.1));
    if (r.coin(0.3)) pool.push_back(y);
  }
  Val a = x, b = y;
  if (r.coin(0.2)) std::swap(a, b);
  bool both_exact = exact(a) && exact(b);
  bool bools = a.t.dtype() == ember::kBool && b.t.dtype() == ember::kBool;
  switch (r.uni(0, 8)) {
    case 0:
      return join(a, b, arith_operand(r, a).t + arith_operand(r, b).t, 1);
    case 1:
      return join(a, b, arith_operand(r, a).t - arith_operand(r, b).t, 1);
    case 2: {
      Val v = join(a, b, arith_operand(r, a).t * arith_operand(r, b).t, 0);
      v.frac = a.frac + b.frac;
      v.mag = a.mag + b.mag;
      return v;
    }
    case 3: {
      Tensor den = arith_operand(r, b).t.abs() + (is_float(b.t) ? 0.5 : 1.0);
      return inexact(join(a, b, Tensor(), 0), arith_operand(r, a).t / den);
    }
    case 4:
      if (bools) return join(a, b, a.t.logical_xor(b.t), 0);
      return join(a, b, r.coin() ? ember::maximum(a.t, b.t) : ember::minimum(a.t, b.t), 0);
    case 5:
    case 6: {
      if (!both_exact) return join(a, b, arith_operand(r, a).t + arith_operand(r, b).t, 1);
      Tensor c;
      switch (r.uni(0, 3)) {
        case 0:
          c = a.t < b.t;
          break;
        case 1:
          c = a.t >= b.t;
          break;
        case 2:
          c = a.t == b.t;
          break;
        default:
          c = bools ? a.t.logical_and(b.t) : (a.t != b.t).logical_or(a.t > 1);
      }
      Val v = join(a, b, c, 0);
      v.frac = 0, v.mag = 1, v.dyadic = true, v.special = false;
      return v;
    }
    case 7: {  // where with an exact condition
      Val c = exact(a) ? a : b;
      Tensor cond = c.t.dtype() == ember::kBool ? c.t : (c.t > 0);
      Val o = r.coin() ? a : b;
      Tensor alt =
          o.t.dtype() == ember::kBool ? o.t.logical_not() : (r.coin() ? o.t.neg() : o.t * 2);
      return join(c, o, ember::where(cond, o.t, alt), 1);
    }
    default: {  // concatenate along a random dim (same shapes) or stack
      if (a.t.sizes() != b.t.sizes() || a.t.dtype() != b.t.dtype() || a.t.dim() == 0)
        return join(a, b, ember::maximum(a.t, b.t), 0);
      int64_t d = r.uni(0, a.t.dim() - 1);
      Tensor c = r.coin() ? ember::cat({a.t, b.t}, d) : ember::stack({a.t, b.t}, d);
      return join(a, b, c, 0);
    }
  }
}

// ---- primitives read from the op table (src/ir/ops.def) -----------------------------------------
// Every elementwise and reduce row is built directly with ir::make_node, its operand dtypes taken
// from the row's category and flags, so a new row is fuzzed without touching this file. What the
// table does not say is kept here: the operand domain that keeps values finite (in_domain) and
// which results stay exact (primitive()).

using ember::ir::Op;

ember::ir::NodeRef node(const Tensor& t) { return ember::detail::node_of(t); }
Tensor wrap(ember::ir::NodeRef n) { return ember::detail::make_tensor(std::move(n)); }

const std::vector<Op>& table_ops() {
  static const std::vector<Op> ops = [] {
    std::vector<Op> v;
    for (int i = 0; i < ember::ir::kNumOps; i++) {
      auto op = static_cast<Op>(i);
      if (ember::ir::is_elementwise(op) || ember::ir::is_reduce(op)) v.push_back(op);
    }
    return v;
  }();
  return ops;
}

// Operand `i` of `op` inside the domain where the op's value is finite and well conditioned:
// log / sqrt / recip and pow's base positive, divisors away from zero, pow's exponent small,
// exp and the periodic functions on moderate magnitudes.
Val in_domain(Rng& r, Op op, int i, const Val& x) {
  const Tensor& t = x.t;
  bool fl = is_float(t);
  switch (op) {
    case Op::LOG:
    case Op::SQRT:
    case Op::RECIP:
      return inexact(x, t.abs() + 0.5);
    case Op::DIV:
      if (i == 0) return x;
      return fl ? inexact(x, t.abs() + 0.5) : same(x, t.abs() + 1);
    case Op::POW: {
      if (i == 0) return fl ? inexact(x, t.abs() + 0.25) : same(x, t.clamp(-3, 3));
      double e = fl ? static_cast<double>(r.uni(-4, 6)) / 2 : static_cast<double>(r.uni(0, 3));
      return same(x, ember::full_like(t, e));
    }
    case Op::EXP:
    case Op::SIN:
    case Op::COS:
    case Op::TANH:
      if (x.special || !x.dyadic || x.mag > 6) return inexact(x, t.tanh() * 4);
      return x;
    default:
      return x;
  }
}

// x with dtype `dt` (a CAST node via the frontend; uint8 and bool arithmetic operands go to int32).
Val as_dtype(const Val& x, ember::ScalarType dt) {
  if (x.t.dtype() == dt) return x;
  Val v = same(x, x.t.to(dt));
  if (dt == ember::kBool) v.mag = 1, v.frac = 0, v.special = false;
  if (!is_floating_point(dt) && is_float(x.t)) v.frac = 0;
  return v;
}

// An exact stand-in for x when an op needs exact operands (branches, truncation).
Val exact_operand(Rng& r, const Val& x) {
  if (exact(x) && !x.special) return x;
  return make_input(r, x.t.sizes(), x.t.dtype(), false);
}

Val primitive(Rng& r, const Val& x0) {
  Op op = r.pick(table_ops());
  const auto& info = ember::ir::op_info(op);
  const Shape& s = x0.t.sizes();
  // Operand dtype: bool for logical ops, float for float-only ones, else x's (no uint8 / bool
  // arithmetic: the frontend promotes those before they reach these ops).
  ember::ScalarType dt = x0.t.dtype();
  if (info.flags & ember::ir::BoolOperands)
    dt = ember::kBool;
  else if ((info.flags & ember::ir::FloatOnly) && !is_floating_point(dt))
    dt = ember::kFloat32;
  else if (op != Op::CAST && (dt == ember::kBool || dt == ember::kUInt8))
    dt = r.coin() ? ember::kInt32 : ember::kFloat32;
  bool needs_exact = (info.flags & (ember::ir::BoolResult | ember::ir::BoolOperands)) ||
                     op == Op::FLOOR || op == Op::CAST;
  std::vector<Val> in;
  for (int i = 0; i < std::min(info.arity, 2); i++) {
    Val v = i == 0 ? x0 : make_input(r, broadcast_partner(r, s), dt, r.coin(0.1));
    if (i > 0) v.t = v.t.expand(s);
    v = as_dtype(v, dt);
    if (needs_exact) v = exact_operand(r, v);
    in.push_back(in_domain(r, op, i, v));
    if (in.back().t.dtype() != dt)  // the sources of a primitive share one dtype
      throw std::logic_error(std::string("fuzz: in_domain changed the dtype of ") + info.name);
  }
  std::vector<ember::ir::NodeRef> src;
  for (auto& v : in) src.push_back(node(v.t));
  const Val& a = in[0];
  switch (info.category) {
    case ember::ir::OpCategory::Unary: {
      if (op == Op::CAST) {  // to a random dtype; float -> integer only from exact values
        ember::ScalarType to = random_dtype(r);
        Val v = same(a, wrap(ember::ir::make_node(op, to, src)));
        if (to == ember::kUInt8 && a.t.dtype() != ember::kBool) v.mag = 8;
        if (!is_floating_point(to)) v.frac = 0;
        if (to == ember::kBool) v.mag = 1;
        return v;
      }
      Tensor t = wrap(ember::ir::make_node(op, dt, src));
      if (op == Op::NEG || op == Op::FLOOR || op == Op::NOT || !is_float(t)) return same(a, t);
      return inexact(a, t);
    }
    case ember::ir::OpCategory::Binary: {
      const Val& b = in[1];
      if (info.flags & ember::ir::BoolResult) {
        Val v = join(a, b, wrap(ember::ir::make_node(op, ember::kBool, src)), 0);
        v.frac = 0, v.mag = 1, v.dyadic = true, v.special = false;
        return v;
      }
      Tensor t = wrap(ember::ir::make_node(op, dt, src));
      if (op == Op::ADD || op == Op::SUB) return join(a, b, t, 1);
      if (op == Op::MAX || (info.flags & ember::ir::BoolOperands)) return join(a, b, t, 0);
      if (op == Op::MUL) {
        Val v = join(a, b, t, 0);
        v.frac = a.frac + b.frac;
        v.mag = a.mag + b.mag;
        return v;
      }
      if (op == Op::POW && !is_float(t)) return join(a, b, t, 2 * a.mag);
      return inexact(join(a, b, Tensor(), 0), t);
    }
    case ember::ir::OpCategory::Ternary: {  // where(exact bool condition, x, a partner of x)
      Val c = exact_operand(r, as_dtype(make_input(r, s, ember::kBool, false), ember::kBool));
      Val b = as_dtype(make_input(r, broadcast_partner(r, s), dt, false), dt);
      b.t = b.t.expand(s);
      return join(a, b, wrap(ember::ir::make_node(op, dt, {node(c.t), src[0], node(b.t)})), 0);
    }
    case ember::ir::OpCategory::Reduce: {
      if (a.t.dim() == 0) return a;
      ember::ir::Arg axes;
      for (int64_t d = 0; d < a.t.dim(); d++)
        if (r.coin(0.4)) axes.ints.push_back(d);
      if (axes.ints.empty() && a.t.dim() > 0) axes.ints.push_back(r.uni(0, a.t.dim() - 1));
      int64_t n = 1;
      for (auto d : axes.ints) n *= a.t.size(d);
      if (op == Op::PROD && n > 9) op = Op::SUM;  // products of many values overflow
      Tensor t = wrap(ember::ir::make_node(op, dt, src, axes));
      if (op == Op::RMAX || dt == ember::kBool) return same(a, t);
      if (op == Op::SUM) {
        Val v = same(a, t);
        v.mag += log2ceil(n);
        return v;
      }
      if (!is_float(t)) {
        Val v = same(a, t);
        v.mag *= static_cast<int>(n);
        return v;
      }
      return inexact(a, t);
    }
    default:
      return x0;
  }
}

}  // namespace

std::vector<Val> build_graph(uint64_t seed) {
  Rng r(seed);
  std::vector<Val> pool;
  pool.push_back(make_input(r, random_shape(r), random_dtype(r), r.coin(0.15)));
  if (r.coin(0.3)) {  // a dropout-like random mask (counter-based RNG is device independent)
    ember::manual_seed(seed);
    Val& x = pool.back();
    Tensor keep = ember::rand(x.t.sizes()) < 0.5;
    pool.push_back(same(x, ember::where(keep, x.t, ember::zeros_like(x.t))));
  }
  int steps = static_cast<int>(r.uni(2, 9));
  for (int i = 0; i < steps; i++) {
    const Val x = r.coin(0.7) ? pool.back() : r.pick(pool);
    Val v;
    switch (r.uni(0, 9)) {
      case 0:
      case 1:
      case 2:
        v = movement(r, x);
        break;
      case 3:
        v = primitive(r, x);
        break;
      case 4:
        v = unary(r, x);
        break;
      case 5:
      case 6:
        v = reduce(r, x);
        break;
      default:
        v = binary(r, pool, x);
    }
    if (v.t.numel() == 0 || v.t.numel() > kMaxNumel) continue;
    if (!is_float(v.t) && v.mag > 24) v = same(v, v.t.to(ember::kFloat64)), v.dyadic = false;
    pool.push_back(v);
  }
  std::vector<Val> out{pool.back()};
  if (pool.size() > 2 && r.coin(0.3)) out.push_back(pool[pool.size() - 2]);
  return out;
}

}  // namespace fuzz
