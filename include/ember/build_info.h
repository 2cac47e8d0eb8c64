// ember/build_info.h — what builds and runs this process's kernels, for run records (provenance).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

struct BuildInfo {
  /// The C compiler that builds kernels: its path, the first line of `--version`, its flags.
  std::string kernel_compiler_path, kernel_compiler_version, kernel_compiler_flags;
  /// The ISA level kernels are generated for ($EMBER_ISA may lower it) and the CPU's own best.
  std::string isa, host_isa;
  int vector_bits = 0, vector_registers = 0;
  bool fma = false;
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
};

/// The kernel compiler and target of this process. Throws CompileError when there is no C
/// compiler, ValueError when $EMBER_ISA names an unknown level or one this CPU lacks.
BuildInfo build_info();

/// The CPU's model name (/proc/cpuinfo), "unknown" when it cannot be read.
std::string cpu_model();

/// The OpenCL platforms that the ICD loader finds (the `opencl` device runs on the first GPU among
/// their devices, else on the first device), one line each: "name (version): device, ...";
/// empty when none is installed. Throws ValueError when ember was built without OpenCL.
std::vector<std::string> opencl_platforms();

/// The CUDA GPUs that the driver finds (the `cuda` device runs on the first), one line each:
/// "name (sm_XY, N MiB)". Throws ValueError saying why there are none to use: ember built without
/// the CUDA toolkit, no NVIDIA driver, or no GPU.
std::vector<std::string> cuda_devices();

}  // namespace ember
