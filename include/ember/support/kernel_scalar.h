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

#endif /* EMBER_SUPPORT_KERNEL_SCALAR_H */
