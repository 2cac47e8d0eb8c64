// The opencl device where ember is built without OpenCL (CMake found no OpenCL headers or ICD
// loader): every use says so.
#include "ember/error.h"
#include "runtime/opencl/opencl_device.h"

namespace ember::runtime {

namespace {

[[noreturn]] void not_built() {
  throw ValueError(
      "ember was built without OpenCL: the opencl device needs the OpenCL headers and ICD loader "
      "at build time (Debian opencl-c-headers and ocl-icd-opencl-dev; "
      "scripts/install-deps.sh installs them)");
}

}  // namespace

Device& opencl_device() { not_built(); }
void opencl_build(const std::string&) { not_built(); }
int64_t opencl_program_builds() { not_built(); }
size_t opencl_cached_bytes() { not_built(); }
std::vector<std::string> opencl_platforms() { not_built(); }

}  // namespace ember::runtime
