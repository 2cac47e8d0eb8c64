// The NVRTC compile check (issue 41): a device, "nvrtc-check", that runs every kernel on the cpu
// device and also renders it in the CUDA dialect, keeping each distinct source; compile_recorded()
// then compiles them all with NVRTC for one architecture (no GPU needed), in translation units of
// up to 64 kernels. Linked into the parity suite (EMBER_PARITY_DEVICES=nvrtc-check,interp: every
// parity kernel) and the cuda tests (the PPO step's kernels).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace ember::test {

/// Registers the "nvrtc-check" device with runtime::get_device (idempotent).
void register_nvrtc_check_device();

/// The distinct kernels recorded so far.
size_t recorded_cuda_kernels();

/// The distinct kernels' CUDA sources recorded so far (each with a placeholder name).
std::vector<std::string> recorded_cuda_sources();

/// Compiles every recorded kernel (the CUDA dialect's prelude, then the kernels) with NVRTC for
/// `arch` and forgets them. Returns "" when all compiled, else the first failure's message (NVRTC's
/// log and the numbered source).
std::string compile_recorded(const std::string& arch);

}  // namespace ember::test
