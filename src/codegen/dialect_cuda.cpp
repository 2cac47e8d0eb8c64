// The CUDA dialect (dialect.h), CUDA C++ as NVRTC compiles it: a kernel is
//   extern "C" __global__ void NAME(T0* __restrict__ b0, const T1* __restrict__ b1, ...)
// run as its GpuPlan's blocks of threads (kernel_plan.h, render_gpu.h). The prelude gives the
// kernels the C names they use (NVRTC has no C headers) and then the same scalar functions as the C
// prelude (ember/support/kernel_scalar.h, compiled as device functions: NVRTC's -default-device),
// so every device computes them with the same code.
#include "codegen/c_expr.h"
#include "codegen/dialect.h"

namespace ember::codegen {

// The scalar functions' text (kernel_scalar_text.cpp, generated from
// ember/support/kernel_scalar.h).
extern const char* const kKernelScalarText;

namespace {

// CUDA's long long is 64 bits wide, int 32; NaN and infinity from their bits; GCC's builtins of
// kernel_scalar.h as CUDA's device functions.
constexpr const char* kCudaTypes = R"(typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32768)
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 0xffffffffffffffffULL
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#define __builtin_memcpy memcpy
#define __builtin_fabsf fabsf
)";

// CAST to an integer type (ops.def's ember_to_$T): kernel_scalar.h's rule for a float operand,
// C's conversion for an integer one. C picks by _Generic; C++ by overloads (an exact
// non-template match wins over the template).
constexpr const char* kCudaCasts = R"(#define EMBER_CAST_RULE(T, f2) \
  static inline T ember_to_##T(float x) { return f2((double)x); } \
  static inline T ember_to_##T(double x) { return f2(x); } \
  template <class X> static inline T ember_to_##T(X x) { return (T)x; }
EMBER_CAST_RULE(int64_t, ember_f2i64)
EMBER_CAST_RULE(int32_t, ember_f2i32)
EMBER_CAST_RULE(uint8_t, ember_f2u8)
EMBER_CAST_RULE(int8_t, ember_f2i8)
EMBER_CAST_RULE(int16_t, ember_f2i16)
EMBER_CAST_RULE(uint16_t, ember_f2u16)
EMBER_CAST_RULE(uint32_t, ember_f2u32)
EMBER_CAST_RULE(uint64_t, ember_f2u64)
)";

std::string cuda_prelude(const Target&) {
  return std::string(kCudaTypes) + kKernelScalarText + kCudaCasts;
}

}  // namespace

const Dialect& cuda_dialect() {
  // The fields of Spellings (dialect.h), in order.
  static const Dialect d(Spellings{"cuda", cuda_prelude, "extern \"C\" __global__ void ", "",
                                   "__restrict__", "(int64_t)threadIdx.x", "(int64_t)blockIdx.x",
                                   "((int64_t)blockIdx.x * blockDim.x + threadIdx.x)",
                                   "__shared__ ", "__syncthreads();", "f", "LL", "",
                                   "#pragma unroll ", false});
  return d;
}

}  // namespace ember::codegen
