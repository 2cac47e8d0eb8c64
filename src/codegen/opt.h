// Kernel optimisations as data (DESIGN.md principle 4): a list of actions applied to a fixed
// algorithm. The heuristic picks a default list; the renderer applies it.
#pragma once
#include <string>
#include <vector>

#include "schedule/kernel.h"

namespace ember::codegen {

enum class ActionKind { Upcast, Unroll };

/// Upcast: compute `amount` consecutive indices of output axis `axis` in registers (a register
/// tile). Unroll: split the last reduce axis into `amount` independent accumulators.
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
};

/// Default optimisation list for a (simplified) kernel.
Opts heuristic(const schedule::Kernel& k);

}  // namespace ember::codegen
