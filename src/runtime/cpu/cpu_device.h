// The cpu device (cpu_device.cpp): generated C, compiled in batches and launched on the thread
// pool. Its programs render the heuristic's plan; a schedule search, or a test, asks for others.
#pragma once
#include <memory>

#include "codegen/kernel_plan.h"
#include "runtime/device.h"

namespace ember::runtime {

Device& cpu_device();

/// A program for `k` (simplified) rendered with `plan` instead of the heuristic's, not yet built:
/// cpu_device().build() builds any number of them as one batch. Throws ember::Error when the plan
/// does not fit `k` on the host's target (codegen::KernelPlan::illegal).
std::shared_ptr<Program> prepare_cpu_program(const schedule::Kernel& k,
                                             const codegen::KernelPlan& plan);

/// Whether `p` is a cpu device program (one that a schedule search may replace).
bool is_cpu_program(const Program& p);

/// The plan `p` (a cpu device program) was rendered with.
const codegen::KernelPlan& cpu_program_plan(const Program& p);

}  // namespace ember::runtime
