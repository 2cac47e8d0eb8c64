// ember::build_info(): the runtime's kernel compiler and target, as a public call for run records.
#include "ember/build_info.h"

#include "codegen/target.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/device.h"

namespace ember {

BuildInfo build_info() {
  const auto& cc = runtime::compiler_info();
  const auto& t = runtime::host_target();
  return {.kernel_compiler_path = cc.path,
          .kernel_compiler_version = cc.version,
          .kernel_compiler_flags = cc.flags,
          .isa = codegen::isa_name(t.isa),
          .host_isa = codegen::isa_name(runtime::host_isa()),
          .vector_bits = t.vector_bytes * 8,
          .vector_registers = t.vector_registers,
          .fma = t.fma,
          .l1d_bytes = t.l1d,
          .l2_bytes = t.l2,
          .l3_bytes = t.l3};
}

std::string cpu_model() { return runtime::cpu_model(); }

std::vector<std::string> opencl_platforms() { return runtime::opencl_platforms(); }

std::vector<std::string> cuda_devices() { return runtime::cuda_devices(); }

}  // namespace ember
