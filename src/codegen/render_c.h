// The C renderer: one kernel -> one C function
//   void NAME(void* const* bufs, int64_t start, int64_t end)
// which computes iterations [start, end) of the outermost loop (the thread pool splits that
// range). Buffers are passed in kernel slot order (slot 0 = output).
#pragma once
#include <string>

#include "codegen/opt.h"
#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// Includes and helpers shared by every kernel of a translation unit, with the SIMD vector types
/// of `target` (the tiled renderer's Vectorize lanes must match them).
std::string c_prelude(const Target& target);
std::string render_c(const schedule::Kernel& k, const Opts& o, const std::string& fn_name);
/// Iterations of the outermost loop (what `start`/`end` range over).
int64_t outer_extent(const schedule::Kernel& k, const Opts& o);

}  // namespace ember::codegen
