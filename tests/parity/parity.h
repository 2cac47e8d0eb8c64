// Forward parity against libtorch (docs/design.md, Testing): every case is ONE generic body,
// written once as a template over a backend `b`, run on ember and on libtorch with identical seeded
// inputs; the results must agree in shape, dtype and values.
//
//   PARITY_CASE(Unary, exp_2d, .tol = parity::kTranscendental) {
//     auto x = b.randn({3, 4});          // same host data on both backends
//     return x.exp();                    // a tensor, a vector/tuple of tensors, or a number (item)
//   }
//
// Inside a body only the backend `b` differs: b.randn/b.rand/b.randint/b.randbool/b.dyadic/b.values
// make inputs from one std::mt19937_64 stream (seeded from the case name),
// b.zeros/b.cat/b.where/... are the free functions, b.f32/b.i64/... the dtypes, b.sl/b.at the index
// entries, b.none an absent optional (clamp(b.none, hi)). Tensor methods and operators are called
// directly: ember's names mirror libtorch's. b.realize(t) forces a value at that point of the body
// (a no-op on libtorch). Results are computed in one schedule. (libtorch gotcha: a two-element dim
// list starting with 0, `x.sum({0, 2})`, is ambiguous there, since {0, n} also reads as
// ArrayRef(nullptr, n) of Dimnames; write `{2, 0}`. And `t.view({})` is view(dtype) there: write
// `t.view(parity::Shape{})`.)
//
// Tolerances: float32/float64 |ember - torch| <= atol + rtol * |torch| with atol 1e-6, rtol 1e-3
// (kTranscendental, looser, only where a case says so; kExact for bit-exact cases such as
// float16 and bfloat16 rounding); integers and bools exact; NaN matches NaN.
//
// Each case also runs on the `interp` device (the codegen oracle) unless it sets .interp = false.
//
// Expected-error cases: PARITY_REJECTS(Suite, name) { body } passes when the body throws on
// libtorch and throws an ember::Error on ember.
//
// Backward hook (for autograd parity, not implemented here): a backend built with
// `track_grad = true` marks every floating input it makes as requiring grad and lists it in
// `b.leaves`, in creation order. A backward runner reuses the same case bodies: run the body on
// both backends with track_grad, draw a cotangent per floating output from the same seeded stream,
// backward sum(out * cotangent), and compare each leaf's grad() with Options::grad_tol. Only
// floating tensor outputs carry cotangents (integer/bool outputs and item() numbers are skipped,
// and a case without floating outputs or leaves has nothing to check); .grad = false opts a case
// out entirely (in-place updates of leaves, index-valued results such as max(dim)/argmax).
#pragma once
#include <gtest/gtest.h>
#include <torch/types.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/ember.h"

namespace parity {

using Shape = std::vector<int64_t>;

struct Tol {
  double atol = 1e-6;
  double rtol = 1e-3;
};
/// float32 forward default.
inline constexpr Tol kDefault{1e-6, 1e-3};
/// Transcendental ops (exp/log/sin/tanh/pow/...): libm versus libtorch's vectorised SLEEF, and
/// composites that cancel (cos via sin(pi/2 - x)). Cases that use it say so.
inline constexpr Tol kTranscendental{1e-5, 1e-3};
/// Equal values (the same rounding of the same exact result).
inline constexpr Tol kExact{0, 0};

struct Options {
  Tol tol = kDefault;
  bool interp = true;  // also run the ember side on the interp device
  bool grad = true;    // differentiable in its floating inputs (for the backward runner)
  Tol grad_tol{1e-4, 1e-3};
};

/// A result copied to the host: what the two backends are compared on.
struct Host {
  Shape shape;
  ember::ScalarType dtype = ember::kFloat32;
  std::vector<double> f;   // floating results
  std::vector<int64_t> i;  // integer and bool results
};

// ---- seeded host data -------------------------------------------------------------------------
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  std::vector<double> normal(int64_t n) {
    std::normal_distribution<double> d(0.0, 1.0);
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng_);
    return v;
  }
  std::vector<double> uniform(int64_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng_);
    return v;
  }
  std::vector<double> integers(int64_t n, int64_t lo, int64_t hi) {  // [lo, hi)
    std::uniform_int_distribution<int64_t> d(lo, hi - 1);
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& x : v) x = static_cast<double>(d(rng_));
    return v;
  }

 private:
  std::mt19937_64 rng_;
};

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

/// Host bytes of `v` converted to dtype (one conversion, shared by both backends).
std::vector<uint8_t> encode(const std::vector<double>& v, ember::ScalarType t);

// ---- the two backends -------------------------------------------------------------------------
// Both expose the same members; a case body only ever names them through `b`.
template <class Derived, class TensorT, class DType>
class BackendBase {
 public:
  using T = TensorT;
  BackendBase(uint64_t seed, bool track_grad) : track_grad(track_grad), gen_(seed) {}

  /// Standard normal values.
  T randn(Shape s, std::optional<DType> dt = {}) { return make(gen_.normal(numel(s)), s, dt); }
  /// Uniform in [lo, hi).
  T rand(Shape s, double lo = 0, double hi = 1, std::optional<DType> dt = {}) {
    return make(gen_.uniform(numel(s), lo, hi), s, dt);
  }
  /// Integers uniform in [lo, hi), int64 unless dt is given.
  T randint(int64_t lo, int64_t hi, Shape s, std::optional<DType> dt = {}) {
    return make(gen_.integers(numel(s), lo, hi), s, dt.value_or(self().i64));
  }
  T randbool(Shape s) { return make(gen_.integers(numel(s), 0, 2), s, self().b8); }
  /// Multiples of 1/steps, uniform in [-1, 1). They are exact in float32, and so are the products
  /// and partial sums of a matrix product of them (up to K = 2^16 terms at steps 16): its result
  /// does not depend on the summation order. Product cases use them so that an output near zero
  /// cannot make the test depend on the reference's order (another BLAS kernel on another CPU),
  /// and so that a wrong or missing term shows at any size.
  T dyadic(Shape s, int64_t steps = 16, std::optional<DType> dt = {}) {
    std::vector<double> v = gen_.integers(numel(s), -steps, steps);
    for (double& x : v) x /= static_cast<double>(steps);
    return make(std::move(v), s, dt);
  }
  /// Given values (row-major) as dtype (float32 by default).
  T values(std::vector<double> v, Shape s, std::optional<DType> dt = {}) {
    return make(std::move(v), s, dt);
  }

  // Backward hook (see the file comment).
  bool track_grad = false;
  std::vector<T> leaves;

 protected:
  T make(std::vector<double> v, const Shape& s, std::optional<DType> dt) {
    T t = self().from_host(v, s, dt.value_or(self().f32));
    if (track_grad && t.is_floating_point()) {
      t.requires_grad_(true);
      leaves.push_back(t);
    }
    return t;
  }
  Derived& self() { return static_cast<Derived&>(*this); }
  Gen gen_;
};

class EmberB : public BackendBase<EmberB, ember::Tensor, ember::ScalarType> {
 public:
  using BackendBase::BackendBase;
  using Scalar = ember::Scalar;
  using DT = ember::ScalarType;
  static constexpr const char* name = "ember";
  DT f32 = ember::kFloat32, f64 = ember::kFloat64, i32 = ember::kInt32, i64 = ember::kInt64,
     b8 = ember::kBool, u8 = ember::kUInt8, i8 = ember::kInt8, i16 = ember::kInt16,
     f16 = ember::kFloat16, bf16 = ember::kBFloat16;
  static constexpr std::nullopt_t none = std::nullopt;  // an absent optional argument

  T from_host(const std::vector<double>& v, const Shape& s, DT dt);
  T zeros(Shape s, std::optional<DT> dt = {}) { return ember::zeros(s, opts(dt)); }
  T ones(Shape s, std::optional<DT> dt = {}) { return ember::ones(s, opts(dt)); }
  T full(Shape s, Scalar v, std::optional<DT> dt = {}) { return ember::full(s, v, opts(dt)); }
  T zeros_like(const T& t) { return ember::zeros_like(t); }
  T ones_like(const T& t) { return ember::ones_like(t); }
  T full_like(const T& t, Scalar v) { return ember::full_like(t, v); }
  T scalar_tensor(Scalar v, std::optional<DT> dt = {}) { return ember::scalar_tensor(v, opts(dt)); }
  T arange(Scalar end, std::optional<DT> dt = {}) { return ember::arange(end, opts(dt)); }
  T arange(Scalar a, Scalar e, Scalar step, std::optional<DT> dt = {}) {
    return ember::arange(a, e, step, opts(dt));
  }
  T eye(int64_t n, std::optional<DT> dt = {}) { return ember::eye(n, opts(dt)); }
  T eye(int64_t n, int64_t m, std::optional<DT> dt = {}) { return ember::eye(n, m, opts(dt)); }
  T cat(const std::vector<T>& ts, int64_t d = 0) { return ember::cat(ts, d); }
  T stack(const std::vector<T>& ts, int64_t d = 0) { return ember::stack(ts, d); }
  T where(const T& c, const T& x, const T& y) { return ember::where(c, x, y); }
  T where(const T& c, Scalar x, const T& y) { return ember::where(c, x, y); }
  T where(const T& c, const T& x, Scalar y) { return ember::where(c, x, y); }
  T matmul(const T& x, const T& y) { return ember::matmul(x, y); }
  T mm(const T& x, const T& y) { return ember::mm(x, y); }
  T bmm(const T& x, const T& y) { return ember::bmm(x, y); }
  T linear(const T& x, const T& w, const T& bias = T()) { return ember::linear(x, w, bias); }
  T pad(const T& t, Shape p, Scalar v = 0) { return ember::constant_pad_nd(t, p, v); }
  T maximum(const T& x, const T& y) { return ember::maximum(x, y); }
  T minimum(const T& x, const T& y) { return ember::minimum(x, y); }
  ember::Slice sl(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) {
    return ember::Slice(start, stop, step);
  }
  int64_t at(int64_t i) { return i; }

  Host host(const T& t);
  /// Computes every result in one schedule before they are read.
  void realize_all(const std::vector<T>& ts) { ember::realize(ts); }
  /// Forces one value now (ember is lazy; libtorch already computed it).
  void realize(const T& t) { t.realize(); }

 private:
  ember::TensorOptions opts(std::optional<DT> dt) {
    return dt ? ember::TensorOptions(*dt) : ember::TensorOptions();
  }
};

class TorchB : public BackendBase<TorchB, torch::Tensor, c10::ScalarType> {
 public:
  using BackendBase::BackendBase;
  using Scalar = c10::Scalar;
  using DT = c10::ScalarType;
  static constexpr const char* name = "torch";
  DT f32 = torch::kFloat32, f64 = torch::kFloat64, i32 = torch::kInt32, i64 = torch::kInt64,
     b8 = torch::kBool, u8 = torch::kUInt8, i8 = torch::kInt8, i16 = torch::kInt16,
     f16 = torch::kHalf, bf16 = torch::kBFloat16;  // libtorch 1.13 has no uint16/32/64
  static constexpr c10::nullopt_t none = c10::nullopt;

  T from_host(const std::vector<double>& v, const Shape& s, DT dt);
  T zeros(Shape s, std::optional<DT> dt = {}) { return torch::zeros(s, opts(dt)); }
  T ones(Shape s, std::optional<DT> dt = {}) { return torch::ones(s, opts(dt)); }
  T full(Shape s, Scalar v, std::optional<DT> dt = {}) { return torch::full(s, v, opts(dt)); }
  T zeros_like(const T& t) { return torch::zeros_like(t); }
  T ones_like(const T& t) { return torch::ones_like(t); }
  T full_like(const T& t, Scalar v) { return torch::full_like(t, v); }
  T scalar_tensor(Scalar v, std::optional<DT> dt = {});
  T arange(Scalar end, std::optional<DT> dt = {}) { return torch::arange(end, opts(dt)); }
  T arange(Scalar a, Scalar e, Scalar step, std::optional<DT> dt = {}) {
    return torch::arange(a, e, step, opts(dt));
  }
  T eye(int64_t n, std::optional<DT> dt = {}) { return torch::eye(n, opts(dt)); }
  T eye(int64_t n, int64_t m, std::optional<DT> dt = {}) { return torch::eye(n, m, opts(dt)); }
  T cat(const std::vector<T>& ts, int64_t d = 0) { return torch::cat(ts, d); }
  T stack(const std::vector<T>& ts, int64_t d = 0) { return torch::stack(ts, d); }
  T where(const T& c, const T& x, const T& y) { return torch::where(c, x, y); }
  T where(const T& c, Scalar x, const T& y) { return torch::where(c, x, y); }
  T where(const T& c, const T& x, Scalar y) { return torch::where(c, x, y); }
  T matmul(const T& x, const T& y) { return torch::matmul(x, y); }
  T mm(const T& x, const T& y) { return torch::mm(x, y); }
  T bmm(const T& x, const T& y) { return torch::bmm(x, y); }
  T linear(const T& x, const T& w, const T& bias = T()) { return torch::linear(x, w, bias); }
  T pad(const T& t, Shape p, Scalar v = 0) { return torch::constant_pad_nd(t, p, v); }
  T maximum(const T& x, const T& y) { return torch::maximum(x, y); }
  T minimum(const T& x, const T& y) { return torch::minimum(x, y); }
  torch::indexing::Slice sl(c10::optional<int64_t> start, c10::optional<int64_t> stop,
                            int64_t step = 1) {
    return torch::indexing::Slice(start, stop, step);
  }
  int64_t at(int64_t i) { return i; }

  Host host(const T& t);
  void realize_all(const std::vector<T>&) {}
  void realize(const T&) {}

 private:
  torch::TensorOptions opts(std::optional<DT> dt) {
    return dt ? torch::TensorOptions().dtype(*dt) : torch::TensorOptions();
  }
};

// ---- collecting results -----------------------------------------------------------------------
template <class B, class R>
void gather_tensors(const R& r, std::vector<typename B::T>& out) {
  if constexpr (std::is_same_v<R, typename B::T>) {
    out.push_back(r);
  } else if constexpr (requires { r.begin(); }) {
    for (auto& x : r) gather_tensors<B>(x, out);
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... xs) { (gather_tensors<B>(xs, out), ...); }, r);
  }
}

template <class B, class R>
void collect(B& b, const R& r, std::vector<Host>& out) {
  if constexpr (std::is_same_v<R, typename B::T>) {
    out.push_back(b.host(r));
  } else if constexpr (std::is_arithmetic_v<R>) {  // item<T>()
    Host h;
    h.dtype = ember::dtype_of<R>();
    if constexpr (std::is_floating_point_v<R>)
      h.f = {static_cast<double>(r)};
    else
      h.i = {static_cast<int64_t>(r)};
    out.push_back(h);
  } else if constexpr (requires { r.begin(); }) {
    for (auto& x : r) collect(b, x, out);
  } else {
    std::apply([&](const auto&... xs) { (collect(b, xs, out), ...); }, r);
  }
}

/// The tensors of a case's result (a tensor, or lists and tuples of them), in order.
template <class B, class R>
std::vector<typename B::T> tensors_of(const R& r) {
  std::vector<typename B::T> ts;
  gather_tensors<B>(r, ts);
  return ts;
}

/// A case's result as host values (collect).
template <class B, class R>
std::vector<Host> hosts_of(B& b, const R& r) {
  std::vector<Host> out;
  collect(b, r, out);
  return out;
}

template <class Case, class B>
std::vector<Host> run_on(uint64_t seed) {
  B b(seed, false);
  auto r = Case{}(b);
  b.realize_all(tensors_of<B>(r));
  return hosts_of(b, r);
}

/// Compares ember's results with torch's; returns "" when they agree, else a description.
std::string compare(const std::vector<Host>& ember, const std::vector<Host>& torch, Tol tol);
uint64_t seed_of(const std::string& name);

using ember::DeviceGuard;

/// Runs the libtorch reference; a rejection there is a bug in the case (reported, false).
template <class F>
bool torch_reference(F run) {
  try {
    run();
    return true;
  } catch (const c10::Error& e) {
    ADD_FAILURE() << "libtorch rejected the case (a test bug): " << e.what_without_backtrace();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "libtorch rejected the case (a test bug): " << e.what();
  }
  return false;
}

/// Runs ember's side; an exception is a failure (reported, false).
template <class F>
bool ember_runs(F run) {
  try {
    run();
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "ember threw: " << e.what();
    return false;
  }
}

/// The ember devices the cases run on: $EMBER_PARITY_DEVICES (comma-separated, e.g. "opencl"),
/// else cpu and interp.
std::vector<std::string> parity_devices();

/// Calls `f` once on each ember device the case runs on (parity_devices(); interp unless
/// Options::interp is false), with the device set and named in failures.
template <class F>
void for_each_device(const Options& o, F f) {
  for (const std::string& dev : parity_devices()) {
    if (dev == "interp" && !o.interp) continue;
    SCOPED_TRACE("ember device " + dev);
    DeviceGuard g(dev);
    f();
  }
}

/// The runner of check and check_grad: the case (seeded by its name) run by `torch_run` for the
/// reference, then by `ember_run` on each ember device, whose results and the reference go to
/// `expect(got, ref, options)`.
template <class Case, class Expect>
void check_against_torch(const char* name, std::vector<Host> (*torch_run)(uint64_t),
                         std::vector<Host> (*ember_run)(uint64_t), Expect expect) {
  const Options o = Case::options();
  const uint64_t seed = seed_of(name);
  std::vector<Host> ref;
  if (!torch_reference([&] { ref = torch_run(seed); })) return;
  for_each_device(o, [&] {
    std::vector<Host> got;
    if (ember_runs([&] { got = ember_run(seed); })) expect(got, ref, o);
  });
}

template <class Case>
void check(const char* name) {
  check_against_torch<Case>(
      name, run_on<Case, TorchB>, run_on<Case, EmberB>,
      [](const std::vector<Host>& got, const std::vector<Host>& ref, const Options& o) {
        std::string diff = compare(got, ref, o.tol);
        EXPECT_TRUE(diff.empty()) << diff;
      });
}

/// An expected-error case: the body must throw on libtorch (c10::Error or another exception) and
/// on ember (an ember::Error subtype: ValueError, DTypeError, ...), on every ember device.
template <class Case>
void check_rejected(const char* name) {
  const Options o = Case::options();
  const uint64_t seed = seed_of(name);
  bool torch_threw = false;
  try {
    run_on<Case, TorchB>(seed);
  } catch (const std::exception&) {
    torch_threw = true;
  }
  ASSERT_TRUE(torch_threw) << "libtorch accepted the case (a test bug)";
  for_each_device(o, [&] {
    bool threw = false;
    try {
      run_on<Case, EmberB>(seed);
    } catch (const ember::Error&) {
      threw = true;
    }
    EXPECT_TRUE(threw) << "ember accepted what libtorch rejects";
  });
}

}  // namespace parity

/// The struct of one case: its Options (the variadic part, e.g. `.tol = parity::kTranscendental`)
/// and its generic body, whose definition PARITY_CASE_BODY_ opens.
#define PARITY_CASE_STRUCT_(suite, name, ...)                                 \
  struct suite##_##name##_Case {                                              \
    static parity::Options options() { return parity::Options{__VA_ARGS__}; } \
    template <class B>                                                        \
    auto operator()(B& b) const;                                              \
  }
#define PARITY_CASE_BODY_(suite, name) \
  template <class B>                   \
  auto suite##_##name##_Case::operator()([[maybe_unused]] B& b) const

/// Defines one case checked by parity::CHECKER: its struct, holding the generic body written
/// after the macro, and the gtest TEST that runs it.
#define PARITY_DEFINE_CASE_(CHECKER, suite, name, ...)                            \
  PARITY_CASE_STRUCT_(suite, name, __VA_ARGS__);                                  \
  TEST(suite, name) { parity::CHECKER<suite##_##name##_Case>(#suite "." #name); } \
  PARITY_CASE_BODY_(suite, name)

/// Defines one expected-error case: the body must throw on both backends (check_rejected).
#define PARITY_REJECTS(suite, name, ...) \
  PARITY_DEFINE_CASE_(check_rejected, suite, name, __VA_ARGS__)

/// Defines one parity case: a gtest TEST running the generic body below on both backends.
/// The variadic part initialises parity::Options (e.g. `.tol = parity::kTranscendental`).
#define PARITY_CASE(suite, name, ...) PARITY_DEFINE_CASE_(check, suite, name, __VA_ARGS__)
