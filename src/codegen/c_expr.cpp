#include "codegen/c_expr.h"

#include <cmath>
#include <cstdio>

#include "ember/error.h"

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
    case kFloat32:
      return "float";
    case kFloat64:
      return "double";
  }
  return "?";
}

std::string literal(double v, ScalarType t) {
  char buf[64];
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
  std::snprintf(buf, sizeof buf, "((%s)%lldLL)", ctype(t), static_cast<long long>(v));
  return buf;
}

std::string reduce_init(Op op, ScalarType t) {
  switch (op) {
    case Op::SUM:
      return literal(0, t);
    case Op::PROD:
      return literal(1, t);
    default:
      switch (t) {
        case kFloat32:
        case kFloat64:
          return literal(-INFINITY, t);
        case kInt32:
          return "INT32_MIN";
        case kInt64:
          return "INT64_MIN";
        default:
          return literal(0, t);
      }
  }
}

std::string reduce_update(Op op, ScalarType t, const std::string& acc, const std::string& v) {
  bool b = t == kBool;
  switch (op) {
    case Op::SUM:
      return b ? "(" + acc + " | " + v + ")" : "(" + acc + " + " + v + ")";
    case Op::PROD:
      return b ? "(" + acc + " & " + v + ")" : "(" + acc + " * " + v + ")";
    default:
      if (is_floating_point(t))
        return "((" + v + " > " + acc + " || " + v + " != " + v + ") ? " + v + " : " + acc + ")";
      return "(" + v + " > " + acc + " ? " + v + " : " + acc + ")";
  }
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

std::string ExprEmitter::valid(const ir::View& v, const std::vector<std::string>& idx) {
  std::string s;
  for (size_t d = 0; d < v.mask.size(); d++) {
    auto [lo, hi] = v.mask[d];
    if (lo == 0 && hi == v.shape[d]) continue;
    if (!s.empty()) s += " && ";
    if (lo >= hi) return "0";
    std::string i = v.shape[d] == 1 ? "0" : idx[d];
    s += cat({"(", i, " >= ", std::to_string(lo), " && ", i, " < ", std::to_string(hi), ")"});
  }
  return s;
}

namespace {

std::string alu(const Expr& e, const std::vector<std::string>& a) {
  const char* T = ctype(e.dtype);
  bool fl = is_floating_point(e.dtype);
  std::string f = e.dtype == kFloat32 ? "f" : "";
  switch (e.op) {
    case Op::NEG:
      return cat({"(-", a[0], ")"});
    case Op::EXP:
      return cat({"exp", f, "(", a[0], ")"});
    case Op::LOG:
      return cat({"log", f, "(", a[0], ")"});
    case Op::SIN:
      return cat({"sin", f, "(", a[0], ")"});
    case Op::COS:
      return cat({"cos", f, "(", a[0], ")"});
    case Op::SQRT:
      return cat({"sqrt", f, "(", a[0], ")"});
    case Op::TANH:
      return cat({"tanh", f, "(", a[0], ")"});
    case Op::RECIP:
      return cat({"(", literal(1, e.dtype), " / ", a[0], ")"});
    case Op::NOT:
      return cat({"(uint8_t)(!", a[0], ")"});
    case Op::CAST:
      if (e.dtype == kBool) return cat({"(uint8_t)(", a[0], " != 0)"});
      return cat({"(", std::string(T), ")(", a[0], ")"});
    case Op::ADD:
      return cat({"(", a[0], " + ", a[1], ")"});
    case Op::SUB:
      return cat({"(", a[0], " - ", a[1], ")"});
    case Op::MUL:
      return cat({"(", a[0], " * ", a[1], ")"});
    case Op::DIV:
      if (fl) return cat({"(", a[0], " / ", a[1], ")"});
      return cat({"(", a[1], " == 0 ? 0 : ", a[0], " / ", a[1], ")"});
    case Op::MOD:
      if (fl) return cat({"fmod", f, "(", a[0], ", ", a[1], ")"});
      return cat({"(", a[1], " == 0 ? 0 : ", a[0], " % ", a[1], ")"});
    case Op::MAX:
      if (fl)
        return cat(
            {"((", a[0], " > ", a[1], " || ", a[0], " != ", a[0], ") ? ", a[0], " : ", a[1], ")"});
      return cat({"(", a[0], " > ", a[1], " ? ", a[0], " : ", a[1], ")"});
    case Op::POW:
      if (fl) return cat({"pow", f, "(", a[0], ", ", a[1], ")"});
      return cat({"(", std::string(T), ")ember_ipow((int64_t)", a[0], ", (int64_t)", a[1], ")"});
    case Op::CMPLT:
      return cat({"(uint8_t)(", a[0], " < ", a[1], ")"});
    case Op::CMPEQ:
      return cat({"(uint8_t)(", a[0], " == ", a[1], ")"});
    case Op::AND:
      return cat({"(uint8_t)(", a[0], " & ", a[1], ")"});
    case Op::OR:
      return cat({"(uint8_t)(", a[0], " | ", a[1], ")"});
    case Op::XOR:
      return cat({"(uint8_t)(", a[0], " ^ ", a[1], ")"});
    case Op::WHERE:
      return cat({"(", a[0], " ? ", a[1], " : ", a[2], ")"});
    default:
      throw Error(std::string("render: no C rule for ") + ir::op_name(e.op));
  }
}

}  // namespace

std::string ExprEmitter::emit(const Expr& e, std::ostringstream& s, const std::string& ind,
                              Memo& memo, const std::vector<std::string>& idx) {
  auto it = memo.find(&e);
  if (it != memo.end()) return it->second;
  std::vector<std::string> a;
  for (auto& src : e.src) a.push_back(emit(*src, s, ind, memo, idx));
  std::string x;
  switch (e.kind) {
    case Expr::Kind::Load: {
      std::string load = cat({"b", std::to_string(e.buf), "[", index(e.view, idx), "]"});
      std::string m = e.view.has_mask() ? valid(e.view, idx) : "";
      x = m.empty() ? load : cat({"((", m, ") ? ", load, " : ", literal(0, e.dtype), ")"});
      break;
    }
    case Expr::Kind::Const: {
      x = literal(e.value, e.dtype);
      std::string m = e.view.has_mask() ? valid(e.view, idx) : "";
      if (!m.empty()) x = cat({"((", m, ") ? ", x, " : ", literal(0, e.dtype), ")"});
      break;
    }
    case Expr::Kind::Rand: {
      std::string kb = cat({"b", std::to_string(e.buf)});
      x = cat({"ember_rand((uint64_t)", kb, "[0], (uint64_t)", kb, "[1] + (uint64_t)(",
               index(e.view, idx), "))"});
      std::string m = e.view.has_mask() ? valid(e.view, idx) : "";
      if (!m.empty()) x = cat({"((", m, ") ? ", x, " : 0.0f)"});
      break;
    }
    case Expr::Kind::Reduce:
      // simplify() drops size-1 reduce axes: a reduce over one element is one update of init.
      if (!e.axes.empty()) throw Error("render: nested reduce");
      x = reduce_update(e.op, e.dtype, reduce_init(e.op, e.dtype), a[0]);
      break;
    case Expr::Kind::Alu:
      x = alu(e, a);
      break;
  }
  std::string name = cat({"v", std::to_string(next_++)});
  s << ind << ctype(e.dtype) << " " << name << " = " << x << ";\n";
  memo[&e] = name;
  return name;
}

}  // namespace ember::codegen
