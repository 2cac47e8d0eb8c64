// The CUDA APIs as the cuda device uses them, both opened at run time (dlopen), so that ember built
// with the toolkit links nothing of it (libember.so links with --no-undefined and is installed
// without the toolkit's RUNPATH) and runs where it is absent: the driver API (cuda.h) from
// libcuda.so.1, the NVIDIA driver's, and NVRTC (nvrtc.h) from the toolkit it was built with
// (EMBER_NVRTC_LIBRARY), else from libnvrtc.so.<major> on the loader's path. NVRTC needs no GPU.
// Errors become ember errors with the code's name.
#pragma once
#include <cuda.h>

#include <string>

namespace ember::runtime::cu {

// The driver calls the device makes. cuda.h maps some names to versioned symbols (cuMemAlloc is
// cuMemAlloc_v2): the members take those names too, and are looked up by them.
// clang-format off
#define EMBER_CU_CALLS(X)                                                                         \
  X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)         \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuModuleLoadData)          \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemFree)         \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuGetErrorName) X(cuGraphCreate)             \
  X(cuGraphAddKernelNode) X(cuGraphInstantiate) X(cuGraphExecKernelNodeSetParams) X(cuGraphLaunch) \
  X(cuGraphAddMemcpyNode) X(cuGraphExecMemcpyNodeSetParams) X(cuGraphExecDestroy) X(cuGraphDestroy)
// clang-format on

struct Driver {
#define EMBER_CU_MEMBER(f) decltype(&::f) f = nullptr;
  EMBER_CU_CALLS(EMBER_CU_MEMBER)
#undef EMBER_CU_MEMBER
};

/// The driver, loaded and initialised (cuInit) on first use. Throws ValueError saying why the
/// cuda device is unavailable: no libcuda.so.1 (no NVIDIA driver), a symbol missing (a driver
/// older than the toolkit), or cuInit's error (no GPU: CUDA_ERROR_NO_DEVICE).
const Driver& driver();

/// Throws ember::Error "CUDA: <call> failed: <name>" unless r is CUDA_SUCCESS.
void check(CUresult r, const char* call);

/// `source` (CUDA C++) compiled by NVRTC for `arch` ("sm_90"): the cubin. Throws CompileError
/// with NVRTC's log and the numbered source, ValueError when NVRTC cannot be loaded.
std::string compile(const std::string& source, const std::string& arch);

}  // namespace ember::runtime::cu
