// The OpenCL C dialect (dialect.h), OpenCL C 1.2: a kernel is
//   __kernel void NAME(__global T0* restrict b0, __global const T1* restrict b1, ...)
// run as its GpuPlan's work-groups (kernel_plan.h, render_gpu.h). The prelude gives the
// kernels the C names they use (stdint's types and limits) and then the same scalar functions as
// the C prelude (ember/support/kernel_scalar.h, which has an OpenCL branch where C and OpenCL C
// differ), so both devices compute them with the same code.
#include "codegen/c_expr.h"
#include "codegen/dialect.h"

namespace ember::codegen {

// The scalar functions' text (kernel_scalar_text.cpp, generated from
// ember/support/kernel_scalar.h).
extern const char* const kKernelScalarText;

namespace {

// OpenCL C has the fixed-width types under its own names (char, short, int, long are 8, 16, 32
// and 64 bits on every device) and its limits as CHAR_MIN ... ULONG_MAX.
constexpr const char* kOpenCLTypes = R"(#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define INT8_MIN CHAR_MIN
#define INT16_MIN SHRT_MIN
#define INT32_MIN INT_MIN
#define INT32_MAX INT_MAX
#define INT64_MIN LONG_MIN
#define INT64_MAX LONG_MAX
#define UINT64_MAX ULONG_MAX
)";

std::string opencl_prelude(const Target&) { return std::string(kOpenCLTypes) + kKernelScalarText; }

}  // namespace

const Dialect& opencl_dialect() {
  // The fields of Spellings (dialect.h), in order.
  static const Dialect d(
      Spellings{"opencl", opencl_prelude, "__kernel void ", "__global ", "restrict",
                "(int64_t)get_local_id(0)", "(int64_t)get_group_id(0)", "(int64_t)get_global_id(0)",
                "__local ", "barrier(CLK_LOCAL_MEM_FENCE);", "", "L", "", "#pragma unroll ", true});
  return d;
}

}  // namespace ember::codegen
