// The cuda device (cuda_device.cpp): kernels rendered in CUDA C++ (codegen/dialect.h), compiled
// once per batch by NVRTC for the GPU's architecture and cached by source, launched one thread per
// output element through the driver API, on buffers in the GPU's memory (a caching allocator of
// cuMemAlloc buffers); jit replays as CUDA graphs. Built when CMake finds the CUDA toolkit;
// cuda_absent.cpp stands in for it otherwise. The driver is opened at run time: without one (or
// without a GPU) the device says it is unavailable, and the compiler (cuda_compile) still works.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device.h"

namespace ember::runtime {

/// The device on the first CUDA GPU, created on first use. Throws ValueError saying why it is
/// unavailable: ember built without the toolkit, no NVIDIA driver, no GPU.
Device& cuda_device();

/// The CUDA GPUs the driver finds, one line each: "name (sm_XY, N MiB)". Throws ValueError as
/// cuda_device() does.
std::vector<std::string> cuda_devices();

/// `source` (CUDA C++: the CUDA dialect's prelude and kernels) compiled by NVRTC for `arch`
/// ("sm_90"), as the device compiles each batch; needs no GPU. Returns the cubin. Throws
/// CompileError with NVRTC's log and the numbered source, ValueError when ember was built without
/// the toolkit.
std::string cuda_compile(const std::string& source, const std::string& arch);

/// NVRTC compiles of the device since process start (a batch whose source was compiled before is
/// taken from the device's cache and not counted).
int64_t cuda_program_builds();

/// The device's buffer cache: bytes of freed buffers kept for reuse.
size_t cuda_cached_bytes();

/// Jit replays run as CUDA graphs since process start (cuda_graph.h): graphs built
/// (instantiated), graph launches that first re-pointed kernel nodes at changed buffers, and
/// graph launches in all.
struct CudaGraphCounts {
  int64_t built = 0, updated = 0, launched = 0;
};
CudaGraphCounts cuda_graph_counts();

}  // namespace ember::runtime
