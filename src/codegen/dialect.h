// Dialects (docs/design.md, Devices): the spellings in which the kernel languages differ. The loop
// renderer (render_c.cpp) and the expression emitter (c_expr.h) write the C99 subset that C,
// OpenCL C and CUDA C share, and ask the dialect for the rest: the kernel's signature and buffer
// qualifiers, how a kernel finds its unit of work (a loop over a range, or its work-item id), the
// libm names' float suffix, loop pragmas and the prelude. The tiled and dot-product renderers
// (render_tile.h, render_dot.h) are the cpu's explicit-SIMD kernels and speak C only.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>

#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

class Dialect {
 public:
  virtual ~Dialect() = default;
  /// "c", "opencl", "cuda".
  virtual const char* name() const = 0;
  /// Everything a translation unit of kernels starts with: includes or typedefs, the kernels'
  /// scalar functions (ember/support/kernel_scalar.h). `target`: the cpu's vector types (C).
  virtual std::string prelude(const Target& target) const = 0;
  /// The kernel function's opening line, and typed buffer pointers b0, b1, ... in slot order (the
  /// outputs writable) where the signature does not name them itself.
  virtual void signature(std::ostringstream& s, const std::string& fn,
                         const schedule::Kernel& k) const = 0;
  /// The expression (int64_t) of the calling work-item's index among the kernel's work-items, or
  /// "" where a call runs the units of work [start, end) in a loop (C, on the thread pool).
  virtual std::string work_item() const = 0;
  /// What ops.def's `$f` becomes on a float32 libm call: "f" (C's expf), or "" where the math
  /// functions are overloaded by type (OpenCL C's exp).
  virtual const char* float_suffix() const = 0;
  /// The suffix of a 64-bit integer literal: "LL" in C; OpenCL C's long long is 128 bits wide,
  /// its long 64 ("L").
  virtual const char* int64_suffix() const = 0;
  /// A loop pragma line without its indentation, "" for none: no assumed dependence between
  /// iterations (ivdep), unroll n times.
  virtual std::string ivdep() const = 0;
  virtual std::string unroll(int64_t n) const = 0;
};

/// The cpu device's C (GCC's or clang's): today's spellings, and the only dialect of the tiled and
/// dot-product renderers.
const Dialect& c_dialect();
/// OpenCL C 1.2 (dialect_opencl.cpp): `__kernel` functions over `__global` buffers, one work-item
/// per output element.
const Dialect& opencl_dialect();
/// CUDA C++ as NVRTC compiles it (dialect_cuda.cpp): `extern "C" __global__` functions, one thread
/// per output element (blockIdx.x * blockDim.x + threadIdx.x).
const Dialect& cuda_dialect();

}  // namespace ember::codegen
