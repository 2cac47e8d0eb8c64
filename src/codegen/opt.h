// Kernel optimisations as data (DESIGN.md principle 4): a list of actions applied to a fixed
// algorithm. The heuristic picks a default list; the renderer applies it.
#pragma once
#include <string>
#include <vector>

#include "codegen/target.h"
#include "schedule/kernel.h"

namespace ember::codegen {

enum class ActionKind {
  Upcast,
  Unroll,
  Vectorize,
  Pack,
  BlockReduce,
  BlockOuter,
  ColsOuter,
  SplitReduce,
  Hold,
  BlockCols
};

/// Upcast: compute `amount` consecutive indices of output axis `axis` in registers (a register
/// tile). Unroll: split the last reduce axis into `amount` independent accumulators.
///
/// The register-tiled reduce (render_tile.cpp; matrix products and their fused epilogues) adds:
///  - Vectorize(axis, lanes): compute output axis `axis` in explicit SIMD vectors of `lanes` (the
///    target's vector: c_prelude's ember_vf / ember_vd); the tile is Upcast(row) x Upcast(axis)
///    accumulators. Vectorize on the reduce axis instead selects the dot-product kernel of small
///    products (render_dot.h): Upcast(row) x Upcast(col) accumulators, each a vector along the
///    reduce axis, operands read in place.
///  - Pack(axis, 1): stage the operands that vary along `axis` only in a local panel before the
///    tile loop: along the vector axis a zero-padded panel (transposed or computed operands, odd
///    sizes); along the row axis a row-block panel (computed operands, evaluated once and in a
///    vectorisable loop instead of once per column tile; far-apart rows).
///  - Pack(row axis, lanes): the row operands in a broadcast panel, each value stored as a whole
///    vector, for targets whose vector broadcast is not a plain load (render_tile.h, TileRowPanel).
///  - BlockReduce(axis, amount): walk the reduce axis in cache blocks of `amount`; accumulators
///    persist in a local buffer between blocks.
///  - BlockOuter(axis, amount): the thread pool's unit of work is `amount` indices of row axis
///    `axis` (a multiple of its upcast).
///  - BlockCols(axis, amount): the unit of work also splits column axis `axis` into blocks of
///    `amount` (a multiple of its upcast): a unit packs and computes only its columns. With the
///    reduce in one block, no split-K and no row sums.
///  - ColsOuter(axis, 1): within a row block, loop over the column tiles of `axis` outside the row
///    tiles, so one column tile's operand panel stays in L1 while the block's rows stream past it
///    (the default keeps a row tile in L1 and streams the column operand). Same sums, same order.
///  - SplitReduce(axis, amount): split-K. The reduce axis in ceil(size / amount) slices of equal
///    depth (within one index; BlockReduce blocks from each slice's start), each slice of each
///    row block a unit of work for the thread pool; a unit stores its partial tiles in the
///    launch's scratch (kernel_scratch in render_c.h), and the unit that finishes a row block's
///    last slice sums the partials in slice order (so the result does not depend on the threads)
///    and applies the epilogue.
///  - Hold(axis, 1): bind each k step's operand vectors to registers (an empty asm statement):
///    the tile's column vectors along `axis`, the dot kernel's row and column vectors. Each is
///    then loaded once a step and used by every multiply-add that reads it; otherwise GCC may
///    fold the load into each of them, and the tile waits on the load ports, not the FMA units.
struct Action {
  ActionKind kind;
  int axis;
  int amount;
};

struct Opts {
  std::vector<Action> actions;
  /// The actions of each nest of the kernel (schedule::kernel_nests order), as for the kernel
  /// the nest would be on its own (schedule::nest_kernel).
  std::vector<Opts> nests;
  std::string str() const;
  /// Register-tile factor of each axis (1 when not upcast).
  std::vector<int64_t> upcasts(size_t rank) const;
  int unroll() const;
  /// The first action of `kind`, or nullptr.
  const Action* find(ActionKind kind) const;
};

/// Default optimisation list for a (simplified) kernel on `target` (vector width, register count
/// and cache sizes decide the tiles).
Opts heuristic(const schedule::Kernel& k, const Target& target);

}  // namespace ember::codegen
