// Kernel optimisations as data (DESIGN.md principle 4): a list of actions applied to a fixed
// algorithm. The heuristic picks a default list; the renderer applies it.
#pragma once
#include <string>
#include <vector>

#include "schedule/kernel.h"

namespace ember::codegen {

enum class ActionKind { Upcast, Unroll, Vectorize, Pack, BlockReduce, BlockOuter };

/// Upcast: compute `amount` consecutive indices of output axis `axis` in registers (a register
/// tile). Unroll: split the last reduce axis into `amount` independent accumulators.
///
/// The register-tiled reduce (render_tile.cpp; matrix products and their fused epilogues) adds:
///  - Vectorize(axis, lanes): compute output axis `axis` in explicit SIMD vectors of `lanes`
///    (16 floats = one AVX-512 register); the tile is Upcast(row) x Upcast(axis) accumulators.
///  - Pack(axis, 1): stage the operands that vary along `axis` only in a local panel before the
///    tile loop: along the vector axis a zero-padded panel (transposed or computed operands, odd
///    sizes); along the row axis a row-block panel (computed operands, evaluated once and in a
///    vectorisable loop instead of once per column tile; far-apart rows).
///  - BlockReduce(axis, amount): walk the reduce axis in cache blocks of `amount`; accumulators
///    persist in a local buffer between blocks.
///  - BlockOuter(axis, amount): the thread pool's unit of work is `amount` indices of row axis
///    `axis` (a multiple of its upcast).
struct Action {
  ActionKind kind;
  int axis;
  int amount;
};

struct Opts {
  std::vector<Action> actions;
  std::string str() const;
  /// Register-tile factor of each axis (1 when not upcast).
  std::vector<int64_t> upcasts(size_t rank) const;
  int unroll() const;
  /// The first action of `kind`, or nullptr.
  const Action* find(ActionKind kind) const;
};

/// Default optimisation list for a (simplified) kernel.
Opts heuristic(const schedule::Kernel& k);

}  // namespace ember::codegen
