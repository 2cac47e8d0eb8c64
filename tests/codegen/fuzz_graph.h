// Random op graphs for the codegen fuzz test (tests/codegen/test_fuzz.cpp).
//
// A graph is a pure function of its seed: building it twice (once per device) gives the same ops on
// the same host data. Every generated value carries what we know about its numbers:
//  - `frac`/`mag`: float values are dyadic (k / 2^frac with |value| < 2^mag). While frac + mag fits
//    the mantissa, + - * sum max are exact whatever the evaluation order or FMA contraction, so
//    both devices must agree bit for bit (`exact`). Integers are always exact (kept small).
//  - `special`: may hold NaN or +-inf (IEEE rules are order-independent for these ops).
// Comparisons, casts to integers, argmax and where-conditions only take exact operands, so a
// rounding difference can never flip a branch; inexact values are compared with tolerances.
#pragma once
#include <ember/ember.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fuzz {

using ember::Tensor;

struct Val {
  Tensor t;
  int frac = 0, mag = 0;
  bool dyadic = true;  // float values are small dyadics (see above); ignored for integers
  bool special = false;
};

inline bool is_float(const Tensor& t) { return t.is_floating_point(); }
inline int mantissa(ember::ScalarType t) { return t == ember::kFloat64 ? 50 : 22; }
/// Both devices must produce bit-identical values.
inline bool exact(const Val& v) {
  if (!is_float(v.t)) return v.mag <= 24;
  return v.dyadic && v.frac + v.mag <= mantissa(v.t.dtype());
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int64_t uni(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(g_);
  }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uni(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

/// Host data for a new input: dyadic floats k/8 in [-4, 4], small integers, random bools; with
/// `special`, a few NaN / +-inf entries.
inline Val make_input(Rng& r, const ember::Shape& shape, ember::ScalarType dt, bool special) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  Val v;
  std::vector<double> x(static_cast<size_t>(n));
  for (auto& e : x) {
    switch (dt) {
      case ember::kBool:
        e = static_cast<double>(r.uni(0, 1));
        break;
      case ember::kUInt8:
        e = static_cast<double>(r.uni(0, 9));
        break;
      case ember::kInt32:
      case ember::kInt64:
        e = static_cast<double>(r.uni(-9, 9));
        break;
      default:
        e = static_cast<double>(r.uni(-32, 32)) / 8.0;
    }
    if (special && is_floating_point(dt) && r.coin(0.1))
      e = r.pick(std::vector<double>{NAN, INFINITY, -INFINITY, 0.0});
  }
  switch (dt) {
    case ember::kFloat32: {
      std::vector<float> f(x.begin(), x.end());
      v.t = ember::from_blob(f.data(), shape, dt);
      break;
    }
    case ember::kFloat64:
      v.t = ember::from_blob(x.data(), shape, dt);
      break;
    case ember::kInt32: {
      std::vector<int32_t> f(x.begin(), x.end());
      v.t = ember::from_blob(f.data(), shape, dt);
      break;
    }
    case ember::kInt64: {
      std::vector<int64_t> f(x.begin(), x.end());
      v.t = ember::from_blob(f.data(), shape, dt);
      break;
    }
    default: {
      std::vector<uint8_t> f(x.begin(), x.end());
      v.t = ember::from_blob(f.data(), shape, dt);
    }
  }
  v.frac = is_floating_point(dt) ? 3 : 0;
  v.mag = dt == ember::kBool ? 1 : 4;
  v.special = special && is_floating_point(dt);
  return v;
}

inline int log2ceil(int64_t n) {
  int b = 0;
  while ((int64_t{1} << b) < n) b++;
  return b;
}

/// Combines the number facts of two operands of + - max where (add: one more magnitude bit).
inline Val join(const Val& a, const Val& b, Tensor t, int extra_mag) {
  Val v;
  v.t = std::move(t);
  v.frac = std::max(a.frac, b.frac);
  v.mag = std::max(a.mag, b.mag) + extra_mag;
  v.dyadic = (a.dyadic || !is_float(a.t)) && (b.dyadic || !is_float(b.t));
  v.special = a.special || b.special;
  return v;
}

/// A copy of `v` with a new tensor that holds no new kinds of numbers (movement, neg, max...).
inline Val same(const Val& v, Tensor t) {
  Val r = v;
  r.t = std::move(t);
  return r;
}

/// Marks a result as ordinary floats (transcendental, division): compared with tolerances.
inline Val inexact(const Val& v, Tensor t) {
  Val r = v;
  r.t = std::move(t);
  r.dyadic = false;
  return r;
}

/// Builds one random graph; returns its outputs (1-2 tensors). Defined in fuzz_graph.cpp.
std::vector<Val> build_graph(uint64_t seed);
/// A random matrix product (odd sizes, transposed views, batches, fused epilogues).
std::vector<Val> build_matmul(uint64_t seed);

}  // namespace fuzz
