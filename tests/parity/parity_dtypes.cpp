// Parity of the dtypes issue 38 added (int8, int16, float16, bfloat16; libtorch 1.13 has no
// uint16/32/64, which tests/core/test_dtypes.cpp checks by hand): libtorch's promotion, integer
// wrap, float16 and bfloat16 rounding to nearest even (ties, overflow to inf, subnormals, NaN),
// and arithmetic computed in float32 with one rounding per op. The values are chosen so that
// float32 holds each op's exact result (dyadic inputs) or so that the op is correctly rounded in
// float32 (+ - * /: a float32 result rounds to float16 and bfloat16 as the exact one does), so
// the results must be equal, not close.
#include <cmath>
#include <cstdint>

#include "parity.h"

namespace {
// float16's edges: the largest value, its midpoint to the next power (rounds to inf), the least
// normal and subnormal, and the ties between them.
const double kP = std::ldexp(1.0, -24);  // float16's least subnormal
const std::vector<double> kHalfEdges = {
    1 + std::ldexp(1.0, -11),                         // a tie: to 1 (even)
    1 + 3 * std::ldexp(1.0, -11),                     // a tie: up to 1 + 2^-9 (even)
    1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -23),  // just above a tie: up
    2049,
    2051,
    65504,
    65519,  // below the midpoint: 65504
    65520,  // the midpoint: inf (65504's last bit is odd)
    -1e5,
    kP,
    kP / 2,                         // a tie: to 0
    3 * kP / 2,                     // a tie: to 2^-23 (even)
    kP / 2 + std::ldexp(1.0, -40),  // above the tie: 2^-24
    std::ldexp(1.0, -14) - kP / 2,  // a tie at the subnormals' top: up to 2^-14
    -std::ldexp(1.0, -14) * 0.75,
    0.1,
    -0.0,
    INFINITY,
    NAN,
    1e-30};
// bfloat16's: ties of its 8 bits, its largest value and the overflow midpoint, subnormals.
const std::vector<double> kBf16Edges = {1 + std::ldexp(1.0, -8),
                                        1 + 3 * std::ldexp(1.0, -8),
                                        257,
                                        259,
                                        std::ldexp(255.0, 120),          // the largest
                                        std::ldexp(255.0, 120) * 1.001,  // below the midpoint
                                        3.4e38,                          // above: inf
                                        -3.4e38,
                                        1e-40,  // float32 subnormals
                                        std::ldexp(1.0, -133) * 3,
                                        std::ldexp(1.0, -127),
                                        0.1,
                                        -0.0,
                                        -INFINITY,
                                        NAN};
}  // namespace

// ---- promotion (c10's promoteTypes and the dim / 0-d / scalar priorities) -----------------------
PARITY_CASE(NewDtypes, promotion) {
  auto i8 = b.values({-3, 5}, {2}, b.i8), i16 = b.values({300, -7}, {2}, b.i16);
  auto u8 = b.values({200, 3}, {2}, b.u8), f16 = b.values({1.5, -2}, {2}, b.f16);
  auto bf = b.values({0.25, 3}, {2}, b.bf16), bl = b.values({1, 0}, {2}, b.b8);
  auto f32 = b.values({0.5, 1}, {2}), i32 = b.values({7, 8}, {2}, b.i32);
  auto z64 = b.scalar_tensor(2.5, b.f64), z16 = b.scalar_tensor(3, b.i16);
  return std::vector{i8 + u8,  u8 + i8,   i8 + i16,  u8 * i16, i16 + i32, i8 + f16,  u8 * bf,
                     f16 + bf, bf - f16,  f16 + f32, bf * z64, i8 + z64,  f16 + z64, bl + i8,
                     i8 + z16, f16 + 2.5, bf * 3,    i8 + 1.5, i16 * 2,   bl * f16};
}

// ---- integers: wrap modulo 2^bits, the reductions' int64 --------------------------------------
PARITY_CASE(NewDtypes, int8_int16_arithmetic) {
  auto a = b.randint(-128, 128, {3, 4}, b.i8), c = b.randint(-128, 128, {3, 4}, b.i8);
  auto s = b.randint(-32768, 32768, {3, 4}, b.i16), t = b.randint(-300, 300, {3, 4}, b.i16);
  return std::vector{
      a + c,       a - c,           a * c,           -a,          a.abs(),    s * t,
      s + t,       b.maximum(a, c), b.minimum(s, t), a < c,       s == t,     a.sum(),
      s.sum({1}),  a.amax({0}),     s.amin({1}),     a.to(b.i16), s.to(b.i8), s.to(b.u8),
      a.to(b.f32), a + 1000,        s * 300};
}
PARITY_CASE(NewDtypes, int_casts_wrap) {
  auto i = b.values({-129, 128, 255, 70000, -32769, 40000}, {6}, b.i64);
  auto f = b.values({-128.9, 127.9, -0.5, 3.99, -32768.5, 32767.9}, {6});
  return std::vector{i.to(b.i8),  i.to(b.i16), f.to(b.i8).to(b.i64),
                     f.to(b.i16), i.to(b.f16), i.to(b.bf16)};
}

// ---- float16 and bfloat16 rounding
// ----------------------------------------------------------------
PARITY_CASE(NewDtypes, half_rounding_edges, .tol = parity::kExact) {
  auto x64 = b.values(kHalfEdges, {20}, b.f64);
  auto x = x64.to(b.f32);
  return std::vector{x.to(b.f16), x64.to(b.f16), x.to(b.f16).to(b.f32), -x.to(b.f16),
                     x.to(b.f16).to(b.bf16)};
}
PARITY_CASE(NewDtypes, bfloat16_rounding_edges, .tol = parity::kExact) {
  auto x64 = b.values(kBf16Edges, {15}, b.f64);
  auto x = x64.to(b.f32);
  return std::vector{x.to(b.bf16), x64.to(b.bf16), x.to(b.bf16).to(b.f32), x.to(b.bf16).to(b.f16)};
}
PARITY_CASE(NewDtypes, reduced_float_to_integers, .tol = parity::kExact) {
  auto h = b.values({-3.75, 2.5, 100.9, -0.5, 65504, 0}, {6}, b.f16);
  auto z = b.values({-3.75, 2.5, 100.9, -0.5, 1000, 0}, {6}, b.bf16);
  return std::vector{h.to(b.i64), h.to(b.i32), z.to(b.i64), z.to(b.i16),
                     h.to(b.b8),  z.to(b.b8),  h.to(b.f64), z.to(b.f64)};
}

// ---- arithmetic: float32 per op, one rounding
// -----------------------------------------------------
// + - * / of float16 values are correctly rounded in float32 (24 >= 2 * 11 + 2 bits), so the
// float32 result rounds as the exact one: equal results for any inputs.
PARITY_CASE(NewDtypes, half_arithmetic, .tol = parity::kExact) {
  auto a = b.randn({4, 5}, b.f16), c = b.randn({4, 5}, b.f16);
  auto big = b.values({60000, -60000, 40000, 1e-7, 3e-5}, {5}, b.f16);
  return std::vector{a + c,           a - c,           a * c,     a / c,     -a,
                     a * 3.7,         a + 1e-3,        big + big, big * big, big / 1e-3,
                     b.maximum(a, c), a < c,           a == c,    a.abs(),   b.where(a < c, a, c),
                     a.reciprocal(),  a.to(b.f32) * c, big.sum()};
}
PARITY_CASE(NewDtypes, bfloat16_arithmetic, .tol = parity::kExact) {
  auto a = b.randn({4, 5}, b.bf16), c = b.randn({4, 5}, b.bf16);
  auto big = b.values({3e38, -3e38, 1e-38, 1e-39, 2}, {5}, b.bf16);
  return std::vector{a + c,   a - c,           a * c,     a / c,           -a,
                     a * 3.7, big + big,       big * big, big / 1e-3,      a < c,
                     a.abs(), b.maximum(a, c), a.floor(), a.to(b.f64) + c, b.where(a < c, a, c)};
}
// Sums and products of dyadic values are exact in float32: whatever the order, they round once.
PARITY_CASE(NewDtypes, reduced_float_reductions_and_matmul, .tol = parity::kExact) {
  auto h = b.dyadic({6, 8}, 16, b.f16), z = b.dyadic({6, 8}, 16, b.bf16);
  // (Not matmul: libtorch 1.13's bfloat16 product rounds its partial sums to bfloat16, where
  // ember rounds the float32 sum once; tests/core/test_dtypes.cpp checks ember's.)
  return std::vector{h.sum(),    h.sum({1}),  h.amax({0}), h.mean({1}),
                     z.sum({0}), z.amin({1}), z.mean(),    (h * h).sum({1})};
}
// bfloat16's transcendental ops: float32 results within an ulp of libtorch's (SLEEF), rounded to
// 8 bits: equal but where the two float32 results straddle a rounding boundary (one bfloat16 ulp,
// 2^-7 relative at most).
PARITY_CASE(NewDtypes, bfloat16_transcendental, .tol = parity::Tol{1e-30, 1.0 / 128}) {
  auto a = b.randn({3, 5}, b.bf16), p = b.rand({3, 5}, 0.1, 4, b.bf16);
  return std::vector{a.exp(), a.tanh(), a.sin(), p.log(), p.sqrt(), a.sigmoid(), a.relu()};
}

// ---- values that do not fit: libtorch's checked conversions ------------------------------------
PARITY_CASE(NewDtypes, fill_values_in_range) {
  return std::vector{b.full({2}, 65504, b.f16), b.full({2}, -127, b.i8), b.full({2}, 32767, b.i16),
                     b.full({2}, 3e38, b.bf16), b.full({2}, INFINITY, b.f16)};
}
PARITY_REJECTS(NewDtypes, full_int8_128) { return b.full({2}, 128, b.i8); }
PARITY_REJECTS(NewDtypes, full_int16_float_overflow) { return b.full({2}, 40000.5, b.i16); }
PARITY_REJECTS(NewDtypes, full_half_overflow) { return b.full({2}, 70000.0, b.f16); }
PARITY_REJECTS(NewDtypes, full_half_integer_overflow) { return b.full({2}, 65505, b.f16); }
