// Parity of the value rules that issue 39 found silently wrong: signed zeros and NaN gradients of
// abs, relu, clamp, maximum and minimum; integer scalars kept exact at any
// int64 value (fill values, operands, comparisons, clamp bounds, where and pad values, arange,
// alpha), libtorch's checked conversions (a value that does not fit the dtype is an error) and
// its wrapped ones (an operand wraps), float-to-integer casts of in-range values, and the ranges
// randint's dtype must hold.
#include <cstdint>

#include "parity_grad.h"

namespace {
constexpr int64_t kBig = (int64_t{1} << 53) + 1;  // the first integer a double cannot hold
constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
constexpr int64_t kOver32 = (int64_t{1} << 32) + 5;  // wraps to 5 in int32
}  // namespace

// ---- exact int64 scalars -----------------------------------------------------------------------
// [kBig - 1, kBig, kBig + 1] and [kMax - 2, kMax - 1, kMax]: built from exact fills.
#define BIG3 (b.full({3}, kBig - 1) + b.arange(3))
#define TOP3 (b.full({3}, kMax - 2) + b.arange(3))

PARITY_CASE(ExactInt64, fill_values) {
  auto f = b.zeros({2}, b.i64);
  f.fill_(kMax - 1);
  return std::vector{b.full({2}, kBig),
                     b.full({2}, kMax),
                     b.full({2}, kMin),
                     b.full_like(b.zeros({2}, b.i64), kBig),
                     f,
                     b.scalar_tensor(kBig, b.i64)};
}
PARITY_CASE(ExactInt64,
            clamp_bounds) {  // the case: clamp_max(INT64_MAX - 1) gave INT64_MIN
  return std::vector{b.full({2}, kMax).clamp_max(kMax - 1), TOP3.clamp_min(kMax - 1),
                     TOP3.clamp(kMax - 1, kMax - 1), BIG3.clamp(kBig, kBig + 5),
                     b.full({2}, kMin).clamp_min(kMin + 1)};
}
PARITY_CASE(ExactInt64, comparisons) {
  auto x = BIG3, y = TOP3;
  return std::vector{x == kBig,      x != kBig,  x<kBig, x <= kBig, x> kBig,
                     x >= kBig,      y == kMax,  y<kMax, y> kMax - 2,
                     y.eq(kMax - 1), y.ge(kMax), y.lt(kMax - 1)};
}
PARITY_CASE(ExactInt64, arithmetic_operands) {
  auto x = BIG3;
  return std::vector{x + kBig,    x - kBig,        x * 3,       TOP3 - kMax,
                     kBig - x,    kMax - TOP3,     kBig + x,    b.full({2}, kMax) + 1,
                     x.add(kBig), x.sub(kBig + 2), x.mul(kBig), x.add(x, kBig)};
}
PARITY_CASE(ExactInt64, in_place_operands_and_pow) {
  auto a = BIG3, s = BIG3, m = BIG3, p = TOP3, q = TOP3, r = BIG3;
  a.add_(kBig);
  s.sub_(kBig + 2);
  m.mul_(3);
  p -= kMax;
  q += kMin + 2;
  r.add_(1, kBig);  // alpha
  auto t = TOP3;
  t.sub_(kMax - 5, 1);
  auto u = BIG3;
  u *= 2;
  return std::vector{a, s, m, p, q, r, t, u, b.full({2}, 3).pow(39), b.full({2}, -3).pow(39)};
}
// Floating aranges of int64 bounds: computed in double, as libtorch does (the values round).
PARITY_CASE(ExactInt64, arange_floating_dtypes) {
  return std::vector{b.arange(kBig, kBig + 6, 2, b.f64), b.arange(kMax - 1000, kMax, 300, b.f64),
                     b.arange(kBig, kBig + 3, 1, b.f32)};
}
PARITY_CASE(ExactInt64, where_and_pad_values) {
  auto c = b.values({1, 0, 1}, {3}, b.b8);
  return std::vector{b.where(c, BIG3, kMax), b.where(c, kBig, TOP3), b.pad(BIG3, {1, 2}, kMax - 1),
                     b.pad(b.zeros({1, 2}, b.i64), {1, 0, 0, 1}, kMin)};
}
PARITY_CASE(ExactInt64, arange_bounds_and_steps) {
  return std::vector{b.arange(kBig - 1, kBig + 3, 1, b.i64),
                     b.arange(kMax - 3, kMax, 1, b.i64),
                     b.arange(kMin, kMin + 7, 3, b.i64),
                     b.arange(kMax, kMax - 10, -4, b.i64),
                     b.arange(kBig, kBig + 4, 1),
                     b.arange(-kBig, -kBig - 6, -2)};
}
// Integer arange with float scalars or narrower dtypes, as libtorch computes it: the scalars
// truncated to int64, the values wrapped to the dtype.
PARITY_CASE(ExactInt64, arange_integer_dtypes) {
  return std::vector{b.arange(0.5, 10, 3, b.i64), b.arange(0, 5, 1.5, b.i64),
                     b.arange(0, 5, 1.5, b.i32),  b.arange(0, kOver32, kOver32 / 2, b.i32),
                     b.arange(0, 300, 100, b.u8), b.arange(3, -3, -1.5, b.i32)};
}

// ---- narrower integer dtypes: operands wrap, fill values must fit
// ---------------------------------
PARITY_CASE(ExactInt64, narrow_operands_wrap) {
  auto i = b.values({1, 2, 5, -7}, {4}, b.i32);
  auto u = b.values({200, 100, 3, 44}, {4}, b.u8);
  return std::vector{i + kOver32, i == kOver32,  i < (int64_t{1} << 40), i * kOver32,
                     u + 300,     u<300, u> - 1, u == 44 + 256};
}
PARITY_CASE(ExactInt64, narrow_fill_values_in_range) {
  auto u = b.zeros({2}, b.u8);
  u.fill_(-200);  // uint8 takes -255..255 from an integer, wrapped
  return std::vector{b.full({2}, -1, b.u8),         u,
                     b.full({2}, 2.5, b.i32),       b.full({2}, 2.9, b.i64),
                     b.full({2}, INT32_MIN, b.i32), b.zeros({2}, b.u8).clamp(-5, 100)};
}
PARITY_REJECTS(ExactInt64, full_int32_overflow) { return b.full({2}, kOver32, b.i32); }
PARITY_REJECTS(ExactInt64, full_uint8_negative_float) { return b.full({2}, -1.5, b.u8); }
PARITY_REJECTS(ExactInt64, full_uint8_256) { return b.full({2}, 256, b.u8); }
PARITY_REJECTS(ExactInt64, fill_uint8_minus_300) {
  auto u = b.zeros({2}, b.u8);
  u.fill_(-300);
  return u;
}
PARITY_REJECTS(ExactInt64, fill_int64_nan) {
  auto x = b.zeros({2}, b.i64);
  x.fill_(NAN);
  return x;
}
PARITY_REJECTS(ExactInt64, fill_int64_huge_float) {
  auto x = b.zeros({2}, b.i64);
  x.fill_(1e30);
  return x;
}
PARITY_REJECTS(ExactInt64, full_like_int32_overflow) {
  return b.full_like(b.zeros({2}, b.i32), kOver32);
}
PARITY_REJECTS(ExactInt64, clamp_int32_bound_overflow) {
  return b.zeros({2}, b.i32).clamp_max(kOver32);
}
PARITY_REJECTS(ExactInt64, clamp_uint8_bound_300) { return b.zeros({2}, b.u8).clamp(0, 300); }
PARITY_REJECTS(ExactInt64, where_int32_value_overflow) {
  return b.where(b.values({1, 0}, {2}, b.b8), b.zeros({2}, b.i32), kOver32);
}
PARITY_REJECTS(ExactInt64, pad_int32_value_overflow) {
  return b.pad(b.zeros({1}, b.i32), {1, 1}, kOver32);
}
PARITY_REJECTS(ExactInt64, full_float32_overflow) { return b.full({1}, 1e300, b.f32); }

// ---- casts of in-range values (libtorch defines these; the out-of-range rule is ember's)
// ---------
PARITY_CASE(CastRule, float_to_integers_in_range) {
  auto x = b.values({-1.0, -200.5, 300.7, 255.9, -0.5, 0.5, 2.9, -2.9, 0.0, -0.0, 1e10, -3e9,
                     2147483647.0, -2147483648.0},
                    {14});
  auto x64 = x.to(b.f64);
  return std::vector{x.to(b.u8),
                     x64.to(b.u8),
                     x.to(b.i64),
                     x64.to(b.i64),
                     x.to(b.b8),
                     x64.to(b.b8),
                     x.slice(0, 0, 10).to(b.i32),
                     x64.slice(0, 0, 10).to(b.i32),
                     (x * 2.0).to(b.u8)};
}
PARITY_CASE(CastRule, integers_wrap) {
  auto i = b.full({3}, kMax) - b.arange(3);
  auto j = b.values({-1, 256, 300, -129}, {4}, b.i32);
  return std::vector{i.to(b.i32), i.to(b.u8), j.to(b.u8), i.to(b.f32), i.to(b.f64), BIG3.to(b.f32)};
}

// ---- in-place arithmetic: the result type must cast into the destination -----------------------
namespace {

// One in-place form (`form` < kTensorForms take a tensor operand, the rest a scalar) applied
// to x; the operands are built the same way on both backends.
constexpr int kTensorForms = 16, kScalarForms = 12;
template <class B, class T, class O>
void apply_inplace(int form, T& dest, const O& operand) {
  using Form = void (*)(T&, const O&);
  static constexpr Form kForms[16] = {
      [](T& x, const O& o) { x.add_(o); },       [](T& x, const O& o) { x.sub_(o); },
      [](T& x, const O& o) { x.mul_(o); },       [](T& x, const O& o) { x.div_(o); },
      [](T& x, const O& o) { x += o; },          [](T& x, const O& o) { x -= o; },
      [](T& x, const O& o) { x *= o; },          [](T& x, const O& o) { x /= o; },
      [](T& x, const O& o) { x.add_(o, 2); },    [](T& x, const O& o) { x.add_(o, 2.5); },
      [](T& x, const O& o) { x.add_(o, true); }, [](T& x, const O& o) { x.sub_(o, 3); },
      [](T& x, const O& o) { x.sub_(o, 2.5); },  [](T& x, const O& o) { x.sub_(o, true); },
      [](T& x, const O& o) { x.add_(o, -1); },   [](T& x, const O& o) { x.add_(o, 300); },
  };
  kForms[form % 16](dest, operand);
}

// The destination [1, 2, 3] (bool: [1, 0, 1]) after form `form` with operand `operand`:
// operands 0-5 a [3] tensor of dtype 0-5, 6-11 a 0-d tensor, 12 true, 13 int 2, 14 int -1,
// 15 float 2.5, 16 float 1e300.
template <class B>
parity::Host inplace_case(B& b, int dest, int operand, int form) {
  const std::vector<typename B::DT> dts = {b.b8, b.u8, b.i32, b.i64, b.f32, b.f64};
  auto x = dts[dest] == b.b8 ? b.values({1, 0, 1}, {3}, b.b8) : b.values({1, 2, 3}, {3}, dts[dest]);
  if (operand < 12) {
    auto dt = dts[operand % 6];
    auto o = dt == b.b8 ? b.values({1, 1, 0}, {3}, b.b8) : b.values({2, 3, 1}, {3}, dt);
    if (operand >= 6) o = o.select(0, 0);
    apply_inplace<B>(form, x, o);
  } else {
    const typename B::Scalar s[] = {true, 2, -1, 2.5, 1e300};
    apply_inplace<B>(form, x, s[operand - 12]);
  }
  return b.host(x);
}

}  // namespace

TEST(InPlace, ResultTypeMustCastIntoTheDestination) {
  parity::DeviceGuard g("interp");  // the rule is the frontend's; interp compiles nothing
  int cases = 0, rejected = 0;
  for (int dest = 0; dest < 6; dest++)
    for (int operand = 0; operand < 17; operand++)
      for (int form = 0; form < (operand < 12 ? kTensorForms : kScalarForms); form++) {
        SCOPED_TRACE("dest " + std::to_string(dest) + ", operand " + std::to_string(operand) +
                     ", form " + std::to_string(form));
        parity::TorchB tb(1, false);
        parity::EmberB eb(1, false);
        std::vector<parity::Host> want, got;
        bool torch_threw = false, ember_threw = false;
        std::string why;
        try {
          want = {inplace_case(tb, dest, operand, form)};
        } catch (const std::exception&) {
          torch_threw = true;
        }
        try {
          got = {inplace_case(eb, dest, operand, form)};
        } catch (const ember::Error& e) {
          ember_threw = true;
          why = e.what();
        }
        cases++;
        rejected += torch_threw;
        ASSERT_EQ(ember_threw, torch_threw) << (ember_threw ? "ember threw: " + why : "");
        if (!torch_threw) {
          EXPECT_EQ(parity::compare(got, want, parity::kDefault), "");
        }
      }
  EXPECT_GT(rejected, cases / 4);
  EXPECT_LT(rejected, cases * 3 / 4);
}

// ---- signed zeros, compared through 1/x (+-inf) ------------------------------------------------
PARITY_CASE(SignedZero, abs_relu_clamp_pad) {
  std::vector<typename B::T> out;
  for (auto dt : {b.f32, b.f64})
    for (int64_t n : {3, 33}) {  // libtorch's scalar and vectorised loops
      auto pz = b.zeros({n}, dt), nz = -b.zeros({n}, dt);
      for (auto& x : {pz, nz})
        for (auto y : {x.abs(), x.relu(), x.clamp(0, 1), x.clamp(-0.0, 1), x.clamp_min(0),
                       x.clamp_min(-0.0), x.clamp_max(0), x.clamp_max(-0.0), x.clamp(-1, 0)})
          out.push_back(y.reciprocal());
      out.push_back(b.pad(b.ones({n}, dt), {1, 2}, -0.0).reciprocal());
    }
  return out;
}
// A tie of +0 and -0 gives the first operand (libtorch's scalar loop: fewer than 8 elements).
PARITY_CASE(SignedZero, maximum_minimum_ties) {
  std::vector<typename B::T> out;
  for (auto dt : {b.f32, b.f64}) {
    auto pz = b.zeros({5}, dt), nz = -b.zeros({5}, dt);
    for (auto [x, y] : {std::pair{pz, nz}, std::pair{nz, pz}}) {
      out.push_back(b.maximum(x, y).reciprocal());
      out.push_back(b.minimum(x, y).reciprocal());
    }
  }
  return out;
}

// ---- gradients at NaN, ties and bounds, as libtorch ---------------------------------------------
#define NAN_X b.values({NAN, 0.0, -0.0, 1.0, 2.0, 3.0, NAN, -1.0}, {8})
#define NAN_Y b.values({1.0, 0.0, 0.0, 1.0, NAN, 2.0, NAN, 5.0}, {8})
BACKWARD_CASE(NanGrad, maximum_minimum) {
  auto x = NAN_X, y = NAN_Y;
  return std::vector{b.maximum(x, y), b.minimum(x, y)};
}
BACKWARD_CASE(NanGrad, maximum_minimum_f64) {
  auto x = NAN_X.to(b.f64), y = NAN_Y.to(b.f64);
  return std::vector{b.maximum(y, x), b.minimum(y, x)};
}
BACKWARD_CASE(NanGrad, clamp) {
  auto x = NAN_X;
  return std::vector{x.clamp(0, 2),   x.clamp_min(0),  x.clamp_max(2), x.clamp(2, 0),
                     x.clamp(NAN, 2), x.clamp(0, NAN), x.clamp(-1, 3)};
}
BACKWARD_CASE(NanGrad, relu_and_abs) {
  auto x = NAN_X;
  return std::vector{x.relu(), x.abs(), x.to(b.f64).relu(), x.to(b.f64).abs()};
}

// ---- randint's dtype must hold [low, high - 1], as libtorch checks it ---------------------------
// (the draws' distribution is tested in tests/core/test_random.cpp)
TEST(RandomRange, RandintAcceptsAndRejectsTheRangesLibtorchDoes) {
  struct Case {
    int64_t low, high;
    ember::ScalarType e;
    torch::Dtype t;
  };
  const int64_t i32_min = INT32_MIN, i32_end = int64_t{INT32_MAX} + 1;
  for (const Case& c :
       {Case{0, 256, ember::kUInt8, torch::kUInt8}, Case{0, 257, ember::kUInt8, torch::kUInt8},
        Case{-1, 5, ember::kUInt8, torch::kUInt8}, Case{0, 2, ember::kBool, torch::kBool},
        Case{0, 3, ember::kBool, torch::kBool},
        Case{i32_min, i32_end, ember::kInt32, torch::kInt32},
        Case{i32_min - 1, 0, ember::kInt32, torch::kInt32},
        Case{0, i32_end + 1, ember::kInt32, torch::kInt32},
        Case{kMin, kMax, ember::kInt64, torch::kInt64}}) {
    bool torch_rejects = false, ember_rejects = false;
    try {
      torch::randint(c.low, c.high, {2}, torch::TensorOptions().dtype(c.t));
    } catch (const c10::Error&) {
      torch_rejects = true;
    }
    try {
      ember::randint(c.low, c.high, {2}, c.e).realize();
    } catch (const ember::ValueError&) {
      ember_rejects = true;
    }
    EXPECT_EQ(ember_rejects, torch_rejects)
        << "[" << c.low << ", " << c.high << ") as " << ember::dtype_name(c.e);
  }
}
