// ember::build_info(): the runtime's kernel compiler and target, as a public call for run records.
#include "ember/build_info.h"

#include "codegen/target.h"
#include "runtime/cpu/compiler.h"
#include "runtime/cpu/target.h"
#include "runtime/device.h"

namespace ember {

BuildInfo build_info() {
  const auto& cc = runtime::compiler_info();
  const auto& t = runtime::host_target();
  BuildInfo b;
  b.kernel_compiler_path = cc.path;
  b.kernel_compiler_version = cc.version;
  b.kernel_compiler_flags = cc.flags;
  b.isa = codegen::isa_name(t.isa);
  b.host_isa = codegen::isa_name(runtime::host_isa());
  b.vector_bits = t.vector_bytes * 8;
  b.vector_registers = t.vector_registers;
  b.fma = t.fma;
  b.l1d_bytes = t.l1d;
  b.l2_bytes = t.l2;
  b.l3_bytes = t.l3;
  return b;
}

std::string cpu_model() { return runtime::cpu_model(); }

std::vector<std::string> opencl_platforms() { return runtime::opencl_platforms(); }

}  // namespace ember
