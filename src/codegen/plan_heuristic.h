// The heuristic's plan of each kind (plan_heuristic.cpp): plan() picks one of them, and a plan's
// neighbours (plan_neighbours.cpp) include the other kinds' that fit the kernel. Internal to
// codegen.
#pragma once
#include <optional>

#include "codegen/kernel_plan.h"
#include "codegen/tile_operands.h"

namespace ember::codegen {

/// The loops' plan (upcasts of a column tile, or an unrolled contiguous reduce), its nests
/// planned the same way (plan_loops.cpp).
LoopPlan loop_plan(const schedule::Kernel& k, const Target& t);
/// The kernel's loops without upcasts, its nests planned by loop_plan.
LoopPlan plain_loops(const schedule::Kernel& k, const Target& t);
/// An elementwise kernel's concatenation axis other than axis 0 unrolled whole in `l`.
void cat_axis(const schedule::Kernel& k, LoopPlan& l);
/// Whether a reduce's vectors run across its last output axis (more of its loads contiguous
/// there than along the reduce).
bool out_vector_axis(const schedule::Kernel& k);
/// A column sum's split (column_split.h), where it has enough rows and work.
std::optional<ColumnSplitPlan> column_split_plan(const schedule::Kernel& k);
/// The register-tiled reduce's plan of a product.
TilePlan tile_plan(const schedule::Kernel& k, const TileOperands& p, const Target& t);
/// The dot kernel's plan of a product whose operands read as vectors along the reduce axis;
/// `small_only`: only where the heuristic takes it (a few rows, or outputs narrower than a
/// vector, and a reduce of at least a vector).
std::optional<DotPlan> dot_plan(const schedule::Kernel& k, const TileOperands& p, const Target& t,
                                bool small_only = true);

}  // namespace ember::codegen
