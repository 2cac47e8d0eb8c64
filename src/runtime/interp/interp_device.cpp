// The interp device: evaluates the same kernels element by element, straight from the kernel IR,
// with no code generation. Slow and simple on purpose: it is the oracle for codegen tests.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>

#include "ember/error.h"
#include "ember/support/kernel_scalar.h"
#include "runtime/device.h"

namespace ember::runtime {

namespace {

using ir::Op;
using schedule::Expr;
using schedule::Kernel;

// A value: floats travel as double (rounded to the dtype after every op), integers as int64
// (uint64 as its bits).
struct Val {
  double f = 0;
  int64_t i = 0;
};

// v rounded to nearest even with `bits` significant bits and exponents down to `emin` (below it
// the subnormals' fixed step), and to infinity from `overflow` on: IEEE 754's rounding, written
// with the C library's exact operations instead of kernel_scalar.h's bit arithmetic, so that the
// two check each other.
double round_binary(double v, int bits, int emin, double overflow) {
  if (!std::isfinite(v) || v == 0) return v;
  const double a = std::fabs(v);
  if (a >= overflow) return std::copysign(INFINITY, v);
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const double step = std::ldexp(1.0, std::max(e - 1, emin) - (bits - 1));
  return std::copysign(std::nearbyint(a / step) * step, v);  // the default mode: ties to even
}

double round_to(double v, ScalarType t) {
  switch (t) {
    case kFloat32:
      return static_cast<double>(static_cast<float>(v));
    // Through float32 first, as libtorch converts (c10::Half and c10::BFloat16 take a float).
    case kFloat16:  // 11 bits, 2^-14 the least normal; 65504 + half its ulp rounds up
      return round_binary(static_cast<float>(v), 11, -14, 65520.0);
    case kBFloat16:  // 8 bits, float32's exponent range
      return round_binary(static_cast<float>(v), 8, -126, std::ldexp(255.0 * 2 + 1, 127 - 8));
    default:
      return v;
  }
}

// Calls f.template operator()<T>() with the T of Ts whose dtype is t; false where none is.
template <class... Ts, class F>
bool call_with_type_of(ScalarType t, F& f) {
  return ((t == dtype_of<Ts>() && (f.template operator()<Ts>(), true)) || ...);
}

// Calls f.template operator()<T>() with the C type T that holds an integer dtype's elements
// (bool as uint8_t; uint64 as int64_t, the bits that Val::i carries): the one table of integer
// element types that loads, stores and wrapping share.
template <class F>
void with_int_type(ScalarType t, F f) {
  const ScalarType held = t == kBool ? kUInt8 : t == kUInt64 ? kInt64 : t;
  if (!call_with_type_of<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t>(held, f))
    throw Error(std::string("internal error: interp: ") + dtype_name(t) +
                " is not an integer dtype");
}

// v wrapped to dtype t's range, as C converts an integer to it (bool: v != 0).
int64_t wrap_int(int64_t v, ScalarType t) {
  if (t == kBool) return v != 0;
  int64_t w = 0;
  with_int_type(t, [&]<class T>() { w = static_cast<T>(v); });
  return w;
}

// A float16 word's value from its fields (IEEE 754 binary16).
double half_value(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double a = e == 31 ? (m ? NAN : INFINITY) : std::ldexp(e ? 1024 + m : m, (e ? e : 1) - 25);
  return (h & 0x8000) ? -a : a;
}

Val make(double f, int64_t i, ScalarType t) {
  Val v;
  if (is_floating_point(t))
    v.f = round_to(f, t);
  else
    v.i = wrap_int(i, t);
  return v;
}

Val load(const void* p, ScalarType t, int64_t idx) {
  switch (t) {
    case kFloat32:
      return {static_cast<const float*>(p)[idx], 0};
    case kFloat64:
      return {static_cast<const double*>(p)[idx], 0};
    case kFloat16:
      return {half_value(static_cast<const uint16_t*>(p)[idx]), 0};
    case kBFloat16: {  // float32's top half
      const uint32_t w = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[idx]) << 16;
      float f;
      std::memcpy(&f, &w, 4);
      return {f, 0};
    }
    default: {
      Val v;
      with_int_type(t, [&]<class T>() { v.i = static_cast<const T*>(p)[idx]; });
      return v;
    }
  }
}

void store(void* p, ScalarType t, int64_t idx, Val v) {
  switch (t) {
    case kFloat32:
      static_cast<float*>(p)[idx] = static_cast<float>(v.f);
      break;
    case kFloat64:
      static_cast<double*>(p)[idx] = v.f;
      break;
    case kFloat16:  // v.f is a float16 value already: the conversion is exact
      static_cast<uint16_t*>(p)[idx] = ember_f2h(static_cast<float>(v.f));
      break;
    case kBFloat16:
      static_cast<uint16_t*>(p)[idx] = ember_f2bf(static_cast<float>(v.f));
      break;
    default:
      with_int_type(t, [&]<class T>() { static_cast<T*>(p)[idx] = static_cast<T>(v.i); });
  }
}

// The float-to-integer rule of the generated code (kernel_scalar.h): int32 and uint64 saturate
// at their own bounds; every other dtype takes int64's rule, and the caller's make() wraps the
// value to int8, int16, uint8, uint16 or uint32 (as ember_f2i8 and its like do).
int64_t float_to_int(double v, ScalarType t) {
  if (t == kInt32) return ember_f2i32(v);
  if (t == kUInt64) return static_cast<int64_t>(ember_f2u64(v));
  return ember_f2i64(v);
}

// An integer value (uint64 from its bits) converted to the float dtype `to` once, as C converts
// it: to float32 (and on to float16 or bfloat16) directly, not through a double.
double int_to_float(int64_t i, ScalarType t, ScalarType to) {
  const auto u = static_cast<uint64_t>(i);
  if (to == kFloat64) return t == kUInt64 ? static_cast<double>(u) : static_cast<double>(i);
  return t == kUInt64 ? static_cast<float>(u) : static_cast<float>(i);
}

// a < b for integer values of dtype t.
bool int_less(int64_t a, int64_t b, ScalarType t) {
  return t == kUInt64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

// The least value of an integer dtype (a max reduction's start).
int64_t int_min(ScalarType t) {
  switch (t) {
    case kInt8:
      return INT8_MIN;
    case kInt16:
      return INT16_MIN;
    case kInt32:
      return INT32_MIN;
    case kInt64:
      return INT64_MIN;
    default:
      return 0;
  }
}

class Evaluator {
 public:
  Evaluator(const Kernel& k, void* const* bufs) : k_(k), bufs_(bufs) {}

  void run() {
    size_t rank = k_.full_shape.size();
    std::vector<int64_t> out_shape = k_.full_shape;
    for (auto a : k_.reduce_axes) out_shape[a] = 1;
    int64_t n_out = ir::shape_numel(out_shape);
    idx_.assign(rank, 0);
    std::vector<Val> more;
    for (int64_t o = 0; o < n_out; o++) {
      unravel(o, out_shape);
      // All values of this index before any store (an output may overwrite an input read here).
      Val v = eval(*k_.value);
      more.clear();
      for (auto& out : k_.more_outputs) more.push_back(eval(*out.value));
      store(bufs_[0], k_.buffers[0].dtype, index(k_.out_view), v);
      for (size_t j = 0; j < more.size(); j++)
        store(bufs_[j + 1], k_.buffers[j + 1].dtype, index(k_.more_outputs[j].view), more[j]);
    }
  }

 private:
  void unravel(int64_t lin, const std::vector<int64_t>& shape) {
    for (size_t d = shape.size(); d-- > 0;) {
      idx_[d] = shape[d] ? lin % shape[d] : 0;
      lin = shape[d] ? lin / shape[d] : 0;
    }
  }
  int64_t index(const ir::View& v) const {
    int64_t s = v.offset;
    for (size_t d = 0; d < v.shape.size(); d++)
      if (v.shape[d] > 1) s += idx_[d] * v.strides[d];
    return s;
  }
  bool valid(const ir::View& v) const {
    for (size_t d = 0; d < v.mask.size(); d++) {
      int64_t i = v.shape[d] > 1 ? idx_[d] : 0;
      if (i < v.mask[d].first || i >= v.mask[d].second) return false;
    }
    return true;
  }

  // Floating sums are pairwise (halves summed recursively, runs of <= 8 terms in order), rounded
  // to the dtype after every add: error <= (7 + ceil(log2 n)) u sum|x| (tensor.h).
  template <class At>
  Val pairwise_sum(At& at, int64_t lo, int64_t hi, ScalarType t) {
    if (hi - lo <= 8) {
      Val acc = make(0, 0, t);
      for (int64_t r = lo; r < hi; r++) acc = make(acc.f + at(r).f, 0, t);
      return acc;
    }
    int64_t mid = lo + (hi - lo) / 2;
    Val a = pairwise_sum(at, lo, mid, t), b = pairwise_sum(at, mid, hi, t);
    return make(a.f + b.f, 0, t);
  }

  // A nest (kernel.h) is evaluated once, over its own loop space.
  Val reduce(const Expr& e) {
    if (!e.nested) return reduce_over(e, k_.full_shape);
    if (auto it = nests_.find(&e); it != nests_.end()) return it->second;
    std::vector<int64_t> saved = idx_;
    idx_.assign(e.nest_shape.size(), 0);
    Val v = reduce_over(e, e.nest_shape);
    idx_ = saved;
    nests_[&e] = v;
    return v;
  }

  Val reduce_over(const Expr& e, const std::vector<int64_t>& space) {
    std::vector<int64_t> saved = idx_;
    std::vector<int64_t> rshape;
    for (auto a : e.axes) rshape.push_back(space[a]);
    int64_t n = ir::shape_numel(rshape);
    ScalarType t = e.dtype;
    bool fl = is_floating_point(t);
    Val acc;
    if (e.op == Op::SUM)
      acc = make(0, 0, t);
    else if (e.op == Op::PROD)
      acc = make(1, 1, t);
    else
      acc = fl ? Val{-INFINITY, 0} : Val{0, int_min(t)};
    auto at = [&](int64_t r) {
      int64_t lin = r;
      for (size_t j = e.axes.size(); j-- > 0;) {
        idx_[e.axes[j]] = lin % rshape[j];
        lin /= rshape[j];
      }
      return eval(*e.src[0]);
    };
    if (e.op == Op::SUM && fl) {
      acc = pairwise_sum(at, 0, n, t);
      idx_ = saved;
      return acc;
    }
    for (int64_t r = 0; r < n; r++) {
      Val v = at(r);
      if (e.op == Op::SUM)
        acc = t == kBool ? make(0, acc.i | v.i, t) : make(acc.f + v.f, acc.i + v.i, t);
      else if (e.op == Op::PROD)
        acc = t == kBool ? make(0, acc.i & v.i, t) : make(acc.f * v.f, acc.i * v.i, t);
      else if (fl)
        acc = (v.f > acc.f || std::isnan(v.f)) && !std::isnan(acc.f) ? v : acc;
      else
        acc = int_less(acc.i, v.i, t) ? v : acc;
    }
    idx_ = saved;
    return acc;
  }

  Val eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Load:
        if (e.view.has_mask() && !valid(e.view)) return Val{};
        return load(bufs_[e.buf], e.dtype, index(e.view));
      case Expr::Kind::Const:
        if (e.view.has_mask() && !valid(e.view)) return Val{};
        return make(e.value, e.ivalue, e.dtype);
      case Expr::Kind::Rand: {
        if (e.view.has_mask() && !valid(e.view)) return Val{};
        // The key buffer {seed, counter, low, range}, as the C renderer reads it.
        auto* key = static_cast<const int64_t*>(bufs_[e.buf]);
        const auto seed = static_cast<uint64_t>(key[0]);
        const auto ctr = static_cast<uint64_t>(key[1]) + static_cast<uint64_t>(index(e.view));
        if (e.dtype == kInt64)
          return {0, ember_randint(seed, ctr, key[2], static_cast<uint64_t>(key[3]))};
        if (e.dtype == kFloat64) return {ember_rand53(seed, ctr), 0};
        return {ember_rand(seed, ctr), 0};
      }
      case Expr::Kind::Reduce:
        return reduce(e);
      case Expr::Kind::Alu:
        break;
    }
    std::vector<Val> a;
    for (auto& s : e.src) a.push_back(eval(*s));
    ScalarType t = e.dtype;
    ScalarType st = e.src[0]->dtype;
    bool fl = is_floating_point(t), sfl = is_floating_point(st);
    switch (e.op) {
      case Op::NEG:
        return make(-a[0].f, -a[0].i, t);
      case Op::EXP:
        return make(t == kFloat32 ? std::exp(static_cast<float>(a[0].f)) : std::exp(a[0].f), 0, t);
      case Op::LOG:
        return make(t == kFloat32 ? std::log(static_cast<float>(a[0].f)) : std::log(a[0].f), 0, t);
      case Op::SIN:
        return make(t == kFloat32 ? std::sin(static_cast<float>(a[0].f)) : std::sin(a[0].f), 0, t);
      case Op::COS:
        return make(t == kFloat32 ? std::cos(static_cast<float>(a[0].f)) : std::cos(a[0].f), 0, t);
      case Op::SQRT:
        return make(t == kFloat32 ? std::sqrt(static_cast<float>(a[0].f)) : std::sqrt(a[0].f), 0,
                    t);
      case Op::FLOOR:
        if (!fl) return a[0];
        return make(t == kFloat32 ? std::floor(static_cast<float>(a[0].f)) : std::floor(a[0].f), 0,
                    t);
      case Op::TANH:
        return make(t == kFloat32 ? std::tanh(static_cast<float>(a[0].f)) : std::tanh(a[0].f), 0,
                    t);
      case Op::RECIP:
        return make(1.0 / a[0].f, 0, t);
      case Op::NOT:
        return make(0, !a[0].i, t);
      case Op::CAST: {
        if (t == kBool) return make(0, sfl ? a[0].f != 0 : a[0].i != 0, t);
        if (fl) return make(sfl ? a[0].f : int_to_float(a[0].i, st, t), 0, t);
        if (!sfl) return make(0, a[0].i, t);
        return make(0, float_to_int(a[0].f, t), t);  // wrapped by make
      }
      case Op::ADD:
        return make(a[0].f + a[1].f, a[0].i + a[1].i, t);
      case Op::SUB:
        return make(a[0].f - a[1].f, a[0].i - a[1].i, t);
      case Op::MUL:
        return make(a[0].f * a[1].f, a[0].i * a[1].i, t);
      case Op::DIV:
        if (t == kUInt64)
          return make(0, a[1].i ? static_cast<int64_t>(uint64_t(a[0].i) / uint64_t(a[1].i)) : 0, t);
        return make(a[0].f / a[1].f, a[1].i ? a[0].i / a[1].i : 0, t);
      case Op::MAX:
        if (fl) return (a[0].f >= a[1].f || std::isnan(a[0].f)) ? a[0] : a[1];
        return int_less(a[1].i, a[0].i, t) ? a[0] : a[1];
      case Op::POW: {
        if (fl)
          return make(t == kFloat32
                          ? std::pow(static_cast<float>(a[0].f), static_cast<float>(a[1].f))
                          : std::pow(a[0].f, a[1].f),
                      0, t);
        return make(0, ember_ipow(a[0].i, a[1].i), t);
      }
      case Op::CMPLT:
        return make(0, sfl ? a[0].f < a[1].f : int_less(a[0].i, a[1].i, st), t);
      case Op::CMPEQ:
        return make(0, sfl ? a[0].f == a[1].f : a[0].i == a[1].i, t);
      case Op::AND:
        return make(0, a[0].i & a[1].i, t);
      case Op::OR:
        return make(0, a[0].i | a[1].i, t);
      case Op::XOR:
        return make(0, a[0].i ^ a[1].i, t);
      case Op::WHERE:
        return a[0].i ? a[1] : a[2];
      // Not ALU ops: the kernel's Load, Const, Rand and Reduce expressions cover them.
      case Op::BUFFER:
      case Op::CONST:
      case Op::RAND:
      case Op::CONTIGUOUS:
      case Op::DETACH:
      case Op::SUM:
      case Op::RMAX:
      case Op::PROD:
      case Op::RESHAPE:
      case Op::PERMUTE:
      case Op::EXPAND:
      case Op::PAD:
      case Op::SHRINK:
      case Op::FLIP:
        break;
    }  // no default: -Werror=switch makes a new op in ops.def without a rule a build error
    throw Error(std::string("interp: no ALU rule for ") + ir::op_name(e.op));
  }

  const Kernel& k_;
  void* const* bufs_;
  std::vector<int64_t> idx_;
  std::unordered_map<const Expr*, Val> nests_;
};

struct InterpProgram : Program {
  void launch(void* const* bufs) const override { Evaluator(kernel, bufs).run(); }
};

class InterpDevice : public Device {
 public:
  std::string name() const override { return "interp"; }
  std::vector<std::shared_ptr<Program>> compile(
      const std::vector<const schedule::Kernel*>& kernels) override {
    return make_programs(kernels, new_program<InterpProgram>);
  }
};

}  // namespace

Device& interp_device() {
  static InterpDevice d;
  return d;
}

}  // namespace ember::runtime
