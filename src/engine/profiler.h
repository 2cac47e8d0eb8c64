// The engine side of PROFILE=1 (include/ember/profile.h): recording launches and classifying
// kernels into the study's families.
#pragma once
#include "ember/profile.h"
#include "runtime/device.h"

namespace ember::engine {

/// Seconds on the profile's clock (steady clock, origin at the first call).
double profile_now();
/// Records one launch of `p` that ran over [start_s, end_s) (profile_now() times).
void record_kernel(const runtime::Program& p, double start_s, double end_s);
/// How many kernel launches the profile holds (profiled_kernels().size(), without the copy).
size_t profiled_kernel_count();
/// Product (forward / input gradient), weight-gradient product, or other; see KernelFamily.
KernelFamily classify_kernel(const schedule::Kernel& k);

}  // namespace ember::engine
