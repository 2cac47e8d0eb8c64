// DEBUG's kernel-level views beyond one line per launch: the ops a kernel fused (DEBUG=3), and at
// the end of the run the kernels that took the most time (DEBUG=2 and above).
#pragma once
#include <string>

#include "runtime/device.h"

namespace ember::engine {

/// The primitive ops fused into `k`, in evaluation order ("MUL SUM ADD TANH"); loads, constants
/// and movement (index arithmetic) are not ops of their own.
std::string fused_ops(const schedule::Kernel& k);

/// Adds one timed launch of `p` to the run's totals. The first call arranges for the totals to
/// be printed to stderr as the process exits: the heaviest kernels first (launches, total and
/// mean time, share of all kernel time, GFLOPS).
void note_kernel_time(const runtime::Program& p, double seconds);

}  // namespace ember::engine
