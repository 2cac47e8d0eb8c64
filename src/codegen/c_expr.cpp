#include "codegen/c_expr.h"
#include "codegen/loop_shapes.h"

#include <cmath>
#include <cstdio>

#include "ember/error.h"
#include "ember/support/kernel_scalar.h"

namespace ember::codegen {

using ir::Op;
using schedule::Expr;

const char* ctype(ScalarType t) {
  switch (t) {
    case kBool:
      return "uint8_t";
    case kUInt8:
      return "uint8_t";
    case kInt32:
      return "int32_t";
    case kInt64:
      return "int64_t";
    case kInt8:
      return "int8_t";
    case kInt16:
      return "int16_t";
    case kUInt16:
    case kFloat16:  // the 16-bit words: make_node leaves only loads, stores, CAST and WHERE
    case kBFloat16:
      return "uint16_t";
    case kUInt32:
      return "uint32_t";
    case kUInt64:
      return "uint64_t";
    case kFloat32:
      return "float";
    case kFloat64:
      return "double";
  }
  return "?";
}

std::string literal(double v, ScalarType t, const Dialect& d) {
  char buf[64];
  if (is_reduced_floating_point(t)) {
    const auto f = static_cast<float>(v);
    std::snprintf(buf, sizeof buf, "((uint16_t)0x%04x)",
                  static_cast<unsigned>(t == kFloat16 ? ember_f2h(f) : ember_f2bf(f)));
    return buf;
  }
  if (is_floating_point(t)) {
    if (std::isnan(v)) return t == kFloat32 ? "((float)NAN)" : "((double)NAN)";
    if (std::isinf(v))
      return std::string(v < 0 ? "(-" : "(") +
             (t == kFloat32 ? "(float)INFINITY)" : "(double)INFINITY)");
    std::snprintf(buf, sizeof buf, t == kFloat32 ? "%.9gf" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos)
      s.insert(s.size() - (t == kFloat32 ? 1 : 0), ".0");
    return s;
  }
  std::snprintf(buf, sizeof buf, "((%s)%lld%s)", ctype(t), static_cast<long long>(v),
                d.int64_suffix());
  return buf;
}

std::string int_literal(int64_t v, ScalarType t, const Dialect& d) {
  // INT64_MIN has no literal of its own in C (its magnitude overflows long long).
  if (v == INT64_MIN) return std::string("((") + ctype(t) + ")INT64_MIN)";
  return std::string("((") + ctype(t) + ")" + std::to_string(v) + d.int64_suffix() + ")";
}

std::string reduce_init(Op op, ScalarType t, const Dialect& d) {
  switch (op) {
    case Op::SUM:
      return literal(0, t, d);
    case Op::PROD:
      return literal(1, t, d);
    default:
      switch (t) {
        case kFloat32:
        case kFloat64:
          return literal(-INFINITY, t, d);
        case kInt32:
          return "INT32_MIN";
        case kInt64:
          return "INT64_MIN";
        case kInt8:
          return "INT8_MIN";
        case kInt16:
          return "INT16_MIN";
        default:
          return literal(0, t, d);
      }
  }
}

std::string reduce_update(Op op, ScalarType t, const std::string& acc, const std::string& v) {
  return render_op(op, t, {acc, v});
}

std::string render_template(const char* tmpl, ScalarType t, const std::vector<std::string>& a,
                            const Dialect& d) {
  std::string r;
  for (const char* p = tmpl; *p; p++) {
    if (*p != '$') {
      r += *p;
      continue;
    }
    char k = *++p;
    if (k >= '0' && k <= '2')
      r += a.at(static_cast<size_t>(k - '0'));
    else if (k == 'f')
      r += t == kFloat32 ? d.float_suffix() : "";
    else if (k == 'T')
      r += ctype(t);
    else if (k == 'I')
      r += literal(1, t, d);
    else
      throw Error(std::string("render: bad C template ") + tmpl);
  }
  return r;
}

std::string render_op(Op op, ScalarType t, const std::vector<std::string>& a, const Dialect& d) {
  const ir::OpInfo& info = ir::op_info(op);
  if (is_reduced_floating_point(t) && op != Op::WHERE)
    throw Error(std::string("render: ") + info.name + " on " + dtype_name(t) +
                " (make_node computes it in float32)");
  const char* tmpl = is_floating_point(t) ? info.c_float : t == kBool ? info.c_bool : info.c_int;
  // ops.def's float MAX, (($0 >= $1 || $0 != $0) ? $0 : $1), in a form GCC 12 vectorises: in a
  // chain (a max pool's nine taps, then a relu) it if-converts the `||` into selects between
  // masks that it cannot vectorise, and the whole loop stays scalar (-fopt-info-vec-all:
  // "relevant stmt not supported: patt_ = patt_ ? _ : _"). The same rule: NaN wins, a tie (-0,
  // +0) gives $0; where both are NaN, $1's NaN rather than $0's. Of the forms that vectorise, the
  // cheapest: a residual block's maxpool-add-relu over 64x56x56 (AVX2, one thread, the kernel
  // alone) 0.39 ms against 0.81 for an exact form with a third select.
  if (op == Op::MAX && is_floating_point(t)) tmpl = "($0 < $1 ? $1 : ($1 != $1 ? $1 : $0))";
  if (!*tmpl) throw Error(std::string("render: no C rule for ") + info.name);
  return render_template(tmpl, t, a, d);
}

std::string render_cast(ScalarType from, ScalarType to, const std::string& x, const Dialect& d) {
  if (from == to) return x;
  std::string v = x;
  if (is_reduced_floating_point(from)) {  // exact in float32, which converts on as a float does
    v = std::string(from == kFloat16 ? "ember_h2f(" : "ember_bf2f(") + x + ")";
    from = kFloat32;
  }
  if (is_reduced_floating_point(to))
    return std::string(to == kFloat16 ? "ember_f2h((float)(" : "ember_f2bf((float)(") + v + "))";
  return render_op(Op::CAST, to, {v}, d);
}

namespace {

// Concatenation by appending (GCC 12 warns falsely on long chains of string operator+).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string r;
  for (auto p : parts) r += p;
  return r;
}

}  // namespace

std::string ExprEmitter::index(const ir::View& v, const std::vector<std::string>& idx) {
  std::string s = std::to_string(v.offset);
  for (size_t d = 0; d < v.shape.size(); d++) {
    if (v.strides[d] == 0 || v.shape[d] == 1) continue;
    s += " + " + idx[d] + "*" + std::to_string(v.strides[d]);
  }
  return s;
}

std::string ExprEmitter::index_here(const ir::View& v, const std::vector<std::string>& idx) const {
  const size_t d = hidden_axis_;
  if (d >= v.shape.size() || v.shape[d] == 1 || !opaque_stride(v.strides[d])) return index(v, idx);
  ir::View rest = v;
  rest.strides[d] = 0;
  return index(rest, idx) + " + " + idx[d] + "*" + stride_var(v.strides[d]);
}

std::string ExprEmitter::stride_var(int64_t stride) {
  return (stride < 0 ? "sm" : "s") + std::to_string(stride < 0 ? -stride : stride) + "_";
}

void ExprEmitter::declare_strides(std::ostringstream& s, const std::string& ind,
                                  const std::vector<int64_t>& strides) {
  for (int64_t st : strides) {
    const std::string v = stride_var(st);
    s << ind << "int64_t " << v << " = " << st << ";\n";
    s << ind << "__asm__(\"\" : \"+r\"(" << v << "));\n";
  }
}

std::string ExprEmitter::valid(const ir::View& v, const std::vector<std::string>& idx,
                               const std::vector<std::pair<int64_t, int64_t>>* known) {
  std::string s;
  for (size_t d = 0; d < v.mask.size(); d++) {
    auto [lo, hi] = v.mask[d];
    if (lo == 0 && hi == v.shape[d]) continue;
    if (known && d < known->size() && (*known)[d].first >= lo && (*known)[d].second <= hi &&
        (*known)[d].first < (*known)[d].second)
      continue;
    if (!s.empty()) s += " && ";
    if (lo >= hi) return "0";
    std::string i = v.shape[d] == 1 ? "0" : idx[d];
    s += cat({"(", i, " >= ", std::to_string(lo), " && ", i, " < ", std::to_string(hi), ")"});
  }
  return s;
}

void ExprEmitter::assume(size_t d, int64_t lo, int64_t hi) {
  if (known_.size() <= d) known_.resize(d + 1, {0, 0});
  known_[d] = {lo, hi};
}

std::string ExprEmitter::emit(const Expr& e, std::ostringstream& s, const std::string& ind,
                              Memo& memo, const std::vector<std::string>& idx) {
  auto it = memo.find(&e);
  if (it != memo.end()) return it->second;
  std::vector<std::string> a;
  for (auto& src : e.src) a.push_back(emit(*src, s, ind, memo, idx));
  std::string x;
  switch (e.kind) {
    case Expr::Kind::Load: {
      std::string load = cat({"b", std::to_string(e.buf), "[", index_here(e.view, idx), "]"});
      std::string m = e.view.has_mask() ? valid_here(e.view, idx) : "";
      x = m.empty() ? load : cat({"((", m, ") ? ", load, " : ", literal(0, e.dtype, *d_), ")"});
      break;
    }
    case Expr::Kind::Const: {
      // An integer constant's exact value (int64 beyond 2^53 does not survive a double).
      x = is_floating_point(e.dtype) ? literal(e.value, e.dtype, *d_)
                                     : int_literal(e.ivalue, e.dtype, *d_);
      std::string m = e.view.has_mask() ? valid_here(e.view, idx) : "";
      if (!m.empty()) x = cat({"((", m, ") ? ", x, " : ", literal(0, e.dtype, *d_), ")"});
      break;
    }
    case Expr::Kind::Rand: {
      // The key buffer {seed, counter, low, range}; the dtype picks the draw
      // (ember/support/kernel_scalar.h).
      std::string kb = cat({"b", std::to_string(e.buf)});
      std::string key = cat(
          {"(uint64_t)", kb, "[0], (uint64_t)", kb, "[1] + (uint64_t)(", index(e.view, idx), ")"});
      if (e.dtype == kInt64)
        x = cat({"ember_randint(", key, ", ", kb, "[2], (uint64_t)", kb, "[3])"});
      else
        x = cat({e.dtype == kFloat64 ? "ember_rand53(" : "ember_rand(", key, ")"});
      std::string m = e.view.has_mask() ? valid_here(e.view, idx) : "";
      if (!m.empty()) x = cat({"((", m, ") ? ", x, " : ", literal(0, e.dtype, *d_), ")"});
      break;
    }
    case Expr::Kind::Reduce:
      // simplify() drops size-1 reduce axes: a reduce over one element is one update of init.
      if (!e.axes.empty()) throw Error("render: nested reduce");
      x = reduce_update(e.op, e.dtype, reduce_init(e.op, e.dtype, *d_), a[0]);
      break;
    case Expr::Kind::Alu:
      x = e.op == Op::CAST ? render_cast(e.src[0]->dtype, e.dtype, a[0], *d_)
                           : render_op(e.op, e.dtype, a, *d_);
      break;
  }
  std::string name = cat({"v", std::to_string(next_++)});
  // A bool local is 32 bits wide, not uint8_t: a loop that mixes 1-byte and 4-byte values
  // vectorises only at 4x the float lanes, so a reduce kernel's fixed loop over the vector's
  // lanes (8 floats at AVX2) did not vectorise at all when it held a comparison (the PPO clip
  // fraction, 82 -> 11 us at AVX2). Values are 0 and 1 either way; stores convert.
  s << ind << (e.dtype == kBool ? "int32_t" : ctype(e.dtype)) << " " << name << " = " << x << ";\n";
  memo[&e] = name;
  return name;
}

}  // namespace ember::codegen
