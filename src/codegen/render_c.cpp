#include "codegen/render_c.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "ember/error.h"

namespace ember::codegen {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

namespace {

const char* ctype(ScalarType t) {
  switch (t) {
    case kBool: return "uint8_t";
    case kUInt8: return "uint8_t";
    case kInt32: return "int32_t";
    case kInt64: return "int64_t";
    case kFloat32: return "float";
    case kFloat64: return "double";
  }
  return "?";
}

std::string literal(double v, ScalarType t) {
  char buf[64];
  if (is_floating_point(t)) {
    if (std::isnan(v)) return t == kFloat32 ? "((float)NAN)" : "((double)NAN)";
    if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (t == kFloat32 ? "(float)INFINITY)" : "(double)INFINITY)");
    std::snprintf(buf, sizeof buf, t == kFloat32 ? "%.9gf" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s.insert(s.size() - (t == kFloat32 ? 1 : 0), ".0");
    return s;
  }
  std::snprintf(buf, sizeof buf, "((%s)%lldLL)", ctype(t), static_cast<long long>(v));
  return buf;
}

std::string reduce_init(Op op, ScalarType t) {
  switch (op) {
    case Op::SUM: return literal(0, t);
    case Op::PROD: return literal(1, t);
    default:
      switch (t) {
        case kFloat32:
        case kFloat64: return literal(-INFINITY, t);
        case kInt32: return "INT32_MIN";
        case kInt64: return "INT64_MIN";
        default: return literal(0, t);
      }
  }
}

std::string reduce_update(Op op, ScalarType t, const std::string& acc, const std::string& v) {
  bool b = t == kBool;
  switch (op) {
    case Op::SUM: return b ? "(" + acc + " | " + v + ")" : "(" + acc + " + " + v + ")";
    case Op::PROD: return b ? "(" + acc + " & " + v + ")" : "(" + acc + " * " + v + ")";
    default:
      if (is_floating_point(t))
        return "((" + v + " > " + acc + " || " + v + " != " + v + ") ? " + v + " : " + acc + ")";
      return "(" + v + " > " + acc + " ? " + v + " : " + acc + ")";
  }
}

class Renderer {
 public:
  Renderer(const Kernel& k, const Opts& o)
      : k_(k), rank_(k.full_shape.size()), nglob_(rank_ - k.reduce_axes.size()),
        up_(o.upcasts(rank_)), unroll_(o.unroll()) {}

  std::string render(const std::string& fn) {
    std::ostringstream s;
    s << "void " << fn << "(void* const* restrict bufs, int64_t start, int64_t end) {\n";
    for (size_t i = 0; i < k_.buffers.size(); i++)
      s << "  " << (i ? "const " : "") << ctype(k_.buffers[i].dtype) << "* restrict b" << i << " = ("
        << ctype(k_.buffers[i].dtype) << "*)bufs[" << i << "];\n";
    std::string ind = "  ";
    if (nglob_ == 0) {
      s << ind << "for (int64_t o_ = start; o_ < end; o_++) {\n";
      ind += "  ";
    }
    for (size_t d = 0; d < nglob_; d++) {
      int64_t n = k_.full_shape[d] / up_[d];
      if (d + 1 == nglob_ && k_.reduce_axes.empty() && up_[d] == 1) s << ind << "#pragma GCC ivdep\n";
      if (d == 0) s << ind << "for (int64_t o0 = start; o0 < end; o0++) {\n";
      else s << ind << "for (int64_t o" << d << " = 0; o" << d << " < " << n << "; o" << d << "++) {\n";
      ind += "  ";
    }
    if (k_.reduce_axes.empty()) {
      open_upcast(s, ind);
      std::unordered_map<const Expr*, std::string> memo;
      std::string v = emit(*k_.value, s, ind, memo, "");
      store(s, ind, v);
      close_upcast(s, ind);
    } else {
      render_reduce(s, ind);
    }
    while (ind.size() > 2) {
      ind.resize(ind.size() - 2);
      s << ind << "}\n";
    }
    s << "}\n";
    return s.str();
  }

 private:
  const Expr* find_reduce(const Expr& e) {
    if (e.kind == Expr::Kind::Reduce) return &e;
    for (auto& s : e.src)
      if (auto* r = find_reduce(*s)) return r;
    return nullptr;
  }

  void render_reduce(std::ostringstream& s, std::string& ind) {
    const Expr* red = find_reduce(*k_.value);
    if (!red) throw Error("render: reduce kernel without a reduce");
    int64_t tile = 1;
    for (size_t d = 0; d < nglob_; d++) tile *= up_[d];
    int64_t nacc = tile * unroll_;
    const char* T = ctype(red->dtype);
    s << ind << T << " acc[" << nacc << "];\n";
    s << ind << "for (int i = 0; i < " << nacc << "; i++) acc[i] = " << reduce_init(red->op, red->dtype)
      << ";\n";
    std::string rind = ind;
    for (size_t d = nglob_; d < rank_; d++) {
      int64_t n = k_.full_shape[d];
      if (d + 1 == rank_ && unroll_ > 1) n /= unroll_;
      s << rind << "for (int64_t r" << d << " = 0; r" << d << " < " << n << "; r" << d << "++) {\n";
      rind += "  ";
    }
    if (unroll_ > 1) {
      s << rind << "#pragma GCC unroll " << unroll_ << "\n";
      s << rind << "for (int q = 0; q < " << unroll_ << "; q++) {\n";
      rind += "  ";
    }
    open_upcast(s, rind);
    std::unordered_map<const Expr*, std::string> memo;
    std::string v = emit(*red->src[0], s, rind, memo, "");
    std::string a = "acc[(" + tile_index() + ")*" + std::to_string(unroll_) + (unroll_ > 1 ? " + q]" : "]");
    s << rind << a << " = " << reduce_update(red->op, red->dtype, a, v) << ";\n";
    close_upcast(s, rind);
    while (rind.size() > ind.size()) {
      rind.resize(rind.size() - 2);
      s << rind << "}\n";
    }
    // Epilogue: combine the unrolled accumulators, then the elementwise ops after the reduce.
    open_upcast(s, ind);
    std::string base = "(" + tile_index() + ")*" + std::to_string(unroll_);
    s << ind << T << " red = acc[" << base << "];\n";
    for (int q = 1; q < unroll_; q++)
      s << ind << "red = " << reduce_update(red->op, red->dtype, "red", "acc[" + base + " + " + std::to_string(q) + "]") << ";\n";
    std::unordered_map<const Expr*, std::string> memo2;
    memo2[red] = "red";
    std::string out = emit(*k_.value, s, ind, memo2, "");
    store(s, ind, out);
    close_upcast(s, ind);
  }

  void open_upcast(std::ostringstream& s, std::string& ind) {
    for (size_t d = 0; d < nglob_; d++) {
      if (up_[d] == 1) continue;
      s << ind << "#pragma GCC unroll " << up_[d] << "\n";
      s << ind << "for (int64_t j" << d << " = 0; j" << d << " < " << up_[d] << "; j" << d << "++) {\n";
      ind += "  ";
    }
  }
  void close_upcast(std::ostringstream& s, std::string& ind) {
    for (size_t d = 0; d < nglob_; d++) {
      if (up_[d] == 1) continue;
      ind.resize(ind.size() - 2);
      s << ind << "}\n";
    }
  }
  std::string tile_index() {
    std::string r = "0";
    for (size_t d = 0; d < nglob_; d++)
      if (up_[d] > 1) r = "(" + r + ")*" + std::to_string(up_[d]) + " + j" + std::to_string(d);
    return r;
  }

  std::string axis_index(size_t d) {
    if (d < nglob_) {
      if (up_[d] > 1) return "(o" + std::to_string(d) + "*" + std::to_string(up_[d]) + " + j" + std::to_string(d) + ")";
      return "o" + std::to_string(d);
    }
    if (d + 1 == rank_ && unroll_ > 1) return "(r" + std::to_string(d) + "*" + std::to_string(unroll_) + " + q)";
    return "r" + std::to_string(d);
  }

  std::string index(const ir::View& v) {
    std::string s = std::to_string(v.offset);
    for (size_t d = 0; d < v.shape.size(); d++) {
      if (v.strides[d] == 0 || v.shape[d] == 1) continue;
      s += " + " + axis_index(d) + "*" + std::to_string(v.strides[d]);
    }
    return s;
  }
  std::string valid(const ir::View& v) {
    std::string s;
    for (size_t d = 0; d < v.mask.size(); d++) {
      auto [lo, hi] = v.mask[d];
      if (lo == 0 && hi == v.shape[d]) continue;
      if (!s.empty()) s += " && ";
      if (lo >= hi) return "0";
      std::string i = v.shape[d] == 1 ? "0" : axis_index(d);
      s += "(" + i + " >= " + std::to_string(lo) + " && " + i + " < " + std::to_string(hi) + ")";
    }
    return s;
  }

  void store(std::ostringstream& s, const std::string& ind, const std::string& v) {
    s << ind << "b0[" << index(k_.out_view) << "] = " << v << ";\n";
  }

  std::string emit(const Expr& e, std::ostringstream& s, const std::string& ind,
                   std::unordered_map<const Expr*, std::string>& memo, const std::string&) {
    auto it = memo.find(&e);
    if (it != memo.end()) return it->second;
    std::vector<std::string> a;
    for (auto& src : e.src) a.push_back(emit(*src, s, ind, memo, ""));
    std::string x;
    const char* T = ctype(e.dtype);
    bool f32 = e.dtype == kFloat32, fl = is_floating_point(e.dtype);
    switch (e.kind) {
      case Expr::Kind::Load: {
        std::string load = "b" + std::to_string(e.buf) + "[" + index(e.view) + "]";
        std::string m = e.view.has_mask() ? valid(e.view) : "";
        x = m.empty() ? load : "((" + m + ") ? " + load + " : " + literal(0, e.dtype) + ")";
        break;
      }
      case Expr::Kind::Const: {
        x = literal(e.value, e.dtype);
        std::string m = e.view.has_mask() ? valid(e.view) : "";
        if (!m.empty()) x = "((" + m + ") ? " + x + " : " + literal(0, e.dtype) + ")";
        break;
      }
      case Expr::Kind::Rand: {
        std::string kb = "b" + std::to_string(e.buf);
        x = "ember_rand((uint64_t)" + kb + "[0], (uint64_t)" + kb + "[1] + (uint64_t)(" + index(e.view) + "))";
        std::string m = e.view.has_mask() ? valid(e.view) : "";
        if (!m.empty()) x = "((" + m + ") ? " + x + " : 0.0f)";
        break;
      }
      case Expr::Kind::Reduce:
        // simplify() drops size-1 reduce axes: a reduce over one element is one update of init.
        if (!e.axes.empty()) throw Error("render: nested reduce");
        x = reduce_update(e.op, e.dtype, reduce_init(e.op, e.dtype), a[0]);
        break;
      case Expr::Kind::Alu:
        x = alu(e, a, f32, fl, T);
        break;
    }
    std::string name = "v" + std::to_string(next_++);
    s << ind << T << " " << name << " = " << x << ";\n";
    memo[&e] = name;
    return name;
  }

  std::string alu(const Expr& e, const std::vector<std::string>& a, bool f32, bool fl, const char* T) {
    std::string f = f32 ? "f" : "";
    ScalarType st = e.src.empty() ? e.dtype : e.src[0]->dtype;
    bool sfl = is_floating_point(st);
    switch (e.op) {
      case Op::NEG: return "(-" + a[0] + ")";
      case Op::EXP: return "exp" + f + "(" + a[0] + ")";
      case Op::LOG: return "log" + f + "(" + a[0] + ")";
      case Op::SIN: return "sin" + f + "(" + a[0] + ")";
      case Op::SQRT: return "sqrt" + f + "(" + a[0] + ")";
      case Op::TANH: return "tanh" + f + "(" + a[0] + ")";
      case Op::RECIP: return "(" + literal(1, e.dtype) + " / " + a[0] + ")";
      case Op::NOT: return "(uint8_t)(!" + a[0] + ")";
      case Op::CAST:
        if (e.dtype == kBool) return "(uint8_t)(" + a[0] + " != 0)";
        return "(" + std::string(T) + ")(" + a[0] + ")";
      case Op::ADD: return "(" + a[0] + " + " + a[1] + ")";
      case Op::SUB: return "(" + a[0] + " - " + a[1] + ")";
      case Op::MUL: return "(" + a[0] + " * " + a[1] + ")";
      case Op::DIV:
        if (fl) return "(" + a[0] + " / " + a[1] + ")";
        return "(" + a[1] + " == 0 ? 0 : " + a[0] + " / " + a[1] + ")";
      case Op::MOD:
        if (fl) return "fmod" + f + "(" + a[0] + ", " + a[1] + ")";
        return "(" + a[1] + " == 0 ? 0 : " + a[0] + " % " + a[1] + ")";
      case Op::MAX:
        if (fl) return "((" + a[0] + " > " + a[1] + " || " + a[0] + " != " + a[0] + ") ? " + a[0] + " : " + a[1] + ")";
        return "(" + a[0] + " > " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
      case Op::POW:
        if (fl) return "pow" + f + "(" + a[0] + ", " + a[1] + ")";
        return "(" + std::string(T) + ")ember_ipow((int64_t)" + a[0] + ", (int64_t)" + a[1] + ")";
      case Op::CMPLT: return "(uint8_t)(" + a[0] + " < " + a[1] + ")";
      case Op::CMPEQ: return "(uint8_t)(" + a[0] + " == " + a[1] + ")";
      case Op::AND: return "(uint8_t)(" + a[0] + " & " + a[1] + ")";
      case Op::OR: return "(uint8_t)(" + a[0] + " | " + a[1] + ")";
      case Op::XOR: return "(uint8_t)(" + a[0] + " ^ " + a[1] + ")";
      case Op::WHERE: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      default:
        (void)sfl;
        throw Error(std::string("render: no C rule for ") + ir::op_name(e.op));
    }
  }

  const Kernel& k_;
  size_t rank_, nglob_;
  std::vector<int64_t> up_;
  int unroll_;
  int next_ = 0;
};

}  // namespace

std::string c_prelude() {
  return R"(#include <math.h>
#include <stdint.h>
// Counter-based uniform [0,1): splitmix64 finaliser over (seed, counter); 24 random mantissa bits.
static inline float ember_rand(uint64_t seed, uint64_t ctr) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + ctr * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (float)(z >> 40) * (1.0f / 16777216.0f);
}
static inline int64_t ember_ipow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
  int64_t r = 1;
  while (e) { if (e & 1) r *= b; b *= b; e >>= 1; }
  return r;
}
)";
}

std::string render_c(const Kernel& k, const Opts& o, const std::string& fn_name) {
  return Renderer(k, o).render(fn_name);
}

int64_t outer_extent(const Kernel& k, const Opts& o) {
  size_t nglob = k.full_shape.size() - k.reduce_axes.size();
  if (nglob == 0) return 1;
  return k.full_shape[0] / o.upcasts(k.full_shape.size())[0];
}

}  // namespace ember::codegen
