/* ember/support/kernel_scalar.h — the scalar functions of the generated kernels, written once in
 * the common subset of C and C++. The build embeds this file's text in the kernels' C prelude
 * (src/codegen/kernel_scalar_text.cpp.in), and the interpreter and the host include it, so a
 * kernel, the interp device and a host-side draw compute the same bits by the same code.
 *
 * Rules for this file: C99 and C++20 alike (no namespaces, no references), static inline only,
 * include guards rather than `#pragma once` (it is the main file of the kernels' translation
 * unit), and no '@' character (the build substitutes @VAR@ patterns in the text). The OpenCL
 * kernels' prelude (src/codegen/dialect_opencl.cpp) includes it too, after typedefs of the
 * stdint names: OpenCL C has no headers, and where it differs from C, __OPENCL_C_VERSION__
 * picks its branch. So no names that OpenCL C reserves (half, kernel, global, local, constant,
 * private, bool), and no LL suffixes (OpenCL C's long long is 128 bits wide): a hexadecimal
 * constant without a suffix takes the first of int, unsigned, long, ... that holds it, in both.
 * The CUDA kernels' prelude (src/codegen/dialect_cuda.cpp) includes it as CUDA C++ under NVRTC,
 * which has no C headers either (__CUDACC_RTC__) and compiles these functions as device functions
 * (-default-device). */
#ifndef EMBER_SUPPORT_KERNEL_SCALAR_H
#define EMBER_SUPPORT_KERNEL_SCALAR_H
#if !defined(__OPENCL_C_VERSION__) && !defined(__CUDACC_RTC__)
#include <math.h>
#include <stdint.h>
#endif

/* splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's splitmix64.c): a bijection of 64-bit words
 * whose every output bit depends on every input bit. The one 64-bit mix of the project
 * (ember/support/splitmix64.h wraps it for C++). */
static inline uint64_t ember_splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
  return z ^ (z >> 31);
}

/* RAND's draws. Word `attempt` of element `ctr`'s stream: the mix over seed, counter and attempt,
 * each spread by an odd constant (the first is splitmix64's increment, 2^64 / the golden ratio).
 * Attempt 0 is the element's draw; randint's rejections take attempts 1, 2, ... */
static inline uint64_t ember_rand_bits(uint64_t seed, uint64_t ctr, uint64_t attempt) {
  return ember_splitmix64_mix(seed * 0x9E3779B97F4A7C15 + ctr * 0xD1B54A32D192ED03 +
                              attempt * 0xAEF17502108EF2D9 + 0x632BE59BD9B4E019);
}
/* Uniform [0, 1) float32: the top 24 bits become the mantissa, so every value is exact. */
static inline float ember_rand(uint64_t seed, uint64_t ctr) {
  return (float)(ember_rand_bits(seed, ctr, 0) >> 40) * (1.0f / 16777216.0f);
}
/* Uniform [0, 1) float64: the top 53 bits, every multiple of 2^-53 equally likely. */
static inline double ember_rand53(uint64_t seed, uint64_t ctr) {
  return (double)(ember_rand_bits(seed, ctr, 0) >> 11) * (1.0 / 9007199254740992.0);
}
/* Uniform integer of [low, low + range), range >= 1 (high - low modulo 2^64, so any int64 range
 * fits): Lemire's multiply-and-reject ("Fast random integer generation in an interval", ACM TOMACS
 * 2019). The high word of x * range is the value; the draws whose low word is below
 * 2^64 mod range are redrawn, which leaves exactly floor(2^64 / range) words for every value (no
 * modulo bias). A redraw happens with probability below range / 2^64 <= 1/2. */
#ifdef __OPENCL_C_VERSION__
static inline uint64_t ember_mul_hi64(uint64_t a, uint64_t b) { return mul_hi(a, b); }
#elif defined(__CUDACC_RTC__)
static inline uint64_t ember_mul_hi64(uint64_t a, uint64_t b) { return __umul64hi(a, b); }
#else
__extension__ typedef unsigned __int128 ember_u128;
/* The high word of the 128-bit product a * b. */
static inline uint64_t ember_mul_hi64(uint64_t a, uint64_t b) {
  return (uint64_t)(((ember_u128)a * b) >> 64);
}
#endif
static inline int64_t ember_randint(uint64_t seed, uint64_t ctr, int64_t low, uint64_t range) {
  uint64_t x = ember_rand_bits(seed, ctr, 0);
  if (x * range < range) {                       /* the low word, modulo 2^64 */
    const uint64_t reject = (0 - range) % range; /* 2^64 mod range */
    for (uint64_t attempt = 1; x * range < reject; attempt++)
      x = ember_rand_bits(seed, ctr, attempt);
  }
  return (int64_t)((uint64_t)low + ember_mul_hi64(x, range));
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

/* Float to integer conversion (CAST and every host-side conversion of a value: the rule that
 * Tensor::to documents in ember/tensor.h). C leaves a float outside the integer type's range, NaN
 * and the infinities undefined, and x86 gives the "integer indefinite" value where ARM saturates;
 * here every device and the host give one result: truncation toward zero, NaN to 0, values below
 * or above the type's range to its minimum or maximum. uint8 is converted as libtorch converts
 * it (c10/util/TypeCast.h): to int64 by that rule, then modulo 256 (-1.0 -> 255). */
static inline int64_t ember_f2i64(double x) {
  return x != x ? 0
                : (x >= 9223372036854775808.0
                       ? INT64_MAX
                       : (x <= -9223372036854775808.0 ? INT64_MIN : (int64_t)x));
}
static inline int32_t ember_f2i32(double x) {
  return x != x ? 0
                : (x >= 2147483647.0 ? INT32_MAX : (x <= -2147483648.0 ? INT32_MIN : (int32_t)x));
}
static inline uint8_t ember_f2u8(double x) { return (uint8_t)(uint64_t)ember_f2i64(x); }
/* int8, int16, uint16 and uint32 as uint8: through int64, then modulo 2^bits (libtorch goes through
 * the CPU's int32 conversion, which agrees within int32's range). */
static inline int8_t ember_f2i8(double x) { return (int8_t)(uint8_t)(uint64_t)ember_f2i64(x); }
static inline int16_t ember_f2i16(double x) { return (int16_t)(uint16_t)(uint64_t)ember_f2i64(x); }
static inline uint16_t ember_f2u16(double x) { return (uint16_t)(uint64_t)ember_f2i64(x); }
static inline uint32_t ember_f2u32(double x) { return (uint32_t)(uint64_t)ember_f2i64(x); }
/* uint64: truncation within [0, 2^64), UINT64_MAX above; a negative value through int64 and then
 * modulo 2^64 (-1.0 -> UINT64_MAX, as x86's conversion gives). */
static inline uint64_t ember_f2u64(double x) {
  return x >= 18446744073709551616.0
             ? UINT64_MAX
             : (x >= 9223372036854775808.0 ? (uint64_t)x : (uint64_t)ember_f2i64(x));
}

/* float16 (IEEE 754 binary16: 1 sign, 5 exponent bits biased by 15, 10 fraction bits) and
 * bfloat16 (float32's top 16 bits: 8 exponent bits, 7 fraction bits), stored as their 16-bit
 * words. To float32 is exact; from float32 rounds to nearest, ties to even (IEEE 754's default),
 * with integer arithmetic only, so the result does not depend on the FPU's modes (flush to zero).
 * NaN stays a quiet NaN (libtorch's words: sign | 0x7e00 and 0x7fc0). */
static inline float ember_h2f(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return ember_bitsf(sign | 0x7f800000u | (m << 13)); /* inf, NaN */
  if (e == 0) { /* zero, subnormal: m * 2^-24, exact in float */
    const float v = (float)m * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return ember_bitsf(sign | ((e + 112) << 23) | (m << 13)); /* exponent rebiased: 127 - 15 */
}
static inline uint16_t ember_f2h(float f) {
  const uint32_t x = ember_fbits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65504 + half an ulp: inf */
  if (a >= 0x38800000u) { /* >= 2^-14: normal; round away the 13 low fraction bits */
    const uint32_t r = a - 0x38000000u;
    return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) return sign; /* <= 2^-25 (half the smallest subnormal, a tie): zero */
  { /* subnormal: the significand in units of 2^-24, shifted right by 14..24 bits */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u, s = 126u - (a >> 23);
    const uint32_t q = m >> s, rem = m & ((1u << s) - 1u), tie = 1u << (s - 1u);
    return (uint16_t)(sign | (q + (rem > tie || (rem == tie && (q & 1u)))));
  }
}
static inline float ember_bf2f(uint16_t b) { return ember_bitsf((uint32_t)b << 16); }
static inline uint16_t ember_f2bf(float f) {
  const uint32_t x = ember_fbits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0u;       /* NaN */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16); /* a carry reaches inf */
}
#ifndef __cplusplus
/* CAST to an integer type in generated C: the rule above for a float operand, C's conversion
 * (modulo 2^bits) for an integer one. */
/* clang-format off */
#define EMBER_CAST_RULE(x, T, f2) _Generic((x), float: f2((double)(x)), double: f2((double)(x)), \
                                            default: (T)(x))
#define ember_to_int64_t(x) EMBER_CAST_RULE(x, int64_t, ember_f2i64)
#define ember_to_int32_t(x) EMBER_CAST_RULE(x, int32_t, ember_f2i32)
#define ember_to_uint8_t(x) EMBER_CAST_RULE(x, uint8_t, ember_f2u8)
#define ember_to_int8_t(x) EMBER_CAST_RULE(x, int8_t, ember_f2i8)
#define ember_to_int16_t(x) EMBER_CAST_RULE(x, int16_t, ember_f2i16)
#define ember_to_uint16_t(x) EMBER_CAST_RULE(x, uint16_t, ember_f2u16)
#define ember_to_uint32_t(x) EMBER_CAST_RULE(x, uint32_t, ember_f2u32)
#define ember_to_uint64_t(x) EMBER_CAST_RULE(x, uint64_t, ember_f2u64)
/* clang-format on */
#endif

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
  return i ^ ((i >> 63) & 0x7fffffffffffffff);
}
static inline int64_t ember_dmag(double v) {
  int64_t i;
  __builtin_memcpy(&i, &v, 8);
  return i & 0x7fffffffffffffff;
}
static inline double ember_dunkey(int64_t k, int64_t mag) {
  double v;
  k ^= (k >> 63) & 0x7fffffffffffffff;
  __builtin_memcpy(&v, &k, 8);
  return mag > 0x7ff0000000000000 ? (double)NAN : v;
}

/* tanh in float32 without branches or calls, so that a loop over it vectorises at any width; the
 * AVX2 kernels use it in place of libmvec's tanhf (c_prelude), which takes 1.6x as long there.
 * |x| < 0.75: the odd polynomial a + a^3 P(a^2), P a weighted least-squares fit of degree 5 on
 * [0, 0.75] (0.03 ulp short of tanh). Above: 1 - 2 / (e^2a + 1), e^2a = 2^n e^2h with
 * h = a - n ln2/2 and e^2h = 1 + 2h + h^2 Q(h), Q of degree 4 in pairs (Estrin: a shorter chain).
 * With FMA, h takes one rounding (ln2/2's float is 1.5e-9 relative from it); without, ln2/2 is
 * in two parts, the first exact in 9 bits. The shifter 1.5 * 2^23 + 127 leaves n + 127, 2^n's
 * exponent, in kn's low bits. The exponential's side clamps a to 9.5 (tanh rounds to 1 from
 * 9.02), as an unsigned minimum of the bits: one instruction at AVX2, where a float compare
 * against a constant lets GCC fold the clamped lane's whole chain into blends after it. NaN
 * fails a >= 0.75 and stays NaN through the polynomial; the sign is x's, so -0 stays -0.
 * Within 1.05 ulp of tanh over every float (measured 1.041 with and without FMA; glibc 2.36's
 * AVX2 tanhf: 2.18), in 0.75-0.82x the time of its predecessor, which took both sides to the end
 * and selected by bit masks (1.036 ulp). At SSE2 libmvec's tanhf stays faster (0.8x the time). */
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
  const float c = ember_bitsf(ember_fbits(a) < 0x41180000u ? ember_fbits(a) : 0x41180000u);
  const float kn = c * 2.88539008f + 12583039.0f;
  const float nf = kn - 12583039.0f;
#ifdef __FMA__
  const float h = __builtin_fmaf(nf, -0.346573591f, c);
#else
  const float h = (c - nf * 0.3466796875f) - nf * -1.06097220e-4f;
#endif
  const float h2 = h * h;
  const float q01 = 1.33332168f * h + 1.99999976f, q23 = 0.267798722f * h + 0.666694224f;
  const float q = q01 + h2 * (q23 + h2 * 0.0884135232f);
  const float e = (1.0f + 2.0f * h) + h2 * q;
  const float big = 1.0f - 2.0f / (e * ember_bitsf(ember_fbits(kn) << 23) + 1.0f);
  const float t = a >= 0.75f ? big : small;
  return ember_bitsf(ember_fbits(t) | (ember_fbits(x) & 0x80000000u));
}

#endif /* EMBER_SUPPORT_KERNEL_SCALAR_H */
