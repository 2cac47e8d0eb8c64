// A kernel plan as a line of text and back (plan_text.cpp), for stores that keep plans between
// processes (the schedule search's cache). Every field of the plan is written, so a plan read back
// is the plan written; the reader refuses anything else. Unlike KernelPlan::str() (DEBUG=3's words,
// which leave out actions at their defaults), the text names the plan's kind and every field.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "codegen/kernel_plan.h"

namespace ember::codegen {

/// e.g. "tile 0 1 2 16 6 64 0 0 256 96 0 0 0 0": the kind, then its fields in declaration order.
std::string plan_text(const KernelPlan& plan);
/// The plan of plan_text's line, or nullopt when `text` is not one (whether it fits a kernel is
/// KernelPlan::illegal's question).
std::optional<KernelPlan> plan_from_text(std::string_view text);

}  // namespace ember::codegen
