// The OpenCL C dialect (dialect.h), OpenCL C 1.2: a kernel is
//   __kernel void NAME(__global T0* restrict b0, __global const T1* restrict b1, ...)
// run as one work-item per output element (render_c.h, render_work_item). The prelude gives the
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

class OpenCLDialect : public Dialect {
 public:
  const char* name() const override { return "opencl"; }
  std::string prelude(const Target&) const override {
    return std::string(kOpenCLTypes) + kKernelScalarText;
  }
  void signature(std::ostringstream& s, const std::string& fn,
                 const schedule::Kernel& k) const override {
    s << "__kernel void " << fn << "(";
    for (size_t i = 0; i < k.buffers.size(); i++)
      s << (i ? ", " : "") << "__global " << (i >= k.num_outputs() ? "const " : "")
        << ctype(k.buffers[i].dtype) << "* restrict b" << i;
    s << ") {\n";
  }
  std::string work_item() const override { return "(int64_t)get_global_id(0)"; }
  const char* float_suffix() const override { return ""; }
  const char* int64_suffix() const override { return "L"; }
  std::string ivdep() const override { return ""; }
  std::string unroll(int64_t n) const override { return "#pragma unroll " + std::to_string(n); }
};

}  // namespace

const Dialect& opencl_dialect() {
  static const OpenCLDialect d;
  return d;
}

}  // namespace ember::codegen
