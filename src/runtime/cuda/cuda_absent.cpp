// The cuda device where ember is built without the CUDA toolkit (CMake's find_package(CUDAToolkit)
// found none): every use says so.
#include "ember/error.h"
#include "runtime/cuda/cuda_device.h"

namespace ember::runtime {

namespace {

[[noreturn]] void not_built() {
  throw ValueError(
      "the cuda device is unavailable: ember was built without CUDA (the device needs the CUDA "
      "toolkit's NVRTC and cuda.h at build time; CMake looks in /usr/local/cuda, or in "
      "CUDAToolkit_ROOT)");
}

}  // namespace

Device& cuda_device() { not_built(); }
std::vector<std::string> cuda_devices() { not_built(); }
std::string cuda_compile(const std::string&, const std::string&) { not_built(); }
int64_t cuda_program_builds() { not_built(); }
size_t cuda_cached_bytes() { not_built(); }
CudaGraphCounts cuda_graph_counts() { not_built(); }

}  // namespace ember::runtime
