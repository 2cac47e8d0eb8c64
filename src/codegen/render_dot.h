// The dot-product kernel for small products (a batch of a few rows) whose column operand is
// contiguous along the reduce axis: nn::Linear's x @ W^T. The tiled reduce would stage W^T in a
// transposed panel at every launch, a pass over the whole weight for a few rows of work; this
// kernel reads both operands in place, as vectors along the reduce axis, for a register tile of
// rows x columns, then sums each accumulator's lanes. No packing, one unit of work per batch
// index. Selected by Vectorize on the reduce axis (opt.h). Internal to codegen.
#pragma once
#include <string>

#include "codegen/opt.h"
#include "codegen/render_tile.h"
#include "schedule/kernel.h"

namespace ember::codegen {

/// Whether every operand of the plan's reduce term reads as vectors along the reduce axis:
/// unmasked loads of stride 1 (or 0) along it, unmasked constants, and + - * of the reduce's dtype.
bool dot_fits(const schedule::Kernel& k, const TilePlan& p);

/// The kernel for opts Upcast(row, TN), Upcast(col, TC), Vectorize(red, lanes), BlockOuter(row,
/// NC); tile_outer_extent gives its units of work.
std::string render_dot(const schedule::Kernel& k, const Opts& o, const TilePlan& p,
                       const std::string& fn);

}  // namespace ember::codegen
