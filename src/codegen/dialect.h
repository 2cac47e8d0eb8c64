// Dialects (docs/design.md, Devices): the spellings in which the kernel languages differ, as data.
// The loop renderer (render_c.cpp), the GPU product renderer (render_gpu_product.cpp) and the
// expression emitter (c_expr.h) write the C99 subset that C, OpenCL C and CUDA C share, and take
// the rest from the dialect: the kernel's signature and buffer qualifiers, how a kernel finds its
// unit of work (a loop over a range, or its work-item and work-group ids), local memory and
// barriers, the libm names' float suffix, loop pragmas and the prelude. The tiled and dot-product
// renderers (render_tile.h, render_dot.h) are the cpu's explicit-SIMD kernels and speak C only.
#pragma once
#include <cstdint>
#include <sstream>
#include <string>

#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// A dialect's words. Empty strings mean "the language has none".
struct Spellings {
  const char* name;  // "c", "opencl", "cuda"
  /// Everything a translation unit of kernels starts with: includes or typedefs, the kernels'
  /// scalar functions (ember/support/kernel_scalar.h). `target`: the cpu's vector types (C).
  std::string (*prelude)(const Target& target);
  /// What starts a kernel function ("__kernel void "); "" for C's
  ///   void NAME(void* const* restrict bufs, int64_t start, int64_t end)
  /// over units of work [start, end), which names its typed buffers b0, b1, ... in its body.
  const char* kernel;
  const char* global;    // a buffer pointer's address space ("__global ")
  const char* restrict;  // "restrict", "__restrict__"
  /// int64_t expressions: the work-item's index in its work-group, the work-group's index, and
  /// the work-item's index among all of them ("" in C: no work-items).
  const char* local_id;
  const char* group_id;
  const char* global_id;
  const char* local;    // the qualifier of a work-group's shared array ("__local ")
  const char* barrier;  // a work-group barrier that orders local memory, as a statement
  /// What ops.def's `$f` becomes on a float32 libm call: "f" (C's expf), or "" where the math
  /// functions are overloaded by type (OpenCL C's exp).
  const char* float_suffix;
  /// The suffix of a 64-bit integer literal: "LL" in C; OpenCL C's long long is 128 bits wide,
  /// its long 64 ("L").
  const char* int64_suffix;
  /// Loop pragma lines without indentation: no assumed dependence between iterations ("" for
  /// none), and the prefix of "unroll n times".
  const char* ivdep;
  const char* unroll;
  /// Whether a launch's global size counts work-items (OpenCL's NDRange) rather than work-groups
  /// (CUDA's grid).
  bool grid_in_items;
};

class Dialect {
 public:
  explicit constexpr Dialect(const Spellings& s) : s_(s) {}
  const char* name() const { return s_.name; }
  std::string prelude(const Target& target) const { return s_.prelude(target); }
  /// The kernel function's opening line, and typed buffer pointers b0, b1, ... in slot order (the
  /// outputs writable) where the signature does not name them itself.
  void signature(std::ostringstream& s, const std::string& fn, const schedule::Kernel& k) const;
  /// The expression (int64_t) of the calling work-item's index among the kernel's work-items, or
  /// "" where a call runs the units of work [start, end) in a loop (C, on the thread pool).
  std::string work_item() const { return s_.global_id; }
  std::string local_id() const { return s_.local_id; }
  std::string group_id() const { return s_.group_id; }
  /// A work-group's shared array `T name[n];` (declared at the kernel's outermost scope).
  std::string local_array(const char* T, const std::string& name, int64_t n) const;
  const char* barrier() const { return s_.barrier; }
  const char* float_suffix() const { return s_.float_suffix; }
  const char* int64_suffix() const { return s_.int64_suffix; }
  std::string ivdep() const { return s_.ivdep; }
  std::string unroll(int64_t n) const { return s_.unroll + std::to_string(n); }
  /// The launch's global size for `groups` work-groups of `local` work-items.
  int64_t grid(int64_t groups, int64_t local) const {
    return s_.grid_in_items ? groups * local : groups;
  }

 private:
  Spellings s_;
};

/// The cpu device's C (GCC's or clang's): today's spellings, and the only dialect of the tiled and
/// dot-product renderers.
const Dialect& c_dialect();
/// OpenCL C 1.2 (dialect_opencl.cpp): `__kernel` functions over `__global` buffers.
const Dialect& opencl_dialect();
/// CUDA C++ as NVRTC compiles it (dialect_cuda.cpp): `extern "C" __global__` functions.
const Dialect& cuda_dialect();

}  // namespace ember::codegen
