/* ember/support/kernel_scalar.h — the scalar functions of the generated kernels, written once in
 * the common subset of C and C++. The build embeds this file's text in the kernels' C prelude
 * (src/codegen/kernel_scalar_text.cpp.in), and the interpreter and the host include it, so a
 * kernel, the interp device and a host-side draw compute the same bits by the same code.
 *
 * Rules for this file: C99 and C++20 alike (no namespaces, no references), static inline only,
 * include guards rather than `#pragma once` (it is the main file of the kernels' translation
 * unit), and no '@' character (the build substitutes @VAR@ patterns in the text). */
#ifndef EMBER_SUPPORT_KERNEL_SCALAR_H
#define EMBER_SUPPORT_KERNEL_SCALAR_H
#include <math.h>
#include <stdint.h>

/* splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's splitmix64.c): a bijection of 64-bit words
 * whose every output bit depends on every input bit. The one 64-bit mix of the project
 * (ember/support/splitmix64.h wraps it for C++). */
static inline uint64_t ember_splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Counter-based uniform [0, 1) of RAND: the mix over seed and counter, each spread by an odd
 * constant (the first is splitmix64's increment, 2^64 / the golden ratio); the top 24 bits become
 * the mantissa, so every value is exact in float32. */
static inline float ember_rand(uint64_t seed, uint64_t ctr) {
  const uint64_t z = ember_splitmix64_mix(seed * 0x9E3779B97F4A7C15ULL +
                                          ctr * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL);
  return (float)(z >> 40) * (1.0f / 16777216.0f);
}

/* Integer POW by squaring. A negative exponent gives the integer part of b^e: 1 for b = 1,
 * +-1 for b = -1 by the exponent's parity, else 0. Overflow wraps modulo 2^64 (computed unsigned,
 * as C defines it, where signed overflow would be undefined). */
static inline int64_t ember_ipow(int64_t b, int64_t e) {
  if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
  uint64_t r = 1, ub = (uint64_t)b;
  while (e) {
    if (e & 1) r *= ub;
    ub *= ub;
    e >>= 1;
  }
  return (int64_t)r;
}

/* Float max reductions run on integers: order-preserving keys (signed integer order = float
 * order, -0 < +0) and magnitude bits (above the infinity's bits only for NaN). */
static inline int32_t ember_fkey(float v) {
  int32_t i;
  __builtin_memcpy(&i, &v, 4);
  return i ^ ((i >> 31) & 0x7fffffff);
}
static inline int32_t ember_fmag(float v) {
  int32_t i;
  __builtin_memcpy(&i, &v, 4);
  return i & 0x7fffffff;
}
static inline float ember_funkey(int32_t k, int32_t mag) {
  float v;
  k ^= (k >> 31) & 0x7fffffff;
  __builtin_memcpy(&v, &k, 4);
  return mag > 0x7f800000 ? (float)NAN : v;
}
static inline int64_t ember_dkey(double v) {
  int64_t i;
  __builtin_memcpy(&i, &v, 8);
  return i ^ ((i >> 63) & 0x7fffffffffffffffLL);
}
static inline int64_t ember_dmag(double v) {
  int64_t i;
  __builtin_memcpy(&i, &v, 8);
  return i & 0x7fffffffffffffffLL;
}
static inline double ember_dunkey(int64_t k, int64_t mag) {
  double v;
  k ^= (k >> 63) & 0x7fffffffffffffffLL;
  __builtin_memcpy(&v, &k, 8);
  return mag > 0x7ff0000000000000LL ? (double)NAN : v;
}

/* Bit casts between float and its 32-bit word. */
static inline uint32_t ember_fbits(float v) {
  uint32_t u;
  __builtin_memcpy(&u, &v, 4);
  return u;
}
static inline float ember_bitsf(uint32_t u) {
  float v;
  __builtin_memcpy(&v, &u, 4);
  return v;
}

/* tanh in float32 without branches or calls, so that a loop over it vectorises at any width; the
 * AVX2 kernels use it in place of libmvec's tanhf (c_prelude), which costs 1.5x more there.
 * |x| < 0.75: the odd polynomial a + a^3 P(a^2), P a weighted least-squares fit of degree 5 on
 * [0, 0.75] (0.03 ulp short of tanh). Above: 1 - 2 / (e^2a + 1), e^2a = 2^n e^r with
 * r = 2a - n ln2 (ln2 in two parts, the first exact in 9 bits), e^r = 1 + r + r^2 Q(r) of degree 6.
 * |x| > 9.5 gives 1, as tanh rounds there; the sign is x's, so -0 stays -0 and NaN stays NaN.
 * Choices are bit masks, not conditionals: GCC moves an operation behind a conditional into
 * a branch, and a loop with branches does not vectorise at AVX2. At most 1.03 ulp from tanh over
 * every 13th float in [0, 11] (glibc 2.36's AVX2 tanhf: 2.18). */
static inline float ember_tanhf(float x) {
  const float a = __builtin_fabsf(x);
  const float s = a * a;
  float p = 0.0017369345f;
  p = p * s - 0.0076572532f;
  p = p * s + 0.021452034f;
  p = p * s - 0.053892724f;
  p = p * s + 0.13332695f;
  p = p * s - 0.33333316f;
  const float small = a + a * (s * p);
  const float y = a + a;
  const float kn = y * 1.44269504f + 12582912.0f; /* 1.5 * 2^23: n in the low bits */
  const float nf = kn - 12582912.0f;
  const float r = (y - nf * 0.693359375f) - nf * -2.12194440e-4f;
  float q = 0.0013814613f;
  q = q * r + 0.0083687101f;
  q = q * r + 0.041668389f;
  q = q * r + 0.16666521f;
  q = q * r + 0.49999994f;
  const float e = (1.0f + r + r * r * q) * ember_bitsf((ember_fbits(kn) + 127u) << 23);
  const float big = 1.0f - 2.0f / (e + 1.0f);
  const uint32_t lo = 0u - (uint32_t)(a < 0.75f), hi = 0u - (uint32_t)(a > 9.5f);
  const uint32_t m =
      (((ember_fbits(small) & lo) | (ember_fbits(big) & ~lo)) & ~hi) | (0x3f800000u & hi);
  return ember_bitsf(m | (ember_fbits(x) & 0x80000000u));
}

#endif /* EMBER_SUPPORT_KERNEL_SCALAR_H */
