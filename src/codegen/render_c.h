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
/// Scratch memory a launch must pass after the kernel's buffers (one more `bufs` slot), 64-byte
/// aligned, its first `zeroed` bytes zero at each launch: split-K's counters and partial tiles.
struct Scratch {
  int64_t bytes = 0, zeroed = 0;
};
Scratch kernel_scratch(const schedule::Kernel& k, const Opts& o);
/// The row count a launch must pass after the kernel's buffers (one more `bufs` slot, a pointer
/// to an int64_t holding it), or -1 when the kernel has none: a tiled product over row blocks
/// (no batch axes, no split-K) reads its row count at run time, so that products that differ only
/// in it (a policy evaluated on a whole epoch and on a minibatch) are one function.
int64_t runtime_rows(const schedule::Kernel& k, const Opts& o);
/// Iterations of the outermost loop (what `start`/`end` range over).
int64_t outer_extent(const schedule::Kernel& k, const Opts& o);
/// A launch split across threads cuts the outer loop only at multiples of this many iterations.
/// It is above 1 where the outer loop is the vectorised one (a flat elementwise kernel): there a
/// range's last iterations run in the scalar epilogue, and libm's scalar and vector functions may
/// differ in the last bits, so cuts that follow the thread count would make results depend on it.
int64_t outer_grain(const schedule::Kernel& k, const Opts& o);
/// A sum over one short axis (at most 4 terms) whose operands are contiguous or constant along
/// the last output axis, with at least two output axes: e.g. the policy head's input gradient
/// (dz @ W, K = 2, times 1 - h^2). Without upcasts it renders as an elementwise kernel, the reduce
/// unrolled inside the vectorised loop over the last output axis: a product's register tile
/// would do K multiply-adds per accumulator and then round-trip the tile through memory.
bool short_reduce(const schedule::Kernel& k);

}  // namespace ember::codegen
